//! The administrators' operations page: every course's live and recent sessions.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::OperationsPageView;

#[server(endpoint = "operations_sessions")]
pub async fn operations_sessions(
    course: String,
    user: String,
    gpu: String,
    state: String,
) -> Result<OperationsPageView, AppError> {
    use super::ssr::{from_core, now_ms, require, services, Action};
    use crate::components::gpu_card::gpu_label;
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
    let courses = services.store.list_courses().await?.into_iter().map(|c| c.code).collect();
    // Each GPU's model by index, to name it the way every page does (`GPU 0 · model`).
    let models: std::collections::BTreeMap<u32, String> = services
        .on_gpus(|b| b.list_gpus())
        .await
        .map(|gpus| gpus.into_iter().map(|g| (g.index, g.name)).collect())
        .unwrap_or_default();
    let gpus = models.iter().map(|(index, model)| (*index, gpu_label(*index, Some(model)))).collect();
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
                gpu: s
                    .placement
                    .as_ref()
                    .map(|p| gpu_label(p.gpu_index, models.get(&p.gpu_index).map(String::as_str))),
                live: !s.state.is_final(),
                state: s.state,
                kind: s.kind,
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
