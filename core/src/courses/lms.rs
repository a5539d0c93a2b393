//! What an LMS launch (LTI 1.3) and its roster (LTI Names and Roles) do here: each person
//! has an account of their own (made at first sight, named after their e-mail), the LMS
//! course is one SliceHub course (made at the first launch by an instructor, never an
//! existing one taken over),
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

/// `PREFIX` and the first `digits` hex digits of SHA-256 of `PLATFORM KEY|ID`: a name for
/// what has none usable of its own, the same at every launch and roster read.
fn hashed_name(prefix: &str, platform: &LtiPlatform, id: &str, digits: usize) -> String {
    let digest = <sha2::Sha256 as sha2::Digest>::digest(format!("{}|{id}", platform.key()).as_bytes());
    format!("{prefix}{}", &hex::encode(digest)[..digits])
}

/// The person's account on this platform, made at first sight. Its name comes from the
/// e-mail (or the name); a name taken by someone else gets a number, never their account.
/// Without a usable name, or when the numbered ones are all taken, it is `lms-` and a hash
/// of the platform and the person's LMS id.
pub async fn account_of(store: &Store, platform: &LtiPlatform, person: &LmsPerson) -> Result<User, CoreError> {
    let key = platform.key();
    if let Some(user) = store.user_of_identity(&key, &person.subject).await? {
        return Ok(user);
    }
    let base: Option<String> = person
        .email
        .as_deref()
        .and_then(|e| account_name_from(e).ok())
        .or_else(|| account_name_from(&person.name.replace(' ', ".")).ok())
        .map(|b| b.chars().take(40).collect());
    let hashed = hashed_name("lms-", platform, &person.subject, 8);
    let display = crate::auth::validate::check_display_name(&person.name).unwrap_or_else(|_| base.clone().unwrap_or_else(|| hashed.clone()));
    let email = person.email.as_deref().filter(|e| e.contains('@') && e.len() <= 254);
    let numbered = base.iter().flat_map(|b| (1..=20).map(move |n| if n == 1 { b.clone() } else { format!("{b}-{n}") }));
    let names: Vec<String> = numbered.chain([hashed, hashed_name("lms-", platform, &person.subject, 16)]).collect();
    for name in &names {
        let row = NewUserRow { username: name, display_name: &display, email, password_hash: "", is_admin: false, must_change_password: false };
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
    Err(CoreError::Conflict(format!("no free account name near `{}`", names[0])))
}

/// A course code from an LMS course's label: its letters, digits, '.', '_' and '-', other
/// characters as one '-', nothing but letters or digits at either end; None when that
/// leaves no valid code.
fn code_from_label(label: &str) -> Option<String> {
    let mut code = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || "._-".contains(c) {
            code.push(c);
        } else if !code.ends_with('-') {
            code.push('-');
        }
    }
    let edge = |c: char| !c.is_ascii_alphanumeric();
    let code: String = code.trim_matches(edge).chars().take(28).collect();
    let code = code.trim_end_matches(edge).to_string();
    super::manage::check_course_code(&code).ok()
}

/// The SliceHub course of an LMS course: linked already, or made at an instructor's first
/// launch. A launch never links an LMS course to a course that exists already (a course of
/// the same code included): that is an administrator's decision.
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
    let hashed = hashed_name("LMS-", platform, &lms_course.context_id, 8).to_uppercase();
    let numbered = code_from_label(&lms_course.label)
        .into_iter()
        .flat_map(|b| (1..=20).map(move |n| if n == 1 { b.clone() } else { format!("{b}-{n}") }));
    let codes: Vec<String> = numbered.chain([hashed, hashed_name("LMS-", platform, &lms_course.context_id, 16).to_uppercase()]).collect();
    for code in &codes {
        if store.course_by_code(code).await?.is_some() {
            continue;
        }
        let course = match super::manage::create_course(store, code, &title, &platform.key()).await {
            Ok(course) => course,
            Err(CoreError::Conflict(_)) => continue,
            Err(e) => return Err(e.into()),
        };
        let link = store.link_lti_context(platform.id, &lms_course.context_id, course.id).await?;
        store
            .audit(&account.username, "course.lms.link", &course.code, &format!("{} {}", platform.name, lms_course.context_id))
            .await?;
        return Ok(store.course_by_id(link.course_id).await?.unwrap_or(course));
    }
    Err(LaunchRefused::Internal(CoreError::Conflict(format!("no free course code near `{}`", codes[0]))))
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

/// Applies the LMS's roster of a course (every LMS course of this platform linked to it,
/// read together): active members get their role (accounts made as needed); members the
/// platform gave a role before and no longer lists as active lose it. Roles given by hand
/// stay. A person whose account cannot be made is left out, and then nobody is dropped
/// this time (they may be someone the roster still lists).
pub async fn apply_roster(
    store: &Store,
    platform: &LtiPlatform,
    course: &Course,
    members: &[LmsPerson],
) -> Result<RosterSync, CoreError> {
    let key = platform.key();
    let mut sync = RosterSync::default();
    let mut listed: Vec<UserId> = Vec::new();
    let mut complete = true;
    for person in members {
        let Some(role) = person.role else { continue };
        let account = match account_of(store, platform, person).await {
            Ok(account) => account,
            Err(e @ CoreError::Conflict(_)) | Err(e @ CoreError::InvalidRequest(_)) => {
                tracing::warn!(platform = %platform.name, course = %course.code, subject = %person.subject, error = %e, "no account for an LMS roster member; nobody is dropped this time");
                complete = false;
                continue;
            }
            Err(e) => return Err(e),
        };
        listed.push(account.id);
        if store.grant_membership(course.id, account.id, role, &key).await? {
            sync.added.push(account.username.clone());
        }
    }
    // A roster that lists nobody with a role here is the LMS not telling (a privacy
    // setting, a service turned off), not a course everyone left: it drops no one, not even
    // the instructor who launched a moment ago.
    let members_now = if listed.is_empty() || !complete { Vec::new() } else { store.course_members(course.id).await? };
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

    #[test]
    fn course_codes_from_labels_are_valid_or_none() {
        assert_eq!(code_from_label("GPU101").as_deref(), Some("GPU101"));
        assert_eq!(code_from_label("CS 101 (fall)").as_deref(), Some("CS-101-fall"));
        assert_eq!(code_from_label("数据 101").as_deref(), Some("101"));
        for nothing in ["数据科学", "--", "..", "C++", "", " ", "x"] {
            assert_eq!(code_from_label(nothing), None, "{nothing:?}");
        }
        let long = code_from_label(&format!("{}-.x", "a".repeat(27))).unwrap();
        assert_eq!(long, "a".repeat(27), "no '-' or '.' left at the end after the cut");
    }

    async fn store_with_platform() -> (tempfile::TempDir, Store, LtiPlatform) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}?mode=rwc", dir.path().join("portal.db").display()), 2).await.unwrap();
        store.migrate().await.unwrap();
        let platform = store
            .insert_lti_platform(&LtiPlatform {
                id: 0,
                name: "campus".into(),
                issuer: "https://lms.example".into(),
                client_id: "c1".into(),
                deployment_ids: "d1".into(),
                auth_login_url: "https://lms.example/auth".into(),
                auth_token_url: "https://lms.example/token".into(),
                jwks_url: "https://lms.example/jwks".into(),
            })
            .await
            .unwrap();
        (dir, store, platform)
    }

    fn lms_person(subject: &str, name: &str, email: Option<&str>, role: Option<Role>) -> LmsPerson {
        LmsPerson { subject: subject.into(), name: name.into(), email: email.map(str::to_string), role }
    }

    async fn take_name(store: &Store, name: &str) {
        let row = NewUserRow { username: name, display_name: name, email: None, password_hash: "", is_admin: false, must_change_password: false };
        store.insert_user(&row).await.unwrap();
    }

    #[tokio::test]
    async fn lms_platforms_key_their_identities_by_id_not_by_name() {
        let (_dir, store, platform) = store_with_platform().await;
        assert_eq!(platform.key(), format!("lti:{}", platform.id));
        let ann = account_of(&store, &platform, &lms_person("7", "Ann Lee", Some("ann@lms.example"), Some(Role::Student))).await.unwrap();
        // The platform removed, another registered under its name: user 7 there is someone else.
        crate::courses::lms_platforms::remove_platform(&store, "campus", "test").await.unwrap();
        let again = store.insert_lti_platform(&LtiPlatform { id: 0, issuer: "https://other.example".into(), ..platform.clone() }).await.unwrap();
        assert_ne!(again.key(), platform.key());
        let other = account_of(&store, &again, &lms_person("7", "Ann Lee", Some("ann@lms.example"), Some(Role::Student))).await.unwrap();
        assert_ne!(other.id, ann.id, "the new platform's user 7 never gets the old one's account");
        assert_eq!(other.username, "ann-2");
    }

    #[tokio::test]
    async fn people_without_usable_names_get_stable_hashed_accounts() {
        let (_dir, store, platform) = store_with_platform().await;
        let first = account_of(&store, &platform, &lms_person("u1", "张伟", None, Some(Role::Student))).await.unwrap();
        let second = account_of(&store, &platform, &lms_person("u2", "李娜", None, Some(Role::Student))).await.unwrap();
        assert!(first.username.starts_with("lms-") && first.username.len() == 12, "{}", first.username);
        assert!(second.username.starts_with("lms-") && second.username != first.username, "{}", second.username);
        assert_eq!(first.display_name, "张伟");
        assert_eq!(account_of(&store, &platform, &lms_person("u1", "张伟", None, None)).await.unwrap().id, first.id);

        // Every numbered name taken: the hashed one, never someone else's account.
        for n in 1..=20 {
            take_name(&store, &if n == 1 { "bo".to_string() } else { format!("bo-{n}") }).await;
        }
        let bo = account_of(&store, &platform, &lms_person("u3", "Bo", Some("bo@lms.example"), Some(Role::Student))).await.unwrap();
        assert_eq!(bo.username, hashed_name("lms-", &platform, "u3", 8));
        assert!(store.user_by_username("bo").await.unwrap().unwrap().id != bo.id);
    }

    #[tokio::test]
    async fn an_lms_launch_never_takes_over_an_existing_course() {
        let (_dir, store, platform) = store_with_platform().await;
        let ivy = lms_person("u-ivy", "Ivy Ng", Some("ivy@lms.example"), Some(Role::Instructor));
        let account = account_of(&store, &platform, &ivy).await.unwrap();
        // CS-101 exists and she teaches it: a sandbox LMS course labelled CS-101 is another course.
        let existing = crate::courses::manage::create_course(&store, "CS-101", "Deep Learning", "test").await.unwrap();
        store.grant_membership(existing.id, account.id, Role::Instructor, "test").await.unwrap();
        let sandbox = LmsCourse { context_id: "sandbox".into(), label: "CS-101".into(), title: "Sandbox".into() };
        let made = course_of(&store, &platform, &sandbox, &ivy, &account).await.unwrap();
        assert_ne!(made.id, existing.id);
        assert_eq!(made.code, "CS-101-2");
        assert!(store.lti_contexts_of_course(existing.id).await.unwrap().is_empty(), "CS-101 is linked to nothing");
        // A label with no usable code: a hashed one, not "--".
        let chinese = LmsCourse { context_id: "ctx-中文".into(), label: "数据科学".into(), title: "数据科学".into() };
        let made = course_of(&store, &platform, &chinese, &ivy, &account).await.unwrap();
        assert_eq!(made.code, hashed_name("LMS-", &platform, "ctx-中文", 8).to_uppercase());
        assert!(crate::courses::manage::check_course_code(&made.code).is_ok());
    }

    #[tokio::test]
    async fn a_roster_member_without_an_account_is_skipped_and_nobody_is_dropped() {
        let (_dir, store, platform) = store_with_platform().await;
        let course = crate::courses::manage::create_course(&store, "GPU101", "GPU", "test").await.unwrap();
        let ana = lms_person("u-ana", "Ana Lopez", Some("ana@lms.example"), Some(Role::Student));
        let ben = lms_person("u-ben", "Ben Okafor", Some("ben@lms.example"), Some(Role::Student));
        let sync = apply_roster(&store, &platform, &course, &[ana.clone(), ben.clone()]).await.unwrap();
        assert_eq!(sync.added, vec!["ana".to_string(), "ben".to_string()]);
        // Cy's every possible name is taken; Ben is not listed this time.
        for n in 1..=20 {
            take_name(&store, &if n == 1 { "cy".to_string() } else { format!("cy-{n}") }).await;
        }
        take_name(&store, &hashed_name("lms-", &platform, "u-cy", 8)).await;
        take_name(&store, &hashed_name("lms-", &platform, "u-cy", 16)).await;
        let cy = lms_person("u-cy", "Cy", Some("cy@lms.example"), Some(Role::Student));
        let sync = apply_roster(&store, &platform, &course, &[ana.clone(), cy]).await.unwrap();
        assert_eq!(sync, RosterSync::default(), "nobody dropped while someone could not be placed");
        let mut names: Vec<String> = store.course_members(course.id).await.unwrap().into_iter().map(|m| m.user.username).collect();
        names.sort();
        assert_eq!(names, vec!["ana".to_string(), "ben".to_string()]);
        // A complete roster again drops Ben.
        let sync = apply_roster(&store, &platform, &course, &[ana]).await.unwrap();
        assert_eq!(sync.dropped, vec!["ben".to_string()]);
    }
}
