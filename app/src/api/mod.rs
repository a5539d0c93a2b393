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
pub mod lms;
pub mod operations;
pub mod policy;
pub mod reports;
#[cfg(feature = "ssr")]
pub mod session_reads;
pub mod sessions;
pub mod sign_in;
#[cfg(feature = "ssr")]
pub mod ssr;
pub mod tokens;

use crate::error::AppError;

/// The words of a server function's error: what the person who clicked should know.
pub fn message(error: &AppError) -> String {
    error.message.clone()
}
