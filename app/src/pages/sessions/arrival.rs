//! When a session the student waited for starts: the tab's title says so (the student
//! may be in another tab), and a browser notification appears if they allowed it.

use std::collections::HashSet;

use leptos::prelude::*;

use crate::views::{SessionState, SessionView};

/// The sessions seen waiting on this page, and what the title says when one started.
#[derive(Clone, Copy)]
pub struct Arrivals {
    waiting: StoredValue<HashSet<String>>,
    /// `Your 1g.10gb notebook is ready` until the page gets the focus again.
    pub started: RwSignal<Option<String>>,
}

impl Arrivals {
    pub fn new() -> Arrivals {
        let arrivals = Arrivals {
            waiting: StoredValue::new(HashSet::new()),
            started: RwSignal::new(None),
        };
        let started = arrivals.started;
        Effect::new(move |_| {
            let handle = window_event_listener(leptos::ev::focus, move |_| started.set(None));
            on_cleanup(move || handle.remove());
        });
        arrivals
    }

    /// Called with every fresh list of the student's sessions.
    pub fn seen(&self, sessions: &[SessionView]) {
        let mut arrived = None;
        self.waiting.update_value(|waiting| {
            for s in sessions {
                match s.state {
                    SessionState::Requested | SessionState::Queued => {
                        waiting.insert(s.id.clone());
                    }
                    SessionState::Ready if waiting.remove(&s.id) => {
                        arrived = Some(format!("Your {} {} is ready", s.profile, s.kind));
                    }
                    _ if !s.live => {
                        waiting.remove(&s.id);
                    }
                    _ => {}
                }
            }
        });
        if let Some(text) = arrived {
            notify(&text, "Open SliceHub to start working on it.");
            self.started.set(Some(text));
        }
    }
}

/// A button that asks the browser's permission to notify, shown on a waiting session
/// while the student has neither allowed nor refused notifications; once refused, a note
/// says so. (The permission is read after hydration: the server cannot know it.)
#[component]
pub fn NotifyWhenReady() -> impl IntoView {
    let state = RwSignal::new(None::<String>);
    Effect::new(move |_| state.set(permission()));
    let request = move |_| {
        request_permission();
        state.set(None);
    };
    move || {
        match state.get().as_deref() {
            Some("default") => Some(
                view! {
                    <button type="button" class="btn btn-secondary btn-small notify-me" on:click=request>
                        "Notify me when it starts"
                    </button>
                }
                .into_any(),
            ),
            Some("denied") => Some(
                view! { <p class="muted small notify-blocked">"Notifications are blocked in this browser's settings."</p> }
                    .into_any(),
            ),
            _ => None,
        }
    }
}

#[cfg(feature = "hydrate")]
fn permission() -> Option<String> {
    use wasm_bindgen::JsCast;
    // Browsers without the Notification API (or where it is hidden) get no button.
    js_sys::Reflect::get(&js_sys::global(), &"Notification".into())
        .ok()
        .filter(|n| n.is_function())?;
    let value: wasm_bindgen::JsValue = web_sys::Notification::permission().into();
    value.dyn_into::<js_sys::JsString>().ok().map(String::from)
}

#[cfg(feature = "hydrate")]
fn request_permission() {
    if let Ok(promise) = web_sys::Notification::request_permission() {
        wasm_bindgen_futures::spawn_local(async move {
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        });
    }
}

#[cfg(feature = "hydrate")]
pub(super) fn notify(text: &str, body: &str) {
    if permission().as_deref() == Some("granted") {
        let options = web_sys::NotificationOptions::new();
        options.set_body(body);
        let _ = web_sys::Notification::new_with_options(text, &options);
    }
}

#[cfg(not(feature = "hydrate"))]
fn permission() -> Option<String> {
    None
}

#[cfg(not(feature = "hydrate"))]
fn request_permission() {}

#[cfg(not(feature = "hydrate"))]
pub(super) fn notify(_text: &str, _body: &str) {}
