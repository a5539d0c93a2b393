use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_location;

use crate::api::auth::{current_user, Logout};
use crate::shell::CurrentUser;
use crate::views::Me;

/// Header with the brand and the caller's navigation, the page, and a footer. Under
/// 720 px the navigation folds behind a menu button.
#[component]
pub fn Layout(children: Children) -> impl IntoView {
    // Asked again on every navigation, so signing in or out shows at once.
    let path = use_location().pathname;
    let user = Resource::new(move || path.get(), |_| current_user());
    provide_context(CurrentUser(user));
    // Pages no route matches are rendered without the portal's services, so the caller
    // is unknown there: show neither navigation nor "Sign in", and ask again from the
    // browser, once.
    let asked_again = StoredValue::new(false);
    Effect::new(move |_| {
        if matches!(user.get(), Some(Err(_))) && !asked_again.get_value() {
            asked_again.set_value(true);
            user.refetch();
        }
    });
    let menu_open = RwSignal::new(false);
    Effect::new(move |_| {
        path.track();
        menu_open.set(false);
    });
    view! {
        <a class="skip-link" href="#main">"Skip to the page"</a>
        <header class="topbar" class:menu-open=move || menu_open.get()>
            <div class="topbar-inner">
                <a class="brand" href="/">
                    <span class="brand-mark" aria-hidden="true">
                        <i></i><i></i><i></i><i></i>
                    </span>
                    "SliceHub"
                </a>
                <button type="button" class="menu-button" aria-controls="topbar-menu"
                    aria-expanded=move || menu_open.get().to_string()
                    on:click=move |_| menu_open.update(|o| *o = !*o)
                >
                    <span class="menu-icon" aria-hidden="true"><i></i><i></i><i></i></span>
                    "Menu"
                </button>
                <div class="topbar-menu" id="topbar-menu">
                    <Transition fallback=|| ()>
                        {move || Suspend::new(async move {
                            match user.await {
                                Ok(Some(me)) => view! { <SignedInNav me/> }.into_any(),
                                Err(_) => ().into_any(),
                                Ok(None) => view! {
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
            </div>
        </header>
        <main class="page" id="main">{children()}</main>
        <footer class="footer">
            "SliceHub — MIG-aware GPU sharing for classrooms. "
            <a href="/healthz">"Health (JSON)"</a>
        </footer>
    }
}

#[component]
fn SignedInNav(me: Me) -> impl IntoView {
    let admin = me.is_admin;
    let reports = admin || me.teaches_any();
    view! {
        <nav class="nav" aria-label="Main">
            <A href="/" exact=true>"Overview"</A>
            <A href="/sessions">"Sessions"</A>
            <A href="/courses">"Courses"</A>
            {reports.then(|| view! { <A href="/reports">"Reports"</A> })}
            {admin.then(|| view! {
                <A href="/admin/sessions">"All sessions"</A>
                <A href="/gpus">"GPUs"</A>
                <A href="/admin/users">"Users"</A>
                <A href="/admin/audit">"Audit"</A>
                <A href="/admin/lms">"LMS"</A>
                <A href="/status">"Status"</A>
            })}
        </nav>
        <div class="who">
            <A href="/account" attr:class="who-name">{me.display_name.clone()}</A>
            <SignOutButton class="btn btn-ghost btn-small"/>
        </div>
    }
}

/// Signs out: the server ends the session and sends the browser to the sign-in page. Who
/// is signed in is asked again at once, since that page may be the one already open.
#[component]
pub fn SignOutButton(class: &'static str) -> impl IntoView {
    let logout = ServerAction::<Logout>::new();
    let user = expect_context::<CurrentUser>().0;
    Effect::new(move |_| {
        if matches!(logout.value().get(), Some(Ok(()))) {
            user.refetch();
        }
    });
    view! {
        <ActionForm action=logout attr:class="inline-form">
            <button class=class type="submit">"Sign out"</button>
        </ActionForm>
    }
}
