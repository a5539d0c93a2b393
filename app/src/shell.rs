use leptos::prelude::*;
use leptos_meta::{provide_meta_context, Meta, MetaTags, Stylesheet, Title};
use crate::error::AppError;
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{path, SsrMode};

use crate::components::layout::Layout;
use crate::pages::admin::audit::AuditPage;
use crate::pages::admin::operations::OperationsPage;
use crate::pages::admin::lms::LmsPage;
use crate::pages::admin::users::UsersPage;
use crate::pages::auth::{account::AccountPage, login::LoginPage};
use crate::pages::courses::{bookings::BookingsPage, class::ClassPage, course::CoursePage, list::CoursesPage, policy::PolicyPage};
use crate::pages::reports::ReportsPage;
use crate::pages::sessions::SessionsPage;
use crate::pages::{gpus::GpusPage, home::HomePage, not_found::NotFound, status::StatusPage};

/// Shows a note with a Reload button when the wasm bundle dies: a Rust panic ends in a
/// `WebAssembly.RuntimeError` ("unreachable"), thrown out of `hydrate()` (an unhandled
/// rejection of the hydration script's promise) or out of a later event handler. Without
/// it a page whose hydration failed looks right and silently does nothing. Written
/// without `<` and `&`: it goes into the document as it is.
const STOPPED_SCRIPT: &str = r#"(function () {
  function stopped(error) {
    if (typeof WebAssembly !== "object" || !(error instanceof WebAssembly.RuntimeError)) { return; }
    if (document.getElementById("page-stopped") !== null) { return; }
    var app = document.querySelector(".app");
    var started = app !== null ? app.getAttribute("data-hydrated") === "true" : false;
    var note = document.createElement("div");
    note.id = "page-stopped";
    note.className = "page-stopped";
    note.setAttribute("role", "alert");
    var text = document.createElement("span");
    text.textContent = started
      ? "This page stopped working: its buttons and updates no longer respond. Reload it to go on."
      : "This page could not start: what it shows may be right, but its buttons and updates do nothing. Reload it.";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "btn btn-primary btn-small";
    button.textContent = "Reload";
    button.addEventListener("click", function () { window.location.reload(); });
    note.appendChild(text);
    note.appendChild(button);
    document.body.appendChild(note);
  }
  window.addEventListener("error", function (event) { stopped(event.error); });
  window.addEventListener("unhandledrejection", function (event) { stopped(event.reason); });
})();"#;

/// The HTML document around the app, rendered on the server only.
///
/// What `<body>` holds after `<App/>` is never hydrated (hydration walks only what `App`
/// renders, from the body's first child on), so the `<noscript>` note stays after it.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <script>{STOPPED_SCRIPT}</script>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
                <noscript>
                    <p class="noscript-note">
                        "JavaScript is off: pages show what they read when they were loaded and "
                        "do not update by themselves, and some buttons need JavaScript."
                    </p>
                </noscript>
            </body>
        </html>
    }
}

/// The signed-in user (or `None`), provided by the layout for every page.
#[derive(Clone, Copy)]
pub struct CurrentUser(pub Resource<Result<Option<crate::views::Me>, AppError>>);

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
                        <Route path=path!("") view=HomePage ssr=SsrMode::InOrder/>
                        <Route path=path!("/login") view=LoginPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/account") view=AccountPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/courses") view=CoursesPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/sessions") view=SessionsPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/courses/:code") view=CoursePage ssr=SsrMode::InOrder/>
                        <Route path=path!("/courses/:code/policy") view=PolicyPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/courses/:code/bookings") view=BookingsPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/courses/:code/class") view=ClassPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/admin/users") view=UsersPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/admin/audit") view=AuditPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/admin/lms") view=LmsPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/admin/sessions") view=OperationsPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/reports") view=ReportsPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/gpus") view=GpusPage ssr=SsrMode::InOrder/>
                        <Route path=path!("/status") view=StatusPage ssr=SsrMode::InOrder/>
                    </Routes>
                </Layout>
            </div>
        </Router>
    }
}
