//! One course's launch card: pick a slice size and an image, start JupyterLab or a job.

use leptos::form::ActionForm;
use leptos::prelude::*;

use crate::api::message;
use crate::api::sessions::StartSession;
use crate::components::form::reset_on_success;
use crate::components::time::{EtaText, LocalTime};
use crate::views::{BudgetView, LaunchCourse, ProfileOption};

fn option_label(p: &ProfileOption) -> String {
    match (p.free, p.queued) {
        (0, 0) => format!("{} — none free, you would wait", p.name),
        (0, q) => format!("{} — none free, {q} waiting", p.name),
        (f, _) => format!("{} — {f} free", p.name),
    }
}

#[component]
pub fn LaunchCard(course: LaunchCourse, start: ServerAction<StartSession>) -> impl IntoView {
    let error = move || {
        start
            .value()
            .get()
            .and_then(|r| r.err())
            .map(|e| view! { <p class="form-error" role="alert">{message(&e)}</p> })
    };
    let profiles = course.profiles.clone();
    let images = course.images.clone();
    let selects = move || -> AnyView {
        let profile_options = profiles
            .iter()
            .map(|p| view! { <option value=p.name.clone()>{option_label(p)}</option> })
            .collect_view();
        let image_options = images
            .iter()
            .map(|i| view! { <option value=i.clone()>{i.clone()}</option> })
            .collect_view();
        view! {
            <label>"Slice size"
                <select name="profile">{profile_options}</select>
            </label>
            <label>"Image"
                <select name="image">{image_options}</select>
            </label>
        }
        .into_any()
    };
    let waits = course
        .profiles
        .iter()
        .filter_map(|p| Some((p.name.clone(), p.wait.clone()?)))
        .map(|(name, eta)| view! { <li>"No " <b>{name}</b> " slice is free now: a claim made now would start " <EtaText eta/> "."</li> })
        .collect_view();
    let course_id = course.course_id.to_string();
    let job_course_id = course_id.clone();
    let notebook_selects = selects();
    let job_selects = selects();
    let job_form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(
        job_form,
        move || matches!(start.value().get(), Some(Ok(ref s)) if s.kind == "job"),
    );
    view! {
        <section class="card launch" data-course=course.code.clone()>
            <div class="launch-head">
                <h2 class="card-title">{course.code.clone()} " · " {course.title.clone()}</h2>
                <span class="muted small">"Sessions stop after " {course.max_minutes} " minutes"</span>
            </div>
            {course.budget.clone().map(|b| view! { <BudgetLine budget=b/> })}
            <div class="grid-2">
                <ActionForm action=start attr:class="form launch-notebook">
                    <h3>"JupyterLab"</h3>
                    <input type="hidden" name="course_id" value=course_id/>
                    {notebook_selects}
                    <button class="btn btn-primary" type="submit">"Start notebook"</button>
                </ActionForm>
                <ActionForm action=start node_ref=job_form attr:class="form launch-job">
                    <h3>"Training job"</h3>
                    <input type="hidden" name="course_id" value=job_course_id/>
                    {job_selects}
                    <label>"Command"
                        <input name="command" class="mono" placeholder="python train.py --epochs 3"
                            autocomplete="off" spellcheck="false" aria-describedby=format!("command-help-{}", course.course_id)/>
                    </label>
                    <p class="muted small" id=format!("command-help-{}", course.course_id)>
                        "It runs in your home folder (" <code>"/home/jovyan"</code> "), the same folder JupyterLab "
                        "opens, so a file such as " <code>"train.py"</code> " must be there first: start a notebook "
                        "and upload it or create it there. Words are split like a shell would (quotes keep "
                        "spaces), but no shell runs it, so " <code>"|"</code> ", " <code>";"</code> " and "
                        <code>"$VAR"</code> " are passed as plain text."
                    </p>
                    <button class="btn btn-secondary" type="submit">"Run job"</button>
                </ActionForm>
            </div>
            <ul class="launch-waits muted small">{waits}</ul>
            {error}
        </section>
    }
}

/// The student's slice-hours in the course: what is left, and when it renews.
#[component]
fn BudgetLine(budget: BudgetView) -> impl IntoView {
    let b = budget;
    view! {
        <p class=if b.exhausted { "budget budget-out" } else { "budget" } data-left=b.left.clone()>
            <b>{format!("{} of {} slice-hours left {}", b.left, b.total, b.period)}</b>
            {format!(" (used {}); {}", b.used, b.renewal)}
            " — " <LocalTime ms=b.period_end_ms utc=b.period_end_utc.clone() with_day=true/> " your time. "
            <span class="muted">"A slice-hour is one compute slice for an hour: a 3g slice for an hour uses 3."</span>
            {b.exhausted.then(|| view! {
                <span class="budget-note">" Your budget is used up; new sessions start again when it renews, or ask your instructor for extra time."</span>
            })}
        </p>
    }
}
