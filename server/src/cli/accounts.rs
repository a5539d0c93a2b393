//! `slicehub user …` and `slicehub course …`: account and course administration from a
//! shell, audited as actor `cli`.

use std::io::BufRead;

use slicehub_core::store::Role;
use slicehub_core::auth::{
    add_user, reset_password, set_disabled, set_password, NewUser, PasswordHasher,
};
use slicehub_core::config::Config;
use slicehub_core::courses::{assign_instructor, create_course};
use slicehub_core::store::{Store, User};
use slicehub_core::CoreError;

use crate::cli::{CourseCommand, UserCommand};
use crate::error::CliError;
use crate::startup::open_store;

const ACTOR: &str = "cli";

pub async fn user(config: &Config, command: UserCommand) -> Result<(), CliError> {
    let store = open_store(config).await?;
    let hasher = PasswordHasher::from_config(config);
    let result = run_user(&store, &hasher, command).await;
    store.close().await;
    result
}

async fn run_user(
    store: &Store,
    hasher: &PasswordHasher,
    command: UserCommand,
) -> Result<(), CliError> {
    match command {
        UserCommand::Add {
            username,
            name,
            email,
            admin,
            password_stdin,
        } => {
            let password = if password_stdin {
                Some(read_password()?)
            } else {
                None
            };
            let created = add_user(
                store,
                hasher,
                NewUser {
                    display_name: name.unwrap_or_else(|| username.clone()),
                    username,
                    email,
                    password,
                    is_admin: admin,
                    must_change_password: false,
                },
                ACTOR,
            )
            .await?;
            match created.one_time_password {
                Some(otp) => println!(
                    "created {} — one-time password: {otp}",
                    created.user.username
                ),
                None => println!("created {}", created.user.username),
            }
        }
        UserCommand::Passwd {
            username,
            password_stdin,
        } => {
            let user = find_user(store, &username).await?;
            if password_stdin {
                set_password(store, hasher, user.id, &read_password()?, ACTOR).await?;
                println!("password of {} set; their sessions ended", user.username);
            } else {
                let otp = reset_password(store, hasher, user.id, ACTOR).await?;
                println!("{} — one-time password: {otp}", user.username);
            }
        }
        UserCommand::List { json } => {
            let users = store.list_users().await?;
            if json {
                let rows: Vec<_> = users
                    .iter()
                    .map(|u| {
                        serde_json::json!({
                            "username": u.username, "display_name": u.display_name,
                            "email": u.email, "admin": u.is_admin, "disabled": u.disabled,
                            "must_change_password": u.must_change_password,
                        })
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(&rows).unwrap_or_default()
                );
            } else {
                for u in users {
                    let mut flags = Vec::new();
                    if u.is_admin {
                        flags.push("admin");
                    }
                    if u.disabled {
                        flags.push("disabled");
                    }
                    if u.must_change_password {
                        flags.push("one-time password");
                    }
                    println!(
                        "{:<24} {:<32} {}",
                        u.username,
                        u.display_name,
                        flags.join(", ")
                    );
                }
            }
        }
        UserCommand::Disable { username } => {
            let user = find_user(store, &username).await?;
            set_disabled(store, user.id, true, ACTOR).await?;
            println!("{} disabled; their sessions ended", user.username);
        }
        UserCommand::Enable { username } => {
            let user = find_user(store, &username).await?;
            set_disabled(store, user.id, false, ACTOR).await?;
            println!("{} enabled", user.username);
        }
        UserCommand::Attach { username, provider, subject } => {
            let user = find_user(store, &username).await?;
            let (provider, subject) = identity_words(&provider, &subject)?;
            store.attach_identity(&provider, &subject, user.id).await?;
            store.audit(ACTOR, "identity.attach", &user.username, &format!("{provider} {subject}")).await?;
            println!("{provider} {subject} now signs in as {}", user.username);
        }
        UserCommand::Detach { provider, subject } => {
            let (provider, subject) = identity_words(&provider, &subject)?;
            if !store.detach_identity(&provider, &subject).await? {
                return Err(CoreError::NotFound(format!("no account has {provider} {subject}")).into());
            }
            store.audit(ACTOR, "identity.detach", &provider, &subject).await?;
            println!("{provider} {subject} detached");
        }
    }
    Ok(())
}

pub async fn course(config: &Config, command: CourseCommand) -> Result<(), CliError> {
    let store = open_store(config).await?;
    let result = run_course(config, &store, command).await;
    store.close().await;
    result
}

async fn run_course(config: &Config, store: &Store, command: CourseCommand) -> Result<(), CliError> {
    match command {
        CourseCommand::Policy { code, changes } => course_policy(config, store, &code, changes).await?,
        CourseCommand::Add { code, title } => {
            let course = create_course(store, &code, &title, ACTOR).await?;
            println!("created course {} — {}", course.code, course.title);
        }
        CourseCommand::List { json } => {
            let mut rows = Vec::new();
            for course in store.list_courses().await? {
                let members = store.course_members(course.id).await?;
                let instructors: Vec<String> = members
                    .iter()
                    .filter(|m| m.role == Role::Instructor)
                    .map(|m| m.user.username.clone())
                    .collect();
                let students = members
                    .iter()
                    .filter(|m| m.role == Role::Student)
                    .count();
                rows.push((course, instructors, students));
            }
            if json {
                let value: Vec<_> = rows
                    .iter()
                    .map(|(c, i, s)| serde_json::json!({"code": c.code, "title": c.title, "instructors": i, "students": s}))
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                );
            } else {
                for (c, instructors, students) in rows {
                    println!(
                        "{:<16} {:<40} {} students; instructors: {}",
                        c.code,
                        c.title,
                        students,
                        instructors.join(", ")
                    );
                }
            }
        }
        CourseCommand::Instructor { code, username } => {
            let course = store
                .course_by_code(&code)
                .await?
                .ok_or_else(|| CoreError::NotFound(format!("there is no course {code}")))?;
            let user = find_user(store, &username).await?;
            assign_instructor(store, course.id, user.id, ACTOR).await?;
            println!("{} now teaches {}", user.username, course.code);
        }
    }
    Ok(())
}

async fn course_policy(
    config: &Config,
    store: &Store,
    code: &str,
    changes: crate::cli::PolicyChanges,
) -> Result<(), CliError> {
    use slicehub_core::quotas::{hours, zone_or_utc};
    use slicehub_core::courses::{policy_of, set_policy, PolicyForm, PolicyFormRules};
    let course = store
        .course_by_code(code)
        .await?
        .ok_or_else(|| CoreError::NotFound(format!("there is no course {code}")))?;
    let mut policy = policy_of(store, config, course.id).await?;
    let mut form = PolicyForm::from_policy(&policy);
    let crate::cli::PolicyChanges {
        images, profiles, max_minutes, max_sessions, max_slices, internet, quota_hours, period, reset, term, time_zone: zone,
        idle_minutes, idle_waiting_minutes, idle_warning_minutes,
    } = changes;
    let mut changing = false;
    for (field, value) in [
        (&mut form.images, images),
        (&mut form.profiles, profiles),
        (&mut form.max_minutes, max_minutes),
        (&mut form.max_sessions, max_sessions),
        (&mut form.max_slices, max_slices),
        (&mut form.internet, internet),
        (&mut form.quota_hours, quota_hours),
        (&mut form.period, period),
        (&mut form.time_zone, zone),
        (&mut form.idle_minutes, idle_minutes),
        (&mut form.idle_waiting_minutes, idle_waiting_minutes),
        (&mut form.idle_warning_minutes, idle_warning_minutes),
    ] {
        if let Some(value) = value {
            *field = value;
            changing = true;
        }
    }
    if let Some(reset) = reset {
        let (day, time) = reset.trim().split_once(' ').unwrap_or((reset.trim(), ""));
        form.reset_day = day.to_string();
        form.reset_time = time.trim().to_string();
        changing = true;
    }
    if let Some(term) = term {
        let (starts, ends) = term.split_once("..").unwrap_or((term.as_str(), ""));
        form.term_starts = starts.to_string();
        form.term_ends = ends.to_string();
        changing = true;
    }
    if changing {
        let (gpus, _) = slicehub_gpu::open_backend(&config.gpu, &config.data_dir)?;
        let known = tokio::task::spawn_blocking(move || slicehub_core::gpu::profile_names(gpus.as_ref()))
        .await
        .map_err(|e| CoreError::Gpu(e.to_string()))??;
        policy = form.parse(&known).map_err(|problems| {
            let words: Vec<_> = problems.into_iter().map(|p| format!("{}: {}", p.field, p.message)).collect();
            CoreError::InvalidRequest(words.join(" "))
        })?;
        set_policy(store, config, course.id, &policy, &known, ACTOR).await?;
    }
    let c = &course.code;
    println!("{c}: images {}", policy.images.join(", "));
    println!(
        "{c}: profiles {} (at most {} compute slices)",
        if policy.profiles.is_empty() { "all".to_string() } else { policy.profiles.join(", ") },
        policy.max_slices
    );
    println!("{c}: sessions stop after {} minutes; {} at once per student", policy.max_minutes, policy.max_sessions);
    println!(
        "{c}: internet {}",
        if policy.internet { "on" } else { "off: containers reach only the portal" }
    );
    match &policy.quota {
        Some(quota) => {
            let tz = zone_or_utc(&policy.time_zone);
            println!(
                "{c}: quota {} slice-hours per student {}; {}",
                hours(quota.slice_minutes * 60_000),
                quota.period.word().replace("this ", "per "),
                quota.period.renewal(tz)
            )
        }
        None => println!("{c}: no slice-hour quota"),
    }
    let idle = &policy.idle;
    match idle.idle_minutes {
        Some(minutes) => println!(
            "{c}: idle notebooks stop after {minutes} minutes{}, warned {} minutes ahead",
            idle.waiting_minutes.map(|w| format!(" ({w} while students wait for the size)")).unwrap_or_default(),
            idle.warning_minutes
        ),
        None => println!("{c}: idle notebooks are never stopped"),
    }
    Ok(())
}

async fn find_user(store: &Store, username: &str) -> Result<User, CliError> {
    let name = username.trim().to_lowercase();
    Ok(store
        .user_by_username(&name)
        .await?
        .ok_or_else(|| CoreError::NotFound(format!("there is no user {name}")))?)
}

fn read_password() -> Result<String, CliError> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| CliError::Io(format!("cannot read the password from standard input: {e}")))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// A provider key and subject as typed: one line each, of sane length.
fn identity_words(provider: &str, subject: &str) -> Result<(String, String), CliError> {
    let (provider, subject) = (provider.trim(), subject.trim());
    let known = provider == "ldap" || provider == "header" || provider.starts_with("oidc:") || provider.starts_with("lti:");
    if !known || provider.len() > 100 {
        return Err(CoreError::InvalidRequest("--provider is oidc:NAME, ldap, header or lti:ID".to_string()).into());
    }
    slicehub_core::auth::validate::check_text("the subject", subject, 1000, slicehub_core::auth::validate::Lines::One)
        .map_err(CoreError::InvalidRequest)?;
    if subject.is_empty() {
        return Err(CoreError::InvalidRequest("--subject is empty".to_string()).into());
    }
    Ok((provider.to_string(), subject.to_string()))
}
