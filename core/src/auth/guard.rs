//! The one authorization rule of the portal: who may do what. Pure: it looks only at the
//! caller (as loaded for this request) and the action, so every route and server
//! function can ask it and the whole rule can be tested as a table.

use std::fmt;

use crate::store::Role;
use crate::{CourseId, UserId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Anonymous,
    User {
        id: UserId,
        username: String,
        is_admin: bool,
        must_change_password: bool,
        /// (course id, role) for every course the user belongs to.
        memberships: Vec<(CourseId, Role)>,
    },
}

/// Everything the portal does. Ids name the user or course acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    ViewOwnAccount,
    ChangeOwnPassword,
    ListUsers,
    CreateUser,
    ResetPassword(UserId),
    /// Disabling or enabling an account.
    DisableUser(UserId),
    CreateCourse,
    /// Seeing the courses one belongs to (the courses page).
    ListOwnCourses,
    ListAllCourses,
    ViewCourse(CourseId),
    /// Importing students and removing them.
    ManageRoster(CourseId),
    /// Giving a student of the course a one-time password (the store decides who counts
    /// as a student: `courses::reset_student_password`).
    ResetStudentPassword(CourseId),
    AssignInstructor(CourseId),
    ViewGpus,
    ViewStatus,
    /// Seeing one's own GPU sessions (the dashboard).
    ListOwnSessions,
    /// Starting a notebook or job in a course.
    LaunchIn(CourseId),
    /// Seeing or stopping one session.
    ManageSession { owner: UserId, course: CourseId },
    /// Which images and profiles a course allows, and its session length.
    SetCoursePolicy(CourseId),
    /// The class dashboard: every student's sessions and use, and its CSV.
    WatchClass(CourseId),
    /// The usage report page: admins, and instructors of at least one course.
    ViewReports,
    /// Usage report rows of one course.
    ReportOn(CourseId),
    /// The audit log page and its CSV.
    ReadAuditLog,
    /// Every course's live and recent sessions (the operations page).
    ListAllSessions,
    /// Draining a GPU and returning it to service.
    OperateGpus,
    /// Registering LMS platforms and attaching sign-in identities to accounts.
    ManageSignIn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    NotLoggedIn,
    Forbidden,
    /// Logged in with a one-time password: only the account page and changing the
    /// password are open until a new password is set.
    MustChangePassword,
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Denied::NotLoggedIn => "Please log in.",
            Denied::Forbidden => "You do not have permission to do that.",
            Denied::MustChangePassword => "Choose a new password before you continue.",
        })
    }
}

impl std::error::Error for Denied {}

impl From<Denied> for crate::CoreError {
    fn from(denied: Denied) -> Self {
        match denied {
            Denied::NotLoggedIn => crate::CoreError::Auth(denied.to_string()),
            Denied::Forbidden | Denied::MustChangePassword => {
                crate::CoreError::NoPermission(denied.to_string())
            }
        }
    }
}

pub fn authorize(caller: &Caller, action: &Action) -> Result<(), Denied> {
    let Caller::User {
        id,
        is_admin,
        must_change_password,
        memberships,
        ..
    } = caller
    else {
        return Err(Denied::NotLoggedIn);
    };
    let own_account_only = matches!(action, Action::ViewOwnAccount | Action::ChangeOwnPassword);
    if *must_change_password && !own_account_only {
        return Err(Denied::MustChangePassword);
    }
    let role_in = |course: CourseId| {
        memberships
            .iter()
            .find(|(c, _)| *c == course)
            .map(|(_, r)| *r)
    };
    let allowed = match *action {
        Action::ViewOwnAccount | Action::ChangeOwnPassword => true,
        Action::ListUsers | Action::CreateUser | Action::ResetPassword(_) => *is_admin,
        // An administrator cannot disable their own account and lock themselves out.
        Action::DisableUser(user) => *is_admin && user != *id,
        Action::ListOwnCourses => true,
        Action::CreateCourse | Action::ListAllCourses => *is_admin,
        Action::ViewCourse(course) => *is_admin || role_in(course).is_some(),
        Action::ManageRoster(course) | Action::ResetStudentPassword(course) => {
            *is_admin || role_in(course) == Some(Role::Instructor)
        }
        Action::AssignInstructor(_) => *is_admin,
        Action::ViewGpus | Action::ViewStatus | Action::ReadAuditLog | Action::ListAllSessions | Action::OperateGpus | Action::ManageSignIn => *is_admin,
        Action::ListOwnSessions => true,
        Action::LaunchIn(course) => *is_admin || role_in(course).is_some(),
        Action::ManageSession { owner, course } => {
            owner == *id || *is_admin || role_in(course) == Some(Role::Instructor)
        }
        Action::SetCoursePolicy(course) | Action::WatchClass(course) | Action::ReportOn(course) => {
            *is_admin || role_in(course) == Some(Role::Instructor)
        }
        Action::ViewReports => *is_admin || memberships.iter().any(|(_, r)| *r == Role::Instructor),
    };
    if allowed {
        Ok(())
    } else {
        Err(Denied::Forbidden)
    }
}
