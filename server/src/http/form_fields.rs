//! The boundary for every server function's text: before Leptos decodes a form body
//! (`POST /api/…`), each field is checked with core's one rule for free text
//! (`check_text`): bounded in length, and without control characters (a NUL, which
//! PostgreSQL refuses to store, among them) except line breaks and tabs where a person may
//! type several lines. A refusal is a 400 with words that name the field and never repeat
//! its value, so no later step (a database lookup, an error message that repeats the
//! value) meets such text. Core checks the same values again where they are used.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use slicehub_core::auth::validate::{check_text, Lines};

use crate::http::api_errors::{too_large, BODY_LIMIT};

/// Fields that are not text kept or shown by the portal: passwords (never stored, any
/// character allowed, bounded by core) and the roster file (base64 of a file that core
/// reads and checks cell by cell, with its own 5 MB limit).
const NOT_TEXT: [&str; 5] = ["password", "current", "new_password", "confirm", "csv_base64"];

/// The most characters and the line rule for a field.
fn limits(field: &str) -> (usize, Lines) {
    match field {
        // Typed into a text box; the student reads it.
        "reason" => (1000, Lines::Many),
        // Split into words at spaces, tabs and line breaks (core allows 4096 bytes).
        "command" => (4096, Lines::Many),
        // A list of image references.
        "images" => (4096, Lines::One),
        // The page a sign-in returns to: a deep link with its query.
        "next" => (4096, Lines::One),
        _ => (1000, Lines::One),
    }
}

pub async fn checked(request: Request, next: Next) -> Response {
    if crate::http::api_tokens::takes_tokens(request.uri().path()) {
        return api_checked(request, next).await;
    }
    if *request.method() != Method::POST || !request.uri().path().starts_with("/api/") {
        return next.run(request).await;
    }
    // A body over the limit is read up to the limit before the 413 (as the decoder after
    // this did): answering at once, before reading any of it, breaks the client's write of
    // the rest instead of giving it the words.
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(e) if e.to_string().contains("length limit") => {
            return (StatusCode::PAYLOAD_TOO_LARGE, too_large()).into_response();
        }
        Err(_) => {
            return (StatusCode::BAD_REQUEST, "The request could not be read; try again.").into_response();
        }
    };
    if let Some(problem) = problem(&bytes) {
        return (StatusCode::BAD_REQUEST, problem).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The same rule for the APIs: the path's segments, the query's fields, and the text
/// fields of a JSON body (a CSV body is core's, cell by cell).
async fn api_checked(request: Request, next: Next) -> Response {
    let path_problem = request.uri().path().split('/').find_map(|segment| {
        let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
        check_text("the address", &decoded, 1000, Lines::One).err()
    });
    let query_problem = request.uri().query().and_then(|q| problem(q.as_bytes()));
    if let Some(problem) = path_problem.or(query_problem) {
        return crate::api_v1::ApiError::new(StatusCode::BAD_REQUEST, problem).into_response();
    }
    // As axum's `Json` takes it: `application/json` or any `+json`, in any case.
    let json = request
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .is_some_and(|kind| kind == "application/json" || (kind.starts_with("application/") && kind.ends_with("+json")));
    if !json {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(_) => return crate::api_v1::ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, too_large()).into_response(),
    };
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) {
        let mut text = Vec::new();
        strings_of("", &value, &mut text);
        let fields = text.into_iter().map(|(k, v)| (std::borrow::Cow::Owned(k), std::borrow::Cow::Borrowed(v)));
        if let Some(problem) = fields_problem(fields) {
            return crate::api_v1::ApiError::new(StatusCode::BAD_REQUEST, problem).into_response();
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// Every text in a JSON value with the name of the field it is in (a list's items take
/// the list's name), however deep; `fields_problem` checks odd names themselves.
fn strings_of<'a>(field: &str, value: &'a serde_json::Value, out: &mut Vec<(String, &'a str)>) {
    match value {
        serde_json::Value::String(text) => out.push((field.to_string(), text)),
        serde_json::Value::Array(items) => items.iter().for_each(|item| strings_of(field, item, out)),
        serde_json::Value::Object(fields) => fields.iter().for_each(|(name, item)| strings_of(name, item, out)),
        _ => {}
    }
}

/// What is wrong with the first bad field of a form body, in words.
fn problem(body: &[u8]) -> Option<String> {
    fields_problem(form_urlencoded::parse(body))
}

fn fields_problem<'a>(fields: impl Iterator<Item = (std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>) -> Option<String> {
    for (key, value) in fields {
        if NOT_TEXT.contains(&key.as_ref()) {
            continue;
        }
        let (max_chars, lines) = limits(&key);
        let named = key.len() <= 64 && !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let what = if named { format!("the field “{key}”") } else { "a field of the request".to_string() };
        if !named {
            // A name no form has: its own text is checked like a value.
            if let Err(message) = check_text("the name of a field", &key, 64, Lines::One) {
                return Some(message);
            }
        }
        if let Err(message) = check_text(&what, &value, max_chars, lines) {
            return Some(message);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_pages_of_text_are_refused_with_the_field_named() {
        assert_eq!(problem(b"username=alice&password=x%00y"), None, "passwords are core's");
        assert_eq!(problem(b"code=CS-101&reason=line+one%0Aline+two"), None, "a reason may have lines");
        assert_eq!(problem(b"command=python+-c+%22print(1)%22%0A"), None);
        let nul = problem(b"username=a%00&password=x").unwrap();
        assert!(nul.starts_with("The field “username” holds a control character (U+0000)"), "{nul}");
        let line = problem(b"code=CS%0A101").unwrap();
        assert!(line.contains("“code”") && line.contains("U+000A"), "{line}");
        let long = format!("course_id=1&profile={}&image=x", "p".repeat(100_000));
        let long = problem(long.as_bytes()).unwrap();
        assert_eq!(long, "The field “profile” may be at most 1000 characters long.");
        assert!(problem(format!("csv_base64={}", "QUJD".repeat(500_000)).as_bytes()).is_none());
        let odd = problem(b"na%00me=x").unwrap();
        assert!(odd.contains("name of a field"), "{odd}");
        assert_eq!(problem(b"x=%ZZ&y=%E2%82"), None, "broken encodings are the decoder's to refuse");
    }
}
