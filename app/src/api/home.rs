//! What each role's home page sums up: administrators the operations, instructors their
//! classes.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::{OperationsOverview, TeachingCourse};

/// Stopping longer than this means the container could not be removed yet.
#[cfg(feature = "ssr")]
const STUCK_STOPPING_MS: i64 = 120_000;

#[server(endpoint = "operations_summary")]
pub async fn operations_summary() -> Result<OperationsOverview, AppError> {
    use super::ssr::{now_ms, require, services, Action};
    use slicehub_core::fleet;
    use slicehub_core::sessions::SessionState;
    require(Action::ListAllSessions).await?;
    let services = services()?;
    let store = &services.store;
    let now = now_ms();
    // Always in this order, whatever order the database groups its rows in.
    const WORDS: [&str; 4] = ["running", "waiting", "starting", "stopping"];
    let mut counted = [0i64; WORDS.len()];
    for count in store.live_session_counts().await? {
        let word = match SessionState::parse(&count.state) {
            Some(SessionState::Ready) => 0,
            Some(SessionState::Queued) => 1,
            Some(SessionState::Stopping) => 3,
            _ => 2,
        };
        counted[word] += count.sessions;
    }
    let sessions: Vec<(String, i64)> = WORDS
        .iter()
        .zip(counted)
        .filter(|(_, n)| *n > 0)
        .map(|(word, n)| (word.to_string(), n))
        .collect();
    let queue = store
        .queue_counts()
        .await?
        .into_iter()
        .map(|q| (q.profile, q.waiting, format!("waited {} min", (now - q.oldest_requested_at).max(0) / 60_000)))
        .collect();
    let mut alerts = Vec::new();
    if let Some(proxy) = slicehub_core::health::untrusted_forwarder() {
        alerts.push(format!(
            "Requests from {proxy} (this host) carry X-Forwarded-For, but server.trusted_proxies does not name it. If {proxy} is your reverse proxy, every client behind it counts as one, so one client's failed logins slow all of them: add {proxy} to server.trusted_proxies."
        ));
    }
    if let Some(fallback) = &services.gpu_fallback_reason {
        if fallback.nvml_failed {
            alerts.push(format!("NVML failed, so no session can start: {}", fallback.reason));
        }
    }
    match fleet::snapshot(&services).await {
        Ok(gpus) => {
            for gpu in gpus {
                if let Some(e) = gpu.error {
                    alerts.push(format!("GPU {} cannot be read: {e}", gpu.info.index));
                }
                if let Some(by) = gpu.drained_by {
                    alerts.push(format!("GPU {} is drained (by {by}): it takes no new sessions.", gpu.info.index));
                }
            }
        }
        Err(e) => alerts.push(format!("The GPUs cannot be read: {e}")),
    }
    let stuck = store
        .gpu_sessions_in(&[SessionState::Stopping])
        .await?
        .into_iter()
        .filter(|s| now - s.updated_at_ms > STUCK_STOPPING_MS)
        .count();
    if stuck > 0 {
        alerts.push(format!(
            "{stuck} session(s) have been stopping for over 2 minutes: their containers could not be removed yet, so their slices stay held."
        ));
    }
    Ok(OperationsOverview { sessions, queue, alerts })
}

#[server(endpoint = "teaching_summary")]
pub async fn teaching_summary() -> Result<Vec<TeachingCourse>, AppError> {
    use super::ssr::{require, services, Action, Caller};
    use slicehub_core::sessions::SessionState;
    use slicehub_core::store::Role;
    let caller = require(Action::ListOwnCourses).await?;
    let Caller::User { id, .. } = caller else { return Ok(Vec::new()) };
    let services = services()?;
    let store = &services.store;
    let mut out = Vec::new();
    for (course, role) in store.courses_of_user(id).await? {
        if role != Role::Instructor {
            continue;
        }
        let live = store.live_sessions_of_course(course.id).await?;
        let members = store.course_members(course.id).await?;
        out.push(TeachingCourse {
            students: members.iter().filter(|m| m.role == Role::Student).count(),
            running: live.iter().filter(|s| s.state == SessionState::Ready).count(),
            waiting: live.iter().filter(|s| s.state == SessionState::Queued).count(),
            code: course.code,
            title: course.title,
        });
    }
    Ok(out)
}
