//! The reconciler: rules that keep the database, Docker and the GPUs in agreement, run one
//! after another in a declared order every `sessions.reconcile_seconds` (and once after a
//! restart, `recovery.rs`). Each rule lives in its own file and handles each session on its
//! own: one that fails is logged and retried next pass, and never keeps the pass from the
//! others. A rule that fails as a whole (the database is down) is logged and the next rule
//! runs.
//!
//! The idle rule (`idle.rs`) runs after each slice sample instead (`background.rs`): it
//! judges the samples just taken.

mod booked_instances;
mod gone_containers;
mod host_firewall;
mod idle;
mod idle_rule;
pub(in crate::sessions) mod idle_state;
mod leftover_instances;
mod orphans;
mod quota;
mod recovery;
mod release;
mod repair;
mod time_limit;
mod usage;

pub use booked_instances::PREPARE_LEAD_MS;
pub use idle::IdleNotice;
pub use idle_rule::{IdlePolicy, IdleVerdict, IdleWarning, Judged};
pub(in crate::sessions) use time_limit::{deadline_at_claim, limit_ms};

use std::collections::HashSet;

use serde::Serialize;

use booked_instances::BookedPlacement;

use super::service::Sessions;
use crate::runtime::ManagedContainer;
use crate::CoreError;

/// What one pass changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReconcileReport {
    pub orphan_containers_removed: usize,
    pub sessions_ended: usize,
    pub slices_released: usize,
    pub usage_closed: usize,
    /// MIG instances the portal made that no session holds any more.
    pub instances_destroyed: usize,
    /// MIG instances made ahead of a booked lab window.
    pub instances_prepared: usize,
    pub stopped_at_time_limit: usize,
    pub stopped_at_quota: usize,
    pub queued_placed: usize,
    /// Sessions found stuck between states and failed or finished.
    pub repaired: usize,
    /// Host firewall rules of session networks found missing and put back.
    pub firewall_rules_restored: usize,
}

impl ReconcileReport {
    pub fn changed_anything(&self) -> bool {
        *self != ReconcileReport::default()
    }
}

/// One duty of the reconciler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `orphans.rs`: containers of this portal that no live session owns are removed.
    Orphans,
    /// `gone_containers.rs`: running sessions whose container stopped or vanished end.
    GoneContainers,
    /// `repair.rs`: sessions stuck between states fail (launches) or finish (stops).
    Repair,
    /// `host_firewall.rs`: the session networks' firewall rules are put back.
    HostFirewall,
    /// `release.rs`: ended sessions give their slice back.
    Release,
    /// `leftover_instances.rs`: MIG instances the portal made that nobody holds go.
    LeftoverInstances,
    /// `booked_instances.rs`: MIG instances of booked lab windows are made ahead.
    BookedInstances,
    /// `usage.rs`: usage left open by a crash is closed at the session's end.
    Usage,
    /// `time_limit.rs`: running sessions past the course's time limit stop.
    TimeLimit,
    /// `quota.rs`: running sessions of students whose slice-hours are used up stop.
    Quota,
    /// `../queue.rs`: queued sessions that now fit are placed.
    Dispatch,
}

/// The order of a pass. Each rule sees what the ones before it did: a session whose
/// container is gone has ended before its slice is released; a released slice's instance is
/// then a leftover; usage closes at the end the stop recorded; and the slices the time
/// limit and the quota free are placed by the queue in the same pass.
pub const ORDER: [Rule; 11] = [
    Rule::Orphans,
    Rule::GoneContainers,
    Rule::Repair,
    Rule::HostFirewall,
    Rule::Release,
    Rule::LeftoverInstances,
    Rule::BookedInstances,
    Rule::Usage,
    Rule::TimeLimit,
    Rule::Quota,
    Rule::Dispatch,
];

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Orphans => "orphans",
            Rule::GoneContainers => "gone containers",
            Rule::Repair => "repair",
            Rule::HostFirewall => "host firewall",
            Rule::Release => "release",
            Rule::LeftoverInstances => "leftover instances",
            Rule::BookedInstances => "booked instances",
            Rule::Usage => "usage",
            Rule::TimeLimit => "time limit",
            Rule::Quota => "quota",
            Rule::Dispatch => "dispatch",
        }
    }

    /// Runs the rule once at `now`; how many sessions, containers, slices or rules it
    /// changed.
    async fn pass(self, sessions: &Sessions, now: i64, reads: &PassReads) -> Result<usize, CoreError> {
        match self {
            Rule::Orphans => orphans::pass(sessions, reads.containers(sessions).await?).await,
            Rule::GoneContainers => gone_containers::pass(sessions, reads.containers(sessions).await?).await,
            Rule::Repair => repair::pass(sessions, now).await,
            Rule::HostFirewall => sessions.keep_host_firewall().await,
            Rule::Release => release::pass(sessions).await,
            Rule::LeftoverInstances => sessions.destroy_leftover_instances(reads.booked(sessions, now).await?).await,
            Rule::BookedInstances => sessions.prepare_booked_instances(reads.booked(sessions, now).await?).await,
            Rule::Usage => usage::pass(sessions).await,
            Rule::TimeLimit => time_limit::pass(&sessions.ctx, now).await,
            Rule::Quota => sessions.enforce_quotas_at(now).await,
            Rule::Dispatch => sessions.dispatch().await,
        }
    }

    /// Where the report counts what this rule changed.
    fn count(self, report: &mut ReconcileReport) -> &mut usize {
        match self {
            Rule::Orphans => &mut report.orphan_containers_removed,
            Rule::GoneContainers => &mut report.sessions_ended,
            Rule::Repair => &mut report.repaired,
            Rule::HostFirewall => &mut report.firewall_rules_restored,
            Rule::Release => &mut report.slices_released,
            Rule::LeftoverInstances => &mut report.instances_destroyed,
            Rule::BookedInstances => &mut report.instances_prepared,
            Rule::Usage => &mut report.usage_closed,
            Rule::TimeLimit => &mut report.stopped_at_time_limit,
            Rule::Quota => &mut report.stopped_at_quota,
            Rule::Dispatch => &mut report.queued_placed,
        }
    }
}

/// What several rules of one pass read, read once at its first need: the containers of
/// this portal (orphans, gone containers) and the slices booked windows keep (leftover and
/// booked instances). A read that fails is tried again by the next rule that needs it.
#[derive(Default)]
struct PassReads {
    containers: tokio::sync::OnceCell<Vec<ManagedContainer>>,
    booked: tokio::sync::OnceCell<HashSet<BookedPlacement>>,
}

impl PassReads {
    async fn containers(&self, sessions: &Sessions) -> Result<&[ManagedContainer], CoreError> {
        let list = self
            .containers
            .get_or_try_init(|| async { sessions.ctx.engine.managed_containers(&sessions.instance_id().await?).await })
            .await?;
        Ok(list)
    }

    async fn booked(&self, sessions: &Sessions, now: i64) -> Result<&HashSet<BookedPlacement>, CoreError> {
        self.booked.get_or_try_init(|| sessions.booked_placements_now(now)).await
    }
}

impl Sessions {
    /// One pass: every rule of [`ORDER`] at the clock's time. Fails only when every rule
    /// failed (the database or the engine is unreachable as a whole).
    pub async fn reconcile(&self) -> Result<ReconcileReport, CoreError> {
        let mut report = ReconcileReport::default();
        let reads = PassReads::default();
        let (mut failures, mut last_failure) = (0, None);
        for rule in ORDER {
            match rule.pass(self, self.now_ms(), &reads).await {
                Ok(n) => *rule.count(&mut report) = n,
                Err(e) => {
                    if rule == Rule::HostFirewall {
                        tracing::error!(error = %e, "reconcile: session networks' firewall rules cannot be put back; launches set them up again");
                    } else {
                        tracing::warn!(rule = rule.name(), error = %e, "reconcile: a rule failed this pass; the next pass tries again");
                    }
                    failures += 1;
                    last_failure = Some(e);
                }
            }
        }
        match last_failure {
            Some(e) if failures == ORDER.len() => Err(e),
            _ => Ok(report),
        }
    }
}
