//! Courses, their members and roster imports.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::{
    CourseDetail, CourseSummary, OneTimePassword, RosterAppliedView, RosterPreviewView,
};

/// How an answer about an unknown course code begins; the course page shows its own
/// "no such course" view for it.
pub const NO_SUCH_COURSE: &str = "There is no course";

#[server(endpoint = "list_courses")]
pub async fn list_courses() -> Result<Vec<CourseSummary>, AppError> {
    use super::ssr::{require, services, Action, Caller};
    use slicehub_core::auth::authorize;
    let caller = require(Action::ListOwnCourses).await?;
    let services = services()?;
    let store = &services.store;
    let Caller::User { id, .. } = &caller else {
        return Ok(Vec::new());
    };
    let mine = store.courses_of_user(*id).await?;
    let courses: Vec<_> = if authorize(&caller, &Action::ListAllCourses).is_ok() {
        store.list_courses().await?
    } else {
        mine.iter().map(|(c, _)| c.clone()).collect()
    };
    let mut out = Vec::with_capacity(courses.len());
    for course in courses {
        let members = store.course_members(course.id).await?;
        let role = mine
            .iter()
            .find(|(c, _)| c.id == course.id)
            .map(|(_, r)| *r);
        out.push(CourseSummary {
            students: members
                .iter()
                .filter(|m| m.role == crate::views::Role::Student)
                .count(),
            instructors: members
                .iter()
                .filter(|m| m.role == crate::views::Role::Instructor)
                .map(|m| m.user.display_name.clone())
                .collect(),
            code: course.code,
            title: course.title,
            role,
        });
    }
    Ok(out)
}

#[server(endpoint = "add_course")]
pub async fn add_course(code: String, title: String) -> Result<(), AppError> {
    use super::ssr::{actor, require, services, Action};
    let caller = require(Action::CreateCourse).await?;
    slicehub_core::courses::create_course(&services()?.store, &code, &title, &actor(&caller))
        .await?;
    Ok(())
}

#[server(endpoint = "open_course")]
pub async fn open_course(code: String) -> Result<CourseDetail, AppError> {
    use super::ssr::{now_ms, require, services, Action, Caller};
    use crate::views::MemberRow;
    use slicehub_core::auth::authorize;
    use slicehub_core::quotas::{budget_at, hours, zone_or_utc};
    use slicehub_core::courses::policy_of;
    let services = services()?;
    let course = ssr::course(&services, &code).await?;
    let caller = require(Action::ViewCourse(course.id)).await?;
    let members = services
        .store
        .course_members(course.id)
        .await?;
    // Who runs the roster sees how to reach people; classmates see names only.
    let manage = authorize(&caller, &Action::ManageRoster(course.id)).is_ok();
    let student_id = match &caller {
        Caller::User { id, .. } => members
            .iter()
            .find(|m| m.user.id == *id && m.role == crate::views::Role::Student)
            .map(|m| m.user.id),
        Caller::Anonymous => None,
    };
    // The course's rules as its students live by them.
    let policy = policy_of(&services.store, &services.config, course.id)
        .await?;
    // The sizes the GPUs offer that the course allows; unreadable GPUs leave the course's
    // own list (or none) rather than failing the whole page.
    let offered: Vec<String> = match services.sessions.known_profiles().await {
        Ok(known) => known
            .into_iter()
            .filter(|p| policy.allows_profile(p))
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "the course page cannot read the GPUs' slice sizes");
            Vec::new()
        }
    };
    let profiles = if offered.is_empty() {
        policy
            .profiles
            .iter()
            .filter(|p| policy.allows_profile(p))
            .cloned()
            .collect()
    } else {
        offered
    };
    let quota = policy.quota.as_ref().map(|q| {
        let free = if q.booked_time_free {
            " Time in booked labs is not counted."
        } else {
            ""
        };
        format!(
            "{} slice-hours per student {}; {}.{free}",
            hours(q.slice_minutes * 60_000),
            q.period.word(),
            q.period.renewal(zone_or_utc(&policy.time_zone))
        )
    });
    let budget = match student_id {
        Some(user_id) => budget_at(&services.store, &policy, course.id, user_id, now_ms())
            .await?
            .map(super::policy::ssr::budget_view),
        None => None,
    };
    let invited = if manage {
        let pending = services.store.invitations_of_course(course.id).await?;
        pending.into_iter().map(|i| format!("{} ({})", i.username, i.display_name)).collect()
    } else {
        Vec::new()
    };
    let mut bookings = super::bookings::ssr::of_course(&services, course.id).await?;
    if !manage {
        for booking in &mut bookings {
            booking.created_by = String::new();
        }
    }
    Ok(CourseDetail {
        is_student: student_id.is_some(),
        profiles,
        max_slices: policy.max_slices,
        max_minutes: policy.max_minutes,
        max_sessions: policy.max_sessions,
        quota,
        budget,
        bookings,
        can_manage_roster: manage,
        invited,
        can_assign_instructors: authorize(&caller, &Action::AssignInstructor(course.id)).is_ok(),
        shows_contacts: manage,
        can_set_policy: authorize(&caller, &Action::SetCoursePolicy(course.id)).is_ok(),
        code: course.code,
        title: course.title,
        members: members
            .into_iter()
            .map(|m| MemberRow {
                username: manage.then_some(m.user.username),
                display_name: m.user.display_name,
                email: m.user.email.filter(|_| manage),
                role: m.role,
            })
            .collect(),
    })
}

#[server(endpoint = "make_instructor")]
pub async fn make_instructor(code: String, username: String) -> Result<(), AppError> {
    use super::ssr::{actor, from_core, require, services, Action};
    let services = services()?;
    let course = ssr::course(&services, &code).await?;
    let caller = require(Action::AssignInstructor(course.id)).await?;
    let user = ssr::user(&services, &username).await?;
    slicehub_core::courses::assign_instructor(&services.store, course.id, user.id, &actor(&caller))
        .await
        .map_err(from_core)
}

#[server(endpoint = "drop_student")]
pub async fn drop_student(code: String, username: String) -> Result<(), AppError> {
    use super::ssr::{actor, require, services, Action};
    let services = services()?;
    let course = ssr::course(&services, &code).await?;
    let caller = require(Action::ManageRoster(course.id)).await?;
    let user = ssr::user(&services, &username).await?;
    slicehub_core::courses::remove_student(&services.store, course.id, user.id, &actor(&caller))
        .await?;
    // A dropped student's notebooks and jobs in the course end with them.
    let reason = format!("{} was removed from {} by {}", user.username, course.code, actor(&caller));
    // The drop itself is done; a stop that fails now is retried by nobody, so it is
    // logged for the operator rather than turned into an error for a finished drop.
    if let Err(e) = services.sessions.stop_all_of_user_in_course(user.id, course.id, &reason).await {
        tracing::warn!(user = %user.username, course = %course.code, error = %e, "a dropped student's sessions were not all stopped");
    }
    Ok(())
}

/// A forgotten password: the student gets a one-time password, shown to the instructor
/// once, and every open sign-in of theirs ends.
#[server(endpoint = "reset_student_password")]
pub async fn reset_student_password(
    code: String,
    username: String,
) -> Result<OneTimePassword, AppError> {
    use super::ssr::{actor, require, services, Action};
    use slicehub_core::courses::Resetter;
    let services = services()?;
    let course = ssr::course(&services, &code).await?;
    let caller = require(Action::ResetStudentPassword(course.id)).await?;
    let (user, password) = slicehub_core::courses::reset_student_password(
        &services.store,
        services.auth.hasher(),
        course.id,
        &username.trim().to_lowercase(),
        &Resetter::of(&caller),
        &actor(&caller),
    )
    .await?;
    Ok(OneTimePassword {
        username: user.username,
        password,
    })
}

/// What importing the CSV file (its bytes, base64) would change; nothing is written.
#[server(endpoint = "check_roster")]
pub async fn check_roster(
    code: String,
    csv_base64: String,
) -> Result<RosterPreviewView, AppError> {
    use super::ssr::{require, services, Action};
    use crate::views::{RosterRowView, RowErrorView};
    let services = services()?;
    let course = ssr::course(&services, &code).await?;
    let caller = require(Action::ManageRoster(course.id)).await?;
    let bytes = ssr::decode(&csv_base64)?;
    let preview = slicehub_core::courses::preview_roster(&services.store, course.id, &bytes, slicehub_core::courses::Importer::of(&caller))
        .await?;
    Ok(RosterPreviewView {
        rows: preview
            .rows
            .into_iter()
            .map(|r| RosterRowView {
                line: r.line,
                username: r.username,
                display_name: r.new_account.as_ref().map(|a| a.display_name.clone()),
                email: r.new_account.and_then(|a| a.email),
                action: format!("{:?}", r.action).to_lowercase(),
            })
            .collect(),
        errors: preview
            .errors
            .into_iter()
            .map(|e| RowErrorView {
                line: e.line,
                message: e.message,
            })
            .collect(),
    })
}

/// Applies the CSV file, all or nothing; new accounts' one-time passwords come back once.
#[server(endpoint = "import_roster")]
pub async fn import_roster(
    code: String,
    csv_base64: String,
) -> Result<RosterAppliedView, AppError> {
    use super::ssr::{actor, require, services, Action};
    use slicehub_core::courses::{apply_roster, one_time_passwords_csv};
    let services = services()?;
    let course = ssr::course(&services, &code).await?;
    let caller = require(Action::ManageRoster(course.id)).await?;
    let bytes = ssr::decode(&csv_base64)?;
    let applied = apply_roster(
        &services.store,
        services.auth.hasher(),
        course.id,
        &bytes,
        &actor(&caller),
        slicehub_core::courses::Importer::of(&caller),
    )
    .await?;
    Ok(RosterAppliedView {
        created: applied.created,
        enrolled: applied.enrolled,
        invited: applied.invited,
        unchanged: applied.unchanged,
        passwords_csv: (!applied.one_time_passwords.is_empty())
            .then(|| one_time_passwords_csv(&applied)),
    })
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use http::StatusCode;
    use crate::error::AppError;
    use slicehub_core::store::{Course, User};
    use slicehub_core::Services;

    use crate::api::ssr::{fail, require, Action};

    /// The course with this code. Unknown codes answer 404 only to signed-in callers, and
    /// a course the caller is not in answers the same 404 to anyone but an administrator,
    /// so that course codes cannot be tried out (the page guard answers pages the same way).
    pub async fn course(services: &Services, code: &str) -> Result<Course, AppError> {
        use crate::api::ssr::{request_auth, Caller};
        let found = services
            .store
            .course_by_code(code)
            .await?;
        let outsider = match (&found, request_auth().await.map(|a| a.caller)) {
            (Some(course), Ok(Caller::User { is_admin: false, memberships, .. })) => {
                !memberships.iter().any(|(id, _)| *id == course.id)
            }
            _ => false,
        };
        match found {
            Some(course) if !outsider => Ok(course),
            _ => {
                require(Action::ListOwnCourses).await?;
                Err(fail(
                    StatusCode::NOT_FOUND,
                    format!("{} {code}.", super::NO_SUCH_COURSE),
                ))
            }
        }
    }

    pub async fn user(services: &Services, username: &str) -> Result<User, AppError> {
        let name = username.trim().to_lowercase();
        services
            .store
            .user_by_username(&name)
            .await?
            .ok_or_else(|| fail(StatusCode::NOT_FOUND, format!("There is no user {name}.")))
    }

    pub fn decode(text: &str) -> Result<Vec<u8>, AppError> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| {
                fail(
                    StatusCode::BAD_REQUEST,
                    "The file did not arrive intact; choose it again.",
                )
            })
    }
}
