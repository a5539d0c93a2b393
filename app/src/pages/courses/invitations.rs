//! The courses page's invitations: an instructor's roster named the reader's account, and
//! they join or decline each.

use leptos::prelude::*;

use crate::api::invitations::AnswerInvitation;
use crate::api::message;
use crate::components::message::{ErrorMessage, SuccessMessage};
use crate::views::InvitationView;

/// What the last answer did, shown after its invitation is gone from the list.
#[component]
pub fn InvitationOutcome(answer: ServerAction<AnswerInvitation>, joined: RwSignal<bool>) -> impl IntoView {
    let outcome = move || match answer.value().get() {
        Some(Ok(())) if joined.get() => Some(view! { <SuccessMessage>"Joined. The course is listed below."</SuccessMessage> }.into_any()),
        Some(Ok(())) => Some(view! { <SuccessMessage>"Declined. The invitation is gone."</SuccessMessage> }.into_any()),
        Some(Err(e)) => Some(view! { <ErrorMessage text=message(&e)/> }.into_any()),
        None => None,
    };
    view! { <div aria-live="polite">{outcome}</div> }
}

#[component]
pub fn Invitations(
    invitations: Vec<InvitationView>,
    answer: ServerAction<AnswerInvitation>,
    joined: RwSignal<bool>,
) -> impl IntoView {
    let cards = invitations
        .into_iter()
        .map(|i| {
            let (join_code, decline_code) = (i.code.clone(), i.code.clone());
            view! {
                <li class="invitation" data-course=i.code.clone()>
                    <div>
                        <b>{i.code.clone()}</b>" · "{i.title.clone()}
                        <div class="muted small">{format!("{} invited you. Joining lets the course's instructors see your e-mail too.", i.invited_by)}</div>
                    </div>
                    <div class="button-row">
                        <button type="button" class="btn btn-primary btn-small join-course" disabled=move || answer.pending().get()
                            on:click=move |_| { joined.set(true); answer.dispatch(AnswerInvitation { code: join_code.clone(), join: true }); }>"Join"</button>
                        <button type="button" class="btn btn-secondary btn-small decline-course" disabled=move || answer.pending().get()
                            on:click=move |_| { joined.set(false); answer.dispatch(AnswerInvitation { code: decline_code.clone(), join: false }); }>"Decline"</button>
                    </div>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="card invitations">
            <h2 class="card-title">"Invitations"</h2>
            <ul class="plain-list">{cards}</ul>
        </section>
    }
}
