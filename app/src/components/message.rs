use leptos::prelude::*;

use crate::views::OneTimePassword;

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

/// A generated password, shown once to whoever hands it over.
#[component]
pub fn OneTimeNotice(otp: OneTimePassword) -> impl IntoView {
    view! {
        <div class="card notice otp" role="status">
            <b>"Done. "</b>
            "One-time password for " <b>{otp.username}</b> ": "
            <code class="otp-value">{otp.password}</code>
            <span class="muted">" — hand it over now; it is not shown again."</span>
        </div>
    }
}
