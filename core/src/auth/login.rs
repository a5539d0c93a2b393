use std::net::IpAddr;
use std::sync::Arc;

use super::external::ExternalSignInError;
use super::password::{check_new_password, PasswordHasher};
use super::ratelimit::{Attempt, LoginLimiter, LoginLimits};
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
    /// API tokens resolved a moment ago, by the same rule as login sessions.
    pub(super) token_callers: super::callers::RecentCallers<super::api_tokens::TokenCaller>,
    /// Checks the form's names and passwords that no local password matches (LDAP).
    pub(super) directory: Option<Arc<dyn super::external::PasswordDirectory>>,
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
    /// The directory knows the person, but the portal will not sign them in (an account
    /// of that name is someone else's, the account is disabled); the words say why.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Internal(#[from] CoreError),
}

impl From<LoginError> for CoreError {
    fn from(e: LoginError) -> Self {
        match e {
            LoginError::Internal(inner) => inner,
            LoginError::Refused(words) => CoreError::NoPermission(words),
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
            token_callers: Default::default(),
            directory: None,
        }
    }

    /// The same authenticator, also asking `directory` about names without a local password.
    pub fn with_directory(mut self, directory: Arc<dyn super::external::PasswordDirectory>) -> Self {
        self.directory = Some(directory);
        self
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
    ///
    /// With a directory (LDAP), a name and password that no local password matches are
    /// then checked there: a person it vouches for signs in as their provider account
    /// (`sign_in_external`), and its "wrong" counts as a failed attempt like a local one.
    /// A local account is never signed into by a directory password unless the
    /// directory's identity was attached to it.
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
        // An account made for a campus provider has no password here until an admin gives one.
        let account = match normalize_username(username) {
            Ok(name) => self.store.user_credentials(&name).await?.filter(|(_, hash)| !hash.is_empty()),
            Err(_) => None,
        };
        let verified = match &account {
            Some((_, stored)) => self.hasher.verify(password, stored).await?,
            None => {
                self.hasher.verify_dummy(password).await?;
                false
            }
        };
        if !verified {
            if let Some(directory) = &self.directory {
                // Unreachable: an error for the person, and no failure counted against
                // them, unless the name is a local account's and its password was wrong
                // (the directory being down must not lift the throttle on local passwords).
                let checked = match directory.check(username, password).await {
                    Ok(checked) => checked,
                    Err(e) => {
                        if account.is_some() {
                            self.count_failure(attempt, username, remote_addr).await?;
                        }
                        return Err(LoginError::Internal(e));
                    }
                };
                if let Some(identity) = checked {
                    return match self.sign_in_external(&identity, directory.roles(), None, remote_addr).await {
                        Ok(ok) => {
                            attempt.succeeded();
                            Ok(ok)
                        }
                        Err(ExternalSignInError::Internal(e)) => Err(LoginError::Internal(e)),
                        // Neither success nor failure: the directory's password for a name
                        // that is a local account's must not reset that account's count.
                        Err(refused) => {
                            if !matches!(refused, ExternalSignInError::Disabled) {
                                // (a disabled account's refusal is audited where it is found)
                                let detail = format!("{}: {refused} (from {remote_addr})", identity.provider);
                                self.store.audit("anonymous", "login.failure", &identity.username, &detail).await?;
                            }
                            Err(LoginError::Refused(refused.to_string()))
                        }
                    };
                }
            }
        }
        let now = self.clock.now_ms();
        let user = match account {
            Some((user, _)) if verified && !user.disabled => user,
            _ => {
                self.count_failure(attempt, username, remote_addr).await?;
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

    /// A failed login: counted against the account and address, and audited.
    async fn count_failure(&self, attempt: Attempt, username: &str, remote_addr: IpAddr) -> Result<(), LoginError> {
        attempt.failed(self.clock.now_ms());
        crate::metrics::METRICS.login_failures.inc();
        let attempted: String = username.trim().chars().take(MAX_AUDITED_USERNAME_CHARS).collect();
        self.store.audit("anonymous", "login.failure", &attempted, &remote_addr.to_string()).await?;
        Ok(())
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
                Some(stored) if stored.is_empty() => {
                    return Err(CoreError::InvalidRequest(
                        "This account signs in through your campus sign-in and has no password here.".to_string(),
                    ))
                }
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

    /// A login session for an account a trusted party vouched for (an LMS launch).
    pub async fn open_session_for(&self, user: User, remote_addr: IpAddr) -> Result<LoginOk, CoreError> {
        let ok = self.open_session(user, remote_addr, self.clock.now_ms()).await?;
        let name = &ok.user.username;
        self.store.audit(name, "login.success", name, &format!("lms from {remote_addr}")).await?;
        Ok(ok)
    }

    pub(super) async fn open_session(
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
