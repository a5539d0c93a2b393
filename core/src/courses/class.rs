//! What an instructor watches of a class: every live or waiting session of the course
//! (a waiting one with its place in its profile's queue) and each student's
//! compute-slice-hours in the current period.

use crate::config::Config;
use std::collections::HashMap;

use crate::quotas::{Budget, CourseUse, PeriodBounds};
use crate::sessions::{queue_position, GpuSession, SessionState};
use crate::courses::policy_of;
use crate::store::{Role, Store};
use crate::CoreError;
use crate::{CourseId, UserId};

/// A session of the course that is not over yet.
#[derive(Debug, Clone)]
pub struct ClassSession {
    pub session: GpuSession,
    /// 1 for the next claim of its profile to be placed (counted over every course, the
    /// order the queue is served in); `None` unless the session is queued.
    pub queue_position: Option<usize>,
    /// Once ready: when it will be stopped, the earlier of the time limit and the moment
    /// its student's budget runs out (what the student's own page says).
    pub ends_at_ms: Option<i64>,
}

/// One student's use of the course in the period.
#[derive(Debug, Clone)]
pub struct StudentUsage {
    pub user_id: UserId,
    pub username: String,
    pub display_name: String,
    /// Compute-slice-milliseconds used in the period up to now.
    pub used_ms: i64,
    /// The budget, when the course sets a quota.
    pub budget: Option<Budget>,
    /// Compute slices held right now.
    pub running_slices: i64,
}

#[derive(Debug, Clone)]
pub struct ClassView {
    pub sessions: Vec<ClassSession>,
    /// Sessions that failed before they were ready in the last day, newest first: what an
    /// instructor must see to fix a course (an image missing from the server, a bad size).
    pub failed_starts: Vec<GpuSession>,
    pub students: Vec<StudentUsage>,
    /// The quota's period, or the week (Monday 00:00 in the course's zone) without one.
    pub period: PeriodBounds,
    pub period_word: &'static str,
}

/// How far back the class page lists failed starts.
const FAILED_STARTS_SHOWN_MS: i64 = 24 * 3_600_000;

/// The course's live sessions and its students' use at `now_ms`.
pub async fn class_view(
    store: &Store,
    config: &Config,
    course_id: CourseId,
    now_ms: i64,
) -> Result<ClassView, CoreError> {
    let policy = policy_of(store, config, course_id).await?;
    let used = CourseUse::read(store, &policy, course_id, now_ms).await?;
    let mut students = Vec::new();
    for member in store.course_members(course_id).await? {
        if member.role != Role::Student {
            continue;
        }
        let user = member.user;
        let budget = used.budget(user.id);
        let (used_ms, running_slices) = match &budget {
            Some(b) => (b.used_ms, b.running_slices),
            None => used.usage(user.id),
        };
        students.push(StudentUsage {
            user_id: user.id,
            username: user.username,
            display_name: user.display_name,
            used_ms,
            budget,
            running_slices,
        });
    }

    let runs_out: HashMap<UserId, i64> = students
        .iter()
        .filter_map(|s| Some((s.user_id, s.budget.as_ref()?.runs_out_at_ms()?)))
        .collect();
    let queued = store.gpu_sessions_in(&[SessionState::Queued]).await?;
    let sessions = store
        .live_sessions_of_course(course_id)
        .await?
        .into_iter()
        .map(|session| ClassSession {
            queue_position: queue_position(&queued, &session),
            ends_at_ms: session.ready_at_ms.map(|_| match runs_out.get(&session.user_id) {
                Some(&out) => out.min(session.deadline_at_ms),
                None => session.deadline_at_ms,
            }),
            session,
        })
        .collect();
    let failed_starts = store.failed_starts_of_course(course_id, now_ms - FAILED_STARTS_SHOWN_MS, 20).await?;
    Ok(ClassView {
        sessions,
        failed_starts,
        students,
        period: used.bounds(),
        period_word: CourseUse::period_of(&policy).word(),
    })
}

/// The students' use as CSV, one row a student, the numbers the class page shows.
/// Codes, usernames and names are text (neutralised against formulas); the hours and
/// counts are numbers the portal wrote.
pub fn usage_csv(code: &str, view: &ClassView) -> String {
    use crate::clock::iso_utc;
    use crate::csv_export::{Cell, CsvWriter};
    use crate::quotas::hours;
    let mut out = CsvWriter::new();
    out.header(&[
        "course",
        "username",
        "name",
        "period_start_utc",
        "period_end_utc",
        "slice_hours_used",
        "slice_hours_budget",
        "slice_hours_left",
        "compute_slices_running",
    ]);
    let (start, end) = (iso_utc(view.period.start_ms), iso_utc(view.period.end_ms));
    for s in &view.students {
        let (budget, left) = match &s.budget {
            Some(b) => (hours(b.total_ms), hours(b.remaining_ms())),
            None => (String::new(), String::new()),
        };
        let (used, running) = (hours(s.used_ms), s.running_slices.to_string());
        out.row(&[
            Cell::Text(code),
            Cell::Text(&s.username),
            Cell::Text(&s.display_name),
            Cell::Text(&start),
            Cell::Text(&end),
            Cell::Number(&used),
            Cell::Number(&budget),
            Cell::Number(&left),
            Cell::Number(&running),
        ]);
    }
    out.finish()
}
