//! Starting, watching and stopping GPU sessions.

use leptos::prelude::*;

use crate::views::{LaunchCourse, SessionView};

/// The courses the caller may launch in, with allowed profiles (and how many fit now) and
/// images.
#[server(endpoint = "launch_options")]
pub async fn launch_options() -> Result<Vec<LaunchCourse>, ServerFnError> {
    use super::ssr::{from_core, require, services, Action, Caller};
    use crate::views::ProfileOption;
    use slicehub_core::sessions::policy_of;
    let caller = require(Action::ListOwnSessions).await?;
    let Caller::User { id, .. } = caller else {
        return Ok(Vec::new());
    };
    let services = services()?;
    let known = services.sessions.known_profiles().await.map_err(from_core)?;
    // One read of the GPUs answers every course's profiles.
    let availability = services.sessions.availability(&known).await.map_err(from_core)?;
    let mut out = Vec::new();
    for (course, _role) in services.store.courses_of_user(id).await.map_err(from_core)? {
        let policy = policy_of(&services.store, &services.config, course.id)
            .await
            .map_err(from_core)?;
        out.push(LaunchCourse {
            course_id: course.id,
            code: course.code,
            title: course.title,
            profiles: availability
                .iter()
                .filter(|a| policy.allows_profile(&a.profile))
                .map(|a| ProfileOption {
                    name: a.profile.clone(),
                    free: a.free,
                    queued: a.queued,
                })
                .collect(),
            images: policy.images,
            max_minutes: policy.max_minutes,
        });
    }
    Ok(out)
}

/// The caller's sessions, newest first, each with its steps.
#[server(endpoint = "my_sessions")]
pub async fn my_sessions() -> Result<Vec<SessionView>, ServerFnError> {
    use super::ssr::{from_core, require, services, Action, Caller};
    let caller = require(Action::ListOwnSessions).await?;
    let Caller::User { id, .. } = caller else {
        return Ok(Vec::new());
    };
    let services = services()?;
    let sessions = services
        .store
        .gpu_sessions_of_user(id, 20)
        .await
        .map_err(from_core)?;
    let ids: Vec<String> = sessions.iter().map(|s| s.id.clone()).collect();
    let mut steps: std::collections::HashMap<String, Vec<_>> = std::collections::HashMap::new();
    for event in services.store.events_of_sessions(&ids).await.map_err(from_core)? {
        steps.entry(event.session_id.clone()).or_default().push(event);
    }
    let out = sessions
        .into_iter()
        .map(|session| {
            let own = steps.remove(&session.id).unwrap_or_default();
            ssr_views::session_view(session, own)
        })
        .collect();
    Ok(out)
}

/// Starts a notebook, or with a command a training job, in a course.
#[server(endpoint = "start_session")]
pub async fn start_session(
    course_id: i64,
    profile: String,
    image: String,
    command: Option<String>,
) -> Result<SessionView, ServerFnError> {
    use super::ssr::{from_core, require, services, Action, Caller};
    use slicehub_core::sessions::{split_command, ClaimRequest, Workload};
    let caller = require(Action::LaunchIn(course_id)).await?;
    let Caller::User { id, .. } = caller else {
        return Err(ServerFnError::new("not signed in"));
    };
    let workload = match command.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => Workload::Job(split_command(text).map_err(from_core)?),
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
        .await
        .map_err(from_core)?;
    let steps = services
        .store
        .session_events(&session.id)
        .await
        .map_err(from_core)?;
    Ok(ssr_views::session_view(session, steps))
}

/// Stops a session: its owner, an instructor of its course, or an admin. Anyone else is
/// told it does not exist.
#[server(endpoint = "stop_session")]
pub async fn stop_session(id: String) -> Result<(), ServerFnError> {
    use super::ssr::{actor, from_core, services};
    let (caller, session) = ssr_views::session_for_caller(&id).await?;
    let by = actor(&caller);
    let reason = if session.username == by {
        format!("stopped by {by}")
    } else {
        format!("stopped by {by} (not the owner)")
    };
    let services = services()?;
    services.sessions.stop(&id, &reason).await.map_err(from_core)?;
    services
        .store
        .audit(&by, "session.stop", &id, &reason)
        .await
        .map_err(from_core)?;
    Ok(())
}

/// The last lines a session's container printed: live while it runs, kept after.
#[server(endpoint = "session_logs")]
pub async fn session_logs(id: String) -> Result<String, ServerFnError> {
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
mod ssr_views {
    use leptos::prelude::ServerFnError;
    use slicehub_core::sessions::{GpuSession, SessionEvent};

    use super::super::ssr::{fail, request_auth, services, Action, Caller};
    use crate::views::{SessionStep, SessionView};

    /// `HH:MM:SS UTC` of an epoch-millisecond time.
    pub fn clock_of(ms: i64) -> String {
        match time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000) {
            Ok(t) => format!("{:02}:{:02}:{:02} UTC", t.hour(), t.minute(), t.second()),
            Err(_) => "—".into(),
        }
    }

    pub fn session_view(session: GpuSession, steps: Vec<SessionEvent>) -> SessionView {
        let live = !session.state.is_final();
        let open_url = (session.kind == slicehub_core::sessions::SessionKind::Notebook
            && session.state == slicehub_core::sessions::SessionState::Ready)
            .then(|| format!("{}lab", session.base_url()));
        SessionView {
            open_url,
            placement: session
                .placement
                .as_ref()
                .map(|p| format!("GPU {} · {}", p.gpu_index, p.label)),
            ends_at: (live && session.ready_at_ms.is_some())
                .then(|| clock_of(session.deadline_at_ms)),
            steps: steps
                .into_iter()
                .map(|e| SessionStep {
                    at: clock_of(e.at_ms),
                    state: e.state.as_str().to_string(),
                    detail: e.detail,
                })
                .collect(),
            id: session.id,
            course: session.course_code,
            kind: session.kind.as_str().to_string(),
            profile: session.profile,
            image: session.image,
            command: session.argv.join(" "),
            state: session.state.as_str().to_string(),
            live,
            reason: session.reason,
            mig_uuid: session.mig_uuid,
            exit_code: session.exit_code,
            requested_at: clock_of(session.requested_at_ms),
            log_tail: session.log_tail,
        }
    }

    /// The session, if the caller may see it; otherwise 404, as if it did not exist.
    pub async fn session_for_caller(id: &str) -> Result<(Caller, GpuSession), ServerFnError> {
        use slicehub_core::auth::{authorize, Denied};
        let auth = request_auth().await?;
        if let Err(Denied::NotLoggedIn) = authorize(&auth.caller, &Action::ListOwnSessions) {
            return Err(fail(http::StatusCode::UNAUTHORIZED, Denied::NotLoggedIn.to_string()));
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
}
