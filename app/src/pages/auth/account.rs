use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::auth::ChangePassword;
use crate::api::sign_in::{my_sign_ins, AccountSignIns};
use crate::components::badge::Badge;
use crate::components::form::reset_on_success;
use crate::components::message::{ErrorMessage, SuccessMessage};
use crate::pages::auth::tokens::{Tokens, TokensCard};
use crate::pages::auth::RequireUser;

#[component]
pub fn AccountPage() -> impl IntoView {
    // Made here, not in `render` (which runs inside a suspended future): a resource made
    // there is disposed while the page still reads it.
    provide_context(SignIns(OnceResource::new(my_sign_ins())));
    provide_context(Tokens::new());
    view! {
        <Title text="Account"/>
        <RequireUser render=|me| {
            let change = ServerAction::<ChangePassword>::new();
            let changed = move || matches!(change.value().get(), Some(Ok(())));
            let form = NodeRef::<leptos::html::Form>::new();
            reset_on_success(form, changed);
            let (admin, teaches) = (me.is_admin, me.teaches_any());
            let outcome = move || match change.value().get() {
                Some(Ok(())) => Some(view! {
                    <SuccessMessage>"Password changed. You stay signed in here; other devices were signed out."</SuccessMessage>
                    <p class="next-step">"Next: " {next_step(admin, teaches)}</p>
                }.into_any()),
                Some(Err(e)) => Some(view! { <ErrorMessage text=crate::api::message(&e)/> }.into_any()),
                None => None,
            };
            let must_change = me.must_change_password;
            let sign_ins = expect_context::<SignIns>().0;
            let has_password = move || sign_ins.get().and_then(Result::ok).is_none_or(|s| s.has_password);
            let roles = if me.courses.is_empty() {
                view! { <p class="muted">"You are not in any course yet."</p> }.into_any()
            } else {
                let items = me.courses
                    .iter()
                    .map(|c| view! {
                        <li><a href=format!("/courses/{}", c.code)>{c.code.clone()}</a>" — "{c.title.clone()}" "<Badge kind=c.role.to_string() text=c.role.to_string()/></li>
                    })
                    .collect_view();
                view! { <ul class="plain-list">{items}</ul> }.into_any()
            };
            view! {
                <h1 class="page-title">{me.display_name.clone()}</h1>
                <p class="muted">
                    "Signed in as " <b>{me.username.clone()}</b>
                    {me.is_admin.then(|| view! { " · " <Badge kind="admin" text="admin"/> })}
                </p>
                {move || (must_change && !changed()).then(|| view! {
                    <div class="card notice must-change" role="alert">
                        <b>"Choose a new password."</b>
                        " You signed in with a one-time password; the rest of SliceHub opens once you have set your own."
                    </div>
                })}
                <div class="grid-2">
                    <section class="card">
                        <h2 class="card-title">"Courses"</h2>
                        {roles}
                    </section>
                    <Suspense fallback=|| ()>
                        {move || sign_ins.get().and_then(Result::ok).map(|s| view! { <SignInsCard sign_ins=s/> })}
                    </Suspense>
                    <section class="card" hidden=move || !has_password()>
                        <h2 class="card-title">"Change password"</h2>
                        <ActionForm action=change node_ref=form attr:class="form">
                            <label>"Current password"
                                <input type="password" name="current" autocomplete="current-password" required/>
                            </label>
                            <label>"New password (at least 10 characters)"
                                <input type="password" name="new_password" autocomplete="new-password" minlength="10" required/>
                            </label>
                            <label>"New password again"
                                <input type="password" name="confirm" autocomplete="new-password" minlength="10" required/>
                            </label>
                            {outcome}
                            <button class="btn btn-primary" type="submit" disabled=move || change.pending().get()>"Change password"</button>
                        </ActionForm>
                    </section>
                    {(!must_change).then(|| view! { <TokensCard/> })}
                </div>
            }
            .into_any()
        }/>
    }
}

#[derive(Clone, Copy)]
struct SignIns(OnceResource<Result<AccountSignIns, crate::error::AppError>>);

/// How this account signs in, and the providers it may attach (signing in to both in one
/// flow: the provider's sign-in starts from here, while signed in).
#[component]
fn SignInsCard(sign_ins: AccountSignIns) -> impl IntoView {
    let mut ways: Vec<String> = sign_ins.attached.iter().map(|a| a.source.clone()).collect();
    if sign_ins.has_password {
        ways.insert(0, "a password".to_string());
    }
    let attach = sign_ins
        .attachable
        .iter()
        .map(|p| view! {
            <form method="post" action=format!("/login/oidc/{}/link", p.name) class="inline-form">
                <button class="btn btn-secondary btn-small attach-provider" data-provider=p.name.clone() type="submit">
                    {format!("Attach {}", p.label)}
                </button>
            </form>
        })
        .collect_view();
    let none_to_attach = sign_ins.attachable.is_empty();
    (!ways.is_empty() || !none_to_attach).then(|| view! {
        <section class="card sign-ins">
            <h2 class="card-title">"Sign-in"</h2>
            <p>"You sign in with " <b>{ways.join(" or ")}</b> "."</p>
            {(!sign_ins.has_password).then(|| view! {
                <p class="muted">"This account has no password here. An administrator can give it one."</p>
            })}
            {(!none_to_attach).then(|| view! {
                <p class="muted">"Attach your campus sign-in to this account: you are sent to sign in there, then back here."</p>
                <div class="attach-providers">{attach}</div>
            })}
        </section>
    })
}

/// What to do after setting a password, by role: an admin looks at the GPUs and makes a
/// course, an instructor opens theirs, a student starts a notebook.
fn next_step(admin: bool, teaches: bool) -> AnyView {
    if admin {
        view! { <a href="/gpus">"Check the GPUs"</a> " and " <a href="/courses">"create a course"</a> "." }.into_any()
    } else if teaches {
        view! { <a href="/courses">"Open your course"</a> "." }.into_any()
    } else {
        view! { <a href="/sessions">"Start a notebook on the Sessions page"</a> "." }.into_any()
    }
}
