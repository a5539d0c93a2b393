use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::auth::Login;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let error = move || match login.value().get() {
        Some(Err(e)) => Some(crate::api::message(&e)),
        _ => None,
    };
    view! {
        <Title text="Sign in"/>
        <section class="card auth-card">
            <h1>"Sign in"</h1>
            <p class="muted">"Use the account your course or administrator gave you."</p>
            <ActionForm action=login attr:class="form">
                <label>
                    "Username"
                    <input type="text" name="username" autocomplete="username" required autofocus/>
                </label>
                <label>
                    "Password"
                    <input type="password" name="password" autocomplete="current-password" required/>
                </label>
                {move || error().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
                <button class="btn btn-primary" type="submit" disabled=move || login.pending().get()>
                    {move || if login.pending().get() { "Signing in…" } else { "Sign in" }}
                </button>
            </ActionForm>
        </section>
    }
}
