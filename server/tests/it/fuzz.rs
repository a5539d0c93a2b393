//! A bounded fuzz pass over every server function's argument decoding, against the real
//! binary: form bodies with the functions' own field names and random ones, numbers out
//! of range, repeated keys, broken percent-encoding and odd text, sent anonymously and as
//! the administrator. Every answer is below 500 and carries no framework or database words.

use proptest::prelude::*;
use slicehub_end2end::form::{client, sign_in};
use slicehub_end2end::Portal;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const PASSWORD: &str = "fuzz-admin-password";

/// Every server function, from the binary itself.
fn functions() -> Vec<String> {
    let out = std::process::Command::new(BIN).arg("routes").output().unwrap();
    let routes: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    routes["server_functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str()?.strip_prefix("POST /api/").map(str::to_string))
        // These end the fuzzing administrator's own login.
        .filter(|f| !["logout", "reset_account_password", "change_password"].contains(&f.as_str()))
        .collect()
}

const FIELDS: &[&str] = &[
    "id", "code", "title", "course_id", "profile", "image", "command", "username",
    "display_name", "email", "admin", "csv_base64", "password", "current", "new_password",
    "confirm", "user_id", "disabled", "lines", "name", "reason", "hours", "who",
];

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        Just("99999999999999999999999".to_string()),
        Just("-1.5".to_string()),
        Just("%ZZ".to_string()),
        Just("%E2%82".to_string()),
        // A NUL, other control characters and 100,000 characters: refused in words.
        Just("a%00b".to_string()),
        Just("%1B%5B2J%07".to_string()),
        Just("x".repeat(100_000)),
        Just(String::new()),
        "[a-zA-Z0-9%&=+ ._-]{0,30}",
        "\\PC{0,12}",
    ]
}

fn body() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        proptest::sample::select(FIELDS).prop_map(str::to_string),
        "[a-z_]{1,8}",
    ];
    proptest::collection::vec((field, value()), 0..6).prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    })
}

#[test]
fn no_server_function_answers_500_to_any_form_body() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let portal = runtime.block_on(Portal::start(BIN.as_ref(), &[("SLICEHUB_ADMIN_PASSWORD", PASSWORD)]));
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    let admin = runtime
        .block_on(sign_in(&client(), &portal.url, "admin", PASSWORD))
        .expect("admin signs in");
    let functions = functions();
    assert!(functions.len() > 10, "{functions:?}");
    let config = ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() };
    proptest!(config, |(index in 0..functions.len(), body in body(), as_admin in any::<bool>())| {
        let function = &functions[index];
        let (status, text) = runtime.block_on(async {
            let mut request = client()
                .post(format!("{}/api/{function}", portal.url))
                .header("content-type", "application/x-www-form-urlencoded")
                .header("origin", &portal.url)
                .body(body.clone());
            if as_admin {
                request = request.header("cookie", &admin);
            }
            let resp = request.send().await.unwrap();
            (resp.status().as_u16(), resp.text().await.unwrap_or_default())
        });
        prop_assert!(status < 500, "{function} {body:?} -> {status}: {text}");
        for internal in ["Args|", "Deserialization|", "ServerError|", "sqlx", "SQLSTATE", "database error", "panicked"] {
            prop_assert!(!text.contains(internal), "{function} {body:?} -> {status}: {text}");
        }
    });
}
