//! One course's launch card: pick a slice size and an image, start JupyterLab or a job.

use leptos::form::ActionForm;
use leptos::prelude::*;

use crate::api::message;
use crate::api::sessions::StartSession;
use crate::components::form::reset_on_success;
use crate::components::time::{EtaText, LocalTime};
use crate::slice_size::{slice_size, SliceSize, GPU_SLICES};
use crate::views::{BudgetView, LaunchCourse, ProfileOption, SessionKind};

/// `1g.10gb — 3 free · 10 GB GPU memory, …`, and why it cannot be picked when the budget
/// is too small for it.
fn option_label(p: &ProfileOption, within_budget: bool) -> String {
    let free = match (p.free, p.queued) {
        (0, 0) => "none free, you would wait".to_string(),
        (0, q) => format!("none free, {q} waiting"),
        (f, _) => format!("{f} free"),
    };
    let facts = format!(" · {}", size_facts(&p.name, &p.per_hour).unwrap_or_else(|| cost(&p.per_hour)));
    let guarantees = p.guarantees.as_ref().map(|g| format!(" · {g}")).unwrap_or_default();
    let short = if within_budget {
        ""
    } else {
        " (not enough slice-hours left)"
    };
    format!("{} — {free}{facts}{guarantees}{short}", p.name)
}

/// The sizes by kind, in the order offered: MIG slices, whole GPUs, shares of a GPU (a
/// name of no known form goes with the MIG slices).
fn size_groups(profiles: &[ProfileOption]) -> Vec<(&'static str, Vec<&ProfileOption>)> {
    let kind = |p: &ProfileOption| match slice_size(&p.name) {
        Some(SliceSize::Whole) => 1,
        Some(SliceSize::Share(_)) => 2,
        _ => 0,
    };
    [(0, "MIG slices"), (1, "Whole GPUs"), (2, "Shares of a GPU")]
        .into_iter()
        .map(|(k, label)| (label, profiles.iter().filter(|p| kind(p) == k).collect::<Vec<_>>()))
        .filter(|(_, members)| !members.is_empty())
        .collect()
}

/// "1.75 slice-hours per hour".
fn cost(per_hour: &str) -> String {
    let unit = if per_hour == "1" { "slice-hour" } else { "slice-hours" };
    format!("{per_hour} {unit} per hour")
}

/// What the chosen size gives, costs and guarantees, in full.
fn chosen_facts(p: &ProfileOption) -> String {
    let facts = size_facts(&p.name, &p.per_hour).or_else(|| Some(cost(&p.per_hour)));
    [facts, p.guarantees.clone()].into_iter().flatten().collect::<Vec<_>>().join(" · ")
}

/// What a slice size gives and costs, `per_hour` being the slice-hours an hour of it
/// counts (the server's word): `1g.10gb` → `10 GB GPU memory, 1 of 7 compute slices,
/// 1 slice-hour per hour` (the memory is left out when the name does not say it); a whole
/// GPU (`l40s.48gb`) → `the whole GPU, 48 GB GPU memory, 4 slice-hours per hour`; a share
/// (`l4.24gb.1of4`) → `1 of 4 shares of a 24 GB GPU, 1.75 slice-hours per hour`.
pub fn size_facts(profile: &str, per_hour: &str) -> Option<String> {
    let gb = profile
        .split_once('.')
        .and_then(|(_, rest)| rest.split_once("gb"))
        .and_then(|(gb, _)| gb.parse::<u32>().ok());
    let memory = gb.map(|gb| format!("{gb} GB GPU memory, ")).unwrap_or_default();
    let cost = cost(per_hour);
    match slice_size(profile)? {
        SliceSize::Whole => Some(format!("the whole GPU, {memory}{cost}")),
        SliceSize::Share(count) => {
            let of = gb.map(|gb| format!("a {gb} GB GPU")).unwrap_or_else(|| "a GPU".to_string());
            Some(format!("1 of {count} shares of {of}, {cost}"))
        }
        SliceSize::Mig(slices) => Some(format!("{memory}{slices} of {GPU_SLICES} compute slices, {cost}")),
    }
}

/// Why nothing more can be started: `live` sessions running or waiting already reach the
/// course's limit of `max` at once (the portal refuses the next one then).
pub fn at_limit(live: usize, max: Option<i64>) -> Option<String> {
    let max = max.filter(|m| *m > 0)?;
    ((live as i64) >= max).then(|| {
        format!(
            "You have {} running or waiting, the most this course allows at once. Stop one, or leave a queue, to start another.",
            crate::pages::count(live, "session", "sessions")
        )
    })
}

#[component]
pub fn LaunchCard(
    course: LaunchCourse,
    start: ServerAction<StartSession>,
    /// The student's sessions running or waiting in every course: at the course's limit
    /// (see [`at_limit`]) the Start buttons are disabled and the card says why.
    live: RwSignal<usize>,
    /// Every course's launch options as re-read while a session runs (see
    /// `SessionsPage`); `None` until then, and the course's own budget is shown.
    budgets: RwSignal<Option<Vec<LaunchCourse>>>,
) -> impl IntoView {
    // Read in the view's own closure from the page's signal: a signal made for it where
    // the cards are drawn would be disposed with that drawing while the card still reads.
    let id = course.course_id;
    let first = course.budget.clone();
    let budget = move || {
        budgets.with(|latest| match latest {
            Some(list) => list.iter().find(|c| c.course_id == id).and_then(|c| c.budget.clone()),
            None => first.clone(),
        })
    };
    let error = move || {
        start
            .value()
            .get()
            .and_then(|r| r.err())
            .map(|e| view! { <p class="form-error" role="alert">{message(&e)}</p> })
    };
    let profiles = course.profiles.clone();
    let images = course.images.clone();
    // Nothing this course offers can start on what is left of the budget: say so once,
    // rather than offer an empty choice.
    let unaffordable = (!course.profiles.is_empty() && course.profiles.iter().all(|p| !p.affordable)).then(|| {
        let renewal = course.budget.as_ref().map(|b| format!(" The budget {}.", b.renewal)).unwrap_or_default();
        format!("Your slice-hours left do not cover the shortest start of any size this course offers.{renewal} Ask your instructor for extra time if you need it now.")
    });
    let max_sessions = course.max_sessions;
    let full = move || at_limit(live.get(), Some(max_sessions)).or_else(|| unaffordable.clone());
    // `job`: the job form, which is cleared after a job starts, its list back at the first.
    let selects = move |job: bool| -> AnyView {
        // The chosen size's facts in full under the list, where a phone shows an option cut.
        let groups = size_groups(&profiles);
        let in_order = || groups.iter().flat_map(|(_, members)| members.iter().copied());
        let first = in_order().find(|p| p.affordable).or(in_order().next());
        let first = first.map(|p| p.name.clone()).unwrap_or_default();
        let chosen = RwSignal::new(first.clone());
        if job {
            Effect::new(move |_| {
                if matches!(start.value().get(), Some(Ok(ref s)) if s.kind == SessionKind::Job) {
                    chosen.set(first.clone());
                }
            });
        }
        let described = profiles.clone();
        let facts = move || chosen.with(|name| described.iter().find(|p| &p.name == name).map(chosen_facts));
        let option = |p: &ProfileOption| {
            let too_dear = !p.affordable;
            view! { <option value=p.name.clone() disabled=too_dear>{option_label(p, p.affordable)}</option> }
        };
        // A fleet of one kind lists its sizes; a mixed one groups them by kind.
        let profile_options = if groups.len() <= 1 {
            profiles.iter().map(option).collect_view().into_any()
        } else {
            groups
                .into_iter()
                .map(|(label, members)| view! { <optgroup label=label>{members.iter().map(|p| option(p)).collect_view()}</optgroup> })
                .collect_view()
                .into_any()
        };
        let image_options = images
            .iter()
            .map(|i| view! { <option value=i.clone()>{i.clone()}</option> })
            .collect_view();
        view! {
            <label>"Slice size"
                <select name="profile" on:change=move |ev| chosen.set(event_target_value(&ev))>{profile_options}</select>
            </label>
            <p class="muted small size-facts" aria-live="polite">{facts}</p>
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
    let notebook_selects = selects(false);
    let job_selects = selects(true);
    let full_id = format!("launch-full-{}", course.course_id);
    let blocked = {
        let full = full.clone();
        move || full().is_some()
    };
    let described_by = {
        let (blocked, id) = (blocked.clone(), full_id.clone());
        move || blocked().then(|| id.clone())
    };
    let job_described_by = described_by.clone();
    let job_blocked = blocked.clone();
    let job_form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(
        job_form,
        move || matches!(start.value().get(), Some(Ok(ref s)) if s.kind == SessionKind::Job),
    );
    view! {
        <section class="card launch" data-course=course.code.clone()>
            <div class="launch-head">
                <h2 class="card-title">{course.code.clone()} " · " {course.title.clone()}</h2>
                <span class="muted small">"Sessions stop after " {course.max_minutes} " minutes"</span>
            </div>
            {move || budget().map(|b| view! { <BudgetLine budget=b/> })}
            {move || full().map(|why| view! { <p class="launch-full" id=full_id.clone()>{why}</p> })}
            <div class="grid-2">
                <ActionForm action=start attr:class="form launch-notebook">
                    <h3>"JupyterLab"</h3>
                    <input type="hidden" name="course_id" value=course_id/>
                    {notebook_selects}
                    <button class="btn btn-primary" type="submit" disabled=blocked aria-describedby=described_by>"Start notebook"</button>
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
                    <button class="btn btn-secondary" type="submit" disabled=job_blocked aria-describedby=job_described_by>"Run job"</button>
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

#[cfg(test)]
mod tests {
    use super::size_facts;

    #[test]
    fn sizes_say_memory_slices_and_cost() {
        assert_eq!(
            size_facts("1g.10gb", "1").as_deref(),
            Some("10 GB GPU memory, 1 of 7 compute slices, 1 slice-hour per hour")
        );
        assert_eq!(
            size_facts("3g.40gb", "3").as_deref(),
            Some("40 GB GPU memory, 3 of 7 compute slices, 3 slice-hours per hour")
        );
        assert_eq!(
            size_facts("1g.10gb+me", "1").as_deref(),
            Some("10 GB GPU memory, 1 of 7 compute slices, 1 slice-hour per hour")
        );
        assert_eq!(
            size_facts("7g", "7").as_deref(),
            Some("7 of 7 compute slices, 7 slice-hours per hour")
        );
        assert_eq!(size_facts("whole-gpu", "7"), None);
        assert_eq!(
            size_facts("l40s.48gb", "4").as_deref(),
            Some("the whole GPU, 48 GB GPU memory, 4 slice-hours per hour")
        );
        assert_eq!(
            size_facts("l4.24gb.1of4", "1.75").as_deref(),
            Some("1 of 4 shares of a 24 GB GPU, 1.75 slice-hours per hour")
        );
        assert_eq!(size_facts("9g.90gb", "9"), None);
    }

}
