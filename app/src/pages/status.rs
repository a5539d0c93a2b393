use leptos::prelude::*;
use leptos_meta::Title;

use super::{instance_resource, LoadError};
use crate::api::sign_in::sign_in_status;
use crate::components::badge::Badge;
use crate::components::status_panel::StatusPanel;

/// The checks in detail, for whoever runs the instance.
#[component]
pub fn StatusPage() -> impl IntoView {
    let (status, recheck) = instance_resource();
    view! {
        <Title text="Status"/>
        <h1 class="page-title">"Status"</h1>
        <p class="muted">"What this portal depends on, checked now. The same data is served as JSON at " <a href="/healthz">"/healthz"</a>"."</p>
        <Transition fallback=|| view! { <div class="card skeleton">"Checking…"</div> }>
            {move || Suspend::new(async move {
                match status.await {
                    Ok(status) => {
                        let version = status.version.clone();
                        view! {
                            <StatusPanel status on_recheck=recheck/>
                            <SignInHealth/>
                            <p class="muted small">"SliceHub " {version}</p>
                        }
                        .into_any()
                    }
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// Each way to sign in besides local passwords, and whether the portal reaches it now.
#[component]
fn SignInHealth() -> impl IntoView {
    let health = OnceResource::new(sign_in_status());
    view! {
        <Suspense fallback=|| ()>
            {move || health.get().and_then(Result::ok).filter(|h| !h.is_empty()).map(|providers| {
                let rows = providers
                    .into_iter()
                    .map(|p| view! {
                        <tr data-provider=p.name.clone()>
                            <td>{p.kind}</td>
                            <td><b>{p.name.clone()}</b></td>
                            <td>{if p.up {
                                view! { <Badge kind="ok" text="reachable"/> }.into_any()
                            } else {
                                view! { <Badge kind="off" text="down"/> }.into_any()
                            }}</td>
                            <td class="detail small">{p.detail}</td>
                        </tr>
                    })
                    .collect_view();
                view! {
                    <section class="card sign-in-health">
                        <h2 class="card-title">"Sign-in providers"</h2>
                        <div class="table-wrap" tabindex="0" role="region" aria-label="Sign-in providers">
                            <table class="table table-stack">
                                <thead><tr><th>"Kind"</th><th>"Name"</th><th>"State"</th><th>"Detail"</th></tr></thead>
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                    </section>
                }
            })}
        </Suspense>
    }
}
