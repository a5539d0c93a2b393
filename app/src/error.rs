//! The one error every server function answers with: an HTTP status and words for the
//! person who clicked. Core's errors become one through `From` (so `?` works in server
//! functions), the framework's own failures (a field missing, a body over the limit, the
//! portal not answering) through [`FromServerFnError`]; nothing else reaches a page.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

/// The largest request body the portal reads: a 5 MB roster file, base64- and
/// form-encoded, fits.
pub const BODY_LIMIT: usize = 10 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AppError {
    pub status: u16,
    pub message: String,
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AppError {}

impl AppError {
    /// An answer with `status` and words meant for the person who clicked. The server's
    /// `api_errors` layer answers with its status (a form sent without JavaScript is
    /// redirected back instead).
    pub fn new(status: u16, message: impl Into<String>) -> AppError {
        AppError { status, message: message.into() }
    }

    /// The portal's own failure; the words say nothing of what failed inside.
    pub fn internal(what: &str) -> AppError {
        #[cfg(feature = "ssr")]
        tracing::error!(what, "a server function could not run");
        let _ = what;
        AppError::new(500, "The portal could not answer that; try again in a moment.")
    }
}

/// The words for a request body over [`BODY_LIMIT`].
pub fn too_large() -> String {
    format!(
        "The request is too large: the portal reads at most {} MB (a roster file may be at most 5 MB).",
        BODY_LIMIT / (1024 * 1024)
    )
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(error: ServerFnErrorErr) -> AppError {
        use ServerFnErrorErr::*;
        match error {
            ServerError(words) => AppError::new(500, words),
            // Read by the server: the request's fields.
            Args(detail) | MissingArg(detail) => AppError::new(400, fields_message(&detail)),
            Deserialization(detail) if cfg!(feature = "ssr") && detail.contains("length limit") => {
                AppError::new(413, too_large())
            }
            Deserialization(_) if cfg!(feature = "ssr") => {
                AppError::new(400, "The request could not be read; reload the page and try again.")
            }
            // Met by the browser: its form, the network, the answer.
            Serialization(_) => {
                AppError::new(400, "Part of the form is missing or not valid: fill in every field and try again.")
            }
            Request(_) => AppError::new(503, "The portal did not answer: check your connection and try again."),
            Deserialization(_) | Response(_) => {
                AppError::new(502, "The portal's answer could not be read: reload the page and try again.")
            }
            Registration(detail) | UnsupportedRequestMethod(detail) | MiddlewareError(detail) => {
                AppError::internal(&detail)
            }
        }
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

    fn answer(error: ServerFnErrorErr) -> (u16, String) {
        let e = AppError::from_server_fn_error(error);
        (e.status, e.message)
    }

    #[test]
    fn decoder_errors_become_plain_words_without_the_decoders() {
        assert_eq!(
            answer(ServerFnErrorErr::Args("missing field `course_id`".into())),
            (400, "The field `course_id` is missing.".into())
        );
        let (status, words) = answer(ServerFnErrorErr::Args("invalid digit found in string".into()));
        assert_eq!(status, 400);
        assert!(words.contains("not a whole number"), "{words}");
        assert_eq!(
            answer(ServerFnErrorErr::Args("Multiple values for one key: \"course_id\"".into())).1,
            "The field `course_id` was given more than once."
        );
        assert_eq!(
            answer(ServerFnErrorErr::Args("missing field `x; drop table`".into())).1,
            "The request's fields are missing or malformed.",
            "odd names are not echoed"
        );
        assert_eq!(answer(ServerFnErrorErr::ServerError("you already have 1 session".into())).1, "you already have 1 session");
        let (status, words) = answer(ServerFnErrorErr::MiddlewareError("tower: sqlx pool timed out".into()));
        assert_eq!(status, 500);
        assert!(!words.contains("sqlx"), "{words}");
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn a_body_over_the_limit_is_413_in_words() {
        let (status, words) = answer(ServerFnErrorErr::Deserialization("length limit exceeded".into()));
        assert_eq!((status, words), (413, too_large()));
    }

    #[test]
    fn the_error_travels_to_the_browser_and_back_whole() {
        let sent = AppError { status: 409, message: "you already have 1 session".into() };
        assert_eq!(AppError::de(sent.ser()), sent);
        let garbled = AppError::de(leptos::server_fn::Bytes::from_static(b"ServerError|old format"));
        assert!(garbled.message.contains("could not be read") && !garbled.message.contains("old format"), "{garbled:?}");
    }
}
