//! Sessions of the Slurm pool: each one a Slurm job that starts JupyterLab (or the job's
//! command) on a node's MIG GRES. The portal keeps accounts, quotas, the proxy and usage;
//! Slurm keeps the queue order and placement. A watcher reads Slurm's jobs every second and
//! moves each session along the same lifecycle local sessions follow.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::manager::Sessions;
use super::model::{GpuSession, SessionKind, SessionPool, SessionState};
use super::readiness::answers_ok;
use crate::metrics::METRICS;
use crate::slurm::{never_starts, notebook_port, pending_words, JobPhase, JobRequest, JobWork, SlurmClient, SlurmJob, SlurmNode};
use crate::store::now_ms;
use crate::CoreError;

/// How often the watcher reads Slurm's jobs.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// A session submitted this long ago whose job Slurm does not list is over.
const SUBMIT_GRACE_MS: i64 = 30_000;

/// Why a Slurm session waits and when Slurm expects it to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmWait {
    /// Slurm's pending reason (`Resources`, `Priority`).
    pub reason: String,
    /// The same for a student.
    pub words: String,
    /// Slurm's estimated start (its backfill plan), when it has one.
    pub expected_start_ms: Option<i64>,
    /// Place among the portal's pending jobs of the same profile and partition, in Slurm's
    /// order: 1 is next.
    pub position: usize,
    pub profile: String,
    pub partition: String,
}

impl Sessions {
    pub(super) fn slurm(&self) -> Result<&SlurmClient, CoreError> {
        self.inner
            .slurm
            .as_ref()
            .ok_or_else(|| CoreError::Config("this portal has no Slurm cluster configured (slurm.url)".into()))
    }

    /// `slicehub:<portal instance>:` — the comment every job of this portal carries.
    async fn slurm_tag_prefix(&self) -> Result<String, CoreError> {
        Ok(format!("slicehub:{}:", self.instance_id().await?))
    }

    /// The MIG profiles the cluster's nodes offer as GPU GRES.
    pub async fn slurm_profiles(&self) -> Result<Vec<String>, CoreError> {
        let mut profiles: Vec<String> = self
            .slurm()?
            .nodes()
            .await?
            .into_iter()
            .flat_map(|n| n.gres.into_iter().map(|g| g.profile))
            .filter(|p| !p.is_empty())
            .collect();
        profiles.sort();
        profiles.dedup();
        Ok(profiles)
    }

    /// The cluster's nodes with their GRES and what is allocated (the GPU page).
    pub async fn slurm_nodes(&self) -> Result<Vec<SlurmNode>, CoreError> {
        self.slurm()?.nodes().await
    }

    /// What a claim on the cluster would find now in each partition, per MIG profile the
    /// partition's nodes offer: GRES free on nodes that take jobs, and the portal's jobs
    /// waiting for that profile.
    pub async fn slurm_availability(&self, partitions: &[&str]) -> Result<Vec<Vec<super::ProfileAvailability>>, CoreError> {
        let nodes = self.slurm()?.nodes().await?;
        let waits = self.slurm_waits();
        Ok(partitions.iter().map(|p| availability_in(&nodes, &waits, p)).collect())
    }

    /// Why each waiting Slurm session waits, as the watcher last read it.
    pub fn slurm_waits(&self) -> HashMap<String, SlurmWait> {
        self.inner.slurm_waits.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Submits a just-recorded Slurm session as a job. A refusal fails the session with
    /// Slurm's words; the session is `queued` once Slurm has it.
    pub(super) async fn submit_to_slurm(&self, id: &str, time_limit_minutes: i64) -> Result<(), CoreError> {
        let store = &self.inner.store;
        let session = self.session(id).await?;
        let config = &self.inner.config;
        let partition = config.slurm_partition_of(&session.course_code).unwrap_or(&config.slurm_partition).to_string();
        let request = JobRequest {
            session_id: session.id.clone(),
            tag: format!("{}{}", self.slurm_tag_prefix().await?, session.id),
            partition: partition.clone(),
            account: session.course_code.to_ascii_lowercase(),
            profile: session.profile.clone(),
            time_limit_minutes,
            image: session.image.clone(),
            container_command: config.slurm_container_command.clone(),
            path: config.slurm_node_path.clone(),
            work: match session.kind {
                SessionKind::Notebook => JobWork::Notebook {
                    token: session.token.clone(),
                    base_url: session.base_url(),
                },
                SessionKind::Job => JobWork::Command(session.argv.clone()),
            },
        };
        let _working = self.mark_in_flight(id);
        let job = match self.slurm()?.submit(&request, &session.username).await {
            Ok(job) => job,
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "slurm: job not submitted");
                let why = match e {
                    CoreError::Cluster(m) if m.starts_with("Slurm refused the job") => m,
                    _ => "the Slurm cluster did not take the job (it is not answering); start it again".to_string(),
                };
                self.fail(id, &why).await?;
                return Ok(());
            }
        };
        store.set_slurm_job(id, job as i64).await?;
        let detail = format!("submitted to Slurm as job {job} (partition {partition}, gres gpu:{}:1)", session.profile);
        if !self.publish(store.transition(id, SessionState::Queued, &detail).await?) {
            // Stopped while it was being submitted: the stop found no job to cancel.
            self.slurm()?.cancel(job, &session.username).await?;
        }
        Ok(())
    }

    /// Sessions of the Slurm pool when the portal has no cluster configured any more: they
    /// cannot be followed, so they end (at start-up).
    pub(super) async fn end_unreachable_slurm_sessions(&self) -> Result<(), CoreError> {
        if self.inner.slurm.is_some() {
            return Ok(());
        }
        for session in self.inner.store.live_slurm_sessions().await? {
            let why = "the portal no longer has a Slurm cluster configured";
            if let Err(e) = self.fail(&session.id, why).await {
                tracing::warn!(session = %session.id, error = %e, "slurm: session not ended");
            }
        }
        Ok(())
    }

    /// Reads Slurm's jobs every second for as long as the portal runs.
    pub(super) fn start_slurm_watch(&self) {
        if self.inner.slurm.is_none() || !self.inner.dispatches.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = this.watch_slurm_once().await {
                    tracing::warn!(error = %e, "slurm: jobs not read this time");
                }
                tokio::time::sleep(WATCH_EVERY).await;
            }
        });
    }

    /// One pass: every live Slurm session is compared with its job, and the portal's jobs
    /// that no live session owns are cancelled. Other jobs are never touched.
    pub async fn watch_slurm_once(&self) -> Result<(), CoreError> {
        let client = self.slurm()?;
        let prefix = self.slurm_tag_prefix().await?;
        let jobs: HashMap<String, SlurmJob> = client
            .jobs()
            .await?
            .into_iter()
            .filter_map(|j| Some((j.comment.strip_prefix(&prefix)?.to_string(), j)))
            .collect();
        let sessions = self.inner.store.live_slurm_sessions().await?;
        // Where jobs run (addresses) and why a node went away (reasons of failed jobs).
        let nodes: HashMap<String, SlurmNode> = if sessions.iter().any(|s| jobs.contains_key(&s.id)) {
            client.nodes().await?.into_iter().map(|n| (n.name.clone(), n)).collect()
        } else {
            HashMap::new()
        };
        self.remember_waits(&sessions, &jobs);
        for session in &sessions {
            // Missing from the list (a controller failing over may answer an empty one):
            // asked for by id before anything is concluded.
            let missing = match (jobs.get(&session.id), session.slurm_job) {
                (None, Some(job)) => client.job(job as u64).await.ok().flatten(),
                _ => None,
            };
            let job = jobs.get(&session.id).or(missing.as_ref());
            if let Err(e) = self.follow_job(session, job, &nodes).await {
                tracing::warn!(session = %session.id, error = %e, "slurm: session not brought up to date");
            }
        }
        for (id, job) in &jobs {
            if matches!(job.phase(), JobPhase::Over(_)) || sessions.iter().any(|s| &s.id == id) {
                continue;
            }
            if self.is_in_flight(id) {
                continue;
            }
            tracing::info!(session = %id, job = job.id, "slurm: cancelling a job no live session owns");
            if let Err(e) = client.cancel(job.id, &job.user).await {
                tracing::warn!(session = %id, job = job.id, error = %e, "slurm: orphan job not cancelled yet");
            }
        }
        Ok(())
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
                        expected_start_ms: j.start_ms.filter(|at| *at > now_ms() - 60_000),
                        position: *position,
                        profile: s.profile.clone(),
                        partition: j.partition.clone(),
                    },
                )
            })
            .collect();
        *self.inner.slurm_waits.lock().unwrap_or_else(|p| p.into_inner()) = waits;
    }

    async fn follow_job(
        &self,
        session: &GpuSession,
        job: Option<&SlurmJob>,
        nodes: &HashMap<String, SlurmNode>,
    ) -> Result<(), CoreError> {
        use SessionState::*;
        let Some(job) = job else {
            let submitted_long_ago = now_ms() - session.updated_at_ms > SUBMIT_GRACE_MS;
            if session.state == Stopping || self.is_in_flight(&session.id) || !submitted_long_ago {
                return Ok(());
            }
            let why = match session.slurm_job {
                Some(job) => format!("Slurm no longer knows job {job}"),
                None => "the job never reached Slurm; start it again".to_string(),
            };
            return self.fail(&session.id, &why).await;
        };
        if session.slurm_job.is_none() {
            // The claim that submitted it did not live to write its id down.
            self.inner.store.set_slurm_job(&session.id, job.id as i64).await?;
        }
        // Per-student users: a student with no account on the cluster gets a job Slurm runs
        // as nobody (and requeues when it cannot start); it must not wait for ever.
        let per_student = self.inner.slurm.as_ref().is_some_and(|c| c.per_student());
        if per_student && job.user != session.username {
            let why = format!(
                "your account {} does not exist on the Slurm cluster's nodes; ask an administrator to add it",
                session.username
            );
            return self.fail(&session.id, &why).await;
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
            self.fail(&session.id, &why).await?;
            return Ok(());
        }
        match job.phase() {
            JobPhase::Pending if never_starts(&job.reason) => {
                let why = format!("Slurm will not start this job ({}): the course's settings and the cluster's disagree; tell your instructor", job.reason);
                self.fail(&session.id, &why).await
            }
            JobPhase::Ending => Ok(()),
            JobPhase::Pending => {
                if session.state == Requested && !self.is_in_flight(&session.id) {
                    let detail = format!("waiting in Slurm as job {}", job.id);
                    self.publish(self.inner.store.transition(&session.id, Queued, &detail).await?);
                }
                Ok(())
            }
            JobPhase::Running => {
                if self.is_in_flight(&session.id) {
                    return Ok(());
                }
                match session.state {
                    Requested | Queued | Allocating | Creating => self.slurm_job_started(session, job, node).await,
                    Starting => {
                        self.spawn_slurm_readiness(session.id.clone());
                        Ok(())
                    }
                    _ => Ok(()),
                }
            }
            JobPhase::Over(state) => self.slurm_job_over(session, job, &state, node).await,
        }
    }

    /// The job runs on a node: the session goes through the launch states to `starting`
    /// (usage opens here), then waits for JupyterLab on the node like a local launch.
    async fn slurm_job_started(
        &self,
        session: &GpuSession,
        job: &SlurmJob,
        node: Option<&SlurmNode>,
    ) -> Result<(), CoreError> {
        use SessionState::*;
        let store = &self.inner.store;
        let id = &session.id;
        let node_name = job.node.clone().unwrap_or_else(|| "?".into());
        let Some(address) = node.map(|n| n.address.clone()).filter(|a| !a.is_empty()) else {
            return Ok(()); // the node list of this pass predates the job; the next pass has it
        };
        let _working = self.mark_in_flight(id);
        let placed_ms = now_ms();
        // From wherever it is (a restart may have cut the steps short), step by step.
        let at = |state: SessionState| SessionState::ALL.iter().position(|s| *s == state);
        let before = |state: SessionState| at(session.state) < at(state);
        if before(Queued) {
            let detail = format!("waiting in Slurm as job {}", job.id);
            self.publish(store.transition(id, Queued, &detail).await?);
        }
        if before(Allocating) {
            let detail = format!("Slurm started job {} on {node_name} with a {} GRES", job.id, session.profile);
            if !self.publish(store.transition(id, Allocating, &detail).await?) {
                return Ok(());
            }
        }
        store.set_slurm_node(id, &node_name).await?;
        if session.kind == SessionKind::Notebook {
            store
                .set_session_address(id, &format!("{address}:{}", notebook_port(job.id)))
                .await?;
        }
        if before(Creating) {
            let detail = format!("job {} runs on {node_name}", job.id);
            if !self.publish(store.transition(id, Creating, &detail).await?) {
                return Ok(());
            }
        }
        let placement = format!("job {} on {node_name}", job.id);
        store
            .open_usage_on(&self.session(id).await?, &format!("slurm:{node_name}"), &placement)
            .await?;
        let detail = match session.kind {
            SessionKind::Notebook => format!("waiting for JupyterLab on {node_name}"),
            SessionKind::Job => format!("running {} on {node_name}", session.argv.join(" ")),
        };
        if !self.publish(store.transition(id, Starting, &detail).await?) {
            return Ok(());
        }
        match session.kind {
            SessionKind::Job => {
                if self.publish(store.transition(id, Ready, &detail).await?) {
                    METRICS.ready("job", session.requested_at_ms, placed_ms, now_ms());
                }
            }
            SessionKind::Notebook => {
                drop(_working);
                self.spawn_slurm_readiness(id.clone());
            }
        }
        Ok(())
    }

    /// Waits for JupyterLab on the node to answer with the session's token; no answer in
    /// `sessions.ready_timeout_seconds` fails the session (and so cancels its job).
    fn spawn_slurm_readiness(&self, id: String) {
        let this = self.clone();
        let working = self.mark_in_flight(&id);
        tokio::spawn(async move {
            let _working = working;
            let timeout = Duration::from_secs(u64::from(this.inner.config.sessions_ready_timeout_seconds));
            let until = Instant::now() + timeout;
            loop {
                let session = match this.session(&id).await {
                    Ok(s) if s.state == SessionState::Starting => s,
                    _ => return,
                };
                let path = format!("{}api/status", session.base_url());
                if let Some(address) = &session.notebook_address {
                    if answers_ok(address, &path, &session.token).await {
                        let detail = format!("JupyterLab answers at {}", session.base_url());
                        match this.inner.store.transition(&id, SessionState::Ready, &detail).await {
                            Ok(event) => {
                                if this.publish(event) {
                                    METRICS.ready("notebook", session.requested_at_ms, session.updated_at_ms, now_ms());
                                }
                            }
                            Err(e) => tracing::warn!(session = %id, error = %e, "slurm: ready not recorded"),
                        }
                        return;
                    }
                }
                if Instant::now() >= until {
                    let why = format!("JupyterLab did not answer on the Slurm node within {} s", timeout.as_secs());
                    if let Err(e) = this.fail(&id, &why).await {
                        tracing::warn!(session = %id, error = %e, "slurm: launch not failed yet");
                    }
                    return;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        });
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
        if job_kind {
            if let Some(code) = job.exit_code {
                self.inner.store.set_session_outcome(&session.id, Some(code), "").await?;
            }
        }
        self.finish(&session.id, from, to, &reason).await.map(|_| ())
    }

    /// Cancels the session's Slurm job (stops and failures); a job already over is fine.
    /// Every way a session ends comes here (`tear_down`), so a failed session's job never
    /// runs on.
    pub(super) async fn cancel_slurm_job(&self, session: &GpuSession) -> Result<(), CoreError> {
        match (session.pool, session.slurm_job, &self.inner.slurm) {
            (SessionPool::Slurm, Some(job), Some(client)) => match client.cancel(job as u64, &session.username).await {
                Ok(()) => Ok(()),
                // The student's token may not be accepted (no such user on the cluster):
                // the portal's own user, an operator on most sites, tries next.
                Err(e) => client.cancel_as_portal(job as u64).await.map_err(|_| e),
            },
            (SessionPool::Slurm, Some(job), None) => {
                tracing::warn!(session = %session.id, job, "slurm: no cluster configured any more; the job is left to the cluster");
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// "the Slurm node X went down: REASON"
fn node_went(node: &SlurmNode) -> String {
    match node.reason.as_str() {
        "" => format!("the Slurm node {} went down", node.name),
        reason => format!("the Slurm node {} went down: {reason}", node.name),
    }
}

fn availability_in(
    nodes: &[SlurmNode],
    waits: &HashMap<String, SlurmWait>,
    partition: &str,
) -> Vec<super::ProfileAvailability> {
    let mut out: Vec<super::ProfileAvailability> = Vec::new();
    for node in nodes.iter().filter(|n| n.partitions.iter().any(|p| p == partition)) {
        for gres in node.gres.iter().filter(|g| !g.profile.is_empty()) {
            let used = node.used.iter().find(|u| u.profile == gres.profile).map_or(0, |u| u.count);
            let free = if node.unavailable() { 0 } else { gres.count.saturating_sub(used) };
            match out.iter_mut().find(|a| a.profile == gres.profile) {
                Some(a) => a.free += free,
                None => out.push(super::ProfileAvailability {
                    profile: gres.profile.clone(),
                    free,
                    queued: waits.values().filter(|w| w.profile == gres.profile && w.partition == partition).count() as u32,
                    wait: None,
                }),
            }
        }
    }
    out.sort_by(|a, b| a.profile.cmp(&b.profile));
    out
}
