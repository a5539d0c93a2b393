//! Trusted-header sign-in (`[header_sign_in]`): the web server in front (Apache with
//! mod_auth_mellon for SAML, a Shibboleth SP, anything that sets REMOTE_USER) signs the
//! person in and names them in a header. The header is believed only when the request's
//! TCP peer itself is in `server.trusted_proxies`: never because of `X-Forwarded-For`,
//! which the client can write. From any other peer it is ignored as if absent.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use slicehub_app::api::ssr::Caller;
use slicehub_app::error::AppError;
use slicehub_core::auth::{header_text, ExternalIdentity, MAX_GROUPS_HEADER_BYTES, MAX_HEADER_VALUE_BYTES};
use slicehub_core::config::HeaderSignInConfig;
use slicehub_core::{CoreError, Services};

/// The request's TCP peer, and nothing the request says about itself (None: no socket,
/// as for a router called in a test; never trusted).
pub fn peer(request: &Request) -> Option<IpAddr> {
    request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip())
}

/// Who the web server in front says sent a request from `peer` with `headers`: None
/// when header sign-in is off, the peer is not a trusted proxy, or the user header is
/// absent or empty (the request then goes on with its cookie, or anonymous); else the
/// caller, or the answer that refuses the request (a malformed header: 400; a person the
/// portal will not take: 403).
pub async fn caller(services: &Services, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<Result<Caller, Response>> {
    let config = &services.config.sign_in.header;
    let user_header = config.user_header.as_deref()?;
    if !services.config.server.trusted_proxies.contains(peer?) {
        return None;
    }
    let own_client = headers
        .get(header::ACCEPT)
        .is_some_and(|a| a.as_bytes() == b"application/json");
    let identity = match identity(config, headers) {
        Ok(Some(identity)) => identity,
        Ok(None) => return None,
        Err(words) => return Some(Err(refusal(StatusCode::BAD_REQUEST, words, own_client))),
    };
    Some(match services.auth.header_caller(&identity, &config.roles).await {
        Ok(caller) => Ok(caller),
        Err(CoreError::Conflict(words) | CoreError::Auth(words)) => {
            Err(refusal(StatusCode::FORBIDDEN, words, own_client))
        }
        Err(e) => {
            tracing::warn!(error = %e, header = user_header, "could not resolve the person the web server named; treating the request as anonymous");
            Ok(Caller::Anonymous)
        }
    })
}

/// The person the headers name; None when the user header is absent or empty.
fn identity(config: &HeaderSignInConfig, headers: &HeaderMap) -> Result<Option<ExternalIdentity>, String> {
    let Some(user_header) = config.user_header.as_deref() else {
        return Ok(None);
    };
    let Some(user) = one(headers, user_header, MAX_HEADER_VALUE_BYTES)? else {
        return Ok(None);
    };
    let optional = |name: &Option<String>, most| match name.as_deref() {
        Some(name) => one(headers, name, most),
        None => Ok(None),
    };
    let display_name = optional(&config.name_header, MAX_HEADER_VALUE_BYTES)?;
    let email = optional(&config.email_header, MAX_HEADER_VALUE_BYTES)?;
    let groups = optional(&config.groups_header, MAX_GROUPS_HEADER_BYTES)?
        .map(|list| split_groups(&list, &config.groups_separator))
        .unwrap_or_default();
    Ok(Some(ExternalIdentity {
        provider: HeaderSignInConfig::KEY.to_string(),
        subject: user.clone(),
        username: user,
        display_name: display_name.unwrap_or_default(),
        email,
        groups,
    }))
}

/// The header's one value, trimmed; None when absent or empty. Sent twice it is refused:
/// the web server sets it once, so a second copy came from somewhere else.
fn one(headers: &HeaderMap, name: &str, most: usize) -> Result<Option<String>, String> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(format!(
            "The request carries the {name} header more than once; the web server in front must set it exactly once."
        ));
    }
    let text = header_text(value.as_bytes(), most)
        .map_err(|problem| format!("The {name} header the web server sent {problem}; the portal cannot sign you in with it."))?;
    Ok(Some(text.to_string()).filter(|t| !t.is_empty()))
}

/// `a; b ;;c` → `a`, `b`, `c`.
fn split_groups(list: &str, separator: &str) -> Vec<String> {
    let separator = if separator.is_empty() { ";" } else { separator };
    list.split(separator).map(str::trim).filter(|g| !g.is_empty()).map(str::to_string).collect()
}

/// A refusal in plain words; as the portal's browser code reads errors when it asks.
fn refusal(status: StatusCode, words: String, own_client: bool) -> Response {
    let mut response = if own_client {
        let body = serde_json::to_string(&AppError { status: status.as_u16(), message: words }).unwrap_or_default();
        (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
    } else {
        (status, [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"))], words).into_response()
    };
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> HeaderSignInConfig {
        HeaderSignInConfig {
            user_header: Some("x-remote-user".into()),
            name_header: Some("x-remote-name".into()),
            email_header: None,
            groups_header: Some("x-remote-groups".into()),
            groups_separator: ";".into(),
            roles: Default::default(),
        }
    }

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_bytes(value).unwrap());
        }
        map
    }

    #[test]
    fn the_headers_name_the_person_and_their_groups() {
        let found = identity(
            &config(),
            &headers(&[("X-Remote-User", b" ann@campus.edu "), ("X-Remote-Name", b"Ann Lee"), ("X-Remote-Groups", b"staff; cs101 ;;")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(found.provider, "header");
        assert_eq!(found.subject, "ann@campus.edu");
        assert_eq!(found.display_name, "Ann Lee");
        assert_eq!(found.groups, ["staff", "cs101"]);
        assert_eq!(identity(&config(), &headers(&[("x-remote-user", b"  ")])).unwrap(), None, "empty: nobody");
        assert_eq!(identity(&config(), &HeaderMap::new()).unwrap(), None);
    }

    #[test]
    fn a_malformed_or_repeated_header_is_refused() {
        let long = vec![b'a'; 300];
        for bad in [headers(&[("x-remote-user", &long)]), headers(&[("x-remote-user", b"ann\tbo")]), headers(&[("x-remote-user", b"\xc3\x28")])] {
            let words = identity(&config(), &bad).unwrap_err();
            assert!(words.contains("x-remote-user"), "{words}");
        }
        let twice = headers(&[("x-remote-user", b"ann"), ("x-remote-user", b"admin")]);
        assert!(identity(&config(), &twice).unwrap_err().contains("more than once"));
    }
}
