//! The OIDC authentication request of an LTI launch, and the id_token that answers it.

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, Header};
use serde_json::{json, Value};

use super::{unix_now, Launch, Shared, Tamper, CLIENT_ID, DEPLOYMENT_ID};

const LTI: &str = "https://purl.imsglobal.org/spec/lti/claim";
const COURSE_OFFERING: &str = "http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering";

pub(super) struct Authorized {
    pub id_token: String,
    pub state: String,
    pub redirect_uri: String,
}

/// Checks an authentication request as an LMS does and signs the id_token for it.
pub(super) fn authorize(shared: &Shared, params: &HashMap<String, String>) -> Result<Authorized, String> {
    let param = |name: &str| -> Result<&str, String> {
        match params.get(name).map(String::as_str) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(format!("missing {name}")),
        }
    };
    let client_id = param("client_id")?;
    if client_id != CLIENT_ID {
        return Err(format!("unknown client_id {client_id:?}"));
    }
    let redirect_uri = param("redirect_uri")?;
    if redirect_uri != shared.tool_launch_url() {
        return Err(format!("redirect_uri {redirect_uri:?} is not the registered {:?}", shared.tool_launch_url()));
    }
    let scope = param("scope")?;
    if !scope.split_whitespace().any(|s| s == "openid") {
        return Err(format!("scope {scope:?} lacks openid"));
    }
    let response_type = param("response_type")?;
    if response_type != "id_token" {
        return Err(format!("response_type {response_type:?}, not id_token"));
    }
    let response_mode = param("response_mode")?;
    if response_mode != "form_post" {
        return Err(format!("response_mode {response_mode:?}, not form_post"));
    }
    let nonce = param("nonce")?;
    let state = param("state")?;
    let hint = param("lti_message_hint")?;
    let launch = shared
        .state()
        .hints
        .get(hint)
        .cloned()
        .ok_or_else(|| format!("lti_message_hint {hint:?} was not issued by this platform"))?;
    let login_hint = param("login_hint")?;
    if login_hint != launch.user.sub {
        return Err(format!("login_hint {login_hint:?} is not the launching user {:?}", launch.user.sub));
    }
    Ok(Authorized {
        id_token: sign_id_token(shared, &launch, nonce),
        state: state.to_string(),
        redirect_uri: redirect_uri.to_string(),
    })
}

/// An LtiResourceLinkRequest id_token, spoiled as [`Tamper`] says.
fn sign_id_token(shared: &Shared, launch: &Launch, nonce: &str) -> String {
    let (tamper, key, other_key, return_url) = {
        let state = shared.state();
        (state.tamper, state.key.clone(), state.other_key.clone(), state.return_url.clone())
    };
    let now = unix_now();
    let (iat, exp) = match tamper {
        Tamper::Expired => (now - 600, now - 300),
        _ => (now, now + 300),
    };
    let aud = match tamper {
        Tamper::WrongAudience => "another-tool",
        _ => CLIENT_ID,
    };
    let iss = match tamper {
        Tamper::WrongIssuer => "https://lms.attacker.example".to_string(),
        _ => shared.issuer.clone(),
    };
    let user = &launch.user;
    let context = &launch.context;
    let (given_name, family_name) = match user.name.split_once(' ') {
        Some((given, family)) => (given, family),
        None => (user.name.as_str(), ""),
    };
    let mut claims = json!({
        "iss": iss,
        "aud": aud,
        "azp": aud,
        "sub": user.sub,
        "exp": exp,
        "iat": iat,
        "nonce": nonce,
        "name": user.name,
        "given_name": given_name,
        "family_name": family_name,
        "email": user.email,
        "locale": "en",
        format!("{LTI}/message_type"): "LtiResourceLinkRequest",
        format!("{LTI}/version"): "1.3.0",
        format!("{LTI}/deployment_id"): DEPLOYMENT_ID,
        format!("{LTI}/target_link_uri"): shared.target_link_uri(),
        format!("{LTI}/resource_link"): {
            "id": format!("{}-gpu-lab", context.id),
            "title": "GPU lab",
        },
        format!("{LTI}/roles"): user.roles,
        format!("{LTI}/context"): {
            "id": context.id,
            "label": context.label,
            "title": context.title,
            "type": [COURSE_OFFERING],
        },
        format!("{LTI}/tool_platform"): {
            "guid": format!("{}/", shared.issuer),
            "name": "Test LMS",
            "product_family_code": "slicehub-test-lms",
            "version": "1.0",
        },
        format!("{LTI}/launch_presentation"): {
            "document_target": "iframe",
            "locale": "en",
        },
        "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
            "context_memberships_url": shared.memberships_url(&context.id),
            "service_versions": ["2.0"],
        },
    });
    if let Some(url) = return_url {
        claims[&format!("{LTI}/launch_presentation")]["return_url"] = json!(url);
    }
    let deployment = format!("{LTI}/deployment_id");
    match tamper {
        Tamper::WrongDeployment => claims[&deployment] = json!("dep-other"),
        Tamper::NoDeployment => {
            claims.as_object_mut().expect("claims object").remove(&deployment);
        }
        _ => {}
    }

    if tamper == Tamper::AlgNone {
        return unsigned_jwt(&claims);
    }
    let signer = match (tamper, other_key) {
        (Tamper::OtherKey, Some(other)) => other,
        (Tamper::OtherKey, None) => unreachable!("tamper(OtherKey) makes the other key"),
        _ => key.clone(),
    };
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, &claims, &signer.encoding_key()).expect("RS256 signing")
}

/// `alg: none`: header and claims, and an empty signature.
fn unsigned_jwt(claims: &Value) -> String {
    let header = json!({ "alg": "none", "typ": "JWT" });
    format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}
