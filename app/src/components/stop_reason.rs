use leptos::form::ActionForm;
use leptos::prelude::*;

use crate::api::sessions::StopSession;

/// "Stop…" folded open into a form asking the reason the student will read.
#[component]
pub fn StopWithReason(id: String, stop: ServerAction<StopSession>) -> impl IntoView {
    view! {
        <details class="stop-with-reason">
            <summary class="btn btn-ghost-dark btn-small">"Stop…"</summary>
            <ActionForm action=stop attr:class="form stop-form">
                <input type="hidden" name="id" value=id/>
                <label>"Reason (the student sees it)"
                    <input name="reason" required maxlength="300" placeholder="e.g. the lab is over"/>
                </label>
                <p class="hint">"Unsaved work in an open notebook is lost."</p>
                <button class="btn btn-danger btn-small" type="submit">"Stop session"</button>
            </ActionForm>
        </details>
    }
}
