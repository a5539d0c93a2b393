//! A session's state and ending in plain words.

use crate::views::SessionView;

/// The badge's word and colour.
pub fn badge(s: &SessionView) -> (&'static str, &'static str) {
    badge_of(&s.state, &s.kind, s.exit_code)
}

/// The badge of a session in `state` of `kind` (`notebook`, `job`).
pub fn badge_of(state: &str, kind: &str, exit_code: Option<i64>) -> (&'static str, &'static str) {
    match (state, kind) {
        ("requested" | "queued", _) => ("waiting", "warn"),
        ("allocating" | "creating" | "starting", _) => ("starting", "warn"),
        ("ready", "job") => ("running", "ok"),
        ("ready", _) => ("ready", "ok"),
        ("stopping", _) => ("stopping", "warn"),
        ("ended", "job") if exit_code == Some(0) => ("finished", "ok"),
        ("failed", _) => ("failed", "down"),
        _ => ("ended", "off"),
    }
}

/// What is happening now and what to do, for a session that has not ended.
pub fn now(s: &SessionView) -> String {
    let job = s.kind == "job";
    match s.state.as_str() {
        "requested" | "queued" => match s.queue_position {
            Some(1) => format!(
                "Waiting for a free {} slice: you are next in line. It starts by itself when one frees up; you can leave this page.",
                s.profile
            ),
            Some(n) => format!(
                "Waiting for a free {} slice: {} ahead of you in line. It starts by itself when one frees up; you can leave this page.",
                s.profile,
                crate::pages::count(n as usize - 1, "claim is", "claims are")
            ),
            None => format!(
                "Waiting for a free {} slice. It starts by itself when one frees up; you can leave this page.",
                s.profile
            ),
        },
        "allocating" | "creating" | "starting" if job => "Setting up the GPU slice and starting your command…".into(),
        "allocating" | "creating" | "starting" => "Setting up the GPU slice and starting JupyterLab, usually a few seconds…".into(),
        "ready" if job => "Running. Its output appears below as it prints.".into(),
        "ready" => "JupyterLab is ready. Files you save in your home folder are kept after the session ends.".into(),
        "stopping" => "Stopping and giving the slice back…".into(),
        _ => String::new(),
    }
}

/// One line on why it ended.
pub fn ending(s: &SessionView) -> String {
    match (s.kind.as_str(), s.state.as_str(), s.exit_code) {
        ("job", "ended", Some(0)) => "Finished without errors.".into(),
        ("job", "failed", Some(code)) => format!(
            "The command failed with exit code {code}. Its output, under Details, says why; if a file is missing, put it in your home folder first."
        ),
        _ => sentence(&s.reason),
    }
}

fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
        None => return "Ended.".into(),
    };
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}
