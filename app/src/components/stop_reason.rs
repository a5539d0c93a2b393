use leptos::form::ActionForm;
use leptos::html;
use leptos::prelude::*;

use crate::api::message;
use crate::api::sessions::StopSession;

/// "Stop…" folded open into a form asking the reason the student will read. Once the
/// stop went through, the form folds shut and forgets the reason typed, so that it never
/// shows again on another row of the table.
#[component]
pub fn StopWithReason(
    id: String,
    stop: ServerAction<StopSession>,
    /// Whose session it is ("Ben Lee"), named on the buttons.
    #[prop(optional, into)]
    student: Option<String>,
    /// Show a refused stop inside the form (when `stop` is this row's own action).
    #[prop(optional)]
    errors_here: bool,
) -> impl IntoView {
    let details = NodeRef::<html::Details>::new();
    let form = NodeRef::<html::Form>::new();
    // Also runs when the row is made while `stop` already holds a success (a table that
    // shares one action and is drawn again after a stop): it starts folded and empty.
    Effect::new(move |_| {
        if matches!(stop.value().get(), Some(Ok(()))) {
            if let Some(details) = details.get_untracked() {
                details.set_open(false);
            }
            if let Some(form) = form.get_untracked() {
                form.reset();
            }
        }
    });
    // Screen readers hear whose session the button stops: "Stop Ben Lee's session…".
    let whose = student
        .as_ref()
        .map(|name| view! { <span class="sr-only">{format!(" {name}'s session")}</span> });
    let button = match &student {
        Some(name) => format!("Stop {name}'s session"),
        None => "Stop session".to_string(),
    };
    let error = move || {
        if !errors_here {
            return None;
        }
        stop.value()
            .get()
            .and_then(Result::err)
            .map(|e| view! { <p class="form-error">{message(&e)}</p> })
    };
    view! {
        <details class="stop-with-reason" node_ref=details>
            <summary class="btn btn-ghost-dark btn-small">"Stop"{whose}"…"</summary>
            <ActionForm action=stop node_ref=form attr:class="form stop-form">
                <input type="hidden" name="id" value=id/>
                <label>"Reason (the student sees it)"
                    <input name="reason" required maxlength="300" placeholder="e.g. the lab is over"/>
                </label>
                <p class="hint">"Unsaved work in an open notebook is lost."</p>
                {error}
                <button class="btn btn-danger btn-small" type="submit" disabled=move || stop.pending().get()>{button}</button>
            </ActionForm>
        </details>
    }
}
