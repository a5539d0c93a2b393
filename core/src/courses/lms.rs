//! What an LMS launch (LTI 1.3) and its roster (LTI Names and Roles) do here: each person
//! has an account of their own (made at first sight, named after their e-mail), the LMS
//! course is one SliceHub course (made or linked at the first launch by an instructor),
//! and LMS roles count for that course only: an LMS administrator is nobody's admin here.

use crate::auth::account_name_from;
use crate::store::{Course, LtiPlatform, NewUserRow, Role, Store, User};
use crate::{CoreError, UserId};

/// A person as the LMS names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LmsPerson {
    pub subject: String,
    pub name: String,
    pub email: Option<String>,
    /// What their LMS roles give in this course; None: nothing.
    pub role: Option<Role>,
}

/// An LMS course as a launch names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LmsCourse {
    pub context_id: String,
    pub label: String,
    pub title: String,
}

/// How a launch could not place the person, in words for them.
#[derive(Debug, thiserror::Error)]
pub enum LaunchRefused {
    #[error("Your role in this course does not give access to SliceHub.")]
    NoRole,
    #[error("Your instructor has not opened SliceHub for this course yet. Try again after they have launched it once.")]
    NotSetUp,
    #[error("This account is disabled. Ask an administrator.")]
    Disabled,
    #[error(transparent)]
    Internal(#[from] CoreError),
}

/// LTI role URIs (and the short names of LTI 1.1) mapped to a course role: instructors,
/// teaching assistants and content developers teach; learners study; everything else,
/// institution and system roles included, gives nothing.
pub fn course_role_of(roles: &[String]) -> Option<Role> {
    fn membership(r: &str) -> &str {
        r.strip_prefix("http://purl.imsglobal.org/vocab/lis/v2/membership#")
            .or_else(|| r.strip_prefix("http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#").map(|_| "TeachingAssistant"))
            .unwrap_or(if r.contains('/') || r.contains(':') { "" } else { r })
    }
    let words: Vec<&str> = roles.iter().map(|r| membership(r)).collect();
    if words.iter().any(|w| matches!(*w, "Instructor" | "TeachingAssistant" | "ContentDeveloper")) {
        Some(Role::Instructor)
    } else if words.contains(&"Learner") {
        Some(Role::Student)
    } else {
        None
    }
}

/// The person's account on this platform, made at first sight. Its name comes from the
/// e-mail (or the name); a name taken by someone else gets a number, never their account.
pub async fn account_of(store: &Store, platform: &LtiPlatform, person: &LmsPerson) -> Result<User, CoreError> {
    let key = platform.key();
    if let Some(user) = store.user_of_identity(&key, &person.subject).await? {
        return Ok(user);
    }
    let base = person
        .email
        .as_deref()
        .and_then(|e| account_name_from(e).ok())
        .or_else(|| account_name_from(&person.name.replace(' ', ".")).ok())
        .unwrap_or_else(|| "lms-user".to_string());
    let base: String = base.chars().take(40).collect();
    let display = crate::auth::validate::check_display_name(&person.name).unwrap_or_else(|_| base.clone());
    let email = person.email.as_deref().filter(|e| e.contains('@') && e.len() <= 254);
    for n in 1..=20 {
        let name = if n == 1 { base.clone() } else { format!("{base}-{n}") };
        let row = NewUserRow { username: &name, display_name: &display, email, password_hash: "", is_admin: false, must_change_password: false };
        match store.insert_user_with_identity(&row, &key, &person.subject).await {
            Ok(user) => {
                store.audit(&key, "user.create", &user.username, "from the LMS").await?;
                return Ok(user);
            }
            Err(CoreError::Conflict(_)) => {
                if let Some(user) = store.user_of_identity(&key, &person.subject).await? {
                    return Ok(user);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Err(CoreError::Conflict(format!("no free account name near `{base}`")))
}

/// The SliceHub course of an LMS course: linked already, or made (or, when the instructor
/// teaches a course of that code already, linked) at an instructor's first launch.
pub async fn course_of(
    store: &Store,
    platform: &LtiPlatform,
    lms_course: &LmsCourse,
    person: &LmsPerson,
    account: &User,
) -> Result<Course, LaunchRefused> {
    if let Some(link) = store.lti_context(platform.id, &lms_course.context_id).await? {
        return store
            .course_by_id(link.course_id)
            .await?
            .ok_or_else(|| LaunchRefused::Internal(CoreError::NotFound("the linked course is gone".to_string())));
    }
    if person.role != Some(Role::Instructor) {
        return Err(LaunchRefused::NotSetUp);
    }
    let title = super::manage::check_course_title(&lms_course.title)
        .or_else(|_| super::manage::check_course_title(&lms_course.label))
        .unwrap_or_else(|_| "Course from the LMS".to_string());
    let base: String = lms_course
        .label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' })
        .take(28)
        .collect();
    let base = if super::manage::check_course_code(&base).is_ok() { base } else { "LMS".to_string() };
    let taught: Vec<String> = store
        .courses_of_user(account.id)
        .await?
        .into_iter()
        .filter(|(_, role)| *role == Role::Instructor)
        .map(|(c, _)| c.code.to_lowercase())
        .collect();
    for n in 1..=20 {
        let code = if n == 1 { base.clone() } else { format!("{base}-{n}") };
        let course = match store.course_by_code(&code).await? {
            Some(existing) if taught.contains(&existing.code.to_lowercase()) => existing,
            Some(_) => continue,
            None => match super::manage::create_course(store, &code, &title, &platform.key()).await {
                Ok(course) => course,
                Err(CoreError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            },
        };
        let link = store.link_lti_context(platform.id, &lms_course.context_id, course.id).await?;
        store
            .audit(&account.username, "course.lms.link", &course.code, &format!("{} {}", platform.name, lms_course.context_id))
            .await?;
        return Ok(store.course_by_id(link.course_id).await?.unwrap_or(course));
    }
    Err(LaunchRefused::Internal(CoreError::Conflict(format!("no free course code near `{base}`"))))
}

/// Places a launching person: their account, their course, their role there (given by
/// the platform, so the next roster read may take it back).
pub async fn place_launch(
    store: &Store,
    platform: &LtiPlatform,
    lms_course: &LmsCourse,
    person: &LmsPerson,
) -> Result<(User, Course), LaunchRefused> {
    let Some(role) = person.role else {
        return Err(LaunchRefused::NoRole);
    };
    // No account for a student of an LMS course no instructor has opened SliceHub for.
    if role != Role::Instructor && store.lti_context(platform.id, &lms_course.context_id).await?.is_none() {
        return Err(LaunchRefused::NotSetUp);
    }
    let account = account_of(store, platform, person).await?;
    if account.disabled {
        return Err(LaunchRefused::Disabled);
    }
    let course = course_of(store, platform, lms_course, person, &account).await?;
    if store.grant_membership(course.id, account.id, role, &platform.key()).await? {
        store.audit(&platform.key(), "course.member.lms", &account.username, &format!("{}: {}", course.code, role.as_str())).await?;
    }
    store.touch_identity(&platform.key(), &person.subject).await?;
    Ok((account, course))
}

/// What a roster read changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RosterSync {
    pub added: Vec<String>,
    pub dropped: Vec<String>,
    /// Dropped people whose sessions still run: nothing stops them by itself.
    pub dropped_running: Vec<String>,
}

/// Applies the LMS's roster of a course: active members get their role (accounts made as
/// needed); members the platform gave a role before and no longer lists as active lose it.
/// Roles given by hand stay.
pub async fn apply_roster(
    store: &Store,
    platform: &LtiPlatform,
    course: &Course,
    members: &[LmsPerson],
) -> Result<RosterSync, CoreError> {
    let key = platform.key();
    let mut sync = RosterSync::default();
    let mut listed: Vec<UserId> = Vec::new();
    for person in members {
        let Some(role) = person.role else { continue };
        let account = account_of(store, platform, person).await?;
        listed.push(account.id);
        if store.grant_membership(course.id, account.id, role, &key).await? {
            sync.added.push(account.username.clone());
        }
    }
    // A roster that lists nobody with a role here is the LMS not telling (a privacy
    // setting, a service turned off), not a course everyone left: it drops no one, not even
    // the instructor who launched a moment ago.
    let members_now = if listed.is_empty() { Vec::new() } else { store.course_members(course.id).await? };
    let live = store.live_sessions_of_course(course.id).await?;
    for member in members_now {
        if listed.contains(&member.user.id) {
            continue;
        }
        if store.revoke_granted_membership(course.id, member.user.id, &key).await? {
            if live.iter().any(|s| s.user_id == member.user.id) {
                sync.dropped_running.push(member.user.username.clone());
            }
            sync.dropped.push(member.user.username.clone());
        }
    }
    store
        .audit(&key, "course.roster.lms", &course.code, &format!("{} added, {} dropped", sync.added.len(), sync.dropped.len()))
        .await?;
    Ok(sync)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lms_roles_give_course_roles_and_nothing_else() {
        let r = |list: &[&str]| course_role_of(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let m = "http://purl.imsglobal.org/vocab/lis/v2/membership#";
        assert_eq!(r(&[&format!("{m}Instructor")]), Some(Role::Instructor));
        assert_eq!(r(&[&format!("{m}Learner")]), Some(Role::Student));
        assert_eq!(r(&[&format!("{m}Learner"), &format!("{m}TeachingAssistant")]), Some(Role::Instructor));
        assert_eq!(r(&["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"]), Some(Role::Instructor));
        assert_eq!(r(&["Learner"]), Some(Role::Student), "LTI 1.1 short names");
        for nothing in [
            "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator",
            "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator",
            "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor",
            "http://evil.example/membership#Instructor",
            "Administrator",
        ] {
            assert_eq!(r(&[nothing]), None, "{nothing}");
        }
    }
}
