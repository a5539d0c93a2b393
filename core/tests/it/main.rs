//! The integration tests of `core`: one binary, one module per topic.

#[macro_use]
mod common;
mod lab;

mod admin_limits;
mod audit_log;
mod auth_bootstrap;
mod auth_guard;
mod auth_login;
mod auth_password;
mod bookings;
mod class_view;
mod courses;
mod docker_launch;
mod engine_faults;
mod gpu_drain;
mod h100_readout;
mod idle_culling;
mod lifecycle_rules;
mod module_imports;
mod provider_grants;
mod queue_eta;
mod queue_rules;
mod quota_periods;
mod quotas;
mod readme_config;
mod reconcile_race;
mod sessions_faults;
mod sessions_jobs;
mod sessions_limit;
mod sessions_notebook;
mod share_activity;
mod store;
mod usage_reports;
