//! The administrators' operations page: every course's live and recent sessions.

use leptos::prelude::*;

use crate::views::OperationsPageView;

#[server(endpoint = "operations_sessions")]
pub async fn operations_sessions(
    course: String,
    user: String,
    gpu: String,
    state: String,
) -> Result<OperationsPageView, ServerFnError> {
    use super::ssr::{from_core, now_ms, require, services, Action};
    use crate::views::OperationsRow;
    use slicehub_core::sessions::{find_sessions, SessionFilter, RECENT_DAYS, STATE_FILTERS};
    use slicehub_core::CoreError;
    require(Action::ListAllSessions).await?;
    let services = services()?;
    let filter = SessionFilter { course, user, gpu, state };
    let (found, problem) = match find_sessions(&services, &filter, now_ms()).await {
        Ok(found) => (found, None),
        Err(CoreError::InvalidRequest(m)) => (Vec::new(), Some(m)),
        Err(e) => return Err(from_core(e)),
    };
    let courses = services.store.list_courses().await.map_err(from_core)?.into_iter().map(|c| c.code).collect();
    let gpus = services
        .on_gpus(|b| b.list_gpus())
        .await
        .map(|gpus| gpus.into_iter().map(|g| (g.index, format!("GPU {} · {}", g.index, g.name))).collect())
        .unwrap_or_default();
    Ok(OperationsPageView {
        course: filter.course.trim().to_string(),
        user: filter.user.trim().to_string(),
        gpu: filter.gpu.trim().to_string(),
        state: filter.state.trim().to_string(),
        courses,
        gpus,
        states: STATE_FILTERS.iter().map(|(w, m)| (w.to_string(), m.to_string())).collect(),
        sessions: found
            .into_iter()
            .map(|s| OperationsRow {
                gpu: s.placement.as_ref().map(|p| format!("GPU {}", p.gpu_index)),
                live: !s.state.is_final(),
                state: s.state.as_str().to_string(),
                kind: s.kind.as_str().to_string(),
                id: s.id,
                username: s.username,
                course: s.course_code,
                profile: s.profile,
                requested_at_ms: s.requested_at_ms,
                ended_at_ms: s.ended_at_ms,
                reason: s.reason,
            })
            .collect(),
        recent_days: RECENT_DAYS,
        problem,
    })
}
