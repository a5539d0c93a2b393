//! An instructor resets a student's forgotten password. Only a plain student of the
//! course qualifies: an account that teaches any course or administers the portal has
//! more to lose than the instructor may decide, so its reset stays with administrators.

use crate::auth::{reset_password, PasswordHasher};
use crate::store::{Role, Store, User};
use crate::CoreError;

/// Gives the student a new one-time password (returned, to hand over once) and ends every
/// login session of theirs. `NotFound` when the user is not a student of the course;
/// `NoPermission` when they teach a course or are an administrator.
pub async fn reset_student_password(
    store: &Store,
    hasher: &PasswordHasher,
    course_id: i64,
    username: &str,
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
    if user.is_admin || roles.iter().any(|(_, role)| *role == Role::Instructor) {
        return Err(CoreError::NoPermission(format!(
            "Only an administrator can reset the password of {}: the account also teaches a course or runs the portal.",
            user.username
        )));
    }
    let password = reset_password(store, hasher, user.id, actor).await?;
    Ok((user, password))
}
