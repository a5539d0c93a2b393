use leptos::prelude::*;
use leptos_meta::Title;

/// Shown for any path no route matches; the server answers it with HTTP 404.
#[component]
pub fn NotFound() -> impl IntoView {
    view! {
        <Missing title="Page not found" heading="There is no page here.">
            "The address may be mistyped, or the page may have moved."
        </Missing>
    }
}

/// A 404 page: what is missing, why that may be, and the way back.
#[component]
pub fn Missing(
    #[prop(into)] title: String,
    #[prop(into)] heading: String,
    #[prop(optional, into)] back: Option<(String, String)>,
    children: Children,
) -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    let (href, label) = back.unwrap_or_else(|| ("/".into(), "Back to the overview".into()));
    view! {
        <Title text=title/>
        <section class="card notfound">
            <p class="eyebrow">"404"</p>
            <h1>{heading}</h1>
            <p class="muted">{children()}</p>
            <a class="btn btn-primary" href=href>{label}</a>
        </section>
    }
}
