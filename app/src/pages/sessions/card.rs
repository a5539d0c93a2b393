//! One session: what it runs, where, each step so far, its output, and Stop.

use std::time::Duration;

use leptos::form::ActionForm;
use leptos::prelude::*;

use crate::api::sessions::{session_logs, StopSession};
use crate::views::SessionView;

#[component]
pub fn SessionCard(session: SessionView, stop: ServerAction<StopSession>) -> impl IntoView {
    let s = session;
    let what = if s.kind == "job" {
        format!("Job: {}", s.command)
    } else {
        "JupyterLab".to_string()
    };
    let steps = s
        .steps
        .iter()
        .map(|step| {
            view! {
                <li class=format!("step step-{}", step.state)>
                    <span class="step-at mono">{step.at.clone()}</span>
                    <span class="step-state">{step.state.clone()}</span>
                    <span class="step-detail">{step.detail.clone()}</span>
                </li>
            }
        })
        .collect_view();
    let outcome = (!s.live).then(|| {
        let code = s
            .exit_code
            .filter(|_| !s.reason.contains("exit code"))
            .map(|c| format!(" (exit code {c})"))
            .unwrap_or_default();
        let class = if s.state == "failed" { "outcome outcome-failed" } else { "outcome" };
        view! { <p class=class>{s.reason.clone()}{code}</p> }
    });
    let logs = (s.kind == "job" || !s.log_tail.is_empty())
        .then(|| view! { <SessionLogs id=s.id.clone() live=s.live initial=s.log_tail.clone()/> });
    let stop_id = s.id.clone();
    let stop_form = s.live.then(move || {
        view! {
            <ActionForm action=stop attr:class="inline-form">
                <input type="hidden" name="id" value=stop_id/>
                <button class="btn btn-secondary btn-small stop" type="submit">"Stop"</button>
            </ActionForm>
        }
    });
    view! {
        <article class="card session" data-session=s.id.clone() data-state=s.state.clone()>
            <header class="session-head">
                <div>
                    <h3 class="card-title">{what}</h3>
                    <p class="muted small">
                        {s.course.clone()} " · " {s.profile.clone()} " · " <span class="mono">{s.image.clone()}</span>
                    </p>
                </div>
                <div class="session-actions">
                    {s.open_url.clone().map(|url| view! {
                        <a class="btn btn-primary btn-small open-lab" href=url target="_blank" rel="noopener">"Open JupyterLab"</a>
                    })}
                    <span class=format!("badge state state-{}", s.state)>{s.state.clone()}</span>
                    {stop_form}
                </div>
            </header>
            <dl class="facts">
                <dt>"Session"</dt><dd class="mono">{s.id.clone()}</dd>
                <dt>"Slice"</dt><dd>{s.placement.clone().unwrap_or_else(|| "not placed yet".into())}</dd>
                <dt>"MIG device"</dt><dd class="mono">{s.mig_uuid.clone().unwrap_or_else(|| "—".into())}</dd>
                <dt>"Requested"</dt><dd>{s.requested_at.clone()}</dd>
                {s.ends_at.clone().map(|t| view! { <dt>"Stops at"</dt><dd>{t}</dd> })}
            </dl>
            {outcome}
            <ol class="steps session-steps">{steps}</ol>
            {logs}
        </article>
    }
}

/// The container's output: refreshed every 2 s while the session runs.
#[component]
fn SessionLogs(id: String, live: bool, initial: String) -> impl IntoView {
    let tick = RwSignal::new(0u32);
    let text = RwSignal::new(initial);
    if live {
        Effect::new(move |_| {
            if let Ok(handle) =
                set_interval_with_handle(move || tick.update(|n| *n += 1), Duration::from_secs(2))
            {
                on_cleanup(move || handle.clear());
            }
        });
        let id = id.clone();
        Effect::new(move |_| {
            if tick.get() == 0 {
                return;
            }
            let id = id.clone();
            leptos::task::spawn_local(async move {
                if let Ok(latest) = session_logs(id).await {
                    text.try_set(latest);
                }
            });
        });
    }
    view! {
        <details class="logs" open=true>
            <summary>"Output"</summary>
            <pre class="mono log-tail">{move || {
                let t = text.get();
                if t.is_empty() { "(nothing printed yet)".to_string() } else { t }
            }}</pre>
        </details>
    }
}
