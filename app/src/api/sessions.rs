//! Starting, watching and stopping GPU sessions.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::{CourseId, HistoryPage, LaunchCourse, SessionView};

/// The courses the caller may launch in, with allowed profiles (and how many fit now) and
/// images.
#[server(endpoint = "launch_options")]
pub async fn launch_options() -> Result<Vec<LaunchCourse>, AppError> {
    use super::ssr::{require, services, Action, Caller};
    use crate::views::ProfileOption;
    use slicehub_core::courses::policy_of;
    let caller = require(Action::ListOwnSessions).await?;
    let Caller::User { id, .. } = caller else {
        return Ok(Vec::new());
    };
    let services = services()?;
    let known = services
        .sessions
        .known_profiles()
        .await?;
    let mut courses = Vec::new();
    for (course, _role) in services.store.courses_of_user(id).await? {
        let policy = policy_of(&services.store, &services.config, course.id)
            .await?;
        courses.push((course, policy));
    }
    // One read of the GPUs and the queue; per course, its own bookings are free to it
    // and other courses' are not.
    let limits: Vec<(Option<CourseId>, i64)> = courses.iter().map(|(c, p)| (Some(c.id), p.max_minutes)).collect();
    let availability = services
        .sessions
        .launch_availability(&known, &limits)
        .await?;
    // Courses on the Slurm cluster see their partition's free GRES (the nodes read once).
    let config = &services.config;
    let partitions: Vec<Option<&str>> = courses.iter().map(|(c, _)| config.slurm_partition_of(&c.code)).collect();
    let wanted: Vec<&str> = partitions.iter().flatten().copied().collect();
    let mut cluster = match wanted.is_empty() {
        true => Vec::new(),
        false => services.sessions.slurm_availability(&wanted).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the Slurm cluster's free slices cannot be read");
            vec![Vec::new(); wanted.len()]
        }),
    }
    .into_iter();
    let mut out = Vec::new();
    for (((course, policy), local), partition) in courses.iter().cloned().zip(availability).zip(&partitions) {
        let availability = match partition {
            Some(_) => cluster.next().unwrap_or_default(),
            None => local,
        };
        let budget = slicehub_core::quotas::budget_at(
            &services.store,
            &policy,
            course.id,
            id,
            super::ssr::now_ms(),
        )
        .await?;
        let affordable = |profile: &str| budget.as_ref().is_none_or(|b| services.sessions.budget_starts(b, profile));
        let profiles = availability
            .iter()
            .filter(|a| policy.allows_profile(&a.profile))
            .map(|a| ProfileOption {
                name: a.profile.clone(),
                free: a.free,
                queued: a.queued,
                wait: a.wait.map(ssr_views::eta_view),
                affordable: affordable(&a.profile),
                per_hour: slicehub_core::quotas::per_hour_text(&a.profile),
                guarantees: a.guarantees.clone(),
            })
            .collect();
        let budget = budget.map(super::policy::ssr::budget_view);
        out.push(LaunchCourse {
            budget,
            course_id: course.id,
            code: course.code,
            title: course.title,
            profiles,
            images: policy.images,
            max_minutes: policy.max_minutes,
            max_sessions: policy.max_sessions,
        });
    }
    Ok(out)
}

/// How many of a person's sessions the sessions page lists (it pages the ended ones).
#[cfg(feature = "ssr")]
const HISTORY: i64 = 50;

/// The caller's sessions, newest first, each with its steps.
#[server(endpoint = "my_sessions")]
pub async fn my_sessions() -> Result<Vec<SessionView>, AppError> {
    use super::ssr::{require, services, Action, Caller};
    let caller = require(Action::ListOwnSessions).await?;
    let Caller::User { id, is_admin, .. } = caller else {
        return Ok(Vec::new());
    };
    let reads = use_context::<super::session_reads::SessionReads>();
    sessions_of(&services()?, reads.as_ref(), id, is_admin).await
}

/// A person's sessions as their sessions page shows them: remembered in `reads` until one
/// of them changes. The sessions page reads them here, and its event stream sends them
/// with each change.
#[cfg(feature = "ssr")]
pub async fn sessions_of(
    services: &slicehub_core::Services,
    reads: Option<&super::session_reads::SessionReads>,
    id: crate::views::UserId,
    is_admin: bool,
) -> Result<Vec<SessionView>, AppError> {
    use slicehub_core::sessions::{queue_position, SessionState};
    let changes = services.sessions.changes_of(id);
    if let Some(views) = reads.and_then(|r| r.get(id, changes)) {
        return Ok(ssr_views::shown_to(views, is_admin));
    }
    let store = &services.store;
    let sessions = store.gpu_sessions_of_user(id, HISTORY).await?;
    let quota_ends = ssr_views::quota_ends(services, &sessions).await?;
    let queued = if sessions.iter().any(|s| s.state == SessionState::Queued) {
        store.gpu_sessions_in(&[SessionState::Queued]).await?
    } else {
        Vec::new()
    };
    // Why each of the cluster's waiting sessions waits (none without a cluster).
    let slurm_waits = services.sessions.slurm_waits();
    let estimates = if queued.is_empty() {
        std::collections::HashMap::new()
    } else {
        services
            .sessions
            .queue_estimates()
            .await?
    };
    let places: std::collections::HashMap<String, u32> = sessions
        .iter()
        .filter_map(|s| {
            let place = queue_position(&queued, s).or_else(|| slurm_waits.get(&s.id).map(|w| w.position));
            place.map(|p| (s.id.clone(), p as u32))
        })
        .collect();
    let models = ssr_views::gpu_models(services, &sessions).await;
    let mut views = ssr_views::with_steps(store, sessions, &models)
        .await?;
    let warn = i64::from(services.config.quotas.warn_minutes) * 60_000;
    let idle = if views.iter().any(|v| v.state == SessionState::Ready) {
        services.sessions.idle_notices().await?
    } else {
        std::collections::HashMap::new()
    };
    for view in &mut views {
        view.warn_before_ms = warn;
        view.idle = idle.get(&view.id).filter(|_| view.state == SessionState::Ready).map(|n| ssr_views::idle_view(*n));
        view.queue_position = places.get(&view.id).copied();
        view.eta = estimates.get(&view.id).copied().map(ssr_views::eta_view);
        view.cluster_wait = slurm_waits
            .get(&view.id)
            .filter(|_| view.state == SessionState::Queued)
            .map(ssr_views::cluster_wait_view);
        let Some(&at) = quota_ends.get(&view.id) else {
            continue;
        };
        if view.ends_at_ms.is_some_and(|deadline| at < deadline) {
            view.ends_at_ms = Some(at);
            view.ends_at = Some(ssr_views::clock_of(at));
            view.time_left = Some(crate::components::time::minutes_left(at, super::ssr::now_ms()));
            view.stops_for = "quota".into();
        }
    }
    if let Some(reads) = reads {
        reads.put(id, changes, &views);
    }
    Ok(ssr_views::shown_to(views, is_admin))
}

/// Past sessions shown per page of the history.
pub const HISTORY_PAGE: u32 = 5;

/// One page of the caller's ended and failed sessions, newest first, however many there are.
#[server(endpoint = "session_history")]
pub async fn session_history(page: u32) -> Result<HistoryPage, AppError> {
    use super::ssr::{require, services, Action, Caller};
    let caller = require(Action::ListOwnSessions).await?;
    let Caller::User { id, is_admin, .. } = caller else {
        return Ok(HistoryPage { sessions: Vec::new(), page: 0, pages: 0 });
    };
    let services = services()?;
    let store = &services.store;
    let per_page = i64::from(HISTORY_PAGE);
    let total = store.count_past_sessions_of_user(id).await?;
    let pages = ((total + per_page - 1) / per_page).max(1);
    let page = i64::from(page).min(pages - 1);
    let sessions = store
        .past_sessions_of_user(id, page * per_page, per_page)
        .await?;
    let models = ssr_views::gpu_models(&services, &sessions).await;
    Ok(HistoryPage {
        sessions: ssr_views::shown_to(
            ssr_views::with_steps(store, sessions, &models)
                .await?,
            is_admin,
        ),
        page: page as u32,
        pages: if total == 0 { 0 } else { pages as u32 },
    })
}

/// Starts a notebook, or with a command a training job, in a course.
#[server(endpoint = "start_session")]
pub async fn start_session(
    course_id: CourseId,
    profile: String,
    image: String,
    command: Option<String>,
) -> Result<SessionView, AppError> {
    use super::ssr::{require, services, Action, Caller};
    use slicehub_core::sessions::{split_command, ClaimRequest, Workload};
    let caller = require(Action::LaunchIn(course_id)).await?;
    let Caller::User { id, is_admin, .. } = caller else {
        return Err(AppError::internal("not signed in"));
    };
    let workload = match command.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => Workload::Job(split_command(text)?),
        _ => Workload::Notebook,
    };
    let services = services()?;
    let session = services
        .sessions
        .claim(ClaimRequest {
            user_id: id,
            course_id,
            profile,
            image,
            workload,
        })
        .await?;
    let steps = services
        .store
        .session_events(&session.id)
        .await?;
    let models = ssr_views::gpu_models(&services, std::slice::from_ref(&session)).await;
    let view = ssr_views::session_view(session, steps, &models);
    Ok(ssr_views::shown_to(vec![view], is_admin).remove(0))
}

/// Stops a session: its owner, an instructor of its course, or an admin. Anyone else is
/// told it does not exist. `reason`, from an instructor or admin, is shown to the student.
#[server(endpoint = "stop_session")]
pub async fn stop_session(id: String, reason: Option<String>) -> Result<(), AppError> {
    use super::ssr::{actor, fail, services};
    let (caller, session) = ssr_views::session_for_caller(&id).await?;
    let by = actor(&caller);
    let why = reason.as_deref().map(str::trim).unwrap_or_default();
    if why.chars().count() > 300 {
        return Err(fail(http::StatusCode::BAD_REQUEST, "Say why in at most 300 characters."));
    }
    let reason = if session.username == by {
        format!("stopped by {by}")
    } else if why.is_empty() {
        format!("stopped by {by} (not the owner)")
    } else {
        format!("stopped by {by}: {why}")
    };
    let services = services()?;
    services
        .sessions
        .stop(&id, &reason)
        .await?;
    services
        .store
        .audit(&by, "session.stop", &id, &reason)
        .await?;
    Ok(())
}

/// "Keep it running": the student answers an idle warning (only the session's own
/// student; audited).
#[server(endpoint = "keep_session_running")]
pub async fn keep_session_running(id: String) -> Result<(), AppError> {
    use super::ssr::{actor, fail, from_core, services, Caller};
    let (caller, session) = ssr_views::session_for_caller(&id).await?;
    if !matches!(caller, Caller::User { id, .. } if id == session.user_id) {
        return Err(fail(http::StatusCode::FORBIDDEN, "Only the session's own student can keep it running."));
    }
    services()?
        .sessions
        .keep_running(&session, &actor(&caller))
        .await
        .map_err(from_core)
}

/// How busy the session's slice has been and how much memory it used, oldest first (the
/// sampler's last readings; empty unless the session runs).
#[server(endpoint = "slice_activity")]
pub async fn slice_activity(id: String) -> Result<Vec<crate::views::ActivityPoint>, AppError> {
    use super::ssr::services;
    let (_caller, session) = ssr_views::session_for_caller(&id).await?;
    Ok(services()?
        .sessions
        .slice_samples(&session.id)
        .into_iter()
        .map(|s| crate::views::ActivityPoint { at_ms: s.at_ms, busy_percent: s.busy_percent, memory_mib: s.memory_mib })
        .collect())
}

/// The last lines a session's container printed: live while it runs, kept after.
#[server(endpoint = "session_logs")]
pub async fn session_logs(id: String) -> Result<String, AppError> {
    use super::ssr::services;
    let (_caller, session) = ssr_views::session_for_caller(&id).await?;
    let services = services()?;
    match (&session.container, session.state.is_final()) {
        (Some(name), false) => Ok(services
            .engine
            .logs_tail(name, 200)
            .await
            .unwrap_or_default()),
        _ => Ok(session.log_tail),
    }
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr_views {
    use crate::error::AppError;
    use slicehub_core::sessions::{GpuSession, SessionEvent, SessionState};

    use super::super::ssr::{fail, request_auth, services, Action, Caller};
    use crate::views::{SessionStep, SessionView};

    /// A queue estimate as the pages show it.
    pub fn eta_view(e: slicehub_core::sessions::QueueEstimate) -> crate::views::Eta {
        crate::views::Eta {
            about_ms: e.about_ms,
            about: clock_of(e.about_ms),
            latest_ms: e.latest_ms,
            latest: clock_of(e.latest_ms),
        }
    }

    pub fn cluster_wait_view(wait: &slicehub_core::sessions::SlurmWait) -> crate::views::ClusterWaitView {
        crate::views::ClusterWaitView {
            reason: wait.reason.clone(),
            words: wait.words.clone(),
            expected_start_ms: wait.expected_start_ms,
            expected_start: wait.expected_start_ms.map(clock_of),
        }
    }

    pub fn idle_view(notice: slicehub_core::sessions::IdleNotice) -> crate::views::IdleView {
        crate::views::IdleView {
            idle_since_ms: notice.idle_since_ms,
            stops_at_ms: notice.stops_at_ms,
            stops_at: clock_of(notice.stops_at_ms),
            early: notice.early,
            stops: notice.stops,
        }
    }

    /// `HH:MM:SS UTC` of an epoch-millisecond time.
    pub fn clock_of(ms: i64) -> String {
        match chrono::DateTime::from_timestamp_millis(ms) {
            Some(t) => t.format("%H:%M:%S UTC").to_string(),
            None => "—".into(),
        }
    }

    /// The argv as one line that the command box would split back into the same words.
    pub fn quoted(argv: &[String]) -> String {
        argv.iter()
            .map(|word| {
                let plain = !word.is_empty()
                    && !word
                        .contains(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'));
                if plain {
                    word.clone()
                } else if !word.contains('\'') {
                    format!("'{word}'")
                } else {
                    format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The sessions as views, each with its steps (one query for all of them).
    pub async fn with_steps(
        store: &slicehub_core::store::Store,
        sessions: Vec<GpuSession>,
        models: &std::collections::HashMap<u32, String>,
    ) -> Result<Vec<SessionView>, slicehub_core::CoreError> {
        let ids: Vec<String> = sessions.iter().map(|s| s.id.clone()).collect();
        let mut steps: std::collections::HashMap<String, Vec<SessionEvent>> =
            std::collections::HashMap::new();
        for event in store.events_of_sessions(&ids).await? {
            steps.entry(event.session_id.clone()).or_default().push(event);
        }
        Ok(sessions
            .into_iter()
            .map(|session| {
                let own = steps.remove(&session.id).unwrap_or_default();
                session_view(session, own, models)
            })
            .collect())
    }

    /// Each GPU's model by index (`NVIDIA H100 80GB HBM3`), read only when one of
    /// `sessions` has a slice on a GPU; empty when the GPUs cannot be read, and placements
    /// then name the GPU by its index alone.
    pub async fn gpu_models(
        services: &slicehub_core::Services,
        sessions: &[GpuSession],
    ) -> std::collections::HashMap<u32, String> {
        if sessions.iter().all(|s| s.placement.is_none()) {
            return std::collections::HashMap::new();
        }
        services
            .on_gpus(|gpus| gpus.list_gpus())
            .await
            .map(|gpus| gpus.into_iter().map(|g| (g.index, g.name)).collect())
            .unwrap_or_default()
    }

    /// A student's own sessions without what only administrators need: the MIG device,
    /// and the allocator's and container engine's words in the steps (see
    /// [`student_detail`]). Administrators get them as they are.
    pub fn shown_to(mut views: Vec<SessionView>, is_admin: bool) -> Vec<SessionView> {
        if !is_admin {
            for view in &mut views {
                view.mig_uuid = None;
                for step in &mut view.steps {
                    step.detail = student_detail(step.state, &step.detail);
                }
            }
        }
        views
    }

    /// A step's detail as a student reads it: where the allocator placed the slice and
    /// how the container was made (device UUIDs, container names, GPU slots) become plain
    /// words for the step's state; other details (a queue wait, why it stopped) stay.
    pub fn student_detail(state: SessionState, detail: &str) -> String {
        use SessionState::*;
        let internal = matches!(state, Allocating | Creating)
            || ["MIG-", "GPU-", "slicehub-"]
                .iter()
                .any(|word| detail.contains(word));
        if !internal {
            return detail.to_string();
        }
        match state {
            Requested => "asked for a slice",
            Queued => "waiting for a free slice",
            Allocating => "a GPU slice was chosen",
            Creating => "a GPU slice was prepared; creating the container",
            Starting => "starting the container",
            Ready => "running",
            Stopping => "stopping",
            Ended => "ended",
            Failed => "it could not start or run",
        }
        .to_string()
    }

    /// When each running session will be stopped because its student's slice-hours run
    /// out (sessions of courses without a quota are absent).
    pub async fn quota_ends(
        services: &slicehub_core::Services,
        sessions: &[GpuSession],
    ) -> Result<std::collections::HashMap<String, i64>, slicehub_core::CoreError> {
        use slicehub_core::sessions::SessionState;
use slicehub_core::courses::policy_of;
        let now = super::super::ssr::now_ms();
        let mut ends = std::collections::HashMap::new();
        let mut done = std::collections::HashSet::new();
        for session in sessions.iter().filter(|s| s.state == SessionState::Ready) {
            if !done.insert((session.course_id, session.user_id)) {
                continue;
            }
            let policy = policy_of(&services.store, &services.config, session.course_id).await?;
            let budget = slicehub_core::quotas::budget_at(&services.store, &policy, session.course_id, session.user_id, now).await?;
            if let Some(at) = budget.and_then(|b| b.runs_out_at_ms()) {
                for same in sessions.iter().filter(|s| {
                    s.state == SessionState::Ready && s.course_id == session.course_id && s.user_id == session.user_id
                }) {
                    ends.insert(same.id.clone(), at);
                }
            }
        }
        Ok(ends)
    }

    /// How long after a session ended the sessions page still says why at the top.
    const END_TOLD_MS: i64 = 30 * 60_000;

    pub fn session_view(
        session: GpuSession,
        steps: Vec<SessionEvent>,
        models: &std::collections::HashMap<u32, String>,
    ) -> SessionView {
        use crate::components::gpu_card::gpu_label;
        use crate::components::time::{duration_words, minutes_left};
        let live = !session.state.is_final();
        let now = super::super::ssr::now_ms();
        let ends_at_ms = (live && session.ready_at_ms.is_some()).then_some(session.deadline_at_ms);
        let open_url = (session.kind == slicehub_core::sessions::SessionKind::Notebook
            && session.state == slicehub_core::sessions::SessionState::Ready)
            .then(|| format!("{}lab", session.base_url()));
        SessionView {
            open_url,
            queue_position: None,
            eta: None,
            cluster_wait: None,
            idle: None,
            placement: session
                .placement
                .as_ref()
                .map(|p| {
                    let gpu = gpu_label(p.gpu_index, models.get(&p.gpu_index).map(String::as_str));
                    format!("{gpu} · {}", p.label)
                })
                .or_else(|| session.slurm_job.map(|job| format!("Slurm job {job}"))),
            ends_at: ends_at_ms.map(clock_of),
            ends_at_ms,
            time_left: ends_at_ms.map(|t| minutes_left(t, now)),
            stops_for: "time limit".into(),
            warn_before_ms: 0,
            ran_for: session
                .ready_at_ms
                .map(|ready| duration_words(session.ended_at_ms.unwrap_or(now) - ready)),
            command_text: quoted(&session.argv),
            ready_at_ms: session.ready_at_ms,
            end_to_tell: !live
                && session.ended_at_ms.is_some_and(|end| now - end < END_TOLD_MS)
                && session.reason != format!("stopped by {}", session.username),
            requested_at_ms: session.requested_at_ms,
            steps: steps
                .into_iter()
                .map(|e| SessionStep {
                    at: clock_of(e.at_ms),
                    at_ms: e.at_ms,
                    state: e.state,
                    detail: e.detail,
                })
                .collect(),
            id: session.id,
            course_id: session.course_id,
            course: session.course_code,
            kind: session.kind,
            profile: session.profile,
            image: session.image,
            command: session.argv.join(" "),
            state: session.state,
            live,
            reason: session.reason,
            mig_uuid: session.mig_uuid,
            exit_code: session.exit_code,
            requested_at: clock_of(session.requested_at_ms),
            log_tail: session.log_tail,
        }
    }

    /// The session, if the caller may see it; otherwise 404, as if it did not exist.
    pub async fn session_for_caller(id: &str) -> Result<(Caller, GpuSession), AppError> {
        use slicehub_core::auth::{authorize, Denied};
        let auth = request_auth().await?;
        if let Err(Denied::NotLoggedIn) = authorize(&auth.caller, &Action::ListOwnSessions) {
            return Err(fail(
                http::StatusCode::UNAUTHORIZED,
                Denied::NotLoggedIn.to_string(),
            ));
        }
        let services = services()?;
        let session = services.store.gpu_session(id).await.ok().flatten();
        match session {
            Some(session)
                if authorize(
                    &auth.caller,
                    &Action::ManageSession {
                        owner: session.user_id,
                        course: session.course_id,
                    },
                )
                .is_ok() =>
            {
                Ok((auth.caller, session))
            }
            _ => Err(fail(
                http::StatusCode::NOT_FOUND,
                format!("there is no session {id:?}"),
            )),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::{quoted, student_detail};
        use slicehub_core::sessions::{split_command, SessionState};

        #[test]
        fn students_read_steps_without_devices_or_containers() {
            assert_eq!(
                student_detail(
                    SessionState::Creating,
                    "MIG device MIG-4f1a2b3c-0000-1111-2222-333344445555 ready; creating container slicehub-s-ab12 from jupyter/scipy"
                ),
                "a GPU slice was prepared; creating the container"
            );
            assert_eq!(
                student_detail(
                    SessionState::Allocating,
                    "GPU 0 slice 1g.10gb@3: created in the first free place"
                ),
                "a GPU slice was chosen"
            );
            assert_eq!(
                student_detail(SessionState::Failed, "the container slicehub-s-ab12 exited"),
                "it could not start or run"
            );
            // Details without internals stay as they were.
            for (state, detail) in [
                (SessionState::Queued, "no 1g.10gb slice is free; waiting in the queue"),
                (SessionState::Starting, "container running; waiting for JupyterLab to answer"),
                (SessionState::Stopping, "stopping: stopped by ada"),
            ] {
                assert_eq!(student_detail(state, detail), detail);
            }
        }

        #[test]
        fn a_quoted_command_splits_back_into_the_same_words() {
            for typed in [
                r#"python train.py --epochs 3"#,
                r#"echo "hello world""#,
                r#"echo training; done"#,
                r#"sh -c 'echo "$HOME"'"#,
                r#"printf "it's" '' "a\b""#,
            ] {
                let argv = split_command(typed).unwrap();
                assert_eq!(split_command(&quoted(&argv)).unwrap(), argv, "{typed}");
            }
            let argv = split_command(r#"echo "hello world""#).unwrap();
            assert_eq!(quoted(&argv), "echo 'hello world'");
        }
    }
}
