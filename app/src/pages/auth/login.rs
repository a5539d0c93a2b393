use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::auth::{is_local_path, Login};
use crate::components::layout::SignOutButton;
use crate::shell::CurrentUser;
use crate::views::Me;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let error = move || match login.value().get() {
        Some(Err(e)) => Some(crate::api::message(&e)),
        _ => None,
    };
    let query = use_query_map();
    // The page that sent the visitor here (`/login?next=/courses/CS-101/class`), to go
    // back to once signed in. Only a path on this site is passed on; the server checks
    // it again.
    let next = query
        .with_untracked(|query| query.get("next"))
        .filter(|path| is_local_path(path))
        .unwrap_or_default();
    // Signing out comes back here with `?signed_out=1`.
    let signed_out = move || query.with(|query| query.get("signed_out").is_some());
    let user = expect_context::<CurrentUser>().0;
    let form = move || {
        view! {
            <section class="card auth-card">
                <h1>"Sign in"</h1>
                {move || signed_out().then(|| view! { <p class="form-ok signed-out" role="status">"You are signed out."</p> })}
                <p class="muted">"Use the account your course or administrator gave you."</p>
                <ActionForm action=login attr:class="form">
                    <input type="hidden" name="next" value=next.clone()/>
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
    };
    view! {
        <Title text="Sign in"/>
        // Read from the layout's signed-in user, so the server and the browser agree.
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || {
                let form = form.clone();
                Suspend::new(async move {
                    match user.await {
                        Ok(Some(me)) => view! { <SignedIn me/> }.into_any(),
                        _ => form().into_any(),
                    }
                })
            }}
        </Transition>
    }
}

/// The sign-in page for someone already signed in: who, and the ways on.
#[component]
fn SignedIn(me: Me) -> impl IntoView {
    view! {
        <section class="card auth-card signed-in">
            <h1>"Signed in"</h1>
            <p>"You are signed in as " <b>{me.display_name}</b> " (" {me.username} ")."</p>
            // A div, not a p: the sign-out button is a form, which may not sit in a p.
            <div class="signed-in-actions">
                <a class="btn btn-primary" href="/">"Home"</a>
                <SignOutButton class="btn btn-secondary"/>
            </div>
        </section>
    }
}
