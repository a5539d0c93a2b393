//! Session ids.

use crate::CoreError;

/// `s-` and 12 lowercase letters and digits: short enough for a URL, and a container name.
pub(super) fn new_session_id() -> Result<String, CoreError> {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let bytes = crate::auth::tokens::random_bytes::<12>()?;
    let tail: String = bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    Ok(format!("s-{tail}"))
}
