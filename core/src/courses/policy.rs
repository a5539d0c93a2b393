//! What a course lets its students run: images, MIG profiles, session length and count,
//! the largest slice, outbound internet, and a slice-hour quota. The policy page and the
//! CLI both fill a [`PolicyForm`] and store what [`PolicyForm::parse`] accepts.

use serde::{Deserialize, Serialize};

pub use slicehub_types::PolicyForm;

use crate::sessions::IdlePolicy;

use crate::config::Config;
use crate::quotas::{compute_slices, parse_clock, parse_date, time_zone, QuotaPeriod, WEEKDAYS};
use crate::store::{PolicyRow, Store};
use crate::CoreError;
use crate::CourseId;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoursePolicy {
    /// At least one image.
    pub images: Vec<String>,
    /// Empty: every profile the GPUs offer up to `max_slices`.
    pub profiles: Vec<String>,
    pub max_minutes: i64,
    /// Containers reach the internet (for `pip install`); off: only the portal reaches them.
    pub internet: bool,
    /// Sessions (queued or running) one student may have in the course at once.
    pub max_sessions: i64,
    /// The largest slice one student may claim, in compute slices.
    pub max_slices: i64,
    /// IANA name; quota periods reset in it.
    pub time_zone: String,
    pub quota: Option<Quota>,
    /// When idle sessions are warned and stopped.
    pub idle: IdlePolicy,
}

/// A slice-hour budget per student and period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quota {
    pub slice_minutes: i64,
    pub period: QuotaPeriod,
    /// Time in the course's booked lab windows is not charged.
    pub booked_time_free: bool,
}

/// One thing wrong with one field of a policy, in words for the person who typed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldProblem {
    pub field: String,
    pub message: String,
}

fn problem(field: &str, message: impl Into<String>) -> FieldProblem {
    FieldProblem { field: field.to_string(), message: message.into() }
}

impl CoursePolicy {
    pub fn allows_profile(&self, profile: &str) -> bool {
        (self.profiles.is_empty() || self.profiles.iter().any(|p| p == profile))
            && compute_slices(profile) <= self.max_slices
    }

    pub fn allows_image(&self, image: &str) -> bool {
        self.images.iter().any(|i| i == image)
    }

    /// The configured defaults: what a course without a stored policy gets.
    pub fn defaults(config: &Config) -> CoursePolicy {
        CoursePolicy {
            images: vec![config.sessions.default_image.clone()],
            profiles: Vec::new(),
            max_minutes: i64::from(config.sessions.max_minutes),
            internet: true,
            max_sessions: i64::from(config.sessions.max_per_user),
            max_slices: i64::from(config.sessions.max_compute_slices),
            time_zone: "UTC".into(),
            quota: None,
            idle: IdlePolicy::default(),
        }
    }

    /// Everything wrong with the policy; `known_profiles` are those the GPUs offer.
    pub fn problems(&self, known_profiles: &[String]) -> Vec<FieldProblem> {
        let mut out = Vec::new();
        if self.images.is_empty() {
            out.push(problem("images", "Allow at least one image."));
        }
        for image in &self.images {
            let ok = image.len() <= 255
                && image.chars().all(|c| c.is_ascii_alphanumeric() || "._-/:@".contains(c));
            if !ok {
                out.push(problem("images", format!("{image:?} is not an image reference such as repo/name:tag.")));
            }
        }
        if !(1..=7).contains(&self.max_slices) {
            out.push(problem("max_slices", "The largest slice is 1 to 7 compute slices."));
        }
        for profile in &self.profiles {
            if !known_profiles.contains(profile) {
                out.push(problem(
                    "profiles",
                    format!("No GPU here offers {profile:?}; there are {}.", known_profiles.join(", ")),
                ));
            } else if compute_slices(profile) > self.max_slices {
                out.push(problem(
                    "profiles",
                    format!("{profile} is larger than the cap of {} compute slices; raise the cap or leave it out.", self.max_slices),
                ));
            }
        }
        if !(1..=10_080).contains(&self.max_minutes) {
            out.push(problem("max_minutes", format!("A session length of {} minutes is outside 1 to 10080 (a week).", self.max_minutes)));
        }
        if !(1..=64).contains(&self.max_sessions) {
            out.push(problem("max_sessions", format!("{} sessions at once is outside 1 to 64.", self.max_sessions)));
        }
        if time_zone(&self.time_zone).is_none() {
            out.push(problem("time_zone", format!("{:?} is not a time zone; use a name such as Europe/Berlin or UTC.", self.time_zone)));
        }
        out.extend(idle_problems(&self.idle));
        if let Some(quota) = &self.quota {
            if !(1..=600_000).contains(&quota.slice_minutes) {
                out.push(problem("quota_hours", "A budget is more than 0 and at most 10000 slice-hours."));
            }
            match &quota.period {
                QuotaPeriod::Weekly { weekday, minute } => {
                    if *weekday > 6 || *minute >= 1440 {
                        out.push(problem("reset", "Pick a weekday and a time of day for the weekly reset."));
                    }
                }
                QuotaPeriod::Term { starts, ends } => {
                    if ends < starts {
                        out.push(problem("term", "The term ends before it starts."));
                    } else if (*ends - *starts).num_days() > 400 {
                        out.push(problem("term", "A term is at most 400 days; use a weekly budget for longer courses."));
                    }
                }
            }
        }
        out
    }

    /// A stored policy; limits it leaves unset come from `defaults`.
    fn from_row(row: PolicyRow, defaults: &CoursePolicy) -> CoursePolicy {
        let quota = row.quota_slice_minutes.map(|slice_minutes| Quota {
            slice_minutes,
            booked_time_free: row.booked_time_free,
            period: match (row.quota_period.as_str(), row.term_starts.as_deref().and_then(parse_date), row.term_ends.as_deref().and_then(parse_date)) {
                ("term", Some(starts), Some(ends)) => QuotaPeriod::Term { starts, ends },
                _ => QuotaPeriod::Weekly {
                    weekday: row.reset_weekday.clamp(0, 6) as u8,
                    minute: row.reset_minute.clamp(0, 1439) as u16,
                },
            },
        });
        CoursePolicy {
            images: split_list(&row.allowed_images),
            profiles: split_list(&row.allowed_profiles),
            max_minutes: row.max_session_minutes,
            internet: row.internet,
            max_sessions: row.max_sessions.unwrap_or(defaults.max_sessions),
            max_slices: row.max_slices.unwrap_or(defaults.max_slices),
            time_zone: row.time_zone,
            quota,
            idle: row.idle_policy.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default(),
        }
    }

    fn to_row(&self) -> PolicyRow {
        let (period, weekday, minute, starts, ends) = match self.quota.as_ref().map(|q| &q.period) {
            Some(QuotaPeriod::Term { starts, ends }) => ("term", 0, 0, Some(starts.to_string()), Some(ends.to_string())),
            Some(QuotaPeriod::Weekly { weekday, minute }) => ("week", i64::from(*weekday), i64::from(*minute), None, None),
            None => ("week", 0, 0, None, None),
        };
        PolicyRow {
            allowed_images: self.images.join(","),
            allowed_profiles: self.profiles.join(","),
            max_session_minutes: self.max_minutes,
            internet: self.internet,
            max_sessions: Some(self.max_sessions),
            max_slices: Some(self.max_slices),
            quota_slice_minutes: self.quota.as_ref().map(|q| q.slice_minutes),
            quota_period: period.into(),
            reset_weekday: weekday,
            reset_minute: minute,
            term_starts: starts,
            term_ends: ends,
            time_zone: self.time_zone.clone(),
            booked_time_free: self.quota.as_ref().is_some_and(|q| q.booked_time_free),
            idle_policy: serde_json::to_string(&self.idle).ok(),
        }
    }
}


fn whole(field: &str, text: &str, what: &str, problems: &mut Vec<FieldProblem>) -> i64 {
    match text.trim().parse::<i64>() {
        Ok(n) => n,
        Err(_) => {
            problems.push(problem(field, format!("{what} is a whole number; {:?} is not.", text.trim())));
            0
        }
    }
}

/// What core reads from a policy form (the form itself is shared with the browser).
pub trait PolicyFormRules: Sized {
    /// The form showing `policy`.
    fn from_policy(policy: &CoursePolicy) -> Self;
    /// The policy the form describes, or every problem with it (each with its field).
    fn parse(&self, known_profiles: &[String]) -> Result<CoursePolicy, Vec<FieldProblem>>;
}

impl PolicyFormRules for PolicyForm {
    fn from_policy(policy: &CoursePolicy) -> PolicyForm {
        let (period, day, time, starts, ends) = match policy.quota.as_ref().map(|q| &q.period) {
            Some(QuotaPeriod::Term { starts, ends }) => ("term", 0, 0, starts.to_string(), ends.to_string()),
            Some(QuotaPeriod::Weekly { weekday, minute }) => ("week", *weekday, *minute, String::new(), String::new()),
            None => ("week", 0, 0, String::new(), String::new()),
        };
        PolicyForm {
            images: policy.images.join(", "),
            profiles: policy.profiles.join(", "),
            max_minutes: policy.max_minutes.to_string(),
            max_sessions: policy.max_sessions.to_string(),
            max_slices: policy.max_slices.to_string(),
            internet: if policy.internet { "on" } else { "off" }.into(),
            quota_hours: policy
                .quota
                .as_ref()
                .map(|q| crate::quotas::hours(q.slice_minutes * 60_000))
                .unwrap_or_default(),
            period: period.into(),
            reset_day: day.to_string(),
            reset_time: format!("{:02}:{:02}", time / 60, time % 60),
            term_starts: starts,
            term_ends: ends,
            time_zone: policy.time_zone.clone(),
            booked_time: if policy.quota.as_ref().is_some_and(|q| q.booked_time_free) { "free" } else { "counts" }.into(),
            idle_minutes: minutes_or_off(policy.idle.idle_minutes),
            idle_waiting_minutes: minutes_or_off(policy.idle.waiting_minutes),
            idle_gpu_percent: policy.idle.gpu_busy_percent.to_string(),
            idle_warning_minutes: policy.idle.warning_minutes.to_string(),
            job_idle_minutes: minutes_or_off(policy.idle.job_idle_minutes),
            job_idle: if policy.idle.job_idle_stop { "stop" } else { "report" }.into(),
        }
    }

    fn parse(&self, known_profiles: &[String]) -> Result<CoursePolicy, Vec<FieldProblem>> {
        let problems = text_problems(self);
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut problems = Vec::new();
        let booked_time_free = match self.booked_time.trim() {
            "free" => true,
            "" | "counts" => false,
            _ => {
                problems.push(problem("booked_time", "Booked lab time either counts or is free."));
                false
            }
        };
        let internet = match self.internet.trim().to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" => true,
            "off" | "false" | "no" => false,
            _ => {
                problems.push(problem("internet", "Outbound internet is on or off."));
                true
            }
        };
        let quota_text = self.quota_hours.trim().replace(',', ".");
        let quota = if quota_text.is_empty() || quota_text == "none" {
            None
        } else {
            match quota_text.parse::<f64>() {
                Ok(h) if h.is_finite() && h == 0.0 => None,
                Ok(h) if h.is_finite() && h > 0.0 && h <= 10_000.0 => Some((h * 60.0).round() as i64),
                _ => {
                    problems.push(problem("quota_hours", format!("The budget is a number of slice-hours from 0.1 to 10000 (empty for none); {quota_text:?} is not.")));
                    None
                }
            }
        };
        let quota = quota.and_then(|slice_minutes| {
            let period = match self.period.trim() {
                "week" => {
                    let day = self.reset_day.trim();
                    let weekday = day.parse::<u8>().ok().filter(|d| *d < 7).or_else(|| {
                        WEEKDAYS.iter().position(|w| w.eq_ignore_ascii_case(day)).map(|i| i as u8)
                    });
                    let minute = parse_clock(&self.reset_time);
                    match (weekday, minute) {
                        (Some(weekday), Some(minute)) => Some(QuotaPeriod::Weekly { weekday, minute }),
                        _ => {
                            problems.push(problem("reset", "A weekly budget needs a reset day and a time such as 00:00."));
                            None
                        }
                    }
                }
                "term" => match (parse_date(&self.term_starts), parse_date(&self.term_ends)) {
                    (Some(starts), Some(ends)) => Some(QuotaPeriod::Term { starts, ends }),
                    _ => {
                        problems.push(problem("term", "A term budget needs the term's first and last day (YYYY-MM-DD, in the years 2000 to 2200)."));
                        None
                    }
                },
                _ => {
                    problems.push(problem("period", "The budget is per week or per term."));
                    None
                }
            }?;
            Some(Quota { slice_minutes: slice_minutes.max(1), period, booked_time_free })
        });
        let policy = CoursePolicy {
            images: split_list(&self.images),
            profiles: if self.profiles.trim() == "all" { Vec::new() } else { split_list(&self.profiles) },
            max_minutes: whole("max_minutes", &self.max_minutes, "The session length", &mut problems),
            internet,
            max_sessions: whole("max_sessions", &self.max_sessions, "Sessions at once", &mut problems),
            max_slices: whole("max_slices", &self.max_slices, "The largest slice", &mut problems),
            time_zone: self.time_zone.trim().to_string(),
            quota,
            idle: idle_of(self, &mut problems),
        };
        for p in policy.problems(known_profiles) {
            if !problems.iter().any(|q| q.field == p.field) {
                problems.push(p);
            }
        }
        if problems.is_empty() {
            Ok(policy)
        } else {
            Err(problems)
        }
    }
}

fn minutes_or_off(minutes: Option<i64>) -> String {
    minutes.map(|m| m.to_string()).unwrap_or_else(|| "off".into())
}

/// Fields too long, or holding a control character, each once: nothing else is read
/// from such a form (and no message repeats what was typed).
fn text_problems(form: &PolicyForm) -> Vec<FieldProblem> {
    use crate::auth::validate::{check_text, Lines};
    let fields: [(&str, &str, &str, usize); 20] = [
        ("images", "the images", form.images.as_str(), 4096),
        ("profiles", "the profiles", form.profiles.as_str(), 1024),
        ("max_minutes", "the session length", form.max_minutes.as_str(), 32),
        ("max_sessions", "sessions at once", form.max_sessions.as_str(), 32),
        ("max_slices", "the largest slice", form.max_slices.as_str(), 32),
        ("internet", "outbound internet", form.internet.as_str(), 32),
        ("quota_hours", "the budget", form.quota_hours.as_str(), 32),
        ("period", "the period", form.period.as_str(), 32),
        ("reset", "the reset day", form.reset_day.as_str(), 32),
        ("reset", "the reset time", form.reset_time.as_str(), 32),
        ("term", "the term's first day", form.term_starts.as_str(), 32),
        ("term", "the term's last day", form.term_ends.as_str(), 32),
        ("time_zone", "the time zone", form.time_zone.as_str(), 64),
        ("booked_time", "booked lab time", form.booked_time.as_str(), 32),
        ("idle_minutes", "the idle limit", form.idle_minutes.as_str(), 32),
        ("idle_waiting_minutes", "the idle limit while students wait", form.idle_waiting_minutes.as_str(), 32),
        ("idle_gpu_percent", "the GPU threshold", form.idle_gpu_percent.as_str(), 32),
        ("idle_warning_minutes", "the warning", form.idle_warning_minutes.as_str(), 32),
        ("job_idle_minutes", "the job limit", form.job_idle_minutes.as_str(), 32),
        ("job_idle", "the job rule", form.job_idle.as_str(), 32),
    ];
    let mut out: Vec<FieldProblem> = Vec::new();
    for (field, what, text, max_chars) in fields {
        if let Err(message) = check_text(what, text.trim(), max_chars, Lines::One) {
            if !out.iter().any(|p| p.field == field) {
                out.push(problem(field, message));
            }
        }
    }
    out
}

/// The idle fields; an empty one takes the default.
fn idle_of(form: &PolicyForm, problems: &mut Vec<FieldProblem>) -> IdlePolicy {
    let defaults = IdlePolicy::default();
    let mut optional = |field: &str, text: &str, default: Option<i64>, what: &str| match text.trim() {
        "" => default,
        t if t.eq_ignore_ascii_case("off") || t == "0" => None,
        t => Some(whole(field, t, what, problems)),
    };
    let idle_minutes = optional("idle_minutes", &form.idle_minutes, defaults.idle_minutes, "The idle limit");
    let waiting_minutes = optional("idle_waiting_minutes", &form.idle_waiting_minutes, defaults.waiting_minutes, "The idle limit while students wait");
    let job_idle_minutes = optional("job_idle_minutes", &form.job_idle_minutes, defaults.job_idle_minutes, "The job limit");
    let mut plain = |field: &str, text: &str, default: i64, what: &str| match text.trim() {
        "" => default,
        t => whole(field, t, what, problems),
    };
    let gpu_busy_percent = plain("idle_gpu_percent", &form.idle_gpu_percent, i64::from(defaults.gpu_busy_percent), "The GPU threshold");
    let warning_minutes = plain("idle_warning_minutes", &form.idle_warning_minutes, defaults.warning_minutes, "The warning");
    let job_idle_stop = match form.job_idle.trim() {
        "stop" => true,
        "" | "report" => false,
        _ => {
            problems.push(problem("job_idle", "A job with no GPU activity is either reported or stopped."));
            false
        }
    };
    IdlePolicy {
        idle_minutes,
        waiting_minutes,
        gpu_busy_percent: gpu_busy_percent.clamp(0, 1_000) as u32,
        warning_minutes,
        job_idle_minutes,
        job_idle_stop,
    }
}

fn idle_problems(idle: &IdlePolicy) -> Vec<FieldProblem> {
    let mut out = Vec::new();
    let day = 1..=1_440;
    if idle.idle_minutes.is_some_and(|m| !day.contains(&m)) {
        out.push(problem("idle_minutes", "The idle limit is 1 to 1440 minutes, or off."));
    }
    if idle.waiting_minutes.is_some_and(|m| !day.contains(&m)) {
        out.push(problem("idle_waiting_minutes", "The limit while students wait is 1 to 1440 minutes, or off."));
    }
    if idle.job_idle_minutes.is_some_and(|m| !day.contains(&m)) {
        out.push(problem("job_idle_minutes", "The job limit is 1 to 1440 minutes, or off."));
    }
    if !(1..=100).contains(&idle.gpu_busy_percent) {
        out.push(problem("idle_gpu_percent", "The GPU threshold is 1 to 100 percent busy."));
    }
    let shortest = [idle.idle_minutes, idle.waiting_minutes].into_iter().flatten().filter(|m| day.contains(m)).min().unwrap_or(1_440);
    if !(0..=60).contains(&idle.warning_minutes) {
        out.push(problem("idle_warning_minutes", "The warning comes 0 to 60 minutes before the stop."));
    } else if idle.warning_minutes > shortest {
        out.push(problem("idle_warning_minutes", format!("The warning cannot come earlier than the idle limit ({shortest} minutes).")));
    }
    out
}

/// `a, b,,c` → `[a, b, c]`: the form lists are stored and typed in.
pub fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The course's policy, or the configured defaults when it has none.
pub async fn policy_of(
    store: &Store,
    config: &Config,
    course_id: CourseId,
) -> Result<CoursePolicy, CoreError> {
    let defaults = CoursePolicy::defaults(config);
    let mut policy = match store.course_policy(course_id).await? {
        Some(row) => CoursePolicy::from_row(row, &defaults),
        None => defaults.clone(),
    };
    // An image the administrator took off the list (or one stored before there was a
    // list) is no longer the course's to run.
    let offered = config.offered_images();
    policy.images.retain(|image| offered.contains(image));
    if policy.images.is_empty() {
        policy.images = defaults.images;
    }
    // Likewise a ceiling lowered after the course chose more.
    policy.max_minutes = policy.max_minutes.min(i64::from(config.limits.session_minutes));
    policy.max_sessions = policy.max_sessions.min(i64::from(config.limits.sessions_per_student));
    policy.max_slices = policy.max_slices.min(i64::from(config.limits.compute_slices));
    Ok(policy)
}

/// What the administrator's list and ceilings refuse in `policy`, each with its field; an
/// instructor chooses only within them.
pub fn admin_limit_problems(config: &Config, policy: &CoursePolicy) -> Vec<FieldProblem> {
    let mut out = Vec::new();
    let offered = config.offered_images();
    let missing: Vec<&str> = policy
        .images
        .iter()
        .filter(|i| !offered.contains(i))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        out.push(problem(
            "images",
            format!(
                "not among this portal's images: {} (an administrator can add it with sessions.images; nothing was saved)",
                missing.join(", ")
            ),
        ));
    }
    let ceiling = |field: &str, chosen: i64, limit: u32, what: &str| {
        (chosen > i64::from(limit)).then(|| {
            problem(field, format!("{what} is at most {limit} on this portal (the administrator's ceiling); {chosen} is more."))
        })
    };
    out.extend(ceiling("max_minutes", policy.max_minutes, config.limits.session_minutes, "A session's length in minutes"));
    out.extend(ceiling("max_sessions", policy.max_sessions, config.limits.sessions_per_student, "Sessions at once per student"));
    out.extend(ceiling("max_slices", policy.max_slices, config.limits.compute_slices, "The largest slice in compute slices"));
    out
}

/// Checks and stores a policy, within the administrator's list and ceilings;
/// `known_profiles` are the profile names the GPUs offer.
/// The change is audited by `actor`, with what was stored.
pub async fn set_policy(
    store: &Store,
    config: &Config,
    course_id: CourseId,
    policy: &CoursePolicy,
    known_profiles: &[String],
    actor: &str,
) -> Result<(), CoreError> {
    let mut problems = policy.problems(known_profiles);
    problems.extend(admin_limit_problems(config, policy));
    if !problems.is_empty() {
        let words: Vec<_> = problems.into_iter().map(|p| format!("{}: {}", p.field, p.message)).collect();
        return Err(CoreError::InvalidRequest(words.join(" ")));
    }
    store.set_course_policy(course_id, &policy.to_row()).await?;
    let code = store.course_by_id(course_id).await?.map(|c| c.code).unwrap_or_default();
    store
        .audit(actor, "course.policy", &code, &serde_json::to_string(policy).unwrap_or_default())
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(idle: &str, waiting: &str, warning: &str, gpu: &str, job: &str) -> PolicyForm {
        PolicyForm {
            images: "slicehub/jupyterlab:offline".into(),
            max_minutes: "60".into(),
            max_sessions: "1".into(),
            max_slices: "7".into(),
            internet: "on".into(),
            time_zone: "UTC".into(),
            idle_minutes: idle.into(),
            idle_waiting_minutes: waiting.into(),
            idle_warning_minutes: warning.into(),
            idle_gpu_percent: gpu.into(),
            job_idle: job.into(),
            ..PolicyForm::default()
        }
    }

    fn fields(f: PolicyForm) -> Vec<String> {
        f.parse(&[]).unwrap_err().into_iter().map(|p| p.field).collect()
    }

    #[test]
    fn idle_fields_default_when_empty_and_refuse_nonsense_each_by_name() {
        let empty = form("", "", "", "", "").parse(&[]).unwrap();
        assert_eq!(empty.idle, IdlePolicy::default());
        let off = form("off", "0", "0", "5", "stop").parse(&[]).unwrap();
        assert_eq!((off.idle.idle_minutes, off.idle.waiting_minutes, off.idle.job_idle_stop), (None, None, true));
        assert_eq!(fields(form("-5", "", "", "", "")), ["idle_minutes"]);
        assert_eq!(fields(form("soon", "", "", "", "")), ["idle_minutes"]);
        assert_eq!(fields(form("60", "99999", "", "", "")), ["idle_waiting_minutes"]);
        assert_eq!(fields(form("2", "off", "5", "", "")), ["idle_warning_minutes"], "a warning longer than the limit");
        assert_eq!(fields(form("", "", "", "0", "")), ["idle_gpu_percent"]);
        assert_eq!(fields(form("", "", "", "", "maybe")), ["job_idle"]);
        let round_trip = PolicyForm::from_policy(&off);
        assert_eq!((round_trip.idle_minutes.as_str(), round_trip.job_idle.as_str()), ("off", "stop"));
    }
}
