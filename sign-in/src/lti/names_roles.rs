//! LTI Names and Role Provisioning Services: the LMS course's members, read with an access
//! token the platform gives for a client assertion signed by the portal's tool key.

use jsonwebtoken::{encode, Algorithm, Header};
use serde_json::Value;
use slicehub_core::auth::new_session_token;
use slicehub_core::courses::lms::{course_role_of, LmsPerson};
use slicehub_core::store::LtiPlatform;

use super::launch::now_ms;
use super::tool_key::ToolKey;
use crate::error::SignInError;

const SCOPE: &str = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";
const MEDIA_TYPE: &str = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";
/// Pages of members read at most (a course of tens of thousands at the platform's page size).
const MAX_PAGES: usize = 200;

fn provider(what: &str, e: impl std::fmt::Display) -> SignInError {
    SignInError::Provider(format!("{what}: {e}"))
}

/// The course's active members as the platform lists them.
pub async fn read_members(
    http: &reqwest::Client,
    key: &ToolKey,
    platform: &LtiPlatform,
    memberships_url: &str,
) -> Result<Vec<LmsPerson>, SignInError> {
    let url = url::Url::parse(memberships_url).map_err(|e| provider("the roster URL", e))?;
    // The URL comes signed in a launch; it is on the LMS's own host, which is often not its
    // token endpoint's (Canvas: sso.canvaslms.com). Later pages stay on that host.
    let platform_host = url.host_str().map(str::to_string);
    if platform_host.is_none() {
        return Err(SignInError::Provider(format!("the roster URL {url} names no host")));
    }
    let token = access_token(http, key, platform).await?;
    let mut members = Vec::new();
    let mut next = Some(url.to_string());
    let mut pages = 0;
    while let Some(page_url) = next.take() {
        pages += 1;
        if pages > MAX_PAGES {
            return Err(SignInError::Provider(format!("the roster has more than {MAX_PAGES} pages")));
        }
        let answer = http
            .get(&page_url)
            .bearer_auth(&token)
            .header(reqwest::header::ACCEPT, MEDIA_TYPE)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| provider("reading the roster", e))?;
        next = answer
            .headers()
            .get_all(reqwest::header::LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .find(|part| part.contains("rel=\"next\"") || part.contains("rel=next"))
            .and_then(|part| Some(part.split('<').nth(1)?.split('>').next()?.to_string()))
            .filter(|n| url::Url::parse(n).ok().and_then(|u| u.host_str().map(str::to_string)) == platform_host);
        let body: Value = answer.json().await.map_err(|e| provider("the roster", e))?;
        for member in body.get("members").and_then(Value::as_array).into_iter().flatten() {
            let text = |name: &str| member.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
            if text("status").is_some_and(|s| s != "Active") {
                continue;
            }
            let Some(subject) = text("user_id") else { continue };
            let roles: Vec<String> = member
                .get("roles")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default();
            members.push(LmsPerson {
                subject,
                name: text("name").unwrap_or_else(|| "LMS user".to_string()),
                email: text("email"),
                role: course_role_of(&roles),
            });
        }
    }
    Ok(members)
}

/// OAuth 2 client credentials with a signed JWT assertion (RFC 7523), as the 1EdTech
/// security framework asks.
async fn access_token(http: &reqwest::Client, key: &ToolKey, platform: &LtiPlatform) -> Result<String, SignInError> {
    let now = now_ms() / 1000;
    let claims = serde_json::json!({
        "iss": platform.client_id, "sub": platform.client_id, "aud": platform.auth_token_url,
        "iat": now, "exp": now + 300, "jti": new_session_token()?,
    });
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(key.kid.clone());
    let assertion = encode(&header, &claims, &key.encoding).map_err(|e| provider("signing the assertion", e))?;
    let answer: Value = http
        .post(&platform.auth_token_url)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
            ("client_assertion", assertion.as_str()),
            ("scope", SCOPE),
        ])
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| provider("the platform's token endpoint", e))?
        .json()
        .await
        .map_err(|e| provider("the platform's token answer", e))?;
    answer
        .get("access_token")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| SignInError::Provider("the platform's token answer has no access_token".to_string()))
}
