//! The REST API, `/api/v1/…`: what the pages do, for scripts, with personal access
//! tokens. Each handler checks its token's scope, then runs the page's own server function
//! for the token's owner (`answer`), so the one guard decides for both. The OpenAPI 3.1
//! document is generated from the handlers (`utoipa`) and served at
//! `/api/v1/openapi.json`, with a page of it at `/api/v1/docs`.

mod account;
mod admin;
pub mod answer;
mod courses;
mod docs_page;
pub mod rate_limit;
mod sessions;
pub mod streams;

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{OpenApi as Document, Server};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use answer::ApiError;
use crate::serve::AppState;

pub const PREFIX: &str = "/api/v1";
/// Answered to everyone, without a token: the document and its page.
pub const OPENAPI_PATH: &str = "/openapi.json";
pub const DOCS_PATH: &str = "/docs";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "SliceHub API",
        version = "1",
        description = "What the portal's pages do, for scripts. Send a personal access token \
            (made on your account page) as `Authorization: Bearer shp_…`. A token acts for \
            its owner, never beyond the owner's own rights, and only within its scopes: `read` \
            for every read, `sessions` to start and stop GPU sessions, `course:manage` for \
            rosters, policy and bookings of courses you teach, `admin` for accounts, courses \
            and GPUs. Errors are `{\"status\": N, \"message\": \"…\"}` with the pages' words. \
            The session history and the audit log answer a page at a time: pass `next_cursor` \
            back as `cursor`."
    ),
    modifiers(&TokenScheme),
    tags(
        (name = "sessions", description = "GPU sessions: claim, follow, keep, stop"),
        (name = "courses", description = "Courses, rosters, policy, class view, bookings"),
        (name = "reports", description = "Usage in slice-hours"),
        (name = "admin", description = "Accounts, GPUs, every session, the audit log"),
        (name = "account", description = "Your account and tokens"),
    )
)]
struct ApiDoc;

struct TokenScheme;

impl Modify for TokenScheme {
    fn modify(&self, openapi: &mut Document) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("shp_…").build()),
        );
    }
}

fn documented() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(sessions::list, sessions::start))
        .routes(routes!(sessions::history))
        .routes(routes!(sessions::events))
        .routes(routes!(sessions::one, sessions::stop))
        .routes(routes!(sessions::keep))
        .routes(routes!(sessions::logs))
        .routes(routes!(sessions::activity))
        .routes(routes!(sessions::launch_options))
        .routes(routes!(courses::list, courses::create))
        .routes(routes!(courses::one))
        .routes(routes!(courses::check_roster))
        .routes(routes!(courses::import_roster))
        .routes(routes!(courses::drop_student))
        .routes(routes!(courses::reset_student_password))
        .routes(routes!(courses::make_instructor))
        .routes(routes!(courses::get_policy, courses::put_policy))
        .routes(routes!(courses::extra_hours))
        .routes(routes!(courses::class_view))
        .routes(routes!(courses::usage_csv))
        .routes(routes!(courses::list_bookings, courses::book))
        .routes(routes!(courses::cancel_booking))
        .routes(routes!(admin::usage))
        .routes(routes!(admin::usage_csv))
        .routes(routes!(admin::users, admin::add_user))
        .routes(routes!(admin::reset_password))
        .routes(routes!(admin::set_disabled))
        .routes(routes!(admin::gpus))
        .routes(routes!(admin::drain))
        .routes(routes!(admin::status))
        .routes(routes!(admin::all_sessions))
        .routes(routes!(admin::audit_log))
        .routes(routes!(admin::audit_csv))
        .routes(routes!(account::me))
        .routes(routes!(account::list_tokens))
        .routes(routes!(account::revoke_token))
}

/// The OpenAPI document as served.
pub fn document() -> Document {
    served(documented().split_for_parts().1)
}

fn served(mut doc: Document) -> Document {
    doc.servers = Some(vec![Server::new(PREFIX)]);
    doc
}

/// The routes under [`PREFIX`], rate-limited by `limit` (shared with the hub API), with
/// JSON errors whatever answered.
pub fn router(limit: rate_limit::Layer) -> Router<AppState> {
    let (routes, doc) = documented().split_for_parts();
    let doc = served(doc);
    let json: Arc<str> = served_json(&doc).into();
    let page: Arc<str> = docs_page::render(&doc).into();
    routes
        .layer(limit)
        .route(OPENAPI_PATH, get(move || serve(json.clone(), "application/json")))
        .route(DOCS_PATH, get(move || serve(page.clone(), "text/html; charset=utf-8")))
        .fallback(|| async { ApiError::new(axum::http::StatusCode::NOT_FOUND, "There is no such API route; see /api/v1/docs.") })
        .layer(axum::middleware::from_fn(json_errors))
}

/// The document as served: every answer described (OpenAPI requires it; utoipa leaves
/// out the empty ones) and tuple lists open-ended (`items: {}`, not `false`), which
/// client generators read.
fn served_json(doc: &Document) -> String {
    let mut value = serde_json::to_value(doc).unwrap_or_default();
    if let Some(paths) = value.get_mut("paths").and_then(|p| p.as_object_mut()) {
        for operation in paths.values_mut().filter_map(|item| item.as_object_mut()).flat_map(|item| item.values_mut()) {
            let Some(responses) = operation.get_mut("responses").and_then(|r| r.as_object_mut()) else {
                continue;
            };
            for (status, response) in responses.iter_mut() {
                if let Some(response) = response.as_object_mut() {
                    let words = match status.as_str() {
                        "4XX" => "Refused: the words say why",
                        s if s.starts_with('2') => "Done",
                        _ => "An answer",
                    };
                    response.entry("description").or_insert_with(|| serde_json::Value::String(words.into()));
                }
            }
        }
    }
    open_tuple_items(&mut value);
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

fn open_tuple_items(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(fields) => {
            if fields.get("items") == Some(&serde_json::Value::Bool(false)) {
                fields.insert("items".into(), serde_json::json!({}));
            }
            fields.values_mut().for_each(open_tuple_items);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(open_tuple_items),
        _ => {}
    }
}

async fn serve(body: Arc<str>, content_type: &'static str) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static(content_type))], body.to_string()).into_response()
}

/// Refusals made outside the handlers (the CSV downloads' words, the rate limit, a body
/// that is not JSON) answered in the API's JSON shape.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
    let words = String::from_utf8_lossy(&bytes).trim().to_string();
    let message = match status.as_u16() {
        429 => "Too many requests from this token or address; wait a moment and try again.".to_string(),
        _ if words.is_empty() || words.len() > 500 => status.canonical_reason().unwrap_or("Refused").to_string(),
        _ => words,
    };
    let mut answer = ApiError::new(status, message).into_response();
    for name in [header::RETRY_AFTER, header::HeaderName::from_static("x-ratelimit-after")] {
        if let Some(value) = parts.headers.get(&name) {
            answer.headers_mut().insert(name, value.clone());
        }
    }
    answer
}
