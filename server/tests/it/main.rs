//! The integration tests of `server`: one binary, one module per topic.

#[macro_use]
mod common;

mod authz;
mod backup;
mod cli;
mod fuzz;
mod gpu_inspect;
mod http;
mod install;
mod metrics;
mod proxy;
mod sessions_http;
mod slurm;
mod shared_gpus;
mod whole_gpus;
