//! OpenID Connect sign-in (the `openidconnect` crate), one [`OidcProvider`] per
//! `[oidc.NAME]` table.

mod claims;
mod metadata;
mod provider;

pub use claims::identity_from_claims;
pub use provider::{browser_cookie_value, browser_secrets, Begun, Finished, OidcProvider, ATTEMPT_MS, BROWSER_SECRETS_KEPT};

use std::sync::Arc;
use std::time::Duration;

use slicehub_core::config::Config;

use crate::error::SignInError;

/// Every configured provider, by name.
#[derive(Clone, Default)]
pub struct OidcProviders(Arc<Vec<OidcProvider>>);

impl OidcProviders {
    /// Callbacks are `PUBLIC_URL/login/oidc/NAME/callback`.
    pub fn from_config(config: &Config) -> Result<Self, SignInError> {
        let http = http_client()?;
        let base = config.public_url();
        Ok(OidcProviders(Arc::new(
            config
                .sign_in
                .oidc
                .iter()
                .map(|p| OidcProvider::new(p.clone(), format!("{base}/login/oidc/{}/callback", p.name), http.clone()))
                .collect(),
        )))
    }

    pub fn get(&self, name: &str) -> Option<&OidcProvider> {
        self.0.iter().find(|p| p.config.name == name)
    }

    pub fn all(&self) -> &[OidcProvider] {
        &self.0
    }
}

/// The client every provider is asked through: no redirects followed (a provider's
/// answer that redirects is not its answer), bounded in time.
pub fn http_client() -> Result<reqwest::Client, SignInError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| SignInError::Provider(format!("HTTP client: {e}")))
}
