//! A course's policy page for its instructors and admins: what students may run, the
//! slice-hour quota, each student's budget this period, and extra time for one student.

use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::api::message;
use crate::api::policy::{course_policy, GrantExtraHours, SaveCoursePolicy};
use crate::components::form::reset_on_success;
use crate::components::message::{ErrorMessage, SuccessMessage};
use crate::pages::LoadError;
use crate::views::{FieldProblemView, PolicyPageView, StudentBudgetRow};

use super::tick_list::{Tick, TickList};

/// The policy form's fields from top to bottom (each control's id is `policy-FIELD`).
const FIELD_ORDER: [&str; 18] = [
    "images",
    "profiles",
    "max_slices",
    "max_minutes",
    "max_sessions",
    "internet",
    "quota_hours",
    "period",
    "reset",
    "term",
    "time_zone",
    "booked_time",
    "idle_minutes",
    "idle_waiting_minutes",
    "idle_warning_minutes",
    "idle_gpu_percent",
    "job_idle_minutes",
    "job_idle",
];

const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

#[component]
pub fn PolicyPage() -> impl IntoView {
    let params = use_params_map();
    let code = move || params.read().get("code").unwrap_or_default();
    let save = ServerAction::<SaveCoursePolicy>::new();
    let grant = ServerAction::<GrantExtraHours>::new();
    // Reloaded after a save that went through or a grant, never after a refused save:
    // the form keeps what was typed next to the messages.
    let changes = RwSignal::new(0u32);
    Effect::new(move |_| {
        let saved = matches!(save.value().get(), Some(Ok(ref p)) if p.is_empty());
        let granted = matches!(grant.value().get(), Some(Ok(_)));
        if saved || granted {
            changes.update(|n| *n += 1);
        }
    });
    let page = Resource::new(move || (code(), changes.get()), |(code, _)| course_policy(code));
    view! {
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(view) => view! { <PolicyView page=view save grant/> }.into_any(),
                    Err(error) => view! { <Title text="Course policy"/><LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// The problem of `field` in the last refused save, if any.
fn problem_of(save: ServerAction<SaveCoursePolicy>, field: &'static str) -> impl Fn() -> Option<String> + Copy {
    move || {
        save.value()
            .get()
            .and_then(Result::ok)
            .and_then(|problems: Vec<FieldProblemView>| problems.into_iter().find(|p| p.field == field))
            .map(|p| p.message)
    }
}

/// A labelled field with its help and, after a refused save, its problem.
#[component]
fn Field(
    save: ServerAction<SaveCoursePolicy>,
    field: &'static str,
    label: &'static str,
    #[prop(optional)] help: String,
    children: Children,
) -> impl IntoView {
    let problem = problem_of(save, field);
    view! {
        <div class="field" class:field-bad=move || problem().is_some() data-field=field>
            <label for=format!("policy-{field}")>{label}</label>
            {children()}
            {(!help.is_empty()).then(|| view! { <p class="hint" id=format!("help-{field}")>{help.clone()}</p> })}
            {move || problem().map(|m| view! { <p class="field-error" id=format!("error-{field}") role="alert">{m}</p> })}
        </div>
    }
}

#[component]
fn PolicyView(
    page: PolicyPageView,
    save: ServerAction<SaveCoursePolicy>,
    grant: ServerAction<GrantExtraHours>,
) -> impl IntoView {
    let f = page.fields.clone();
    let readable = page.slice_activity_readable;
    let saved = move || matches!(save.value().get(), Some(Ok(ref p)) if p.is_empty());
    let refused = move || matches!(save.value().get(), Some(Ok(ref p)) if !p.is_empty());
    let refused_count = move || match save.value().get() {
        Some(Ok(problems)) if !problems.is_empty() => {
            let mut fields: Vec<String> = problems.into_iter().map(|p| p.field).collect();
            fields.sort();
            fields.dedup();
            Some(fields.len())
        }
        _ => None,
    };
    let save_error = move || save.value().get().and_then(Result::err).map(|e| message(&e));
    // After a refused save, the first field marked (in the form's order) takes the focus,
    // which also scrolls it into view. Only for a save answered while this form is shown,
    // not for an older one when the page is drawn again (after a grant, say).
    Effect::new(move |ran: Option<()>| {
        let answer = save.value().get();
        if ran.is_none() {
            return;
        }
        if let Some(Ok(problems)) = answer {
            let first = FIELD_ORDER
                .iter()
                .copied()
                .find(|field| problems.iter().any(|p| p.field == *field))
                .or_else(|| problems.first().map(|p| p.field.as_str()));
            if let Some(field) = first {
                focus_field(field);
            }
        }
    });
    // Only sizes these GPUs have (an A100 has no 5g or 6g), and whatever is saved now.
    let ceilings = page.ceilings;
    let offered: Vec<u32> = (1..=ceilings.compute_slices.clamp(1, 7))
        .filter(|n| {
            page.known_profiles.is_empty()
                || f.max_slices == n.to_string()
                || page.compute_slices.iter().any(|(_, slices)| *slices == i64::from(*n))
        })
        .collect();
    let slice_options = offered
        .into_iter()
        .map(|n| {
            let value = n.to_string();
            let selected = value == f.max_slices;
            view! { <option value=value selected=selected>{format!("{n}g — {n} compute slice{}", if n == 1 { "" } else { "s" })}</option> }
        })
        .collect_view();
    let day_options = WEEKDAYS
        .iter()
        .enumerate()
        .map(|(i, day)| {
            let value = i.to_string();
            let selected = value == f.reset_day;
            view! { <option value=value selected=selected>{*day}</option> }
        })
        .collect_view();
    let image_ticks: Vec<Tick> = page
        .offered_images
        .iter()
        .map(|c| Tick { value: c.image.clone(), warning: (!c.on_server).then_some("not on this server"), note: None })
        .collect();
    // The sizes these GPUs offer, and any the course allows that they no longer do.
    let mut sizes = page.known_profiles.clone();
    for allowed in f.profiles.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if !sizes.iter().any(|s| s == allowed) {
            sizes.push(allowed.to_string());
        }
    }
    let profile_ticks: Vec<Tick> = sizes
        .into_iter()
        .map(|p| {
            let gone = !page.known_profiles.contains(&p);
            let note = page.per_hour.iter().find(|(name, _)| *name == p).map(|(_, hours)| {
                format!("{hours} slice-hour{} per hour", if hours == "1" { "" } else { "s" })
            });
            Tick { value: p, warning: gone.then_some("not on these GPUs"), note }
        })
        .collect();
    let code = page.code.clone();
    view! {
        <Title text=format!("Policy · {}", page.code)/>
        <p class="eyebrow"><a href=format!("/courses/{}", page.code)>{page.code.clone()}</a></p>
        <h1 class="page-title">"Policy and quota"</h1>
        <p class="muted">{format!("What students of {} may run. Changes apply to sessions started from now on; running sessions keep the rules they started with, except that a used-up budget stops them.", page.title)}</p>
        // The outcome shows here and again by the button (the form is long); only the one by
        // the button is announced.
        {move || saved().then(|| view! { <p class="form-ok">"Policy saved. New sessions follow it."</p> })}
        {move || refused().then(|| view! { <p class="form-error">"Nothing was saved: fix the fields marked below."</p> })}
        {move || save_error().map(|e| view! { <p class="form-error">{e}</p> })}
        <ActionForm action=save attr:class="form policy-form">
            <input type="hidden" name="code" value=page.code.clone()/>
            <section class="card">
                <h2 class="card-title">"Sessions"</h2>
                {(ceilings.course_share_percent < 100).then(|| view! {
                    <p class="hint course-share">{format!("This course's sessions may hold or wait for at most {}% of these GPUs' compute slices at once; a start past that is refused until one ends.", ceilings.course_share_percent)}</p>
                })}
                <div class="field-grid">
                    <Field save field="images" label="Allowed images" help="The images this portal offers; students choose among those ticked. An administrator adds images to the list.".into()>
                        <TickList field="images" choices=image_ticks chosen=f.images.clone()/>
                    </Field>
                    <Field save field="profiles" label="Allowed slice sizes" help="The sizes these GPUs offer; none ticked allows every size up to the largest slice below.".into()>
                        <TickList field="profiles" choices=profile_ticks chosen=f.profiles.clone()/>
                    </Field>
                    <Field save field="max_slices" label="Largest slice per student" help=format!("Nobody takes a bigger slice, whatever the list above says. At most {}g on this portal.", ceilings.compute_slices)>
                        <select id="policy-max_slices" name="max_slices">{slice_options}</select>
                    </Field>
                    <Field save field="max_minutes" label="Longest session (minutes)" help=format!("At most {} on this portal.", ceilings.session_minutes)>
                        <input id="policy-max_minutes" name="max_minutes" inputmode="numeric" value=f.max_minutes.clone()/>
                    </Field>
                    <Field save field="max_sessions" label="Sessions at once per student" help=format!("Queued and running together; at most {} on this portal.", ceilings.sessions_per_student)>
                        <input id="policy-max_sessions" name="max_sessions" inputmode="numeric" value=f.max_sessions.clone()/>
                    </Field>
                    <Field save field="internet" label="Outbound internet" help="Off: containers reach only the portal (no pip install).".into()>
                        <select id="policy-internet" name="internet">
                            <option value="on" selected=f.internet == "on">"On"</option>
                            <option value="off" selected=f.internet == "off">"Off"</option>
                        </select>
                    </Field>
                </div>
            </section>
            <section class="card">
                <h2 class="card-title">"Slice-hour quota"</h2>
                <p class="hint">"A slice-hour is one compute slice for one hour: a 1g slice for an hour uses 1, a 3g slice for an hour uses 3. Each student gets the budget per period; a session stops when its student's budget is used up, and a launch is refused when too little is left."</p>
                <div class="field-grid">
                    <Field save field="quota_hours" label="Slice-hours per student" help="Empty or 0: no quota.".into()>
                        <input id="policy-quota_hours" name="quota_hours" inputmode="decimal" value=f.quota_hours.clone()/>
                    </Field>
                    <Field save field="period" label="Period">
                        <select id="policy-period" name="period">
                            <option value="week" selected=f.period == "week">"Every week"</option>
                            <option value="term" selected=f.period == "term">"The whole term"</option>
                        </select>
                    </Field>
                    <Field save field="reset" label="Weekly reset" help="Day and time in the course's time zone.".into()>
                        <div class="inline-fields">
                            <select id="policy-reset" name="reset_day" aria-label="Reset day">{day_options}</select>
                            <input type="time" name="reset_time" aria-label="Reset time" value=f.reset_time.clone()/>
                        </div>
                    </Field>
                    <Field save field="term" label="Term (first and last day)" help="Only for a term budget.".into()>
                        <div class="inline-fields">
                            <input id="policy-term" type="date" name="term_starts" aria-label="First day" value=f.term_starts.clone()/>
                            <input type="date" name="term_ends" aria-label="Last day" value=f.term_ends.clone()/>
                        </div>
                    </Field>
                    <Field save field="time_zone" label="Course time zone" help="An IANA name such as Europe/Berlin, America/New_York or UTC.".into()>
                        <input id="policy-time_zone" name="time_zone" value=f.time_zone.clone() autocomplete="off" spellcheck="false"/>
                    </Field>
                    <Field save field="booked_time" label="Booked lab sessions" help="Free: time inside the course's booked lab windows is not charged.".into()>
                        <select id="policy-booked_time" name="booked_time">
                            <option value="counts" selected=f.booked_time != "free">"Count against the budget"</option>
                            <option value="free" selected=f.booked_time == "free">"Are free"</option>
                        </select>
                    </Field>
                </div>
            </section>
            <section class="card">
                <h2 class="card-title">"Idle sessions"</h2>
                <p class="hint">"A notebook is active while its kernel or a terminal works, while its student saves or changes something through JupyterLab, or while its slice is busy above the GPU threshold. An open browser tab alone does not count. The student is warned first and can keep it running; files in the home folder stay."</p>
                {(!readable).then(|| view! {
                    <p class="hint no-activity-signal">"Some GPUs here do not say how busy each MIG slice is (per-slice activity needs a Hopper or newer GPU): a job on such a slice is never reported or stopped as idle, whatever is set below, and the GPU threshold counts for nothing there. Notebooks are still judged by their kernels, terminals and saves."</p>
                })}
                <div class="field-grid">
                    <Field save field="idle_minutes" label="Stop idle notebooks after (minutes)" help="off: never.".into()>
                        <input id="policy-idle_minutes" name="idle_minutes" inputmode="numeric" value=f.idle_minutes.clone()/>
                    </Field>
                    <Field save field="idle_waiting_minutes" label="When students wait (minutes)" help="The shorter limit applies only while someone waits for a slice of that size; off: the same limit.".into()>
                        <input id="policy-idle_waiting_minutes" name="idle_waiting_minutes" inputmode="numeric" value=f.idle_waiting_minutes.clone()/>
                    </Field>
                    <Field save field="idle_warning_minutes" label="Warn before stopping (minutes)">
                        <input id="policy-idle_warning_minutes" name="idle_warning_minutes" inputmode="numeric" value=f.idle_warning_minutes.clone()/>
                    </Field>
                    <Field save field="idle_gpu_percent" label="GPU busy threshold (%)" help="A slice at least this busy counts as activity.".into()>
                        <input id="policy-idle_gpu_percent" name="idle_gpu_percent" inputmode="numeric" value=f.idle_gpu_percent.clone()/>
                    </Field>
                    <Field save field="job_idle_minutes" label="Jobs without GPU activity (minutes)" help="Reported to the student and to you after this long; off: never.".into()>
                        <input id="policy-job_idle_minutes" name="job_idle_minutes" inputmode="numeric" value=f.job_idle_minutes.clone()/>
                    </Field>
                    <Field save field="job_idle" label="Such a job is">
                        <select id="policy-job_idle" name="job_idle">
                            <option value="report" selected=f.job_idle != "stop">"Reported only"</option>
                            <option value="stop" selected=f.job_idle == "stop">"Stopped (after the warning)"</option>
                        </select>
                    </Field>
                </div>
            </section>
            <div class="form-actions save-actions">
                <button class="btn btn-primary" type="submit" disabled=move || save.pending().get()>
                    {move || if save.pending().get() { "Saving…" } else { "Save policy" }}
                </button>
                <div class="save-feedback" aria-live="polite">
                    {move || saved().then(|| view! { <SuccessMessage>"Policy saved. New sessions follow it."</SuccessMessage> })}
                    {move || refused_count().map(|n| view! {
                        <ErrorMessage text=format!(
                            "Nothing was saved: fix the {} marked above.",
                            if n == 1 { "field".to_string() } else { format!("{n} fields") }
                        )/>
                    })}
                    {move || save_error().map(|e| view! { <ErrorMessage text=e/> })}
                </div>
            </div>
        </ActionForm>
        <div class="grid-sidebar">
            <StudentBudgets students=page.students.clone()/>
            <GrantForm code grant students=page.students.iter().map(|s| s.username.clone()).collect()/>
        </div>
    }
}

#[component]
fn StudentBudgets(students: Vec<StudentBudgetRow>) -> impl IntoView {
    let rows = students
        .into_iter()
        .map(|s| {
            let used = s
                .budget
                .as_ref()
                .map(|b| format!("{} of {}", b.used, b.total))
                .unwrap_or_else(|| "no quota".into());
            let left = s.budget.as_ref().map(|b| b.left.clone()).unwrap_or_default();
            let out = s.budget.as_ref().is_some_and(|b| b.exhausted);
            view! {
                <tr data-student=s.username.clone()>
                    <td><b>{s.username.clone()}</b><br/><span class="muted small">{s.display_name.clone()}</span></td>
                    <td>{used}</td>
                    <td class:budget-out=out>{left}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card">
            <h2 class="card-title">"Students this period"</h2>
            <div class="table-wrap">
                <table class="table table-stack student-budgets">
                    <thead><tr><th>"Student"</th><th>"Slice-hours used"</th><th>"Left"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </section>
    }
}

#[component]
fn GrantForm(code: String, grant: ServerAction<GrantExtraHours>, students: Vec<String>) -> impl IntoView {
    let form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(form, move || matches!(grant.value().get(), Some(Ok(_))));
    let options = students
        .into_iter()
        .map(|name| view! { <option value=name.clone()>{name.clone()}</option> })
        .collect_view();
    view! {
        <section class="card">
            <h2 class="card-title">"Extra time for a student"</h2>
            <p class="hint">"Adds slice-hours to one student's budget for the current period only. Recorded in the audit log with your reason."</p>
            <ActionForm action=grant node_ref=form attr:class="form grant-form">
                <input type="hidden" name="code" value=code/>
                <label>"Student"<select name="username">{options}</select></label>
                <label>"Slice-hours"<input name="hours" inputmode="decimal" required/></label>
                <label>"Reason"<input name="reason" required maxlength="300"/></label>
                <button class="btn btn-secondary" type="submit">"Grant extra time"</button>
            </ActionForm>
            <div aria-live="polite">
                {move || match grant.value().get() {
                    Some(Ok(text)) => Some(view! { <SuccessMessage>{text}</SuccessMessage> }.into_any()),
                    Some(Err(e)) => Some(view! { <ErrorMessage text=message(&e)/> }.into_any()),
                    None => None,
                }}
            </div>
        </section>
    }
}

/// Moves the focus to the control of `field` (`#policy-FIELD`), in the browser.
#[cfg(feature = "hydrate")]
fn focus_field(field: &str) {
    use wasm_bindgen::JsCast;
    let control = leptos::prelude::document()
        .get_element_by_id(&format!("policy-{field}"))
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(control) = control {
        let _ = control.focus();
    }
}

#[cfg(not(feature = "hydrate"))]
fn focus_field(_field: &str) {}
