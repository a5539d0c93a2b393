//! Signing in through the web server in front (`[header_sign_in]`): Apache with
//! mod_auth_mellon, or a Shibboleth SP, signs the person in and names them in a header of
//! every request it passes on. The portal opens no login session for that: each request
//! is its own sign-in. So the caller a set of header values gave is kept in memory a
//! moment (as [`super::callers`] keeps a session's), the account is written to only when
//! the groups change what it may do, and its identity is marked as seen once a minute.
//!
//! Whether the header is believed at all (only from `server.trusted_proxies`) is the web
//! layer's decision; this file trusts the identity it is given.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::callers::FRESH_MS;
use super::external::{apply_group_roles, ExternalIdentity, ExternalSignInError};
use super::guard::Caller;
use super::login::Authenticator;
use super::logins::caller_of;
use crate::config::GroupRoles;
use crate::CoreError;

/// The longest user, name or e-mail header the portal takes, in bytes.
pub const MAX_HEADER_VALUE_BYTES: usize = 256;
/// The longest groups header (a person may be in many groups), in bytes.
pub const MAX_GROUPS_HEADER_BYTES: usize = 16 * 1024;

/// A header's value as the portal takes it, trimmed: UTF-8 without control characters,
/// at most `most` bytes. The refusal says what is wrong, to follow the header's name.
pub fn header_text(raw: &[u8], most: usize) -> Result<&str, String> {
    if raw.len() > most {
        return Err(format!("is longer than {most} bytes"));
    }
    let text = std::str::from_utf8(raw).map_err(|_| "is not UTF-8 text".to_string())?;
    if text.chars().any(char::is_control) {
        return Err("contains a control character".to_string());
    }
    Ok(text.trim())
}

/// An identity's `last_sign_in_at` is written at most this often.
const TOUCH_EVERY_MS: i64 = 60_000;
/// Answers (and identities seen) kept at most; stale ones go first when it is reached.
const MOST: usize = 8192;

/// What a set of header values gave: a caller, or a refusal in the person's words.
#[derive(Clone)]
enum Answer {
    Caller(Caller),
    /// `conflict`: the name belongs to another account (else the header is unusable).
    Refused { conflict: bool, words: String },
}

impl Answer {
    fn into_result(self) -> Result<Caller, CoreError> {
        match self {
            Answer::Caller(caller) => Ok(caller),
            Answer::Refused { conflict: true, words } => Err(CoreError::Conflict(words)),
            Answer::Refused { conflict: false, words } => Err(CoreError::Auth(words)),
        }
    }
}

#[derive(Default)]
struct Recent {
    /// The header values (and the database) → (access changes seen, when, the answer).
    answers: HashMap<String, (u64, i64, Answer)>,
    /// The identity (and the database) → when it was last marked as seen, or its
    /// refusal last written to the audit log.
    noted: HashMap<String, i64>,
}

/// Shared by every authenticator of the process; keys carry the database's (redacted)
/// URL, so two portals in one process (tests) never answer from each other's.
fn recent() -> &'static Mutex<Recent> {
    static RECENT: OnceLock<Mutex<Recent>> = OnceLock::new();
    RECENT.get_or_init(Default::default)
}

fn lock() -> std::sync::MutexGuard<'static, Recent> {
    recent().lock().unwrap_or_else(|p| p.into_inner())
}

impl Authenticator {
    /// The caller the web server in front vouches for: the account of the identity
    /// (provider `header`, subject: the user header's value), made at first sight with
    /// no password of its own; a name another account already has is refused
    /// (`Conflict`, never joined), and a header no account name can come from too
    /// (`Auth`). A disabled account is Anonymous. The groups give and take back roles as
    /// `roles` says. No login session is opened: the answer for the same header values
    /// is reused for [`FRESH_MS`] while no write of this process changed anyone's access.
    pub async fn header_caller(&self, identity: &ExternalIdentity, roles: &GroupRoles) -> Result<Caller, CoreError> {
        let key = format!(
            "{:?}",
            (
                self.store.url_redacted(),
                &identity.provider,
                &identity.subject,
                &identity.username,
                &identity.display_name,
                &identity.email,
                &identity.groups,
            )
        );
        let changes = self.store.access_changes();
        let now = self.clock.now_ms();
        {
            let recent = lock();
            if let Some((seen, at, answer)) = recent.answers.get(&key) {
                if *seen == changes && (0..FRESH_MS).contains(&(now - at)) {
                    return answer.clone().into_result();
                }
            }
        }
        let answer = match self.resolve_header_caller(identity, roles, now).await {
            Ok(caller) => Answer::Caller(caller),
            Err(ExternalSignInError::Internal(e)) => return Err(e),
            Err(refused) => Answer::Refused {
                conflict: matches!(refused, ExternalSignInError::NameTaken(_) | ExternalSignInError::AttachedElsewhere),
                words: refused.to_string(),
            },
        };
        {
            let mut recent = lock();
            if recent.answers.len() >= MOST {
                recent.answers.retain(|_, (seen, at, _)| *seen == changes && now - *at < FRESH_MS);
            }
            if recent.answers.len() >= MOST {
                recent.answers.clear();
            }
            recent.answers.insert(key, (changes, now, answer.clone()));
        }
        answer.into_result()
    }

    async fn resolve_header_caller(
        &self,
        identity: &ExternalIdentity,
        roles: &GroupRoles,
        now: i64,
    ) -> Result<Caller, ExternalSignInError> {
        let store = &self.store;
        let (provider, subject) = (identity.provider.as_str(), identity.subject.as_str());
        let user = match store.user_of_identity(provider, subject).await? {
            Some(user) => user,
            None => match self.account_for_new_identity(identity, "at first sign-in through the web server").await {
                Ok(user) => user,
                Err(refused @ (ExternalSignInError::NameTaken(_) | ExternalSignInError::Unusable(_))) => {
                    // Every request is a sign-in here: written at most once a minute.
                    if self.note_due(subject, now) {
                        tracing::warn!(provider, subject, reason = %refused, "the web server's header names someone this portal refuses");
                        match &refused {
                            ExternalSignInError::NameTaken(username) => self.audit_name_taken(identity, username).await?,
                            _ => {
                                store
                                    .audit("anonymous", "login.failure", &identity.username, &format!("{provider}: {refused}"))
                                    .await?;
                            }
                        }
                    }
                    return Err(refused);
                }
                Err(e) => return Err(e),
            },
        };
        if user.disabled {
            return Ok(Caller::Anonymous);
        }
        let before = store.access_changes();
        apply_group_roles(store, &user, provider, roles, &identity.groups).await?;
        // The groups changed the administrator flag: read the account again.
        let user = if store.access_changes() != before {
            store.user_by_id(user.id).await?.unwrap_or(user)
        } else {
            user
        };
        if self.note_due(subject, now) {
            store.touch_identity(provider, subject).await?;
        }
        Ok(caller_of(store, &user).await?)
    }

    /// Whether the identity's last note (seen, or refused) is a minute old; notes it now.
    fn note_due(&self, subject: &str, now: i64) -> bool {
        let key = format!("{:?}", (self.store.url_redacted(), subject));
        let mut recent = lock();
        if recent.noted.get(&key).is_some_and(|at| (0..TOUCH_EVERY_MS).contains(&(now - at))) {
            return false;
        }
        if recent.noted.len() >= MOST {
            recent.noted.retain(|_, at| now - *at < TOUCH_EVERY_MS);
        }
        if recent.noted.len() >= MOST {
            recent.noted.clear();
        }
        recent.noted.insert(key, now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::store::Store;

    async fn authenticator() -> (tempfile::TempDir, Authenticator) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("portal.db").display());
        let store = Store::connect(&url, 2).await.unwrap();
        store.migrate().await.unwrap();
        let auth = Authenticator::from_config(store, &Config::default());
        (dir, auth)
    }

    fn person(subject: &str, groups: &[&str]) -> ExternalIdentity {
        ExternalIdentity {
            provider: "header".to_string(),
            subject: subject.to_string(),
            username: subject.to_string(),
            display_name: String::new(),
            email: None,
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    #[test]
    fn header_values_are_short_plain_text() {
        assert_eq!(header_text(b"  ann@campus.edu ", MAX_HEADER_VALUE_BYTES), Ok("ann@campus.edu"));
        assert_eq!(header_text("Zoë".as_bytes(), MAX_HEADER_VALUE_BYTES), Ok("Zoë"));
        assert!(header_text(&[b'a'; 257], MAX_HEADER_VALUE_BYTES).unwrap_err().contains("256 bytes"));
        assert!(header_text(b"ann\tbo", MAX_HEADER_VALUE_BYTES).unwrap_err().contains("control"));
        assert!(header_text(b"\xff\xfe", MAX_HEADER_VALUE_BYTES).unwrap_err().contains("UTF-8"));
    }

    #[tokio::test]
    async fn first_sight_makes_the_account_and_later_requests_find_it() {
        let (_dir, auth) = authenticator().await;
        let roles = GroupRoles { admin_groups: vec!["gpu-admins".into()], courses: vec![] };
        // The portal's own administrator: the groups never take the last one's right.
        let root = crate::store::NewUserRow {
            username: "root",
            display_name: "root",
            email: None,
            password_hash: "x",
            is_admin: true,
            must_change_password: false,
        };
        auth.store().insert_user(&root).await.unwrap();
        let Caller::User { id, username, is_admin, .. } = auth.header_caller(&person("ann@campus.edu", &[]), &roles).await.unwrap() else {
            panic!("a caller")
        };
        assert_eq!((username.as_str(), is_admin), ("ann", false));
        assert!(!auth.store().has_local_password(id).await.unwrap());
        // The same values a moment later: from memory.
        let again = auth.header_caller(&person("ann@campus.edu", &[]), &roles).await.unwrap();
        assert!(matches!(again, Caller::User { id: same, .. } if same == id));
        // Other groups are other values: resolved again, and they make her an administrator.
        let admin = auth.header_caller(&person("ann@campus.edu", &["gpu-admins"]), &roles).await.unwrap();
        assert!(matches!(admin, Caller::User { id: same, is_admin: true, .. } if same == id));
        let back = auth.header_caller(&person("ann@campus.edu", &[]), &roles).await.unwrap();
        assert!(matches!(back, Caller::User { is_admin: false, .. }), "leaving the group takes it back: {back:?}");
    }

    #[tokio::test]
    async fn a_name_of_another_account_is_refused_and_a_disabled_account_is_anonymous() {
        let (_dir, auth) = authenticator().await;
        let roles = GroupRoles::default();
        auth.header_caller(&person("bo", &[]), &roles).await.unwrap();
        // `bo@elsewhere` would be `bo` too: never joined to the first.
        let err = auth.header_caller(&person("bo@elsewhere.edu", &[]), &roles).await.unwrap_err();
        assert!(matches!(&err, CoreError::Conflict(words) if words.contains("already exists")), "{err}");
        let err = auth.header_caller(&person("!!!", &[]), &roles).await.unwrap_err();
        assert!(matches!(err, CoreError::Auth(_)), "{err}");

        let user = auth.store().user_of_identity("header", "bo").await.unwrap().unwrap();
        crate::auth::set_disabled(auth.store(), user.id, true, "test").await.unwrap();
        assert_eq!(auth.header_caller(&person("bo", &[]), &roles).await.unwrap(), Caller::Anonymous);
    }
}
