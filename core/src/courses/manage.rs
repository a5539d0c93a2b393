//! Creating courses and changing who belongs to them, each change audited under `actor`.
//! Listing is plain store calls (`list_courses`, `courses_of_user`, `course_members`).

use crate::store::{Course, Role, Store, User};
use crate::CoreError;
use crate::{CourseId, UserId};

pub const MAX_COURSE_TITLE_CHARS: usize = 200;

/// Trimmed; 2–32 characters of `A-Z a-z 0-9 . _ -`, such as `CS-101`.
pub fn check_course_code(raw: &str) -> Result<String, String> {
    let code = raw.trim();
    let length = code.chars().count();
    if !(2..=32).contains(&length) {
        return Err(format!(
            "the course code “{code}” must be 2 to 32 characters long"
        ));
    }
    if !code
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return Err(format!(
            "the course code “{code}” may only contain letters, digits, '.', '_' and '-'"
        ));
    }
    Ok(code.to_string())
}

/// Trimmed; 1–200 characters, no control characters.
pub fn check_course_title(raw: &str) -> Result<String, String> {
    let title = raw.trim();
    if title.is_empty() {
        return Err("the course title is empty".to_string());
    }
    if title.chars().count() > MAX_COURSE_TITLE_CHARS {
        return Err(format!(
            "the course title is longer than {MAX_COURSE_TITLE_CHARS} characters"
        ));
    }
    if title.chars().any(char::is_control) {
        return Err("the course title contains a control character".to_string());
    }
    Ok(title.to_string())
}

/// Fails with `Conflict` when the code exists in any case.
pub async fn create_course(
    store: &Store,
    code: &str,
    title: &str,
    actor: &str,
) -> Result<Course, CoreError> {
    let code = check_course_code(code).map_err(CoreError::InvalidRequest)?;
    let title = check_course_title(title).map_err(CoreError::InvalidRequest)?;
    let course = store.insert_course(&code, &title).await?;
    store
        .audit(actor, "course.create", &course.code, &course.title)
        .await?;
    Ok(course)
}

/// Makes the user an instructor of the course; a student of it becomes its instructor.
pub async fn assign_instructor(
    store: &Store,
    course_id: CourseId,
    user_id: UserId,
    actor: &str,
) -> Result<(), CoreError> {
    let course = course(store, course_id).await?;
    let user = user(store, user_id).await?;
    store
        .set_member_role(course.id, user.id, Role::Instructor)
        .await?;
    store
        .audit(
            actor,
            "course.instructor.assign",
            &course.code,
            &user.username,
        )
        .await?;
    Ok(())
}

/// Removes a student from the course (never an instructor); `NotFound` when the user is
/// not a student of it. The account itself stays.
pub async fn remove_student(
    store: &Store,
    course_id: CourseId,
    user_id: UserId,
    actor: &str,
) -> Result<(), CoreError> {
    let course = course(store, course_id).await?;
    let user = user(store, user_id).await?;
    if !store
        .remove_member(course.id, user.id, Role::Student)
        .await?
    {
        return Err(CoreError::NotFound(format!(
            "{} is not a student of {}",
            user.username, course.code
        )));
    }
    store
        .audit(actor, "roster.remove", &course.code, &user.username)
        .await?;
    Ok(())
}

pub(crate) async fn course(store: &Store, course_id: CourseId) -> Result<Course, CoreError> {
    store
        .course_by_id(course_id)
        .await?
        .ok_or_else(|| CoreError::NotFound(format!("no course with id {course_id}")))
}

async fn user(store: &Store, user_id: UserId) -> Result<User, CoreError> {
    store
        .user_by_id(user_id)
        .await?
        .ok_or_else(|| CoreError::NotFound(format!("no user with id {user_id}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn course_codes_are_short_and_plain() {
        assert_eq!(check_course_code(" CS-101 ").unwrap(), "CS-101");
        assert!(check_course_code("C").is_err());
        assert!(check_course_code(&"C".repeat(33)).is_err());
        assert!(check_course_code("CS 101").is_err());
        assert!(check_course_code("ML_2.b").is_ok());
    }
}
