//! The administrator's limits on booked labs: how far ahead a course may book
//! (`limits.booking_days_ahead`) and how many compute-slice-hours its labs may keep in one
//! calendar week, Monday to Sunday in UTC (`limits.booking_slice_hours_per_week`).

use super::booking_model::{Booking, BookingRequest};
use crate::quotas::slice_ms;
use crate::store::WEEK_MS;
use crate::CoreError;

const DAY_MS: i64 = 86_400_000;
/// 1970-01-01 was a Thursday: the first Monday is four days later.
const FIRST_MONDAY_MS: i64 = 4 * DAY_MS;

/// The calendar week (UTC, from Monday) an instant falls in.
fn week_of(ms: i64) -> i64 {
    (ms - FIRST_MONDAY_MS).div_euclid(WEEK_MS)
}

/// When the calendar week (UTC, from Monday) of an instant began.
pub(super) fn week_start_ms(ms: i64) -> i64 {
    FIRST_MONDAY_MS + week_of(ms) * WEEK_MS
}

/// Compute-slice-milliseconds one window of `slices` × `profile` keeps.
fn kept(profile: &str, slices: i64, start: i64, end: i64) -> i64 {
    slice_ms(profile, end - start).saturating_mul(slices)
}

/// Refuses, in words, a request past either limit. `course_bookings` are the course's live
/// bookings.
pub(super) fn check_booking_limits(
    req: &BookingRequest,
    course_bookings: &[Booking],
    days_ahead: u32,
    slice_hours_per_week: u32,
    now: i64,
) -> Result<(), CoreError> {
    let last_end = req.ends_at_ms + i64::from(req.weeks.max(1) - 1) * WEEK_MS;
    if last_end > now + i64::from(days_ahead) * DAY_MS {
        return Err(CoreError::InvalidRequest(format!(
            "Labs may be booked at most {days_ahead} days ahead on this portal (the administrator's limit), the last weekly window included. Nothing was booked."
        )));
    }
    let cap_ms = i64::from(slice_hours_per_week) * 3_600_000;
    for k in 0..i64::from(req.weeks.max(1)) {
        let (start, end) = (req.starts_at_ms + k * WEEK_MS, req.ends_at_ms + k * WEEK_MS);
        let week = week_of(start);
        let others: i64 = course_bookings
            .iter()
            .flat_map(|b| b.windows().map(move |(s, e)| (b, s, e)))
            .filter(|(_, s, _)| week_of(*s) == week)
            .map(|(b, s, e)| kept(&b.row.profile, b.row.slices, s, e))
            .sum();
        let total = others + kept(&req.profile, i64::from(req.slices), start, end);
        if total > cap_ms {
            let monday = chrono::DateTime::from_timestamp_millis(week_start_ms(start))
                .map(|d| d.format("%Y-%m-%d").to_string())
                .unwrap_or_default();
            return Err(CoreError::InvalidRequest(format!(
                "The course's labs would keep {} compute-slice-hours in the week from Monday {monday} (UTC); this portal allows {slice_hours_per_week} per course and week (the administrator's limit). Nothing was booked.",
                crate::quotas::hours(total)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weeks_start_on_monday_in_utc() {
        let monday = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap().and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis();
        assert_eq!(week_of(monday), week_of(monday + WEEK_MS - 1));
        assert_eq!(week_of(monday) - 1, week_of(monday - 1));
        assert_eq!(week_start_ms(monday + 3 * DAY_MS), monday);
    }
}
