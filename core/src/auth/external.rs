//! Signing in as someone a campus provider vouches for (OpenID Connect, LDAP, the web
//! server's header): the account is found by the identity, made at first sign-in, and
//! given the roles the provider's groups say. An identity is never attached to an account
//! because a name or an e-mail matches.

use std::net::IpAddr;

use super::login::{Authenticator, LoginOk};
use super::validate::{check_display_name, normalize_username};
use crate::config::GroupRoles;
use crate::store::{NewUserRow, Store, User};
use crate::{CoreError, UserId};

/// A person as a provider describes them after checking who they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalIdentity {
    /// `oidc:NAME`, `ldap`, `header`, `lti:…`
    pub provider: String,
    /// The provider's lasting name for the person (OIDC `sub`, the LDAP DN).
    pub subject: String,
    /// The account name the provider suggests (an e-mail gives its part before `@`).
    pub username: String,
    pub display_name: String,
    pub email: Option<String>,
    pub groups: Vec<String>,
}

/// A directory that checks a name and password typed into the portal's own form (LDAP).
#[async_trait::async_trait]
pub trait PasswordDirectory: Send + Sync {
    /// The person these credentials belong to; None when the directory says they are
    /// wrong (or the person is locked out). An unreachable directory is an error.
    async fn check(&self, username: &str, password: &str) -> Result<Option<ExternalIdentity>, CoreError>;
    /// What the directory's groups give.
    fn roles(&self) -> &GroupRoles;
}

/// How a sign-in through a provider ended badly, in words for the person.
#[derive(Debug, thiserror::Error)]
pub enum ExternalSignInError {
    #[error("An account named “{0}” already exists here. Sign in to it with its password and attach this sign-in from your account page, or ask an administrator to attach it.")]
    NameTaken(String),
    #[error("This sign-in is already attached to another account.")]
    AttachedElsewhere,
    #[error("The provider did not say who you are in a form this portal can use: {0}")]
    Unusable(String),
    #[error("This account is disabled. Ask an administrator.")]
    Disabled,
    #[error(transparent)]
    Internal(#[from] CoreError),
}

impl From<ExternalSignInError> for CoreError {
    fn from(e: ExternalSignInError) -> Self {
        match e {
            ExternalSignInError::Internal(inner) => inner,
            ExternalSignInError::NameTaken(_) | ExternalSignInError::AttachedElsewhere => CoreError::Conflict(e.to_string()),
            other => CoreError::Auth(other.to_string()),
        }
    }
}

/// The account name a provider's claim gives: an e-mail's local part, lowercase.
pub fn account_name_from(claim: &str) -> Result<String, String> {
    let local = claim.trim().split('@').next().unwrap_or("");
    normalize_username(local)
}

impl Authenticator {
    /// Opens a login session for the person `identity` names: their account (made now if
    /// this is their first sign-in), or, with `link_to`, the signed-in account that is
    /// attaching this identity to itself. Roles follow `roles` and the identity's groups.
    pub async fn sign_in_external(
        &self,
        identity: &ExternalIdentity,
        roles: &GroupRoles,
        link_to: Option<UserId>,
        remote_addr: IpAddr,
    ) -> Result<LoginOk, ExternalSignInError> {
        let store = &self.store;
        let user = match (store.user_of_identity(&identity.provider, &identity.subject).await?, link_to) {
            (Some(user), Some(linking)) if user.id != linking => return Err(ExternalSignInError::AttachedElsewhere),
            (Some(user), _) => user,
            (None, Some(linking)) => {
                let user = store
                    .user_by_id(linking)
                    .await?
                    .ok_or_else(|| CoreError::NotFound("the account to attach to is gone".to_string()))?;
                store.attach_identity(&identity.provider, &identity.subject, user.id).await?;
                store
                    .audit(&user.username, "identity.attach", &user.username, &format!("{} {}", identity.provider, identity.subject))
                    .await?;
                user
            }
            (None, None) => self.first_sign_in(identity).await?,
        };
        if user.disabled {
            store
                .audit("anonymous", "login.failure", &user.username, &format!("{}: the account is disabled", identity.provider))
                .await?;
            return Err(ExternalSignInError::Disabled);
        }
        apply_group_roles(store, &user, &identity.provider, roles, &identity.groups).await?;
        store.touch_identity(&identity.provider, &identity.subject).await?;
        let user = store.user_by_id(user.id).await?.unwrap_or(user);
        let ok = self.open_session(user, remote_addr, self.clock.now_ms()).await?;
        let name = &ok.user.username;
        store
            .audit(name, "login.success", name, &format!("{} from {remote_addr}", identity.provider))
            .await?;
        Ok(ok)
    }

    /// The account made for a person signing in for the first time; a name already taken
    /// is refused and audited.
    async fn first_sign_in(&self, identity: &ExternalIdentity) -> Result<User, ExternalSignInError> {
        match self.account_for_new_identity(identity, "at first sign-in").await {
            Err(ExternalSignInError::NameTaken(username)) => {
                self.audit_name_taken(identity, &username).await?;
                Err(ExternalSignInError::NameTaken(username))
            }
            other => other,
        }
    }

    /// The account made for an identity no account has yet (every provider's first
    /// sign-in, the web server's header included): named after the provider's name for
    /// the person, with its display name and e-mail when usable, and no password of its
    /// own. A name already taken is refused (`NameTaken`, not audited here), never joined.
    /// `created`: the `user.create` audit row's detail.
    pub(super) async fn account_for_new_identity(&self, identity: &ExternalIdentity, created: &str) -> Result<User, ExternalSignInError> {
        let store = &self.store;
        let username = account_name_from(&identity.username).map_err(ExternalSignInError::Unusable)?;
        let display_name = check_display_name(&identity.display_name).unwrap_or_else(|_| username.clone());
        let email = identity.email.as_deref().map(str::trim).filter(|e| e.contains('@') && e.len() <= 254);
        let row = NewUserRow {
            username: &username,
            display_name: &display_name,
            email,
            password_hash: "",
            is_admin: false,
            must_change_password: false,
        };
        let user = match store.insert_user_with_identity(&row, &identity.provider, &identity.subject).await {
            Ok(user) => user,
            Err(CoreError::Conflict(_)) => {
                // The same person signing in twice at once: the other sign-in made it.
                return match store.user_of_identity(&identity.provider, &identity.subject).await? {
                    Some(user) => Ok(user),
                    None => Err(ExternalSignInError::NameTaken(username)),
                };
            }
            Err(e) => return Err(e.into()),
        };
        store.audit(&identity.provider, "user.create", &username, created).await?;
        Ok(user)
    }

    /// The audit row of a first sign-in refused because `username` is taken: what an
    /// administrator needs to attach this identity by hand.
    pub(super) async fn audit_name_taken(&self, identity: &ExternalIdentity, username: &str) -> Result<(), CoreError> {
        let detail = format!("{} subject {}: the name is taken", identity.provider, identity.subject);
        self.store.audit("anonymous", "login.failure", username, &detail).await?;
        Ok(())
    }
}

/// Gives and takes back what `provider`'s groups decide: the administrator flag (when
/// the provider names admin groups) and the role in each course it maps. What was given
/// by hand is left alone.
pub async fn apply_group_roles(
    store: &Store,
    user: &User,
    provider: &str,
    roles: &GroupRoles,
    groups: &[String],
) -> Result<(), CoreError> {
    let who = &user.username;
    if !roles.admin_groups.is_empty() {
        let admin = roles.makes_admin(groups);
        if store.set_admin_by_groups(user.id, provider, admin).await? {
            let action = if admin { "user.admin.grant" } else { "user.admin.revoke" };
            store.audit(provider, action, who, "by group membership").await?;
        }
    }
    for mapping in &roles.courses {
        let Some(course) = store.course_by_code(&mapping.course).await? else {
            tracing::warn!(course = %mapping.course, provider, "course_groups names a course that does not exist; create it to use the mapping");
            continue;
        };
        let changed = match GroupRoles::role_in(mapping, groups) {
            Some(role) => store.grant_membership(course.id, user.id, role, provider).await?.then(|| role.as_str()),
            None => store.revoke_granted_membership(course.id, user.id, provider).await?.then_some("removed"),
        };
        if let Some(what) = changed {
            store.audit(provider, "course.member.groups", who, &format!("{}: {what}", course.code)).await?;
        }
    }
    Ok(())
}
