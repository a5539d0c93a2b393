//! Following the caller's session events from the server (server-sent events). Each event
//! carries the caller's sessions as the page shows them, so the page takes the list from
//! the event instead of asking for it again.

use leptos::prelude::*;

use crate::views::SessionView;

/// What one event says: the session that changed and, unless the server could not read
/// it, every session of the caller after the change.
#[cfg(any(feature = "hydrate", test))]
#[derive(serde::Deserialize)]
struct Pushed {
    state: Option<crate::views::SessionState>,
    sessions: Option<Vec<SessionView>>,
}

/// What the page does with an event's text.
#[cfg(any(feature = "hydrate", test))]
#[derive(Debug, PartialEq)]
enum Follow {
    /// Show this list. `ended` when the session that changed ended now (its history row
    /// and the launch cards follow then), `ready` when it got going now (the launch cards'
    /// free slices follow then).
    Show { list: Vec<SessionView>, ended: bool, ready: bool },
    /// Read everything again (events were missed, or the event came without the list).
    ReadAgain,
}

#[cfg(any(feature = "hydrate", test))]
fn follow(data: &str) -> Follow {
    match serde_json::from_str::<Pushed>(data) {
        Ok(Pushed { state, sessions: Some(list) }) => {
            let ended = state.is_some_and(crate::views::SessionState::is_final);
            let ready = state == Some(crate::views::SessionState::Ready);
            Follow::Show { list, ended, ready }
        }
        _ => Follow::ReadAgain,
    }
}

/// Signals the page follows the stream with.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub struct Followed {
    /// Bumped when the page must read everything again.
    pub generation: RwSignal<u32>,
    /// The list the last event brought, numbered from 1 in the order they came.
    pub pushed: RwSignal<Option<(u32, Vec<SessionView>)>>,
    /// Bumped when a session got going: the launch cards read again.
    pub settled: RwSignal<u32>,
}

/// Opens `/api/sessions/events` and follows it into `followed`. Closes the stream when the
/// page is left (otherwise every visit would leave a connection open). Only in the browser.
#[cfg(feature = "hydrate")]
pub fn follow_session_events(followed: Followed) {
    use std::rc::Rc;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;

    let Followed { generation, pushed, settled } = followed;
    // False once the page is gone (its signals with it).
    let bump = |signal: RwSignal<u32>| signal.try_update(|n| *n += 1).is_some();
    let Ok(source) = web_sys::EventSource::new("/api/sessions/events") else {
        return;
    };
    let source = Rc::new(source);
    let handle = source.clone();
    let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
        let alive = match follow(&event.data().as_string().unwrap_or_default()) {
            Follow::Show { list, ended, ready } => {
                let shown = pushed.try_update(|p| *p = Some((p.as_ref().map_or(1, |(n, _)| n + 1), list))).is_some();
                shown && (!ready || bump(settled)) && (!ended || bump(generation))
            }
            Follow::ReadAgain => bump(generation),
        };
        if !alive {
            handle.close();
        }
    });
    source.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // The browser opens the stream again by itself after it ended (the portal ends it
    // when someone's access changes) or broke: what happened meanwhile was not sent, so
    // the page reads again at each reopening.
    let opened = std::cell::Cell::new(false);
    let reopened = source.clone();
    let on_open = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
        if opened.replace(true) && !bump(generation) {
            reopened.close();
        }
    });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    // The browser runs one thread: the wrapper only satisfies the cleanup's Send bound.
    let on_leave = send_wrapper::SendWrapper::new(source);
    on_cleanup(move || on_leave.close());
}

#[cfg(not(feature = "hydrate"))]
pub fn follow_session_events(_followed: Followed) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_with_the_list_is_shown_and_an_end_reads_again() {
        assert_eq!(follow("{\"lagged\":true}"), Follow::ReadAgain);
        assert_eq!(follow("{\"session\":\"s1\",\"state\":\"ready\"}"), Follow::ReadAgain);
        assert_eq!(follow("not json"), Follow::ReadAgain);
        let show = |state: &str| follow(&format!("{{\"session\":\"s1\",\"state\":\"{state}\",\"sessions\":[]}}"));
        assert_eq!(show("creating"), Follow::Show { list: vec![], ended: false, ready: false });
        assert_eq!(show("ready"), Follow::Show { list: vec![], ended: false, ready: true });
        assert_eq!(show("failed"), Follow::Show { list: vec![], ended: true, ready: false });
        assert_eq!(show("ended"), Follow::Show { list: vec![], ended: true, ready: false });
    }
}
