/// A secret kept in a file (`*_file` keys): its first line, trimmed; an unreadable or empty
/// file is refused.
pub(super) fn read(path: &str) -> Result<secrecy::SecretString, ()> {
    let text = std::fs::read_to_string(path.trim()).map_err(|_| ())?;
    let secret = text.lines().next().unwrap_or("").trim();
    if secret.is_empty() {
        return Err(());
    }
    Ok(secrecy::SecretString::from(secret.to_string()))
}
