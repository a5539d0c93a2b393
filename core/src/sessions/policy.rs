//! What a course lets its students run: images, MIG profiles and session length.

use serde::Serialize;

use crate::config::Config;
use crate::store::{PolicyRow, Store};
use crate::CoreError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoursePolicy {
    /// At least one image.
    pub images: Vec<String>,
    /// Empty: every profile the GPUs offer.
    pub profiles: Vec<String>,
    pub max_minutes: i64,
}

impl CoursePolicy {
    pub fn allows_profile(&self, profile: &str) -> bool {
        self.profiles.is_empty() || self.profiles.iter().any(|p| p == profile)
    }

    pub fn allows_image(&self, image: &str) -> bool {
        self.images.iter().any(|i| i == image)
    }
}

/// `a, b,,c` → `[a, b, c]`: the form lists are stored and typed in.
pub fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The course's policy, or the configured defaults when it has none.
pub async fn policy_of(
    store: &Store,
    config: &Config,
    course_id: i64,
) -> Result<CoursePolicy, CoreError> {
    Ok(match store.course_policy(course_id).await? {
        Some(row) => CoursePolicy {
            images: split_list(&row.allowed_images),
            profiles: split_list(&row.allowed_profiles),
            max_minutes: row.max_session_minutes,
        },
        None => CoursePolicy {
            images: vec![config.sessions_default_image.clone()],
            profiles: Vec::new(),
            max_minutes: i64::from(config.sessions_max_minutes),
        },
    })
}

/// Checks and stores a policy. `known_profiles` are the profile names the GPUs offer.
pub async fn set_policy(
    store: &Store,
    course_id: i64,
    policy: &CoursePolicy,
    known_profiles: &[String],
) -> Result<(), CoreError> {
    if policy.images.is_empty() {
        return Err(CoreError::InvalidRequest(
            "a course must allow at least one image".into(),
        ));
    }
    for image in &policy.images {
        let ok = image.len() <= 255
            && image
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-/:@".contains(c));
        if !ok {
            return Err(CoreError::InvalidRequest(format!(
                "{image:?} is not an image reference such as repo/name:tag"
            )));
        }
    }
    for profile in &policy.profiles {
        if !known_profiles.contains(profile) {
            return Err(CoreError::InvalidRequest(format!(
                "no GPU here offers the profile {profile:?}; known: {}",
                known_profiles.join(", ")
            )));
        }
    }
    if !(1..=10_080).contains(&policy.max_minutes) {
        return Err(CoreError::InvalidRequest(format!(
            "a session length of {} minutes is outside 1 to 10080",
            policy.max_minutes
        )));
    }
    store
        .set_course_policy(
            course_id,
            &PolicyRow {
                allowed_images: policy.images.join(","),
                allowed_profiles: policy.profiles.join(","),
                max_session_minutes: policy.max_minutes,
            },
        )
        .await
}
