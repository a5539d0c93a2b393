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
    // The REST API as its OpenAPI document describes it, and the document and its page.
    let prefix = crate::api_v1::PREFIX;
    let mut api: Vec<String> = crate::api_v1::document()
        .paths
        .paths
        .iter()
        .flat_map(|(path, item)| {
            [("GET", item.get.is_some()), ("POST", item.post.is_some()), ("PUT", item.put.is_some()), ("DELETE", item.delete.is_some())]
                .into_iter()
                .filter(|(_, there)| *there)
                .map(move |(method, _)| format!("{method} {prefix}{path}"))
        })
        .chain([crate::api_v1::OPENAPI_PATH, crate::api_v1::DOCS_PATH].map(|p| format!("GET {prefix}{p}")))
        .collect();
    api.sort();
    let value = serde_json::json!({
        "pages": pages,
        "server_functions": functions,
        "endpoints": endpoints,
        "api": api,
        "hub": crate::hub_api::ROUTES,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    );
}
