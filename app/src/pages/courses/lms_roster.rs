//! The course page's LMS card: which LMS courses this course is, and "Sync roster", which
//! reads the LMS's roster now (adds and drops students; a dropped student's running
//! sessions go on, and the instructor sees whose).

use leptos::prelude::*;

use crate::api::lms::{course_lms, SyncLmsRoster};
use crate::api::message;
use crate::components::message::{ErrorMessage, SuccessMessage};
use crate::components::time::LocalTime;

#[component]
pub fn LmsRosterCard(code: String, sync: ServerAction<SyncLmsRoster>) -> impl IntoView {
    let links = OnceResource::new(course_lms(code.clone()));
    let outcome = move || match sync.value().get() {
        Some(Ok(done)) => {
            let words = format!(
                "Roster read: {} added, {} dropped.",
                done.added.len(),
                done.dropped.len()
            );
            Some(view! {
                <SuccessMessage>{words}</SuccessMessage>
                {(!done.dropped.is_empty()).then(|| view! { <p class="small dropped">{format!("Dropped: {}.", done.dropped.join(", "))}</p> })}
                {(!done.dropped_running.is_empty()).then(|| view! {
                    <p class="small notice dropped-running">{format!(
                        "Still running sessions: {}. They go on until they end or you stop them on the class page; new sessions are refused.",
                        done.dropped_running.join(", ")
                    )}</p>
                })}
            }.into_any())
        }
        Some(Err(e)) => Some(view! { <ErrorMessage text=message(&e)/> }.into_any()),
        None => None,
    };
    view! {
        <Suspense fallback=|| ()>
            {move || {
                let code = code.clone();
                links.get().and_then(Result::ok).filter(|l| !l.links.is_empty()).map(|l| view! {
                    <section class="card lms-roster">
                        <h2 class="card-title">"LMS"</h2>
                        <p class="small">{format!("Linked to a course in {}.", l.links.join(", "))}</p>
                        {l.last_read_ms.map(|ms| view! { <p class="muted small">"Roster last read " <LocalTime ms utc=crate::components::time::utc_text(ms)/> "."</p> })}
                        {l.has_roster.then(|| view! {
                            <button class="btn btn-secondary btn-small sync-roster" type="button"
                                disabled=move || sync.pending().get()
                                on:click=move |_| { sync.dispatch(SyncLmsRoster { code: code.clone() }); }>
                                {move || if sync.pending().get() { "Reading the roster…" } else { "Sync roster" }}
                            </button>
                        })}
                        <div aria-live="polite">{outcome}</div>
                    </section>
                })
            }}
        </Suspense>
    }
}
