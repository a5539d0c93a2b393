//! The instructor's class dashboard: every live and queued session of the course and each
//! student's slice-hours this period.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::ClassPageView;

#[server(endpoint = "class_dashboard")]
pub async fn class_dashboard(code: String) -> Result<ClassPageView, AppError> {
    use super::ssr::{now_ms, require, services, Action};
    use crate::views::{ClassSessionRow, StudentUsageRow};
    use slicehub_core::courses::class_view;
    use slicehub_core::quotas::hours;
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    require(Action::WatchClass(course.id)).await?;
    let now = now_ms();
    let view = class_view(&services.store, &services.config, course.id, now)
        .await?;
    let names: std::collections::HashMap<&str, &str> = view
        .students
        .iter()
        .map(|s| (s.username.as_str(), s.display_name.as_str()))
        .collect();
    let slurm_waits = services.sessions.slurm_waits();
    let estimates = if view.sessions.iter().any(|c| c.queue_position.is_some()) {
        services
            .sessions
            .queue_estimates()
            .await?
    } else {
        std::collections::HashMap::new()
    };
    let idle = if view.sessions.iter().any(|c| c.session.state == slicehub_core::sessions::SessionState::Ready) {
        services.sessions.idle_notices().await?
    } else {
        std::collections::HashMap::new()
    };
    let sessions = view
        .sessions
        .iter()
        .map(|c| {
            let s = &c.session;
            ClassSessionRow {
                id: s.id.clone(),
                display_name: names.get(s.username.as_str()).copied().unwrap_or(&s.username).to_string(),
                username: s.username.clone(),
                kind: s.kind,
                profile: s.profile.clone(),
                state: s.state,
                queue_position: c
                    .queue_position
                    .or_else(|| slurm_waits.get(&s.id).filter(|_| s.state == slicehub_core::sessions::SessionState::Queued).map(|w| w.position))
                    .map(|p| p as u32),
                eta: estimates
                    .get(&s.id)
                    .copied()
                    .map(super::sessions::ssr_views::eta_view),
                requested_at_ms: s.requested_at_ms,
                ready_at_ms: s.ready_at_ms,
                ends_at_ms: c.ends_at_ms,
                time_left: c.ends_at_ms.map(|end| crate::components::time::minutes_left(end, now)),
                idle: idle
                    .get(&s.id)
                    .filter(|_| s.state == slicehub_core::sessions::SessionState::Ready)
                    .map(|n| super::sessions::ssr_views::idle_view(*n)),
            }
        })
        .collect();
    let failed_starts = view
        .failed_starts
        .iter()
        .map(|s| crate::views::FailedStartRow {
            id: s.id.clone(),
            display_name: names.get(s.username.as_str()).copied().unwrap_or(&s.username).to_string(),
            username: s.username.clone(),
            profile: s.profile.clone(),
            image: s.image.clone(),
            reason: s.reason.clone(),
            at_ms: s.ended_at_ms.unwrap_or(s.updated_at_ms),
        })
        .collect();
    let students = view
        .students
        .iter()
        .cloned()
        .map(|s| StudentUsageRow {
            used: hours(s.used_ms),
            budget: s.budget.map(super::policy::ssr::budget_view),
            running_slices: s.running_slices,
            username: s.username,
            display_name: s.display_name,
        })
        .collect();
    let bookings = super::bookings::ssr::of_course(&services, course.id).await?;
    Ok(ClassPageView {
        code: course.code,
        title: course.title,
        bookings,
        sessions,
        failed_starts,
        students,
        period: view.period_word.to_string(),
        period_start_ms: view.period.start_ms,
        period_end_ms: view.period.end_ms,
    })
}
