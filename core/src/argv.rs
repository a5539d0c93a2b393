//! A training job's command line, split into argv the way a user expects from a shell
//! prompt (spaces separate, quotes group, backslash escapes) but never run by a shell:
//! `;`, `|`, `$(…)` and friends reach the program as plain characters.

use crate::CoreError;

pub(crate) const MAX_COMMAND_BYTES: usize = 4096;

pub fn split_command(text: &str) -> Result<Vec<String>, CoreError> {
    if text.len() > MAX_COMMAND_BYTES {
        return Err(invalid(format!(
            "the command is {} bytes long; at most {MAX_COMMAND_BYTES} are allowed",
            text.len()
        )));
    }
    if text.contains('\0') {
        return Err(invalid("the command contains a NUL character".into()));
    }
    // Line breaks and tabs separate words like spaces; no other control character is a
    // command's.
    crate::auth::validate::check_text("the command", text, MAX_COMMAND_BYTES, crate::auth::validate::Lines::Many)
        .map_err(invalid)?;
    let mut argv = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => match chars.next() {
                Some(next @ ('"' | '\\')) => word.push(next),
                Some(next) => {
                    word.push('\\');
                    word.push(next);
                }
                None => word.push('\\'),
            },
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    argv.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if let Some(q) = quote {
        return Err(invalid(format!("the command has an unclosed {q} quote")));
    }
    if in_word {
        argv.push(word);
    }
    if argv.is_empty() {
        return Err(invalid("a training job needs a command to run".into()));
    }
    Ok(argv)
}

fn invalid(message: String) -> CoreError {
    CoreError::InvalidRequest(message)
}

#[cfg(test)]
mod tests {
    use super::split_command;

    fn split(text: &str) -> Vec<String> {
        split_command(text).unwrap()
    }

    #[test]
    fn words_quotes_and_escapes() {
        assert_eq!(split("python train.py --epochs 3"), ["python", "train.py", "--epochs", "3"]);
        assert_eq!(split(r#"echo "a b" 'c d' e\ f"#), ["echo", "a b", "c d", "e f"]);
        assert_eq!(split(r#"echo "say \"hi\"" '' x"#), ["echo", "say \"hi\"", "", "x"]);
    }

    #[test]
    fn shell_metacharacters_stay_plain_arguments() {
        assert_eq!(
            split("echo hi; rm -rf / | cat $(id) && `x` > out"),
            ["echo", "hi;", "rm", "-rf", "/", "|", "cat", "$(id)", "&&", "`x`", ">", "out"]
        );
    }

    #[test]
    fn bad_commands_are_refused_with_a_reason() {
        let err = |t: &str| split_command(t).unwrap_err().to_string();
        assert!(err("   ").contains("needs a command"));
        assert!(err("echo 'open").contains("unclosed ' quote"));
        assert!(err("a\0b").contains("NUL"));
        assert!(err(&"x".repeat(5000)).contains("at most 4096"));
    }
}
