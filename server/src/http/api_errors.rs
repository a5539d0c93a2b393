//! Plain answers from server functions (`/api/…`) whatever went wrong. Leptos answers a
//! request it cannot decode (a field missing, given twice, not a number, a body over the
//! limit) with HTTP 500 and the decoder's words behind a framework prefix (`Args|…`). Here
//! such answers become 400, or 413 for a body over [`BODY_LIMIT`], with words for a
//! person. The portal's own browser code (it sends `Accept: application/json`) decodes
//! errors as `ServerError|message`, so it gets that form; every other client gets the
//! message alone.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

/// The largest request body the portal reads: a 5 MB roster file, base64- and
/// form-encoded, fits.
pub const BODY_LIMIT: usize = 10 * 1024 * 1024;
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
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
        let message = if parts.status.is_client_error() {
            "The request was refused: a value in it is too long or malformed; shorten it and try again."
        } else {
            parts.status = StatusCode::INTERNAL_SERVER_ERROR;
            "The portal could not answer that."
        };
        let body = if own_client { format!("ServerError|{message}") } else { message.to_string() };
        return Response::from_parts(parts, Body::from(body));
    };
    let (status, message) = classify(parts.status, &String::from_utf8_lossy(&bytes));
    parts.status = status;
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    let body = if own_client {
        format!("ServerError|{message}")
    } else {
        message
    };
    Response::from_parts(parts, Body::from(body))
}

/// The words for a request body over [`BODY_LIMIT`].
pub fn too_large() -> String {
    format!(
        "The request is too large: the portal reads at most {} MB (a roster file may be at most 5 MB).",
        BODY_LIMIT / (1024 * 1024)
    )
}

/// The status and plain words for an error answer.
fn classify(status: StatusCode, text: &str) -> (StatusCode, String) {
    let Some((kind, detail)) = text.split_once('|') else {
        return (status, text.to_string());
    };
    match kind {
        "ServerError" => (status, detail.to_string()),
        "Deserialization" if detail.contains("length limit") => (StatusCode::PAYLOAD_TOO_LARGE, too_large()),
        "Args" | "MissingArg" => (StatusCode::BAD_REQUEST, fields_message(detail)),
        _ => (
            StatusCode::BAD_REQUEST,
            "The request could not be read; reload the page and try again.".to_string(),
        ),
    }
}

/// What was wrong with the form fields, from the decoder's words, without them.
fn fields_message(detail: &str) -> String {
    let field = |marker: char| {
        detail
            .split(marker)
            .nth(1)
            .filter(|f| !f.is_empty() && f.len() <= 64 && f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    };
    if detail.starts_with("missing field") {
        if let Some(name) = field('`') {
            return format!("The field `{name}` is missing.");
        }
    }
    if detail.starts_with("Multiple values for one key") {
        if let Some(name) = field('"') {
            return format!("The field `{name}` was given more than once.");
        }
    }
    if ["invalid digit", "number too", "invalid float", "cannot parse"]
        .iter()
        .any(|m| detail.contains(m))
    {
        return "A number field holds something that is not a whole number in range.".to_string();
    }
    "The request's fields are missing or malformed.".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_errors_become_plain_400_and_413() {
        let (s, m) = classify(StatusCode::INTERNAL_SERVER_ERROR, "Args|missing field `course_id`");
        assert_eq!((s, m.as_str()), (StatusCode::BAD_REQUEST, "The field `course_id` is missing."));
        let (s, m) = classify(StatusCode::INTERNAL_SERVER_ERROR, "Args|invalid digit found in string");
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert!(m.contains("not a whole number"), "{m}");
        let (_, m) = classify(StatusCode::INTERNAL_SERVER_ERROR, "Args|Multiple values for one key: \"course_id\"");
        assert_eq!(m, "The field `course_id` was given more than once.");
        let (s, _) = classify(StatusCode::INTERNAL_SERVER_ERROR, "Deserialization|length limit exceeded");
        assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);
        let (s, m) = classify(StatusCode::CONFLICT, "ServerError|you already have 1 session");
        assert_eq!((s, m.as_str()), (StatusCode::CONFLICT, "you already have 1 session"));
        let (_, m) = classify(StatusCode::INTERNAL_SERVER_ERROR, "Args|missing field `x; drop table`");
        assert_eq!(m, "The request's fields are missing or malformed.", "odd names are not echoed");
    }
}
