//! Reading an LMS course's roster after an instructor's launch, without holding the launch
//! up: at most one read of a course at a time, and none within five minutes of its last.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use slicehub_core::store::{Course, LtiPlatform};
use slicehub_core::CourseId;

use crate::serve::AppState;

/// How long after a roster read a launch reads it again.
const AGAIN_AFTER_MS: i64 = 5 * 60_000;

/// The courses whose roster is being read now.
#[derive(Clone, Default)]
pub struct Syncing(Arc<Mutex<HashSet<CourseId>>>);

/// The course's place in [`Syncing`], given back when dropped.
struct Reading(Syncing, CourseId);

impl Syncing {
    fn start(&self, course: CourseId) -> Option<Reading> {
        let mut set = self.0.lock().unwrap_or_else(|e| e.into_inner());
        set.insert(course).then(|| Reading(self.clone(), course))
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        self.0 .0.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.1);
    }
}

pub async fn sync_in_background(state: &AppState, platform: LtiPlatform, course: Course) {
    let Some(reading) = state.lti_syncing.start(course.id) else {
        return;
    };
    let store = state.services.store.clone();
    match store.lti_contexts_of_course(course.id).await {
        Ok(links) => {
            let now = slicehub_app::api::ssr::now_ms();
            if links.iter().filter_map(|l| l.synced_at).max().is_some_and(|at| now - at < AGAIN_AFTER_MS) {
                return;
            }
        }
        Err(e) => {
            tracing::warn!(course = %course.code, error = %e, "could not read the course's LMS links");
            return;
        }
    }
    let http = state.lti_http.clone();
    tokio::spawn(async move {
        let _reading = reading;
        match slicehub_sign_in::lti::sync_course_roster(&store, &http, &course).await {
            Ok(sync) => tracing::info!(course = %course.code, platform = %platform.name, added = sync.added.len(), dropped = sync.dropped.len(), "read the LMS roster"),
            Err(e) => tracing::warn!(course = %course.code, platform = %platform.name, error = %e, "could not read the LMS roster"),
        }
    });
}
