use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_location;

use crate::api::auth::{current_user, Logout};
use crate::shell::CurrentUser;
use crate::views::Me;

/// Header with the brand and the caller's navigation, the page, and a footer.
#[component]
pub fn Layout(children: Children) -> impl IntoView {
    // Asked again on every navigation, so signing in or out shows at once.
    let path = use_location().pathname;
    let user = Resource::new(move || path.get(), |_| current_user());
    provide_context(CurrentUser(user));
    view! {
        <header class="topbar">
            <div class="topbar-inner">
                <a class="brand" href="/">
                    <span class="brand-mark" aria-hidden="true">
                        <i></i><i></i><i></i><i></i>
                    </span>
                    "SliceHub"
                </a>
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        match user.await.ok().flatten() {
                            Some(me) => view! { <SignedInNav me/> }.into_any(),
                            None => view! {
                                <nav class="nav" aria-label="Main">
                                    <A href="/" exact=true>"Overview"</A>
                                </nav>
                                <a class="btn btn-primary btn-small signin" href="/login">"Sign in"</a>
                            }
                            .into_any(),
                        }
                    })}
                </Transition>
            </div>
        </header>
        <main class="page">{children()}</main>
        <footer class="footer">
            "SliceHub — MIG-aware GPU sharing for classrooms. "
            <a href="/healthz">"Health (JSON)"</a>
        </footer>
    }
}

#[component]
fn SignedInNav(me: Me) -> impl IntoView {
    let logout = ServerAction::<Logout>::new();
    let admin = me.is_admin;
    view! {
        <nav class="nav" aria-label="Main">
            <A href="/" exact=true>"Overview"</A>
            <A href="/sessions">"Sessions"</A>
            <A href="/courses">"Courses"</A>
            {admin.then(|| view! {
                <A href="/gpus">"GPUs"</A>
                <A href="/admin/users">"Users"</A>
                <A href="/status">"Status"</A>
            })}
        </nav>
        <div class="who">
            <A href="/account" attr:class="who-name">{me.display_name.clone()}</A>
            <ActionForm action=logout attr:class="inline-form">
                <button class="btn btn-ghost btn-small" type="submit">"Sign out"</button>
            </ActionForm>
        </div>
    }
}
