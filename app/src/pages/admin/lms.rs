//! `/admin/lms`: the LMS platforms (LTI 1.3) launches may come from, and what to enter in
//! the LMS for SliceHub.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::lms::{lms_platforms, LmsOverview, RegisterLms, RemoveLms};
use crate::api::message;
use crate::components::confirm::ConfirmButton;
use crate::components::form::reset_on_success;
use crate::components::message::{ErrorMessage, SuccessMessage};
use crate::pages::LoadError;

#[component]
pub fn LmsPage() -> impl IntoView {
    let register = ServerAction::<RegisterLms>::new();
    let remove = ServerAction::<RemoveLms>::new();
    let overview = Resource::new(move || (register.version().get(), remove.version().get()), |_| lms_platforms());
    let failure = move || {
        [register.value().get().and_then(Result::err), remove.value().get().and_then(Result::err)]
            .into_iter()
            .flatten()
            .next()
            .map(|e| message(&e))
    };
    let form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(form, move || matches!(register.value().get(), Some(Ok(()))));
    view! {
        <Title text="LMS"/>
        <h1 class="page-title">"LMS"</h1>
        <p class="muted">"Students and instructors launch SliceHub from their course in Canvas, Moodle, Blackboard, D2L or Sakai (LTI 1.3). Their LMS role counts for that course only."</p>
        <div aria-live="polite">
            {move || matches!(register.value().get(), Some(Ok(()))).then(|| view! { <SuccessMessage>"Registered. Launches from it work now."</SuccessMessage> })}
        </div>
        {move || failure().map(|e| view! { <ErrorMessage text=e/> })}
        <div class="grid-sidebar">
            <Transition fallback=|| view! { <section class="card"><p class="muted">"Loading…"</p></section> }>
                {move || Suspend::new(async move {
                    match overview.await {
                        Ok(overview) => view! { <Platforms overview remove/> }.into_any(),
                        Err(error) => view! { <section class="card"><LoadError error/></section> }.into_any(),
                    }
                })}
            </Transition>
            <section class="card">
                <h2 class="card-title">"Register an LMS"</h2>
                <ActionForm action=register node_ref=form attr:class="form register-lms">
                    <label>"Name"<input name="name" required pattern="[A-Za-z0-9._\\-]{1,40}" placeholder="e.g. canvas"/></label>
                    <label>"Issuer"<input name="issuer" type="url" required placeholder="https://canvas.instructure.com"/></label>
                    <label>"Client id"<input name="client_id" required/></label>
                    <label>"Deployment ids (separated by commas)"<input name="deployment_ids" required/></label>
                    <label>"Authentication URL"<input name="auth_login_url" type="url" required/></label>
                    <label>"Access token URL"<input name="auth_token_url" type="url" required/></label>
                    <label>"Keys (JWKS) URL"<input name="jwks_url" type="url" required/></label>
                    <button class="btn btn-primary" type="submit" disabled=move || register.pending().get()>"Register"</button>
                </ActionForm>
            </section>
        </div>
    }
}

#[component]
fn Platforms(overview: LmsOverview, remove: ServerAction<RemoveLms>) -> impl IntoView {
    let rows = overview
        .platforms
        .iter()
        .map(|p| {
            let name = p.name.clone();
            view! {
                <tr data-platform=p.name.clone()>
                    <td><b>{p.name.clone()}</b></td>
                    <td class="wrap">{p.issuer.clone()}<div class="muted small">{format!("client {} · deployments {}", p.client_id, p.deployment_ids)}</div></td>
                    <td class="actions">
                        <ConfirmButton label="Remove" class="btn-ghost-dark btn-small"
                            question=format!("Remove {name}?")
                            warning="Launches from it stop. Courses and accounts it made stay.".to_string()
                            confirm="Remove"
                            on_confirm=Callback::new(move |()| { remove.dispatch(RemoveLms { name: name.clone() }); })/>
                    </td>
                </tr>
            }
        })
        .collect_view();
    let empty = overview.platforms.is_empty();
    view! {
        <div class="stack">
            <section class="card">
                <h2 class="card-title">"Registered platforms"</h2>
                {if empty {
                    view! { <p class="muted">"None yet."</p> }.into_any()
                } else {
                    view! {
                        <div class="table-wrap">
                            <table class="table lms-platforms table-stack">
                                <thead><tr><th>"Name"</th><th>"Issuer"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                    }.into_any()
                }}
            </section>
            <section class="card tool-urls">
                <h2 class="card-title">"Enter in the LMS"</h2>
                <dl class="facts">
                    <dt>"OpenID Connect login URL"</dt><dd><code>{overview.login_url}</code></dd>
                    <dt>"Redirect (launch) URL"</dt><dd><code>{overview.launch_url}</code></dd>
                    <dt>"Public keys (JWKS) URL"</dt><dd><code>{overview.jwks_url}</code></dd>
                </dl>
                <p class="muted small">"Ask for the Names and Role Provisioning Services scope, so instructors can read their roster from the LMS."</p>
            </section>
        </div>
    }
}
