//! An instructor resets a student's forgotten password. The new password opens the whole
//! account, so only an account whose every course the resetter manages qualifies: a plain
//! student of the resetter's courses, never one who also takes a course taught by someone
//! else, teaches, or administers the portal (an administrator resets those).

use crate::auth::{reset_password, Caller, PasswordHasher};
use crate::store::{Role, Store, User};
use crate::CoreError;
use crate::CourseId;

/// Who resets: an administrator may reset any member of the course; an instructor only an
/// account all of whose courses are in `manages` (the courses they teach).
#[derive(Debug, Clone)]
pub enum Resetter {
    Administrator,
    Instructor { manages: Vec<CourseId> },
}

impl Resetter {
    pub fn of(caller: &Caller) -> Resetter {
        match caller {
            Caller::User { is_admin: true, .. } => Resetter::Administrator,
            Caller::User { memberships, .. } => Resetter::Instructor {
                manages: memberships
                    .iter()
                    .filter(|(_, role)| *role == Role::Instructor)
                    .map(|(course, _)| *course)
                    .collect(),
            },
            Caller::Anonymous => Resetter::Instructor { manages: Vec::new() },
        }
    }
}

/// Gives the student a new one-time password (returned, to hand over once) and ends every
/// login session of theirs. `NotFound` when the user is not a student of the course;
/// `NoPermission` when the account reaches beyond what the resetter manages.
pub async fn reset_student_password(
    store: &Store,
    hasher: &PasswordHasher,
    course_id: CourseId,
    username: &str,
    resetter: &Resetter,
    actor: &str,
) -> Result<(User, String), CoreError> {
    let course = super::manage::course(store, course_id).await?;
    let not_a_student = || {
        CoreError::NotFound(format!("{username} is not a student of {}", course.code))
    };
    let user = store
        .user_by_username(username)
        .await?
        .ok_or_else(not_a_student)?;
    let roles = store.courses_of_user(user.id).await?;
    if !roles
        .iter()
        .any(|(c, role)| c.id == course.id && *role == Role::Student)
    {
        return Err(not_a_student());
    }
    if let Resetter::Instructor { manages } = resetter {
        let beyond = user.is_admin
            || roles
                .iter()
                .any(|(c, role)| *role == Role::Instructor || !manages.contains(&c.id));
        if beyond {
            return Err(CoreError::NoPermission(format!(
                "Only an administrator can reset the password of {}: the account also takes or teaches a course you do not run, or runs the portal.",
                user.username
            )));
        }
    }
    let password = reset_password(store, hasher, user.id, actor).await?;
    Ok((user, password))
}
