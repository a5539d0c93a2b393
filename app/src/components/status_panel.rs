use leptos::prelude::*;

use crate::components::time::LocalTime;
use crate::shell::Hydrated;
use crate::views::InstanceStatus;

/// The database, Docker and GPU checks with a button that runs them again.
#[component]
pub fn StatusPanel(status: InstanceStatus, on_recheck: Callback<()>) -> impl IntoView {
    let hydrated = use_context::<Hydrated>().map(|h| h.0);
    let ready = move || hydrated.map(|h| h.get()).unwrap_or(false);
    let overall = match status.status.as_str() {
        "ok" => "All systems ready",
        "degraded" => "Running with problems",
        _ => "Not working",
    };
    let rows = status
        .components
        .iter()
        .map(|c| {
            let state = if c.ok { "ok" } else { "down" };
            view! {
                <li class=format!("check check-{state}")>
                    <span class="dot" aria-hidden="true"></span>
                    <span class="check-name">{c.name.clone()}</span>
                    <span class="check-summary">{c.summary.clone()}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class=format!("card status status-{}", status.status) aria-live="polite">
            <header class="status-head">
                <h2>{overall}</h2>
                <div class="status-actions">
                    <span class="muted checked-at">"Checked at " <LocalTime ms=status.checked_at_ms utc=status.checked_at.clone() seconds=true/></span>
                    <button
                        class="btn btn-secondary recheck"
                        disabled=move || !ready()
                        on:click=move |_| on_recheck.run(())
                    >
                        "Check again"
                    </button>
                </div>
            </header>
            <ul class="checks">{rows}</ul>
        </section>
    }
}
