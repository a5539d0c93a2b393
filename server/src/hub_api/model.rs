//! JupyterHub's user and group models, made from accounts and course memberships, and who
//! may see which of them.

use serde_json::{json, Value};
use slicehub_core::auth::{authorize, Action, Caller};
use slicehub_core::sessions::{GpuSession, SessionKind, SessionState};
use slicehub_core::store::{Role, User};
use slicehub_core::{CoreError, CourseId, Services};

pub const STUDENTS: &str = "nbgrader-";
pub const INSTRUCTORS: &str = "formgrade-";

pub fn group_name(code: &str, role: Role) -> String {
    match role {
        Role::Student => format!("{STUDENTS}{code}"),
        Role::Instructor => format!("{INSTRUCTORS}{code}"),
    }
}

/// A group's course code and the role it holds, from its name.
pub fn group_parts(name: &str) -> Option<(&str, Role)> {
    if let Some(code) = name.strip_prefix(STUDENTS) {
        return Some((code, Role::Student));
    }
    name.strip_prefix(INSTRUCTORS).map(|code| (code, Role::Instructor))
}

/// A time as JupyterHub's models give it: ISO 8601, or null.
pub fn iso(ms: impl Into<Option<i64>>) -> Value {
    ms.into().map_or(Value::Null, |ms| Value::String(slicehub_core::clock::iso_utc(ms)))
}

/// Whether `caller` may see `user` here: themselves, administrators, and the instructors
/// of a course `user` belongs to (nbgrader's formgrader reads its students' groups).
pub async fn may_see(services: &Services, caller: &Caller, user: &User) -> Result<bool, CoreError> {
    let Caller::User { id, .. } = caller else {
        return Ok(false);
    };
    if *id == user.id || authorize(caller, &Action::ListUsers).is_ok() {
        return Ok(true);
    }
    let theirs = services.store.memberships_of_user(user.id).await?;
    Ok(theirs.iter().any(|(course, _)| authorize(caller, &Action::ManageRoster(*course)).is_ok()))
}

/// `user` as JupyterHub's user model, with only the groups of courses `caller` may see.
/// `live` is every session that has not ended ([`live_sessions`]), read once per answer.
pub async fn user_model(services: &Services, caller: &Caller, user: &User, live: &[GpuSession]) -> Result<Value, CoreError> {
    let own = matches!(caller, Caller::User { id, .. } if *id == user.id);
    let mut groups = Vec::new();
    for (course, role) in services.store.courses_of_user(user.id).await? {
        if own || can_manage(caller, course.id) {
            groups.push(group_name(&course.code, role));
        }
    }
    groups.sort();
    // Only sessions the caller may see: an instructor of one of the person's courses
    // learns nothing of a notebook in another (its id, course or image).
    let sessions: Vec<GpuSession> = services
        .store
        .gpu_sessions_of_user(user.id, 1)
        .await?
        .into_iter()
        .filter(|s| may_manage(caller, s))
        .collect();
    let live = live_notebook(live, caller, user);
    let ready = live.as_ref().filter(|s| s.state == SessionState::Ready);
    let server = ready.map(|s| Value::String(s.base_url()));
    let pending = (ready.is_none() && live.is_some()).then_some("spawn");
    let last_activity = sessions.first().map_or(Value::Null, |s| iso(s.updated_at_ms));
    let servers = match &live {
        Some(s) => json!({ "": {
            "name": "",
            "ready": s.state == SessionState::Ready,
            "pending": pending,
            "url": s.base_url(),
            "started": iso(s.requested_at_ms),
            "user_options": { "course": s.course_code, "profile": s.profile, "image": s.image },
        }}),
        None => json!({}),
    };
    Ok(json!({
        "kind": "user",
        "name": user.username,
        "admin": user.is_admin,
        "groups": groups,
        "roles": if user.is_admin { vec!["admin", "user"] } else { vec!["user"] },
        "server": server,
        "pending": pending,
        "created": iso(user.created_at_ms),
        "last_activity": last_activity,
        "servers": servers,
    }))
}

/// Whether `caller` may see and stop `session`: its owner, its course's instructors,
/// administrators.
pub fn may_manage(caller: &Caller, session: &GpuSession) -> bool {
    authorize(caller, &Action::ManageSession { owner: session.user_id, course: session.course_id }).is_ok()
}

/// `user`'s notebook that is starting or running, however many sessions came after it,
/// when `caller` may see it (its owner, its course's instructors, administrators): to
/// anyone else it is no server at all.
pub fn live_notebook(live: &[GpuSession], caller: &Caller, user: &User) -> Option<GpuSession> {
    live.iter()
        .find(|s| s.user_id == user.id && s.kind == SessionKind::Notebook && may_manage(caller, s))
        .cloned()
}

/// Every session that has not ended.
pub async fn live_sessions(services: &Services) -> Result<Vec<GpuSession>, CoreError> {
    let live: Vec<SessionState> = SessionState::ALL.into_iter().filter(|s| !s.is_final()).collect();
    services.store.gpu_sessions_in(&live).await
}

/// Administrators, and instructors for their own courses.
pub fn can_manage(caller: &Caller, course: CourseId) -> bool {
    authorize(caller, &Action::ManageRoster(course)).is_ok()
}
