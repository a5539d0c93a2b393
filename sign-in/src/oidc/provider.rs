//! One OpenID Connect provider: the redirect that begins a sign-in (authorization code
//! with PKCE, state and nonce) and the answer that ends it (the code exchanged, the ID
//! token checked, the person read from its claims).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreIdToken};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet, EndpointNotSet,
    EndpointSet, Nonce, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RequestTokenError, Scope, TokenResponse,
};
use secrecy::ExposeSecret;
use slicehub_core::auth::{new_session_token, token_sha256, ExternalIdentity};
use slicehub_core::config::OidcProviderConfig;
use slicehub_core::store::{SignInAttempt, Store};
use slicehub_core::UserId;

use super::claims::identity_from_claims;
use super::metadata::{Metadata, MetadataCache};
use crate::error::{describe, SignInError};
use crate::now_ms;

type Client = CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;

/// How long a browser may take at the provider before its answer is stale.
pub const ATTEMPT_MS: i64 = 10 * 60_000;

pub struct OidcProvider {
    pub config: OidcProviderConfig,
    redirect_url: String,
    metadata: MetadataCache,
    http: reqwest::Client,
}

/// How many attempts begun in one browser its sign-in cookie vouches for at once (tabs
/// signing in side by side).
pub const BROWSER_SECRETS_KEPT: usize = 3;

/// The secrets a sign-in cookie's value holds: up to [`BROWSER_SECRETS_KEPT`] tokens,
/// newest first, separated by `.` (not in the tokens' alphabet, and allowed in a cookie
/// value, unlike a space). Anything not shaped like a token, and repeats, are left out.
pub fn browser_secrets(value: &str) -> Vec<&str> {
    let mut secrets: Vec<&str> = Vec::new();
    for s in value.split('.').filter(|s| is_browser_secret(s)) {
        if secrets.len() == BROWSER_SECRETS_KEPT {
            break;
        }
        if !secrets.contains(&s) {
            secrets.push(s);
        }
    }
    secrets
}

/// The sign-in cookie's value once `new` is begun in a browser whose cookie held `held`:
/// `new` first, then the newest of the others.
pub fn browser_cookie_value(new: &str, held: &[&str]) -> String {
    let mut secrets = vec![new];
    secrets.extend(held.iter().copied().filter(|s| *s != new && is_browser_secret(s)));
    secrets.truncate(BROWSER_SECRETS_KEPT);
    secrets.join(".")
}

/// 32 random bytes in URL-safe base64 without padding (`new_session_token`).
fn is_browser_secret(s: &str) -> bool {
    s.len() == 43 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A redirect to the provider: where to send the browser, and the secret its cookie
/// must carry back.
pub struct Begun {
    pub authorize_url: String,
    pub browser_secret: String,
}

/// A sign-in the provider vouched for.
pub struct Finished {
    pub identity: ExternalIdentity,
    pub next_path: Option<String>,
    pub link_user_id: Option<UserId>,
    /// Which of the browser's secrets the attempt was bound to (used up now).
    pub browser_secret: String,
}

impl OidcProvider {
    /// `redirect_url`: this provider's callback as browsers reach it.
    pub fn new(config: OidcProviderConfig, redirect_url: String, http: reqwest::Client) -> Self {
        OidcProvider { metadata: MetadataCache::new(&config.issuer, http.clone()), config, redirect_url, http }
    }

    /// Reads the discovery document and keys now (start-up, the status page).
    pub async fn check(&self) -> Result<(), SignInError> {
        self.metadata.get().await.map(|_| ())
    }

    /// Where the provider ends its own session, if it says.
    pub async fn end_session_url(&self) -> Option<String> {
        let metadata = self.metadata.get().await.ok()?;
        metadata.additional_metadata().end_session_endpoint.clone()
    }

    fn client(&self, metadata: Metadata) -> Result<Client, SignInError> {
        let redirect = RedirectUrl::new(self.redirect_url.clone()).map_err(|e| SignInError::Provider(format!("redirect URL: {e}")))?;
        let secret = self.config.client_secret.as_ref().map(|s| ClientSecret::new(s.expose_secret().to_string()));
        Ok(CoreClient::from_provider_metadata(metadata, ClientId::new(self.config.client_id.clone()), secret).set_redirect_uri(redirect))
    }

    /// Remembers a new attempt and gives the provider's authorization URL.
    pub async fn begin(&self, store: &Store, next_path: Option<String>, link_user_id: Option<UserId>) -> Result<Begun, SignInError> {
        let client = self.client(self.metadata.get().await?)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random)
            .set_pkce_challenge(challenge);
        for scope in self.config.scopes.iter().filter(|s| *s != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.url();
        let browser_secret = new_session_token()?;
        let now = now_ms();
        store.delete_stale_sign_in_attempts(now - ATTEMPT_MS).await?;
        let attempt = SignInAttempt {
            provider: self.config.key(),
            browser_sha256: token_sha256(&browser_secret),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
            next_path,
            link_user_id,
            created_at_ms: now,
        };
        store.insert_sign_in_attempt(&token_sha256(state.secret()), &attempt).await?;
        Ok(Begun { authorize_url: url.to_string(), browser_secret })
    }

    /// Ends the attempt `state` names: one use only, from the browser that began it (one
    /// of `browser_secrets`, those its cookie holds), within ten minutes; the code is
    /// exchanged and the ID token checked.
    pub async fn finish(&self, store: &Store, code: &str, state: &str, browser_secrets: &[&str]) -> Result<Finished, SignInError> {
        let stale = || SignInError::Refused("This sign-in link is stale or was used already. Start again from the sign-in page.".to_string());
        let attempt = store.take_sign_in_attempt(&token_sha256(state)).await?.ok_or_else(stale)?;
        if attempt.provider != self.config.key() || now_ms() - attempt.created_at_ms > ATTEMPT_MS {
            return Err(stale());
        }
        let Some(browser_secret) = browser_secrets.iter().find(|s| token_sha256(s) == attempt.browser_sha256) else {
            return Err(SignInError::Refused(
                "This sign-in was begun in another browser. Start again from the sign-in page.".to_string(),
            ));
        };
        let browser_secret = browser_secret.to_string();
        let client = self.client(self.metadata.get().await?)?;
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| SignInError::Provider(format!("the provider has no token endpoint: {e}")))?
            .set_pkce_verifier(PkceCodeVerifier::new(attempt.pkce_verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| match e {
                // Not reached (refused connection, time limit): the service is down, not saying no.
                RequestTokenError::Request(_) => SignInError::Provider(format!("the token endpoint: {}", describe(&e))),
                _ => {
                    tracing::warn!(provider = %self.config.name, error = %describe(&e), "the provider refused the code");
                    SignInError::Refused("The sign-in service did not accept this sign-in. Start again from the sign-in page.".to_string())
                }
            })?;
        let id_token = response
            .id_token()
            .ok_or_else(|| SignInError::Provider("the token response has no ID token".to_string()))?;
        let claims = self.verified_claims(id_token, &Nonce::new(attempt.nonce.clone())).await?;
        let identity = identity_from_claims(&self.config, &claims).map_err(|words| {
            tracing::warn!(provider = %self.config.name, why = %words, "an ID token that does not name the person usably");
            SignInError::Unusable(words)
        })?;
        Ok(Finished { identity, next_path: attempt.next_path, link_user_id: attempt.link_user_id, browser_secret })
    }

    /// The token's claims once its signature, issuer, audience, expiry and nonce hold.
    /// A signature that fails with the keys held is tried once more with the provider's
    /// keys read again (it may have rotated them).
    async fn verified_claims(&self, id_token: &CoreIdToken, nonce: &Nonce) -> Result<serde_json::Value, SignInError> {
        let mut reread = false;
        loop {
            let (metadata, read_at) = self.metadata.get_with_time().await?;
            let client = self.client(metadata)?;
            let verifier = client.id_token_verifier();
            let checked = id_token.claims(&verifier, nonce).map(|_| ());
            match checked {
                Ok(()) => break,
                Err(ClaimsVerificationError::SignatureVerification(e)) if !reread => {
                    tracing::info!(provider = %self.config.name, error = %e, "ID token signature did not verify; reading the provider's keys again");
                    reread = true;
                    if !self.metadata.refresh(read_at).await? {
                        return Err(refused_token(&self.config.name, &format!("signature: {e}")));
                    }
                }
                Err(e) => return Err(refused_token(&self.config.name, &describe(&e))),
            }
        }
        let text = id_token.to_string();
        let payload = text.split('.').nth(1).ok_or_else(|| SignInError::Provider("ID token without payload".to_string()))?;
        let bytes = URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .map_err(|e| SignInError::Provider(format!("ID token payload: {e}")))?;
        serde_json::from_slice(&bytes).map_err(|e| SignInError::Provider(format!("ID token payload: {e}")))
    }
}

fn refused_token(provider: &str, why: &str) -> SignInError {
    tracing::warn!(provider, why, "refused an ID token");
    SignInError::Refused("The sign-in service's answer did not pass the portal's checks. Start again from the sign-in page.".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(c: char) -> String {
        std::iter::repeat(c).take(43).collect()
    }

    #[test]
    fn the_cookie_keeps_the_newest_three_well_formed_secrets() {
        let (a, b, c, d) = (secret('a'), secret('b'), secret('c'), secret('d'));
        assert_eq!(browser_cookie_value(&a, &[]), a);
        let two = browser_cookie_value(&b, &browser_secrets(&a));
        assert_eq!(browser_secrets(&two), vec![b.as_str(), a.as_str()]);
        let three = browser_cookie_value(&c, &browser_secrets(&two));
        let four = browser_cookie_value(&d, &browser_secrets(&three));
        assert_eq!(browser_secrets(&four), vec![d.as_str(), c.as_str(), b.as_str()], "the oldest goes");
        // Junk and repeats are dropped; a long value yields no more than three.
        let junk = format!("{a}.short.{b}; x=1.{a}.{c}.{d}");
        assert_eq!(browser_secrets(&junk), vec![a.as_str(), c.as_str(), d.as_str()]);
        assert_eq!(browser_secrets(&browser_cookie_value(&a, &[a.as_str(), "x"])), vec![a.as_str()]);
        assert!(browser_secrets("").is_empty() && browser_secrets("...").is_empty());
    }
}
