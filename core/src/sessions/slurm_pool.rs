//! Sessions of the Slurm pool: each one a Slurm job that starts JupyterLab (or the job's
//! command) on a node's GPU GRES (a MIG slice or a whole GPU) or shard. The portal keeps
//! accounts, quotas, the proxy and usage; Slurm keeps the queue order and placement. Here: submitting, cancelling, and what the
//! pages read (free GRES, why a claim waits); `slurm_watch.rs` follows the jobs and
//! `slurm_start.rs` brings a started job's session up.

use std::collections::HashMap;

use super::service::Sessions;
use super::slurm_state::SlurmWait;
use super::model::{GpuSession, SessionKind, SessionState};
use crate::slurm::{gres_for, GresRequest, JobRequest, JobWork, SlurmCluster, SlurmNode};
use crate::store::SlurmLink;
use crate::CoreError;

impl Sessions {
    pub(super) fn slurm_client(&self) -> Result<&dyn SlurmCluster, CoreError> {
        self.ctx
            .slurm
            .as_deref()
            .ok_or_else(|| CoreError::Config("this portal has no Slurm cluster configured (slurm.url)".into()))
    }

    /// `slicehub:<portal instance>:` — the comment every job of this portal carries.
    pub(super) async fn slurm_tag_prefix(&self) -> Result<String, CoreError> {
        Ok(format!("slicehub:{}:", self.instance_id().await?))
    }

    /// The profiles the cluster's nodes offer: MIG slices, whole GPUs and shares
    /// (`slurm::node_gres`).
    pub async fn slurm_profiles(&self) -> Result<Vec<String>, CoreError> {
        let mut profiles: Vec<String> = self
            .slurm_client()?
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
        self.slurm_client()?.nodes().await
    }

    /// What a claim on the cluster would find now in each partition, per profile the
    /// partition's nodes offer: GRES free on nodes that take jobs, and the portal's jobs
    /// waiting for that profile.
    pub async fn slurm_availability(&self, partitions: &[&str]) -> Result<Vec<Vec<super::ProfileAvailability>>, CoreError> {
        let nodes = self.slurm_client()?.nodes().await?;
        let waits = self.slurm_waits();
        Ok(partitions.iter().map(|p| availability_in(&nodes, &waits, p)).collect())
    }

    /// Why each waiting Slurm session waits, as the watcher last read it.
    pub fn slurm_waits(&self) -> HashMap<String, SlurmWait> {
        self.slurm.waits.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Where a course's jobs go: its partition, and the Slurm account named after it.
    pub(super) fn slurm_job_home(&self, course_code: &str) -> (String, String) {
        let config = &self.ctx.config;
        let partition = config.slurm_partition_of(course_code).unwrap_or(&config.slurm.partition);
        (partition.to_string(), course_code.to_ascii_lowercase())
    }

    /// Submits a just-recorded Slurm session as a job. A refusal fails the session with
    /// Slurm's words; the session is `queued` once Slurm has it.
    pub(super) async fn submit_to_slurm(&self, id: &str, time_limit_minutes: i64) -> Result<(), CoreError> {
        let store = &self.ctx.store;
        let session = self.session(id).await?;
        let config = &self.ctx.config;
        let (partition, account) = self.slurm_job_home(&session.course_code);
        let _working = self.ctx.mark_in_flight(id);
        if let Some(why) = self.unbound_cluster_user(&session).await? {
            self.ctx.fail(id, &why).await?;
            return Ok(());
        }
        let Some(gres) = self.slurm_gres(id, &partition, &session.profile).await? else {
            return Ok(());
        };
        let request = JobRequest {
            session_id: session.id.clone(),
            tag: format!("{}{}", self.slurm_tag_prefix().await?, session.id),
            partition: partition.clone(),
            account,
            gres,
            time_limit_minutes,
            image: session.image.clone(),
            container_command: config.slurm.container_command.clone(),
            path: config.slurm.node_path.clone(),
            work: match session.kind {
                SessionKind::Notebook => JobWork::Notebook {
                    token: session.token.clone(),
                    base_url: session.base_url(),
                },
                SessionKind::Job => JobWork::Command(session.argv.clone()),
            },
        };
        let job = match self.slurm_client()?.submit(&request, &session.username).await {
            Ok(job) => job,
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "slurm: job not submitted");
                let why = match e {
                    CoreError::Cluster(m) if m.starts_with("Slurm refused the job") => m,
                    CoreError::InvalidRequest(m) => m,
                    _ => "the Slurm cluster did not take the job (it is not answering); start it again".to_string(),
                };
                self.ctx.fail(id, &why).await?;
                return Ok(());
            }
        };
        store.set_slurm_job(id, job as i64).await?;
        let detail = format!("submitted to Slurm as job {job} (partition {partition}, gres {})", request.gres.as_str());
        if !self.ctx.publish(store.transition(id, SessionState::Queued, &detail).await?) {
            // Stopped while it was being submitted: the stop found no job to cancel.
            self.slurm_client()?.cancel(job, &session.username).await?;
        }
        Ok(())
    }

    /// The GRES a job of `profile` asks for in `partition`, as the nodes offer it now; `None`
    /// when there is none, the session failed with why.
    async fn slurm_gres(&self, id: &str, partition: &str, profile: &str) -> Result<Option<GresRequest>, CoreError> {
        let why = match self.slurm_client()?.nodes().await {
            Ok(nodes) => match gres_for(&nodes, partition, profile) {
                Ok(gres) => return Ok(Some(gres)),
                Err(why) => why,
            },
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "slurm: nodes not read before submitting");
                "the Slurm cluster did not take the job (it is not answering); start it again".to_string()
            }
        };
        self.ctx.fail(id, &why).await?;
        Ok(None)
    }

    /// Why `session`'s student may not run as the cluster user their name is linked to: the
    /// line was read before their account existed and waits for an administrator, or it
    /// is bound to another account of the same name (one deleted and made again). None
    /// in the shared mode, and where the file's own checks will answer.
    async fn unbound_cluster_user(&self, session: &GpuSession) -> Result<Option<String>, CoreError> {
        let slurm = self.slurm_client()?;
        if !slurm.per_student() || slurm.cluster_user(&session.username).is_err() {
            return Ok(None);
        }
        Ok(match self.ctx.store.slurm_link(&session.username).await? {
            SlurmLink::Account(id) if id == session.user_id => None,
            SlurmLink::Account(_) => Some(
                "your account is not the one an administrator linked to the Slurm cluster under this name; ask an administrator".to_string(),
            ),
            SlurmLink::Pending | SlurmLink::Unlisted => Some(
                "your account's link to the Slurm cluster waits for an administrator to confirm it".to_string(),
            ),
        })
    }

    /// Records the file's names the portal has not seen before (at start), bound to the
    /// accounts of those names that exist now.
    pub(super) async fn note_slurm_links(&self) -> Result<(), CoreError> {
        let Some(slurm) = self.ctx.slurm.as_ref() else {
            return Ok(());
        };
        self.ctx.store.note_slurm_links(&slurm.linked_portal_names()).await
    }

    /// Sessions of the Slurm pool when the portal has no cluster configured any more: they
    /// cannot be followed, so they end (at start-up).
    pub(super) async fn end_unreachable_slurm_sessions(&self) -> Result<(), CoreError> {
        if self.ctx.slurm.is_some() {
            return Ok(());
        }
        for session in self.ctx.store.live_slurm_sessions().await? {
            let why = "the portal no longer has a Slurm cluster configured";
            if let Err(e) = self.ctx.fail(&session.id, why).await {
                tracing::warn!(session = %session.id, error = %e, "slurm: session not ended");
            }
        }
        Ok(())
    }
}

/// What one Slurm shard guarantees: Slurm only counts them.
const SHARD_GUARANTEES: &str =
    "Slurm shard: no memory cap, no compute share, not isolated from the GPU's other sessions";

fn availability_in(
    nodes: &[SlurmNode],
    waits: &HashMap<String, SlurmWait>,
    partition: &str,
) -> Vec<super::ProfileAvailability> {
    let mut out: Vec<super::ProfileAvailability> = Vec::new();
    for node in nodes.iter().filter(|n| n.partitions.iter().any(|p| p == partition)) {
        for gres in node.gres.iter().filter(|g| !g.profile.is_empty()) {
            let used = node.used.iter().find(|u| u.gres == gres.gres).map_or(0, |u| u.count);
            let free = if node.unavailable() { 0 } else { gres.count.saturating_sub(used) };
            match out.iter_mut().find(|a| a.profile == gres.profile) {
                Some(a) => a.free += free,
                None => out.push(super::ProfileAvailability {
                    profile: gres.profile.clone(),
                    free,
                    queued: waits.values().filter(|w| w.profile == gres.profile && w.partition == partition).count() as u32,
                    wait: None,
                    guarantees: slicehub_mig::share_of(&gres.profile).map(|_| SHARD_GUARANTEES.to_string()),
                }),
            }
        }
    }
    out.sort_by(|a, b| a.profile.cmp(&b.profile));
    out
}

