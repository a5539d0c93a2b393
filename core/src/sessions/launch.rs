//! From a held slice to a running container: the MIG instance, the container, and the
//! wait for JupyterLab (or the job's exit).

use std::time::{Duration, Instant};

use slicehub_mig::{Placement, Sharing};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::context::Ctx;
use super::model::{GpuSession, SessionKind, SessionState};
use super::readiness::answers_ok;
use crate::gpu::BackendKind;
use crate::metrics::METRICS;
use crate::courses::policy_of;
use crate::runtime::firewall;
use crate::runtime::mps::{MpsCaps, MpsDaemon};
use crate::runtime::spec::{ContainerSpec, LaunchRequest, Limits, ShareRequest, Workload, NOTEBOOK_PORT};
use crate::runtime::SessionNetwork;
use crate::CoreError;

/// What a launch may take beyond JupyterLab's ready timeout (the MIG instance, the
/// network, creating and starting the container) in the time the queue plans with.
pub(super) const LAUNCH_ALLOWANCE_MS: i64 = 120_000;

/// How often a starting JupyterLab is probed: often while it usually comes up (a probe of a
/// port nobody listens on yet costs one refused connection), then less. Launches waiting
/// at once share the quick rate: with N waiting each probes every N × QUICK_PROBE, at
/// most every SLOW_PROBE, so a burst of starts does not add a burst of probes.
const QUICK_PROBE: Duration = Duration::from_millis(25);
const QUICK_PROBES_FOR: Duration = Duration::from_secs(20);
const SLOW_PROBE: Duration = Duration::from_millis(200);
/// How often a starting session's record and container are checked between probes.
const CHECK_EVERY: Duration = Duration::from_millis(500);

/// What a student reads when their launch failed: the cause in plain words, never the
/// engine's or the GPU driver's own text (that goes to the log for the operator).
pub(super) fn launch_failure_words(error: &CoreError) -> String {
    match error {
        CoreError::NotFound(what) if what.starts_with("the image ") => format!(
            "{what}: ask your instructor to choose an image this server has (they see this failed start)"
        ),
        CoreError::Gpu(_) | CoreError::InsufficientResources(_) | CoreError::GpuStateFile { .. } => {
            "the GPU slice could not be prepared; start again, and tell an administrator if it keeps failing".to_string()
        }
        CoreError::Engine(_) => {
            "the container could not be started on this server; start again, and tell an administrator if it keeps failing".to_string()
        }
        _ => "the portal could not start this session; start again, and tell an administrator if it keeps failing".to_string(),
    }
}

/// The MIG device a session runs on and the size of its profile.
struct Device {
    mig_uuid: String,
    compute_slices: u8,
    memory_slices: u8,
    /// Set on one of the shares of a GPU split into shares.
    share: Option<ShareRequest>,
}

impl Ctx {
    /// Launches a session that holds a slice, in the background; a failure fails it.
    pub(super) fn spawn_launch(self: &Arc<Self>, id: String) {
        let this = self.clone();
        let working = self.mark_in_flight(&id);
        tokio::spawn(async move {
            let _working = working;
            if let Err(e) = this.launch(&id).await {
                tracing::warn!(session = %id, error = %e, "launch failed");
                if let Err(e2) = this.fail(&id, &launch_failure_words(&e)).await {
                    tracing::error!(session = %id, error = %e2, "could not record a failed launch");
                }
            }
        });
    }

    async fn launch(self: &Arc<Self>, id: &str) -> Result<(), CoreError> {
        let store = &self.store;
        let placed_ms = self.now_ms();
        let session = self.session(id).await?;
        let device = self.device_for(&session).await?;
        store.set_session_mig_uuid(id, &device.mig_uuid).await?;
        let network = self.session_network(&session).await?;
        let request = self.launch_request(&session, &device, &network).await?;
        let spec = ContainerSpec::for_session(&request)?;
        let what = match (device.mig_uuid.starts_with("MIG-"), device.share) {
            (true, _) => "MIG device",
            (false, None) => "whole GPU",
            (false, Some(_)) => "share of GPU",
        };
        let detail = format!(
            "{what} {} ready; creating container {} from {}",
            device.mig_uuid, spec.name, session.image
        );
        let gate = self.enter_launch_gate(id).await;
        // Named before anyone can read the session as `creating`: a stop then knows what
        // to remove.
        store.set_session_container(id, &spec.name).await?;
        if !self.publish(store.transition(id, SessionState::Creating, &detail).await?) {
            // Stopped before its container steps: the stop is over or waits at the gate,
            // and no launch comes back for this session.
            drop(gate);
            if self.session(id).await?.state.is_final() {
                self.forget_launch_gate(id);
            }
            return Ok(());
        }
        store.open_usage(&self.session(id).await?).await?;
        let engine = &self.engine;
        if let (Some(_), Some(ShareRequest::Mps(caps))) = (&spec.ipc_mode, request.share) {
            let image = &self.config.sessions.default_image;
            let daemon = MpsDaemon::for_gpu(&request.instance, &request.gpu_uuid, image, caps, spec.shm_bytes);
            engine.ensure_mps_daemon(&daemon).await?;
        }
        if let Err(e) = engine.create(&spec).await {
            // Someone removed the network since this process last made sure of it.
            let text = e.to_string();
            if !(text.contains("network") && text.contains("not found")) {
                return Err(e);
            }
            self.networks_ready.lock().await.remove(&network.bridge);
            self.session_network(&session).await?;
            engine.create(&spec).await?;
        }
        engine.start(&spec.name).await?;
        // A stop that came during the container steps is waiting at the gate and may have
        // read the session before the container existed: the container goes now, its
        // output kept first (a job that crashed at once keeps its traceback).
        let now = self.session(id).await?;
        if now.state != SessionState::Creating {
            self.keep_outcome(&now).await;
            engine.remove(&spec.name).await?;
            return Ok(());
        }
        drop(gate);
        let detail = match session.kind {
            SessionKind::Notebook => {
                let ip = engine.address_on(&spec.name, &network.name).await?.ok_or_else(|| {
                    CoreError::Engine(format!("the container has no address on {}", network.name))
                })?;
                store
                    .set_session_address(id, &format!("{ip}:{NOTEBOOK_PORT}"))
                    .await?;
                "container running; waiting for JupyterLab to answer".to_string()
            }
            SessionKind::Job => "container running".to_string(),
        };
        if !self.publish(store.transition(id, SessionState::Starting, &detail).await?) {
            return Ok(());
        }
        match session.kind {
            SessionKind::Notebook => self.await_jupyter(id, placed_ms).await,
            SessionKind::Job => {
                let detail = format!("running {}", session.argv.join(" "));
                if self.publish(self.mark_ready(&session, &detail).await?) {
                    METRICS.ready("job", session.requested_at_ms, placed_ms, self.now_ms());
                    self.spawn_job_waiter(id.to_string(), spec.name);
                }
                Ok(())
            }
        }
    }

    /// The MIG instance at the session's placement: created now on a dynamic GPU (unless a
    /// launch interrupted by a restart already did), an existing free one on a static GPU.
    async fn device_for(&self, session: &GpuSession) -> Result<Device, CoreError> {
        let placement = session.placement.clone().ok_or_else(|| {
            CoreError::InvalidRequest(format!("session {} holds no slice", session.id))
        })?;
        let create = session.created_instance;
        let _instances = self.instances.lock().await;
        // A stop that came first has released the slice (and destroyed nothing yet):
        // creating the instance now would leave it to nobody.
        let now = self.session(&session.id).await?;
        if now.released || now.state != SessionState::Allocating {
            return Err(CoreError::Conflict(format!(
                "session {} was stopped while its slice was being prepared",
                session.id
            )));
        }
        self.on_gpus(move |gpus| {
            let index = crate::gpu::index_of(gpus, &placement.gpu_uuid, placement.gpu_index)?;
            let at = Placement::new(placement.profile_id, placement.start);
            let catalog = gpus.catalog(index)?;
            let profile = catalog
                .profile_by_id(at.profile_id)
                .map_err(|e| CoreError::Gpu(e.to_string()))?;
            let existing = gpus.instances(index)?.into_iter().find(|i| i.placement == at);
            let instance = match (existing, create) {
                (Some(instance), _) => instance,
                (None, true) => gpus.create_instance(index, at)?,
                (None, false) => {
                    return Err(CoreError::NotFound(format!(
                        "the {} instance of GPU {index}'s static layout is missing",
                        placement.label
                    )))
                }
            };
            let mig_uuid = instance.mig_uuid.ok_or_else(|| {
                CoreError::Gpu(format!("instance {} has no MIG device UUID", placement.label))
            })?;
            // The GPU itself goes only to the holder of a whole GPU's one slice.
            let whole = catalog.is_whole() && at.profile_id == slicehub_mig::WHOLE_PROFILE_ID;
            if !mig_uuid.starts_with("MIG-") && !(whole && mig_uuid == placement.gpu_uuid) {
                return Err(CoreError::Gpu(format!(
                    "instance {} of GPU {index} names no MIG device of its own",
                    placement.label
                )));
            }
            let share = catalog.shares().map(|shares| match shares.sharing {
                Sharing::Mps => ShareRequest::Mps(MpsCaps {
                    memory_mib: profile.memory_mib,
                    compute_percent: shares.compute_percent(),
                    shares: shares.count,
                }),
                Sharing::TimeSliced => ShareRequest::TimeSliced,
            });
            Ok(Device {
                mig_uuid,
                compute_slices: profile.compute_slices,
                memory_slices: profile.memory_slices,
                share,
            })
        })
        .await
    }

    /// The course's session network (with or without internet), made if it is missing,
    /// with its firewall rules, the first time this process uses it (a launch that finds it
    /// gone makes it again).
    pub(super) async fn session_network(&self, session: &GpuSession) -> Result<SessionNetwork, CoreError> {
        let policy = policy_of(&self.store, &self.config, session.course_id).await?;
        let instance = self.instance_id().await?;
        let wanted = SessionNetwork::of(&instance, policy.internet);
        let mut ready = self.networks_ready.lock().await;
        if ready.contains(&wanted.bridge) {
            return Ok(wanted);
        }
        self.engine.ensure_network(&instance, &wanted).await?;
        if self.config.sessions.host_firewall {
            let bridge = wanted.bridge.clone();
            let reachable = self.config.sessions.reachable_private_ranges.clone();
            let first = ready.is_empty();
            tokio::task::spawn_blocking(move || {
                if first {
                    if let Err(e) = firewall::forget_vanished_bridges() {
                        tracing::warn!(error = %e, "could not remove the rules of vanished session networks");
                    }
                }
                firewall::isolate(&[bridge.as_str()], &reachable)
            })
            .await
            .map_err(|e| CoreError::Engine(format!("firewall set-up crashed: {e}")))??;
        }
        ready.insert(wanted.bridge.clone());
        Ok(wanted)
    }

    async fn launch_request(
        &self,
        session: &GpuSession,
        device: &Device,
        network: &SessionNetwork,
    ) -> Result<LaunchRequest, CoreError> {
        let config = &self.config;
        let limits = match config
            .sessions.profile_limits
            .iter()
            .find(|l| l.profile == session.profile)
        {
            Some(l) => Limits {
                cpus: l.cpus,
                memory_mib: l.memory_mib,
                pids: l.pids,
            },
            None => Limits {
                cpus: config.sessions.cpus_per_compute_slice * f64::from(device.compute_slices),
                memory_mib: u64::from(config.sessions.memory_mib_per_memory_slice)
                    * u64::from(device.memory_slices),
                pids: i64::from(config.sessions.pids_limit),
            },
        };
        let host = *self
            .engine_host
            .get_or_try_init(|| self.engine.host())
            .await?;
        // A host with fewer CPUs than the slice's share gets them all.
        let limits = match host.cpus {
            Some(cpus) if limits.cpus > f64::from(cpus) => Limits {
                cpus: f64::from(cpus),
                ..limits
            },
            _ => limits,
        };
        let nvidia_runtime =
            self.gpus.kind() == BackendKind::Nvml && host.nvidia_runtime;
        let placement = session.placement.as_ref();
        Ok(LaunchRequest {
            instance: self.instance_id().await?,
            session_id: session.id.clone(),
            username: session.username.clone(),
            course: session.course_code.clone(),
            gpu_uuid: placement.map(|p| p.gpu_uuid.clone()).unwrap_or_default(),
            placement: placement.map(|p| p.label.clone()).unwrap_or_default(),
            mig_uuid: device.mig_uuid.clone(),
            image: session.image.clone(),
            workload: match session.kind {
                SessionKind::Notebook => Workload::Notebook {
                    token: session.token.clone(),
                    base_url: session.base_url(),
                },
                SessionKind::Job => Workload::Job {
                    argv: session.argv.clone(),
                },
            },
            limits,
            nvidia_runtime,
            network: network.name.clone(),
            share: device.share,
        })
    }

    /// Ready when JupyterLab's status API answers with the session's token; a container
    /// that stops, or no answer in time, fails the session with its last log lines.
    pub(super) async fn await_jupyter(&self, id: &str, placed_ms: i64) -> Result<(), CoreError> {
        // Counted from the start of the launch, with the launch's allowance: the queue
        // promised the slice free again by a time that includes both once, whatever the
        // MIG instance and the engine took before.
        let timeout = Duration::from_secs(u64::from(self.config.sessions.ready_timeout_seconds));
        let allowance = Duration::from_millis(LAUNCH_ALLOWANCE_MS as u64);
        let spent = Duration::from_millis(u64::try_from(self.now_ms() - placed_ms).unwrap_or(0));
        // Counted among the quick probers until it is probed slowly.
        let mut probing = Some(Probing::count(&self.awaiting_jupyter));
        let began = Instant::now();
        let until = began + (timeout + allowance).saturating_sub(spent).min(timeout);
        let mut session = self.session(id).await?;
        let mut checked: Option<Instant> = None;
        loop {
            // The store and the engine are asked less often than JupyterLab: a stop or a
            // dead container is noticed within CHECK_EVERY, a listening JupyterLab within
            // one probe interval.
            if checked.is_none_or(|at| at.elapsed() >= CHECK_EVERY) {
                if checked.is_some() {
                    session = self.session(id).await?;
                }
                if session.state != SessionState::Starting {
                    return Ok(());
                }
                let name = session.container.clone().unwrap_or_default();
                match self.engine.status(&name).await? {
                    None => return self.fail(id, "the container disappeared while JupyterLab was starting").await,
                    Some(status) if status.oom_killed => {
                        return self.container_exited(id, status.exit_code).await;
                    }
                    Some(status) if !status.running => {
                        let code = status.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "?".into());
                        return self
                            .fail(id, &format!("JupyterLab exited while starting (exit code {code})"))
                            .await;
                    }
                    Some(_) => {}
                }
                checked = Some(Instant::now());
            }
            let path = format!("{}api/status", session.base_url());
            if let Some(address) = &session.notebook_address {
                if answers_ok(address, &path, &session.token).await {
                    let detail = format!("JupyterLab answers at {}", session.base_url());
                    if self.publish(self.mark_ready(&session, &detail).await?) {
                        METRICS.ready("notebook", session.requested_at_ms, placed_ms, self.now_ms());
                    }
                    return Ok(());
                }
            }
            if Instant::now() >= until {
                return self
                    .fail(id, &format!("JupyterLab did not answer within {} s", timeout.as_secs()))
                    .await;
            }
            let waited = began.elapsed();
            if waited >= QUICK_PROBES_FOR {
                drop(probing.take());
            }
            tokio::time::sleep(probe_pause(waited, self.awaiting_jupyter.load(Ordering::Relaxed))).await;
        }
    }

    /// Waits for a job's container to exit, then ends the session with its exit code. A
    /// wait the engine breaks off (it restarted, or is unreachable for a while) is taken up
    /// again while the container still runs: only an exit ends the job.
    pub(super) fn spawn_job_waiter(self: &Arc<Self>, id: String, container: String) {
        let this = self.clone();
        tokio::spawn(async move {
            let engine = &this.engine;
            let code = loop {
                match engine.wait_exit(&container).await {
                    Ok(code) => break Some(code),
                    Err(CoreError::NotFound(_)) => break None,
                    Err(e) => tracing::debug!(session = %id, error = %e, "job wait broken off"),
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                match this.store.gpu_session(&id).await {
                    Ok(Some(s)) if s.state.is_final() => return,
                    _ => {}
                }
                match engine.status(&container).await {
                    Ok(Some(status)) if !status.running => break status.exit_code,
                    Ok(None) => break None,
                    _ => {}
                }
            };
            if let Err(e) = this.container_exited(&id, code).await {
                tracing::warn!(session = %id, error = %e, "could not end a finished job");
            }
        });
    }
}

/// The pause before the next probe of a JupyterLab starting for `waited`, with `probing`
/// launches probing theirs.
fn probe_pause(waited: Duration, probing: usize) -> Duration {
    if waited >= QUICK_PROBES_FOR {
        return SLOW_PROBE;
    }
    QUICK_PROBE.saturating_mul(u32::try_from(probing.max(1)).unwrap_or(u32::MAX)).min(SLOW_PROBE)
}

/// Counts one launch among those probing quickly while it lives.
struct Probing<'a>(&'a AtomicUsize);

impl<'a> Probing<'a> {
    fn count(probing: &'a AtomicUsize) -> Probing<'a> {
        probing.fetch_add(1, Ordering::Relaxed);
        Probing(probing)
    }
}

impl Drop for Probing<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_starting_together_share_the_quick_probe_rate() {
        let early = Duration::from_secs(1);
        assert_eq!(probe_pause(early, 1), QUICK_PROBE);
        assert_eq!(probe_pause(early, 0), QUICK_PROBE, "its own count may not be seen yet");
        assert_eq!(probe_pause(early, 4), QUICK_PROBE * 4);
        assert_eq!(probe_pause(early, 30), SLOW_PROBE, "never slower than the slow rate");
        assert_eq!(probe_pause(QUICK_PROBES_FOR, 1), SLOW_PROBE, "a slow start is probed slowly");
    }
}
