//! The database boundary. One SQL text serves SQLite and PostgreSQL through sqlx's
//! `Any` driver (both accept `$1` placeholders); only migrations differ per database.
//! Values crossing it are limited to integers (as i64), floats, text and blobs.

mod api_tokens;
mod audit;
mod backup;
mod bookings;
mod connect;
mod edited_migrations;
mod flag;
mod courses;
mod gpu_session_row;
mod gpu_sessions;
mod identities;
mod invitations;
mod metrics_reads;
mod notebook_access;
mod policies;
mod prepared_instances;
mod queue_windows;
mod quotas;
mod report_rollups;
mod reports;
mod session_search;
mod logins;
mod lti;
mod session_idle;
mod sign_in_attempts;
mod settings;
mod slurm_links;
mod usage;
mod usage_rollups;
mod users;

pub use api_tokens::{ApiTokenRow, NewApiToken, PresentedToken};
pub use audit::{AuditEntry, AuditQuery};
pub use backup::sqlite_file_is_sound;
pub use bookings::{BookingRow, BookingSlotRow, NewBooking, WEEK_MS};
pub use connect::{redact_url, sqlite_path};
pub use courses::{AccountDetails, Course, Member, Role, RosterAccount, RosterChange};
pub use identities::IdentityRow;
pub use lti::{LtiContext, LtiPlatform};
pub use sign_in_attempts::SignInAttempt;
pub use gpu_sessions::{HeldSlice, NewGpuSession, SEEN_RUNNING_EVERY_MS};
pub use invitations::{Invitation, InvitedAccount};
pub use notebook_access::{GrantRow, RedeemedTicket};
pub use policies::PolicyRow;
pub use queue_windows::{QueueWindow, WaitingClaim};
pub use quotas::UsageInterval;
pub use reports::{BucketSums, ReportSnapshot, UsageKey, UsageTotals, UsageWindow, WaitCount};
pub use session_search::SessionSearch;
pub use session_idle::IdleRow;
pub use logins::StoredLogin;
pub use slurm_links::SlurmLink;
pub use usage::UsageRow;
pub use users::{NewUserRow, User};

use sqlx::AnyPool;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DbKind {
    Sqlite,
    Postgres,
}

impl DbKind {
    pub fn label(self) -> &'static str {
        match self {
            DbKind::Sqlite => "SQLite",
            DbKind::Postgres => "PostgreSQL",
        }
    }
}

#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    kind: DbKind,
    url_redacted: String,
    /// Counts this process's writes that can change who a caller is or what they may do
    /// (passwords, disabled or admin flags, course roles, login sessions ended).
    access_changes: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Store {
    /// How many writes that change callers' access this process has made.
    pub fn access_changes(&self) -> u64 {
        self.access_changes
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    fn access_changed(&self) {
        self.access_changes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn kind(&self) -> DbKind {
        self.kind
    }

    /// The URL with any password replaced, fit for logs and pages.
    pub fn url_redacted(&self) -> &str {
        &self.url_redacted
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

pub(crate) fn now_ms() -> i64 {
    crate::clock::Clock::now_ms(&crate::clock::SystemClock)
}
