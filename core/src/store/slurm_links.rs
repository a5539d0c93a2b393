//! Which portal account each line of the administrator's `slurm.users_file` stands for.

use super::{now_ms, Store};
use crate::CoreError;
use crate::UserId;

/// What a listed portal name is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlurmLink {
    /// The name is not in the file as the portal has read it.
    Unlisted,
    /// Listed before its account existed: an administrator has yet to bind it.
    Pending,
    /// Bound to this account.
    Account(UserId),
}

impl Store {
    /// Records the names of the file not seen before, each bound to the account of that
    /// name if one exists now, waiting for an administrator otherwise. Names seen before
    /// keep what they are bound to.
    pub async fn note_slurm_links(&self, names: &[String]) -> Result<(), CoreError> {
        let now = now_ms();
        for name in names {
            sqlx::query(
                "INSERT INTO slurm_links (portal_username, user_id, linked_at)
                 VALUES ($1, (SELECT id FROM users WHERE username = $1), $2)
                 ON CONFLICT (portal_username) DO NOTHING",
            )
            .bind(name)
            .bind(now)
            .execute(self.pool())
            .await?;
        }
        Ok(())
    }

    /// Binds `name`'s line to the account of that name now (an administrator's act).
    /// False when no account has that name.
    pub async fn link_slurm_user(&self, name: &str) -> Result<bool, CoreError> {
        let linked = sqlx::query(
            "INSERT INTO slurm_links (portal_username, user_id, linked_at)
             SELECT username, id, $2 FROM users WHERE username = $1
             ON CONFLICT (portal_username) DO UPDATE SET user_id = excluded.user_id, linked_at = excluded.linked_at",
        )
        .bind(name)
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(linked.rows_affected() == 1)
    }

    pub async fn slurm_link(&self, name: &str) -> Result<SlurmLink, CoreError> {
        let row: Option<Option<UserId>> = sqlx::query_scalar("SELECT user_id FROM slurm_links WHERE portal_username = $1")
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        Ok(match row {
            None => SlurmLink::Unlisted,
            Some(None) => SlurmLink::Pending,
            Some(Some(id)) => SlurmLink::Account(id),
        })
    }
}
