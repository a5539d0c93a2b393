//! What a usage report covers: a period of whole UTC days and how its rows are grouped,
//! read from the report form's fields with a plain message for each mistake.

use chrono::{Datelike, NaiveDate, TimeZone, Utc};

use crate::CoreError;

const DAY_MS: i64 = 86_400_000;
/// The longest custom range; a longer one would mostly be a typo in a year.
pub const MAX_DAYS: i64 = 400;
/// "Term" is the last 16 weeks up to the end of today.
pub const TERM_DAYS: i64 = 112;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Course,
    User,
    Profile,
    Gpu,
    Image,
}

impl GroupBy {
    pub const ALL: [GroupBy; 5] = [GroupBy::Course, GroupBy::User, GroupBy::Profile, GroupBy::Gpu, GroupBy::Image];

    /// An empty field means the default, by course.
    pub fn parse(text: &str) -> Result<GroupBy, CoreError> {
        match text.trim() {
            "" | "course" => Ok(GroupBy::Course),
            "user" => Ok(GroupBy::User),
            "profile" => Ok(GroupBy::Profile),
            "gpu" => Ok(GroupBy::Gpu),
            "image" => Ok(GroupBy::Image),
            other => Err(CoreError::InvalidRequest(format!(
                "Unknown grouping “{}”: choose course, user, profile, gpu or image.",
                clip(other)
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Course => "course",
            GroupBy::User => "user",
            GroupBy::Profile => "profile",
            GroupBy::Gpu => "gpu",
            GroupBy::Image => "image",
        }
    }

    /// `By course`, `By GPU`, … for the table's title.
    pub fn title(self) -> &'static str {
        match self {
            GroupBy::Course => "By course",
            GroupBy::User => "By user",
            GroupBy::Profile => "By slice size",
            GroupBy::Gpu => "By GPU",
            GroupBy::Image => "By image",
        }
    }

    /// The column heading for the group.
    pub fn heading(self) -> &'static str {
        match self {
            GroupBy::Course => "Course",
            GroupBy::User => "User",
            GroupBy::Profile => "Slice size",
            GroupBy::Gpu => "GPU",
            GroupBy::Image => "Image",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportPeriod {
    Day,
    Week,
    Term,
    Custom,
}

impl ReportPeriod {
    pub fn parse(text: &str) -> Result<ReportPeriod, CoreError> {
        match text.trim() {
            "" | "week" => Ok(ReportPeriod::Week),
            "day" => Ok(ReportPeriod::Day),
            "term" => Ok(ReportPeriod::Term),
            "custom" => Ok(ReportPeriod::Custom),
            other => Err(CoreError::InvalidRequest(format!(
                "Unknown period “{}”: choose day, week, term or custom.",
                clip(other)
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ReportPeriod::Day => "day",
            ReportPeriod::Week => "week",
            ReportPeriod::Term => "term",
            ReportPeriod::Custom => "custom",
        }
    }
}

/// A report's period `[from_ms, to_ms)` in whole UTC days and its grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportQuery {
    pub period: ReportPeriod,
    pub from_ms: i64,
    pub to_ms: i64,
    pub group: GroupBy,
}

impl ReportQuery {
    /// From the form's fields. `from` and `to` (`YYYY-MM-DD`, both days included) count
    /// only for a custom period.
    pub fn parse(period: &str, from: &str, to: &str, group: &str, now_ms: i64) -> Result<ReportQuery, CoreError> {
        let period = ReportPeriod::parse(period)?;
        let group = GroupBy::parse(group)?;
        let today = day_start(now_ms);
        let (from_ms, to_ms) = match period {
            ReportPeriod::Day => (today, today + DAY_MS),
            ReportPeriod::Week => {
                let weekday = Utc.timestamp_millis_opt(now_ms).single().map_or(0, |t| t.weekday().num_days_from_monday());
                let monday = today - i64::from(weekday) * DAY_MS;
                (monday, monday + 7 * DAY_MS)
            }
            ReportPeriod::Term => (today + DAY_MS - TERM_DAYS * DAY_MS, today + DAY_MS),
            ReportPeriod::Custom => custom_range(from, to)?,
        };
        Ok(ReportQuery { period, from_ms, to_ms, group })
    }

    /// The first and the last day covered, `YYYY-MM-DD`, as the form shows them.
    pub fn dates(&self) -> (String, String) {
        (date_text(self.from_ms), date_text(self.to_ms - DAY_MS))
    }
}

fn custom_range(from: &str, to: &str) -> Result<(i64, i64), CoreError> {
    if from.trim().is_empty() || to.trim().is_empty() {
        return Err(CoreError::InvalidRequest(
            "Choose both the first and the last day of the custom range.".into(),
        ));
    }
    let first = date(from)?;
    let last = date(to)?;
    if last < first {
        return Err(CoreError::InvalidRequest(format!(
            "The range ends ({last}) before it begins ({first}): choose a last day on or after the first."
        )));
    }
    let days = (last - first).num_days() + 1;
    if days > MAX_DAYS {
        return Err(CoreError::InvalidRequest(format!(
            "A report covers at most {MAX_DAYS} days; this range has {days}. Choose a shorter one."
        )));
    }
    let start = midnight_ms(first);
    Ok((start, start + days * DAY_MS))
}

fn date(text: &str) -> Result<NaiveDate, CoreError> {
    crate::quotas::parse_date(text)
        .filter(|d| (2000..=2200).contains(&d.year()))
        .ok_or_else(|| {
            CoreError::InvalidRequest(format!(
                "“{}” is not a date: write it as YYYY-MM-DD, e.g. 2026-09-01.",
                clip(text.trim())
            ))
        })
}

fn midnight_ms(day: NaiveDate) -> i64 {
    day.and_hms_opt(0, 0, 0).map_or(0, |t| t.and_utc().timestamp_millis())
}

fn day_start(ms: i64) -> i64 {
    ms.div_euclid(DAY_MS) * DAY_MS
}

fn date_text(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

/// Echoing what someone typed, but never a page of it.
fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        out.push('…');
    }
    out
}
