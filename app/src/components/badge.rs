use leptos::prelude::*;

/// A short word on a coloured pill; `kind` picks the colour (`ok`, `warn`, `down`, `off`,
/// `info`, `role`, `admin`, `sim`, …).
#[component]
pub fn Badge(
    #[prop(into)] kind: String,
    #[prop(into)] text: String,
    #[prop(optional, into)] title: Option<String>,
) -> impl IntoView {
    view! { <span class=format!("badge badge-{kind}") title=title>{text}</span> }
}
