//! A course's policy and slice-hour quota: read and saved by its instructors and admins,
//! extra time granted to one student.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::{FieldProblemView, PolicyPageView};

/// The policy form, filled with what the course has now, and each student's budget.
#[server(endpoint = "course_policy")]
pub async fn course_policy(code: String) -> Result<PolicyPageView, AppError> {
    use super::ssr::{now_ms, require, services, Action};
    use crate::views::{ImageChoice, PolicyCeilings, StudentBudgetRow};
    use slicehub_core::quotas::budget_at;
    use slicehub_core::courses::{policy_of, PolicyForm, PolicyFormRules};
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    require(Action::SetCoursePolicy(course.id)).await?;
    let store = &services.store;
    let policy = policy_of(store, &services.config, course.id).await?;
    let known = services.sessions.known_profiles().await?;
    let now = now_ms();
    let mut students = Vec::new();
    for member in store.course_members(course.id).await? {
        if member.role != crate::views::Role::Student {
            continue;
        }
        let budget = budget_at(store, &policy, course.id, member.user.id, now)
            .await?;
        students.push(StudentBudgetRow {
            username: member.user.username,
            display_name: member.user.display_name,
            budget: budget.map(ssr::budget_view),
        });
    }
    let offered = services.config.offered_images();
    let missing = if services.config.runs_on_slurm(&course.code) {
        Vec::new()
    } else {
        services.sessions.images_not_on_engine(&offered).await
    };
    let offered_images = offered
        .into_iter()
        .map(|image| ImageChoice { on_server: !missing.contains(&image), image })
        .collect();
    Ok(PolicyPageView {
        code: course.code,
        title: course.title,
        fields: PolicyForm::from_policy(&policy),
        per_hour: known.iter().map(|p| (p.clone(), slicehub_core::quotas::per_hour_text(p))).collect(),
        compute_slices: known.iter().map(|p| (p.clone(), slicehub_core::quotas::compute_slices(p))).collect(),
        known_profiles: known,
        offered_images,
        ceilings: PolicyCeilings {
            session_minutes: services.config.limits.session_minutes,
            sessions_per_student: services.config.limits.sessions_per_student,
            compute_slices: services.config.limits.compute_slices,
            course_share_percent: services.config.limits.course_share_percent,
        },
        students,
        slice_activity_readable: services.sessions.slice_activity_readable().await,
    })
}

/// Saves the policy when every field is right; otherwise nothing is saved and each
/// problem comes back with its field.
#[allow(clippy::too_many_arguments)]
#[server(endpoint = "save_course_policy")]
pub async fn save_course_policy(
    code: String,
    images: String,
    profiles: String,
    max_minutes: String,
    max_sessions: String,
    max_slices: String,
    internet: String,
    quota_hours: String,
    period: String,
    reset_day: String,
    reset_time: String,
    term_starts: String,
    term_ends: String,
    time_zone: String,
    booked_time: Option<String>,
    idle_minutes: Option<String>,
    idle_waiting_minutes: Option<String>,
    idle_gpu_percent: Option<String>,
    idle_warning_minutes: Option<String>,
    job_idle_minutes: Option<String>,
    job_idle: Option<String>,
) -> Result<Vec<FieldProblemView>, AppError> {
    use super::ssr::{actor, require, services, Action};
    use slicehub_core::courses::{admin_limit_problems, set_policy, PolicyForm, PolicyFormRules};
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    let caller = require(Action::SetCoursePolicy(course.id)).await?;
    let form = PolicyForm {
        images,
        profiles,
        max_minutes,
        max_sessions,
        max_slices,
        internet,
        quota_hours,
        period,
        reset_day,
        reset_time,
        term_starts,
        term_ends,
        time_zone,
        booked_time: booked_time.unwrap_or_default(),
        idle_minutes: idle_minutes.unwrap_or_default(),
        idle_waiting_minutes: idle_waiting_minutes.unwrap_or_default(),
        idle_gpu_percent: idle_gpu_percent.unwrap_or_default(),
        idle_warning_minutes: idle_warning_minutes.unwrap_or_default(),
        job_idle_minutes: job_idle_minutes.unwrap_or_default(),
        job_idle: job_idle.unwrap_or_default(),
    };
    let known = services.sessions.known_profiles().await?;
    match form.parse(&known) {
        Ok(policy) => {
            // Refused again by the save itself; asked here to mark each field.
            let refused = admin_limit_problems(&services.config, &policy);
            if !refused.is_empty() {
                return Ok(refused
                    .into_iter()
                    .map(|p| FieldProblemView { field: p.field, message: p.message })
                    .collect());
            }
            // A course on this machine can start only images its engine has (it pulls none).
            if !services.config.runs_on_slurm(&course.code) {
                let missing = services.sessions.images_not_on_engine(&policy.images).await;
                if !missing.is_empty() {
                    return Ok(vec![FieldProblemView {
                        field: "images".into(),
                        message: format!(
                            "not present on this server: {} (an administrator must build or load it first; nothing was saved)",
                            missing.join(", ")
                        ),
                    }]);
                }
            }
            set_policy(&services.store, &services.config, course.id, &policy, &known, &actor(&caller))
                .await?;
            Ok(Vec::new())
        }
        Err(problems) => Ok(problems
            .into_iter()
            .map(|p| FieldProblemView { field: p.field, message: p.message })
            .collect()),
    }
}

/// Gives one student of the course extra slice-hours for the current period.
#[server(endpoint = "grant_extra_hours")]
pub async fn grant_extra_hours(
    code: String,
    username: String,
    hours: String,
    reason: String,
) -> Result<String, AppError> {
    use super::ssr::{actor, fail, now_ms, require, services, Action};
    use slicehub_core::quotas::grant_extra;
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    let caller = require(Action::SetCoursePolicy(course.id)).await?;
    let name = username.trim().to_lowercase();
    let student = services
        .store
        .course_members(course.id)
        .await?
        .into_iter()
        .find(|m| m.user.username == name && m.role == crate::views::Role::Student)
        .ok_or_else(|| {
            fail(
                http::StatusCode::NOT_FOUND,
                format!("{name:?} is not a student of {}.", course.code),
            )
        })?;
    let minutes = grant_extra(
        &services.store,
        course.id,
        student.user.id,
        &student.user.username,
        &hours,
        &reason,
        &actor(&caller),
        now_ms(),
    )
    .await?;
    Ok(format!(
        "{} has {} more slice-hours this period.",
        student.user.display_name,
        slicehub_core::quotas::hours(minutes * 60_000)
    ))
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use slicehub_core::quotas::{hours, Budget};
    use crate::views::BudgetView;

    pub fn budget_view(b: Budget) -> BudgetView {
        BudgetView {
            used: hours(b.used_ms.min(b.total_ms)),
            total: hours(b.total_ms),
            left: hours(b.remaining_ms()),
            period: b.period.word().to_string(),
            renewal: b.renewal.clone(),
            period_end_ms: b.bounds.end_ms,
            period_end_utc: day_of(b.bounds.end_ms),
            exhausted: b.exhausted(),
        }
    }

    /// `Mon 2026-11-30 00:00 UTC`
    fn day_of(ms: i64) -> String {
        chrono::DateTime::from_timestamp(ms / 1000, 0)
            .map(|t| t.format("%a %Y-%m-%d %H:%M UTC").to_string())
            .unwrap_or_default()
    }
}
