//! When an idle session is warned and when it stops: a pure rule over the course's idle
//! policy, the last moment the session was active, the warning it already had, and
//! whether students are waiting for its profile. The culler and the benchmark share it.
//!
//! A student always gets the full warning lead: a limit that shortens (students start
//! waiting) moves the stop to no earlier than the lead from now, and a stop once
//! announced never moves earlier. Activity after the warning clears it.

use serde::{Deserialize, Serialize};

/// A course's idle policy (the course policy page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdlePolicy {
    /// Minutes without activity before a notebook stops; `None`: never.
    pub idle_minutes: Option<i64>,
    /// The shorter limit while students wait for the session's profile; `None`: the same.
    pub waiting_minutes: Option<i64>,
    /// The slice busy at or above this percent counts as activity.
    pub gpu_busy_percent: u32,
    /// How long before the stop the student is warned.
    pub warning_minutes: i64,
    /// Minutes a training job may show no GPU activity before it is reported; `None`: never.
    pub job_idle_minutes: Option<i64>,
    /// Stop such a job (after the same warning) instead of only reporting it.
    pub job_idle_stop: bool,
}

impl Default for IdlePolicy {
    fn default() -> Self {
        IdlePolicy {
            idle_minutes: Some(60),
            waiting_minutes: Some(20),
            gpu_busy_percent: 10,
            warning_minutes: 10,
            job_idle_minutes: None,
            job_idle_stop: false,
        }
    }
}

/// A warning already given: when the session stops, and whether that came early because
/// students wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleWarning {
    pub stops_at_ms: i64,
    pub early: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleVerdict {
    /// Active enough: no warning (any earlier one is cleared).
    Active,
    Warn(IdleWarning),
    Stop(IdleWarning),
}

/// What kind of session is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    Notebook,
    /// A job only ever stops if the course says so; otherwise it is reported.
    Job,
}

impl IdlePolicy {
    /// The idle limit in force and whether it is the shortened one.
    pub fn limit_ms(&self, kind: Judged, someone_waits: bool) -> Option<(i64, bool)> {
        match kind {
            Judged::Job => self.job_idle_minutes.map(|m| (m * 60_000, false)),
            Judged::Notebook => {
                let normal = self.idle_minutes? * 60_000;
                match self.waiting_minutes.map(|m| m * 60_000) {
                    Some(short) if someone_waits && short < normal => Some((short, true)),
                    _ => Some((normal, false)),
                }
            }
        }
    }

    /// The verdict at `now_ms` for a session last active at `last_active_ms`.
    pub fn judge(
        &self,
        kind: Judged,
        last_active_ms: i64,
        warned: Option<IdleWarning>,
        someone_waits: bool,
        now_ms: i64,
    ) -> IdleVerdict {
        let Some((limit, early)) = self.limit_ms(kind, someone_waits) else {
            return IdleVerdict::Active;
        };
        let lead = self.warning_minutes.max(0) * 60_000;
        let natural = last_active_ms + limit;
        let warning = match warned {
            Some(w) if natural <= w.stops_at_ms => w,
            Some(_) => IdleWarning { stops_at_ms: natural, early },
            None => IdleWarning { stops_at_ms: natural.max(now_ms + lead), early },
        };
        if now_ms < warning.stops_at_ms - lead {
            IdleVerdict::Active
        } else if warned.is_some() && now_ms >= warning.stops_at_ms && (kind == Judged::Notebook || self.job_idle_stop) {
            IdleVerdict::Stop(warning)
        } else {
            IdleVerdict::Warn(warning)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    fn step(p: &IdlePolicy, kind: Judged, last: i64, warned: &mut Option<IdleWarning>, waits: bool, now: i64) -> IdleVerdict {
        let v = p.judge(kind, last, *warned, waits, now);
        *warned = match v {
            IdleVerdict::Warn(w) | IdleVerdict::Stop(w) => Some(w),
            IdleVerdict::Active => None,
        };
        v
    }

    #[test]
    fn a_notebook_is_warned_ten_minutes_ahead_then_stopped() {
        let p = IdlePolicy::default();
        let mut w = None;
        assert_eq!(step(&p, Judged::Notebook, 0, &mut w, false, 49 * MIN), IdleVerdict::Active);
        let warning = IdleWarning { stops_at_ms: 60 * MIN, early: false };
        assert_eq!(step(&p, Judged::Notebook, 0, &mut w, false, 50 * MIN), IdleVerdict::Warn(warning));
        assert_eq!(step(&p, Judged::Notebook, 0, &mut w, false, 59 * MIN), IdleVerdict::Warn(warning));
        assert_eq!(step(&p, Judged::Notebook, 0, &mut w, false, 60 * MIN), IdleVerdict::Stop(warning));
    }

    #[test]
    fn activity_after_the_warning_clears_it() {
        let p = IdlePolicy::default();
        let mut w = None;
        step(&p, Judged::Notebook, 0, &mut w, false, 55 * MIN);
        assert!(w.is_some());
        assert_eq!(step(&p, Judged::Notebook, 56 * MIN, &mut w, false, 57 * MIN), IdleVerdict::Active);
        assert_eq!(w, None);
    }

    #[test]
    fn a_queue_shortens_the_limit_but_never_the_warning_lead() {
        let p = IdlePolicy::default();
        let mut w = None;
        // Idle 30 minutes when a student starts waiting: the 20-minute limit has passed,
        // so the stop comes a full warning lead from now, marked early.
        let v = step(&p, Judged::Notebook, 0, &mut w, true, 30 * MIN);
        assert_eq!(v, IdleVerdict::Warn(IdleWarning { stops_at_ms: 40 * MIN, early: true }));
        // The queue empties: the normal limit applies again and the warning moves later.
        assert_eq!(step(&p, Judged::Notebook, 0, &mut w, false, 35 * MIN), IdleVerdict::Active);
        // It comes back: a stop once announced never moves earlier than announced.
        let v = step(&p, Judged::Notebook, 0, &mut w, true, 36 * MIN);
        assert_eq!(v, IdleVerdict::Warn(IdleWarning { stops_at_ms: 46 * MIN, early: true }));
        assert_eq!(step(&p, Judged::Notebook, 0, &mut w, true, 46 * MIN), IdleVerdict::Stop(IdleWarning { stops_at_ms: 46 * MIN, early: true }));
    }

    #[test]
    fn nothing_stops_without_a_warning_first() {
        let p = IdlePolicy::default();
        // A portal that was down for hours: the first look only warns.
        assert!(matches!(p.judge(Judged::Notebook, 0, None, false, 600 * MIN), IdleVerdict::Warn(_)));
    }

    #[test]
    fn jobs_are_reported_and_stopped_only_when_the_course_says_so() {
        let mut p = IdlePolicy { job_idle_minutes: Some(30), ..IdlePolicy::default() };
        let mut w = None;
        step(&p, Judged::Job, 0, &mut w, false, 25 * MIN);
        assert!(matches!(step(&p, Judged::Job, 0, &mut w, false, 90 * MIN), IdleVerdict::Warn(_)), "reported, not stopped");
        // Once the course stops such jobs, the report is no warning (the culler drops it):
        // the job gets the whole lead before it stops.
        p.job_idle_stop = true;
        let mut w = None;
        let v = step(&p, Judged::Job, 0, &mut w, false, 91 * MIN);
        assert_eq!(v, IdleVerdict::Warn(IdleWarning { stops_at_ms: 101 * MIN, early: false }));
        assert!(matches!(step(&p, Judged::Job, 0, &mut w, false, 101 * MIN), IdleVerdict::Stop(_)));
        let off = IdlePolicy { idle_minutes: None, ..IdlePolicy::default() };
        assert_eq!(off.judge(Judged::Notebook, 0, None, true, 600 * MIN), IdleVerdict::Active);
    }
}
