use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use super::import::{RosterImport, RosterImportState};
use super::lms_roster::LmsRosterCard;
use crate::api::lms::SyncLmsRoster;
use crate::api::courses::{open_course, DropStudent, MakeInstructor, ResetStudentPassword};
use crate::api::message;
use crate::components::badge::Badge;
use crate::views::Role;
use crate::components::confirm::ConfirmButton;
use crate::components::form::reset_on_success;
use crate::components::message::{ErrorMessage, OneTimeNotice, SuccessMessage};
use crate::components::time::LocalTime;
use crate::pages::not_found::Missing;
use crate::pages::{count, LoadError};
use crate::views::{BookingView, CourseDetail, MemberRow};

#[component]
pub fn CoursePage() -> impl IntoView {
    let params = use_params_map();
    let code = move || params.read().get("code").unwrap_or_default();
    let drop = ServerAction::<DropStudent>::new();
    let assign = ServerAction::<MakeInstructor>::new();
    let reset = ServerAction::<ResetStudentPassword>::new();
    let removed = RwSignal::new(None::<String>);
    let import = RosterImportState::new();
    let sync = ServerAction::<SyncLmsRoster>::new();
    let course = Resource::new(
        move || {
            (
                code(),
                drop.version().get(),
                assign.version().get(),
                import.apply.version().get(),
                sync.version().get(),
            )
        },
        |(code, ..)| open_course(code),
    );
    view! {
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match course.await {
                    Ok(detail) => view! { <CourseView detail drop assign reset import removed sync/> }.into_any(),
                    Err(error) if message(&error).starts_with(crate::api::courses::NO_SUCH_COURSE) => view! {
                        <Missing title="No such course" heading="There is no such course."
                            back=("/courses".to_string(), "See your courses".to_string())>
                            {format!("No course has the code {}. Check the address, or pick one of your courses.", code())}
                        </Missing>
                    }.into_any(),
                    Err(error) => view! { <Title text="Course"/><LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// One member of the roster, with "Reset password" and "Remove" for a student the caller
/// manages.
#[component]
fn MemberLine(
    m: MemberRow,
    code: String,
    manage: bool,
    contacts: bool,
    drop: ServerAction<DropStudent>,
    reset: ServerAction<ResetStudentPassword>,
    removed: RwSignal<Option<String>>,
) -> impl IntoView {
    let username = m.username.clone().unwrap_or_default();
    let removable = manage && m.role == Role::Student && m.username.is_some();
    let (reset_code, reset_name) = (code.clone(), username.clone());
    view! {
        <tr data-member=m.username.clone()>
            {contacts.then(|| view! { <td><b>{username.clone()}</b></td> })}
            <td>{m.display_name.clone()}</td>
            {contacts.then(|| view! { <td class="muted">{m.email.clone().unwrap_or_default()}</td> })}
            <td><Badge kind=m.role.to_string() text=m.role.to_string()/></td>
            <td class="actions">
                {removable.then(|| view! {
                    <ConfirmButton label="Reset password" class="btn-ghost-dark btn-small reset-student"
                        question=format!("Give {reset_name} a new password?")
                        warning="Their current password stops working and they are signed out everywhere. You see a one-time password once, to hand over; they choose their own at the next sign-in."
                        confirm="Reset password"
                        on_confirm=Callback::new(move |()| {
                            reset.dispatch(ResetStudentPassword { code: reset_code.clone(), username: reset_name.clone() });
                        })/>
                    <ConfirmButton label="Remove" class="btn-ghost-dark btn-small remove-student"
                        question=format!("Remove {username} from {code}?")
                        warning="They lose access to the course and cannot start sessions in it. Their account and files stay; importing them again brings them back."
                        confirm="Remove from course"
                        on_confirm=Callback::new(move |()| {
                            removed.set(Some(username.clone()));
                            drop.dispatch(DropStudent { code: code.clone(), username: username.clone() });
                        })/>
                })}
            </td>
        </tr>
    }
}

#[component]
fn CourseView(
    detail: CourseDetail,
    drop: ServerAction<DropStudent>,
    assign: ServerAction<MakeInstructor>,
    reset: ServerAction<ResetStudentPassword>,
    import: RosterImportState,
    /// Who the last "Remove" was for, named in its confirmation.
    removed: RwSignal<Option<String>>,
    sync: ServerAction<SyncLmsRoster>,
) -> impl IntoView {
    let code = detail.code.clone();
    let manage = detail.can_manage_roster;
    let contacts = detail.shows_contacts;
    let students = detail
        .members
        .iter()
        .filter(|m| m.role == Role::Student)
        .count();
    // One row per member, keyed by username (members whose username the caller may not
    // see have no controls and are told apart by their place).
    let members: Vec<(usize, MemberRow)> = detail.members.iter().cloned().enumerate().collect();
    let rows = view! {
        <For
            each=move || members.clone()
            key=|(i, m): &(usize, MemberRow)| (m.username.clone(), if m.username.is_some() { 0 } else { *i })
            children=move |(_, m): (usize, MemberRow)| view! { <MemberLine m code=code.clone() manage contacts drop reset removed/> }
        />
    };
    let errors = move || {
        [
            drop.value().get().and_then(Result::err),
            assign.value().get().and_then(Result::err),
            reset.value().get().and_then(Result::err),
        ]
        .into_iter()
        .flatten()
        .next()
        .map(|e| view! { <ErrorMessage text=message(&e)/> })
    };
    let done = move || {
        if matches!(assign.value().get(), Some(Ok(()))) {
            Some("Instructor added. They see the roster and can import students now.".to_string())
        } else if matches!(drop.value().get(), Some(Ok(()))) {
            Some(match removed.get() {
                Some(name) => {
                    format!("Student removed from the course: {name}. Their account stays.")
                }
                None => "Student removed from the course. Their account stays.".to_string(),
            })
        } else {
            None
        }
    };
    let assign_form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(assign_form, move || {
        matches!(assign.value().get(), Some(Ok(())))
    });
    view! {
        <Title text=detail.code.clone()/>
        <p class="eyebrow">{detail.code.clone()}</p>
        <h1 class="page-title">{detail.title.clone()}</h1>
        <p class="muted">{format!("{} · {}", count(detail.members.len(), "member", "members"), count(students, "student", "students"))}</p>
        {detail.can_set_policy.then(|| view! {
            <p class="button-row">
                <a class="btn btn-primary btn-small class-link" href=format!("/courses/{}/class", detail.code)>"Class dashboard"</a>
                <a class="btn btn-secondary btn-small policy-link" href=format!("/courses/{}/policy", detail.code)>"Policy and quota"</a>
                <a class="btn btn-secondary btn-small bookings-link" href=format!("/courses/{}/bookings", detail.code)>"Lab bookings"</a>
            </p>
        })}
        {detail.is_student.then(|| view! {
            <p class="button-row">
                <a class="btn btn-primary btn-small start-link" href="/sessions">"Start a session"</a>
            </p>
        })}
        {errors}
        <div aria-live="polite">
            {move || done().map(|text| view! { <SuccessMessage>{text}</SuccessMessage> })}
            {move || reset.value().get().and_then(Result::ok).map(|otp| view! { <OneTimeNotice otp/> })}
        </div>
        <div class="grid-sidebar">
            <section class="card">
                <h2 class="card-title">"Roster"</h2>
                <div class="table-wrap">
                    <table class="table roster table-stack">
                        <thead><tr>
                            {contacts.then(|| view! { <th>"Username"</th> })}
                            <th>"Name"</th>
                            {contacts.then(|| view! { <th>"Email"</th> })}
                            <th>"Role"</th><th><span class="sr-only">"Actions"</span></th>
                        </tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                {(!detail.invited.is_empty()).then(|| view! {
                    <p class="muted small invited">{format!("Invited, not joined yet: {}.", detail.invited.join(", "))}</p>
                })}
            </section>
            <div class="stack">
                <CourseRules detail=detail.clone()/>
                {manage.then(|| view! { <LmsRosterCard code=detail.code.clone() sync/> })}
                {manage.then(|| view! { <RosterImport code=detail.code.clone() state=import/> })}
                {detail.can_assign_instructors.then(|| view! {
                    <section class="card">
                        <h2 class="card-title">"Add an instructor"</h2>
                        <ActionForm action=assign node_ref=assign_form attr:class="form">
                            <input type="hidden" name="code" value=detail.code.clone()/>
                            <label>"Username"<input name="username" required/></label>
                            <button class="btn btn-secondary" type="submit">"Make instructor"</button>
                        </ActionForm>
                    </section>
                })}
            </div>
        </div>
    }
}

/// What the course allows its students (sizes, length, sessions at once, the budget), the
/// caller's own budget when they are a student, and the booked labs to come.
#[component]
fn CourseRules(detail: CourseDetail) -> impl IntoView {
    let d = detail;
    let sizes = if d.profiles.is_empty() {
        format!("Any size up to {} compute slices", d.max_slices)
    } else {
        d.profiles.join(", ")
    };
    let budget = d
        .quota
        .clone()
        .unwrap_or_else(|| "None: the course sets no slice-hour budget.".to_string());
    let own = d.budget.clone().map(|b| {
        view! {
            <p class=if b.exhausted { "budget budget-out course-budget" } else { "budget course-budget" } data-left=b.left.clone()>
                <b>{format!("You have {} of {} slice-hours left {}", b.left, b.total, b.period)}</b>
                {format!(" (used {}).", b.used)}
            </p>
        }
    });
    let labs = if d.bookings.is_empty() {
        view! { <p class="muted small course-labs-none">"No lab session is booked."</p> }.into_any()
    } else {
        let rows = d
            .bookings
            .into_iter()
            .map(|b| view! { <LabLine booking=b/> })
            .collect_view();
        view! { <ul class="plain-list course-labs">{rows}</ul> }.into_any()
    };
    view! {
        <section class="card course-rules">
            <h2 class="card-title">"Course rules"</h2>
            <dl class="facts">
                <div class="wide"><dt>"Slice sizes"</dt><dd class="rule-sizes">{sizes}</dd></div>
                <div><dt>"Longest session"</dt><dd class="rule-length">{minutes_words(d.max_minutes)}</dd></div>
                <div><dt>"Sessions at once"</dt><dd class="rule-at-once">{d.max_sessions}</dd></div>
                <div class="wide"><dt>"Budget per student"</dt><dd class="rule-budget">{budget}</dd></div>
            </dl>
            {own}
            <h3 class="course-labs-title">"Booked labs"</h3>
            {labs}
        </section>
    }
}

/// One booked lab: how many slices of which size, when (the reader's time), how often.
#[component]
fn LabLine(booking: BookingView) -> impl IntoView {
    let b = booking;
    let repeat = if b.weeks > 1 {
        format!(" · weekly, {} times", b.weeks)
    } else {
        String::new()
    };
    view! {
        <li class="course-lab" data-booking=b.id>
            <b>{format!("{} × {}", b.slices, b.profile)}</b> " · "
            <LocalTime ms=b.starts_at_ms utc=b.starts_at.clone() with_day=true/> " – "
            <LocalTime ms=b.ends_at_ms utc=b.ends_at.clone()/>
            {repeat}
        </li>
    }
}

/// A session length in words: `45 minutes`, `2 hours`, `1 h 30 min`.
fn minutes_words(minutes: i64) -> String {
    match (minutes / 60, minutes % 60) {
        (0, m) => count(m.max(0) as usize, "minute", "minutes"),
        (h, 0) => count(h as usize, "hour", "hours"),
        (h, m) => format!("{h} h {m} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::minutes_words;

    #[test]
    fn session_lengths_in_words() {
        assert_eq!(minutes_words(1), "1 minute");
        assert_eq!(minutes_words(45), "45 minutes");
        assert_eq!(minutes_words(60), "1 hour");
        assert_eq!(minutes_words(240), "4 hours");
        assert_eq!(minutes_words(90), "1 h 30 min");
    }
}
