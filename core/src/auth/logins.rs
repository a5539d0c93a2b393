//! Login sessions of the portal (a signed-in browser): the cookie's token, its idle and
//! absolute expiry, and the caller it stands for. A GPU session is `crate::sessions`.

use super::guard::Caller;
use super::login::Authenticator;
use super::tokens::{token_sha256, SESSION_TOKEN_LEN};
use crate::config::Config;
use crate::store::{Store, User};
use crate::CoreError;

/// How long a login session lasts: it ends after `idle_ms` without a request, and
/// `absolute_ms` after the login however active it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginPolicy {
    pub idle_ms: i64,
    pub absolute_ms: i64,
}

impl LoginPolicy {
    /// From `auth.session_idle_minutes` and `auth.session_absolute_hours`.
    pub fn from_config(config: &Config) -> Self {
        LoginPolicy {
            idle_ms: i64::from(config.auth.session_idle_minutes) * 60_000,
            absolute_ms: i64::from(config.auth.session_absolute_hours) * 3_600_000,
        }
    }
}

/// `last_seen_at` is written at most this often, so idle expiry is exact to a minute and
/// a busy page does not write to the database on every request.
const TOUCH_EVERY_MS: i64 = 60_000;

impl Authenticator {
    /// The user a session token belongs to, if the session is still valid; an expired
    /// session, or one of a disabled account, is deleted and yields None.
    pub async fn login_user(&self, token: &str) -> Result<Option<User>, CoreError> {
        if token.len() != SESSION_TOKEN_LEN {
            return Ok(None);
        }
        let Some(session) = self
            .store
            .login_by_token_sha256(&token_sha256(token))
            .await?
        else {
            return Ok(None);
        };
        let now = self.clock.now_ms();
        let expired = now >= session.expires_at_ms
            || now >= session.created_at_ms + self.policy.absolute_ms
            || now >= session.last_seen_at_ms + self.policy.idle_ms;
        if expired || session.user.disabled {
            self.store.delete_login(session.id).await?;
            return Ok(None);
        }
        if now - session.last_seen_at_ms >= TOUCH_EVERY_MS {
            self.store.touch_login(session.id, now).await?;
        }
        Ok(Some(session.user))
    }

    /// Who is calling, for [`super::authorize`]: Anonymous without a valid session.
    /// A caller resolved less than [`super::callers::FRESH_MS`] ago, with no change to
    /// anyone's access made by this process since, is answered from memory.
    pub async fn caller(&self, token: Option<&str>) -> Result<Caller, CoreError> {
        let Some(token) = token else {
            return Ok(Caller::Anonymous);
        };
        let changes = self.store.access_changes();
        let now = self.clock.now_ms();
        if let Some(caller) = self.callers.get(token, changes, now) {
            return Ok(caller);
        }
        let caller = match self.login_user(token).await? {
            Some(user) => caller_of(&self.store, &user).await?,
            None => Caller::Anonymous,
        };
        self.callers.put(token, changes, now, &caller);
        Ok(caller)
    }

    /// Ends the session of this token; an unknown or expired token is not an error.
    pub async fn logout(&self, token: &str) -> Result<(), CoreError> {
        if token.len() != SESSION_TOKEN_LEN {
            return Ok(());
        }
        if let Some(session) = self
            .store
            .login_by_token_sha256(&token_sha256(token))
            .await?
        {
            self.store.delete_login(session.id).await?;
            let name = &session.user.username;
            self.store.audit(name, "logout", name, "").await?;
        }
        Ok(())
    }
}

/// The guard's view of a user: the account's flags and every course membership.
pub async fn caller_of(store: &Store, user: &User) -> Result<Caller, CoreError> {
    Ok(Caller::User {
        id: user.id,
        username: user.username.clone(),
        is_admin: user.is_admin,
        must_change_password: user.must_change_password,
        memberships: store.memberships_of_user(user.id).await?,
    })
}
