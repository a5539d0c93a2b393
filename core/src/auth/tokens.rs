use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::CoreError;

/// Length of a session token: 32 random bytes as unpadded base64url.
pub const SESSION_TOKEN_LEN: usize = 43;

/// Unambiguous lowercase letters and digits (no i, l, o, 0, 1) for one-time passwords.
const OTP_ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";
const OTP_GROUPS: usize = 4;
const OTP_GROUP_LEN: usize = 4;

pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], CoreError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| {
        CoreError::Auth(format!(
            "the operating system's random number generator failed: {e}"
        ))
    })?;
    Ok(bytes)
}

/// A new session token: 256 bits from the OS RNG, base64url without padding.
pub fn new_session_token() -> Result<String, CoreError> {
    Ok(URL_SAFE_NO_PAD.encode(random_bytes::<32>()?))
}

/// What the database keeps of a token: its SHA-256, hex.
pub fn token_sha256(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A generated one-time password such as `k7mq-x2rd-9fhw-c4tn`: 16 symbols from 31,
/// about 79 bits, easy to read aloud and to type.
pub fn one_time_password() -> Result<String, CoreError> {
    // Bytes below the largest multiple of the alphabet size keep the choice uniform.
    let limit = (256 / OTP_ALPHABET.len() * OTP_ALPHABET.len()) as u8;
    let mut symbols = Vec::with_capacity(OTP_GROUPS * OTP_GROUP_LEN);
    while symbols.len() < OTP_GROUPS * OTP_GROUP_LEN {
        for byte in random_bytes::<32>()? {
            if byte < limit && symbols.len() < OTP_GROUPS * OTP_GROUP_LEN {
                symbols.push(OTP_ALPHABET[byte as usize % OTP_ALPHABET.len()]);
            }
        }
    }
    let groups: Vec<String> = symbols
        .chunks(OTP_GROUP_LEN)
        .map(|g| String::from_utf8_lossy(g).into_owned())
        .collect();
    Ok(groups.join("-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_tokens_are_43_url_safe_characters_and_differ() {
        let a = new_session_token().unwrap();
        let b = new_session_token().unwrap();
        assert_eq!(a.len(), SESSION_TOKEN_LEN);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'),
            "{a}"
        );
        assert_ne!(a, b);
    }

    #[test]
    fn token_digest_is_hex_sha256() {
        assert_eq!(
            token_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn one_time_passwords_are_grouped_and_unambiguous() {
        let otp = one_time_password().unwrap();
        assert_eq!(otp.len(), 19, "{otp}");
        assert_eq!(otp.split('-').count(), 4, "{otp}");
        assert!(
            otp.bytes().all(|c| c == b'-' || OTP_ALPHABET.contains(&c)),
            "{otp}"
        );
        assert_ne!(otp, one_time_password().unwrap());
    }
}
