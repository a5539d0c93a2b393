//! `slicehub session list`: the sessions table for operators (and restart tests).

use slicehub_core::config::Config;
use slicehub_core::sessions::SessionState;

use crate::cli::SessionCommand;
use crate::error::CliError;
use crate::startup::{build_services, open_store};

pub async fn run(config: &Config, command: SessionCommand) -> Result<(), CliError> {
    match command {
        SessionCommand::List { json } => list(config, json).await,
        SessionCommand::Stop { id, reason } => {
            let services = build_services(config.clone()).await?;
            // The serving portal places the queue; this process ends right after the stop.
            services.sessions.never_dispatch();
            let session = services.sessions.stop(&id, &reason).await?;
            services.store.audit("cli", "session.stop", &id, &reason).await?;
            println!("{}: {} ({})", session.id, session.state.as_str(), session.reason);
            services.store.close().await;
            Ok(())
        }
    }
}

async fn list(config: &Config, json: bool) -> Result<(), CliError> {
    let store = open_store(config).await?;
    let sessions = store.gpu_sessions_in(&SessionState::ALL).await?;
    let open_usage = store.open_usage_ids().await?;
    store.close().await;
    let rows: Vec<serde_json::Value> = sessions
        .iter()
        .rev()
        .map(|s| {
            serde_json::json!({
                "id": s.id,
                "user": s.username,
                "course": s.course_code,
                "kind": s.kind.as_str(),
                "profile": s.profile,
                "state": s.state.as_str(),
                "reason": s.reason,
                "placement": s.placement.as_ref().map(|p| format!("GPU {} {}", p.gpu_index, p.label)),
                "released": s.released,
                "container": s.container,
                "usage_open": open_usage.contains(&s.id),
            })
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
    } else {
        for s in &sessions {
            println!(
                "{:<16} {:<12} {:<10} {:<9} {:<10} {}",
                s.id,
                s.username,
                s.course_code,
                s.profile,
                s.state.as_str(),
                s.placement.as_ref().map(|p| p.label.as_str()).unwrap_or("-")
            );
        }
    }
    Ok(())
}
