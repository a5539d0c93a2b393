use leptos::html;
use leptos::prelude::*;

/// A button that asks first: a dialog with what will happen, Cancel (focused) and the
/// action itself. Escape or a click beside the dialog cancels.
#[component]
pub fn ConfirmButton(
    /// The button's words.
    #[prop(into)]
    label: String,
    /// The dialog's question, e.g. "Stop this notebook?"
    #[prop(into)]
    question: String,
    /// What will happen, shown under the question.
    #[prop(optional, into)]
    warning: Option<String>,
    /// The confirming button's words, e.g. "Stop notebook".
    #[prop(into)]
    confirm: String,
    /// Classes of the first button besides `btn`.
    #[prop(optional, into)]
    class: String,
    #[prop(optional, into)] disabled: Signal<bool>,
    on_confirm: Callback<()>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let cancel_ref = NodeRef::<html::Button>::new();
    let trigger_ref = NodeRef::<html::Button>::new();
    // Closing hands the focus back to the button that opened the dialog.
    let close = move || {
        open.set(false);
        if let Some(button) = trigger_ref.get_untracked() {
            let _ = button.focus();
        }
    };
    Effect::new(move |_| {
        if open.get() {
            if let Some(button) = cancel_ref.get() {
                let _ = button.focus();
            }
        }
    });
    let title_id = format!("confirm-{}", next_id());
    let dialog = move || {
        open.get().then(|| {
            let (question, warning, confirm) = (question.clone(), warning.clone(), confirm.clone());
            let (title_id, labelled_by) = (title_id.clone(), title_id.clone());
            view! {
                <div class="confirm-backdrop"
                    on:click=move |_| close()
                    on:keydown=move |ev| if ev.key() == "Escape" { close() }
                >
                    <div class="card confirm-dialog" role="alertdialog" aria-modal="true"
                        aria-labelledby=labelled_by
                        on:click=|ev| ev.stop_propagation()
                    >
                        <h2 class="confirm-question" id=title_id>{question}</h2>
                        {warning.map(|w| view! { <p class="confirm-warning">{w}</p> })}
                        <div class="confirm-actions">
                            <button type="button" class="btn btn-secondary confirm-cancel" node_ref=cancel_ref
                                on:click=move |_| close()
                            >"Cancel"</button>
                            <button type="button" class="btn btn-danger confirm-yes"
                                on:click=move |_| {
                                    open.set(false);
                                    on_confirm.run(());
                                }
                            >{confirm}</button>
                        </div>
                    </div>
                </div>
            }
        })
    };
    view! {
        <button type="button" class=format!("btn {class}") aria-haspopup="dialog" node_ref=trigger_ref
            disabled=move || disabled.get()
            on:click=move |_| open.set(true)
        >{label}</button>
        {dialog}
    }
}

fn next_id() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
