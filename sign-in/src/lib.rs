//! The portal's boundary to campus identity providers.

pub mod error;
pub mod ldap;
pub mod lti;
pub mod oidc;

pub use error::SignInError;
