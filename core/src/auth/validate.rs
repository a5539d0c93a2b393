//! Rules for account fields. Each returns the normalized value or a message that says
//! what is wrong with the value as given, for forms and for roster rows alike.

pub const MAX_USERNAME_CHARS: usize = 64;
pub const MAX_DISPLAY_NAME_CHARS: usize = 100;
pub const MAX_EMAIL_BYTES: usize = 254;

/// Trimmed and lowercased; 1–64 characters of `a-z 0-9 . _ -`.
pub fn normalize_username(raw: &str) -> Result<String, String> {
    let name = raw.trim().to_lowercase();
    if name.is_empty() {
        return Err("the username is empty".to_string());
    }
    if name.chars().count() > MAX_USERNAME_CHARS {
        return Err(format!(
            "the username `{}` is longer than {MAX_USERNAME_CHARS} characters",
            raw.trim()
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
    {
        return Err(format!(
            "the username `{}` may only contain letters a-z, digits, '.', '_' and '-'",
            raw.trim()
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
    let invalid = || Err(format!("`{email}` is not an email address"));
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
}
