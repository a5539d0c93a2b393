use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::auth::{is_local_path, Login};
use crate::api::sign_in::{problem_words, sign_in_options, SignInChoices};
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
    // A provider's sign-in that failed comes back here with `?problem=WORD`.
    let problem = move || query.with(|query| query.get("problem")).and_then(|w| problem_words(&w));
    let options = OnceResource::new(sign_in_options());
    let next_for_buttons = next.clone();
    let user = expect_context::<CurrentUser>().0;
    let form = move || {
        let next_for_buttons = next_for_buttons.clone();
        view! {
            <section class="card auth-card">
                <h1>"Sign in"</h1>
                {move || signed_out().then(|| view! { <p class="form-ok signed-out" role="status">"You are signed out."</p> })}
                {move || problem().map(|words| view! { <p class="form-error sign-in-problem" role="alert">{words}</p> })}
                <Suspense fallback=|| ()>
                    {move || {
                        let next = next_for_buttons.clone();
                        options.get().and_then(Result::ok).map(|options| view! { <ProviderButtons options next signed_out=signed_out()/> })
                    }}
                </Suspense>
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

/// A button per OpenID Connect provider, the form's own words, and after signing out the
/// way to sign out of each provider too.
#[component]
fn ProviderButtons(options: SignInChoices, next: String, signed_out: bool) -> impl IntoView {
    let next_query = if next.is_empty() {
        String::new()
    } else {
        format!("?next={}", percent_encoding::utf8_percent_encode(&next, percent_encoding::NON_ALPHANUMERIC))
    };
    let has_providers = !options.providers.is_empty();
    let buttons = options
        .providers
        .iter()
        .map(|p| {
            view! {
                <a class="btn btn-secondary sign-in-provider" rel="external" data-provider=p.name.clone()
                    href=format!("/login/oidc/{}{}", p.name, next_query)>{format!("Sign in with {}", p.label)}</a>
            }
        })
        .collect_view();
    let end_sessions = options
        .providers
        .iter()
        .map(|p| view! { <li><a rel="external" href=format!("/logout/oidc/{}", p.name)>{format!("Also sign out of {}", p.label)}</a></li> })
        .collect_view();
    let form_words = if options.directory {
        "Or use your campus username and password, or the account your course or administrator gave you."
    } else if has_providers {
        "Or use the account your course or administrator gave you."
    } else {
        "Use the account your course or administrator gave you."
    };
    let web_server = options.web_server;
    view! {
        {web_server.then(|| view! {
            <p class="notice web-server-sign-in">"This portal signs you in through your campus login page. If you see this form, you reached the portal past it: open the portal's usual address again."</p>
        })}
        {has_providers.then(|| view! { <div class="sign-in-providers">{buttons}</div> })}
        {(signed_out && has_providers).then(|| view! { <ul class="plain-list end-sessions">{end_sessions}</ul> })}
        <p class="muted">{form_words}</p>
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
