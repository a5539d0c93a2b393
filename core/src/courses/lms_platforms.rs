//! Registering an LMS (LTI 1.3 platform) with the portal: what the LMS's administrator
//! gives (issuer, client id, deployments, its login, token and key URLs), checked once
//! here for the page and the CLI alike.

use crate::store::{LtiPlatform, Store};
use crate::CoreError;

/// What an administrator types in.
#[derive(Debug, Clone, Default)]
pub struct PlatformForm {
    pub name: String,
    pub issuer: String,
    pub client_id: String,
    pub deployment_ids: String,
    pub auth_login_url: String,
    pub auth_token_url: String,
    pub jwks_url: String,
}

fn web_url(what: &str, text: &str) -> Result<String, CoreError> {
    let text = text.trim();
    let url = url::Url::parse(text).map_err(|_| CoreError::InvalidRequest(format!("{what} must be a web address such as https://lms.campus.edu/…")))?;
    if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() || !url.username().is_empty() || url.password().is_some() {
        return Err(CoreError::InvalidRequest(format!("{what} must be an http:// or https:// address without a user name")));
    }
    Ok(text.to_string())
}

fn word(what: &str, text: &str, max: usize) -> Result<String, CoreError> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > max || text.chars().any(char::is_control) {
        return Err(CoreError::InvalidRequest(format!("{what} must be 1 to {max} characters with no control characters")));
    }
    Ok(text.to_string())
}

/// Registers the platform; `Conflict` for a name, or issuer and client id, taken already.
pub async fn register_platform(store: &Store, form: &PlatformForm, actor: &str) -> Result<LtiPlatform, CoreError> {
    let name = word("The name", &form.name, 40)?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
        return Err(CoreError::InvalidRequest("The name may only contain letters, digits, '.', '_' and '-' (e.g. canvas)".to_string()));
    }
    let deployments: Vec<String> = form.deployment_ids.split([',', ' ', '\n']).map(str::trim).filter(|d| !d.is_empty()).map(str::to_string).collect();
    if deployments.is_empty() || deployments.iter().any(|d| d.len() > 255 || d.chars().any(char::is_control)) {
        return Err(CoreError::InvalidRequest("Give at least one deployment id (separated by commas)".to_string()));
    }
    let platform = LtiPlatform {
        id: 0,
        name,
        issuer: web_url("The issuer", &form.issuer)?,
        client_id: word("The client id", &form.client_id, 255)?,
        deployment_ids: deployments.join(","),
        auth_login_url: web_url("The authentication URL", &form.auth_login_url)?,
        auth_token_url: web_url("The access token URL", &form.auth_token_url)?,
        jwks_url: web_url("The keys (JWKS) URL", &form.jwks_url)?,
    };
    let platform = store.insert_lti_platform(&platform).await?;
    store.audit(actor, "lms.register", &platform.name, &format!("{} {}", platform.issuer, platform.client_id)).await?;
    Ok(platform)
}

/// Removes a platform: its launches stop; courses and accounts it made stay. A platform
/// registered later under the same name is another one (identities are keyed by the id).
pub async fn remove_platform(store: &Store, name: &str, actor: &str) -> Result<(), CoreError> {
    if !store.delete_lti_platform(name.trim()).await? {
        return Err(CoreError::NotFound(format!("no LMS is registered as {}", crate::auth::validate::excerpt(name.trim()))));
    }
    store.audit(actor, "lms.remove", name.trim(), "").await?;
    Ok(())
}
