//! Reading an LMS course's roster into its SliceHub course.

use slicehub_core::courses::lms::{apply_roster, LmsPerson, RosterSync};
use slicehub_core::store::{Course, LtiPlatform, Role, Store};

use super::names_roles::read_members;
use super::tool_key::ToolKey;
use crate::error::SignInError;

/// Reads the roster of every LMS course linked to `course` that offers one, and applies
/// it. A course may be linked to several LMS courses of one platform, whose memberships
/// all carry that platform's mark: their rosters are read first and applied together
/// (one person listed in either keeps their role), so one never drops the other's people.
/// When any roster cannot be read, nothing is applied. `Refused` words when none offers a
/// roster, or when one LMS course of a platform offers none while another does.
pub async fn sync_course_roster(store: &Store, http: &reqwest::Client, course: &Course) -> Result<RosterSync, SignInError> {
    let links = store.lti_contexts_of_course(course.id).await?;
    let mut platform_ids: Vec<i64> = links.iter().map(|l| l.platform_id).collect();
    platform_ids.sort_unstable();
    platform_ids.dedup();
    // (platform, its links' context ids, the union of their members)
    let mut read: Vec<(LtiPlatform, Vec<String>, Vec<LmsPerson>)> = Vec::new();
    for platform_id in platform_ids {
        let of_platform: Vec<_> = links.iter().filter(|l| l.platform_id == platform_id).collect();
        if of_platform.iter().all(|l| l.memberships_url.is_none()) {
            continue;
        }
        let Some(platform) = store.lti_platform(platform_id).await? else { continue };
        // Without one of them, the others' roster would drop its people.
        if of_platform.iter().any(|l| l.memberships_url.is_none()) {
            return Err(SignInError::Refused(format!(
                "An LMS course of {} linked to this course gives no roster; nothing was changed. Launch SliceHub from each linked LMS course as its instructor.",
                platform.name
            )));
        }
        let key = ToolKey::load_or_make(store).await?;
        let mut contexts = Vec::new();
        let mut union = Vec::new();
        for link in of_platform {
            let Some(url) = &link.memberships_url else { continue };
            merge(&mut union, read_members(http, &key, &platform, url).await?);
            contexts.push(link.context_id.clone());
        }
        read.push((platform, contexts, union));
    }
    if read.is_empty() {
        return Err(SignInError::Refused(
            "This course has no LMS roster to read: launch SliceHub from the LMS course once as its instructor.".to_string(),
        ));
    }
    let mut total = RosterSync::default();
    for (platform, contexts, members) in read {
        let sync = apply_roster(store, &platform, course, &members).await?;
        for context in &contexts {
            store.mark_lti_synced(platform.id, context).await?;
        }
        total.added.extend(sync.added);
        total.dropped.extend(sync.dropped);
        total.dropped_running.extend(sync.dropped_running);
    }
    Ok(total)
}

/// Adds `more` to `union`, one entry a person: listed twice, the stronger role counts.
fn merge(union: &mut Vec<LmsPerson>, more: Vec<LmsPerson>) {
    let rank = |role: Option<Role>| match role {
        Some(Role::Instructor) => 2,
        Some(Role::Student) => 1,
        None => 0,
    };
    for person in more {
        match union.iter_mut().find(|p| p.subject == person.subject) {
            Some(known) if rank(person.role) > rank(known.role) => known.role = person.role,
            Some(_) => {}
            None => union.push(person),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(subject: &str, role: Option<Role>) -> LmsPerson {
        LmsPerson { subject: subject.into(), name: subject.into(), email: None, role }
    }

    #[test]
    fn two_rosters_of_one_platform_are_one_union_with_the_stronger_role() {
        let mut union = Vec::new();
        merge(&mut union, vec![person("a", Some(Role::Student)), person("b", Some(Role::Instructor))]);
        merge(&mut union, vec![person("a", Some(Role::Instructor)), person("b", Some(Role::Student)), person("c", None)]);
        merge(&mut union, vec![person("c", Some(Role::Student))]);
        assert_eq!(
            union,
            vec![person("a", Some(Role::Instructor)), person("b", Some(Role::Instructor)), person("c", Some(Role::Student))]
        );
    }
}
