//! What a booking is: as the pages and the queue read it, as an instructor asks for it,
//! and as the form types it.

use slicehub_mig::Placement;

use crate::store::{BookingRow, WEEK_MS};
use crate::CoreError;
use crate::CourseId;

/// A booking as the pages and the queue read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Booking {
    pub row: BookingRow,
    /// (GPU UUID, memory-slice mask) of each slice kept.
    pub slots: Vec<(String, u8)>,
    /// (GPU UUID, instance placement) of each slice kept, in the order of `slots`.
    pub placements: Vec<(String, Placement)>,
}

impl Booking {
    /// Every window: (start, end) in epoch milliseconds.
    pub fn windows(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        (0..self.row.weeks.max(1)).map(|k| (self.row.starts_at + k * WEEK_MS, self.row.ends_at + k * WEEK_MS))
    }

    pub(super) fn overlaps(&self, from: i64, until: i64) -> bool {
        self.windows().any(|(s, e)| s < until && from < e)
    }
}

/// What an instructor asks to book.
#[derive(Debug, Clone)]
pub struct BookingRequest {
    pub course_id: CourseId,
    pub profile: String,
    pub slices: u32,
    pub starts_at_ms: i64,
    pub ends_at_ms: i64,
    /// 1: once; up to 26 weekly windows.
    pub weeks: u32,
    pub by: String,
    /// An admin's override: book even where sessions running or promised then are in the
    /// way (they are never stopped; the course may then get fewer slices at first).
    pub override_running: bool,
}

/// A booking as typed in the form: date and times in the course's time zone.
#[derive(Debug, Clone, Default)]
pub struct BookingForm {
    pub profile: String,
    pub slices: String,
    /// YYYY-MM-DD
    pub date: String,
    /// HH:MM
    pub start: String,
    /// HH:MM, the same day
    pub end: String,
    pub weeks: String,
}

impl BookingForm {
    /// The request it asks for, or the first thing wrong with it in plain words.
    pub fn parse(&self, course_id: CourseId, time_zone: &str, by: &str, override_running: bool) -> Result<BookingRequest, CoreError> {
        use crate::quotas::{instant, parse_clock, parse_date, zone_or_utc};
        let bad = |text: &str| CoreError::InvalidRequest(text.to_string());
        crate::auth::validate::check_text("the profile", self.profile.trim(), super::model::MAX_PROFILE_CHARS, crate::auth::validate::Lines::One)
            .map_err(CoreError::InvalidRequest)?;
        let slices: u32 = self.slices.trim().parse().map_err(|_| bad("How many slices: a whole number from 1 to 64."))?;
        let weeks: u32 = match self.weeks.trim() {
            "" => 1,
            text => text.parse().map_err(|_| bad("Weeks: a whole number from 1 (once) to 26."))?,
        };
        let date = parse_date(&self.date).ok_or_else(|| bad("The date must look like 2026-12-01 (a year from 2000 to 2200)."))?;
        let start = parse_clock(&self.start).ok_or_else(|| bad("The start must be a time such as 14:00."))?;
        let end = parse_clock(&self.end).ok_or_else(|| bad("The end must be a time such as 16:00."))?;
        let zone = zone_or_utc(time_zone);
        let at = |minute: u16| {
            let time = chrono::NaiveTime::from_hms_opt(u32::from(minute / 60), u32::from(minute % 60), 0).unwrap_or_default();
            instant(zone, date.and_time(time))
        };
        Ok(BookingRequest {
            course_id,
            profile: self.profile.trim().to_string(),
            slices,
            starts_at_ms: at(start),
            ends_at_ms: at(end),
            weeks,
            by: by.to_string(),
            override_running,
        })
    }
}
