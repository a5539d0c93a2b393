//! Personal access tokens for scripts and for the JupyterHub-compatible API. A token acts
//! for its owner, never beyond the owner's own rights (the one guard still decides), and
//! only within its scopes. Only the SHA-256 is stored; the token is shown once.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use super::guard::Caller;
use super::login::Authenticator;
use super::logins::caller_of;
use super::tokens::{random_bytes, token_sha256};
use super::validate::{check_text, Lines};
use crate::store::{ApiTokenRow, NewApiToken, Role};
use crate::{CoreError, UserId};

/// Every token starts with this, so a leaked one is easy to recognise (and to search for).
pub const API_TOKEN_PREFIX: &str = "shp_";
const API_TOKEN_LEN: usize = 4 + 43;
/// The choices of lifetime, in days, a token may have.
pub const API_TOKEN_DAYS: [u32; 4] = [7, 30, 90, 365];
/// Tokens one person may hold at once.
pub const MAX_API_TOKENS: i64 = 50;
pub const MAX_TOKEN_NAME_CHARS: usize = 60;
/// `last_used_at` is written at most this often.
const TOUCH_EVERY_MS: i64 = 60_000;
const DAY_MS: i64 = 86_400_000;

/// What a token may be used for. Reads need `Read`; each kind of change its own scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Every read its owner may make.
    Read,
    /// Starting, keeping and stopping GPU sessions.
    Sessions,
    /// Rosters, course policy, bookings and extra hours of the courses its owner teaches.
    CourseManage,
    /// Accounts, courses, GPUs and draining: only for administrators.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::Read, Scope::Sessions, Scope::CourseManage, Scope::Admin];

    pub fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Sessions => "sessions",
            Scope::CourseManage => "course:manage",
            Scope::Admin => "admin",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Scope::Read => "read everything you can see in the pages",
            Scope::Sessions => "start, keep and stop your GPU sessions",
            Scope::CourseManage => "change rosters, policy and bookings of courses you teach",
            Scope::Admin => "manage accounts, courses and GPUs",
        }
    }

    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether `caller` could use this scope at all: a token is never offered more.
    pub fn fits(self, caller: &Caller) -> bool {
        let Caller::User { is_admin, memberships, .. } = caller else {
            return false;
        };
        match self {
            Scope::Read | Scope::Sessions => true,
            Scope::CourseManage => *is_admin || memberships.iter().any(|(_, r)| *r == Role::Instructor),
            Scope::Admin => *is_admin,
        }
    }
}

/// Scopes as stored: names separated by spaces, each once, in [`Scope::ALL`]'s order.
pub fn scopes_text(scopes: &[Scope]) -> String {
    let mut sorted = scopes.to_vec();
    sorted.sort();
    sorted.dedup();
    sorted.iter().map(|s| s.name()).collect::<Vec<_>>().join(" ")
}

pub fn scopes_of(text: &str) -> Vec<Scope> {
    text.split_whitespace().filter_map(Scope::parse).collect()
}

/// A request for a new token, as typed.
#[derive(Debug, Clone)]
pub struct TokenRequest {
    pub name: String,
    pub scopes: Vec<String>,
    /// One of [`API_TOKEN_DAYS`].
    pub days: u32,
    /// The token that asks for this one: the new token lasts no longer, and is revoked
    /// with it. Tokens made this way make no others.
    pub made_by: Option<TokenCaller>,
}

/// A token made now: the secret, shown once, and its row.
#[derive(Debug, Clone)]
pub struct NewToken {
    pub secret: String,
    pub row: ApiTokenRow,
}

/// A token presented with a request, resolved.
#[derive(Debug, Clone)]
pub struct TokenCaller {
    pub token_id: i64,
    pub caller: Caller,
    pub scopes: Vec<Scope>,
    pub expires_at_ms: Option<i64>,
    /// Made by another token (through the hub API).
    pub made_by_token: bool,
}

impl TokenCaller {
    pub fn allows(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }

    /// The owner as the guard should see them for a use of `scope`: an administrator
    /// reads as one with `read`, but changes anything as one only with `admin` (a
    /// `course:manage` token of an administrator manages the courses they teach, no more).
    pub fn caller_for(&self, scope: Scope) -> Caller {
        let mut caller = self.caller.clone();
        if let Caller::User { is_admin, .. } = &mut caller {
            *is_admin &= scope == Scope::Read || self.allows(Scope::Admin);
        }
        caller
    }
}

fn new_secret() -> Result<String, CoreError> {
    Ok(format!("{API_TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(random_bytes::<32>()?)))
}

/// The secret from an `Authorization` header: `Bearer X` or JupyterHub's `token X`.
pub fn token_from_authorization(header: &str) -> Option<&str> {
    let (kind, value) = header.trim().split_once(' ')?;
    let kind_ok = kind.eq_ignore_ascii_case("bearer") || kind.eq_ignore_ascii_case("token");
    let value = value.trim();
    (kind_ok && value.starts_with(API_TOKEN_PREFIX) && value.len() == API_TOKEN_LEN).then_some(value)
}

impl Authenticator {
    /// Makes a token for the caller. The name, scopes and lifetime are checked; a scope
    /// the caller could never use is refused, not silently dropped.
    pub async fn create_api_token(&self, caller: &Caller, request: &TokenRequest) -> Result<NewToken, CoreError> {
        let Caller::User { id, username, .. } = caller else {
            return Err(CoreError::Auth("Please log in.".into()));
        };
        let name = request.name.trim();
        if name.is_empty() {
            return Err(CoreError::InvalidRequest("Give the token a name that says what it is for.".into()));
        }
        check_text("the token's name", name, MAX_TOKEN_NAME_CHARS, Lines::One).map_err(CoreError::InvalidRequest)?;
        let mut scopes = Vec::new();
        for raw in &request.scopes {
            let scope = Scope::parse(raw.trim()).ok_or_else(|| {
                CoreError::InvalidRequest(format!(
                    "There is no scope {}; the scopes are {}.",
                    super::validate::excerpt(raw),
                    scopes_text(&Scope::ALL).replace(' ', ", ")
                ))
            })?;
            if !scope.fits(caller) {
                return Err(CoreError::NoPermission(format!(
                    "Your account cannot {}, so a token cannot have the {} scope.",
                    scope.describe(),
                    scope.name()
                )));
            }
            scopes.push(scope);
        }
        if scopes.is_empty() {
            return Err(CoreError::InvalidRequest("Choose at least one scope.".into()));
        }
        if !API_TOKEN_DAYS.contains(&request.days) {
            return Err(CoreError::InvalidRequest(format!(
                "A token lasts 7, 30, 90 or 365 days, not {}.",
                request.days
            )));
        }
        let now = self.clock.now_ms();
        if self.store.count_live_api_tokens(*id, now).await? >= MAX_API_TOKENS {
            return Err(CoreError::Conflict(format!(
                "You hold {MAX_API_TOKENS} tokens already; revoke one you no longer use first."
            )));
        }
        let mut expires = now + i64::from(request.days) * DAY_MS;
        if let Some(maker) = &request.made_by {
            if maker.made_by_token {
                return Err(CoreError::NoPermission("A token made by a token cannot make tokens.".into()));
            }
            expires = maker.expires_at_ms.map_or(expires, |cap| expires.min(cap));
        }
        let parent = request.made_by.as_ref().map(|m| m.token_id);
        let made = self.insert_token(*id, name, &scopes, now, Some(expires), parent).await?;
        self.store
            .audit(username, "api_token.create", username, &format!("{name} ({})", made.row.scopes))
            .await?;
        Ok(made)
    }

    async fn insert_token(
        &self,
        user_id: UserId,
        name: &str,
        scopes: &[Scope],
        now: i64,
        expires_at_ms: Option<i64>,
        parent_id: Option<i64>,
    ) -> Result<NewToken, CoreError> {
        let secret = new_secret()?;
        let scopes = scopes_text(scopes);
        let id = self
            .store
            .insert_api_token(&NewApiToken {
                user_id,
                name,
                token_sha256: &token_sha256(&secret),
                scopes: &scopes,
                now_ms: now,
                expires_at_ms,
                parent_id,
            })
            .await?;
        let row = ApiTokenRow {
            id,
            user_id,
            name: name.to_string(),
            scopes,
            created_at: now,
            expires_at: expires_at_ms,
            last_used_at: None,
            last_used_from: None,
            revoked_at: None,
            parent_id,
        };
        Ok(NewToken { secret, row })
    }

    pub async fn api_tokens_of(&self, user_id: UserId) -> Result<Vec<ApiTokenRow>, CoreError> {
        self.store.api_tokens_of_user(user_id).await
    }

    /// Revokes one of the caller's own tokens; anyone else's is "no such token".
    pub async fn revoke_api_token(&self, caller: &Caller, token_id: i64) -> Result<(), CoreError> {
        let Caller::User { id, username, .. } = caller else {
            return Err(CoreError::Auth("Please log in.".into()));
        };
        match self.store.revoke_api_token(*id, token_id, self.clock.now_ms()).await? {
            Some(name) => {
                self.store.audit(username, "api_token.revoke", username, &name).await?;
                Ok(())
            }
            None => Err(CoreError::NotFound("You have no such token.".into())),
        }
    }

    /// Who a presented token acts for, or None when it is unknown, revoked, expired, or
    /// its account is disabled. Resolved a moment ago (`callers::FRESH_MS`, no access
    /// change since: a revoke is one) it is answered from memory.
    pub async fn token_caller(&self, secret: &str, from: &str) -> Result<Option<TokenCaller>, CoreError> {
        if !secret.starts_with(API_TOKEN_PREFIX) || secret.len() != API_TOKEN_LEN {
            return Ok(None);
        }
        let changes = self.store.access_changes();
        let now = self.clock.now_ms();
        if let Some(known) = self.token_callers.get(secret, changes, now) {
            if known.expires_at_ms.is_none_or(|at| now < at) {
                return Ok(Some(known));
            }
        }
        let Some(presented) = self.store.api_token_by_sha256(&token_sha256(secret)).await? else {
            return Ok(None);
        };
        let token = &presented.token;
        let expired = token.expires_at.is_some_and(|at| now >= at);
        if token.revoked_at.is_some() || expired || presented.user.disabled {
            return Ok(None);
        }
        if token.last_used_at.is_none_or(|at| now - at >= TOUCH_EVERY_MS) {
            // A busy database does not turn a valid token away.
            if let Err(e) = self.store.touch_api_token(token.id, now, from).await {
                tracing::warn!(error = %e, "could not note a token's last use");
            }
        }
        let resolved = TokenCaller {
            token_id: token.id,
            caller: caller_of(&self.store, &presented.user).await?,
            scopes: scopes_of(&token.scopes),
            expires_at_ms: token.expires_at,
            made_by_token: token.parent_id.is_some(),
        };
        self.token_callers.put(secret, changes, now, &resolved);
        Ok(Some(resolved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_travel_as_sorted_unique_names() {
        let text = scopes_text(&[Scope::Admin, Scope::Read, Scope::Admin]);
        assert_eq!(text, "read admin");
        assert_eq!(scopes_of(&text), vec![Scope::Read, Scope::Admin]);
        assert_eq!(scopes_of("read nonsense course:manage"), vec![Scope::Read, Scope::CourseManage]);
    }

    #[test]
    fn only_well_formed_secrets_are_taken_from_the_header() {
        let secret = new_secret().unwrap();
        assert_eq!(token_from_authorization(&format!("Bearer {secret}")), Some(secret.as_str()));
        assert_eq!(token_from_authorization(&format!("token {secret}")), Some(secret.as_str()));
        assert_eq!(token_from_authorization(&format!("Basic {secret}")), None);
        assert_eq!(token_from_authorization("Bearer shp_short"), None);
        assert_eq!(token_from_authorization(&format!("Bearer x{}", &secret[1..])), None);
    }

    #[test]
    fn a_student_is_never_offered_admin_or_course_scopes() {
        let student = Caller::User {
            id: UserId(2),
            username: "s".into(),
            is_admin: false,
            must_change_password: false,
            memberships: vec![(crate::CourseId(1), Role::Student)],
        };
        assert!(Scope::Read.fits(&student) && Scope::Sessions.fits(&student));
        assert!(!Scope::CourseManage.fits(&student) && !Scope::Admin.fits(&student));
    }
}
