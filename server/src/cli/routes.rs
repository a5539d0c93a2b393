//! `slicehub routes`: every page path and server-function path the portal serves, as
//! JSON. The authorization matrix test compares it with its own table, so a new route
//! that nobody decided access for fails the tests.

use leptos_axum::generate_route_list;
use slicehub_app::App;

pub fn run() {
    let mut pages: Vec<String> = generate_route_list(App)
        .iter()
        .map(|r| r.path().to_string())
        .collect();
    pages.sort();
    pages.dedup();
    let mut functions: Vec<String> = leptos::server_fn::axum::server_fn_paths()
        .map(|(path, method)| format!("{method} {path}"))
        .collect();
    functions.sort();
    let endpoints = ["/healthz", crate::http::handlers::metrics::PATH, crate::http::handlers::session_events::PATH, crate::http::handlers::usage_csv::PATH, crate::http::handlers::report_csv::PATH, crate::http::handlers::audit_csv::PATH, "/user/{*rest}", "/login/oidc/{name}", "/login/oidc/{name}/callback", "/logout/oidc/{name}", "/lti/login", "/lti/continue", "/lti/jwks"];
    let value = serde_json::json!({
        "pages": pages,
        "server_functions": functions,
        "endpoints": endpoints,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    );
}
