//! The student's dashboard: start a notebook or a training job on a slice, watch each
//! step as it happens, read a job's output, stop.

mod card;
mod launch;
mod live;

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::sessions::{launch_options, my_sessions, StartSession, StopSession};
use crate::pages::LoadError;
use card::SessionCard;
use launch::LaunchCard;

#[component]
pub fn SessionsPage() -> impl IntoView {
    // Bumped by every event of the caller's sessions (server-sent) and by their actions.
    let generation = RwSignal::new(0u32);
    let start = ServerAction::<StartSession>::new();
    let stop = ServerAction::<StopSession>::new();
    let changes = move || (generation.get(), start.version().get(), stop.version().get());
    let options = Resource::new(changes, |_| launch_options());
    let sessions = Resource::new(changes, |_| my_sessions());
    Effect::new(move |_| live::follow_session_events(generation));
    view! {
        <Title text="My sessions"/>
        <h1 class="page-title">"GPU sessions"</h1>
        <p class="muted">
            "Start JupyterLab or a training job on a MIG slice of a GPU. "
            "Each step appears here as it happens."
        </p>
        <Transition fallback=|| view! { <div class="card skeleton">"Reading your courses…"</div> }>
            {move || Suspend::new(async move {
                match options.await {
                    Ok(courses) if courses.is_empty() => view! {
                        <div class="card notice">
                            "You are not in any course yet, so there is nothing to start. "
                            "Ask your instructor to add you to their roster."
                        </div>
                    }.into_any(),
                    Ok(courses) => courses
                        .into_iter()
                        .map(|course| view! { <LaunchCard course start/> })
                        .collect_view()
                        .into_any(),
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
        <h2 class="section-title">"Your sessions"</h2>
        <Transition fallback=|| view! { <div class="card skeleton">"Reading your sessions…"</div> }>
            {move || Suspend::new(async move {
                match sessions.await {
                    Ok(list) if list.is_empty() => view! {
                        <p class="muted">"No sessions yet."</p>
                    }.into_any(),
                    Ok(list) => view! {
                        <div class="session-list">
                            {list.into_iter().map(|session| view! { <SessionCard session stop/> }).collect_view()}
                        </div>
                    }.into_any(),
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}
