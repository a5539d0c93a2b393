//! The class dashboard for a course's instructors and admins: every student's running and
//! waiting sessions (stop one with a reason the student sees), the queue, and each
//! student's slice-hours this period with a CSV download.

use std::time::Duration;

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::api::class::class_dashboard;
use crate::api::message;
use crate::api::sessions::StopSession;
use crate::components::badge::Badge;
use crate::components::message::{ErrorMessage, SuccessMessage};
use crate::components::stop_reason::StopWithReason;
use crate::components::time::{utc_text, EtaText, LocalTime, TimeLeft};
use crate::pages::sessions::words::badge_of;
use crate::pages::{count, LoadError};
use crate::views::{ClassPageView, ClassSessionRow, FailedStartRow, SessionKind, StudentUsageRow};

/// What the dashboard says after a stop, naming the student: done, or why not.
type Notice = Option<Result<String, String>>;

#[component]
pub fn ClassPage() -> impl IntoView {
    let params = use_params_map();
    let code = move || params.read().get("code").unwrap_or_default();
    // Read with the page, and again only for another course. From then on the dashboard
    // reads the class by itself (every 10 s and after each stop) into its own signal, so
    // each session's row stays the same element for as long as the session lives: an
    // open stop form and the reason typed into it stay with their session, never with
    // whichever row takes that place in the table.
    let page = Resource::new(move || code(), |code| class_dashboard(code));
    view! {
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(view) => view! { <ClassView page=view/> }.into_any(),
                    Err(error) => view! { <Title text="Class"/><LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn ClassView(page: ClassPageView) -> impl IntoView {
    let code = page.code.clone();
    let title = page.title.clone();
    let data = RwSignal::new(page);
    let notice = RwSignal::new(None::<Result<String, String>>);
    let reload_failed = RwSignal::new(None::<String>);
    // Each read is numbered; an answer that comes after a newer read was asked for is
    // dropped, so an old answer never overwrites a newer one.
    let asked = StoredValue::new(0u64);
    let reload = {
        let code = code.clone();
        Callback::new(move |()| {
            let code = code.clone();
            let n = asked.get_value() + 1;
            asked.set_value(n);
            leptos::task::spawn_local(async move {
                let answer = class_dashboard(code).await;
                if asked.try_get_value() != Some(n) {
                    return;
                }
                match answer {
                    Ok(fresh) => {
                        data.try_set(fresh);
                        reload_failed.try_set(None);
                    }
                    Err(e) => {
                        reload_failed.try_set(Some(message(&e)));
                    }
                }
            });
        })
    };
    // Follows the class live (only in the browser: effects do not run on the server).
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(move || reload.run(()), Duration::from_secs(10)) {
            on_cleanup(move || handle.clear());
        }
    });
    let sessions = Memo::new(move |_| data.with(|p| p.sessions.clone()));
    let students = Memo::new(move |_| data.with(|p| p.students.clone()));
    let bookings = Memo::new(move |_| data.with(|p| p.bookings.clone()));
    let failed_starts = Memo::new(move |_| data.with(|p| p.failed_starts.clone()));
    let period = Memo::new(move |_| data.with(|p| (p.period.clone(), p.period_start_ms, p.period_end_ms)));
    let summary = move || {
        sessions.with(|list| {
            let running = list.iter().filter(|s| s.queue_position.is_none()).count();
            format!(
                "{} · {} running, {} waiting. Updates every 10 seconds.",
                title,
                running,
                list.len() - running
            )
        })
    };
    let feedback = move || {
        notice.get().map(|n| match n {
            Ok(text) => view! { <SuccessMessage>{text}</SuccessMessage> }.into_any(),
            Err(text) => view! { <ErrorMessage text/> }.into_any(),
        })
    };
    let stale = move || {
        reload_failed
            .get()
            .map(|why| view! { <p class="muted small reload-failed">{format!("Could not update just now ({why}); trying again in 10 seconds.")}</p> })
    };
    let usage_csv = format!("/courses/{code}/usage.csv");
    let bookings_href = format!("/courses/{code}/bookings");
    let booking_code = code.clone();
    view! {
        <Title text=format!("Class · {code}")/>
        <p class="eyebrow"><a href=format!("/courses/{code}")>{code.clone()}</a></p>
        <h1 class="page-title">"Class dashboard"</h1>
        <p class="muted">{summary}</p>
        {stale}
        <div aria-live="polite">{feedback}</div>
        <div class="stack">
        <section class="card">
            <h2 class="card-title">"Sessions now"</h2>
            <ClassSessions sessions notice reload/>
        </section>
        {move || {
            let failed = failed_starts.get();
            (!failed.is_empty()).then(|| view! { <FailedStarts failed/> })
        }}
        <section class="card">
            <div class="card-head">
                <h2 class="card-title">{move || format!("Slice-hours {}", period.with(|p| p.0.clone()))}</h2>
                <a class="btn btn-secondary btn-small usage-csv" href=usage_csv download="">"Download CSV"</a>
            </div>
            <p class="hint">
                {move || {
                    let (_, start, end) = period.get();
                    view! {
                        "One slice-hour is one compute slice for one hour (a 3g slice for an hour uses 3). The period began "
                        <LocalTime ms=start utc=utc_text(start) with_day=true/>
                        " and ends "
                        <LocalTime ms=end utc=utc_text(end) with_day=true/>
                        "."
                    }
                }}
            </p>
            {move || view! { <StudentUsage students=students.get()/> }}
        </section>
        <section class="card">
            <div class="card-head">
                <h2 class="card-title">"Booked lab sessions"</h2>
                <a class="btn btn-secondary btn-small" href=bookings_href>"Book or cancel"</a>
            </div>
            {move || view! { <super::bookings::BookingList code=booking_code.clone() bookings=bookings.get()/> }}
        </section>
        </div>
    }
}

/// The sessions table: one row per session, keyed by the session's id.
#[component]
fn ClassSessions(sessions: Memo<Vec<ClassSessionRow>>, notice: RwSignal<Notice>, reload: Callback<()>) -> impl IntoView {
    view! {
        <Show
            when=move || sessions.with(|list| !list.is_empty())
            fallback=|| view! { <p class="empty-state muted">"Nobody in the class has a session running or waiting."</p> }
        >
            <div class="table-wrap">
                <table class="table table-stack class-sessions">
                    <thead><tr>
                        <th>"Student"</th><th>"Slice"</th><th>"State"</th><th>"Started"</th><th>"Time left"</th>
                        <th><span class="sr-only">"Actions"</span></th>
                    </tr></thead>
                    <tbody>
                        <For
                            each=move || sessions.get()
                            key=|s: &ClassSessionRow| s.id.clone()
                            children=move |s: ClassSessionRow| view! { <SessionRow initial=s sessions notice reload/> }
                        />
                    </tbody>
                </table>
            </div>
        </Show>
    }
}

/// One session's row. It is made once per session id and lives as long as the session is
/// listed: its cells follow each new read, while its stop form (whether it is open, the
/// reason typed, the stop it sends) belongs to this session alone.
#[component]
fn SessionRow(
    initial: ClassSessionRow,
    sessions: Memo<Vec<ClassSessionRow>>,
    notice: RwSignal<Notice>,
    reload: Callback<()>,
) -> impl IntoView {
    let id = initial.id.clone();
    let username = initial.username.clone();
    let name = initial.display_name.clone();
    // This session as last read (kept while the list drops it, until the row goes).
    let row = {
        let id = id.clone();
        Memo::new(move |last: Option<&ClassSessionRow>| {
            sessions
                .with(|list| list.iter().find(|s| s.id == id).cloned())
                .or_else(|| last.cloned())
                .unwrap_or_else(|| initial.clone())
        })
    };
    // This row's own stop: its answer is about this session only.
    let stop = ServerAction::<StopSession>::new();
    Effect::new({
        let name = name.clone();
        move |_| match stop.value().get() {
            Some(Ok(())) => {
                notice.set(Some(Ok(format!(
                    "Session stopped for {name}. They see your reason on their sessions page."
                ))));
                reload.run(());
            }
            Some(Err(e)) => {
                notice.set(Some(Err(format!("{name}'s session was not stopped: {}", message(&e)))));
                reload.run(());
            }
            None => {}
        }
    });
    let session_attr = id.clone();
    view! {
        <tr data-session=session_attr data-student=username>
            {move || session_cells(row.get())}
            <td class="actions"><StopWithReason id stop student=name errors_here=true/></td>
        </tr>
    }
}

/// The cells of a session's row that change as it waits, starts and runs.
fn session_cells(s: ClassSessionRow) -> impl IntoView {
    let (word, kind) = badge_of(s.state, s.kind, None);
    let status = match s.queue_position {
        Some(n) => format!("{word} · {} in the {} queue", ordinal(n), s.profile),
        None => word.to_string(),
    };
    let since = s.ready_at_ms.unwrap_or(s.requested_at_ms);
    let left = match (s.ends_at_ms.zip(s.time_left.clone()), s.eta.clone()) {
        (Some((end, initial)), _) => Some(view! { <TimeLeft deadline_ms=end initial/> }.into_any()),
        (None, Some(eta)) => Some(view! { "starts " <EtaText eta/> }.into_any()),
        _ => None,
    };
    let job = s.kind == SessionKind::Job;
    let idle = s.idle.clone().map(|idle| {
        let what = if job { "no GPU activity since " } else { "idle since " };
        view! {
            <br/><span class="idle-note small">{what}
                <LocalTime ms=idle.idle_since_ms utc=utc_text(idle.idle_since_ms)/>
                {idle.stops.then(|| view! { ", stops " <LocalTime ms=idle.stops_at_ms utc=idle.stops_at.clone()/> })}
            </span>
        }
    });
    view! {
        <td><b>{s.display_name.clone()}</b><br/><span class="muted small">{s.username.clone()}</span></td>
        <td>{format!("{} {}", s.profile, s.kind)}</td>
        <td><Badge kind=kind text=status/></td>
        <td>
            {if s.ready_at_ms.is_some() { "since " } else { "asked " }}
            <LocalTime ms=since utc=utc_text(since)/>
        </td>
        <td>{left}{idle}</td>
    }
}

/// Starts that failed in the last day, with the words their students read: what an
/// instructor must see to fix the course (an image the server lacks, a size it cannot make).
#[component]
fn FailedStarts(failed: Vec<FailedStartRow>) -> impl IntoView {
    let rows = failed
        .into_iter()
        .map(|f| {
            view! {
                <tr data-session=f.id.clone()>
                    <td><b>{f.display_name.clone()}</b><br/><span class="muted small">{f.username.clone()}</span></td>
                    <td data-label="When"><LocalTime ms=f.at_ms utc=utc_text(f.at_ms)/></td>
                    <td data-label="Asked for">{format!("{} · {}", f.profile, f.image)}</td>
                    <td class="failed-reason" data-label="Why">{f.reason.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card failed-starts">
            <h2 class="card-title">"Failed starts (last 24 hours)"</h2>
            <div class="table-wrap">
                <table class="table table-stack">
                    <thead><tr><th>"Student"</th><th>"When"</th><th>"Asked for"</th><th>"Why"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </section>
    }
}

#[component]
fn StudentUsage(students: Vec<StudentUsageRow>) -> impl IntoView {
    if students.is_empty() {
        return view! { <p class="empty-state muted">"The course has no students yet. Import a roster on the course page."</p> }.into_any();
    }
    let rows = students
        .into_iter()
        .map(|s| {
            let (budget, left, out) = match &s.budget {
                Some(b) => (b.total.clone(), b.left.clone(), b.exhausted),
                None => ("no quota".to_string(), String::new(), false),
            };
            let running = if s.running_slices == 0 {
                String::new()
            } else {
                count(s.running_slices.max(0) as usize, "slice running", "slices running")
            };
            view! {
                <tr data-student=s.username.clone()>
                    <td><b>{s.display_name.clone()}</b><br/><span class="muted small">{s.username.clone()}</span></td>
                    <td class="used" data-label="Used">{s.used.clone()}</td>
                    <td data-label="Budget">{budget}</td>
                    <td class:budget-out=out data-label="Left">{left}</td>
                    <td class="muted">{running}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table class="table table-stack class-usage">
                <thead><tr><th>"Student"</th><th>"Used"</th><th>"Budget"</th><th>"Left"</th><th>"Now"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}
