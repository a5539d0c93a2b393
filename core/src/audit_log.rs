//! The audit log as admins read it: filtered by who, what kind of action and when, a page
//! at a time or as CSV.

use crate::clock::iso_utc;
use crate::store::{AuditEntry, AuditQuery};
use crate::CoreError;

const DAY_MS: i64 = 86_400_000;

/// The kinds of action a filter may pick: the action prefix and its words.
pub const AUDIT_KINDS: [(&str, &str); 10] = [
    ("login", "Sign-ins and failed sign-ins"),
    ("user.", "Accounts: created, disabled, admin rights"),
    ("password.", "Password changes and resets"),
    ("api_token.", "Personal access tokens made and revoked"),
    ("course.", "Courses, instructors and policies"),
    ("roster.", "Roster imports and removals"),
    ("quota.", "Extra slice-hours granted"),
    ("session.", "Sessions stopped, culled or kept running, notebooks opened by admins"),
    ("gpu.", "GPU layouts and drains"),
    ("portal.", "Portal starts"),
];

/// The filter form's fields as typed; every one may be empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditForm {
    pub who: String,
    pub what: String,
    /// `YYYY-MM-DD`, both days included.
    pub from: String,
    pub to: String,
}

impl AuditForm {
    pub fn query(&self) -> Result<AuditQuery, CoreError> {
        let who = self.who.trim();
        if who.chars().count() > 64 {
            return Err(CoreError::InvalidRequest("A username has at most 64 characters.".into()));
        }
        crate::auth::validate::check_text("the username", who, 64, crate::auth::validate::Lines::One)
            .map_err(CoreError::InvalidRequest)?;
        let what = self.what.trim();
        if !what.is_empty() && !AUDIT_KINDS.iter().any(|(prefix, _)| *prefix == what) {
            return Err(CoreError::InvalidRequest(
                "Unknown kind of action: choose one from the list.".into(),
            ));
        }
        let from_ms = match self.from.trim() {
            "" => 0,
            text => day(text)?,
        };
        let to_ms = match self.to.trim() {
            "" => i64::MAX,
            text => day(text)? + DAY_MS,
        };
        if to_ms <= from_ms {
            return Err(CoreError::InvalidRequest(
                "The last day is before the first: choose a last day on or after the first.".into(),
            ));
        }
        Ok(AuditQuery { actor: who.to_string(), action_prefix: what.to_string(), from_ms, to_ms })
    }
}

fn day(text: &str) -> Result<i64, CoreError> {
    crate::quotas::parse_date(text)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
        .ok_or_else(|| {
            CoreError::InvalidRequest(format!(
                "“{}” is not a date: write it as YYYY-MM-DD.",
                text.chars().take(40).collect::<String>()
            ))
        })
}

pub const AUDIT_CSV_HEADER: &str = "at_utc,actor,action,subject,detail\n";

/// One entry as a CSV line (quoted as needed, ending in a newline). Every cell is text,
/// neutralised against formulas: the subject of a failed sign-in is whatever was typed.
pub fn audit_csv_line(entry: &AuditEntry) -> String {
    use crate::csv_export::{line, Cell};
    let at = iso_utc(entry.at_ms);
    line(&[
        Cell::Text(&at),
        Cell::Text(&entry.actor),
        Cell::Text(&entry.action),
        Cell::Text(&entry.subject),
        Cell::Text(&entry.detail),
    ])
}
