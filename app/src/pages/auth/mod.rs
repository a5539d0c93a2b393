pub mod account;
pub mod login;

use leptos::prelude::*;
use leptos_router::components::Redirect;

use crate::shell::CurrentUser;
use crate::views::Me;

/// Renders `render` for a signed-in user; anyone else is sent to the sign-in page.
#[component]
pub fn RequireUser(render: fn(Me) -> AnyView) -> impl IntoView {
    let user = expect_context::<CurrentUser>().0;
    view! {
        <Suspense fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(Some(me)) => render(me),
                    _ => view! { <Redirect path="/login"/> }.into_any(),
                }
            })}
        </Suspense>
    }
}
