//! Training jobs started through the portal's own form API, and waiting on their state in
//! a session list (the CLI's `session list --json`, wherever that CLI runs).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::form::{client, post, urlencode};

/// Starts `command` in `image` on a 1g.10gb slice of course 1 as the cookie's owner; the
/// session's id.
pub async fn start_job(url: &str, cookie: &str, image: &str, command: &str) -> String {
    match claim_job(url, cookie, "1g.10gb", image, command).await {
        Ok(id) => id,
        Err(said) => panic!("no session started: {said}"),
    }
}

/// Asks for `command` in `image` on a `profile` slice of course 1: the session's id, or
/// the status and words of the refusal.
pub async fn claim_job(url: &str, cookie: &str, profile: &str, image: &str, command: &str) -> Result<String, String> {
    let body = format!(
        "course_id=1&profile={}&image={}&command={}",
        urlencode(profile),
        urlencode(image),
        urlencode(command)
    );
    let resp = post(&client(), url, Some(cookie), "start_session", body).await;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    let view: Value = serde_json::from_str(&text).unwrap_or_default();
    view["id"].as_str().map(str::to_string).ok_or_else(|| format!("{status}: {text}"))
}

/// Polls `list` until session `id` is in one of `states`; its entry.
pub async fn wait_for_state(
    list: impl Fn() -> Vec<Value>,
    id: &str,
    states: &[&str],
    within: Duration,
) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let entry = list().into_iter().find(|s| s["id"] == id);
        if let Some(entry) = &entry {
            if states.iter().any(|s| entry["state"] == *s) {
                return entry.clone();
            }
        }
        assert!(Instant::now() < deadline, "{id} never reached {states:?}: {entry:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
