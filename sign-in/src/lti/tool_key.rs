//! The portal's own RSA key as an LTI tool: made once, kept in the database, published at
//! `/lti/jwks`, and used to sign the client assertions of Names and Roles requests.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use jsonwebtoken::EncodingKey;
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::traits::PublicKeyParts;
use rsa::RsaPrivateKey;
use slicehub_core::store::Store;

use crate::error::SignInError;

pub struct ToolKey {
    pub kid: String,
    pub encoding: EncodingKey,
    /// The public half as a JWK.
    pub jwk: serde_json::Value,
}

impl ToolKey {
    /// The stored key, or a new one stored now.
    pub async fn load_or_make(store: &Store) -> Result<ToolKey, SignInError> {
        if let Some((kid, der)) = store.lti_tool_key().await? {
            return Self::from_der(kid, &der);
        }
        let (kid, der) = tokio::task::spawn_blocking(|| -> Result<(String, String), SignInError> {
            let key = RsaPrivateKey::new(&mut rand_core::OsRng, 2048).map_err(|e| SignInError::Provider(format!("making the tool key: {e}")))?;
            let der = key.to_pkcs1_der().map_err(|e| SignInError::Provider(format!("encoding the tool key: {e}")))?;
            let n = key.to_public_key().n().to_bytes_be();
            let kid = hex::encode(&<sha2::Sha256 as sha2::Digest>::digest(&n)[..8]);
            Ok((kid, STANDARD.encode(der.as_bytes())))
        })
        .await
        .map_err(|e| SignInError::Provider(format!("making the tool key: {e}")))??;
        store.insert_lti_tool_key(&kid, &der).await?;
        let (kid, der) = store.lti_tool_key().await?.unwrap_or((kid, der));
        Self::from_der(kid, &der)
    }

    fn from_der(kid: String, der_base64: &str) -> Result<ToolKey, SignInError> {
        let der = STANDARD.decode(der_base64).map_err(|e| SignInError::Provider(format!("the stored tool key: {e}")))?;
        let key = RsaPrivateKey::from_pkcs1_der(&der).map_err(|e| SignInError::Provider(format!("the stored tool key: {e}")))?;
        let public = key.to_public_key();
        let jwk = serde_json::json!({
            "kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid,
            "n": URL_SAFE_NO_PAD.encode(public.n().to_bytes_be()),
            "e": URL_SAFE_NO_PAD.encode(public.e().to_bytes_be()),
        });
        Ok(ToolKey { encoding: EncodingKey::from_rsa_der(&der), kid, jwk })
    }

    pub fn jwks(&self) -> serde_json::Value {
        serde_json::json!({ "keys": [self.jwk] })
    }
}
