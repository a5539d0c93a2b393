use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::admin::{list_users, AddAccount, ResetAccountPassword, SetAccountDisabled};
use crate::api::message;
use crate::pages::LoadError;
use crate::views::{OneTimePassword, UserRow};

#[component]
pub fn UsersPage() -> impl IntoView {
    let add = ServerAction::<AddAccount>::new();
    let reset = ServerAction::<ResetAccountPassword>::new();
    let disable = ServerAction::<SetAccountDisabled>::new();
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
    let shown = move || match (add.value().get(), reset.value().get()) {
        (Some(Ok(otp)), _) | (_, Some(Ok(otp))) => Some(otp),
        _ => None,
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
    view! {
        <Title text="Users"/>
        <h1 class="page-title">"Users"</h1>
        <p class="muted">"New accounts and resets get a one-time password; it is shown here once and must be replaced at first sign-in."</p>
        {move || shown().map(|otp| view! { <OneTimeNotice otp/> })}
        {move || failure().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
        <div class="grid-sidebar">
            <section class="card">
                <h2 class="card-title">"Accounts"</h2>
                <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                    {move || Suspend::new(async move {
                        match users.await {
                            Ok(users) => view! { <UserTable users reset disable/> }.into_any(),
                            Err(error) => view! { <LoadError error/> }.into_any(),
                        }
                    })}
                </Transition>
            </section>
            <section class="card">
                <h2 class="card-title">"Add an account"</h2>
                <ActionForm action=add attr:class="form">
                    <label>"Username"<input name="username" required pattern="[A-Za-z0-9._-]{1,64}" placeholder="e.g. jdoe"/></label>
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
fn OneTimeNotice(otp: OneTimePassword) -> impl IntoView {
    view! {
        <div class="card notice otp" role="status">
            "One-time password for " <b>{otp.username}</b> ": "
            <code class="otp-value">{otp.password}</code>
            <span class="muted">" — hand it over now; it is not shown again."</span>
        </div>
    }
}

#[component]
fn UserTable(
    users: Vec<UserRow>,
    reset: ServerAction<ResetAccountPassword>,
    disable: ServerAction<SetAccountDisabled>,
) -> impl IntoView {
    let rows = users
        .into_iter()
        .map(|u| {
            let id = u.id;
            let disabled = u.disabled;
            let state = if u.disabled {
                view! { <span class="badge badge-off">"disabled"</span> }.into_any()
            } else if u.must_change_password {
                view! { <span class="badge badge-pending">"one-time password"</span> }.into_any()
            } else {
                view! { <span class="badge badge-ok">"active"</span> }.into_any()
            };
            view! {
                <tr>
                    <td><b>{u.username.clone()}</b>{u.is_admin.then(|| view! { " " <span class="badge badge-admin">"admin"</span> })}</td>
                    <td>{u.display_name.clone()}<div class="muted small">{u.email.clone()}</div></td>
                    <td>{state}</td>
                    <td class="actions">
                        <button class="btn btn-secondary btn-small" on:click=move |_| { reset.dispatch(ResetAccountPassword { user_id: id }); }>"Reset password"</button>
                        <button class="btn btn-ghost-dark btn-small" on:click=move |_| { disable.dispatch(SetAccountDisabled { user_id: id, disabled: !disabled }); }>
                            {if disabled { "Enable" } else { "Disable" }}
                        </button>
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="table users">
            <thead><tr><th>"Username"</th><th>"Name"</th><th>"State"</th><th></th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
