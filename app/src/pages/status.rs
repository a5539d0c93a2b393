use leptos::prelude::*;
use leptos_meta::Title;

use super::{instance_resource, LoadError};
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
