//! LTI Names and Role Provisioning Services: the LMS course's members, read with an access
//! token the platform gives for a client assertion signed by the portal's tool key.

use jsonwebtoken::{encode, Algorithm, Header};
use serde_json::Value;
use slicehub_core::auth::new_session_token;
use slicehub_core::courses::lms::{course_role_of, LmsPerson};
use slicehub_core::store::LtiPlatform;

use crate::now_ms;
use super::tool_key::ToolKey;
use crate::error::SignInError;

const SCOPE: &str = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";
const MEDIA_TYPE: &str = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";
/// Pages of members read at most (a course of tens of thousands at the platform's page size).
const MAX_PAGES: usize = 200;
/// The most members a roster may list.
const MAX_MEMBERS: usize = 100_000;
/// The largest page (or token answer) read.
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

fn provider(what: &str, e: impl std::fmt::Display) -> SignInError {
    SignInError::Provider(format!("{what}: {e}"))
}

/// The course's active members as the platform lists them. Every page is read or it is an
/// error: a roster cut short would drop everyone after the cut.
pub async fn read_members(
    http: &reqwest::Client,
    key: &ToolKey,
    platform: &LtiPlatform,
    memberships_url: &str,
) -> Result<Vec<LmsPerson>, SignInError> {
    let url = url::Url::parse(memberships_url).map_err(|e| provider("the roster URL", e))?;
    // The URL comes signed in a launch; it is on the LMS's own host, which is often not its
    // token endpoint's (Canvas: sso.canvaslms.com). Later pages stay on that origin.
    if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
        return Err(SignInError::Provider(format!("the roster URL {url} is not a web address")));
    }
    let token = access_token(http, key, platform).await?;
    let mut members = Vec::new();
    let mut next = Some(url.clone());
    let mut pages = 0;
    while let Some(page_url) = next.take() {
        pages += 1;
        if pages > MAX_PAGES {
            return Err(SignInError::Provider(format!("the roster has more than {MAX_PAGES} pages")));
        }
        let answer = http
            .get(page_url.as_str())
            .bearer_auth(&token)
            .header(reqwest::header::ACCEPT, MEDIA_TYPE)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| provider("reading the roster", e))?;
        let links: Vec<String> = answer
            .headers()
            .get_all(reqwest::header::LINK)
            .iter()
            .map(|v| v.to_str().map(str::to_string).map_err(|e| provider("the roster's Link header", e)))
            .collect::<Result<_, _>>()?;
        next = next_page(&links, &page_url, &url)?;
        let body = body_bytes(answer, MAX_BODY_BYTES, "the roster").await?;
        let body: Value = serde_json::from_slice(&body).map_err(|e| provider("the roster", e))?;
        for member in body.get("members").and_then(Value::as_array).into_iter().flatten() {
            let text = |name: &str| member.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
            if text("status").is_some_and(|s| s != "Active") {
                continue;
            }
            let Some(subject) = text("user_id") else { continue };
            if members.len() >= MAX_MEMBERS {
                return Err(SignInError::Provider(format!("the roster lists more than {MAX_MEMBERS} members")));
            }
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

/// A response body, at most `limit` bytes (more is an error, not a cut).
pub(super) async fn body_bytes(mut answer: reqwest::Response, limit: usize, what: &str) -> Result<Vec<u8>, SignInError> {
    let size = if limit >= 1024 * 1024 { format!("{} MB", limit / (1024 * 1024)) } else { format!("{} KB", limit / 1024) };
    let too_large = || SignInError::Provider(format!("{what} is larger than {size}"));
    if answer.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(|e| provider(what, e))? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The page after `page`, from its `Link` headers (RFC 8288): the `rel="next"` target
/// resolved against the page's URL. One that is no URL, or is not on the roster's own
/// origin (`first`), is an error.
fn next_page(headers: &[String], page: &url::Url, first: &url::Url) -> Result<Option<url::Url>, SignInError> {
    for value in headers.iter().flat_map(|h| split_link_values(h)) {
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        let rejected = |why: &str| SignInError::Provider(format!("the roster's next page link {value:?} {why}"));
        let parsed = value.strip_prefix('<').and_then(|rest| rest.split_once('>'));
        let is_next = |params: &str| {
            params.split(';').filter_map(|p| p.split_once('=')).any(|(name, rel)| {
                name.trim().eq_ignore_ascii_case("rel") && rel.trim().trim_matches('"').split_whitespace().any(|r| r.eq_ignore_ascii_case("next"))
            })
        };
        let (target, params) = match parsed {
            Some(found) => found,
            None if is_next(value) => return Err(rejected("cannot be read")),
            None => continue,
        };
        if !is_next(params) {
            continue;
        }
        let next = page.join(target.trim()).map_err(|_| rejected("is no address"))?;
        if next.origin() != first.origin() {
            return Err(rejected("leaves the roster's site"));
        }
        return Ok(Some(next));
    }
    Ok(None)
}

/// A Link header's values: split at commas outside `<…>` and quoted strings.
fn split_link_values(header: &str) -> Vec<&str> {
    let (mut values, mut start, mut in_target, mut in_quotes) = (Vec::new(), 0, false, false);
    for (at, c) in header.char_indices() {
        match c {
            '<' if !in_quotes => in_target = true,
            '>' if !in_quotes => in_target = false,
            '"' if !in_target => in_quotes = !in_quotes,
            ',' if !in_target && !in_quotes => {
                values.push(&header[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    values.push(&header[start..]);
    values
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
    let answer = http
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
        .map_err(|e| provider("the platform's token endpoint", e))?;
    let answer: Value = serde_json::from_slice(&body_bytes(answer, 1024 * 1024, "the platform's token answer").await?)
        .map_err(|e| provider("the platform's token answer", e))?;
    answer
        .get("access_token")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| SignInError::Provider("the platform's token answer has no access_token".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(headers: &[&str], page: &str) -> Result<Option<String>, String> {
        let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
        let page = url::Url::parse(page).unwrap();
        let first = url::Url::parse("https://lms.example/api/nrps/42").unwrap();
        next_page(&headers, &page, &first).map(|n| n.map(|u| u.to_string())).map_err(|e| e.to_string())
    }

    #[test]
    fn the_next_page_is_found_resolved_and_kept_on_the_rosters_site() {
        let page = "https://lms.example/api/nrps/42?page=1";
        assert_eq!(next(&[], page), Ok(None));
        assert_eq!(next(&[r#"<https://lms.example/api/nrps/42?page=2>; rel="next""#], page), Ok(Some("https://lms.example/api/nrps/42?page=2".into())));
        // Relative, after another value, rel unquoted or among others.
        assert_eq!(
            next(&[r#"<?page=1>; rel="first", <?page=2>; rel=next"#], page),
            Ok(Some("https://lms.example/api/nrps/42?page=2".into()))
        );
        assert_eq!(next(&[r#"</api/nrps/42?page=3>; rel="last next""#], page), Ok(Some("https://lms.example/api/nrps/42?page=3".into())));
        // A comma inside the target or a quoted title does not split the value.
        assert_eq!(
            next(&[r#"<https://lms.example/api/nrps/42?ids=1,2>; title="a, b"; rel="next""#], page),
            Ok(Some("https://lms.example/api/nrps/42?ids=1,2".into()))
        );
        assert_eq!(next(&[r#"<https://lms.example/api/nrps/42?page=1>; rel="prev""#], page), Ok(None));
        // What would silently cut the roster short is an error.
        for bad in [
            r#"<https://evil.example/api/nrps/42?page=2>; rel="next""#,
            r#"<http://lms.example/api/nrps/42?page=2>; rel="next""#,
            r#"<https://lms.example:8443/api/nrps/42?page=2>; rel="next""#,
            r#"<//evil.example/x>; rel="next""#,
            r#"<https://[bad>; rel="next""#,
            r#"https://lms.example/no-brackets; rel="next""#,
        ] {
            assert!(next(&[bad], page).is_err(), "{bad}");
        }
    }

    #[test]
    fn link_values_split_at_commas_outside_targets_and_quotes() {
        assert_eq!(split_link_values(r#"<a,b>; rel="next", <c>; title="x, y""#), vec![r#"<a,b>; rel="next""#, r#" <c>; title="x, y""#]);
    }
}
