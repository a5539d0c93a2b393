//! LTI Advantage services: the OAuth 2 token endpoint (client credentials with a signed JWT,
//! 1EdTech Security Framework §4.1) and Names and Role Provisioning Services 2.0.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, Query, State as AxumState};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Form, Json};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{json, Value};

use super::{random_token, Shared, CLIENT_ID, NRPS_MEDIA_TYPE, NRPS_SCOPE};

const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const TOKEN_LIFETIME: Duration = Duration::from_secs(3600);
const DEFAULT_PAGE_SIZE: usize = 2;

/// An OAuth 2 error answer (RFC 6749 §5.2).
fn oauth_error(status: StatusCode, error: &str, description: impl Into<String>) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        Json(json!({ "error": error, "error_description": description.into() })),
    )
        .into_response()
}

fn invalid_client(description: impl Into<String>) -> Response {
    oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", description)
}

/// `POST /token`: `grant_type=client_credentials`, the tool authenticated by
/// `client_assertion` (a JWT it signed with a key in `TOOL/lti/jwks`).
pub(super) async fn token(AxumState(shared): AxumState<Arc<Shared>>, Form(form): Form<HashMap<String, String>>) -> Response {
    let field = |name: &str| form.get(name).map(String::as_str).unwrap_or("");
    if field("grant_type") != "client_credentials" {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            format!("grant_type {:?}, not client_credentials", field("grant_type")),
        );
    }
    if field("client_assertion_type") != JWT_BEARER {
        return invalid_client(format!("client_assertion_type {:?}, not {JWT_BEARER}", field("client_assertion_type")));
    }
    if !field("client_id").is_empty() && field("client_id") != CLIENT_ID {
        return invalid_client(format!("unknown client_id {:?}", field("client_id")));
    }
    let assertion = field("client_assertion");
    if assertion.is_empty() {
        return invalid_client("missing client_assertion");
    }
    if let Err(why) = check_assertion(&shared, assertion).await {
        return invalid_client(why);
    }

    let requested = field("scope");
    if !requested.split_whitespace().any(|s| s == NRPS_SCOPE) {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_scope", format!("scope {requested:?}: this platform grants only {NRPS_SCOPE}"));
    }
    let access_token = random_token();
    {
        let mut state = shared.state();
        state.tokens.insert(access_token.clone(), (Instant::now() + TOKEN_LIFETIME, NRPS_SCOPE.to_string()));
        state.token_requests += 1;
    }
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": TOKEN_LIFETIME.as_secs(),
            "scope": NRPS_SCOPE,
        })),
    )
        .into_response()
}

/// The client assertion: RS256 under a `kid` the tool publishes, `iss` = `sub` = client id,
/// `aud` = the token URL, unexpired, `iat` and a fresh `jti`.
async fn check_assertion(shared: &Shared, assertion: &str) -> Result<(), String> {
    let header = jsonwebtoken::decode_header(assertion).map_err(|e| format!("client_assertion is not a JWT: {e}"))?;
    if header.alg != Algorithm::RS256 {
        return Err(format!("client_assertion alg {:?}, not RS256", header.alg));
    }
    let kid = header.kid.ok_or("client_assertion header has no kid")?;

    let jwks_url = shared.tool_jwks_url();
    let resp = shared.http.get(&jwks_url).send().await.map_err(|e| format!("tool JWKS {jwks_url}: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("tool JWKS {jwks_url}: HTTP {}", resp.status()));
    }
    let jwks: JwkSet = resp.json().await.map_err(|e| format!("tool JWKS {jwks_url} is not a JWKS: {e}"))?;
    let jwk = jwks.find(&kid).ok_or_else(|| format!("the tool's JWKS has no key {kid:?}"))?;
    let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("tool key {kid:?}: {e}"))?;

    let mut validation = Validation::new(Algorithm::RS256);
    validation.leeway = 0;
    validation.validate_nbf = true;
    validation.set_audience(&[shared.token_url()]);
    validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
    let claims = jsonwebtoken::decode::<Value>(assertion, &key, &validation)
        .map_err(|e| format!("client_assertion rejected: {e}"))?
        .claims;

    for claim in ["iss", "sub"] {
        if claims[claim] != CLIENT_ID {
            return Err(format!("client_assertion {claim} is {}, not {CLIENT_ID:?}", claims[claim]));
        }
    }
    if !claims["iat"].is_number() {
        return Err("client_assertion has no iat".into());
    }
    let jti = claims["jti"].as_str().filter(|j| !j.is_empty()).ok_or("client_assertion has no jti")?;
    if !shared.state().jtis.insert(jti.to_string()) {
        return Err(format!("client_assertion jti {jti:?} was used before"));
    }
    Ok(())
}

/// `GET /nrps/{context_id}`: a page of the membership container.
pub(super) async fn nrps(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(context_id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim().to_string());
    let authorized = bearer.is_some_and(|token| {
        let state = shared.state();
        state
            .tokens
            .get(&token)
            .is_some_and(|(expires, scope)| *expires > Instant::now() && scope.split_whitespace().any(|s| s == NRPS_SCOPE))
    });
    if !authorized {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, r#"Bearer error="invalid_token""#)],
            "a Bearer access token from the token endpoint is needed\n",
        )
            .into_response();
    }
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !accept.split(',').any(|t| t.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case(NRPS_MEDIA_TYPE)) {
        return (StatusCode::NOT_ACCEPTABLE, format!("Accept must name {NRPS_MEDIA_TYPE}\n")).into_response();
    }

    let limit = match query.get("limit").map(|l| l.parse::<usize>()) {
        None => DEFAULT_PAGE_SIZE,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => return (StatusCode::BAD_REQUEST, "limit must be a positive integer\n").into_response(),
    };
    let from = match query.get("from").map(|f| f.parse::<usize>()) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => return (StatusCode::BAD_REQUEST, "bad from\n").into_response(),
    };
    let role = query.get("role").cloned();

    let (context, members, next_links) = {
        let mut state = shared.state();
        if !state.contexts.contains(&context_id) {
            return (StatusCode::NOT_FOUND, format!("no course {context_id:?}\n")).into_response();
        }
        let context = if state.launch.context.id == context_id {
            json!({ "id": context_id, "label": state.launch.context.label, "title": state.launch.context.title })
        } else {
            json!({ "id": context_id })
        };
        let members: Vec<_> = state
            .members_of
            .get(&context_id)
            .unwrap_or(&state.members)
            .iter()
            .filter(|m| role.as_deref().is_none_or(|r| m.roles.iter().any(|mr| role_matches(mr, r))))
            .cloned()
            .collect();
        state.nrps_requests += 1;
        (context, members, state.next_links.clone())
    };

    let page: Vec<Value> = members
        .iter()
        .skip(from)
        .take(limit)
        .map(|m| {
            let (given, family) = m.name.split_once(' ').unwrap_or((m.name.as_str(), ""));
            json!({
                "user_id": m.user_id,
                "name": m.name,
                "given_name": given,
                "family_name": family,
                "email": m.email,
                "roles": m.roles,
                "status": m.status,
            })
        })
        .collect();
    let base = shared.memberships_url(&context_id);
    let mut url = url::Url::parse(&base).expect("memberships URL");
    {
        let mut pairs = url.query_pairs_mut();
        if let Some(r) = &role {
            pairs.append_pair("role", r);
        }
        if query.contains_key("limit") {
            pairs.append_pair("limit", &limit.to_string());
        }
        if from > 0 {
            pairs.append_pair("from", &from.to_string());
        }
    }
    let id = url.as_str().trim_end_matches('?').to_string();
    let body = json!({ "id": id, "context": context, "members": page });

    let mut response = ([(header::CONTENT_TYPE, NRPS_MEDIA_TYPE)], body.to_string()).into_response();
    if from + limit < members.len() {
        let mut next = url::Url::parse(&base).expect("memberships URL");
        {
            let mut pairs = next.query_pairs_mut();
            if let Some(r) = &role {
                pairs.append_pair("role", r);
            }
            pairs.append_pair("limit", &limit.to_string());
            pairs.append_pair("from", &(from + limit).to_string());
        }
        let target = match &next_links {
            super::NextLinks::Absolute => next.to_string(),
            super::NextLinks::Relative => format!("?{}", next.query().unwrap_or_default()),
            super::NextLinks::Elsewhere(origin) => format!("{}{}?{}", origin.trim_end_matches('/'), next.path(), next.query().unwrap_or_default()),
        };
        // Another link first, with a comma in its target, as a platform may send.
        let link = format!("<{base}?ids=1,2>; rel=\"self\", <{target}>; rel=\"next\"");
        response.headers_mut().insert(header::LINK, link.parse().expect("ASCII Link header"));
    }
    response
}

/// NRPS's `role` filter: a full role URI, or its short name (`Learner`).
fn role_matches(member_role: &str, wanted: &str) -> bool {
    member_role == wanted || member_role.rsplit_once('#').is_some_and(|(_, short)| short == wanted)
}
