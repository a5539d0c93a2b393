//! An LTI 1.3 launch, tool side: the platform's third-party login initiation answered with
//! an OpenID Connect authentication request (state and nonce remembered once), then the
//! platform's signed `id_token` checked against its published keys.

use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use serde_json::Value;
use slicehub_core::auth::{new_session_token, token_sha256};
use slicehub_core::courses::lms::{course_role_of, LmsCourse, LmsPerson};
use slicehub_core::store::{LtiPlatform, SignInAttempt, Store};

use super::platform_keys::PlatformKeys;
use crate::now_ms;
use crate::error::SignInError;

const CLAIM: &str = "https://purl.imsglobal.org/spec/lti/claim/";
const NRPS_CLAIM: &str = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice";
/// How long the platform may take to answer the login initiation.
pub const LAUNCH_MS: i64 = 5 * 60_000;

/// The platform's login initiation (`/lti/login`, GET or POST).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct LoginInitiation {
    pub iss: String,
    pub login_hint: String,
    pub target_link_uri: String,
    pub lti_message_hint: Option<String>,
    pub client_id: Option<String>,
    pub lti_deployment_id: Option<String>,
}

pub struct LoginRedirect {
    pub url: String,
    pub browser_secret: String,
    pub platform: LtiPlatform,
}

/// A launch that passed every check.
pub struct Launch {
    pub platform: LtiPlatform,
    pub person: LmsPerson,
    pub course: LmsCourse,
    pub memberships_url: Option<String>,
    /// Whether this browser's cookie came back (false: the platform frames the tool in a
    /// browser that blocks third-party cookies).
    pub same_browser: bool,
    /// The origins that may frame the pages of this launch (`frame-ancestors`): the
    /// platform's authentication URL's and issuer's, and those of the signed launch's
    /// `launch_presentation.return_url` and `tool_platform.url` (Canvas frames the tool
    /// from `SCHOOL.instructure.com`, while it authenticates on `sso.canvaslms.com`).
    pub frame_origins: Vec<String>,
}

/// A URL's origin for `frame-ancestors`: https (http too when `allow_http`: a platform
/// whose own issuer is http, as in tests), with a host and nothing a policy could misread.
fn frame_origin(url: &str, allow_http: bool) -> Option<String> {
    let url = url::Url::parse(url.trim()).ok()?;
    if !(url.scheme() == "https" || (allow_http && url.scheme() == "http")) || url.host_str().is_none() {
        return None;
    }
    let origin = url.origin().ascii_serialization();
    origin.chars().all(|c| c.is_ascii_alphanumeric() || ":/.-[]".contains(c)).then_some(origin)
}

fn refused(words: &str) -> SignInError {
    SignInError::Refused(words.to_string())
}

/// Remembers the attempt and gives the platform's authentication URL.
pub async fn begin_login(store: &Store, tool_url: &str, login: &LoginInitiation) -> Result<LoginRedirect, SignInError> {
    let unknown = || refused("This LMS is not registered with the portal. Ask the portal's administrators to register it.");
    let platforms = store.lti_platforms_of_issuer(login.iss.trim()).await?;
    let platform = match &login.client_id {
        Some(id) => platforms.into_iter().find(|p| &p.client_id == id).ok_or_else(unknown)?,
        None if platforms.len() == 1 => platforms.into_iter().next().ok_or_else(unknown)?,
        None => return Err(unknown()),
    };
    if let Some(deployment) = &login.lti_deployment_id {
        if !platform.deployments().any(|d| d == deployment) {
            return Err(refused("This LMS deployment is not registered with the portal."));
        }
    }
    let (state, nonce, browser_secret) = (new_session_token()?, new_session_token()?, new_session_token()?);
    let now = now_ms();
    // Only what no sign-in of any kind may still answer (OpenID Connect's last longer).
    store.delete_stale_sign_in_attempts(now - LAUNCH_MS.max(crate::oidc::ATTEMPT_MS)).await?;
    let attempt = SignInAttempt {
        provider: platform.key(),
        browser_sha256: token_sha256(&browser_secret),
        nonce: nonce.clone(),
        pkce_verifier: String::new(),
        next_path: None,
        link_user_id: None,
        created_at_ms: now,
    };
    store.insert_sign_in_attempt(&token_sha256(&state), &attempt).await?;
    let redirect_uri = format!("{tool_url}/lti/launch");
    let mut params = vec![
        ("scope", "openid"),
        ("response_type", "id_token"),
        ("response_mode", "form_post"),
        ("prompt", "none"),
        ("client_id", platform.client_id.as_str()),
        ("redirect_uri", redirect_uri.as_str()),
        ("login_hint", login.login_hint.as_str()),
        ("state", state.as_str()),
        ("nonce", nonce.as_str()),
    ];
    if let Some(hint) = &login.lti_message_hint {
        params.push(("lti_message_hint", hint.as_str()));
    }
    let url = url::Url::parse_with_params(&platform.auth_login_url, &params)
        .map_err(|e| SignInError::Provider(format!("the platform's login URL: {e}")))?;
    Ok(LoginRedirect { url: url.to_string(), browser_secret, platform })
}

/// Checks the platform's answer: the state once and fresh, the same browser when its
/// cookie came, the token's signature, issuer, audience, expiry, nonce, deployment,
/// message type and version.
pub async fn verify_launch(
    store: &Store,
    keys: &PlatformKeys,
    http: &reqwest::Client,
    id_token: &str,
    state: &str,
    browser_secret: Option<&str>,
) -> Result<Launch, SignInError> {
    let stale = || refused("This launch is stale or was used already. Open SliceHub again from your course in the LMS.");
    let attempt = store.take_sign_in_attempt(&token_sha256(state)).await?.ok_or_else(stale)?;
    if now_ms() - attempt.created_at_ms > LAUNCH_MS {
        return Err(stale());
    }
    let platform = store
        .lti_platforms()
        .await?
        .into_iter()
        .find(|p| p.key() == attempt.provider)
        .ok_or_else(stale)?;
    let same_browser = match browser_secret {
        Some(secret) if token_sha256(secret) != attempt.browser_sha256 => {
            return Err(refused("This launch was begun in another browser. Open SliceHub again from your course in the LMS."))
        }
        Some(_) => true,
        None => false,
    };
    let bad = |why: &str| {
        tracing::warn!(platform = %platform.name, why, "refused an LTI launch");
        refused("The LMS's launch did not pass the portal's checks. Open SliceHub again from your course in the LMS.")
    };
    let header = decode_header(id_token).map_err(|e| bad(&format!("header: {e}")))?;
    if header.alg != Algorithm::RS256 {
        return Err(bad(&format!("algorithm {:?}", header.alg)));
    }
    let set = keys.for_kid(http, &platform.jwks_url, header.kid.as_deref()).await?;
    let jwk = match &header.kid {
        Some(kid) => set.find(kid),
        None if set.keys.len() == 1 => set.keys.first(),
        None => None,
    }
    .ok_or_else(|| bad("no published key has the token's key id"))?;
    let key = DecodingKey::from_jwk(jwk).map_err(|e| bad(&format!("key: {e}")))?;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_audience(&[platform.client_id.as_str()]);
    validation.set_issuer(&[platform.issuer.as_str()]);
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
    validation.leeway = 60;
    let claims: Value = decode::<Value>(id_token, &key, &validation).map_err(|e| bad(&format!("token: {e}")))?.claims;
    let text = |v: &Value, name: &str| v.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    if text(&claims, "nonce").as_deref() != Some(attempt.nonce.as_str()) {
        return Err(bad("nonce"));
    }
    if claims.get("aud").and_then(Value::as_array).is_some_and(|a| a.len() > 1) && text(&claims, "azp").as_deref() != Some(platform.client_id.as_str()) {
        return Err(bad("azp"));
    }
    let deployment = text(&claims, &format!("{CLAIM}deployment_id")).ok_or_else(|| bad("no deployment id"))?;
    if !platform.deployments().any(|d| d == deployment) {
        return Err(bad("deployment not registered"));
    }
    if text(&claims, &format!("{CLAIM}message_type")).as_deref() != Some("LtiResourceLinkRequest") {
        return Err(bad("message type"));
    }
    if text(&claims, &format!("{CLAIM}version")).as_deref() != Some("1.3.0") {
        return Err(bad("version"));
    }
    let context = claims.get(format!("{CLAIM}context")).ok_or_else(|| bad("no context"))?;
    let course = LmsCourse {
        context_id: text(context, "id").ok_or_else(|| bad("context without id"))?,
        label: text(context, "label").unwrap_or_default(),
        title: text(context, "title").unwrap_or_default(),
    };
    let roles: Vec<String> = claims
        .get(format!("{CLAIM}roles"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let subject = text(&claims, "sub").ok_or_else(|| bad("no subject"))?;
    let name = text(&claims, "name")
        .or_else(|| Some(format!("{} {}", text(&claims, "given_name")?, text(&claims, "family_name").unwrap_or_default()).trim().to_string()))
        .unwrap_or_else(|| "LMS user".to_string());
    let person = LmsPerson { subject, name, email: text(&claims, "email"), role: course_role_of(&roles) };
    let memberships_url = claims.get(NRPS_CLAIM).and_then(|c| text(c, "context_memberships_url"));
    let allow_http = platform.issuer.trim().starts_with("http://");
    let claimed = [
        claims.get(format!("{CLAIM}launch_presentation")).and_then(|c| text(c, "return_url")),
        claims.get(format!("{CLAIM}tool_platform")).and_then(|c| text(c, "url")),
    ];
    let mut frame_origins: Vec<String> = Vec::new();
    for url in [Some(platform.auth_login_url.clone()), Some(platform.issuer.clone())].into_iter().chain(claimed).flatten() {
        if let Some(origin) = frame_origin(&url, allow_http) {
            if !frame_origins.contains(&origin) {
                frame_origins.push(origin);
            }
        }
    }
    Ok(Launch { platform, person, course, memberships_url, same_browser, frame_origins })
}

#[cfg(test)]
mod tests {
    use super::frame_origin;

    #[test]
    fn frame_origins_are_web_origins_only() {
        assert_eq!(frame_origin("https://school.instructure.com/courses/7?x=1", false).as_deref(), Some("https://school.instructure.com"));
        assert_eq!(frame_origin("https://lms.example:8443/", false).as_deref(), Some("https://lms.example:8443"));
        assert_eq!(frame_origin("http://lms.example/", false), None);
        assert_eq!(frame_origin("http://127.0.0.1:9/", true).as_deref(), Some("http://127.0.0.1:9"));
        for bad in ["javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "not a url", "https://a.example;script-src *", "https://a.example;frame-ancestors/", ""] {
            assert_eq!(frame_origin(bad, true), None, "{bad}");
        }
    }
}
