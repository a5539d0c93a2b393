//! The student's dashboard: start a notebook or a training job on a slice, follow it as
//! it starts, read a job's output, stop; past sessions folded into a paged history.

mod activity;
mod arrival;
mod card;
mod idle;
mod launch;
mod live;
pub(crate) mod words;

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::sessions::{
    launch_options, my_sessions, session_history, KeepSessionRunning, StartSession, StopSession,
};
use crate::components::message::EmptyState;
use crate::pages::LoadError;
use crate::views::{LaunchCourse, SessionState, SessionView};
use card::{HistoryRow, SessionCard};
use launch::LaunchCard;

#[component]
pub fn SessionsPage() -> impl IntoView {
    // Bumped when events were missed or a session ended (server-sent), and every 20 s
    // while one waits; other events bring the list with them.
    let generation = RwSignal::new(0u32);
    let start = ServerAction::<StartSession>::new();
    let stop = ServerAction::<StopSession>::new();
    let keep = ServerAction::<KeepSessionRunning>::new();
    let changes = move || {
        (
            generation.get(),
            start.version().get(),
            stop.version().get() + keep.version().get(),
        )
    };
    // The list the last event brought, numbered; a read of the list remembers the number
    // it began after, so whichever of the two is newer is shown.
    let pushed = RwSignal::new(None::<(u32, Vec<SessionView>)>);
    let settled = RwSignal::new(0u32);
    let options = Resource::new(move || (changes(), settled.get()), |_| launch_options());
    let sessions = Resource::new(changes, move |_| {
        let after = pushed.with_untracked(|p| p.as_ref().map_or(0, |(n, _)| *n));
        async move { my_sessions().await.map(|list| (after, list)) }
    });
    let newest = move |read: Result<(u32, Vec<SessionView>), crate::error::AppError>| match (pushed.get(), read) {
        (Some((n, list)), Ok((after, _))) if n > after => Ok(list),
        // A read that failed shows nothing newer than what the events brought.
        (Some((_, list)), Err(_)) => Ok(list),
        (_, read) => read.map(|(_, list)| list),
    };
    let page = RwSignal::new(0u32);
    Effect::new(move |_| live::follow_session_events(live::Followed { generation, pushed, settled }));
    let arrivals = arrival::Arrivals::new();
    let idle_alerts = idle::IdleAlerts::new();
    let waiting = RwSignal::new(false);
    let running = RwSignal::new(false);
    // Sessions running or waiting, in any course (the portal counts them all against the
    // course's limit of sessions at once), followed by the launch cards. Set after
    // hydration, so the server's page and the browser's first drawing agree.
    let live_now = RwSignal::new(0usize);
    Effect::new(move |_| {
        if let Some(Ok(list)) = sessions.get().map(newest) {
            live_now.set(list.iter().filter(|s| s.live).count());
            arrivals.seen(&list);
            idle_alerts.seen(&list);
            waiting.set(
                list.iter()
                    .any(|s| matches!(s.state, SessionState::Requested | SessionState::Queued)),
            );
            running.set(list.iter().any(|s| s.state == SessionState::Ready));
        }
    });
    // A waiting card's place and estimate move as other people's sessions end, which
    // sends this page no event: read again every 20 s while something waits.
    Effect::new(move |_| {
        let tick = move || {
            if waiting.get_untracked() {
                generation.update(|n| *n += 1);
            }
        };
        if let Ok(handle) = set_interval_with_handle(tick, std::time::Duration::from_secs(20)) {
            on_cleanup(move || handle.clear());
        }
    });
    // A running session uses up slice-hours, which sends this page no event either: read
    // the launch options again every 60 s while one runs. Only the budget lines take the
    // new numbers, so a launch form being filled in is not drawn afresh.
    let budgets = RwSignal::new(None::<Vec<LaunchCourse>>);
    Effect::new(move |_| {
        // Every other read of the launch options is newer than the last tick's.
        changes();
        settled.get();
        budgets.set(None);
    });
    Effect::new(move |_| {
        let tick = move || {
            if running.get_untracked() {
                leptos::task::spawn_local(async move {
                    if let Ok(latest) = launch_options().await {
                        budgets.try_set(Some(latest));
                    }
                });
            }
        };
        if let Ok(handle) = set_interval_with_handle(tick, std::time::Duration::from_secs(60)) {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <Title text=move || match arrivals.started.get() {
            Some(text) => format!("{text} · My sessions"),
            None => "My sessions".to_string(),
        }/>
        <h1 class="page-title">"GPU sessions"</h1>
        <p class="muted">
            "Start JupyterLab or a training job on your own slice of a GPU. "
            "This page follows it as it starts."
        </p>
        <Transition fallback=|| view! { <div class="card skeleton">"Reading your sessions…"</div> }>
            {move || Suspend::new(async move {
                match newest(sessions.await) {
                    Ok(list) => {
                        // Only the newest: an older end was either told already or is
                        // followed by a newer session.
                        let ended = list.first().filter(|s| s.end_to_tell).cloned();
                        let live: Vec<SessionView> = list.into_iter().filter(|s| s.live).collect();
                        let heading = if live.iter().all(|s| matches!(s.state, SessionState::Requested | SessionState::Queued)) {
                            "Waiting for a slice"
                        } else if live.iter().any(|s| matches!(s.state, SessionState::Requested | SessionState::Queued)) {
                            "Running and waiting"
                        } else {
                            "Running now"
                        };
                        view! {
                            {ended.map(|e| view! { <card::EndedBanner ended=e/> })}
                            {(!live.is_empty()).then(|| view! {
                                <h2 class="section-title">{heading}</h2>
                                <div class="session-list live-sessions">
                                    {live.into_iter().map(|session| view! { <SessionCard session stop keep/> }).collect_view()}
                                </div>
                            })}
                        }
                        .into_any()
                    }
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
        <h2 class="section-title">"Start something"</h2>
        <Transition fallback=|| view! { <div class="card skeleton">"Reading your courses…"</div> }>
            {move || Suspend::new(async move {
                match options.await {
                    Ok(courses) if courses.is_empty() => view! {
                        <EmptyState title="Nothing to start yet">
                            "You are not in any course yet. Ask your instructor to add you to their roster."
                        </EmptyState>
                    }.into_any(),
                    Ok(courses) => courses
                        .into_iter()
                        .map(|course| {
                            view! { <LaunchCard course start live=live_now budgets/> }
                        })
                        .collect_view()
                        .into_any(),
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
        <History changes=Signal::derive(changes) page start/>
    }
}

/// Past sessions, newest first, a page at a time, read from the server page by page (so
/// every past session can be reached, however many there are).
#[component]
fn History(
    changes: Signal<(u32, usize, usize)>,
    page: RwSignal<u32>,
    start: ServerAction<StartSession>,
) -> impl IntoView {
    // Kept across the list's redraws, so a refused "Run again" is told in its own row.
    let again_from = RwSignal::new(None::<String>);
    let history = Resource::new(
        move || (page.get(), changes.get()),
        |(page, _)| session_history(page),
    );
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match history.await {
                    Ok(found) if found.pages == 0 => view! {
                        <h2 class="section-title">"Earlier sessions"</h2>
                        <EmptyState title="No sessions yet">
                            "Sessions you start appear here, and stay listed after they end."
                        </EmptyState>
                    }.into_any(),
                    Ok(found) => {
                        let pages = found.pages;
                        let current = found.page;
                        view! {
                            <h2 class="section-title">"Earlier sessions"</h2>
                            <section class="card history-card">
                                <ol class="history plain-list session-history">
                                    {found.sessions.into_iter().map(|session| view! { <HistoryRow session start again_from/> }).collect_view()}
                                </ol>
                                {(pages > 1).then(|| view! {
                                    <nav class="pager" aria-label="Earlier sessions pages">
                                        <button type="button" class="btn btn-secondary btn-small newer"
                                            disabled={current == 0}
                                            on:click=move |_| page.set(current.saturating_sub(1))
                                        >"Newer"</button>
                                        <span>{format!("Page {} of {pages}", current + 1)}</span>
                                        <button type="button" class="btn btn-secondary btn-small older"
                                            disabled={current + 1 >= pages}
                                            on:click=move |_| page.set((current + 1).min(pages - 1))
                                        >"Older"</button>
                                    </nav>
                                })}
                            </section>
                        }.into_any()
                    }
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}
