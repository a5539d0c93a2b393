//! LMS platforms (LTI 1.3) for administrators, and a course's LMS roster for its
//! instructors.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LmsPlatformRow {
    pub name: String,
    pub issuer: String,
    pub client_id: String,
    pub deployment_ids: String,
}

/// The registered platforms, and what an LMS administrator enters for the tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LmsOverview {
    pub platforms: Vec<LmsPlatformRow>,
    pub login_url: String,
    pub launch_url: String,
    pub jwks_url: String,
}

/// A course's links to LMS courses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CourseLmsLinks {
    pub links: Vec<String>,
    pub last_read_ms: Option<i64>,
    pub has_roster: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterSyncView {
    pub added: Vec<String>,
    pub dropped: Vec<String>,
    pub dropped_running: Vec<String>,
}

#[server(endpoint = "lms_platforms")]
pub async fn lms_platforms() -> Result<LmsOverview, AppError> {
    use super::ssr::{require, services, Action};
    require(Action::ManageSignIn).await?;
    let services = services()?;
    let base = services.config.public_url();
    Ok(LmsOverview {
        platforms: services
            .store
            .lti_platforms()
            .await?
            .into_iter()
            .map(|p| LmsPlatformRow { name: p.name, issuer: p.issuer, client_id: p.client_id, deployment_ids: p.deployment_ids })
            .collect(),
        login_url: format!("{base}/lti/login"),
        launch_url: format!("{base}/lti/launch"),
        jwks_url: format!("{base}/lti/jwks"),
    })
}

#[server(endpoint = "register_lms")]
pub async fn register_lms(
    name: String,
    issuer: String,
    client_id: String,
    deployment_ids: String,
    auth_login_url: String,
    auth_token_url: String,
    jwks_url: String,
) -> Result<(), AppError> {
    use super::ssr::{actor, require, services, Action};
    use slicehub_core::courses::lms_platforms::{register_platform, PlatformForm};
    let caller = require(Action::ManageSignIn).await?;
    let form = PlatformForm { name, issuer, client_id, deployment_ids, auth_login_url, auth_token_url, jwks_url };
    register_platform(&services()?.store, &form, &actor(&caller)).await?;
    Ok(())
}

#[server(endpoint = "remove_lms")]
pub async fn remove_lms(name: String) -> Result<(), AppError> {
    use super::ssr::{actor, require, services, Action};
    let caller = require(Action::ManageSignIn).await?;
    slicehub_core::courses::lms_platforms::remove_platform(&services()?.store, &name, &actor(&caller)).await?;
    Ok(())
}

#[server(endpoint = "course_lms")]
pub async fn course_lms(code: String) -> Result<CourseLmsLinks, AppError> {
    use super::ssr::{require, services, Action};
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    require(Action::ManageRoster(course.id)).await?;
    let store = &services.store;
    let links = store.lti_contexts_of_course(course.id).await?;
    let mut names = Vec::new();
    for link in &links {
        if let Some(platform) = store.lti_platform(link.platform_id).await? {
            names.push(platform.name);
        }
    }
    Ok(CourseLmsLinks {
        links: names,
        last_read_ms: links.iter().filter_map(|l| l.synced_at).max(),
        has_roster: links.iter().any(|l| l.memberships_url.is_some()),
    })
}

/// Reads the LMS's roster now (at most a minute): adds and drops students. A dropped
/// student's running sessions go on; the instructor sees whose.
#[server(endpoint = "sync_lms_roster")]
pub async fn sync_lms_roster(code: String) -> Result<RosterSyncView, AppError> {
    use super::ssr::{fail, require, services, Action};
    use slicehub_sign_in::SignInError;
    let services = services()?;
    let course = super::courses::ssr::course(&services, &code).await?;
    require(Action::ManageRoster(course.id)).await?;
    let http = slicehub_sign_in::oidc::http_client().map_err(|e| fail(http::StatusCode::SERVICE_UNAVAILABLE, e.plain()))?;
    let reading = slicehub_sign_in::lti::sync_course_roster(&services.store, &http, &course);
    let Ok(read) = tokio::time::timeout(std::time::Duration::from_secs(60), reading).await else {
        tracing::warn!(course = %course.code, "reading the LMS roster took over a minute");
        return Err(fail(
            http::StatusCode::GATEWAY_TIMEOUT,
            "Reading the roster from the LMS took over a minute and was stopped. Try again later; if it keeps happening, tell the portal's administrators.",
        ));
    };
    match read {
        Ok(sync) => Ok(RosterSyncView { added: sync.added, dropped: sync.dropped, dropped_running: sync.dropped_running }),
        Err(SignInError::Core(e)) => Err(e.into()),
        Err(e @ SignInError::Refused(_)) => Err(fail(http::StatusCode::BAD_REQUEST, e.plain())),
        Err(e) => {
            tracing::warn!(course = %course.code, error = %e, "reading the LMS roster failed");
            Err(fail(http::StatusCode::BAD_GATEWAY, "The LMS did not give the roster. Try again in a minute; if it keeps failing, tell the portal's administrators."))
        }
    }
}
