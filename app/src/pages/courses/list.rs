use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::courses::{list_courses, AddCourse};
use crate::api::invitations::{my_invitations, AnswerInvitation};
use crate::api::message;
use crate::components::badge::Badge;
use crate::components::form::reset_on_success;
use crate::components::message::{EmptyState, ErrorMessage, SuccessMessage};
use crate::pages::{count, LoadError};
use crate::shell::CurrentUser;

use super::invitations::{InvitationOutcome, Invitations};

#[component]
pub fn CoursesPage() -> impl IntoView {
    let add = ServerAction::<AddCourse>::new();
    let answer = ServerAction::<AnswerInvitation>::new();
    let joined = RwSignal::new(false);
    let courses = Resource::new(move || (add.version().get(), answer.version().get()), |_| list_courses());
    let invitations = Resource::new(move || answer.version().get(), |_| my_invitations());
    let user = expect_context::<CurrentUser>().0;
    let add_form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(add_form, move || matches!(add.value().get(), Some(Ok(()))));
    view! {
        <Title text="Courses"/>
        <h1 class="page-title">"Courses"</h1>
        <InvitationOutcome answer joined/>
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match invitations.await {
                    Ok(list) if !list.is_empty() => Some(view! { <Invitations invitations=list answer joined/> }),
                    _ => None,
                }
            })}
        </Transition>
        <div class="grid-sidebar">
            <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
                {move || Suspend::new(async move {
                    match courses.await {
                        Ok(list) if list.is_empty() => view! {
                            <EmptyState title="No courses yet">"You are not in any course yet. Your instructor adds you, or invites you to join here."</EmptyState>
                        }.into_any(),
                        Ok(list) => {
                            let cards = list.into_iter().map(|c| view! {
                                <a class="card course-card" href=format!("/courses/{}", c.code)>
                                    <div class="course-code">{c.code.clone()}</div>
                                    <h3>{c.title.clone()}</h3>
                                    <div class="muted small">
                                        {count(c.students, "student", "students")}
                                        {(!c.instructors.is_empty()).then(|| format!(" · taught by {}", c.instructors.join(", ")))}
                                    </div>
                                    {c.role.map(|r| view! { <Badge kind=r.to_string() text=r.to_string()/> })}
                                </a>
                            }).collect_view();
                            view! { <div class="course-grid">{cards}</div> }.into_any()
                        }
                        Err(error) => view! { <LoadError error/> }.into_any(),
                    }
                })}
            </Transition>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let admin = user.await.ok().flatten().map(|me| me.is_admin).unwrap_or(false);
                    admin.then(|| view! {
                        <section class="card">
                            <h2 class="card-title">"New course"</h2>
                            <ActionForm action=add node_ref=add_form attr:class="form">
                                <label>"Code"<input name="code" required placeholder="CS-101"/></label>
                                <label>"Title"<input name="title" required placeholder="Deep Learning Lab"/></label>
                                {move || match add.value().get() {
                                    Some(Ok(())) => Some(view! { <SuccessMessage>"Course created. Open it to name its instructors."</SuccessMessage> }.into_any()),
                                    Some(Err(e)) => Some(view! { <ErrorMessage text=message(&e)/> }.into_any()),
                                    None => None,
                                }}
                                <button class="btn btn-primary" type="submit">"Create course"</button>
                            </ActionForm>
                        </section>
                    })
                })}
            </Transition>
        </div>
    }
}
