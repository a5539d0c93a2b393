//! Server functions: check the caller, call core, map the answer to a view type.

pub mod admin;
pub mod audit;
pub mod auth;
pub mod bookings;
pub mod class;
pub mod courses;
pub mod home;
pub mod instance;
pub mod invitations;
pub mod operations;
pub mod policy;
pub mod reports;
#[cfg(feature = "ssr")]
pub mod session_reads;
pub mod sessions;
#[cfg(feature = "ssr")]
pub mod ssr;

use leptos::prelude::ServerFnError;

/// The words of a server function's error, without the framework's prefix.
pub fn message(error: &ServerFnError) -> String {
    match error {
        ServerFnError::ServerError(text) => text.clone(),
        // A form the browser could not put into a request (a field missing or of the wrong
        // kind): the decoder's own words name internals, not what to do.
        ServerFnError::Serialization(_) | ServerFnError::Args(_) | ServerFnError::MissingArg(_) => {
            "Part of the form is missing or not valid: fill in every field and try again.".to_string()
        }
        ServerFnError::Request(_) => "The portal did not answer: check your connection and try again.".to_string(),
        ServerFnError::Deserialization(_) | ServerFnError::Response(_) => {
            "The portal's answer could not be read: reload the page and try again.".to_string()
        }
        other => other.to_string(),
    }
}
