//! A course policy as typed: the form the policy page shows and sends back, and what the
//! CLI edits. `core` reads it (`courses::PolicyFormRules`).

use serde::{Deserialize, Serialize};

/// A policy as typed into the policy page or given to the CLI: every field text.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PolicyForm {
    pub images: String,
    /// Empty: every size up to the cap.
    pub profiles: String,
    pub max_minutes: String,
    pub max_sessions: String,
    pub max_slices: String,
    /// `on` or `off`.
    pub internet: String,
    /// Empty or 0: no quota.
    pub quota_hours: String,
    /// `week` or `term`.
    pub period: String,
    /// 0 (Monday) to 6, or the weekday's name.
    pub reset_day: String,
    /// HH:MM
    pub reset_time: String,
    pub term_starts: String,
    pub term_ends: String,
    pub time_zone: String,
    /// `free`: time in the course's booked lab windows is not charged; empty or `counts`.
    pub booked_time: String,
    /// Minutes idle before a notebook stops; `off`; empty: the default.
    pub idle_minutes: String,
    /// The shorter limit while students wait for the size; `off`: the same.
    pub idle_waiting_minutes: String,
    /// Percent busy of the slice that counts as activity.
    pub idle_gpu_percent: String,
    /// Minutes of warning before an idle stop.
    pub idle_warning_minutes: String,
    /// Minutes a job may show no GPU activity before it is reported; `off`.
    pub job_idle_minutes: String,
    /// `report` (default) or `stop`.
    pub job_idle: String,
}
