//! Following the caller's session events from the server (server-sent events).

use leptos::prelude::*;

/// Opens `/api/sessions/events` and bumps `generation` on every event; closes it when the
/// page is left (otherwise every visit would leave a connection open). Only in the browser.
#[cfg(feature = "hydrate")]
pub fn follow_session_events(generation: RwSignal<u32>) {
    use std::rc::Rc;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;

    let Ok(source) = web_sys::EventSource::new("/api/sessions/events") else {
        return;
    };
    let source = Rc::new(source);
    let handle = source.clone();
    let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |_: web_sys::MessageEvent| {
        if generation.try_update(|n| *n += 1).is_none() {
            handle.close();
        }
    });
    source.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // The browser runs one thread: the wrapper only satisfies the cleanup's Send bound.
    let on_leave = send_wrapper::SendWrapper::new(source);
    on_cleanup(move || on_leave.close());
}

#[cfg(not(feature = "hydrate"))]
pub fn follow_session_events(_generation: RwSignal<u32>) {}
