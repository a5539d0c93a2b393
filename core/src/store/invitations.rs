//! Invitations to courses: an instructor's roster names an existing account, and its
//! owner joins or declines. Who may answer is decided by the user id an invitation is
//! keyed by, never by a name in the request.

use super::courses::Course;
use super::{now_ms, Store};
use crate::CoreError;
use crate::{CourseId, UserId};

/// A course a user is invited to, and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub course: Course,
    pub invited_by: String,
    pub invited_at_ms: i64,
}

/// An account invited to a course, as the course's roster lists it (no e-mail).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitedAccount {
    pub username: String,
    pub display_name: String,
}

/// An invitation with its course, as the join reads them.
#[derive(sqlx::FromRow)]
struct InvitationColumns {
    #[sqlx(flatten)]
    course: Course,
    invited_by: String,
    invited_at: i64,
}

impl Store {
    /// The courses `user_id` is invited to, by course code.
    pub async fn invitations_of_user(&self, user_id: UserId) -> Result<Vec<Invitation>, CoreError> {
        let rows: Vec<InvitationColumns> = sqlx::query_as(
            "SELECT c.id, c.code, c.title, c.created_at, i.invited_by, i.invited_at
             FROM course_invitations i JOIN courses c ON c.id = i.course_id
             WHERE i.user_id = $1 ORDER BY c.code",
        )
        .bind(user_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| Invitation { course: row.course, invited_by: row.invited_by, invited_at_ms: row.invited_at })
            .collect())
    }

    /// The accounts invited to the course and not yet answered, by username.
    pub async fn invitations_of_course(&self, course_id: CourseId) -> Result<Vec<InvitedAccount>, CoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT u.username, u.display_name FROM course_invitations i JOIN users u ON u.id = i.user_id
             WHERE i.course_id = $1 ORDER BY u.username",
        )
        .bind(course_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(username, display_name)| InvitedAccount { username, display_name })
            .collect())
    }

    /// Answers `user_id`'s invitation to the course: joining makes them a student of it;
    /// either way the invitation is gone. False when there was no such invitation.
    pub async fn answer_invitation(&self, course_id: CourseId, user_id: UserId, join: bool) -> Result<bool, CoreError> {
        let mut tx = self.begin_write().await?;
        let removed = sqlx::query("DELETE FROM course_invitations WHERE course_id = $1 AND user_id = $2")
            .bind(course_id)
            .bind(user_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if removed == 0 {
            return Ok(false);
        }
        if join {
            super::courses::enroll_student(&mut tx, course_id, user_id, now_ms()).await?;
        }
        tx.commit().await?;
        self.access_changed();
        Ok(true)
    }
}
