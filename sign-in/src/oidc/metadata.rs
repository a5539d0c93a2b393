//! A provider's discovery document and signing keys, read through a client that never
//! follows redirects, kept for an hour and read again when a signature does not verify
//! (the provider rotated its keys).

use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreClaimName, CoreClaimType, CoreClientAuthMethod, CoreGrantType, CoreJsonWebKey,
    CoreJweContentEncryptionAlgorithm, CoreJweKeyManagementAlgorithm, CoreResponseMode, CoreResponseType,
    CoreSubjectIdentifierType,
};
use openidconnect::{AdditionalProviderMetadata, IssuerUrl, ProviderMetadata};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::error::{describe, SignInError};

/// Where the provider ends its own session (RP-initiated logout), when it says.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct LogoutMetadata {
    pub end_session_endpoint: Option<String>,
}
impl AdditionalProviderMetadata for LogoutMetadata {}

pub type Metadata = ProviderMetadata<
    LogoutMetadata,
    CoreAuthDisplay,
    CoreClientAuthMethod,
    CoreClaimName,
    CoreClaimType,
    CoreGrantType,
    CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm,
    CoreJsonWebKey,
    CoreResponseMode,
    CoreResponseType,
    CoreSubjectIdentifierType,
>;

const FRESH_FOR: Duration = Duration::from_secs(3600);
/// A provider whose keys were just read is not asked again sooner than this.
const REREAD_AFTER: Duration = Duration::from_secs(10);

pub struct MetadataCache {
    issuer: String,
    http: reqwest::Client,
    held: Mutex<Option<(Metadata, Instant)>>,
}

impl MetadataCache {
    pub fn new(issuer: &str, http: reqwest::Client) -> Self {
        MetadataCache { issuer: issuer.to_string(), http, held: Mutex::new(None) }
    }

    /// The document and keys, read now if never read or older than an hour.
    pub async fn get(&self) -> Result<Metadata, SignInError> {
        self.get_with_time().await.map(|(metadata, _)| metadata)
    }

    /// [`MetadataCache::get`], with when what it gives was read (for [`MetadataCache::refresh`]).
    pub async fn get_with_time(&self) -> Result<(Metadata, Instant), SignInError> {
        let mut held = self.held.lock().await;
        if let Some((metadata, at)) = held.as_ref() {
            if at.elapsed() < FRESH_FOR {
                return Ok((metadata.clone(), *at));
            }
        }
        let metadata = self.read().await?;
        let at = Instant::now();
        *held = Some((metadata.clone(), at));
        Ok((metadata, at))
    }

    /// After a signature failed with the keys read at `used`: reads the document and keys
    /// again, unless they were read a moment ago. Returns whether keys newer than those
    /// are held now, read here or by a sign-in that failed at the same time (which a
    /// moment ago does not hold back: everyone who failed with the old keys tries the new).
    pub async fn refresh(&self, used: Instant) -> Result<bool, SignInError> {
        let mut held = self.held.lock().await;
        match held.as_ref() {
            Some((_, at)) if *at > used => return Ok(true),
            Some((_, at)) if at.elapsed() < REREAD_AFTER => return Ok(false),
            _ => {}
        }
        let metadata = self.read().await?;
        *held = Some((metadata, Instant::now()));
        Ok(true)
    }

    async fn read(&self) -> Result<Metadata, SignInError> {
        let issuer = IssuerUrl::new(self.issuer.clone()).map_err(|e| SignInError::Provider(format!("issuer URL: {e}")))?;
        Metadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| SignInError::Provider(format!("discovery of {}: {}", self.issuer, describe(&e))))
    }
}
