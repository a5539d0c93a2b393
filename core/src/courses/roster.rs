//! Importing a course roster from CSV: a preview that says what each row would do, and
//! an apply that re-reads the file, refuses it if anything is wrong, and writes all of it
//! in one transaction. Importing never removes anyone, and importing the same file again
//! changes nothing.
//!
//! Per row: an unknown username is created (a student of the course, with the row's
//! name, email and password or a generated one-time password, either way to be replaced
//! at first login). A known one that is not yet a member is enrolled when an administrator
//! imports, and invited when an instructor does (it joins when its owner accepts, so no
//! instructor enrols, or reads the e-mail of, an account without its owner's word); an
//! instructor's preview says the same of every existing account, administrators' too. An
//! import never reads back nor changes an existing account's name, email, password or
//! flags. An administrator's import refuses administrators' accounts with their line.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

use super::manage::course;
use super::roster_csv::{read_roster, RosterLine};
use crate::auth::{one_time_password, PasswordHasher};
use crate::store::{AccountDetails, Course, Role, RosterAccount, RosterChange, Store};
use crate::CoreError;
use crate::{CourseId, UserId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RowAction {
    /// A new account, enrolled as a student.
    Create,
    /// An existing account, enrolled as a student; the account itself is not changed.
    Enroll,
    /// An existing account, invited: it joins the course when its owner accepts.
    Invite,
    /// Already a member of the course.
    Unchanged,
}

/// What one row will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowPlan {
    pub line: usize,
    pub username: String,
    pub action: RowAction,
    /// The new account's name and email, from the file. `None` for an existing account:
    /// what it has stored is neither shown nor changed.
    pub new_account: Option<AccountDetails>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RosterPreview {
    pub rows: Vec<RowPlan>,
    pub errors: Vec<RowError>,
}

impl RosterPreview {
    pub fn count(&self, action: RowAction) -> usize {
        self.rows.iter().filter(|row| row.action == action).count()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RosterApplied {
    pub created: usize,
    pub enrolled: usize,
    pub invited: usize,
    pub unchanged: usize,
    /// (username, password) for every account created with a generated password.
    pub one_time_passwords: Vec<(String, String)>,
}

/// Who imports: an administrator enrols existing accounts, an instructor invites them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Importer {
    Administrator,
    Instructor,
}

impl Importer {
    pub fn of(caller: &crate::auth::Caller) -> Importer {
        match caller {
            crate::auth::Caller::User { is_admin: true, .. } => Importer::Administrator,
            _ => Importer::Instructor,
        }
    }
}

/// What applying `bytes` to the course would do. Whole-file refusals (too large, too
/// many rows) are errors; everything else is in `errors` with its line.
pub async fn preview_roster(
    store: &Store,
    course_id: CourseId,
    bytes: &[u8],
    importer: Importer,
) -> Result<RosterPreview, CoreError> {
    let course = course(store, course_id).await?;
    Ok(plan(store, &course, bytes, importer).await?.preview)
}

/// Applies the file as previewed, all or nothing. Refuses (`InvalidRequest`, nothing
/// written) when the file has any row error. New accounts' passwords are hashed before
/// the transaction opens; a large import takes about one argon2id hash per new account
/// divided by the hasher's concurrency.
pub async fn apply_roster(
    store: &Store,
    hasher: &PasswordHasher,
    course_id: CourseId,
    bytes: &[u8],
    actor: &str,
    importer: Importer,
) -> Result<RosterApplied, CoreError> {
    let course = course(store, course_id).await?;
    let Planned { preview, steps } = plan(store, &course, bytes, importer).await?;
    if !preview.errors.is_empty() {
        return Err(CoreError::InvalidRequest(refusal(&preview.errors)));
    }

    let mut one_time_passwords = Vec::new();
    let mut to_hash = Vec::new();
    for (row, step) in preview.rows.iter().zip(&steps) {
        if let Step::Create { password } = step {
            let password = match password {
                Some(given) => given.clone(),
                None => {
                    let generated = one_time_password()?;
                    one_time_passwords.push((row.username.clone(), generated.clone()));
                    generated
                }
            };
            to_hash.push(password);
        }
    }
    let mut hashes = hasher.hash_many(to_hash).await?.into_iter();

    let mut changes = Vec::new();
    for (row, step) in preview.rows.iter().zip(steps) {
        let change = match (step, &row.new_account) {
            (Step::Create { .. }, Some(details)) => RosterChange::Create {
                username: row.username.clone(),
                details: details.clone(),
                password_hash: hashes.next().ok_or_else(|| {
                    CoreError::Auth("a password hash went missing during the import".to_string())
                })?,
                must_change_password: true,
            },
            (Step::Enroll { user_id } | Step::Claim { user_id }, _) => RosterChange::Enroll { user_id },
            (Step::Invite { user_id }, _) => RosterChange::Invite { user_id },
            _ => continue,
        };
        changes.push(change);
    }

    let applied = RosterApplied {
        created: preview.count(RowAction::Create),
        enrolled: preview.count(RowAction::Enroll),
        invited: preview.count(RowAction::Invite),
        unchanged: preview.count(RowAction::Unchanged),
        one_time_passwords,
    };
    let summary = format!(
        "created {}, enrolled {}, invited {}, unchanged {}",
        applied.created, applied.enrolled, applied.invited, applied.unchanged
    );
    store
        .apply_roster_changes(&course, &changes, actor, &summary)
        .await?;
    Ok(applied)
}

/// The generated passwords as a CSV file to download once after an import, through the
/// portal's one CSV writer (a username may start with `-`).
pub fn one_time_passwords_csv(applied: &RosterApplied) -> String {
    use crate::csv_export::{Cell, CsvWriter};
    let mut out = CsvWriter::with_crlf();
    out.header(&["username", "one-time password"]);
    for (username, password) in &applied.one_time_passwords {
        out.row(&[Cell::Text(username), Cell::Text(password)]);
    }
    out.finish()
}

fn refusal(errors: &[RowError]) -> String {
    const SHOWN: usize = 5;
    let listed: Vec<String> = errors.iter().take(SHOWN).map(RowError::to_string).collect();
    let more = match errors.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    format!(
        "the roster has {} problem(s), so nothing was imported: {}{more}",
        errors.len(),
        listed.join("; ")
    )
}

/// What a valid row will do; aligned with `RosterPreview::rows`.
enum Step {
    Create { password: Option<String> },
    Enroll { user_id: UserId },
    Invite { user_id: UserId },
    /// A student membership a provider gave, made hand-made (`enroll_student`).
    Claim { user_id: UserId },
    Unchanged,
}

struct Planned {
    preview: RosterPreview,
    steps: Vec<Step>,
}

async fn plan(store: &Store, course: &Course, bytes: &[u8], importer: Importer) -> Result<Planned, CoreError> {
    let parsed = read_roster(bytes)?;
    let usernames: Vec<String> = parsed.lines.iter().map(|l| l.username.clone()).collect();
    let existing: HashMap<String, RosterAccount> = store
        .roster_accounts(course.id, &usernames)
        .await?
        .into_iter()
        .map(|account| (account.username.clone(), account))
        .collect();
    let mut errors = parsed.errors;
    let mut rows = Vec::with_capacity(parsed.lines.len());
    let mut steps = Vec::with_capacity(parsed.lines.len());
    for line in parsed.lines {
        let account = existing.get(&line.username);
        match plan_row(line, account, importer) {
            Ok((row, step)) => {
                rows.push(row);
                steps.push(step);
            }
            Err(error) => errors.push(error),
        }
    }
    errors.sort_by_key(|e| e.line);
    Ok(Planned {
        preview: RosterPreview { rows, errors },
        steps,
    })
}

/// A new account from the file's values, or an existing one enrolled (by an
/// administrator) or invited (by an instructor) as it is. An administrator's import refuses
/// an administrator's account: an import never makes one a member by itself. An
/// instructor's invites it like any other, so the preview does not tell who administers;
/// the administrator then decides, as anyone invited does.
fn plan_row(
    line: RosterLine,
    account: Option<&RosterAccount>,
    importer: Importer,
) -> Result<(RowPlan, Step), RowError> {
    let RosterLine {
        line,
        username,
        display_name,
        email,
        password,
    } = line;
    let Some(account) = account else {
        let display_name = display_name.unwrap_or_else(|| username.clone());
        let row = RowPlan {
            line,
            username,
            action: RowAction::Create,
            new_account: Some(AccountDetails {
                display_name,
                email,
            }),
        };
        return Ok((row, Step::Create { password }));
    };
    if account.is_admin && importer == Importer::Administrator {
        return Err(RowError {
            line,
            message: format!(
                "`{username}` is an administrator's account; a roster import does not enrol \
                 administrators (remove the line)"
            ),
        });
    }
    let user_id = account.user_id;
    let (action, step) = match (account.role_in_course, importer) {
        // Already a student, by a provider's groups: listed by hand now, it stays when the
        // provider's groups change (still "unchanged": nobody joins the course).
        (Some(Role::Student), _) if account.membership_by_provider => (RowAction::Unchanged, Step::Claim { user_id }),
        (Some(_), _) => (RowAction::Unchanged, Step::Unchanged),
        (None, Importer::Administrator) => (RowAction::Enroll, Step::Enroll { user_id }),
        (None, Importer::Instructor) if account.invited => (RowAction::Unchanged, Step::Unchanged),
        (None, Importer::Instructor) => (RowAction::Invite, Step::Invite { user_id }),
    };
    let row = RowPlan {
        line,
        username,
        action,
        new_account: None,
    };
    Ok((row, step))
}
