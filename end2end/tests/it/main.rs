//! The integration tests of `end2end`: one binary, one module per topic.


mod accounts;
mod api_tokens;
mod browser;
mod course_policy;
mod event_streams;
mod every_page;
mod lti_launch;
mod idle_culling;
mod notebook;
mod notebook_isolation;
mod sessions;
mod sign_in_oidc;
mod slurm_pages;
