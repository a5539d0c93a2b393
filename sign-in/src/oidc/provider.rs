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
use super::metadata::{describe, Metadata, MetadataCache};
use crate::error::SignInError;

type Client = CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;

/// How long a browser may take at the provider before its answer is stale.
pub const ATTEMPT_MS: i64 = 10 * 60_000;

pub struct OidcProvider {
    pub config: OidcProviderConfig,
    redirect_url: String,
    metadata: MetadataCache,
    http: reqwest::Client,
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

    /// Ends the attempt `state` names: one use only, from the browser that began it,
    /// within ten minutes; the code is exchanged and the ID token checked.
    pub async fn finish(&self, store: &Store, code: &str, state: &str, browser_secret: Option<&str>) -> Result<Finished, SignInError> {
        let stale = || SignInError::Refused("This sign-in link is stale or was used already. Start again from the sign-in page.".to_string());
        let attempt = store.take_sign_in_attempt(&token_sha256(state)).await?.ok_or_else(stale)?;
        if attempt.provider != self.config.key() || now_ms() - attempt.created_at_ms > ATTEMPT_MS {
            return Err(stale());
        }
        if browser_secret.map(token_sha256).as_deref() != Some(attempt.browser_sha256.as_str()) {
            return Err(SignInError::Refused(
                "This sign-in was begun in another browser. Start again from the sign-in page.".to_string(),
            ));
        }
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
        Ok(Finished { identity, next_path: attempt.next_path, link_user_id: attempt.link_user_id })
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

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
