use leptos::prelude::*;

/// Says that something worked; screen readers announce it.
#[component]
pub fn SuccessMessage(children: Children) -> impl IntoView {
    view! { <p class="form-ok" role="status">{children()}</p> }
}

/// Says what went wrong, at once.
#[component]
pub fn ErrorMessage(#[prop(into)] text: String) -> impl IntoView {
    view! { <p class="form-error" role="alert">{text}</p> }
}

/// A list with nothing in it yet: what that means and what to do.
#[component]
pub fn EmptyState(#[prop(into)] title: String, children: Children) -> impl IntoView {
    view! {
        <div class="empty-state">
            <p class="empty-title">{title}</p>
            <p class="muted">{children()}</p>
        </div>
    }
}
