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
use super::mps::MpsDaemon;
use super::spec::{ContainerSpec, INSTANCE_LABEL, SESSION_LABEL};
use super::types::{ContainerDeath, ContainerStatus, ContainerUsage, Created, EngineHost, EngineStatus, ManagedContainer, SessionNetwork};
use crate::CoreError;

#[derive(Debug, Clone)]
struct FakeContainer {
    instance: String,
    session_id: Option<String>,
    running: bool,
    daemon: bool,
    exit_code: Option<i64>,
    network: String,
    /// Its address on its network, given at the first ask.
    address: Option<String>,
}

#[derive(Default)]
struct FakeState {
    containers: BTreeMap<String, FakeContainer>,
    /// Containers removed while they ran: when (the removal count then) and the code a
    /// waiter that was already waiting reads (137: killed). A wait begun later finds the
    /// container gone, as on Docker.
    removed_running: BTreeMap<String, (u64, i64)>,
    removals: u64,
    networks: BTreeSet<String>,
    missing_images: BTreeSet<String>,
    next_address: u32,
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

    /// What a waiter on the container reads now, if it has stopped or is gone.
    /// What a waiter that began at removal count `since` reads now, if the container has
    /// stopped or is gone.
    fn exit_of(&self, name: &str, since: u64) -> Option<Result<i64, CoreError>> {
        let state = self.state();
        match state.containers.get(name) {
            None => Some(match state.removed_running.get(name) {
                Some((at, code)) if *at > since => Ok(*code),
                _ => Err(CoreError::NotFound(format!("container {name} is gone"))),
            }),
            Some(c) if !c.running => c.exit_code.map(Ok),
            Some(_) => None,
        }
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

    /// The container is gone and nothing told the portal: no event, and its waiter, if any,
    /// is not woken (as when the portal's watch of it broke off while it was removed).
    pub fn vanish(&self, name: &str) {
        let mut state = self.state();
        state.containers.remove(name);
        state.removed_running.remove(name);
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
                daemon: false,
                exit_code: None,
                network: String::new(),
                address: None,
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
    async fn probe(&self) -> EngineStatus {
        EngineStatus {
            reachable: true,
            endpoint: "in-process".into(),
            version: None,
            api_version: None,
            nvidia_runtime: false,
            storage_driver: None,
            reason: None,
            disk: None,
        }
    }

    async fn create(&self, spec: &ContainerSpec) -> Result<Created, CoreError> {
        let mut state = self.state();
        if state.missing_images.contains(&spec.image) {
            return Err(CoreError::NotFound(format!("the image {} is not on this server", spec.image)));
        }
        if state.containers.contains_key(&spec.name) {
            return Err(CoreError::Engine(format!("creating {}: the name is in use", spec.name)));
        }
        state.removed_running.remove(&spec.name);
        state.containers.insert(
            spec.name.clone(),
            FakeContainer {
                instance: spec.labels.get(INSTANCE_LABEL).cloned().unwrap_or_default(),
                session_id: spec.labels.get(SESSION_LABEL).cloned(),
                running: false,
                daemon: false,
                exit_code: None,
                network: spec.network.clone(),
                address: None,
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
        let removed = {
            let mut state = self.state();
            let removed = state.containers.remove(name);
            if removed.as_ref().is_some_and(|c| c.running) {
                state.removals += 1;
                let at = state.removals;
                state.removed_running.insert(name.to_string(), (at, 137));
            }
            removed
        };
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
            id: format!("fake-{name}"),
            running: c.running,
            exit_code: c.exit_code,
            oom_killed: false,
            finished_at_ms: None,
        }))
    }

    async fn wait_exit(&self, name: &str) -> Result<i64, CoreError> {
        let mut changes = self.changes.subscribe();
        let since = self.state().removals;
        loop {
            if let Some(outcome) = self.exit_of(name, since) {
                return outcome;
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

    async fn ensure_mps_daemon(&self, daemon: &MpsDaemon) -> Result<(), CoreError> {
        let mut state = self.state();
        let container = state.containers.entry(daemon.name.clone()).or_insert_with(|| FakeContainer {
            instance: daemon.labels.get(INSTANCE_LABEL).cloned().unwrap_or_default(),
            session_id: None,
            running: false,
            daemon: true,
            exit_code: None,
            network: "none".to_string(),
            address: None,
        });
        container.running = true;
        Ok(())
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
                daemon: c.daemon,
            })
            .collect())
    }

    async fn container_deaths(&self, instance: &str) -> Result<DeathStream, CoreError> {
        let instance = instance.to_string();
        let deaths = futures_util::stream::unfold(self.deaths.subscribe(), |mut deaths| async move {
            match deaths.recv().await {
                Ok(death) => Some((Ok(death), deaths)),
                // Deaths were missed: the stream breaks, as the engine's does.
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    Some((Err(CoreError::Engine(format!("{n} container deaths were missed"))), deaths))
                }
                Err(broadcast::error::RecvError::Closed) => None,
            }
        });
        Ok(Box::pin(deaths.filter_map(move |death| {
            let keep = match &death {
                Ok((of, _)) => *of == instance,
                Err(_) => true,
            };
            async move { keep.then(|| death.map(|(_, death)| death)) }
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
        let next = state.next_address;
        let Some(found) = state.containers.get_mut(container).filter(|c| c.running && c.network == network) else {
            return Ok(None);
        };
        if let Some(address) = &found.address {
            return Ok(Some(address.clone()));
        }
        // 198.18.0.0/15, the benchmarking range: 131,072 addresses, never one twice.
        if next >= 1 << 17 {
            return Err(CoreError::Engine("the fake engine ran out of addresses".into()));
        }
        let address = format!("198.{}.{}.{}", 18 + next / 65_536, (next / 256) % 256, next % 256);
        found.address = Some(address.clone());
        state.next_address = next + 1;
        Ok(Some(address))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_waiter_reads_the_exit_or_the_kill_and_a_late_wait_finds_nothing() {
        let engine = std::sync::Arc::new(FakeEngine::new());
        engine.add_stray("i-1", "job", Some("s-1"));
        let waiter = tokio::spawn({
            let engine = engine.clone();
            async move { engine.wait_exit("job").await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        engine.remove("job").await.unwrap();
        assert_eq!(waiter.await.unwrap().unwrap(), 137, "killed by the removal");
        assert!(matches!(engine.wait_exit("job").await, Err(CoreError::NotFound(_))), "gone before the wait began");

        engine.add_stray("i-1", "job", Some("s-2"));
        engine.exit("job", 3);
        assert_eq!(engine.wait_exit("job").await.unwrap(), 3, "a new container of the name has its own exit");
    }

    #[tokio::test]
    async fn deaths_reach_their_own_instance_only_and_addresses_stay_put() {
        let engine = FakeEngine::new();
        let mut deaths = engine.container_deaths("i-1").await.unwrap();
        engine.add_stray("i-2", "theirs", Some("t"));
        engine.add_stray("i-1", "mine", Some("m"));
        engine.exit("theirs", 0);
        engine.exit("mine", 1);
        let death = deaths.next().await.unwrap().unwrap();
        assert_eq!((death.name.as_str(), death.exit_code), ("mine", Some(1)));

        engine.add_stray("i-1", "a", None);
        engine.add_stray("i-1", "b", None);
        let a = engine.address_on("a", "").await.unwrap().unwrap();
        assert_eq!(engine.address_on("a", "").await.unwrap().unwrap(), a);
        assert_ne!(engine.address_on("b", "").await.unwrap().unwrap(), a);
        assert_eq!(engine.address_on("a", "elsewhere").await.unwrap(), None);
    }
}
