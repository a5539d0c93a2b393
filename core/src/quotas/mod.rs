//! Slice-hour quotas: periods in the course's time zone, budgets charged from the usage
//! ledger, and grants of extra time.

mod budget;
mod period;
pub mod weights;

pub use budget::{charged_ms, charged_ms_outside, hours, Budget};
pub use weights::{compute_slices, milli_slices, per_hour_text, per_milli_text, slice_ms};
pub use period::{instant, parse_clock, parse_date, time_zone, zone_or_utc, PeriodBounds, QuotaPeriod, WEEKDAYS};

use std::collections::HashMap;

use crate::courses::{CoursePolicy, Quota};
use crate::store::{Store, UsageInterval};
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
    let bounds = quota.period.bounds(zone_or_utc(&policy.time_zone), now_ms);
    let free = free_windows(store, policy, course_id, bounds, now_ms).await?;
    let intervals = store.usage_intervals(course_id, user_id, bounds.start_ms, now_ms.min(bounds.end_ms)).await?;
    let granted = store.granted_minutes(course_id, user_id, bounds.start_ms, bounds.end_ms).await?;
    Ok(Some(budget_of(quota, &policy.time_zone, bounds, &intervals, granted, &free, now_ms)))
}

/// Every student's use of the course in its period (the quota's, or the week without
/// one), read in three queries however many students the course has.
pub struct CourseUse {
    quota: Option<Quota>,
    time_zone: String,
    bounds: PeriodBounds,
    intervals: HashMap<UserId, Vec<UsageInterval>>,
    granted_minutes: HashMap<UserId, i64>,
    free: Vec<(i64, i64)>,
    now_ms: i64,
}

impl CourseUse {
    /// The period use is counted in: the quota's, or the week (Monday 00:00 in the
    /// course's zone) without one.
    pub fn period_of(policy: &CoursePolicy) -> QuotaPeriod {
        policy
            .quota
            .as_ref()
            .map(|q| q.period.clone())
            .unwrap_or(QuotaPeriod::Weekly { weekday: 0, minute: 0 })
    }

    pub async fn read(store: &Store, policy: &CoursePolicy, course_id: CourseId, now_ms: i64) -> Result<CourseUse, CoreError> {
        let bounds = Self::period_of(policy).bounds(zone_or_utc(&policy.time_zone), now_ms);
        let free = free_windows(store, policy, course_id, bounds, now_ms).await?;
        let mut intervals: HashMap<UserId, Vec<UsageInterval>> = HashMap::new();
        for interval in store.course_usage_intervals(course_id, bounds.start_ms, now_ms.min(bounds.end_ms)).await? {
            intervals.entry(interval.user_id).or_default().push(interval);
        }
        let granted_minutes = match policy.quota {
            Some(_) => store.course_granted_minutes(course_id, bounds.start_ms, bounds.end_ms).await?,
            None => HashMap::new(),
        };
        Ok(CourseUse {
            quota: policy.quota.clone(),
            time_zone: policy.time_zone.clone(),
            bounds,
            intervals,
            granted_minutes,
            free,
            now_ms,
        })
    }

    pub fn bounds(&self) -> PeriodBounds {
        self.bounds
    }

    /// What [`budget_at`] says of the student, or `None` without a quota.
    pub fn budget(&self, user_id: UserId) -> Option<Budget> {
        let quota = self.quota.as_ref()?;
        let granted = self.granted_minutes.get(&user_id).copied().unwrap_or(0);
        Some(budget_of(quota, &self.time_zone, self.bounds, self.of(user_id), granted, &self.free, self.now_ms))
    }

    /// The student's compute-slice-milliseconds from the start of the period up to now,
    /// and the compute slices held now (a part counted as one).
    pub fn usage(&self, user_id: UserId) -> (i64, i64) {
        let (used_ms, running_milli) = usage_outside(self.of(user_id), self.bounds, self.now_ms, &[]);
        (used_ms, whole_slices(running_milli))
    }

    fn of(&self, user_id: UserId) -> &[UsageInterval] {
        self.intervals.get(&user_id).map_or(&[], Vec::as_slice)
    }
}

fn budget_of(
    quota: &Quota,
    time_zone: &str,
    bounds: PeriodBounds,
    intervals: &[UsageInterval],
    granted_minutes: i64,
    free: &[(i64, i64)],
    now_ms: i64,
) -> Budget {
    let (used_ms, running_milli) = usage_outside(intervals, bounds, now_ms, free);
    let granted = granted_minutes * 60_000;
    Budget {
        period: quota.period.clone(),
        bounds,
        total_ms: quota.slice_minutes * 60_000 + granted,
        granted_ms: granted,
        used_ms,
        running_slices: whole_slices(running_milli),
        running_milli,
        renewal: quota.period.renewal(zone_or_utc(time_zone)),
        now_ms,
    }
}

/// The booked lab windows in the period when the course makes booked time free.
async fn free_windows(
    store: &Store,
    policy: &CoursePolicy,
    course_id: CourseId,
    bounds: PeriodBounds,
    now_ms: i64,
) -> Result<Vec<(i64, i64)>, CoreError> {
    match &policy.quota {
        Some(q) if q.booked_time_free => booked_windows(store, course_id, bounds.start_ms, now_ms.min(bounds.end_ms)).await,
        _ => Ok(Vec::new()),
    }
}

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

/// Slice-milliseconds the intervals charge from the start of `bounds` up to `now_ms`,
/// leaving out the `free` windows, and the thousandths of a compute slice the open ones
/// hold.
/// Thousandths of a compute slice as whole slices, a part counted as one.
fn whole_slices(milli: i64) -> i64 {
    (milli + weights::MILLI - 1) / weights::MILLI
}

fn usage_outside(intervals: &[UsageInterval], bounds: PeriodBounds, now_ms: i64, free: &[(i64, i64)]) -> (i64, i64) {
    let until = now_ms.min(bounds.end_ms);
    let running = intervals
        .iter()
        .filter(|i| i.ended_at_ms.is_none())
        .map(|i| milli_slices(&i.profile))
        .sum();
    (charged_ms_outside(intervals, bounds.start_ms, until, free), running)
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
