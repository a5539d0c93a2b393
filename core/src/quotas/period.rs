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
        LocalResult::None => instant(tz, local + Duration::minutes(30)),
    }
}

impl QuotaPeriod {
    pub fn bounds(&self, tz: Tz, now_ms: i64) -> PeriodBounds {
        match *self {
            QuotaPeriod::Weekly { weekday, minute } => {
                let now = tz.timestamp_millis_opt(now_ms).single().map(|t| t.naive_local()).unwrap_or_default();
                let back = (7 + now.weekday().num_days_from_monday() as i64 - i64::from(weekday)) % 7;
                let day = now.date() - Duration::days(back);
                let mut start = day.and_hms_opt(0, 0, 0).unwrap_or_default() + Duration::minutes(i64::from(minute));
                if instant(tz, start) > now_ms {
                    start -= Duration::days(7);
                }
                PeriodBounds {
                    start_ms: instant(tz, start),
                    end_ms: instant(tz, start + Duration::days(7)),
                }
            }
            QuotaPeriod::Term { starts, ends } => PeriodBounds {
                start_ms: instant(tz, starts.and_hms_opt(0, 0, 0).unwrap_or_default()),
                end_ms: instant(tz, (ends + Duration::days(1)).and_hms_opt(0, 0, 0).unwrap_or_default()),
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

/// "YYYY-MM-DD".
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()
}
