//! Reading an LMS course's roster into its SliceHub course.

use slicehub_core::courses::lms::{apply_roster, RosterSync};
use slicehub_core::store::{Course, Store};

use super::names_roles::read_members;
use super::tool_key::ToolKey;
use crate::error::SignInError;

/// Reads the roster of every LMS course linked to `course` that offers one, and applies
/// it. `NotSupported` words when none does.
pub async fn sync_course_roster(store: &Store, http: &reqwest::Client, course: &Course) -> Result<RosterSync, SignInError> {
    let links = store.lti_contexts_of_course(course.id).await?;
    let mut total = RosterSync::default();
    let mut read_any = false;
    for link in links {
        let Some(url) = &link.memberships_url else { continue };
        let Some(platform) = store.lti_platform(link.platform_id).await? else { continue };
        let key = ToolKey::load_or_make(store).await?;
        let members = read_members(http, &key, &platform, url).await?;
        let sync = apply_roster(store, &platform, course, &members).await?;
        store.mark_lti_synced(platform.id, &link.context_id).await?;
        total.added.extend(sync.added);
        total.dropped.extend(sync.dropped);
        total.dropped_running.extend(sync.dropped_running);
        read_any = true;
    }
    if !read_any {
        return Err(SignInError::Refused(
            "This course has no LMS roster to read: launch SliceHub from the LMS course once as its instructor.".to_string(),
        ));
    }
    Ok(total)
}
