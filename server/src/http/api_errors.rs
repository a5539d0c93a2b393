//! Plain answers from server functions (`/api/…`) whatever went wrong. Every server
//! function answers an error as an [`AppError`] (`slicehub_app::error`: its status and
//! words are set there, for core's errors and the framework's alike). The portal's own
//! browser code (it sends `Accept: application/json`) decodes that; every other client
//! gets the words alone, as text.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

pub use slicehub_app::error::{too_large, BODY_LIMIT};
use slicehub_app::error::AppError;

/// Error answers are short; a longer one is not looked into.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

pub async fn plain(request: Request, next: Next) -> Response {
    if !request.uri().path().starts_with("/api/") {
        return next.run(request).await;
    }
    let own_client = request
        .headers()
        .get(header::ACCEPT)
        .is_some_and(|a| a.as_bytes() == b"application/json");
    let response = next.run(request).await;
    if response.status().is_success() || response.status().is_redirection() {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, ERROR_BODY_LIMIT).await else {
        // An error answer this long repeats something the caller sent. A refusal (4xx)
        // stays one, in words of its own; anything else is the portal's failure.
        let message = if parts.status.is_client_error() {
            "The request was refused: a value in it is too long or malformed; shorten it and try again."
        } else {
            parts.status = StatusCode::INTERNAL_SERVER_ERROR;
            "The portal could not answer that."
        };
        let error = AppError { status: parts.status.as_u16(), message: message.to_string() };
        return answer(parts, &error, own_client);
    };
    if own_client {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let message = words_of(&bytes);
    plain_text(parts, message)
}

/// `error` as the portal's browser code reads it (JSON), or its words alone.
fn answer(parts: axum::http::response::Parts, error: &AppError, own_client: bool) -> Response {
    if !own_client {
        return plain_text(parts, error.message.clone());
    }
    let mut parts = parts;
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let body = serde_json::to_string(error).unwrap_or_default();
    Response::from_parts(parts, Body::from(body))
}

fn plain_text(mut parts: axum::http::response::Parts, words: String) -> Response {
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    Response::from_parts(parts, Body::from(words))
}

/// The words of an error answer: an [`AppError`]'s message, or the text as it came (the
/// framework's answer for a server function that does not exist).
fn words_of(body: &[u8]) -> String {
    match serde_json::from_slice::<AppError>(body) {
        Ok(error) => error.message,
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_clients_read_the_words_alone() {
        let body = serde_json::to_vec(&AppError { status: 409, message: "you already have 1 session".into() }).unwrap();
        assert_eq!(words_of(&body), "you already have 1 session");
        assert_eq!(words_of(b"Could not find a server function"), "Could not find a server function");
    }
}
