//! One session for the person who started it: what runs, on how big a slice, how long it
//! has left, what to do; ids, devices and each step are behind "Details".

use std::time::Duration;

use leptos::prelude::*;

use super::words;
use crate::api::message;
use crate::api::sessions::{session_logs, KeepSessionRunning, StartSession, StopSession};
use crate::components::badge::Badge;
use crate::components::confirm::ConfirmButton;
use crate::components::disclosure::Disclosure;
use crate::components::time::{Elapsed, EtaText, LocalTime, StopWarning, TimeLeft};
use crate::views::{SessionKind, SessionState, SessionView};

/// A session that is waiting, starting or running.
#[component]
pub fn SessionCard(
    session: SessionView,
    stop: ServerAction<StopSession>,
    keep: ServerAction<KeepSessionRunning>,
) -> impl IntoView {
    let s = session;
    let (word, kind) = words::badge(&s);
    let job = s.kind == SessionKind::Job;
    let stop_id = s.id.clone();
    // A waiting claim has nothing running yet: leaving the queue gives up its place only.
    let waiting = matches!(s.state, SessionState::Requested | SessionState::Queued);
    let (label, question, warning, confirm) = if waiting {
        (
            "Leave the queue",
            "Leave the queue?",
            if job {
                "Your job will not run: it gives up its place in the line for a slice. Nothing has started, so nothing is lost; you can join the queue again later, at the back."
            } else {
                "Your notebook will not start: it gives up its place in the line for a slice. Nothing has started, so nothing is lost; you can join the queue again later, at the back."
            },
            "Leave the queue",
        )
    } else if job {
        ("Stop", "Stop this job?", "The command is ended now and the GPU slice given back. Files it already wrote to your home folder stay.", "Stop job")
    } else {
        ("Stop", "Stop this notebook?", "JupyterLab closes and the GPU slice is given back. Anything you have not saved is lost: save your notebooks first. Saved files in your home folder stay.", "Stop notebook")
    };
    let quota = s.stops_for == "quota";
    let stop_warning = s.ends_at_ms.map(|deadline_ms| {
        let why = if quota { "your slice-hours run out" } else { "the course's time limit" };
        view! { <StopWarning deadline_ms before_ms=s.warn_before_ms why/> }
    });
    let time = match (s.ends_at_ms, s.time_left.clone()) {
        (Some(deadline_ms), Some(initial)) => view! {
            <span>"Stops at " <LocalTime ms=deadline_ms utc=s.ends_at.clone().unwrap_or_default()/>
                " (" <TimeLeft deadline_ms initial/> ")"
                {quota.then_some(", when your slice-hours run out")}</span>
        }
        .into_any(),
        _ => view! { <span>"Requested " <LocalTime ms=s.requested_at_ms utc=s.requested_at.clone()/></span> }.into_any(),
    };
    let (id, state, kind_attr) = (s.id.clone(), s.state.as_str(), s.kind.as_str());
    let running = s.ready_at_ms.filter(|_| job).map(|since_ms| {
        view! { <span>"Running for " <Elapsed since_ms initial=s.ran_for.clone().unwrap_or_default()/></span> }
    });
    let logs = job.then(|| view! { <SessionLogs id=s.id.clone() live=s.live initial=s.log_tail.clone() label="Output"/> });
    view! {
        <article class="card session" data-session=id data-state=state data-kind=kind_attr>
            <header class="session-head">
                <div>
                    <h3 class="session-title"><SessionTitle session=s.clone()/></h3>
                    <p class="session-facts">
                        <span><b>{s.profile.clone()}</b>" GPU slice"</span>
                        <span>{s.course.clone()}</span>
                        {running}
                        {time}
                    </p>
                </div>
                <div class="session-actions">
                    <Badge kind=kind text=word/>
                    {s.open_url.clone().map(|url| view! {
                        <a class="btn btn-primary btn-small open-lab" href=url target="_blank" rel="noopener">"Open JupyterLab"</a>
                    })}
                    <ConfirmButton label class="btn-secondary btn-small stop"
                        question warning confirm
                        on_confirm=Callback::new(move |()| { stop.dispatch(StopSession { id: stop_id.clone(), reason: None }); })/>
                </div>
            </header>
            <p class="hint now">{words::now(&s)}</p>
            {s.eta.clone().map(|eta| view! {
                <p class="queue-eta">"Expected start: " <EtaText eta/> " (your time). "
                    <span class="muted">"“At the latest” holds even if every session ahead runs to its time limit."</span></p>
            })}
            {s.cluster_wait.clone().map(|w| view! {
                <p class="queue-eta cluster-wait" data-reason=w.reason.clone()>
                    "On the Slurm cluster: " {w.words.clone()} " (Slurm's reason: " <code>{w.reason.clone()}</code> "). "
                    {w.expected_start_ms.zip(w.expected_start.clone()).map(|(ms, utc)| view! {
                        "Slurm expects it to start at " <LocalTime ms utc/> " (your time). "
                    })}
                </p>
            })}
            {matches!(s.state, SessionState::Requested | SessionState::Queued).then(|| view! { <super::arrival::NotifyWhenReady/> })}
            {stop_warning}
            {s.idle.clone().map(|idle| view! { <super::idle::IdleWarning id=s.id.clone() idle job keep/> })}
            {(s.state == SessionState::Ready).then(|| view! { <super::activity::SliceActivity id=s.id.clone()/> })}
            {logs}
            <Disclosure summary="Details" class="session-details">
                <SessionDetails session=s.clone()/>
            </Disclosure>
        </article>
    }
}

/// Lines of a past job's output shown in its row (all of it is under Details).
const LAST_LINES: usize = 5;

/// The last `n` lines of `text`, without trailing blank lines.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A session that is over: one line with how it ended, a job's last lines of output,
/// "Run again" (the same course, size, image and command), the rest folded away.
#[component]
pub fn HistoryRow(
    session: SessionView,
    start: ServerAction<StartSession>,
    /// The past session whose "Run again" was pressed last: its row tells why a start
    /// was refused.
    again_from: RwSignal<Option<String>>,
) -> impl IntoView {
    let s = session;
    let (word, kind) = words::badge(&s);
    let job = s.kind == SessionKind::Job;
    let ran = s.ran_for.clone().map(|d| format!("ran {d}"));
    let (id, state, kind_attr) = (s.id.clone(), s.state.as_str(), s.kind.as_str());
    let tail = last_lines(&s.log_tail, LAST_LINES);
    let output = (job && !tail.is_empty()).then(|| view! {
        <pre class="mono log-tail history-output" tabindex="0" aria-label="Last lines of output">{tail}</pre>
    });
    let again = StartSession {
        course_id: s.course_id,
        profile: s.profile.clone(),
        image: s.image.clone(),
        command: job.then(|| s.command_text.clone()),
    };
    let asked_id = s.id.clone();
    let refused_id = s.id.clone();
    let refused = move || {
        (again_from.get().as_deref() == Some(refused_id.as_str()))
            .then(|| start.value().get().and_then(Result::err))
            .flatten()
            .map(|e| view! { <p class="form-error again-error" role="alert">{message(&e)}</p> })
    };
    view! {
        <li class="history-row session" data-session=id data-state=state data-kind=kind_attr>
            <div class="history-line">
                <Badge kind=kind text=word/>
                <span class="what"><SessionTitle session=s.clone()/></span>
                <span class="muted">{s.profile.clone()} " · " <LocalTime ms=s.requested_at_ms utc=s.requested_at.clone()/>
                    {ran.map(|r| format!(" · {r}"))}</span>
            </div>
            <p class="history-line why outcome">{words::ending(&s)}</p>
            {output}
            <div class="history-actions">
                <button type="button" class="btn btn-secondary btn-small run-again"
                    disabled=move || start.pending().get()
                    on:click=move |_| {
                        again_from.set(Some(asked_id.clone()));
                        start.dispatch(again.clone());
                    }
                >{if job { "Run again" } else { "Start again" }}</button>
            </div>
            {refused}
            <Disclosure summary="Details" class="session-details">
                {(job || !s.log_tail.is_empty()).then(|| view! {
                    <SessionLogs id=s.id.clone() live=false initial=s.log_tail.clone()
                        label=if job { "Output" } else { "JupyterLab's server log" }/>
                })}
                <SessionDetails session=s.clone()/>
            </Disclosure>
        </li>
    }
}

#[component]
fn SessionTitle(session: SessionView) -> impl IntoView {
    if session.kind == SessionKind::Job {
        view! { "Job " <code class="command">{session.command_text}</code> }.into_any()
    } else {
        view! { "JupyterLab" }.into_any()
    }
}

/// For those who want them (and for admins): ids, the device, and every step.
#[component]
fn SessionDetails(session: SessionView) -> impl IntoView {
    let s = session;
    let steps = s
        .steps
        .iter()
        .map(|step| {
            view! {
                <li class=format!("step step-{}", step.state)>
                    <span class="step-at mono"><LocalTime ms=step.at_ms utc=step.at.clone() seconds=true/></span>
                    <span class="step-state">{step.state.as_str()}</span>
                    <span class="step-detail">{step.detail.clone()}</span>
                </li>
            }
        })
        .collect_view();
    let server_log = (s.kind != SessionKind::Job && s.live && !s.log_tail.is_empty())
        .then(|| view! { <SessionLogs id=s.id.clone() live=false initial=s.log_tail.clone() label="JupyterLab's server log"/> });
    view! {
        <dl class="facts">
            <div><dt>"Image"</dt><dd class="mono">{s.image.clone()}</dd></div>
            <div><dt>"Slice"</dt><dd>{s.placement.clone().unwrap_or_else(|| "not placed yet".into())}</dd></div>
            <div class="wide"><dt>"Session"</dt><dd class="mono">{s.id.clone()}</dd></div>
            // Administrators only: students' sessions come without the device.
            {s.mig_uuid.clone().map(|uuid| {
                let what = if uuid.starts_with("MIG-") { "MIG device" } else { "Whole GPU" };
                view! { <div class="wide"><dt>{what}</dt><dd class="mono">{uuid}</dd></div> }
            })}
        </dl>
        <ol class="steps session-steps">{steps}</ol>
        {server_log}
    }
}

/// The container's output: refreshed every 2 s while the session runs.
#[component]
fn SessionLogs(id: String, live: bool, initial: String, label: &'static str) -> impl IntoView {
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
        <div class="logs">
            <p class="logs-label">{label}</p>
            <pre class="mono log-tail" tabindex="0" aria-label=label>{move || {
                let t = text.get();
                if t.is_empty() { "(nothing printed yet)".to_string() } else { t }
            }}</pre>
        </div>
    }
}

/// The top of the sessions page after a session ended by something other than its
/// student's own stop (an instructor, the time limit, an idle cull, a failure): what ended,
/// why, and that the files are kept.
#[component]
pub fn EndedBanner(ended: SessionView) -> impl IntoView {
    let what = if ended.kind == SessionKind::Job { "job" } else { "notebook" };
    let failed = ended.state == SessionState::Failed;
    let title = if failed { format!("Your {what} failed") } else { format!("Your {what} has ended") };
    view! {
        <div class="card ended-banner" class:ended-failed=failed role="status" data-session=ended.id.clone()>
            <h2 class="ended-title">{title}</h2>
            <p class="ended-reason">{format!("{}: {}.", ended.id, ended.reason.trim_end_matches('.'))}</p>
            <p class="muted small">"Your files in your home folder are kept. Start again below when you are ready."</p>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::last_lines;

    #[test]
    fn a_row_shows_the_last_lines_of_output() {
        assert_eq!(last_lines("a\nb\nc\nd\ne\nf\ng\n\n", 5), "c\nd\ne\nf\ng");
        assert_eq!(last_lines("only\n", 5), "only");
        assert_eq!(last_lines("", 5), "");
        assert_eq!(last_lines("\n\n", 5), "");
    }
}
