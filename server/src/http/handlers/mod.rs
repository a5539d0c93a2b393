//! Answers that are not Leptos pages: health, metrics, the session event stream and the
//! CSV downloads.

pub mod audit_csv;
pub mod healthz;
pub mod lti_launch;
pub mod metrics;
pub mod oidc_sign_in;
pub mod report_csv;
pub mod session_events;
pub mod usage_csv;
