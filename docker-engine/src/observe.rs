//! Reading what the engine knows of SliceHub's containers: their state, logs and
//! exit, the labelled ones that exist, and the stream of their deaths.

use std::collections::HashMap;
use std::pin::Pin;

use bollard::models::{ContainerSummaryStateEnum, EventMessageTypeEnum};
use bollard::query_parameters::{
    EventsOptionsBuilder, InspectContainerOptions, ListContainersOptionsBuilder,
    LogsOptionsBuilder, WaitContainerOptions,
};
use futures_util::{Stream, StreamExt};

use super::engine::Engine;
use slicehub_core::runtime::mps::MPS_DAEMON_ROLE;
use slicehub_core::runtime::spec::{INSTANCE_LABEL, ROLE_LABEL, SESSION_LABEL};
use slicehub_core::runtime::{ContainerDeath, ContainerStatus, EngineHost, ManagedContainer};
use slicehub_core::CoreError;

pub(crate) fn not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

impl Engine {
    /// `None` when no such container exists.
    pub async fn status(&self, name: &str) -> Result<Option<ContainerStatus>, CoreError> {
        match self
            .client()
            .await?
            .inspect_container(name, None::<InspectContainerOptions>)
            .await
        {
            Ok(inspect) => {
                let state = inspect.state.unwrap_or_default();
                Ok(Some(ContainerStatus {
                    id: inspect.id.clone().unwrap_or_default(),
                    running: state.running.unwrap_or(false),
                    exit_code: state.exit_code,
                    oom_killed: state.oom_killed.unwrap_or(false),
                    // Docker writes year 1 for a container that never stopped.
                    finished_at_ms: state
                        .finished_at
                        .as_deref()
                        .and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok())
                        .map(|at| at.timestamp_millis())
                        .filter(|ms| *ms > 0),
                }))
            }
            Err(e) if not_found(&e) => Ok(None),
            Err(e) => Err(CoreError::Engine(format!("inspecting {name}: {e}"))),
        }
    }

    /// Which of `images` the engine does not have (it pulls nothing: a missing image
    /// cannot start).
    pub async fn missing_images(&self, images: &[String]) -> Result<Vec<String>, CoreError> {
        let client = self.client().await?;
        let mut missing = Vec::new();
        for image in images {
            match client.inspect_image(image).await {
                Ok(_) => {}
                Err(e) if not_found(&e) => missing.push(image.clone()),
                Err(e) => return Err(CoreError::Engine(format!("inspecting image {image}: {e}"))),
            }
        }
        Ok(missing)
    }

    /// What the engine's host offers containers, from one `info` call.
    pub async fn host(&self) -> Result<EngineHost, CoreError> {
        let info = self
            .client()
            .await?
            .info()
            .await
            .map_err(|e| CoreError::Engine(format!("reading engine info: {e}")))?;
        Ok(EngineHost {
            cpus: info.ncpu.and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0),
            nvidia_runtime: info
                .runtimes
                .is_some_and(|runtimes| runtimes.contains_key("nvidia")),
        })
    }

    /// Waits until the container stops and returns its exit code.
    pub async fn wait_exit(&self, name: &str) -> Result<i64, CoreError> {
        let client = self.client().await?;
        let mut waits = client.wait_container(name, None::<WaitContainerOptions>);
        match waits.next().await {
            Some(Ok(done)) => Ok(done.status_code),
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
            Some(Err(e)) if not_found(&e) => Err(CoreError::NotFound(format!(
                "container {name} is gone"
            ))),
            Some(Err(e)) => Err(CoreError::Engine(format!("waiting for {name}: {e}"))),
            None => Err(CoreError::Engine(format!(
                "the engine ended the wait for {name} without an answer"
            ))),
        }
    }

    /// The last `lines` lines of the container's output (stdout and stderr interleaved),
    /// as a terminal would show them (see [`terminal_tail`]), at most [`TAIL_BYTES`].
    pub async fn logs_tail(&self, name: &str, lines: usize) -> Result<String, CoreError> {
        let options = LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .tail(&lines.to_string())
            .build();
        let client = self.client().await?;
        let mut stream = client.logs(name, Some(options));
        let mut out: Vec<u8> = Vec::new();
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(output) => {
                    out.extend_from_slice(&output.into_bytes());
                    // One "line" of progress-bar redraws can be any size: keep reading
                    // with a bounded buffer.
                    if out.len() > 4 * TAIL_BYTES {
                        out.drain(..out.len() - 2 * TAIL_BYTES);
                    }
                }
                Err(e) if not_found(&e) => break,
                Err(e) => return Err(CoreError::Engine(format!("reading logs of {name}: {e}"))),
            }
        }
        Ok(terminal_tail(&String::from_utf8_lossy(&out), lines))
    }

    /// Every container (running or not) that portal instance `instance` created.
    pub async fn managed_containers(
        &self,
        instance: &str,
    ) -> Result<Vec<ManagedContainer>, CoreError> {
        let label = format!("{INSTANCE_LABEL}={instance}");
        let filters = HashMap::from([("label", vec![label.as_str()])]);
        let options = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        let list = self
            .client()
            .await?
            .list_containers(Some(options))
            .await
            .map_err(|e| CoreError::Engine(format!("listing containers: {e}")))?;
        Ok(list
            .into_iter()
            .filter_map(|c| {
                let name = c.names?.first()?.trim_start_matches('/').to_string();
                let labels = c.labels.unwrap_or_default();
                Some(ManagedContainer {
                    name,
                    session_id: labels.get(SESSION_LABEL).cloned(),
                    daemon: labels.get(ROLE_LABEL).is_some_and(|role| role == MPS_DAEMON_ROLE),
                    running: matches!(
                        c.state,
                        Some(ContainerSummaryStateEnum::RUNNING)
                            | Some(ContainerSummaryStateEnum::RESTARTING)
                    ),
                })
            })
            .collect())
    }

    /// Deaths of portal instance `instance`'s containers from the engine's event stream,
    /// as they happen. The stream ends when the engine connection does; the caller
    /// reconnects.
    pub async fn container_deaths(
        &self,
        instance: &str,
    ) -> Result<Pin<Box<dyn Stream<Item = Result<ContainerDeath, CoreError>> + Send>>, CoreError>
    {
        let label = format!("{INSTANCE_LABEL}={instance}");
        let filters = HashMap::from([
            ("type", vec!["container"]),
            ("event", vec!["die"]),
            ("label", vec![label.as_str()]),
        ]);
        let options = EventsOptionsBuilder::default().filters(&filters).build();
        let client = self.client().await?;
        let stream = client.events(Some(options)).filter_map(|event| async move {
            match event {
                Ok(message) => {
                    if message.typ != Some(EventMessageTypeEnum::CONTAINER) {
                        return None;
                    }
                    let attributes = message.actor?.attributes.unwrap_or_default();
                    Some(Ok(ContainerDeath {
                        name: attributes.get("name")?.clone(),
                        session_id: attributes.get(SESSION_LABEL).cloned(),
                        exit_code: attributes.get("exitCode").and_then(|c| c.parse().ok()),
                    }))
                }
                Err(e) => Some(Err(CoreError::Engine(format!("engine events: {e}")))),
            }
        });
        Ok(Box::pin(stream))
    }
}

/// Most bytes of output kept or shown for one session.
pub const TAIL_BYTES: usize = 64 * 1024;

/// What a terminal shows of `text`'s last `lines` lines: a carriage return redraws its
/// line (progress bars), so only what follows the last one stays; at most [`TAIL_BYTES`],
/// cut at a line start where possible.
pub fn terminal_tail(text: &str, lines: usize) -> String {
    let shown: Vec<&str> = text
        .split('\n')
        .map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            line.rsplit('\r').next().unwrap_or(line)
        })
        .collect();
    let start = shown.len().saturating_sub(lines);
    let mut out = shown[start..].join("\n");
    if out.len() > TAIL_BYTES {
        let mut cut = out.len() - TAIL_BYTES;
        while !out.is_char_boundary(cut) {
            cut += 1;
        }
        let from = out[cut..].find('\n').map(|i| cut + i + 1).unwrap_or(cut);
        out.drain(..from);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bars_keep_their_last_state_and_output_stays_bounded() {
        let bar: String = (0..=100).map(|p| format!("\r{p:3}% [{}]", "#".repeat(p / 5))).collect();
        let text = format!("epoch 1\n{bar}\nepoch 2\n");
        assert_eq!(terminal_tail(&text, 10), "epoch 1\n100% [####################]\nepoch 2\n");
        assert_eq!(terminal_tail("a\r\nb\r\n", 10), "a\nb\n", "CRLF line ends stay lines");
        assert_eq!(terminal_tail("1\n2\n3\n4", 2), "3\n4");
        let flood = "x".repeat(1000).repeat(200) + "\nlast line";
        let kept = terminal_tail(&flood, 60);
        assert!(kept.len() <= TAIL_BYTES, "{}", kept.len());
        assert!(kept.ends_with("last line"));
    }
}
