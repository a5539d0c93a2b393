//! `slicehub --url URL --token-file FILE …`: the commands an administrator runs against a
//! portal on another machine, through its REST API with a personal access token (the
//! file holds the token alone). Only what the API offers works this way.

use std::path::Path;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::cli::{Command, GpuCommand, SessionCommand, UserCommand};
use crate::error::CliError;

pub fn run(url: &str, token_file: &Path, command: Command) -> Result<(), CliError> {
    let token = std::fs::read_to_string(token_file)
        .map_err(|e| CliError::Io(format!("cannot read the token file {}: {e}", token_file.display())))?;
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| CliError::Io(e.to_string()))?;
    let api = Api { base: format!("{}/api/v1", url.trim_end_matches('/')), token: token.trim().to_string(), client };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Io(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async move {
        match command {
            Command::Session { command: SessionCommand::List { json } } => {
                let sessions = api.call(Method::GET, "/admin/sessions", None).await?;
                print_rows(&sessions, json, &["id", "username", "course", "profile", "state"])
            }
            Command::Session { command: SessionCommand::Stop { id, reason } } => {
                let path = format!("/sessions/{}?reason={}", encoded(&id), encoded(&reason));
                api.call(Method::DELETE, &path, None).await?;
                println!("{id}: stopping");
                Ok(())
            }
            Command::User { command: UserCommand::List { json } } => {
                let users = api.call(Method::GET, "/users", None).await?;
                print_rows(&users, json, &["id", "username", "display_name", "is_admin", "disabled"])
            }
            Command::Gpu { command: GpuCommand::Drain { index } } => drain(&api, index, true).await,
            Command::Gpu { command: GpuCommand::Undrain { index } } => drain(&api, index, false).await,
            _ => Err(CliError::Io(
                "with --url only `session list`, `session stop`, `user list`, `gpu drain` and `gpu undrain` work; run the rest on the portal's machine".into(),
            )),
        }
    })
}

struct Api {
    base: String,
    token: String,
    client: reqwest::Client,
}

impl Api {
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value, CliError> {
        let mut request = self.client.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| CliError::Io(format!("the portal at {} did not answer: {e}", self.base)))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if status.is_success() {
            return Ok(if status == StatusCode::NO_CONTENT { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::Null) });
        }
        let words = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| format!("the portal answered {status}"));
        Err(CliError::Io(words))
    }
}

async fn drain(api: &Api, index: u32, drained: bool) -> Result<(), CliError> {
    api.call(Method::PUT, &format!("/gpus/{index}/drained"), Some(serde_json::json!({ "drained": drained })))
        .await?;
    println!("GPU {index}: {}", if drained { "drained" } else { "in service" });
    Ok(())
}

fn encoded(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn print_rows(rows: &Value, json: bool, columns: &[&str]) -> Result<(), CliError> {
    if json {
        println!("{}", serde_json::to_string_pretty(rows).map_err(|e| CliError::Io(e.to_string()))?);
        return Ok(());
    }
    for row in rows.as_array().into_iter().flatten() {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| match &row[*c] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            })
            .collect();
        println!("{}", cells.join("\t"));
    }
    Ok(())
}
