use leptos::prelude::*;
use leptos_meta::Title;

/// Shown for any path no route matches; the server answers it with HTTP 404.
#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Page not found"/>
        <section class="card notfound">
            <p class="eyebrow">"404"</p>
            <h1>"There is no page here."</h1>
            <p class="muted">"The address may be mistyped, or the page may have moved."</p>
            <a class="btn btn-primary" href="/">"Back to the overview"</a>
        </section>
    }
}
