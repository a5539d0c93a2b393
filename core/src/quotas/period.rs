//! Budget periods in a course's time zone: a week that resets on a chosen weekday and
//! time, or one term between two dates.

use chrono::{Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;
use serde::Serialize;

pub const WEEKDAYS: [&str; 7] = [
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum QuotaPeriod {
    /// Resets every week on `weekday` (0 = Monday) at `minute` after local midnight.
    Weekly { weekday: u8, minute: u16 },
    /// One budget from the start of `starts` to the end of `ends`, local time.
    Term { starts: NaiveDate, ends: NaiveDate },
}

/// The period `now` falls in, as instants (epoch milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PeriodBounds {
    pub start_ms: i64,
    pub end_ms: i64,
}

/// A time zone by its IANA name (`Europe/Berlin`, `UTC`).
pub fn time_zone(name: &str) -> Option<Tz> {
    name.trim().parse::<Tz>().ok()
}

/// A stored course's zone; UTC if the name was lost (policies are checked when saved).
pub fn zone_or_utc(name: &str) -> Tz {
    time_zone(name).unwrap_or(chrono_tz::UTC)
}

/// The instant a local wall-clock time names: the earlier one when clocks go back, the
/// first instant after the gap when they go forward.
pub fn instant(tz: Tz, local: NaiveDateTime) -> i64 {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t.timestamp_millis(),
        LocalResult::None => match local.checked_add_signed(Duration::minutes(30)) {
            Some(later) => instant(tz, later),
            None => local.and_utc().timestamp_millis(),
        },
    }
}

impl QuotaPeriod {
    pub fn bounds(&self, tz: Tz, now_ms: i64) -> PeriodBounds {
        match *self {
            QuotaPeriod::Weekly { weekday, minute } => {
                let now = tz.timestamp_millis_opt(now_ms).single().map(|t| t.naive_local()).unwrap_or_default();
                let back = (7 + now.weekday().num_days_from_monday() as i64 - i64::from(weekday)) % 7;
                let day = now.date().checked_sub_signed(Duration::days(back)).unwrap_or(now.date());
                let midnight = day.and_hms_opt(0, 0, 0).unwrap_or_default();
                let mut start = midnight.checked_add_signed(Duration::minutes(i64::from(minute))).unwrap_or(midnight);
                if instant(tz, start) > now_ms {
                    start = start.checked_sub_signed(Duration::days(7)).unwrap_or(start);
                }
                PeriodBounds {
                    start_ms: instant(tz, start),
                    end_ms: instant(tz, start.checked_add_signed(Duration::days(7)).unwrap_or(start)),
                }
            }
            QuotaPeriod::Term { starts, ends } => PeriodBounds {
                start_ms: instant(tz, starts.and_hms_opt(0, 0, 0).unwrap_or_default()),
                end_ms: instant(tz, ends.succ_opt().unwrap_or(ends).and_hms_opt(0, 0, 0).unwrap_or_default()),
            },
        }
    }

    /// "this week" / "this term".
    pub fn word(&self) -> &'static str {
        match self {
            QuotaPeriod::Weekly { .. } => "this week",
            QuotaPeriod::Term { .. } => "this term",
        }
    }

    /// When the budget starts again, in the course's words: "resets Monday 00:00
    /// (Europe/Berlin)" or "for the term, until 2027-02-12".
    pub fn renewal(&self, tz: Tz) -> String {
        let zone = tz.name();
        match self {
            QuotaPeriod::Weekly { weekday, minute } => format!(
                "resets {} {:02}:{:02} ({zone})",
                WEEKDAYS[usize::from(*weekday) % 7],
                minute / 60,
                minute % 60
            ),
            QuotaPeriod::Term { ends, .. } => format!("for the term, until the end of {ends} ({zone})"),
        }
    }
}

/// "HH:MM" → minutes after midnight.
pub fn parse_clock(text: &str) -> Option<u16> {
    let (h, m) = text.trim().split_once(':')?;
    let (h, m): (u16, u16) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

/// Years a term may name: wide enough for any course, narrow enough that no date
/// arithmetic near it can overflow.
pub const YEARS: std::ops::RangeInclusive<i32> = 2000..=2200;

/// "YYYY-MM-DD", in [`YEARS`].
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .ok()
        .filter(|d| YEARS.contains(&d.year()))
}

#[cfg(test)]
mod bounds_tests {
    use super::*;

    #[test]
    fn far_dates_are_refused_and_the_last_day_there_is_never_overflows() {
        assert_eq!(parse_date("+262143-12-31"), None);
        assert_eq!(parse_date("9999-12-31"), None);
        assert_eq!(parse_date("1970-01-01"), None);
        assert!(parse_date("2200-12-31").is_some());
        // A stored term ending on the last date chrono knows still has bounds.
        let term = QuotaPeriod::Term { starts: NaiveDate::MAX, ends: NaiveDate::MAX };
        let bounds = term.bounds(chrono_tz::UTC, 0);
        assert!(bounds.end_ms >= bounds.start_ms);
        let weekly = QuotaPeriod::Weekly { weekday: 6, minute: 23 * 60 + 59 };
        let bounds = weekly.bounds(chrono_tz::UTC, i64::MAX / 4);
        assert!(bounds.end_ms >= bounds.start_ms);
    }
}
