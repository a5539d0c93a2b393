//! An in-process container engine: containers are entries in a map that exist, run and
//! die when a test says so. It runs no process, so the session rules above the engine
//! (queue, time limit, quota, orphans, repair) are tested in milliseconds; the real
//! engine's own behaviour is tested against Docker.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use async_trait::async_trait;
use futures_util::StreamExt;
use tokio::sync::{broadcast, watch};

use super::container_engine::{ContainerEngine, DeathStream};
use super::launch::Created;
use super::network::SessionNetwork;
use super::observe::{ContainerDeath, ContainerStatus, EngineHost, ManagedContainer};
use super::spec::{ContainerSpec, INSTANCE_LABEL, SESSION_LABEL};
use super::usage::ContainerUsage;
use crate::CoreError;

#[derive(Debug, Clone)]
struct FakeContainer {
    instance: String,
    session_id: Option<String>,
    running: bool,
    exit_code: Option<i64>,
    network: String,
}

#[derive(Default)]
struct FakeState {
    containers: BTreeMap<String, FakeContainer>,
    networks: BTreeSet<String>,
    missing_images: BTreeSet<String>,
    next_address: u8,
}

pub struct FakeEngine {
    state: Mutex<FakeState>,
    deaths: broadcast::Sender<(String, ContainerDeath)>,
    /// Counts every change, so a waiter learns that a container may have stopped.
    changes: watch::Sender<u64>,
}

impl Default for FakeEngine {
    fn default() -> Self {
        FakeEngine::new()
    }
}

impl FakeEngine {
    pub fn new() -> FakeEngine {
        FakeEngine {
            state: Mutex::new(FakeState::default()),
            deaths: broadcast::channel(256).0,
            changes: watch::Sender::new(0),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, FakeState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The names of every container the engine holds.
    pub fn container_names(&self) -> Vec<String> {
        self.state().containers.keys().cloned().collect()
    }

    pub fn is_running(&self, name: &str) -> bool {
        self.state().containers.get(name).is_some_and(|c| c.running)
    }

    /// The container's process ends with `code` (it exited, or was killed: 137).
    pub fn exit(&self, name: &str, code: i64) {
        let death = {
            let mut state = self.state();
            let Some(container) = state.containers.get_mut(name).filter(|c| c.running) else {
                return;
            };
            container.running = false;
            container.exit_code = Some(code);
            (
                container.instance.clone(),
                ContainerDeath {
                    name: name.to_string(),
                    session_id: container.session_id.clone(),
                    exit_code: Some(code),
                },
            )
        };
        let _ = self.deaths.send(death);
        self.changes.send_modify(|n| *n += 1);
    }

    /// The container is gone, and no event said so (removed by hand while the portal's
    /// event stream was down).
    pub fn vanish(&self, name: &str) {
        self.state().containers.remove(name);
    }

    /// A running container of `instance` the portal has no record of making (left by a
    /// crash between creating it and writing it down).
    pub fn add_stray(&self, instance: &str, name: &str, session_id: Option<&str>) {
        self.state().containers.insert(
            name.to_string(),
            FakeContainer {
                instance: instance.to_string(),
                session_id: session_id.map(str::to_string),
                running: true,
                exit_code: None,
                network: String::new(),
            },
        );
    }

    /// The engine answers that it does not have `image`.
    pub fn lacks_image(&self, image: &str) {
        self.state().missing_images.insert(image.to_string());
    }
}

#[async_trait]
impl ContainerEngine for FakeEngine {
    async fn create(&self, spec: &ContainerSpec) -> Result<Created, CoreError> {
        let mut state = self.state();
        if state.missing_images.contains(&spec.image) {
            return Err(CoreError::NotFound(format!("the image {} is not on this server", spec.image)));
        }
        if state.containers.contains_key(&spec.name) {
            return Err(CoreError::Engine(format!("creating {}: the name is in use", spec.name)));
        }
        state.containers.insert(
            spec.name.clone(),
            FakeContainer {
                instance: spec.labels.get(INSTANCE_LABEL).cloned().unwrap_or_default(),
                session_id: spec.labels.get(SESSION_LABEL).cloned(),
                running: false,
                exit_code: None,
                network: spec.network.clone(),
            },
        );
        Ok(Created {
            id: format!("fake-{}", spec.name),
            name: spec.name.clone(),
        })
    }

    async fn start(&self, name: &str) -> Result<(), CoreError> {
        match self.state().containers.get_mut(name) {
            Some(container) => {
                container.running = true;
                Ok(())
            }
            None => Err(CoreError::NotFound(format!("container {name} is gone"))),
        }
    }

    async fn remove(&self, name: &str) -> Result<(), CoreError> {
        let removed = self.state().containers.remove(name);
        if let Some(container) = removed.filter(|c| c.running) {
            let death = ContainerDeath {
                name: name.to_string(),
                session_id: container.session_id,
                exit_code: Some(137),
            };
            let _ = self.deaths.send((container.instance, death));
        }
        self.changes.send_modify(|n| *n += 1);
        Ok(())
    }

    async fn status(&self, name: &str) -> Result<Option<ContainerStatus>, CoreError> {
        Ok(self.state().containers.get(name).map(|c| ContainerStatus {
            running: c.running,
            exit_code: c.exit_code,
            oom_killed: false,
            finished_at_ms: None,
        }))
    }

    async fn wait_exit(&self, name: &str) -> Result<i64, CoreError> {
        let mut changes = self.changes.subscribe();
        loop {
            match self.state().containers.get(name) {
                None => return Err(CoreError::NotFound(format!("container {name} is gone"))),
                Some(c) if !c.running && c.exit_code.is_some() => return Ok(c.exit_code.unwrap_or_default()),
                Some(_) => {}
            }
            if changes.changed().await.is_err() {
                return Err(CoreError::Engine("the fake engine went away".into()));
            }
        }
    }

    async fn logs_tail(&self, _name: &str, _lines: usize) -> Result<String, CoreError> {
        Ok(String::new())
    }

    async fn usage(&self, name: &str) -> Result<Option<ContainerUsage>, CoreError> {
        Ok(self.is_running(name).then_some(ContainerUsage {
            cpu_ns: 0,
            system_ns: 0,
            online_cpus: 1,
            memory_bytes: Some(0),
        }))
    }

    async fn managed_containers(&self, instance: &str) -> Result<Vec<ManagedContainer>, CoreError> {
        Ok(self
            .state()
            .containers
            .iter()
            .filter(|(_, c)| c.instance == instance)
            .map(|(name, c)| ManagedContainer {
                name: name.clone(),
                session_id: c.session_id.clone(),
                running: c.running,
            })
            .collect())
    }

    async fn container_deaths(&self, instance: &str) -> Result<DeathStream, CoreError> {
        let instance = instance.to_string();
        let deaths = futures_util::stream::unfold(self.deaths.subscribe(), |mut deaths| async move {
            loop {
                match deaths.recv().await {
                    Ok(death) => return Some((death, deaths)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        });
        Ok(Box::pin(deaths.filter_map(move |(of, death)| {
            let mine = of == instance;
            async move { mine.then_some(Ok(death)) }
        })))
    }

    async fn missing_images(&self, images: &[String]) -> Result<Vec<String>, CoreError> {
        let state = self.state();
        Ok(images.iter().filter(|i| state.missing_images.contains(*i)).cloned().collect())
    }

    async fn host(&self) -> Result<EngineHost, CoreError> {
        Ok(EngineHost {
            cpus: Some(16),
            nvidia_runtime: false,
        })
    }

    async fn ensure_network(&self, _instance: &str, network: &SessionNetwork) -> Result<(), CoreError> {
        self.state().networks.insert(network.name.clone());
        Ok(())
    }

    async fn remove_network_if_unused(&self, name: &str) -> Result<bool, CoreError> {
        let mut state = self.state();
        if state.containers.values().any(|c| c.network == name) {
            return Ok(false);
        }
        Ok(state.networks.remove(name))
    }

    async fn address_on(&self, container: &str, network: &str) -> Result<Option<String>, CoreError> {
        let mut state = self.state();
        let on = state.containers.get(container).is_some_and(|c| c.running && c.network == network);
        if !on {
            return Ok(None);
        }
        state.next_address = state.next_address.wrapping_add(1).max(2);
        Ok(Some(format!("192.0.2.{}", state.next_address)))
    }
}
