use leptos::prelude::*;

/// Something more for those who want it, folded away under `summary`.
#[component]
pub fn Disclosure(
    #[prop(into)] summary: String,
    #[prop(optional)] open: bool,
    #[prop(optional, into)] class: String,
    children: Children,
) -> impl IntoView {
    view! {
        <details class=format!("disclosure {class}") open=open>
            <summary>{summary}</summary>
            <div class="disclosure-body">{children()}</div>
        </details>
    }
}
