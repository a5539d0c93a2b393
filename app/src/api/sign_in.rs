//! The ways in besides a local password, as the sign-in and account pages show them.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// A button that signs in through an OpenID Connect provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderButton {
    pub name: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInChoices {
    pub providers: Vec<ProviderButton>,
    /// The password form also takes the campus directory's (LDAP) names and passwords.
    pub directory: bool,
    /// The web server in front signs people in (`[header_sign_in]`).
    pub web_server: bool,
}

/// An identity attached to the signed-in account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachedSignIn {
    pub source: String,
    pub last_sign_in_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountSignIns {
    pub has_password: bool,
    pub attached: Vec<AttachedSignIn>,
    /// Providers this account may still attach.
    pub attachable: Vec<ProviderButton>,
}

/// The words for `/login?problem=WORD` (the answer of a provider's sign-in that failed).
pub fn problem_words(word: &str) -> Option<&'static str> {
    Some(match word {
        "stale" => "That sign-in link is stale or was used already. Start again below.",
        "other-browser" => "That sign-in was begun in another browser or window that this one cannot vouch for. Start again below.",
        "refused" => "The sign-in service's answer did not pass the portal's checks. Start again below.",
        "denied" => "The sign-in service did not let you in.",
        "unavailable" => "The sign-in service cannot be reached right now. Try again in a minute, or sign in with a password.",
        "name-taken" => "An account with your name already exists here. Sign in to it with its password and attach your campus sign-in from the account page, or ask an administrator to attach it.",
        "attached-elsewhere" => "That campus sign-in is already attached to another account.",
        "unusable" => "The sign-in service did not say who you are in a form this portal can use. Ask the portal's administrators.",
        "disabled" => "This account is disabled. Ask an administrator.",
        _ => return None,
    })
}

#[server(endpoint = "sign_in_options")]
pub async fn sign_in_options() -> Result<SignInChoices, AppError> {
    let services = super::ssr::services()?;
    let sign_in = &services.config.sign_in;
    Ok(SignInChoices {
        providers: sign_in
            .oidc
            .iter()
            .map(|p| ProviderButton { name: p.name.clone(), label: p.button_label().to_string() })
            .collect(),
        directory: sign_in.ldap.url.is_some(),
        web_server: sign_in.header.user_header.is_some(),
    })
}

#[server(endpoint = "my_sign_ins")]
pub async fn my_sign_ins() -> Result<AccountSignIns, AppError> {
    use super::ssr::{require, services, Action, Caller};
    let Caller::User { id, .. } = require(Action::ViewOwnAccount).await? else {
        return Err(super::ssr::fail(http::StatusCode::UNAUTHORIZED, "Please sign in."));
    };
    let services = services()?;
    let identities = services.store.identities_of_user(id).await?;
    let platforms = services.store.lti_platforms().await?;
    let attachable = services
        .config
        .sign_in
        .oidc
        .iter()
        .filter(|p| !identities.iter().any(|i| i.provider == p.key()))
        .map(|p| ProviderButton { name: p.name.clone(), label: p.button_label().to_string() })
        .collect();
    Ok(AccountSignIns {
        has_password: services.store.has_local_password(id).await?,
        attached: identities
            .iter()
            .map(|i| AttachedSignIn { source: source_label(&services.config, &platforms, &i.provider), last_sign_in_ms: i.last_sign_in_at_ms })
            .collect(),
        attachable,
    })
}

/// What a stored provider key (`oidc:NAME`, `ldap`, `header`, `lti:ID`) is called on the
/// pages; an LMS by the name it is registered under now (`platforms`).
#[cfg(feature = "ssr")]
pub fn source_label(config: &slicehub_core::config::Config, platforms: &[slicehub_core::store::LtiPlatform], key: &str) -> String {
    match key {
        "ldap" => "Campus directory".to_string(),
        "header" => "Web server sign-in".to_string(),
        _ if key.starts_with("lti:") => match platforms.iter().find(|p| p.key() == key) {
            Some(platform) => format!("LMS ({})", platform.name),
            None => "LMS (removed)".to_string(),
        },
        _ => match key.strip_prefix("oidc:").and_then(|name| config.sign_in.oidc.iter().find(|p| p.name == name)) {
            Some(provider) => provider.button_label().to_string(),
            None => key.to_string(),
        },
    }
}

/// One way in and whether the portal can reach it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderHealth {
    pub kind: String,
    pub name: String,
    pub up: bool,
    /// For administrators: what was found (a reason when down).
    pub detail: String,
}

/// The configured providers checked now (each within 5 s): OpenID Connect discovery and
/// keys, the LDAP service account's bind, and how many LMS platforms are registered.
#[server(endpoint = "sign_in_status")]
pub async fn sign_in_status() -> Result<Vec<ProviderHealth>, AppError> {
    use super::ssr::{require, services, Action};
    use std::time::Duration;
    require(Action::ViewStatus).await?;
    let services = services()?;
    let limit = Duration::from_secs(5);
    let mut out = Vec::new();
    if let Some(providers) = use_context::<slicehub_sign_in::oidc::OidcProviders>() {
        for provider in providers.all() {
            let (up, detail) = match tokio::time::timeout(limit, provider.check()).await {
                Ok(Ok(())) => (true, format!("discovery and keys of {} read", provider.config.issuer)),
                Ok(Err(e)) => (false, e.to_string()),
                Err(_) => (false, format!("{} did not answer within 5 s", provider.config.issuer)),
            };
            out.push(ProviderHealth { kind: "OpenID Connect".into(), name: provider.config.button_label().to_string(), up, detail });
        }
    }
    if services.config.sign_in.ldap.url.is_some() {
        let (up, detail) = match slicehub_sign_in::ldap::LdapDirectory::new(&services.config.sign_in.ldap) {
            Ok(directory) => match tokio::time::timeout(limit, directory.probe()).await {
                Ok(Ok(found)) => (true, found),
                Ok(Err(why)) => (false, why),
                Err(_) => (false, "the directory did not answer within 5 s".to_string()),
            },
            Err(e) => (false, e.to_string()),
        };
        out.push(ProviderHealth { kind: "LDAP".into(), name: "Campus directory".into(), up, detail });
    }
    if services.config.sign_in.header.user_header.is_some() {
        let trusted = !services.config.server.trusted_proxies.is_empty();
        out.push(ProviderHealth {
            kind: "Web server".into(),
            name: "Header sign-in".into(),
            up: trusted,
            detail: if trusted { "believed from server.trusted_proxies".into() } else { "server.trusted_proxies is empty: the header is believed from no one".into() },
        });
    }
    let platforms = services.store.lti_platforms().await?;
    if !platforms.is_empty() {
        let names: Vec<String> = platforms.into_iter().map(|p| p.name).collect();
        out.push(ProviderHealth { kind: "LMS".into(), name: names.join(", "), up: true, detail: format!("{} registered", names.len()) });
    }
    Ok(out)
}
