//! The person an ID token names, read from the claims the configuration points at.

use serde_json::Value;
use slicehub_core::auth::ExternalIdentity;
use slicehub_core::config::OidcProviderConfig;

/// The identity in verified `claims`; Err carries words for the person.
pub fn identity_from_claims(config: &OidcProviderConfig, claims: &Value) -> Result<ExternalIdentity, String> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let subject = text("sub").ok_or("the sign-in service named no subject")?;
    let username = text(&config.username_claim)
        .ok_or_else(|| format!("the sign-in service did not give the claim `{}` that names your account", config.username_claim))?;
    let groups = match claims.get(&config.groups_claim) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(Value::String(one)) => one.split([',', ' ']).filter(|g| !g.is_empty()).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    Ok(ExternalIdentity {
        provider: config.key(),
        subject: subject.to_string(),
        username: username.to_string(),
        display_name: text(&config.name_claim).unwrap_or(username).to_string(),
        email: text(&config.email_claim).map(str::to_string),
        groups,
    })
}
