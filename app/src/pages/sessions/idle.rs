//! An idle session's warning on its card ("Idle for 50 min — stops at 14:20 unless you
//! continue", with why it came early and "Keep it running"), and a browser notification
//! when a warning first appears, if the student allowed them.

use std::collections::HashSet;

use leptos::prelude::*;

use crate::api::sessions::KeepSessionRunning;
use crate::components::time::{Elapsed, LocalTime};
use crate::views::{IdleView, SessionView};

#[component]
pub fn IdleWarning(id: String, idle: IdleView, job: bool, keep: ServerAction<KeepSessionRunning>) -> impl IntoView {
    let since = idle.idle_since_ms;
    let at = view! { <LocalTime ms=idle.stops_at_ms utc=idle.stops_at.clone()/> };
    let what = if job { "No GPU activity for " } else { "Idle for " };
    let outcome = if idle.stops {
        view! { " — stops at " {at} " unless you continue." }.into_any()
    } else {
        view! { ". Your instructor sees this too; the job keeps running." }.into_any()
    };
    view! {
        <div class="idle-warning" role="status" data-early=idle.early.to_string()>
            <p>
                <b>{what} <Elapsed since_ms=since initial=String::new()/></b>
                {outcome}
            </p>
            {idle.early.then(|| view! {
                <p class="hint">"It comes early because other students are waiting for a slice of this size."</p>
            })}
            {(idle.stops && !job).then(|| view! {
                <p class="hint">"Running code, saving or typing in a terminal counts as activity; an open tab alone does not."</p>
            })}
            {idle.stops.then(|| view! {
                <button type="button" class="btn btn-primary btn-small keep-running"
                    on:click=move |_| { keep.dispatch(KeepSessionRunning { id: id.clone() }); }>
                    "Keep it running"
                </button>
            })}
        </div>
    }
}

/// The sessions already warned on this page, so each warning notifies once.
#[derive(Clone, Copy)]
pub struct IdleAlerts {
    warned: StoredValue<HashSet<(String, i64)>>,
}

impl IdleAlerts {
    pub fn new() -> IdleAlerts {
        IdleAlerts { warned: StoredValue::new(HashSet::new()) }
    }

    /// Called with every fresh list of the student's sessions.
    pub fn seen(&self, sessions: &[SessionView]) {
        let mut fresh = Vec::new();
        self.warned.update_value(|warned| {
            for s in sessions {
                if let Some(idle) = s.idle.as_ref().filter(|i| i.stops) {
                    if warned.insert((s.id.clone(), idle.stops_at_ms)) {
                        fresh.push(format!("Your {} {} is idle", s.profile, s.kind));
                    }
                }
            }
        });
        for text in fresh {
            super::arrival::notify(&text, "It stops soon unless you continue: open SliceHub to keep it running.");
        }
    }
}
