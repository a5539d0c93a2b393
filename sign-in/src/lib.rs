//! The portal's boundary to campus identity providers.

pub mod error;
pub mod ldap;
pub mod lti;
pub mod oidc;

pub use error::SignInError;

/// Milliseconds since the Unix epoch, the unit the store's times are kept in.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
