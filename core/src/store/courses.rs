use serde::Serialize;

use super::audit::audit_on;
use super::flag::Flag;
use super::users::{is_unique_violation, UserColumns, USER_COLUMNS};
use super::{now_ms, Store, User};
use crate::{CoreError, CourseId, UserId};

pub use slicehub_types::Role;

/// A stored role word; another word is a damaged row.
fn role_of(text: &str) -> Result<Role, CoreError> {
    Role::parse(text).ok_or_else(|| CoreError::Database(format!("unknown course role {text:?}")))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Course {
    pub id: CourseId,
    /// e.g. `CS-101`; unique regardless of case.
    pub code: String,
    pub title: String,
    #[sqlx(rename = "created_at")]
    pub created_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    pub user: User,
    pub role: Role,
    pub added_at_ms: i64,
}

/// An existing account named in a roster, with only what a roster import needs to know
/// of it: never its name, email or password, which an import neither shows nor changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosterAccount {
    pub user_id: UserId,
    pub username: String,
    pub is_admin: bool,
    pub role_in_course: Option<Role>,
    /// The membership was given by a sign-in provider's groups (or an LMS), not by hand:
    /// the provider takes it back when the person leaves the group.
    pub membership_by_provider: bool,
    /// Invited to the course and not answered yet.
    pub invited: bool,
}

/// A new account's name and email.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccountDetails {
    pub display_name: String,
    pub email: Option<String>,
}

/// One write of a roster import; all of an import's writes commit together or not at all.
#[derive(Debug, Clone)]
pub enum RosterChange {
    /// A new account, enrolled as a student.
    Create {
        username: String,
        details: AccountDetails,
        password_hash: String,
        must_change_password: bool,
    },
    /// An existing account enrolled as a student; the account itself stays as it is.
    Enroll { user_id: UserId },
    /// An existing account invited to the course: it joins when its owner accepts.
    Invite { user_id: UserId },
}

/// A course with the caller's role in it, as a membership join reads them.
#[derive(sqlx::FromRow)]
struct CourseRoleColumns {
    #[sqlx(flatten)]
    course: Course,
    role: String,
}

/// Usernames per `IN (...)` query: far below SQLite's and PostgreSQL's bind limits.
const LOOKUP_CHUNK: usize = 500;

/// A member as the roster's join reads it.
#[derive(sqlx::FromRow)]
struct MemberColumns {
    #[sqlx(flatten)]
    user: UserColumns,
    role: String,
    added_at: i64,
}

/// An account a roster names, with its standing in the course.
#[derive(sqlx::FromRow)]
struct RosterAccountColumns {
    id: UserId,
    username: String,
    #[sqlx(try_from = "i64")]
    is_admin: Flag,
    role_in_course: Option<String>,
    granted_by: Option<String>,
    invitations: i64,
}

impl Store {
    /// Fails with `Conflict` when a course with that code (in any case) exists.
    pub async fn insert_course(&self, code: &str, title: &str) -> Result<Course, CoreError> {
        let now = now_ms();
        let inserted: Result<(CourseId,), sqlx::Error> = sqlx::query_as(
            "INSERT INTO courses (code, title, created_at) VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(code)
        .bind(title)
        .bind(now)
        .fetch_one(self.pool())
        .await;
        match inserted {
            Ok((id,)) => Ok(Course {
                id,
                code: code.to_string(),
                title: title.to_string(),
                created_at_ms: now,
            }),
            Err(e) if is_unique_violation(&e) => Err(CoreError::Conflict(format!(
                "a course with the code `{code}` already exists"
            ))),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn course_by_id(&self, id: CourseId) -> Result<Option<Course>, CoreError> {
        let row: Option<Course> =
            sqlx::query_as("SELECT id, code, title, created_at FROM courses WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        Ok(row)
    }

    /// Case does not matter: `cs-101` finds `CS-101`.
    pub async fn course_by_code(&self, code: &str) -> Result<Option<Course>, CoreError> {
        // A code with a NUL would make PostgreSQL fail the query; no course has such a code.
        if !crate::auth::validate::plausible_key(code) {
            return Ok(None);
        }
        let row: Option<Course> = sqlx::query_as(
            "SELECT id, code, title, created_at FROM courses WHERE lower(code) = lower($1)",
        )
        .bind(code)
        .fetch_optional(self.pool())
        .await?;
        Ok(row)
    }

    /// Every course, ordered by code.
    pub async fn list_courses(&self) -> Result<Vec<Course>, CoreError> {
        Ok(sqlx::query_as("SELECT id, code, title, created_at FROM courses ORDER BY code")
            .fetch_all(self.pool())
            .await?)
    }

    /// The courses a user teaches or takes, ordered by code.
    pub async fn courses_of_user(&self, user_id: UserId) -> Result<Vec<(Course, Role)>, CoreError> {
        let rows: Vec<CourseRoleColumns> = sqlx::query_as(
            "SELECT c.id, c.code, c.title, c.created_at, m.role
             FROM course_members m JOIN courses c ON c.id = m.course_id
             WHERE m.user_id = $1 ORDER BY c.code",
        )
        .bind(user_id)
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|row| Ok((row.course, role_of(&row.role)?)))
            .collect()
    }

    /// (course id, role) for every course the user belongs to.
    pub async fn memberships_of_user(&self, user_id: UserId) -> Result<Vec<(CourseId, Role)>, CoreError> {
        let rows: Vec<(CourseId, String)> = sqlx::query_as(
            "SELECT course_id, role FROM course_members WHERE user_id = $1 ORDER BY course_id",
        )
        .bind(user_id)
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|(course, role)| Ok((course, role_of(&role)?)))
            .collect()
    }

    /// Instructors first, then students, each by username.
    pub async fn course_members(&self, course_id: CourseId) -> Result<Vec<Member>, CoreError> {
        let rows: Vec<MemberColumns> = sqlx::query_as(&format!(
            "SELECT {USER_COLUMNS}, m.role, m.added_at
             FROM course_members m JOIN users u ON u.id = m.user_id
             WHERE m.course_id = $1 ORDER BY m.role, u.username"
        ))
        .bind(course_id)
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(Member { user: User::from(row.user), role: role_of(&row.role)?, added_at_ms: row.added_at })
            })
            .collect()
    }

    /// Makes the user a member with `role`, replacing any role they had in the course.
    pub async fn set_member_role(
        &self,
        course_id: CourseId,
        user_id: UserId,
        role: Role,
    ) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO course_members (course_id, user_id, role, added_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (course_id, user_id) DO UPDATE SET role = excluded.role, granted_by = NULL",
        )
        .bind(course_id)
        .bind(user_id)
        .bind(role.as_str())
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        forget_invitation(self.pool(), course_id, user_id).await?;
        self.access_changed();
        Ok(())
    }

    /// Removes the membership only if it has `role`; returns whether one was removed.
    pub async fn remove_member(
        &self,
        course_id: CourseId,
        user_id: UserId,
        role: Role,
    ) -> Result<bool, CoreError> {
        let done = sqlx::query(
            "DELETE FROM course_members WHERE course_id = $1 AND user_id = $2 AND role = $3",
        )
        .bind(course_id)
        .bind(user_id)
        .bind(role.as_str())
        .execute(self.pool())
        .await?;
        // Removal is final: an invitation left from before does not let them back in.
        forget_invitation(self.pool(), course_id, user_id).await?;
        self.access_changed();
        Ok(done.rows_affected() > 0)
    }

    /// The existing accounts among `usernames` (already normalized), seen from `course_id`.
    pub async fn roster_accounts(
        &self,
        course_id: CourseId,
        usernames: &[String],
    ) -> Result<Vec<RosterAccount>, CoreError> {
        let mut found = Vec::new();
        for chunk in usernames.chunks(LOOKUP_CHUNK) {
            let placeholders: Vec<String> = (2..chunk.len() + 2).map(|i| format!("${i}")).collect();
            let sql = format!(
                "SELECT u.id, u.username, u.is_admin,
                        (SELECT m.role FROM course_members m
                         WHERE m.user_id = u.id AND m.course_id = $1) AS role_in_course,
                        (SELECT m.granted_by FROM course_members m
                         WHERE m.user_id = u.id AND m.course_id = $1) AS granted_by,
                        (SELECT COUNT(*) FROM course_invitations i
                         WHERE i.user_id = u.id AND i.course_id = $1) AS invitations
                 FROM users u WHERE u.username IN ({})",
                placeholders.join(", ")
            );
            let mut query = sqlx::query_as::<_, RosterAccountColumns>(&sql).bind(course_id);
            for username in chunk {
                query = query.bind(username);
            }
            for row in query.fetch_all(self.pool()).await? {
                found.push(RosterAccount {
                    user_id: row.id,
                    username: row.username,
                    is_admin: row.is_admin.0,
                    role_in_course: row.role_in_course.as_deref().map(role_of).transpose()?,
                    membership_by_provider: row.granted_by.is_some(),
                    invited: row.invitations > 0,
                });
            }
        }
        Ok(found)
    }

    /// Writes a roster import in one transaction, with an audit row per created account and
    /// one `roster.import` row carrying `summary`. A username taken meanwhile fails the
    /// whole import with `Conflict`.
    pub async fn apply_roster_changes(
        &self,
        course: &Course,
        changes: &[RosterChange],
        actor: &str,
        summary: &str,
    ) -> Result<(), CoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        for change in changes {
            match change {
                RosterChange::Create {
                    username,
                    details,
                    password_hash,
                    must_change_password,
                } => {
                    let inserted: Result<(UserId,), sqlx::Error> = sqlx::query_as(
                        "INSERT INTO users (username, display_name, email, password_hash, is_admin,
                                            must_change_password, disabled, created_at, updated_at)
                         VALUES ($1, $2, $3, $4, 0, $5, 0, $6, $6) RETURNING id",
                    )
                    .bind(username)
                    .bind(&details.display_name)
                    .bind(details.email.as_deref())
                    .bind(password_hash)
                    .bind(i64::from(*must_change_password))
                    .bind(now)
                    .fetch_one(&mut *tx)
                    .await;
                    let user_id = match inserted {
                        Ok((id,)) => id,
                        Err(e) if is_unique_violation(&e) => {
                            return Err(CoreError::Conflict(format!(
                                "the account `{username}` was created while the roster was being \
                                 imported; nothing was imported — preview the file again"
                            )))
                        }
                        Err(e) => return Err(e.into()),
                    };
                    enroll_student(&mut tx, course.id, user_id, now).await?;
                    let detail = format!("roster import into {}", course.code);
                    audit_on(&mut tx, actor, "user.create", username, &detail).await?;
                }
                RosterChange::Enroll { user_id } => {
                    enroll_student(&mut tx, course.id, *user_id, now).await?;
                }
                RosterChange::Invite { user_id } => {
                    sqlx::query(
                        "INSERT INTO course_invitations (course_id, user_id, invited_by, invited_at)
                         VALUES ($1, $2, $3, $4) ON CONFLICT (course_id, user_id) DO NOTHING",
                    )
                    .bind(course.id)
                    .bind(*user_id)
                    .bind(actor)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                }
            }
        }
        audit_on(&mut tx, actor, "roster.import", &course.code, summary).await?;
        tx.commit().await?;
        self.access_changed();
        Ok(())
    }
}

/// Any membership change answers an open invitation to the course: it no longer stands.
async fn forget_invitation<'c, E>(conn: E, course_id: CourseId, user_id: UserId) -> Result<(), CoreError>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    sqlx::query("DELETE FROM course_invitations WHERE course_id = $1 AND user_id = $2")
        .bind(course_id)
        .bind(user_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Makes the user a student of the course by hand (a roster listing, an accepted
/// invitation). A student membership a provider gave becomes hand-made, so that leaving
/// the provider's group no longer takes it; any other role is left as it is.
pub(super) async fn enroll_student(
    conn: &mut sqlx::AnyConnection,
    course_id: CourseId,
    user_id: UserId,
    now: i64,
) -> Result<(), CoreError> {
    forget_invitation(&mut *conn, course_id, user_id).await?;
    sqlx::query(
        "INSERT INTO course_members (course_id, user_id, role, added_at)
         VALUES ($1, $2, 'student', $3)
         ON CONFLICT (course_id, user_id) DO UPDATE SET granted_by = NULL
         WHERE course_members.role = 'student' AND course_members.granted_by IS NOT NULL",
    )
    .bind(course_id)
    .bind(user_id)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}
