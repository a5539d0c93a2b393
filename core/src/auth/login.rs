use std::net::IpAddr;
use std::sync::Arc;

use super::password::{check_new_password, PasswordHasher};
use super::ratelimit::{LoginLimiter, LoginLimits};
use super::logins::LoginPolicy;
use super::tokens::{new_session_token, token_sha256};
use super::validate::{check_text, normalize_username, Lines};
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::store::{Store, User};
use crate::CoreError;
use crate::UserId;

/// Longest attempted username written to the audit log.
const MAX_AUDITED_USERNAME_CHARS: usize = 128;

/// Logins, login sessions and a user's own password change. Holds the in-memory login
/// limiter, so build one per process and share it (cheap to clone).
#[derive(Clone)]
pub struct Authenticator {
    pub(super) store: Store,
    pub(super) hasher: PasswordHasher,
    pub(super) limiter: Arc<LoginLimiter>,
    pub(super) policy: LoginPolicy,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) callers: super::callers::RecentCallers,
}

#[derive(Debug, Clone)]
pub struct LoginOk {
    /// The session token for the cookie; only its SHA-256 is stored.
    pub token: String,
    /// `must_change_password` set means: send them to change it before anything else.
    pub user: User,
    /// When the session ends at the latest (absolute expiry), epoch milliseconds.
    pub expires_at_ms: i64,
}

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The same for an unknown user, a wrong password and a disabled account.
    #[error("Wrong username or password.")]
    WrongCredentials,
    #[error("Too many failed attempts. Try again in {retry_after_secs} seconds.")]
    RateLimited { retry_after_secs: u64 },
    #[error(transparent)]
    Internal(#[from] CoreError),
}

impl From<LoginError> for CoreError {
    fn from(e: LoginError) -> Self {
        match e {
            LoginError::Internal(inner) => inner,
            other => CoreError::Auth(other.to_string()),
        }
    }
}

impl Authenticator {
    pub fn new(
        store: Store,
        hasher: PasswordHasher,
        policy: LoginPolicy,
        limits: LoginLimits,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Authenticator {
            store,
            hasher,
            limiter: LoginLimiter::new(limits),
            policy,
            clock,
            callers: Default::default(),
        }
    }

    /// The portal's authenticator: `auth.*` settings, default limits, the system clock.
    pub fn from_config(store: Store, config: &Config) -> Self {
        Authenticator::new(
            store,
            PasswordHasher::from_config(config),
            LoginPolicy::from_config(config),
            LoginLimits::default(),
            Arc::new(SystemClock),
        )
    }

    /// The hasher logins use; pass it to user management and roster imports so every
    /// hash in the process shares one concurrency limit.
    pub fn hasher(&self) -> &PasswordHasher {
        &self.hasher
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn policy(&self) -> LoginPolicy {
        self.policy
    }

    /// Checks the password and opens a new session (a new token on every login; the web
    /// layer drops the old cookie). An unknown username costs a dummy verification, so
    /// the answer takes as long as for a real account. Throttled per account and per
    /// address (see `ratelimit`).
    pub async fn login(
        &self,
        username: &str,
        password: &str,
        remote_addr: IpAddr,
    ) -> Result<LoginOk, LoginError> {
        // A name no account can have and no audit row should hold (a NUL, which
        // PostgreSQL refuses to store, or pages of text) is refused before anything else.
        check_text("the username", username.trim(), MAX_AUDITED_USERNAME_CHARS, Lines::One)
            .map_err(|m| LoginError::Internal(CoreError::InvalidRequest(m)))?;
        let attempt = self
            .limiter
            .begin(username, remote_addr, self.clock.now_ms())
            .map_err(|retry_after_secs| LoginError::RateLimited { retry_after_secs })?;
        let account = match normalize_username(username) {
            Ok(name) => self.store.user_credentials(&name).await?,
            Err(_) => None,
        };
        let verified = match &account {
            Some((_, stored)) => self.hasher.verify(password, stored).await?,
            None => {
                self.hasher.verify_dummy(password).await?;
                false
            }
        };
        let now = self.clock.now_ms();
        let user = match account {
            Some((user, _)) if verified && !user.disabled => user,
            _ => {
                attempt.failed(now);
                crate::metrics::METRICS.login_failures.inc();
                let attempted: String = username
                    .trim()
                    .chars()
                    .take(MAX_AUDITED_USERNAME_CHARS)
                    .collect();
                let address = remote_addr.to_string();
                self.store
                    .audit("anonymous", "login.failure", &attempted, &address)
                    .await?;
                return Err(LoginError::WrongCredentials);
            }
        };
        attempt.succeeded();
        let ok = self.open_session(user, remote_addr, now).await?;
        let name = &ok.user.username;
        self.store
            .audit(name, "login.success", name, &remote_addr.to_string())
            .await?;
        Ok(ok)
    }

    /// The user changes their own password, proving they know the current one. Every
    /// session of the user ends (on all devices); the returned one replaces the caller's.
    /// Wrong current passwords count toward the login limit of the account.
    pub async fn change_own_password(
        &self,
        user_id: UserId,
        current_password: &str,
        new_password: &str,
        remote_addr: IpAddr,
    ) -> Result<LoginOk, CoreError> {
        check_new_password(new_password).map_err(CoreError::InvalidRequest)?;
        if new_password == current_password {
            return Err(CoreError::InvalidRequest(
                "The new password must differ from the current one.".to_string(),
            ));
        }
        let (user, stored) = match self.store.user_by_id(user_id).await? {
            Some(user) if !user.disabled => match self.store.password_hash_of(user_id).await? {
                Some(stored) => (user, stored),
                None => return Err(CoreError::NotFound(format!("no user with id {user_id}"))),
            },
            _ => return Err(CoreError::NotFound(format!("no user with id {user_id}"))),
        };
        let attempt = self
            .limiter
            .begin(&user.username, remote_addr, self.clock.now_ms())
            .map_err(|secs| {
                CoreError::from(LoginError::RateLimited {
                    retry_after_secs: secs,
                })
            })?;
        if !self.hasher.verify(current_password, &stored).await? {
            attempt.failed(self.clock.now_ms());
            return Err(CoreError::Auth(
                "The current password is wrong.".to_string(),
            ));
        }
        attempt.succeeded();
        let new_hash = self.hasher.hash(new_password).await?;
        self.store
            .replace_password(user_id, &new_hash, false)
            .await?;
        let name = &user.username;
        self.store
            .audit(name, "password.change", name, "changed by the user")
            .await?;
        let user = User {
            must_change_password: false,
            ..user
        };
        self.open_session(user, remote_addr, self.clock.now_ms())
            .await
    }

    async fn open_session(
        &self,
        user: User,
        remote_addr: IpAddr,
        now: i64,
    ) -> Result<LoginOk, CoreError> {
        self.store
            .delete_expired_logins(now, now - self.policy.idle_ms)
            .await?;
        let token = new_session_token()?;
        let expires_at_ms = now + self.policy.absolute_ms;
        let address = remote_addr.to_string();
        self.store
            .insert_login(user.id, &token_sha256(&token), now, expires_at_ms, &address)
            .await?;
        Ok(LoginOk {
            token,
            user,
            expires_at_ms,
        })
    }
}
