//! The integration tests of `server`: one binary, one module per topic.

#[macro_use]
mod common;

mod api_v1;
mod authz;
mod backup;
mod cli;
mod fuzz;
mod gpu_inspect;
mod header_sign_in;
mod http;
mod hub_api;
mod install;
mod ldap_sign_in;
mod lti_launch;
mod metrics;
mod oidc_sign_in;
mod proxy;
mod sessions_http;
mod slurm;
mod shared_gpus;
mod sign_in_status;
mod whole_gpus;
