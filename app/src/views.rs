//! What the browser sees. Domain types stay in `slicehub-core`; server functions map
//! them to these.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentView {
    pub name: String,
    pub ok: bool,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuView {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub memory: String,
    /// `MIG enabled`, `MIG disabled` or `no MIG`
    pub mig: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceStatus {
    /// `ok`, `degraded` or `down`
    pub status: String,
    pub components: Vec<ComponentView>,
    pub board: GpuBoard,
    /// The caller may open the GPU board and the status page.
    pub viewer_is_admin: bool,
    /// e.g. `14:03:22 UTC`
    pub checked_at: String,
    pub version: String,
}

/// Every GPU with the MIG instances placed on it, for the GPU board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuBoard {
    pub simulated: bool,
    pub backend: String,
    pub gpus: Vec<GpuLayoutView>,
    pub refreshed_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceView {
    pub profile: String,
    pub start: u8,
    pub size: u8,
    /// Who holds it; `None` when no session does.
    pub holder: Option<String>,
    pub mig_uuid: Option<String>,
    pub memory_used: Option<String>,
}

/// The signed-in person as the pages see them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Me {
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
    pub must_change_password: bool,
    pub courses: Vec<CourseRef>,
}

impl Me {
    pub fn teaches_any(&self) -> bool {
        self.courses.iter().any(|c| c.role == "instructor")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CourseRef {
    pub code: String,
    pub title: String,
    /// `instructor` or `student`
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRow {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub email: String,
    pub is_admin: bool,
    pub disabled: bool,
    pub must_change_password: bool,
}

/// A password shown once, right after it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OneTimePassword {
    pub username: String,
    pub password: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CourseSummary {
    pub code: String,
    pub title: String,
    /// The caller's role in it, if any.
    pub role: Option<String>,
    pub students: usize,
    pub instructors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CourseDetail {
    pub code: String,
    pub title: String,
    pub can_manage_roster: bool,
    pub can_assign_instructors: bool,
    pub members: Vec<MemberRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberRow {
    pub username: String,
    pub display_name: String,
    pub email: String,
    /// `instructor` or `student`
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterPreviewView {
    pub rows: Vec<RosterRowView>,
    pub errors: Vec<RowErrorView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterRowView {
    pub line: usize,
    pub username: String,
    pub display_name: String,
    pub email: String,
    /// `create`, `enroll`, `update` or `unchanged`
    pub action: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowErrorView {
    pub line: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterAppliedView {
    pub created: usize,
    pub enrolled: usize,
    pub updated: usize,
    pub unchanged: usize,
    /// `username,password` lines for the new accounts, when any were made.
    pub passwords_csv: Option<String>,
}

/// A course the caller may launch in, with what it allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchCourse {
    pub course_id: i64,
    pub code: String,
    pub title: String,
    pub profiles: Vec<ProfileOption>,
    pub images: Vec<String>,
    pub max_minutes: i64,
}

/// A MIG profile with how many more sessions of it fit now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileOption {
    pub name: String,
    pub free: u32,
    pub queued: u32,
}

/// One of the caller's GPU sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    pub id: String,
    pub course: String,
    /// `notebook` or `job`
    pub kind: String,
    pub profile: String,
    pub image: String,
    /// A job's command as typed back (argv joined with spaces); empty for notebooks.
    pub command: String,
    pub state: String,
    pub live: bool,
    pub reason: String,
    /// e.g. `GPU 0 · 3g.40gb@4`
    pub placement: Option<String>,
    pub mig_uuid: Option<String>,
    pub exit_code: Option<i64>,
    pub requested_at: String,
    /// When it will be stopped, while it runs.
    pub ends_at: Option<String>,
    pub steps: Vec<SessionStep>,
    pub log_tail: String,
    /// JupyterLab through the portal, once a notebook is ready.
    pub open_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStep {
    pub at: String,
    pub state: String,
    pub detail: String,
}
