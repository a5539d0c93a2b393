//! Slice-hour budgets: what a student has used of their course's quota in the current
//! period, charged from the usage ledger (so it survives restarts), plus grants.
//!
//! The unit is the compute-slice-hour: one compute slice (the `Ng` of a MIG profile) for
//! one hour. A `3g.40gb` slice for an hour costs 3; whole GPUs and shares count their
//! weight (`weights.rs`).

use serde::Serialize;

use super::period::{PeriodBounds, QuotaPeriod};
use super::weights::{slice_ms, MILLI};
use crate::store::UsageInterval;

const HOUR_MS: i64 = 3_600_000;

/// Slice-milliseconds the intervals used within `[from, until)`; open intervals run until
/// `until`.
pub fn charged_ms(intervals: &[UsageInterval], from_ms: i64, until_ms: i64) -> i64 {
    charged_ms_outside(intervals, from_ms, until_ms, &[])
}

/// [`charged_ms`] leaving out the time inside the `free` windows (start, end), which may
/// overlap one another.
pub fn charged_ms_outside(intervals: &[UsageInterval], from_ms: i64, until_ms: i64, free: &[(i64, i64)]) -> i64 {
    let mut merged: Vec<(i64, i64)> = free.to_vec();
    merged.sort_unstable();
    let mut windows: Vec<(i64, i64)> = Vec::with_capacity(merged.len());
    for (s, e) in merged {
        match windows.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => windows.push((s, e)),
        }
    }
    intervals
        .iter()
        .map(|i| {
            let start = i.started_at_ms.max(from_ms);
            let end = i.ended_at_ms.unwrap_or(until_ms).min(until_ms);
            let inside: i64 = windows.iter().map(|&(s, e)| (end.min(e) - start.max(s)).max(0)).sum();
            slice_ms(&i.profile, ((end - start).max(0) - inside).max(0))
        })
        .sum()
}

/// A student's budget in one course at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Budget {
    pub period: QuotaPeriod,
    pub bounds: PeriodBounds,
    /// The course's quota plus this period's grants, in slice-milliseconds.
    pub total_ms: i64,
    pub granted_ms: i64,
    pub used_ms: i64,
    /// Compute slices the student's running sessions in the course hold now, a part
    /// counted as one.
    pub running_slices: i64,
    /// The same in thousandths of a compute slice: the rate the budget is used at.
    pub running_milli: i64,
    /// "resets Monday 00:00 (UTC)".
    pub renewal: String,
    pub now_ms: i64,
}

impl Budget {
    pub fn remaining_ms(&self) -> i64 {
        if self.now_ms >= self.bounds.end_ms && matches!(self.period, QuotaPeriod::Term { .. }) {
            return 0;
        }
        (self.total_ms - self.used_ms).max(0)
    }

    pub fn exhausted(&self) -> bool {
        self.remaining_ms() == 0
    }

    /// When the running sessions will have used the rest, if nothing else changes and the
    /// period does not renew first.
    pub fn runs_out_at_ms(&self) -> Option<i64> {
        if self.running_milli <= 0 {
            return None;
        }
        let lasts_ms = i128::from(self.remaining_ms()) * i128::from(MILLI) / i128::from(self.running_milli);
        let at = self.now_ms.saturating_add(i64::try_from(lasts_ms).unwrap_or(i64::MAX));
        (at < self.bounds.end_ms || matches!(self.period, QuotaPeriod::Term { .. })).then_some(at)
    }

    /// Whether what is left pays for `minutes` of `profile`.
    pub fn affords(&self, profile: &str, minutes: i64) -> bool {
        self.remaining_ms() >= slice_ms(profile, minutes * 60_000)
    }

    /// "used 5.5 of 6 slice-hours this week; resets Monday 00:00 (UTC)".
    pub fn summary(&self) -> String {
        format!(
            "used {} of {} slice-hours {}; {}",
            hours(self.used_ms.min(self.total_ms)),
            hours(self.total_ms),
            self.period.word(),
            self.renewal
        )
    }
}

/// Slice-milliseconds as slice-hours for people: "6", "5.5", "0.25".
pub fn hours(slice_ms: i64) -> String {
    let hundredths = (slice_ms as f64 / HOUR_MS as f64 * 100.0).round() as i64;
    let text = format!("{}.{:02}", hundredths / 100, hundredths % 100);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}
