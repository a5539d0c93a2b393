//! What JupyterLab itself says about activity: its kernels (busy now, or their last
//! message) and terminals, read through its REST API at the session's address with the
//! session's token. Reading them is not activity in JupyterLab's own bookkeeping of
//! kernels and terminals.

use std::time::Duration;

use serde::Deserialize;

#[derive(Deserialize)]
struct Kernel {
    #[serde(default)]
    execution_state: String,
    last_activity: Option<String>,
}

#[derive(Deserialize)]
struct Terminal {
    last_activity: Option<String>,
}

fn epoch_ms(text: &Option<String>) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text.as_deref()?).ok().map(|t| t.timestamp_millis())
}

async fn read<T: serde::de::DeserializeOwned>(client: &reqwest::Client, url: String, token: &str) -> Option<T> {
    let answer = client
        .get(url)
        .header("Authorization", format!("token {token}"))
        .timeout(Duration::from_secs(3))
        .send()
        .await
        .ok()?;
    if !answer.status().is_success() {
        return None;
    }
    answer.json().await.ok()
}

/// The latest moment JupyterLab was active: `now_ms` while a kernel runs code, else the
/// newest kernel or terminal activity. `None` when it cannot be read or has neither.
pub(super) async fn jupyter_activity(
    client: &reqwest::Client,
    address: &str,
    base_url: &str,
    token: &str,
    now_ms: i64,
) -> Option<i64> {
    let root = format!("http://{address}{base_url}api");
    let (kernels, terminals) = tokio::join!(
        read::<Vec<Kernel>>(client, format!("{root}/kernels"), token),
        read::<Vec<Terminal>>(client, format!("{root}/terminals"), token),
    );
    let kernels = kernels.unwrap_or_default();
    if kernels.iter().any(|k| k.execution_state == "busy") {
        return Some(now_ms);
    }
    let kernel_times = kernels.iter().filter_map(|k| epoch_ms(&k.last_activity));
    let terminal_times = terminals.unwrap_or_default().into_iter().filter_map(|t| epoch_ms(&t.last_activity));
    kernel_times.chain(terminal_times).max()
}
