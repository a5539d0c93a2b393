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
    let path = request.uri().path();
    // The REST API answers its own JSON errors (`api_v1`).
    if !path.starts_with("/api/") || crate::http::api_tokens::takes_tokens(path) {
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
    let error = error_of(parts.status, &bytes);
    if let Ok(status) = StatusCode::from_u16(error.status) {
        if status.is_client_error() || status.is_server_error() {
            parts.status = status;
        }
    }
    answer(parts, &error, own_client)
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

/// An error answer as an [`AppError`]: a server function's own, or the plain words of a
/// refusal made before one ran (`form_fields`, a server function that does not exist).
fn error_of(status: StatusCode, body: &[u8]) -> AppError {
    serde_json::from_slice::<AppError>(body)
        .unwrap_or_else(|_| AppError::new(status.as_u16(), String::from_utf8_lossy(body).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_in_words_read_as_errors_of_their_status() {
        let sent = AppError { status: 409, message: "you already have 1 session".into() };
        assert_eq!(error_of(StatusCode::INTERNAL_SERVER_ERROR, &serde_json::to_vec(&sent).unwrap()), sent);
        assert_eq!(
            error_of(StatusCode::PAYLOAD_TOO_LARGE, too_large().as_bytes()),
            AppError { status: 413, message: too_large() }
        );
    }
}
