use leptos::prelude::*;
use leptos_meta::{provide_meta_context, Meta, MetaTags, Stylesheet, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;

use crate::components::layout::Layout;
use crate::pages::admin::audit::AuditPage;
use crate::pages::admin::operations::OperationsPage;
use crate::pages::admin::users::UsersPage;
use crate::pages::auth::{account::AccountPage, login::LoginPage};
use crate::pages::courses::{bookings::BookingsPage, class::ClassPage, course::CoursePage, list::CoursesPage, policy::PolicyPage};
use crate::pages::reports::ReportsPage;
use crate::pages::sessions::SessionsPage;
use crate::pages::{gpus::GpusPage, home::HomePage, not_found::NotFound, status::StatusPage};

/// The HTML document around the app, rendered on the server only.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The signed-in user (or `None`), provided by the layout for every page.
#[derive(Clone, Copy)]
pub struct CurrentUser(pub Resource<Result<Option<crate::views::Me>, ServerFnError>>);

/// True once the wasm bundle has taken over the page; buttons wait for it.
#[derive(Clone, Copy)]
pub struct Hydrated(pub ReadSignal<bool>);

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let (hydrated, set_hydrated) = signal(false);
    // Effects run only in the browser, so this flips exactly when hydration is done.
    Effect::new(move |_| set_hydrated.set(true));
    provide_context(Hydrated(hydrated));

    view! {
        <Stylesheet id="leptos" href="/pkg/slicehub.css"/>
        <Title formatter=|page: String| {
            if page.is_empty() { "SliceHub".to_string() } else { format!("{page} · SliceHub") }
        }/>
        <Meta name="description" content="SliceHub: MIG slices of NVIDIA GPUs for a whole class, with JupyterLab in the browser."/>
        <Router>
            <div class="app" data-hydrated=move || hydrated.get().to_string()>
                <Layout>
                    <Routes fallback=NotFound>
                        <Route path=path!("") view=HomePage/>
                        <Route path=path!("/login") view=LoginPage/>
                        <Route path=path!("/account") view=AccountPage/>
                        <Route path=path!("/courses") view=CoursesPage/>
                        <Route path=path!("/sessions") view=SessionsPage/>
                        <Route path=path!("/courses/:code") view=CoursePage/>
                        <Route path=path!("/courses/:code/policy") view=PolicyPage/>
                        <Route path=path!("/courses/:code/bookings") view=BookingsPage/>
                        <Route path=path!("/courses/:code/class") view=ClassPage/>
                        <Route path=path!("/admin/users") view=UsersPage/>
                        <Route path=path!("/admin/audit") view=AuditPage/>
                        <Route path=path!("/admin/sessions") view=OperationsPage/>
                        <Route path=path!("/reports") view=ReportsPage/>
                        <Route path=path!("/gpus") view=GpusPage/>
                        <Route path=path!("/status") view=StatusPage/>
                    </Routes>
                </Layout>
            </div>
        </Router>
    }
}
