//! Reading a roster file: UTF-8 CSV (RFC 4180 quoting, an optional BOM), a header row
//! naming the columns, then one person per row. Every problem is reported with its line.

use std::collections::HashMap;

use super::roster::RowError;
use crate::auth::validate::{check_display_name, check_email, normalize_username};
use crate::auth::{MAX_PASSWORD_BYTES, MIN_PASSWORD_CHARS};
use crate::CoreError;

pub const MAX_ROSTER_BYTES: usize = 5 * 1024 * 1024;
pub const MAX_ROSTER_ROWS: usize = 10_000;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const COLUMNS_HINT: &str =
    "the columns are username, display name, email (optional) and password (optional)";

/// One valid row. Blank cells are None: for an existing account they keep what is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RosterLine {
    pub line: usize,
    pub username: String,
    pub display_name: Option<String>,
    pub email: Option<String>,
    pub password: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct ParsedRoster {
    pub lines: Vec<RosterLine>,
    pub errors: Vec<RowError>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Username,
    DisplayName,
    Email,
    Password,
}

fn column_named(header: &str) -> Option<Column> {
    let name = header.trim().to_lowercase().replace(['_', '-'], " ");
    match name
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .as_str()
    {
        "username" | "user name" => Some(Column::Username),
        "display name" | "displayname" | "name" | "full name" => Some(Column::DisplayName),
        "email" | "e mail" | "email address" => Some(Column::Email),
        "password" => Some(Column::Password),
        _ => None,
    }
}

/// Refuses whole files that are too large or have too many rows; everything else comes
/// back as row errors.
pub(crate) fn read_roster(bytes: &[u8]) -> Result<ParsedRoster, CoreError> {
    if bytes.len() > MAX_ROSTER_BYTES {
        return Err(CoreError::InvalidRequest(format!(
            "The file is {:.1} MB; a roster may be at most 5 MB. Split it into smaller files.",
            bytes.len() as f64 / (1024.0 * 1024.0)
        )));
    }
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let encoding_errors = lines_not_utf8(bytes);
    if !encoding_errors.is_empty() {
        return Ok(ParsedRoster {
            lines: Vec::new(),
            errors: encoding_errors,
        });
    }
    let lines = LineIndex::new(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::None)
        .from_reader(bytes);
    let mut parsed = ParsedRoster::default();
    let mut header: Option<Vec<Column>> = None;
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    let mut rows = 0usize;
    for record in reader.records() {
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                let line = e.position().map_or(0, |p| lines.line_at(p.byte()));
                parsed.errors.push(RowError {
                    line,
                    message: format!("cannot read this row: {e}"),
                });
                break;
            }
        };
        let line = record.position().map_or(0, |p| lines.line_at(p.byte()));
        if record.iter().all(|cell| cell.trim().is_empty()) {
            continue;
        }
        let Some(columns) = &header else {
            match read_header(&record) {
                Ok(columns) => header = Some(columns),
                Err(message) => {
                    parsed.errors.push(RowError { line, message });
                    return Ok(parsed);
                }
            }
            continue;
        };
        rows += 1;
        if rows > MAX_ROSTER_ROWS {
            return Err(CoreError::InvalidRequest(format!(
                "The file has more than {MAX_ROSTER_ROWS} rows; import at most {MAX_ROSTER_ROWS} \
                 at a time by splitting it."
            )));
        }
        match read_row(line, columns, &record) {
            Ok(row) => match first_line_of.get(&row.username) {
                Some(first) => parsed.errors.push(RowError {
                    line,
                    message: format!(
                        "the username “{}” appears on line {first} and again on line {line}",
                        row.username
                    ),
                }),
                None => {
                    first_line_of.insert(row.username.clone(), line);
                    parsed.lines.push(row);
                }
            },
            Err(messages) => parsed.errors.extend(
                messages
                    .into_iter()
                    .map(|message| RowError { line, message }),
            ),
        }
    }
    if header.is_none() && parsed.errors.is_empty() {
        parsed.errors.push(RowError {
            line: 1,
            message: format!("the file is empty; it needs a header row ({COLUMNS_HINT})"),
        });
    }
    Ok(parsed)
}

/// Physical line numbers from byte offsets. The csv crate's own line count drifts after
/// blank lines and with CRLF endings; its byte offsets do not, though a record's offset
/// may point at the line breaks skipped before it.
struct LineIndex<'a> {
    bytes: &'a [u8],
    newlines: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        let newlines = bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i)
            .collect();
        LineIndex { bytes, newlines }
    }

    fn line_at(&self, offset: u64) -> usize {
        let mut at = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        while at < self.bytes.len() && matches!(self.bytes[at], b'\r' | b'\n') {
            at += 1;
        }
        1 + self.newlines.partition_point(|&newline| newline < at)
    }
}

/// Each physical line that is not UTF-8, as an error telling how to fix the file.
fn lines_not_utf8(bytes: &[u8]) -> Vec<RowError> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| std::str::from_utf8(line).is_err())
        .map(|(index, _)| RowError {
            line: index + 1,
            message: "this line is not UTF-8 text; save the file as UTF-8 (in Excel: \
                      \"CSV UTF-8\") and import it again"
                .to_string(),
        })
        .collect()
}

fn read_header(record: &csv::StringRecord) -> Result<Vec<Column>, String> {
    let mut columns = Vec::new();
    for cell in record.iter() {
        let Some(column) = column_named(cell) else {
            return Err(
                if record
                    .iter()
                    .any(|c| column_named(c) == Some(Column::Username))
                {
                    format!(
                        "unknown column “{}” in the header; {COLUMNS_HINT}",
                        cell.trim()
                    )
                } else {
                    format!(
                        "the first row must be a header such as “username,display name,email”; \
                     this one is “{}”",
                        record.iter().collect::<Vec<_>>().join(",")
                    )
                },
            );
        };
        if columns.contains(&column) {
            return Err(format!(
                "the header names the column “{}” twice",
                cell.trim()
            ));
        }
        columns.push(column);
    }
    for (needed, name) in [
        (Column::Username, "username"),
        (Column::DisplayName, "display name"),
    ] {
        if !columns.contains(&needed) {
            return Err(format!("the header has no “{name}” column; {COLUMNS_HINT}"));
        }
    }
    Ok(columns)
}

fn read_row(
    line: usize,
    columns: &[Column],
    record: &csv::StringRecord,
) -> Result<RosterLine, Vec<String>> {
    if record.len() > columns.len() {
        return Err(vec![format!(
            "this row has {} fields but the header names {} columns (a value with a comma \
             must be in double quotes)",
            record.len(),
            columns.len()
        )]);
    }
    let cell = |wanted: Column| {
        columns
            .iter()
            .position(|c| *c == wanted)
            .and_then(|i| record.get(i))
            .unwrap_or("")
    };
    let mut problems = Vec::new();
    let username = normalize_username(cell(Column::Username))
        .map_err(|m| problems.push(m))
        .ok();
    let display_name = match cell(Column::DisplayName).trim() {
        "" => None,
        given => check_display_name(given).map_err(|m| problems.push(m)).ok(),
    };
    let email = check_email(cell(Column::Email))
        .map_err(|m| problems.push(m))
        .ok()
        .flatten();
    let password = match cell(Column::Password) {
        "" => None,
        given if given.chars().count() < MIN_PASSWORD_CHARS => {
            problems.push(format!(
                "the password is shorter than {MIN_PASSWORD_CHARS} characters"
            ));
            None
        }
        given if given.len() > MAX_PASSWORD_BYTES => {
            problems.push(format!(
                "the password is longer than {MAX_PASSWORD_BYTES} bytes"
            ));
            None
        }
        given => Some(given.to_string()),
    };
    match username {
        Some(username) if problems.is_empty() => Ok(RosterLine {
            line,
            username,
            display_name,
            email,
            password,
        }),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &[u8]) -> ParsedRoster {
        read_roster(text).unwrap()
    }

    fn messages(parsed: &ParsedRoster) -> Vec<String> {
        parsed.errors.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn header_names_are_case_insensitive_and_tolerate_underscores() {
        let parsed = read(
            b"UserName,Display_Name,E-Mail,PASSWORD\r\nalice,Alice A,a@x.org,long enough pw\r\n",
        );
        assert!(parsed.errors.is_empty(), "{:?}", messages(&parsed));
        assert_eq!(
            parsed.lines,
            vec![RosterLine {
                line: 2,
                username: "alice".into(),
                display_name: Some("Alice A".into()),
                email: Some("a@x.org".into()),
                password: Some("long enough pw".into()),
            }]
        );
    }

    #[test]
    fn quoted_fields_keep_commas_quotes_and_line_breaks() {
        let parsed = read(b"username,display name,email\n\"bob\",\"Smith, \"\"Bob\"\"\",\n");
        assert!(parsed.errors.is_empty(), "{:?}", messages(&parsed));
        assert_eq!(
            parsed.lines[0].display_name.as_deref(),
            Some("Smith, \"Bob\"")
        );
        assert_eq!(parsed.lines[0].email, None);
    }

    #[test]
    fn blank_lines_are_skipped_and_line_numbers_stay_physical() {
        let parsed = read(b"\nusername,display name\n\n,\nalice,Alice\n\nBAD NAME,x\n");
        assert_eq!(parsed.lines[0].line, 5);
        assert_eq!(
            messages(&parsed),
            vec![
            "line 7: the username “BAD NAME” may only contain letters a-z, digits, '.', '_' and '-'"
        ]
        );
    }

    #[test]
    fn a_row_with_several_problems_reports_each() {
        let parsed =
            read(b"username,display name,email,password\nalice,Alice,not-an-email,short\n");
        assert_eq!(
            messages(&parsed),
            vec![
                "line 2: “not-an-email” is not an email address",
                "line 2: the password is shorter than 10 characters",
            ]
        );
    }

    #[test]
    fn too_many_fields_hint_at_quoting() {
        let parsed = read(b"username,display name,email\nalice,Smith, Anna,a@x.org\n");
        assert!(
            messages(&parsed)[0].contains("must be in double quotes"),
            "{:?}",
            messages(&parsed)
        );
    }

    #[test]
    fn unknown_and_duplicate_columns_are_refused() {
        let parsed = read(b"username,display name,emial\nalice,Alice,a@x.org\n");
        assert!(
            messages(&parsed)[0].contains("unknown column “emial”"),
            "{:?}",
            messages(&parsed)
        );
        let parsed = read(b"username,name,display name\n");
        assert!(
            messages(&parsed)[0].contains("twice"),
            "{:?}",
            messages(&parsed)
        );
        let parsed = read(b"username,email\n");
        assert!(
            messages(&parsed)[0].contains("no “display name” column"),
            "{:?}",
            messages(&parsed)
        );
    }

    #[test]
    fn empty_files_and_oversized_files_are_refused_clearly() {
        assert!(messages(&read(b""))[0].contains("the file is empty"));
        assert!(messages(&read(b"\n\n"))[0].contains("the file is empty"));
        let big = vec![b'a'; MAX_ROSTER_BYTES + 1];
        let err = read_roster(&big).unwrap_err().to_string();
        assert!(err.contains("at most 5 MB"), "{err}");
    }

    #[test]
    fn more_than_ten_thousand_rows_are_refused() {
        let mut text = String::from("username,display name\n");
        for i in 0..=MAX_ROSTER_ROWS {
            text.push_str(&format!("u{i},U {i}\n"));
        }
        let err = read_roster(text.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("more than 10000 rows"), "{err}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// Any bytes at all: an answer (a roster or a plain refusal), never a panic.
        #[test]
        fn any_file_gets_an_answer(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)) {
            let _ = read_roster(&bytes);
        }

        /// Files that look like rosters, with odd cells: every problem is a line's message.
        #[test]
        fn roster_shaped_files_get_an_answer(
            rows in proptest::collection::vec(
                proptest::collection::vec("[a-zA-Z0-9@._ ,\"\\r\u{e9}\u{1F600}-]{0,40}", 0..6),
                0..40,
            )
        ) {
            let mut text = String::from("username,display name,email,password\n");
            for row in rows {
                text.push_str(&row.join(","));
                text.push('\n');
            }
            let _ = read_roster(text.as_bytes());
        }
    }
}
