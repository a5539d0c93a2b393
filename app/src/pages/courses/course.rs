use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use super::import::{RosterImport, RosterImportState};
use crate::api::courses::{open_course, DropStudent, MakeInstructor};
use crate::api::message;
use crate::pages::LoadError;
use crate::views::CourseDetail;

#[component]
pub fn CoursePage() -> impl IntoView {
    let params = use_params_map();
    let code = move || params.read().get("code").unwrap_or_default();
    let drop = ServerAction::<DropStudent>::new();
    let assign = ServerAction::<MakeInstructor>::new();
    let import = RosterImportState::new();
    let course = Resource::new(
        move || {
            (
                code(),
                drop.version().get(),
                assign.version().get(),
                import.apply.version().get(),
            )
        },
        |(code, ..)| open_course(code),
    );
    view! {
        <Transition fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match course.await {
                    Ok(detail) => view! { <CourseView detail drop assign import/> }.into_any(),
                    Err(error) => view! { <Title text="Course"/><LoadError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn CourseView(
    detail: CourseDetail,
    drop: ServerAction<DropStudent>,
    assign: ServerAction<MakeInstructor>,
    import: RosterImportState,
) -> impl IntoView {
    let code = detail.code.clone();
    let manage = detail.can_manage_roster;
    let students = detail
        .members
        .iter()
        .filter(|m| m.role == "student")
        .count();
    let rows = detail
        .members
        .iter()
        .map(|m| {
            let username = m.username.clone();
            let code = code.clone();
            let removable = manage && m.role == "student";
            view! {
                <tr>
                    <td><b>{m.username.clone()}</b></td>
                    <td>{m.display_name.clone()}</td>
                    <td class="muted">{m.email.clone()}</td>
                    <td><span class=format!("badge badge-{}", m.role)>{m.role.clone()}</span></td>
                    <td class="actions">
                        {removable.then(|| view! {
                            <button class="btn btn-ghost-dark btn-small remove-student"
                                on:click=move |_| {
                                    let ok = window()
                                        .confirm_with_message(&format!("Remove {username} from {code}? Their account stays."))
                                        .unwrap_or(false);
                                    if ok {
                                        drop.dispatch(DropStudent { code: code.clone(), username: username.clone() });
                                    }
                                }
                            >"Remove"</button>
                        })}
                    </td>
                </tr>
            }
        })
        .collect_view();
    let errors = move || {
        [
            drop.value().get().and_then(Result::err),
            assign.value().get().and_then(Result::err),
        ]
        .into_iter()
        .flatten()
        .next()
        .map(|e| view! { <p class="form-error" role="alert">{message(&e)}</p> })
    };
    view! {
        <Title text=detail.code.clone()/>
        <p class="eyebrow">{detail.code.clone()}</p>
        <h1 class="page-title">{detail.title.clone()}</h1>
        <p class="muted">{format!("{} members · {} student{}", detail.members.len(), students, if students == 1 { "" } else { "s" })}</p>
        {errors}
        <div class="grid-sidebar">
            <section class="card">
                <h2 class="card-title">"Roster"</h2>
                <table class="table roster">
                    <thead><tr><th>"Username"</th><th>"Name"</th><th>"Email"</th><th>"Role"</th><th></th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </section>
            <div class="stack">
                {manage.then(|| view! { <RosterImport code=detail.code.clone() state=import/> })}
                {detail.can_assign_instructors.then(|| view! {
                    <section class="card">
                        <h2 class="card-title">"Add an instructor"</h2>
                        <ActionForm action=assign attr:class="form">
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
