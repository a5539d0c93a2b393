//! Reading an LMS course's roster after an instructor's launch, without holding the launch up.

use slicehub_core::store::{Course, LtiPlatform};

use crate::serve::AppState;

pub fn sync_in_background(state: &AppState, platform: LtiPlatform, course: Course, _url: String) {
    let store = state.services.store.clone();
    let http = state.lti_http.clone();
    tokio::spawn(async move {
        match slicehub_sign_in::lti::sync_course_roster(&store, &http, &course).await {
            Ok(sync) => tracing::info!(course = %course.code, platform = %platform.name, added = sync.added.len(), dropped = sync.dropped.len(), "read the LMS roster"),
            Err(e) => tracing::warn!(course = %course.code, platform = %platform.name, error = %e, "could not read the LMS roster"),
        }
    });
}
