//! Starts the real `slicehub` binary (and, for browser tests, Chromium through
//! chromedriver) on free loopback ports with a fresh data directory.

mod browser;
pub mod classroom;
pub mod cli;
pub mod form;
pub mod jobs;
pub mod kernel;
pub mod ldap_server;
pub mod lti_platform;
pub mod notebook;
pub mod oidc_provider;
pub mod raw_http;
pub mod slurm_cluster;
pub mod slurm_failover;
mod page_check;
mod portal;

pub use browser::Browser;
pub use page_check::WIDTHS;
pub use portal::{workspace_root, Portal, Stopped};

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}
