//! Slice-hour quotas: periods in the course's time zone, budgets charged from the usage
//! ledger, and grants of extra time.

mod budget;
mod period;

pub use budget::{charged_ms, charged_ms_outside, compute_slices, hours, Budget};
pub use period::{instant, parse_clock, parse_date, time_zone, zone_or_utc, PeriodBounds, QuotaPeriod, WEEKDAYS};

use crate::courses::CoursePolicy;
use crate::store::Store;
use crate::CoreError;
use crate::{CourseId, UserId};

/// The student's budget in the course at `now_ms`, or `None` when the course sets no quota.
pub async fn budget_at(
    store: &Store,
    policy: &CoursePolicy,
    course_id: CourseId,
    user_id: UserId,
    now_ms: i64,
) -> Result<Option<Budget>, CoreError> {
    let Some(quota) = &policy.quota else { return Ok(None) };
    let tz = zone_or_utc(&policy.time_zone);
    let bounds = quota.period.bounds(tz, now_ms);
    let free = if quota.booked_time_free {
        booked_windows(store, course_id, bounds.start_ms, now_ms.min(bounds.end_ms)).await?
    } else {
        Vec::new()
    };
    let (used_ms, running_slices) = usage_outside(store, course_id, user_id, bounds, now_ms, &free).await?;
    let granted = store.granted_minutes(course_id, user_id, bounds.start_ms, bounds.end_ms).await? * 60_000;
    Ok(Some(Budget {
        period: quota.period.clone(),
        bounds,
        total_ms: quota.slice_minutes * 60_000 + granted,
        granted_ms: granted,
        used_ms,
        running_slices,
        renewal: quota.period.renewal(tz),
        now_ms,
    }))
}

/// The compute-slice-milliseconds the student used in the course from the start of
/// `bounds` up to `now_ms` (charged from the ledger), and the compute slices held now.
pub async fn usage_in(
    store: &Store,
    course_id: CourseId,
    user_id: UserId,
    bounds: PeriodBounds,
    now_ms: i64,
) -> Result<(i64, i64), CoreError> {
    usage_outside(store, course_id, user_id, bounds, now_ms, &[]).await
}

/// The course's booked lab windows (start, end) that overlap `[from_ms, until_ms)`.
/// The course's booked windows overlapping `[from_ms, until_ms)`. A cancelled booking's
/// windows count up to its cancellation: time that was free when it was used stays free.
async fn booked_windows(store: &Store, course_id: CourseId, from_ms: i64, until_ms: i64) -> Result<Vec<(i64, i64)>, CoreError> {
    let mut out = Vec::new();
    for (starts_at, ends_at, weeks, cancelled_at) in store.course_booked_spans(course_id).await? {
        let cut = cancelled_at.unwrap_or(i64::MAX);
        for k in 0..weeks.max(1) {
            let (s, e) = (starts_at + k * crate::store::WEEK_MS, (ends_at + k * crate::store::WEEK_MS).min(cut));
            if s < e && s < until_ms && from_ms < e {
                out.push((s, e));
            }
        }
    }
    Ok(out)
}

/// [`usage_in`] leaving out the `free` windows (booked lab time, when it is free).
async fn usage_outside(
    store: &Store,
    course_id: CourseId,
    user_id: UserId,
    bounds: PeriodBounds,
    now_ms: i64,
    free: &[(i64, i64)],
) -> Result<(i64, i64), CoreError> {
    let until = now_ms.min(bounds.end_ms);
    let intervals = store.usage_intervals(course_id, user_id, bounds.start_ms, until).await?;
    let running = intervals
        .iter()
        .filter(|i| i.ended_at_ms.is_none())
        .map(|i| compute_slices(&i.profile))
        .sum();
    Ok((charged_ms_outside(&intervals, bounds.start_ms, until, free), running))
}

/// Gives the student `hours_text` extra slice-hours in the current period (audited).
#[allow(clippy::too_many_arguments)]
pub async fn grant_extra(
    store: &Store,
    course_id: CourseId,
    user_id: UserId,
    username: &str,
    hours_text: &str,
    reason: &str,
    actor: &str,
    now_ms: i64,
) -> Result<i64, CoreError> {
    let hours: f64 = hours_text
        .trim()
        .replace(',', ".")
        .parse()
        .ok()
        .filter(|h: &f64| h.is_finite() && *h > 0.0 && *h <= 1_000.0)
        .ok_or_else(|| {
            CoreError::InvalidRequest(format!(
                "extra time is a number of slice-hours from 0.1 to 1000; {:?} is not",
                crate::auth::validate::excerpt(hours_text.trim())
            ))
        })?;
    let reason = reason.trim();
    if reason.is_empty() || reason.len() > 300 {
        return Err(CoreError::InvalidRequest(
            "say why in a few words (at most 300 characters); the student sees it".into(),
        ));
    }
    crate::auth::validate::check_text("the reason", reason, 300, crate::auth::validate::Lines::Many)
        .map_err(CoreError::InvalidRequest)?;
    let minutes = ((hours * 60.0).round() as i64).max(1);
    store.add_quota_grant(course_id, user_id, minutes, reason, actor, now_ms).await?;
    let code = store.course_by_id(course_id).await?.map(|c| c.code).unwrap_or_default();
    store
        .audit(actor, "quota.grant", &format!("{code}/{username}"), &format!("{} slice-hours: {reason}", budget::hours(minutes * 60_000)))
        .await?;
    Ok(minutes)
}
