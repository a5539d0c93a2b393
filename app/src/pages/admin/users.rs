use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::admin::{list_users, AddAccount, ResetAccountPassword, SetAccountDisabled};
use crate::api::message;
use crate::components::badge::Badge;
use crate::components::confirm::ConfirmButton;
use crate::components::form::reset_on_success;
use crate::components::message::{ErrorMessage, OneTimeNotice, SuccessMessage};
use crate::pages::LoadError;
use crate::views::{OneTimePassword, UserRow};

#[component]
pub fn UsersPage() -> impl IntoView {
    let add = ServerAction::<AddAccount>::new();
    let reset = ServerAction::<ResetAccountPassword>::new();
    let disable = ServerAction::<SetAccountDisabled>::new();
    // What the last enable or disable was about, for its success message.
    let toggled = RwSignal::new(None::<(String, bool)>);
    let users = Resource::new(
        move || {
            (
                add.version().get(),
                reset.version().get(),
                disable.version().get(),
            )
        },
        |_| list_users(),
    );
    // The newest one-time password, from whichever of add or reset answered last.
    let shown = RwSignal::new(None::<OneTimePassword>);
    Effect::new(move |_| {
        if let Some(Ok(otp)) = add.value().get() {
            shown.set(Some(otp));
        }
    });
    Effect::new(move |_| {
        if let Some(Ok(otp)) = reset.value().get() {
            shown.set(Some(otp));
        }
    });
    let toggled_ok = move || {
        matches!(disable.value().get(), Some(Ok(())))
            .then(|| toggled.get())
            .flatten()
            .map(|(username, disabled)| {
                if disabled {
                    format!("{username} is disabled and was signed out everywhere.")
                } else {
                    format!("{username} can sign in again.")
                }
            })
    };
    let failure = move || {
        [
            add.value().get().and_then(Result::err),
            reset.value().get().and_then(Result::err),
            disable.value().get().and_then(Result::err),
        ]
        .into_iter()
        .flatten()
        .next()
        .map(|e| message(&e))
    };
    let add_form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(add_form, move || matches!(add.value().get(), Some(Ok(_))));
    view! {
        <Title text="Users"/>
        <h1 class="page-title">"Users"</h1>
        <p class="muted">"New accounts and resets get a one-time password; it is shown here once and must be replaced at first sign-in."</p>
        <div aria-live="polite">
            {move || shown.get().map(|otp| view! { <OneTimeNotice otp/> })}
            {move || toggled_ok().map(|text| view! { <SuccessMessage>{text}</SuccessMessage> })}
        </div>
        {move || failure().map(|e| view! { <ErrorMessage text=e/> })}
        <div class="grid-sidebar">
            <section class="card">
                <h2 class="card-title">"Accounts"</h2>
                <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                    {move || Suspend::new(async move {
                        match users.await {
                            Ok(users) => view! { <UserTable users reset disable toggled/> }.into_any(),
                            Err(error) => view! { <LoadError error/> }.into_any(),
                        }
                    })}
                </Transition>
            </section>
            <section class="card">
                <h2 class="card-title">"Add an account"</h2>
                <ActionForm action=add node_ref=add_form attr:class="form">
                    <label>"Username"<input name="username" required pattern="[A-Za-z0-9._\\-]{1,64}" placeholder="e.g. jdoe"/></label>
                    <label>"Display name"<input name="display_name" required placeholder="Jane Doe"/></label>
                    <label>"Email (optional)"<input name="email" type="email"/></label>
                    <label class="check-row"><input type="checkbox" name="admin" value="on"/>"Administrator"</label>
                    <button class="btn btn-primary" type="submit" disabled=move || add.pending().get()>"Add account"</button>
                </ActionForm>
            </section>
        </div>
    }
}

#[component]
fn UserTable(
    users: Vec<UserRow>,
    reset: ServerAction<ResetAccountPassword>,
    disable: ServerAction<SetAccountDisabled>,
    toggled: RwSignal<Option<(String, bool)>>,
) -> impl IntoView {
    let rows = users
        .into_iter()
        .map(|u| {
            let id = u.id;
            let disabled = u.disabled;
            let state = if u.disabled {
                view! { <Badge kind="off" text="disabled"/> }.into_any()
            } else if u.must_change_password {
                view! { <Badge kind="pending" text="one-time password"/> }.into_any()
            } else {
                view! { <Badge kind="ok" text="active"/> }.into_any()
            };
            let name = u.username.clone();
            let toggle = if disabled {
                view! {
                    <button type="button" class="btn btn-ghost-dark btn-small enable" on:click=move |_| {
                        toggled.set(Some((name.clone(), false)));
                        disable.dispatch(SetAccountDisabled { user_id: id, disabled: false });
                    }>"Enable"</button>
                }
                .into_any()
            } else {
                view! {
                    <ConfirmButton label="Disable" class="btn-ghost-dark btn-small disable"
                        question=format!("Disable {name}?")
                        warning=format!("{name} is signed out everywhere and cannot sign in until you enable the account again.")
                        confirm="Disable account"
                        on_confirm=Callback::new(move |()| {
                            toggled.set(Some((name.clone(), true)));
                            disable.dispatch(SetAccountDisabled { user_id: id, disabled: true });
                        })/>
                }
                .into_any()
            };
            let who = u.username.clone();
            view! {
                <tr data-user=u.username.clone()>
                    <td><b>{u.username.clone()}</b>{u.is_admin.then(|| view! { " " <Badge kind="admin" text="admin"/> })}</td>
                    <td>{u.display_name.clone()}<div class="muted small">{u.email.clone()}</div></td>
                    <td class="sources">{u.sources.join(", ")}</td>
                    <td>{state}</td>
                    <td class="actions">
                        <ConfirmButton label="Reset password" class="btn-secondary btn-small reset"
                            question=format!("Reset {who}'s password?")
                            warning=format!("Their current password stops working and they are signed out everywhere. You get a one-time password to hand to {who}.")
                            confirm="Reset password"
                            on_confirm=Callback::new(move |()| { reset.dispatch(ResetAccountPassword { user_id: id }); })/>
                        " "
                        {toggle}
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table class="table users table-stack">
                <thead><tr><th>"Username"</th><th>"Name"</th><th>"Signs in with"</th><th>"State"</th><th>"Actions"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
