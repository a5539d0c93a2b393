pub mod accounts;
pub mod backup;
pub mod check;
pub mod gpu_inspect;
pub mod gpu_layout;
pub mod readiness;
pub mod remote;
pub mod routes;
pub mod sessions;
pub mod lms;
pub mod slurm;
pub mod tokens;
pub mod usage;


use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// SliceHub: MIG slices of NVIDIA GPUs for a whole class, with JupyterLab in the browser.
///
/// Configuration comes from a TOML file (--config, SLICEHUB_CONFIG, or ./slicehub.toml when
/// present) and SLICEHUB_* environment variables; the README lists every key.
#[derive(Debug, Parser)]
#[command(name = "slicehub", version)]
pub struct Cli {
    /// Configuration file (TOML).
    #[arg(long, short, global = true, env = "SLICEHUB_CONFIG")]
    pub config: Option<PathBuf>,

    /// Write logs as JSON lines (same as log.format = "json").
    #[arg(long, global = true)]
    pub log_json: bool,

    /// Talk to the portal at this URL through its REST API instead of this machine's
    /// database (with --token-file): `session list|stop`, `user list`, `gpu drain|undrain`.
    #[arg(long, global = true, requires = "token_file", value_name = "URL")]
    pub url: Option<String>,

    /// A file holding a personal access token (made on the account page, or by
    /// `slicehub token create`), for --url.
    #[arg(long, global = true, requires = "url", value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the portal (the default): migrate the database, then serve HTTP.
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Print what this machine offers: database, Docker engine and API version, GPUs.
    Check {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Manage accounts.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage courses.
    Course {
        #[command(subcommand)]
        command: CourseCommand,
    },
    /// GPU sessions as the database records them.
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// Copy the database (and the configuration file) into a new directory DIR, mode
    /// 0700, while the portal runs: SQLite through `VACUUM INTO`, PostgreSQL through
    /// `pg_dump`. The students' home volumes are not in it (README: Backups).
    Backup { dir: PathBuf },
    /// Restore a backup DIR into this configuration's database, which must be empty (a new
    /// data directory, or a new PostgreSQL database); the configuration file is not touched.
    Restore { dir: PathBuf },
    /// The Slurm pool's links from portal accounts to cluster users (per-student mode).
    Slurm {
        #[command(subcommand)]
        command: SlurmCommand,
    },
    /// The LMS platforms (LTI 1.3) students and instructors may launch from.
    Lms {
        #[command(subcommand)]
        command: LmsCommand,
    },
    /// Personal access tokens for the REST and JupyterHub APIs.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// The usage ledger's per-day totals, which usage reports read.
    Usage {
        #[command(subcommand)]
        command: UsageCommand,
    },
    /// Print every page and server-function path as JSON (for tests and audits).
    #[command(hide = true)]
    Routes,
    /// Look at the GPUs directly (no database needed).
    Gpu {
        #[command(subcommand)]
        command: GpuCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Every session, newest first: state, slice, container, and whether its usage
    /// interval is still open.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Stop a session as an administrator: remove its container, free its slice.
    Stop {
        id: String,
        #[arg(long, default_value = "stopped by an administrator")]
        reason: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token for USERNAME; the token alone is printed on standard output, once.
    Create {
        username: String,
        /// What the token is for, e.g. "nightly usage export".
        #[arg(long)]
        name: String,
        /// read, sessions, course:manage or admin; repeat the flag or separate by commas.
        #[arg(long = "scope", required = true)]
        scopes: Vec<String>,
        /// 7, 30, 90 or 365.
        #[arg(long, default_value_t = 30)]
        days: u32,
    },
    /// List USERNAME's tokens (never their secrets).
    List { username: String },
    /// Revoke token ID of USERNAME.
    Revoke { username: String, id: i64 },
}

#[derive(Debug, Subcommand)]
pub enum UsageCommand {
    /// Compute the per-day totals again from every closed interval of the ledger. The
    /// portal keeps them as sessions end; this is for a ledger changed by other means.
    /// It holds the database's write lock on SQLite while it runs: stop the portal first.
    Rebuild,
}

#[derive(Debug, Subcommand)]
pub enum LmsCommand {
    /// Register a platform with what its administrator gives for the tool, e.g.
    /// `lms add canvas --issuer https://canvas.instructure.com --client-id 10000000000001
    /// --deployment 1:abc --login-url https://sso.canvaslms.com/api/lti/authorize_redirect
    /// --token-url https://sso.canvaslms.com/login/oauth2/token --jwks-url
    /// https://sso.canvaslms.com/api/lti/security/jwks`.
    Add {
        name: String,
        #[arg(long)]
        issuer: String,
        #[arg(long)]
        client_id: String,
        /// Deployment ids, separated by commas (the flag may also be repeated).
        #[arg(long = "deployment", required = true)]
        deployments: Vec<String>,
        #[arg(long)]
        login_url: String,
        #[arg(long)]
        token_url: String,
        #[arg(long)]
        jwks_url: String,
    },
    /// List the registered platforms.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a platform: its launches stop; the courses and accounts it made stay.
    Remove { name: String },
}

#[derive(Debug, Subcommand)]
pub enum SlurmCommand {
    /// Bind the line of `slurm.users_file` for USERNAME to the portal account of that name
    /// as it is now: needed for a line the portal read before the account existed (an
    /// account made later under a listed name, by a roster import say, is not that
    /// cluster user until an administrator says so).
    Link { username: String },
}

#[derive(Debug, Subcommand)]
pub enum GpuCommand {
    /// Give GPU INDEX a static MIG layout such as all-1g.10gb or all-balanced (instances
    /// not in it are destroyed, missing ones created), or `dynamic` to let claims create
    /// and destroy instances.
    Layout { index: u32, layout: String },
    /// Place no new sessions on GPU INDEX; those running on it go on to their end.
    Drain { index: u32 },
    /// Return a drained GPU INDEX to service (the serving portal fills it from the queue).
    Undrain { index: u32 },
    /// Print the GPUs, their MIG profiles with placements, and the MIG instances that exist.
    Inspect {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Also read how busy each GPU (MIG off) or MIG instance was over this many
        /// seconds, from GPM samples: the signal idle culling judges jobs by.
        #[arg(long, value_name = "SECONDS")]
        activity: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create an account; without --password-stdin it gets a one-time password, printed once.
    Add {
        username: String,
        /// Display name (defaults to the username).
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        email: Option<String>,
        /// Make the account an administrator.
        #[arg(long)]
        admin: bool,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Set a password from standard input, or (without --password-stdin) reset it to a
    /// one-time password. Either way every session of the user ends.
    Passwd {
        username: String,
        #[arg(long)]
        password_stdin: bool,
    },
    /// List accounts.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Disable an account (its sessions end at once).
    Disable { username: String },
    /// Enable a disabled account.
    Enable { username: String },
    /// Attach a sign-in identity to an account, e.g. `user attach jdoe --provider
    /// oidc:campus --subject 5f2c…` (the provider's subject, as the audit log's failed
    /// sign-in shows it, or as the provider's administrator reads it).
    Attach {
        username: String,
        /// `oidc:NAME`, `ldap`, `header` or `lti:ID` (the platform's id in `lms list --json`).
        #[arg(long)]
        provider: String,
        #[arg(long)]
        subject: String,
    },
    /// Detach a sign-in identity from whatever account has it.
    Detach {
        #[arg(long)]
        provider: String,
        #[arg(long)]
        subject: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum CourseCommand {
    /// Create a course, e.g. `course add CS-101 "Deep Learning Lab"`.
    Add { code: String, title: String },
    /// List courses with their instructors and number of students.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Make a user an instructor of a course.
    Instructor { code: String, username: String },
    /// Show or change what a course's students may run; options not given stay as they are.
    Policy {
        code: String,
        #[command(flatten)]
        changes: PolicyChanges,
    },
}

/// Fields of a course policy to change; the rest stay as they are. The same checks as the
/// policy page apply.
#[derive(Debug, clap::Args)]
pub struct PolicyChanges {
    /// Allowed images, comma-separated, e.g. `slicehub/jupyterlab:offline`.
    #[arg(long)]
    pub images: Option<String>,
    /// Allowed MIG profiles, comma-separated; `all` for every profile up to the cap.
    #[arg(long)]
    pub profiles: Option<String>,
    /// Longest a session may run before it is stopped.
    #[arg(long)]
    pub max_minutes: Option<String>,
    /// Sessions (queued or running) one student may have at once.
    #[arg(long)]
    pub max_sessions: Option<String>,
    /// The largest slice one student may claim, in compute slices (3 for a 3g).
    #[arg(long)]
    pub max_slices: Option<String>,
    /// Whether the course's containers reach the internet (`on`, the default, or `off`).
    #[arg(long, value_parser = ["on", "off"])]
    pub internet: Option<String>,
    /// Slice-hours per student and period (a 3g slice for one hour is 3); 0 for no quota.
    #[arg(long)]
    pub quota_hours: Option<String>,
    /// `week` or `term`.
    #[arg(long, value_parser = ["week", "term"])]
    pub period: Option<String>,
    /// When a weekly budget resets, as DAY HH:MM (e.g. `Monday 00:00`).
    #[arg(long)]
    pub reset: Option<String>,
    /// A term budget's first and last day, as YYYY-MM-DD..YYYY-MM-DD.
    #[arg(long)]
    pub term: Option<String>,
    /// The course's time zone (IANA name such as Europe/Berlin); budgets reset in it.
    #[arg(long)]
    pub time_zone: Option<String>,
    /// Minutes without activity before a notebook stops; `off` for never.
    #[arg(long)]
    pub idle_minutes: Option<String>,
    /// The shorter idle limit while students wait for the size; `off` for the same.
    #[arg(long)]
    pub idle_waiting_minutes: Option<String>,
    /// Minutes of warning before an idle stop.
    #[arg(long)]
    pub idle_warning_minutes: Option<String>,
}
