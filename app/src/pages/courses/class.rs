//! The class dashboard for a course's instructors and admins: every student's running and
//! waiting sessions (stop one with a reason the student sees), the queue, and each
//! student's slice-hours this period with a CSV download.

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
use crate::views::{ClassPageView, ClassSessionRow, StudentUsageRow};

#[component]
pub fn ClassPage() -> impl IntoView {
    let params = use_params_map();
    let code = move || params.read().get("code").unwrap_or_default();
    let stop = ServerAction::<StopSession>::new();
    // Follows the class live: the page reloads its data every 10 s and after each stop.
    let tick = RwSignal::new(0u32);
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(move || tick.update(|n| *n += 1), std::time::Duration::from_secs(10)) {
            on_cleanup(move || handle.clear());
        }
    });
    let page = Resource::new(
        move || (code(), stop.version().get(), tick.get()),
        |(code, ..)| class_dashboard(code),
    );
    view! {
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(view) => view! { <ClassView page=view stop/> }.into_any(),
                    Err(error) => view! { <Title text="Class"/><LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn ClassView(page: ClassPageView, stop: ServerAction<StopSession>) -> impl IntoView {
    let running = page.sessions.iter().filter(|s| s.queue_position.is_none()).count();
    let waiting = page.sessions.len() - running;
    let feedback = move || match stop.value().get() {
        Some(Ok(())) => Some(view! { <SuccessMessage>"Session stopped. The student sees your reason on their sessions page."</SuccessMessage> }.into_any()),
        Some(Err(e)) => Some(view! { <ErrorMessage text=message(&e)/> }.into_any()),
        None => None,
    };
    view! {
        <Title text=format!("Class · {}", page.code)/>
        <p class="eyebrow"><a href=format!("/courses/{}", page.code)>{page.code.clone()}</a></p>
        <h1 class="page-title">"Class dashboard"</h1>
        <p class="muted">{format!("{} · {} running, {} waiting. Updates every 10 seconds.", page.title, running, waiting)}</p>
        <div aria-live="polite">{feedback}</div>
        <div class="stack">
        <section class="card">
            <h2 class="card-title">"Sessions now"</h2>
            <ClassSessions sessions=page.sessions.clone() stop/>
        </section>
        <section class="card">
            <div class="card-head">
                <h2 class="card-title">{format!("Slice-hours {}", page.period)}</h2>
                <a class="btn btn-secondary btn-small usage-csv" href=format!("/courses/{}/usage.csv", page.code) download="">"Download CSV"</a>
            </div>
            <p class="hint">
                "One slice-hour is one compute slice for one hour (a 3g slice for an hour uses 3). The period began "
                <LocalTime ms=page.period_start_ms utc=utc_text(page.period_start_ms) with_day=true/>
                " and ends "
                <LocalTime ms=page.period_end_ms utc=utc_text(page.period_end_ms) with_day=true/>
                "."
            </p>
            <StudentUsage students=page.students.clone()/>
        </section>
        <section class="card">
            <div class="card-head">
                <h2 class="card-title">"Booked lab sessions"</h2>
                <a class="btn btn-secondary btn-small" href=format!("/courses/{}/bookings", page.code)>"Book or cancel"</a>
            </div>
            <super::bookings::BookingList code=page.code.clone() bookings=page.bookings.clone()/>
        </section>
        </div>
    }
}

#[component]
fn ClassSessions(sessions: Vec<ClassSessionRow>, stop: ServerAction<StopSession>) -> impl IntoView {
    if sessions.is_empty() {
        return view! { <p class="empty-state muted">"Nobody in the class has a session running or waiting."</p> }.into_any();
    }
    let rows = sessions
        .into_iter()
        .map(|s| {
            let (word, kind) = badge_of(&s.state, &s.kind, None);
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
            let id = s.id.clone();
            view! {
                <tr data-session=s.id.clone() data-student=s.username.clone()>
                    <td><b>{s.display_name.clone()}</b><br/><span class="muted small">{s.username.clone()}</span></td>
                    <td>{format!("{} {}", s.profile, s.kind)}</td>
                    <td><Badge kind=kind text=status/></td>
                    <td>
                        {if s.ready_at_ms.is_some() { "since " } else { "asked " }}
                        <LocalTime ms=since utc=utc_text(since)/>
                    </td>
                    <td>{left}{s.idle.clone().map(|idle| {
                        let what = if s.kind == "job" { "no GPU activity since " } else { "idle since " };
                        view! {
                            <br/><span class="idle-note small">{what}
                                <LocalTime ms=idle.idle_since_ms utc=utc_text(idle.idle_since_ms)/>
                                {idle.stops.then(|| view! { ", stops " <LocalTime ms=idle.stops_at_ms utc=idle.stops_at.clone()/> })}
                            </span>
                        }
                    })}</td>
                    <td class="actions"><StopWithReason id stop/></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table class="table table-stack class-sessions">
                <thead><tr>
                    <th>"Student"</th><th>"Slice"</th><th>"State"</th><th>"Started"</th><th>"Time left"</th>
                    <th><span class="sr-only">"Actions"</span></th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
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
