pub mod account;
pub mod login;
pub mod tokens;

use leptos::prelude::*;
use leptos_router::components::Redirect;
use leptos_router::hooks::use_location;

use crate::shell::CurrentUser;
use crate::views::Me;

/// Renders `render` for a signed-in user; anyone else is sent to the sign-in page, which
/// brings them back here afterwards (`/login?next=…`).
#[component]
pub fn RequireUser(render: fn(Me) -> AnyView) -> impl IntoView {
    let user = expect_context::<CurrentUser>().0;
    let location = use_location();
    let (pathname, search) = (location.pathname, location.search);
    let login = move || {
        let path = pathname.get_untracked();
        let search = search.get_untracked();
        let here = if search.is_empty() { path } else { format!("{path}?{search}") };
        crate::api::auth::login_path_for(&here)
    };
    view! {
        <Suspense fallback=|| view! { <div class="card skeleton">"Loading…"</div> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(Some(me)) => render(me),
                    _ => view! { <Redirect path=login()/> }.into_any(),
                }
            })}
        </Suspense>
    }
}
