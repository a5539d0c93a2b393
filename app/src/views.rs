//! What the browser sees. Domain types stay in `slicehub-core`; server functions map
//! them to these. A session's state and kind are the words both sides share
//! (`slicehub-types`), never strings compared by spelling.

use serde::{Deserialize, Serialize};
pub use slicehub_types::{CourseId, PolicyForm, Role, SessionKind, SessionState, UserId};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ComponentView {
    pub name: String,
    pub ok: bool,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GpuView {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub memory: String,
    /// `MIG enabled`, `MIG off: used whole` or `no MIG: used whole`
    pub mig: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct InstanceStatus {
    /// `ok`, `degraded` or `down`
    pub status: String,
    /// Each check; only administrators get what it found, others `working` or not.
    pub components: Vec<ComponentView>,
    /// What anyone may know of the GPUs.
    pub capacity: GpuCapacity,
    /// Who holds each slice, with GPU and MIG device UUIDs: administrators only.
    pub board: Option<GpuBoard>,
    /// The caller may open the GPU board and the status page.
    pub viewer_is_admin: bool,
    /// e.g. `14:03:22 UTC`
    pub checked_at: String,
    pub checked_at_ms: i64,
    pub version: String,
}

/// The GPUs as counts: how many more sessions of each profile fit now, and how many wait.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GpuCapacity {
    pub simulated: bool,
    pub profiles: Vec<ProfileOption>,
}

/// Every GPU with the MIG instances placed on it, for the GPU board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GpuBoard {
    pub simulated: bool,
    pub backend: String,
    pub gpus: Vec<GpuLayoutView>,
    /// Every course's booked lab sessions still to come or running.
    pub bookings: Vec<BookingView>,
    /// The Slurm pool, when the portal has one.
    pub cluster: Option<SlurmPoolView>,
    pub refreshed_at: String,
    pub refreshed_at_ms: i64,
}

/// The Slurm cluster's nodes and their GPU GRES, read-only (the site's layout).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SlurmPoolView {
    /// The courses whose sessions run there, each with its partition.
    pub courses: String,
    /// Why the nodes could not be read, when they could not.
    pub problem: Option<String>,
    pub nodes: Vec<SlurmNodeView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SlurmNodeView {
    pub name: String,
    /// `idle`, `mixed`, `down · DRAIN`…
    pub state: String,
    pub available: bool,
    pub reason: String,
    pub partitions: String,
    pub gres: Vec<SlurmGresView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SlurmGresView {
    pub profile: String,
    pub used: u32,
    pub total: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GpuLayoutView {
    pub gpu: GpuView,
    /// `dynamic`, or `static: all-balanced`
    pub mode: String,
    pub instances: Vec<InstanceView>,
    /// e.g. `5 of 8 memory slices free`
    pub free: String,
    /// Profiles that could be placed now, e.g. `3g.40gb ×1`
    pub placeable: Vec<String>,
    /// Set when the GPU could not be read.
    pub error: Option<String>,
    /// Who drained it: no new session is placed on it while set.
    pub drained_by: Option<String>,
    /// What a session on it is guaranteed (memory cap, compute share, fault isolation).
    pub guarantees: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct InstanceView {
    pub profile: String,
    pub start: u8,
    pub size: u8,
    /// Who holds it; `None` when no session does.
    pub holder: Option<String>,
    pub mig_uuid: Option<String>,
    pub memory_used: Option<String>,
    /// `43% busy` at the sampler's last reading, while a session runs on it.
    pub busy: Option<String>,
}

/// The signed-in person as the pages see them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Me {
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
    pub must_change_password: bool,
    pub courses: Vec<CourseRef>,
}

impl Me {
    pub fn teaches_any(&self) -> bool {
        self.courses.iter().any(|c| c.role == Role::Instructor)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CourseRef {
    pub code: String,
    pub title: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserRow {
    pub id: UserId,
    pub username: String,
    pub display_name: String,
    pub email: String,
    pub is_admin: bool,
    pub disabled: bool,
    pub must_change_password: bool,
    /// How the account signs in: "Password" and each attached provider.
    pub sources: Vec<String>,
}

/// A password shown once, right after it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OneTimePassword {
    pub username: String,
    pub password: String,
}

/// A course the caller's account is invited to, and who invited it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct InvitationView {
    pub code: String,
    pub title: String,
    pub invited_by: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CourseSummary {
    pub code: String,
    pub title: String,
    /// The caller's role in it, if any.
    pub role: Option<Role>,
    pub students: usize,
    pub instructors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CourseDetail {
    pub code: String,
    pub title: String,
    pub can_manage_roster: bool,
    pub can_assign_instructors: bool,
    /// The caller sees members' usernames and emails (the course's instructors and
    /// admins); students see names and roles only.
    pub shows_contacts: bool,
    /// The caller may open the course's policy page (its instructors and admins).
    pub can_set_policy: bool,
    pub members: Vec<MemberRow>,
    /// The caller is one of the course's students: the page offers "Start a session".
    pub is_student: bool,
    /// Slice sizes the course allows among those the GPUs offer (its own list when the
    /// GPUs could not be read; empty: any size up to `max_slices`).
    pub profiles: Vec<String>,
    /// The largest slice a student may claim, in compute slices.
    pub max_slices: i64,
    /// The longest a session runs, in minutes.
    pub max_minutes: i64,
    /// Sessions one student may have running or waiting at once.
    pub max_sessions: i64,
    /// The slice-hour budget per student, in words, when the course sets one:
    /// `6 slice-hours per student this week; resets Monday 00:00 (Europe/Berlin)`.
    pub quota: Option<String>,
    /// The caller's own budget this period (a student of a course with a quota).
    pub budget: Option<BudgetView>,
    /// Booked lab sessions still to come or running (who booked them only for those who
    /// see contacts).
    pub bookings: Vec<BookingView>,
    /// Accounts invited and not joined yet (for those who run the roster), by username.
    pub invited: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct MemberRow {
    /// `None` unless the caller may see contacts.
    pub username: Option<String>,
    pub display_name: String,
    /// `None` unless the caller may see contacts (or no address is stored).
    pub email: Option<String>,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RosterPreviewView {
    pub rows: Vec<RosterRowView>,
    pub errors: Vec<RowErrorView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RosterRowView {
    pub line: usize,
    pub username: String,
    /// A new account's name and email from the file; `None` for an existing account,
    /// whose stored details are never sent.
    pub display_name: Option<String>,
    pub email: Option<String>,
    /// `create`, `enroll` or `unchanged`
    pub action: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RowErrorView {
    pub line: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RosterAppliedView {
    pub created: usize,
    pub enrolled: usize,
    pub invited: usize,
    pub unchanged: usize,
    /// `username,password` lines for the new accounts, when any were made.
    pub passwords_csv: Option<String>,
}

/// A course the caller may launch in, with what it allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LaunchCourse {
    pub course_id: CourseId,
    pub code: String,
    pub title: String,
    pub profiles: Vec<ProfileOption>,
    pub images: Vec<String>,
    pub max_minutes: i64,
    /// Sessions one student may have running or waiting at once (counted over every course).
    pub max_sessions: i64,
    /// The caller's slice-hour budget in the course, if it sets a quota.
    pub budget: Option<BudgetView>,
}

/// A student's slice-hour budget in one course, as numbers already in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BudgetView {
    /// `1.5`
    pub used: String,
    /// `6` (the quota plus this period's extra time)
    pub total: String,
    /// `4.5`
    pub left: String,
    /// `this week` / `this term`
    pub period: String,
    /// `resets Monday 00:00 (Europe/Berlin)`
    pub renewal: String,
    /// When the period ends, for the reader's own clock.
    pub period_end_ms: i64,
    pub period_end_utc: String,
    pub exhausted: bool,
}

/// One field's problem after a save was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FieldProblemView {
    pub field: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PolicyPageView {
    pub code: String,
    pub title: String,
    /// Every field as text, so that whatever is typed comes back with a message rather
    /// than a parse failure.
    pub fields: PolicyForm,
    /// Profiles the GPUs offer, for the hint under "Allowed sizes".
    pub known_profiles: Vec<String>,
    /// What an hour of each known profile counts in slice-hours ("3", "1.75").
    pub per_hour: Vec<(String, String)>,
    /// The compute slices each known profile counts against "largest slice" (its weight,
    /// a part counted as one).
    pub compute_slices: Vec<(String, i64)>,
    /// The administrator's images, the only ones the course may choose.
    pub offered_images: Vec<ImageChoice>,
    pub ceilings: PolicyCeilings,
    pub students: Vec<StudentBudgetRow>,
    /// Whether every GPU says how busy each slice is (jobs on those that do not are never
    /// judged idle).
    pub slice_activity_readable: bool,
}

/// The administrator's ceilings the course chooses within.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PolicyCeilings {
    pub session_minutes: u32,
    pub sessions_per_student: u32,
    pub compute_slices: u32,
    pub course_share_percent: u32,
}

/// One image of the administrator's list, and whether this server's engine has it (a
/// course on Slurm: whether the nodes have it is not known here, so true).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ImageChoice {
    pub image: String,
    pub on_server: bool,
}

/// A student of the course and, when it sets a quota, their budget this period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StudentBudgetRow {
    pub username: String,
    pub display_name: String,
    pub budget: Option<BudgetView>,
}

/// The instructor's class dashboard: what runs and waits, and each student's use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClassPageView {
    pub code: String,
    pub title: String,
    /// The course's booked lab sessions still to come or running.
    pub bookings: Vec<BookingView>,
    pub sessions: Vec<ClassSessionRow>,
    /// Starts that failed in the last day, newest first.
    pub failed_starts: Vec<FailedStartRow>,
    pub students: Vec<StudentUsageRow>,
    /// `this week` / `this term`
    pub period: String,
    pub period_start_ms: i64,
    pub period_end_ms: i64,
}

/// A session of the class that failed before it was ready, with the reason its student read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FailedStartRow {
    pub id: String,
    pub username: String,
    pub display_name: String,
    pub profile: String,
    pub image: String,
    pub reason: String,
    pub at_ms: i64,
}

/// A live or queued session of the class, as the instructor sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClassSessionRow {
    pub id: String,
    pub username: String,
    pub display_name: String,
    pub kind: SessionKind,
    pub profile: String,
    pub state: SessionState,
    /// 1 = placed next among the claims of its size; only while queued.
    pub queue_position: Option<u32>,
    /// While queued: when it starts.
    pub eta: Option<Eta>,
    pub requested_at_ms: i64,
    pub ready_at_ms: Option<i64>,
    /// When it will be stopped (time limit), once ready.
    pub ends_at_ms: Option<i64>,
    /// `58 min left` when the page was made; the browser counts down from `ends_at_ms`.
    pub time_left: Option<String>,
    /// Idle long enough to be warned (notebooks) or reported (jobs).
    pub idle: Option<IdleView>,
}

/// One student's compute-slice-hours in the period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StudentUsageRow {
    pub username: String,
    pub display_name: String,
    /// `1.5`
    pub used: String,
    pub budget: Option<BudgetView>,
    pub running_slices: i64,
}

/// A MIG profile with how many more sessions of it fit now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ProfileOption {
    pub name: String,
    pub free: u32,
    pub queued: u32,
    /// When a claim made now would start, if none is free.
    pub wait: Option<Eta>,
    /// The student's slice-hours left cover the shortest start the portal allows
    /// (`quotas.min_launch_minutes`) of this size; always true without a budget.
    pub affordable: bool,
    /// Slice-hours an hour of it counts: "3", "1.75".
    pub per_hour: String,
    /// What a session of it is guaranteed (memory cap, compute share, fault isolation).
    pub guarantees: Option<String>,
}

/// When a waiting claim starts: about (if sessions last as long as recent ones did) and at
/// the latest (if every session runs to its limit; the queue keeps this promise).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Eta {
    pub about_ms: i64,
    pub about: String,
    pub latest_ms: i64,
    pub latest: String,
}

/// One of the caller's GPU sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SessionView {
    pub id: String,
    /// The course it runs in, for starting the same again.
    pub course_id: CourseId,
    pub course: String,
    pub kind: SessionKind,
    pub profile: String,
    pub image: String,
    /// A job's command as typed back (argv joined with spaces); empty for notebooks.
    pub command: String,
    pub state: SessionState,
    pub live: bool,
    pub reason: String,
    /// e.g. `GPU 0 · 3g.40gb@4`
    pub placement: Option<String>,
    pub mig_uuid: Option<String>,
    pub exit_code: Option<i64>,
    pub requested_at: String,
    pub requested_at_ms: i64,
    /// When it will be stopped, while it runs.
    pub ends_at: Option<String>,
    pub ends_at_ms: Option<i64>,
    /// `58 min left` when the page was made; the browser counts down from `ends_at_ms`.
    pub time_left: Option<String>,
    /// Why it stops at `ends_at_ms`: `time limit` or `quota` (the student's slice-hours
    /// run out first).
    pub stops_for: String,
    /// How long before `ends_at_ms` the page warns.
    pub warn_before_ms: i64,
    /// How long it ran (ready to end, or to now while it runs), e.g. `2 min 5 s`.
    pub ran_for: Option<String>,
    pub ready_at_ms: Option<i64>,
    /// It ended in the half hour before the page read it, and not by its student's own
    /// stop: the sessions page says so at the top, with the reason.
    pub end_to_tell: bool,
    /// A job's command quoted so that it reads back as it was typed.
    pub command_text: String,
    pub steps: Vec<SessionStep>,
    pub log_tail: String,
    /// JupyterLab through the portal, once a notebook is ready.
    pub open_url: Option<String>,
    /// While queued: 1 = placed next among the claims of its size.
    pub queue_position: Option<u32>,
    /// While queued: when it starts.
    pub eta: Option<Eta>,
    /// While it waits in the Slurm cluster's queue: Slurm's reason and estimate.
    pub cluster_wait: Option<ClusterWaitView>,
    /// While it runs idle long enough to be warned.
    pub idle: Option<IdleView>,
}

/// Why a session waits on the Slurm cluster, in Slurm's word and the student's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClusterWaitView {
    /// `Resources`, `Priority`…
    pub reason: String,
    pub words: String,
    /// Slurm's estimated start (its backfill plan), when it has one.
    pub expected_start_ms: Option<i64>,
    pub expected_start: Option<String>,
}

/// An idle session's warning: it stops at `stops_at_ms` unless the student continues.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct IdleView {
    pub idle_since_ms: i64,
    pub stops_at_ms: i64,
    /// `14:20 UTC`, before the browser shows local time.
    pub stops_at: String,
    /// The stop comes early because students wait for a slice of this size.
    pub early: bool,
    /// False for a job the course only reports.
    pub stops: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SessionStep {
    pub at: String,
    pub at_ms: i64,
    pub state: SessionState,
    pub detail: String,
}

/// One page of the caller's past sessions, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct HistoryPage {
    pub sessions: Vec<SessionView>,
    /// Counted from 0; a page past the end answers the last one.
    pub page: u32,
    pub pages: u32,
}

/// A usage report as its page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReportPageView {
    /// The form as it was understood: `week`, `2026-11-23`, `2026-11-29`, `course`, ``.
    pub period: String,
    pub from: String,
    pub to: String,
    pub group: String,
    pub course: String,
    /// The courses the caller may pick; admins may also leave it empty for all of them.
    pub courses: Vec<String>,
    pub all_courses: bool,
    pub period_start_ms: i64,
    pub period_end_ms: i64,
    /// `Course`, `User`, …
    pub group_heading: String,
    /// `By course`, `By GPU`, …
    pub group_title: String,
    pub rows: Vec<ReportRowView>,
    pub total: ReportRowView,
    /// `hour`, `day` or `week`: what one bar of the charts covers.
    pub bucket: String,
    pub use_chart: String,
    pub use_legend: Vec<LegendEntry>,
    pub gpu_chart: String,
    /// The CSV link's query, the same as the page's.
    pub csv_query: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LegendEntry {
    pub name: String,
    pub colour: String,
}

/// One group's numbers, already in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReportRowView {
    pub key: String,
    /// `12.5`
    pub slice_hours: String,
    pub memory_hours: String,
    pub sessions: i64,
    /// `4 min 10 s`, or `—` when no session got a slice in the period.
    pub wait_median: String,
    pub wait_p95: String,
    pub ended_time_limit: i64,
    pub ended_quota: i64,
    pub ended_idle: i64,
}

/// A page of the audit log, newest first, with the filter as it was understood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditPageView {
    pub who: String,
    pub what: String,
    pub from: String,
    pub to: String,
    /// (action prefix, words) for the "What" list.
    pub kinds: Vec<(String, String)>,
    pub entries: Vec<AuditRowView>,
    /// The `before` of the next (older) page, when there is one.
    pub older: Option<i64>,
    /// The filter as a query string, for the CSV link and the next page.
    pub query: String,
    /// Why the filter was refused (nothing is listed then).
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditRowView {
    pub id: i64,
    pub at_ms: i64,
    pub actor: String,
    pub action: String,
    pub subject: String,
    pub detail: String,
}

/// Every course's sessions as the operations page lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OperationsPageView {
    pub course: String,
    pub user: String,
    pub gpu: String,
    pub state: String,
    pub courses: Vec<String>,
    /// (index, `GPU 0 · H100 80GB`) for the "GPU" list.
    pub gpus: Vec<(u32, String)>,
    /// (word, meaning) for the "State" list.
    pub states: Vec<(String, String)>,
    pub sessions: Vec<OperationsRow>,
    pub recent_days: i64,
    /// Why the filter was refused (nothing is listed then).
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OperationsRow {
    pub id: String,
    pub username: String,
    pub course: String,
    pub kind: SessionKind,
    pub profile: String,
    /// `GPU 0`, once placed.
    pub gpu: Option<String>,
    pub state: SessionState,
    pub live: bool,
    pub requested_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    pub reason: String,
}

/// One sample of a session's slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ActivityPoint {
    pub at_ms: i64,
    pub busy_percent: Option<u32>,
    pub memory_mib: Option<u64>,
}

/// What an administrator's home page sums up: sessions by state, the queue, and what
/// needs attention.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OperationsOverview {
    /// (`running`, 12), (`waiting`, 3), … only states with sessions.
    pub sessions: Vec<(String, i64)>,
    /// (profile, waiting, `waited 4 min` of the oldest).
    pub queue: Vec<(String, i64, String)>,
    pub alerts: Vec<String>,
}

/// A course the caller teaches, as their home page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TeachingCourse {
    pub code: String,
    pub title: String,
    pub students: usize,
    pub running: usize,
    pub waiting: usize,
}

/// A booked lab session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BookingView {
    pub id: i64,
    pub course: String,
    pub profile: String,
    pub slices: i64,
    pub starts_at_ms: i64,
    pub starts_at: String,
    pub ends_at_ms: i64,
    pub ends_at: String,
    /// 1: once; more: weekly, this many times.
    pub weeks: i64,
    /// On how many GPUs its slices are.
    pub gpus: i64,
    pub created_by: String,
}

/// The course's bookings page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BookingsPageView {
    pub code: String,
    pub title: String,
    /// The zone the form's times are read in.
    pub time_zone: String,
    /// Slice sizes the course allows.
    pub profiles: Vec<String>,
    /// (size, how many of it all the GPUs hold when empty): the most one booking could
    /// keep. Sizes whose count could not be read are left out.
    pub most_slices: Vec<(String, i64)>,
    pub bookings: Vec<BookingView>,
    /// Admins may book over sessions running then.
    pub admin: bool,
    /// The administrator's limits: how far ahead, and compute-slice-hours per week.
    pub days_ahead: u32,
    pub slice_hours_per_week: u32,
}
