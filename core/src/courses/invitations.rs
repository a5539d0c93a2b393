//! An invited account's owner joins the course or declines; only the invitation's own
//! account can answer it.

use crate::store::Store;
use crate::CoreError;
use crate::UserId;

/// Joins (or declines) `user_id`'s invitation to the course `code`; `NotFound` when that
/// user has no invitation to it, whatever the reason (no such course, never invited,
/// answered already).
pub async fn answer_invitation(
    store: &Store,
    code: &str,
    user_id: UserId,
    join: bool,
    actor: &str,
) -> Result<(), CoreError> {
    let missing = || CoreError::NotFound(format!("You have no invitation to {code}."));
    let course = store.course_by_code(code).await?.ok_or_else(missing)?;
    if !store.answer_invitation(course.id, user_id, join).await? {
        return Err(missing());
    }
    let action = if join { "course.invitation.join" } else { "course.invitation.decline" };
    store.audit(actor, action, &course.code, actor).await?;
    Ok(())
}
