//! The portal's HTTP layer around the Leptos app: who the caller is, the checks every
//! request passes (CSRF, page guard, form fields), security headers, plain errors, and the
//! handlers that are not pages (`handlers/`).

pub mod api_errors;
pub mod api_tokens;
pub mod caller;
pub mod client_addr;
pub mod cookies;
pub mod csrf;
pub mod form_fields;
pub mod handlers;
pub mod header_sign_in;
pub mod page_guard;
pub mod security_headers;
