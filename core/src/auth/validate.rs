//! Rules for account fields, and the one rule for any other free text a person types
//! (`check_text`). Each returns the normalized value or a message that says what is wrong
//! with the value as given, for forms and for roster rows alike.

pub const MAX_USERNAME_CHARS: usize = 64;
pub const MAX_DISPLAY_NAME_CHARS: usize = 100;
pub const MAX_EMAIL_BYTES: usize = 254;
/// The most of a refused value a message repeats.
pub const MAX_ECHOED_CHARS: usize = 40;
/// The longest value a lookup (a course code, a username, a session id) can match: anything
/// longer, or with a control character, names nothing the portal stores.
pub const MAX_KEY_CHARS: usize = 256;

/// Whether a free-text value may break lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// One line: no control character at all (no tab, no line break).
    One,
    /// Several lines (a reason typed into a text box, a command line): line feeds,
    /// carriage returns and tabs are allowed; every other control character is not.
    Many,
}

/// The one check for free text at the portal's boundary: at most `max_chars` characters
/// and no control characters (NUL among them, which PostgreSQL refuses to store) beyond
/// what `lines` allows. `what` names the value in the message, e.g. "the reason". The
/// message is a sentence for the person who typed the value and never repeats it.
pub fn check_text(what: &str, text: &str, max_chars: usize, lines: Lines) -> Result<(), String> {
    if text.chars().nth(max_chars).is_some() {
        return Err(format!("{} may be at most {max_chars} characters long.", capitalized(what)));
    }
    let allowed = |c: char| lines == Lines::Many && matches!(c, '\n' | '\r' | '\t');
    if let Some(c) = text.chars().find(|&c| c.is_control() && !allowed(c)) {
        return Err(format!(
            "{} holds a control character (U+{:04X}), which the portal does not accept; remove it.",
            capitalized(what),
            u32::from(c)
        ));
    }
    Ok(())
}

/// Whether `key` could name something stored (see [`MAX_KEY_CHARS`]). Lookups answer
/// "not found" for anything else without asking the database, which would refuse a NUL.
pub fn plausible_key(key: &str) -> bool {
    key.chars().nth(MAX_KEY_CHARS).is_none() && !key.chars().any(char::is_control)
}

/// At most [`MAX_ECHOED_CHARS`] characters of `text`, control characters replaced, for
/// repeating a refused value in a message.
pub fn excerpt(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(MAX_ECHOED_CHARS)
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect();
    if text.chars().nth(MAX_ECHOED_CHARS).is_some() {
        out.push('…');
    }
    out
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Trimmed and lowercased; 1–64 characters of `a-z 0-9 . _ -`.
pub fn normalize_username(raw: &str) -> Result<String, String> {
    let name = raw.trim().to_lowercase();
    if name.is_empty() {
        return Err("the username is empty".to_string());
    }
    if name.chars().count() > MAX_USERNAME_CHARS {
        return Err(format!(
            "the username “{}” is longer than {MAX_USERNAME_CHARS} characters",
            excerpt(raw.trim())
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
    {
        return Err(format!(
            "the username “{}” may only contain letters a-z, digits, '.', '_' and '-'",
            excerpt(raw.trim())
        ));
    }
    Ok(name)
}

/// Trimmed; 1–100 characters, no control characters.
pub fn check_display_name(raw: &str) -> Result<String, String> {
    let name = raw.trim();
    if name.is_empty() {
        return Err("the display name is empty".to_string());
    }
    if name.chars().count() > MAX_DISPLAY_NAME_CHARS {
        return Err(format!(
            "the display name is longer than {MAX_DISPLAY_NAME_CHARS} characters"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("the display name contains a control character".to_string());
    }
    Ok(name.to_string())
}

/// Trimmed; empty means no address. Otherwise `local@domain.tld`: one `@`, no spaces,
/// a domain of dot-separated labels of letters, digits and inner hyphens.
pub fn check_email(raw: &str) -> Result<Option<String>, String> {
    let email = raw.trim();
    if email.is_empty() {
        return Ok(None);
    }
    let invalid = || Err(format!("“{}” is not an email address", excerpt(email)));
    if email.len() > MAX_EMAIL_BYTES || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return invalid();
    }
    let Some((local, domain)) = email.split_once('@') else {
        return invalid();
    };
    if local.is_empty() || domain.contains('@') || !domain.contains('.') {
        return invalid();
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_alphanumeric() || c == '-')
    };
    if !domain.split('.').all(label_ok) {
        return invalid();
    }
    Ok(Some(email.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_lowercased_and_limited_to_the_allowed_characters() {
        assert_eq!(normalize_username("  Alice.B_2-x ").unwrap(), "alice.b_2-x");
        assert!(normalize_username("").unwrap_err().contains("empty"));
        assert!(normalize_username("al ice")
            .unwrap_err()
            .contains("may only contain"));
        assert!(normalize_username("jürgen")
            .unwrap_err()
            .contains("may only contain"));
        assert!(normalize_username(&"a".repeat(64)).is_ok());
        assert!(normalize_username(&"a".repeat(65))
            .unwrap_err()
            .contains("longer than 64"));
    }

    #[test]
    fn emails_are_checked_for_shape_only() {
        assert_eq!(check_email(" ").unwrap(), None);
        assert_eq!(
            check_email("a.b+c@uni.example.edu").unwrap().as_deref(),
            Some("a.b+c@uni.example.edu")
        );
        for bad in [
            "foo",
            "foo@",
            "@x.org",
            "a@b",
            "a@@b.org",
            "a b@c.org",
            "a@-b.org",
            "a@b..org",
        ] {
            assert!(check_email(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn display_names_are_trimmed_and_bounded() {
        assert_eq!(check_display_name("  Anna Smith ").unwrap(), "Anna Smith");
        assert!(check_display_name("").is_err());
        assert!(check_display_name("a\u{7}b").is_err());
        assert!(check_display_name(&"x".repeat(101)).is_err());
    }

    #[test]
    fn free_text_is_bounded_and_refuses_control_characters() {
        assert!(check_text("the reason", "lab over", 300, Lines::One).is_ok());
        assert!(check_text("the reason", "line one\nline two\ttab\r\n", 300, Lines::Many).is_ok());
        let nul = check_text("the reason", "a\0b", 300, Lines::Many).unwrap_err();
        assert!(nul.starts_with("The reason holds a control character (U+0000)"), "{nul}");
        assert!(check_text("the profile", "a\nb", 64, Lines::One).unwrap_err().contains("U+000A"));
        assert!(check_text("the profile", "a\u{1b}b", 64, Lines::Many).is_err(), "ESC is never text");
        assert!(check_text("the profile", &"é".repeat(64), 64, Lines::One).is_ok(), "characters, not bytes");
        let long = check_text("the profile", &"p".repeat(100_000), 64, Lines::One).unwrap_err();
        assert_eq!(long, "The profile may be at most 64 characters long.");
        assert!(!long.contains("ppp"), "the value is not repeated");
    }

    #[test]
    fn lookups_and_messages_never_carry_nul_or_the_whole_value() {
        assert!(plausible_key("CS-101"));
        assert!(!plausible_key("CS\0101"));
        assert!(!plausible_key(&"x".repeat(MAX_KEY_CHARS + 1)));
        assert_eq!(excerpt("a\0b"), "a\u{FFFD}b");
        assert_eq!(excerpt(&"x".repeat(100_000)).chars().count(), MAX_ECHOED_CHARS + 1);
        let refused = normalize_username(&"A".repeat(100_000)).unwrap_err();
        assert!(refused.len() < 200, "{refused}");
        assert!(normalize_username("a\0").is_err());
    }
}
