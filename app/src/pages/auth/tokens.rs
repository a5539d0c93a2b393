//! The account page's personal access tokens: make one (shown once), see each token's
//! scopes, expiry and last use, revoke it.

use leptos::form::ActionForm;
use leptos::prelude::*;

use crate::api::tokens::{CreateToken, RevokeToken, TokensOverview};
use crate::components::confirm::ConfirmButton;
use crate::components::form::reset_on_success;
use crate::components::message::ErrorMessage;
use crate::error::AppError;

/// The tokens' list, read again after each change; made by the page (not inside a
/// suspended render).
#[derive(Clone, Copy)]
pub struct Tokens {
    pub list: Resource<Result<TokensOverview, AppError>>,
    pub create: ServerAction<CreateToken>,
    pub revoke: ServerAction<RevokeToken>,
}

impl Tokens {
    pub fn new() -> Tokens {
        let create = ServerAction::<CreateToken>::new();
        let revoke = ServerAction::<RevokeToken>::new();
        let list = Resource::new(
            move || (create.version().get(), revoke.version().get()),
            |_| crate::api::tokens::my_tokens(),
        );
        Tokens { list, create, revoke }
    }
}

#[component]
pub fn TokensCard() -> impl IntoView {
    let Tokens { list, create, revoke } = expect_context::<Tokens>();
    let made = move || match create.value().get() {
        Some(Ok(made)) => Some(view! {
            <div class="card notice applied new-token" role="status">
                <b>{format!("Token “{}” made. Copy it now: it is not shown again.", made.token.name)}</b>
                <code class="token-secret">{made.secret}</code>
            </div>
        }.into_any()),
        Some(Err(e)) => Some(view! { <ErrorMessage text=crate::api::message(&e)/> }.into_any()),
        None => None,
    };
    let revoke_error = move || match revoke.value().get() {
        Some(Err(e)) => Some(view! { <ErrorMessage text=crate::api::message(&e)/> }),
        _ => None,
    };
    view! {
        <section class="card tokens">
            <h2 class="card-title">"Personal access tokens"</h2>
            <p class="muted">
                "A token lets a script use the " <a href="/api/v1/docs" rel="external">"SliceHub API"</a>
                " and JupyterHub tools such as nbgrader as you, within the scopes you tick."
            </p>
            <Suspense fallback=|| ()>
                {move || list.get().map(|r| match r {
                    Ok(overview) => view! { <TokenForm overview=overview.clone() create=create/> {made} <TokenList overview=overview revoke=revoke/> }.into_any(),
                    Err(e) => view! { <ErrorMessage text=crate::api::message(&e)/> }.into_any(),
                })}
            </Suspense>
            {revoke_error}
        </section>
    }
}

#[component]
fn TokenForm(overview: TokensOverview, create: ServerAction<CreateToken>) -> impl IntoView {
    let form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(form, move || matches!(create.value().get(), Some(Ok(_))));
    let scopes = overview
        .scopes
        .into_iter()
        .map(|s| {
            let checked = s.name == "read";
            view! {
                <label class="check-row">
                    <input type="checkbox" name=s.field.clone() value="on" checked=checked/>
                    <span><code>{s.name.clone()}</code>" — "{s.meaning.clone()}</span>
                </label>
            }
        })
        .collect_view();
    view! {
        <ActionForm action=create node_ref=form attr:class="form token-form">
            <label>"What it is for"
                <input type="text" name="name" maxlength="60" required placeholder="nightly usage export"/>
            </label>
            <fieldset class="token-scopes">
                <legend>"Scopes"</legend>
                {scopes}
            </fieldset>
            <label>"Expires after"
                <select name="days">
                    <option value="7">"7 days"</option>
                    <option value="30" selected=true>"30 days"</option>
                    <option value="90">"90 days"</option>
                    <option value="365">"365 days"</option>
                </select>
            </label>
            <button class="btn btn-primary" type="submit" disabled=move || create.pending().get()>"Make token"</button>
        </ActionForm>
    }
}

#[component]
fn TokenList(overview: TokensOverview, revoke: ServerAction<RevokeToken>) -> impl IntoView {
    if overview.tokens.is_empty() {
        return view! { <p class="muted no-tokens">"You have no tokens."</p> }.into_any();
    }
    let rows = overview
        .tokens
        .into_iter()
        .map(|t| {
            let id = t.id;
            view! {
                <tr class="token-row" data-token=t.id.to_string()>
                    <td>{t.name.clone()}</td>
                    <td>{t.scopes.join(", ")}</td>
                    <td>{t.expires.clone()}</td>
                    <td>{t.last_used.clone()}</td>
                    <td class="actions">
                        <ConfirmButton
                            label="Revoke"
                            question=format!("Revoke “{}”?", t.name)
                            warning="Scripts using it stop working at once."
                            confirm="Revoke token"
                            class="btn-secondary btn-small"
                            on_confirm=Callback::new(move |()| { revoke.dispatch(RevokeToken { id }); })
                        />
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table class="table compact">
                <thead><tr><th>"Name"</th><th>"Scopes"</th><th>"Expires"</th><th>"Last used"</th><th><span class="sr-only">"Revoke"</span></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}
