//! Operations: every course's live sessions and those of the last week, filtered by
//! course, user, GPU and state; a live one can be stopped with a reason its student reads.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::message;
use crate::api::operations::operations_sessions;
use crate::api::sessions::StopSession;
use crate::components::badge::Badge;
use crate::components::message::{ErrorMessage, SuccessMessage};
use crate::components::stop_reason::StopWithReason;
use crate::components::time::{utc_text, LocalTime};
use crate::pages::sessions::words::badge_of;
use crate::pages::LoadError;
use crate::views::OperationsPageView;

#[component]
pub fn OperationsPage() -> impl IntoView {
    let query = use_query_map();
    let field = move |name: &str| query.read().get(name).unwrap_or_default();
    let stop = ServerAction::<StopSession>::new();
    let page = Resource::new(
        move || (field("course"), field("user"), field("gpu"), field("state"), stop.version().get()),
        |(course, user, gpu, state, _)| operations_sessions(course, user, gpu, state),
    );
    let feedback = move || match stop.value().get() {
        Some(Ok(())) => Some(view! { <SuccessMessage>"Session stopped. Its student sees your reason."</SuccessMessage> }.into_any()),
        Some(Err(e)) => Some(view! { <ErrorMessage text=message(&e)/> }.into_any()),
        None => None,
    };
    view! {
        <Title text="All sessions"/>
        <h1 class="page-title">"All sessions"</h1>
        <div aria-live="polite">{feedback}</div>
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(ops) => view! { <Operations ops stop/> }.into_any(),
                    Err(error) => view! { <LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn Operations(ops: OperationsPageView, stop: ServerAction<StopSession>) -> impl IntoView {
    let choice = |value: String, words: String, chosen: &str| {
        let selected = value == chosen;
        view! { <option value=value selected=selected>{words}</option> }
    };
    let courses = ops.courses.iter().map(|c| choice(c.clone(), c.clone(), &ops.course)).collect_view();
    let gpus = ops.gpus.iter().map(|(i, name)| choice(i.to_string(), name.clone(), &ops.gpu)).collect_view();
    let states = ops.states.iter().map(|(w, m)| choice(w.clone(), m.clone(), &ops.state)).collect_view();
    let rows = ops
        .sessions
        .iter()
        .map(|s| {
            let (word, kind) = badge_of(s.state, s.kind, None);
            let id = s.id.clone();
            view! {
                <tr data-session=s.id.clone() data-state=s.state.as_str()>
                    <td><b>{s.username.clone()}</b><br/><span class="muted small">{s.course.clone()}</span></td>
                    <td data-label="Slice">{format!("{} {}", s.profile, s.kind)}</td>
                    <td data-label="GPU">{s.gpu.clone().unwrap_or_else(|| "—".to_string())}</td>
                    <td><Badge kind=kind text=word/></td>
                    <td data-label="Asked">
                        <LocalTime ms=s.requested_at_ms utc=utc_text(s.requested_at_ms) with_day=true/>
                    </td>
                    <td class="ops-reason">{s.reason.clone()}</td>
                    <td class="actions">{s.live.then(|| view! { <StopWithReason id stop/> })}</td>
                </tr>
            }
        })
        .collect_view();
    let empty = ops.sessions.is_empty() && ops.problem.is_none();
    view! {
        <p class="muted">{format!("Live sessions of every course, and those that ended in the last {} days, newest first.", ops.recent_days)}</p>
        <form class="card form ops-form" method="get" action="/admin/sessions">
            <div class="field-grid report-fields">
                <div class="field">
                    <label for="ops-course">"Course"</label>
                    <select id="ops-course" name="course"><option value="">"All courses"</option>{courses}</select>
                </div>
                <div class="field">
                    <label for="ops-user">"User"</label>
                    <input id="ops-user" name="user" value=ops.user.clone() autocomplete="off"/>
                </div>
                <div class="field">
                    <label for="ops-gpu">"GPU"</label>
                    <select id="ops-gpu" name="gpu"><option value="">"All GPUs"</option>{gpus}</select>
                </div>
                <div class="field">
                    <label for="ops-state">"State"</label>
                    <select id="ops-state" name="state"><option value="">"Any"</option>{states}</select>
                </div>
            </div>
            <button class="btn btn-primary" type="submit">"Filter"</button>
        </form>
        {ops.problem.clone().map(|m| view! { <ErrorMessage text=m/> })}
        <section class="card">
            {if empty {
                view! { <p class="empty-state muted">"No session matches this filter."</p> }.into_any()
            } else {
                view! {
                    <div class="table-wrap">
                        <table class="table table-stack ops-sessions">
                            <thead><tr>
                                <th>"Who"</th><th>"Slice"</th><th>"GPU"</th><th>"State"</th><th>"Asked"</th><th>"Reason"</th>
                                <th><span class="sr-only">"Actions"</span></th>
                            </tr></thead>
                            <tbody>{rows}</tbody>
                        </table>
                    </div>
                }.into_any()
            }}
        </section>
    }
}
