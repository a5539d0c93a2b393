//! The Slurm pool's watcher: it reads Slurm's jobs every second and moves each session along
//! the lifecycle local sessions follow (see `slurm_start.rs` for a job that starts), ends
//! sessions whose job ended, failed or lost its node, and cancels the portal's jobs that no
//! live session owns. Other jobs are never touched.

use std::collections::{HashMap, HashSet};

use super::service::Sessions;
use super::model::{GpuSession, SessionKind, SessionState};
use super::slurm_state::{SeenRecord, SlurmWait};
use crate::slurm::{never_starts, pending_words, JobPhase, SlurmJob, SlurmNode};
use crate::CoreError;

/// A session submitted this long ago whose job Slurm does not list is over.
const SUBMIT_GRACE_MS: i64 = 30_000;

impl Sessions {
    /// One pass: every live Slurm session is compared with its job, and the portal's jobs
    /// that no live session owns are cancelled. Other jobs are never touched.
    pub async fn watch_slurm_once(&self) -> Result<(), CoreError> {
        let client = self.slurm_client()?;
        let prefix = self.slurm_tag_prefix().await?;
        // The comment is only a filter: anyone may write it on their own job.
        let tagged: Vec<(String, SlurmJob)> = client
            .jobs()
            .await?
            .into_iter()
            .filter_map(|j| Some((j.comment.strip_prefix(&prefix)?.to_string(), j)))
            .collect();
        let sessions = self.ctx.store.live_slurm_sessions().await?;
        let jobs: HashMap<String, SlurmJob> = sessions
            .iter()
            .filter_map(|s| {
                let (_, job) = tagged.iter().find(|(id, job)| *id == s.id && self.is_job_of(s, job))?;
                Some((s.id.clone(), job.clone()))
            })
            .collect();
        // Where jobs run (addresses) and why a node went away (reasons of failed jobs).
        let nodes: HashMap<String, SlurmNode> = if sessions.iter().any(|s| jobs.contains_key(&s.id)) {
            client.nodes().await?.into_iter().map(|n| (n.name.clone(), n)).collect()
        } else {
            HashMap::new()
        };
        self.remember_waits(&sessions, &jobs);
        self.record_seen_running(&jobs).await;
        for session in &sessions {
            // Missing from the list (a controller failing over may answer an empty one):
            // asked for by id before anything is concluded, and only Slurm's definite "no
            // such job" counts as gone; an error (the same failover) decides nothing.
            let missing = match (jobs.get(&session.id), session.slurm_job) {
                (None, Some(job)) if session.state != SessionState::Stopping => match client.job(job as u64).await {
                    Ok(found) => found,
                    Err(e) => {
                        tracing::warn!(session = %session.id, job, error = %e, "slurm: job not in the list and not readable by id; left as it is this pass");
                        continue;
                    }
                },
                _ => None,
            };
            let job = jobs.get(&session.id).or(missing.as_ref());
            if let Err(e) = self.follow_job(session, job, &nodes).await {
                tracing::warn!(session = %session.id, error = %e, "slurm: session not brought up to date");
            }
        }
        let live: std::collections::HashSet<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
        for (id, job) in &tagged {
            if matches!(job.phase(), JobPhase::Over(_)) || live.contains(id.as_str()) {
                continue;
            }
            if self.ctx.is_in_flight(id) {
                continue;
            }
            tracing::info!(session = %id, job = job.id, "slurm: cancelling a job no live session owns");
            if let Err(e) = client.cancel(job.id, &job.user).await {
                tracing::warn!(session = %id, job = job.id, error = %e, "slurm: orphan job not cancelled yet");
            }
        }
        Ok(())
    }

    /// Records the running jobs as seen, every half minute at most; a job first seen
    /// running is recorded at once.
    async fn record_seen_running(&self, jobs: &HashMap<String, SlurmJob>) {
        let now = self.now_ms();
        let running: Vec<(&String, u64)> =
            jobs.iter().filter(|(_, j)| j.phase() == JobPhase::Running).map(|(id, j)| (id, j.id)).collect();
        let ids: HashSet<u64> = running.iter().map(|(_, job)| *job).collect();
        let due = {
            let last = self.slurm.seen.lock().unwrap_or_else(|p| p.into_inner());
            !ids.is_subset(&last.jobs) || now - last.at_ms >= crate::store::SEEN_RUNNING_EVERY_MS / 2
        };
        if !due {
            return;
        }
        let sessions: Vec<String> = running.iter().map(|(id, _)| (*id).clone()).collect();
        match self.ctx.store.mark_slurm_seen_running(&sessions, now).await {
            Ok(()) => *self.slurm.seen.lock().unwrap_or_else(|p| p.into_inner()) = SeenRecord { at_ms: now, jobs: ids },
            Err(e) => tracing::warn!(error = %e, "slurm: jobs seen running not recorded"),
        }
    }

    /// Whether `job` is the one `session` submitted: the id it recorded, or (when the claim
    /// that submitted it did not live to record one) a job of the session's own cluster
    /// user, partition and course account. Another tenant's job carrying the session's
    /// comment is neither followed nor adopted.
    fn is_job_of(&self, session: &GpuSession, job: &SlurmJob) -> bool {
        if let Some(recorded) = session.slurm_job {
            return u64::try_from(recorded).is_ok_and(|id| id == job.id);
        }
        let Ok(slurm) = self.slurm_client() else { return false };
        let (partition, account) = self.slurm_job_home(&session.course_code);
        slurm.cluster_user(&session.username).is_ok_and(|user| user == job.user)
            && job.partition == partition
            && job.account == account
    }

    fn remember_waits(&self, sessions: &[GpuSession], jobs: &HashMap<String, SlurmJob>) {
        let mut pending: Vec<(&GpuSession, &SlurmJob)> = sessions
            .iter()
            .filter_map(|s| Some((s, jobs.get(&s.id)?)))
            .filter(|(_, j)| j.phase() == JobPhase::Pending)
            .collect();
        // Slurm starts the highest priority first, then the oldest.
        pending.sort_by_key(|(_, j)| (std::cmp::Reverse(j.priority), j.id));
        let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
        let waits = pending
            .into_iter()
            .map(|(s, j)| {
                let position = seen.entry((s.profile.as_str(), j.partition.as_str())).or_default();
                *position += 1;
                (
                    s.id.clone(),
                    SlurmWait {
                        reason: j.reason.clone(),
                        words: pending_words(&j.reason),
                        expected_start_ms: j.start_ms.filter(|at| *at > self.now_ms() - 60_000),
                        position: *position,
                        profile: s.profile.clone(),
                        partition: j.partition.clone(),
                    },
                )
            })
            .collect();
        *self.slurm.waits.lock().unwrap_or_else(|p| p.into_inner()) = waits;
    }

    async fn follow_job(
        &self,
        session: &GpuSession,
        job: Option<&SlurmJob>,
        nodes: &HashMap<String, SlurmNode>,
    ) -> Result<(), CoreError> {
        use SessionState::*;
        let Some(job) = job else {
            let submitted_long_ago = self.now_ms() - session.updated_at_ms > SUBMIT_GRACE_MS;
            if session.state == Stopping || self.ctx.is_in_flight(&session.id) || !submitted_long_ago {
                return Ok(());
            }
            let why = match session.slurm_job {
                Some(job) => format!("Slurm no longer knows job {job}"),
                None => "the job never reached Slurm; start it again".to_string(),
            };
            // Slurm forgets a job some minutes after it ended (MinJobAge): charged until it
            // was last seen running, not until this pass (after portal downtime, much later).
            if let Some(seen) = self.ctx.store.slurm_seen_running_at(&session.id).await? {
                self.ctx.store.close_usage(&session.id, seen.min(self.now_ms()), &why).await?;
            }
            return self.ctx.fail(&session.id, &why).await;
        };
        if session.slurm_job.is_none() {
            // The claim that submitted it did not live to write its id down.
            self.ctx.store.set_slurm_job(&session.id, job.id as i64).await?;
        }
        // Per-student users: a student with no account on the cluster gets a job Slurm runs
        // as nobody (and requeues when it cannot start); it must not wait for ever.
        let slurm = self.slurm_client()?;
        if slurm.per_student() && Some(job.user.as_str()) != slurm.cluster_user(&session.username).ok().as_deref() {
            let why = format!(
                "your account {} does not exist on the Slurm cluster's nodes; ask an administrator to add it",
                session.username
            );
            return self.ctx.fail(&session.id, &why).await;
        }
        // A job that had started and is back in the queue (Slurm requeues a job whose node
        // fails, whatever `requeue` said) or whose node went down: its notebook is gone.
        let started = matches!(session.state, Allocating | Creating | Starting | Ready);
        let node = session.slurm_node.as_deref().or(job.node.as_deref()).and_then(|n| nodes.get(n));
        let node_gone = node.filter(|n| n.down());
        if started && (job.phase() == JobPhase::Pending || node_gone.is_some()) {
            let why = match node_gone {
                Some(n) => node_went(n),
                None => format!("Slurm put job {} back in its queue (its node failed)", job.id),
            };
            self.ctx.fail(&session.id, &why).await?;
            return Ok(());
        }
        match job.phase() {
            JobPhase::Pending if never_starts(&job.reason) => {
                let why = format!("Slurm will not start this job ({}): the course's settings and the cluster's disagree; tell your instructor", job.reason);
                self.ctx.fail(&session.id, &why).await
            }
            JobPhase::Ending => Ok(()),
            JobPhase::Pending => {
                if session.state == Requested && !self.ctx.is_in_flight(&session.id) {
                    let detail = format!("waiting in Slurm as job {}", job.id);
                    self.ctx.publish(self.ctx.store.transition(&session.id, Queued, &detail).await?);
                }
                Ok(())
            }
            JobPhase::Running => {
                if self.ctx.is_in_flight(&session.id) {
                    return Ok(());
                }
                match session.state {
                    Requested | Queued | Allocating | Creating => self.ctx.slurm_job_started(session, job, node).await,
                    Starting => {
                        self.ctx.spawn_slurm_readiness(session.id.clone());
                        Ok(())
                    }
                    _ => Ok(()),
                }
            }
            JobPhase::Over(state) => self.slurm_job_over(session, job, &state, node).await,
        }
    }

    /// The job is over in Slurm: the session ends with what Slurm says happened.
    async fn slurm_job_over(
        &self,
        session: &GpuSession,
        job: &SlurmJob,
        state: &str,
        node: Option<&SlurmNode>,
    ) -> Result<(), CoreError> {
        if session.state == SessionState::Stopping {
            return Ok(());
        }
        let node_name = job.node.clone().unwrap_or_else(|| "its node".into());
        let node_went = match node.filter(|n| n.down()) {
            Some(n) => node_went(n),
            None => format!("the Slurm node {node_name} failed"),
        };
        let code = job.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "unknown".into());
        let job_kind = session.kind == SessionKind::Job;
        let (ended, reason) = match state {
            "COMPLETED" if job_kind => (true, "the job finished (exit code 0)".to_string()),
            "COMPLETED" => (false, "JupyterLab exited on the Slurm node".to_string()),
            "CANCELLED" => (false, format!("Slurm job {} was cancelled outside the portal", job.id)),
            "TIMEOUT" => (true, "stopped at the Slurm time limit".to_string()),
            "NODE_FAIL" | "BOOT_FAIL" => (false, node_went),
            "OUT_OF_MEMORY" => (false, "out of memory: the job used more memory than Slurm allows it".to_string()),
            "PREEMPTED" => (false, "Slurm preempted the job for higher-priority work".to_string()),
            "FAILED" if job_kind => (false, format!("the job exited with code {code}")),
            other => (false, format!("the Slurm job ended ({other}, exit code {code})")),
        };
        let to = if ended { SessionState::Ended } else { SessionState::Failed };
        let from = SessionState::ACTIVE;
        // Charged until the job ended, not until the watcher noticed (after portal downtime,
        // much later); the stop's own close then finds the interval closed.
        if let Some(end) = job.end_ms {
            let now = self.now_ms();
            self.ctx.store.close_usage(&session.id, end.min(now), &reason).await?;
        }
        if job_kind {
            if let Some(code) = job.exit_code {
                self.ctx.store.set_session_outcome(&session.id, Some(code), "").await?;
            }
        }
        self.ctx.finish(&session.id, from, to, &reason).await.map(|_| ())
    }

}

/// "the Slurm node X went down: REASON"
fn node_went(node: &SlurmNode) -> String {
    match node.reason.as_str() {
        "" => format!("the Slurm node {} went down", node.name),
        reason => format!("the Slurm node {} went down: {reason}", node.name),
    }
}

