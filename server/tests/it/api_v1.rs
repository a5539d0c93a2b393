//! The REST API (`/api/v1`) from a script's side and an attacker's: what a token can and
//! cannot do (scopes, expiry, revocation, a disabled owner), that it is audited and its
//! last use shown, the rate limits per token and per address, errors that are JSON with
//! plain words whatever the input, reports equal to the pages', the OpenAPI document
//! naming every route, and the CLI against a remote portal. On SQLite, then PostgreSQL.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use slicehub_core::store::Store;
use slicehub_end2end::form::{client, get_text, post, sign_in};
use slicehub_end2end::Portal;

use crate::common::{on_sqlite_then_postgres, postgres_database};

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const ADMIN_PASSWORD: &str = "admin-password-1";
/// How long a change made by the CLI may take to reach the serving portal.
const ANOTHER_PROCESS: Duration = Duration::from_millis(2100);

async fn portal(database: Option<String>, extra: &[(&str, &str)]) -> Portal {
    let mut env = vec![("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD), ("SLICEHUB_GPU_BACKEND", "simulated")];
    if let Some(url) = &database {
        env.push(("SLICEHUB_DATABASE_URL", url.as_str()));
    }
    env.extend_from_slice(extra);
    let portal = Portal::start(BIN.as_ref(), &env).await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    portal.cli(&["user", "add", "alice", "--email", "alice-secret@example.edu", "--password-stdin"], "alice-password-1\n");
    portal.cli(&["user", "add", "ivy", "--password-stdin"], "ivy-password-1\n");
    portal.cli(&["course", "instructor", "CS-101", "ivy"], "");
    portal
}

/// A token for `user` with `scopes`, made with the CLI (its first line is the secret).
fn token(portal: &Portal, user: &str, scopes: &[&str]) -> String {
    let mut args = vec!["token", "create", user, "--name", "test"];
    for scope in scopes {
        args.extend(["--scope", scope]);
    }
    portal.cli(&args, "").lines().next().unwrap_or_default().to_string()
}

async fn call(portal: &Portal, method: Method, path: &str, token: &str, body: Option<Value>) -> (StatusCode, Value) {
    let mut request = client().request(method, format!("{}/api/v1{path}", portal.url)).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let resp = request.send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// The database the portal uses, for what only time would do (a token's expiry).
async fn database_of(portal: &Portal, database: &Option<String>) -> Store {
    let url = match database {
        Some(url) => url.clone(),
        None => format!("sqlite://{}", portal.dir.path().join("data/slicehub.db").display()),
    };
    Store::connect(&url, 1).await.unwrap()
}

#[tokio::test]
async fn a_token_acts_for_its_owner_only_within_its_scopes_until_it_ends() {
    on_sqlite_then_postgres(|database| async move {
        let portal = portal(database.clone(), &[]).await;
        let read = token(&portal, "alice", &["read"]);

        // Reads work; a change needs its own scope, and the refusal says which.
        let (status, me) = call(&portal, Method::GET, "/me", &read, None).await;
        assert_eq!(status, 200, "{me}");
        assert_eq!(me["username"], "alice");
        let claim = json!({"course": "CS-101", "profile": "1g.10gb", "image": "slicehub/busybox:offline", "command": "sleep 60"});
        let (status, refusal) = call(&portal, Method::POST, "/sessions", &read, Some(claim.clone())).await;
        assert_eq!((status.as_u16(), refusal["message"].as_str()), (403, Some("This token lacks the sessions scope.")));
        let (_, sessions) = call(&portal, Method::GET, "/sessions", &read, None).await;
        assert_eq!(sessions, json!([]), "nothing was claimed");

        // A student cannot be given what her account could never do.
        let refused = portal.cli_fails(&["token", "create", "alice", "--name", "x", "--scope", "admin"]);
        assert!(refused.contains("cannot manage accounts, courses and GPUs"), "{refused}");
        let refused = portal.cli_fails(&["token", "create", "alice", "--name", "x", "--scope", "everything"]);
        assert!(refused.contains("There is no scope everything"), "{refused}");
        let refused = portal.cli_fails(&["token", "create", "alice", "--name", "x", "--scope", "read", "--days", "3650"]);
        assert!(refused.contains("7, 30, 90 or 365 days"), "{refused}");

        // An administrator's read token reads everything an administrator reads, but
        // changes nothing.
        let admin_read = token(&portal, "admin", &["read"]);
        let (status, _) = call(&portal, Method::GET, "/users", &admin_read, None).await;
        assert_eq!(status, 200);
        let (status, _) = call(&portal, Method::POST, "/courses", &admin_read, Some(json!({"code": "X-1", "title": "X"}))).await;
        assert_eq!(status, 403);
        let (_, courses) = call(&portal, Method::GET, "/courses", &admin_read, None).await;
        assert!(!courses.to_string().contains("X-1"), "{courses}");

        // An administrator's token changes things as an administrator only with `admin`:
        // with `course:manage` alone it manages what its owner teaches (nothing here).
        let admin_courses = token(&portal, "admin", &["read", "course:manage"]);
        let csv = "username,display name\nalice,alice\n";
        let resp = client()
            .post(format!("{}/api/v1/courses/CS-101/roster", portal.url))
            .bearer_auth(&admin_courses)
            .header("content-type", "text/csv")
            .body(csv)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404, "{}", resp.text().await.unwrap());
        let resp = client()
            .post(format!("{}/hub/api/groups/formgrade-CS-101/users", portal.url))
            .header("authorization", format!("token {admin_courses}"))
            .json(&json!({"users": ["alice"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404, "{}", resp.text().await.unwrap());
        let (_, course) = call(&portal, Method::GET, "/courses/CS-101", &admin_read, None).await;
        assert!(!course.to_string().contains("alice"), "alice was made neither student nor instructor: {course}");

        // Made, used and revoked: each is audited, and the last use shows where from.
        let (_, listed) = call(&portal, Method::GET, "/tokens", &read, None).await;
        let mine = &listed.as_array().unwrap()[0];
        assert!(mine["last_used"].as_str().unwrap().contains("from 127.0.0.1"), "{listed}");
        assert!(!listed.to_string().contains(&read), "the secret is never listed again");
        let id = mine["id"].as_i64().unwrap();
        let (status, _) = call(&portal, Method::DELETE, &format!("/tokens/{id}"), &read, None).await;
        assert_eq!(status, 204);
        let (status, body) = call(&portal, Method::GET, "/me", &read, None).await;
        assert_eq!(status, 401, "{body}");
        let (_, audit) = call(&portal, Method::GET, "/audit?what=api_token.", &admin_read, None).await;
        let actions: Vec<&str> = audit["items"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
        assert!(actions.contains(&"api_token.create") && actions.contains(&"api_token.revoke"), "{audit}");

        // Bob cannot revoke alice's token: for him it does not exist.
        portal.cli(&["user", "add", "bob", "--password-stdin"], "bob-password-1\n");
        let bobs = token(&portal, "bob", &["read"]);
        let alices = token(&portal, "alice", &["read"]);
        let (_, listed) = call(&portal, Method::GET, "/tokens", &alices, None).await;
        let alices_id = listed[0]["id"].as_i64().unwrap();
        let (status, _) = call(&portal, Method::DELETE, &format!("/tokens/{alices_id}"), &bobs, None).await;
        assert_eq!(status, 404);
        assert_eq!(call(&portal, Method::GET, "/me", &alices, None).await.0, 200, "alice's token still works");

        // Past its expiry, or with its owner disabled, a token opens nothing.
        let store = database_of(&portal, &database).await;
        store.execute_admin(&format!("UPDATE api_tokens SET expires_at = 1 WHERE id = {alices_id}")).await.unwrap();
        // Changes made by another process reach the portal within 2 s (README: Commands).
        tokio::time::sleep(ANOTHER_PROCESS).await;
        assert_eq!(call(&portal, Method::GET, "/me", &alices, None).await.0, 401, "an expired token");
        let fresh = token(&portal, "alice", &["read"]);
        assert_eq!(call(&portal, Method::GET, "/me", &fresh, None).await.0, 200);
        portal.cli(&["user", "disable", "alice"], "");
        tokio::time::sleep(ANOTHER_PROCESS).await;
        assert_eq!(call(&portal, Method::GET, "/me", &fresh, None).await.0, 401, "a disabled account's token");
        portal.cli(&["user", "enable", "alice"], "");
        tokio::time::sleep(ANOTHER_PROCESS).await;
        assert_eq!(call(&portal, Method::GET, "/me", &fresh, None).await.0, 200, "enabled again");

        // A password reset by an administrator is a recovery: every token of the account ends.
        portal.cli(&["user", "passwd", "alice"], "");
        tokio::time::sleep(ANOTHER_PROCESS).await;
        assert_eq!(call(&portal, Method::GET, "/me", &fresh, None).await.0, 401, "a token from before the reset");
        store.close().await;
    })
    .await;
}

#[tokio::test]
async fn every_answer_is_json_in_plain_words_whatever_is_sent() {
    let portal = portal(None, &[]).await;
    let admin = token(&portal, "admin", &["read", "sessions", "course:manage", "admin"]);
    let base = format!("{}/api/v1", portal.url);
    let bad: Vec<(Method, String, Option<(&str, Vec<u8>)>)> = vec![
        (Method::POST, "/courses".into(), Some(("application/json", b"{\"code\": \"CS".to_vec()))),
        (Method::POST, "/courses".into(), Some(("application/json", b"[1,2,3]".to_vec()))),
        (Method::POST, "/courses".into(), Some(("text/plain", b"code=X".to_vec()))),
        (Method::POST, "/courses".into(), Some(("application/json", b"{\"code\": \"A\\u0000B\", \"title\": \"t\"}".to_vec()))),
        (Method::POST, "/courses".into(), Some(("application/json", format!("{{\"code\": \"X\", \"title\": \"{}\"}}", "t".repeat(100_000)).into_bytes()))),
        (Method::GET, "/courses/CS%00-101".into(), None),
        (Method::GET, "/courses/CS-101/policy?x=%00".into(), None),
        (Method::GET, "/sessions/history?cursor=not-a-cursor".into(), None),
        (Method::GET, "/audit?from=30%2F11%2F2026".into(), None),
        (Method::PUT, "/gpus/not-a-number/drained".into(), Some(("application/json", b"{\"drained\": true}".to_vec()))),
        (Method::DELETE, "/tokens/99999999999999999999".into(), None),
        (Method::GET, "/no/such/route".into(), None),
    ];
    for (method, path, body) in bad {
        let mut request = client().request(method.clone(), format!("{base}{path}")).bearer_auth(&admin);
        if let Some((kind, bytes)) = body {
            request = request.header("content-type", kind).body(bytes);
        }
        let resp = request.send().await.unwrap();
        let status = resp.status();
        let kind = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        let text = resp.text().await.unwrap();
        assert!(status.is_client_error(), "{method} {path}: {status} {text}");
        assert!(kind.starts_with("application/json"), "{method} {path}: {kind} {text}");
        let error: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(error["status"], status.as_u16(), "{text}");
        let words = error["message"].as_str().unwrap();
        assert!(!words.is_empty() && words.len() < 400, "{method} {path}: {words}");
        for internal in ["sqlx", "panicked", "SELECT", "src/", "Error {"] {
            assert!(!words.contains(internal), "{method} {path}: {words}");
        }
    }
    let (_, courses) = call(&portal, Method::GET, "/courses", &admin, None).await;
    assert_eq!(courses.as_array().unwrap().len(), 1, "nothing was made: {courses}");
}

#[tokio::test]
async fn each_token_and_each_address_has_its_own_pace() {
    let portal = portal(
        None,
        &[
            ("SLICEHUB_SERVER_API_REQUESTS_PER_MINUTE", "6"),
            ("SLICEHUB_SERVER_API_BURST", "3"),
            ("SLICEHUB_SERVER_TRUSTED_PROXIES", "127.0.0.1"),
        ],
    )
    .await;
    let alices = token(&portal, "alice", &["read"]);
    let ivys = token(&portal, "ivy", &["read"]);
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(call(&portal, Method::GET, "/me", &alices, None).await.0.as_u16());
    }
    assert_eq!(statuses, [200, 200, 200, 429, 429], "alice's token");
    let resp = client().get(format!("{}/api/v1/me", portal.url)).bearer_auth(&alices).send().await.unwrap();
    assert!(resp.headers().get("retry-after").is_some(), "{:?}", resp.headers());
    let error: Value = resp.json().await.unwrap();
    assert!(error["message"].as_str().unwrap().contains("Too many requests"), "{error}");
    assert_eq!(call(&portal, Method::GET, "/me", &ivys, None).await.0, 200, "ivy's token has its own pace");

    // Without a token, each client address (as the trusted proxy names it) has its own; a
    // made-up token counts against its sender's address, and X-Forwarded-For from an
    // untrusted peer would name no one (the proxy here is trusted).
    let anonymous = |client_addr: &'static str, token: Option<String>| {
        let url = format!("{}/api/v1/me", portal.url);
        async move {
            let mut request = client().get(url).header("x-forwarded-for", client_addr);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            request.send().await.unwrap().status().as_u16()
        }
    };
    let mut from_one = Vec::new();
    for n in 0..4 {
        from_one.push(anonymous("203.0.113.7", Some(format!("shp_{}", format!("{n}").repeat(43)))).await);
    }
    assert_eq!(from_one, [401, 401, 401, 429], "one address inventing tokens");
    assert_eq!(anonymous("203.0.113.8", None).await, 401, "another address is not slowed");
    assert_eq!(call(&portal, Method::GET, "/me", &ivys, None).await.0, 200, "nor is a valid token");
}

#[tokio::test]
async fn the_api_gives_the_reports_the_pages_give() {
    let portal = portal(None, &[]).await;
    let admin = token(&portal, "admin", &["read"]);
    let cookie = sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.unwrap();
    for query in ["period=week&group=course", "period=week&group=user&course=CS-101"] {
        let page = get_text(&format!("{}/reports/usage.csv?{query}", portal.url), &cookie).await;
        let api = client()
            .get(format!("{}/api/v1/reports/usage.csv?{query}", portal.url))
            .bearer_auth(&admin)
            .send()
            .await
            .unwrap();
        assert_eq!(api.status(), 200);
        assert_eq!(api.text().await.unwrap(), page, "{query}");
    }
    let fields = "period=week&from=&to=&group=course&course=";
    let page: Value = post(&client(), &portal.url, Some(&cookie), "usage_report", fields.into()).await.json().await.unwrap();
    let (_, api) = call(&portal, Method::GET, "/reports/usage?period=week&group=course", &admin, None).await;
    assert_eq!(api, page);
    let page = get_text(&format!("{}/admin/audit.csv", portal.url), &cookie).await;
    let api = client().get(format!("{}/api/v1/audit.csv", portal.url)).bearer_auth(&admin).send().await.unwrap();
    // The API's own read of the CSV is audited after the page's: compare the rows both have.
    let api = api.text().await.unwrap();
    assert!(page.lines().skip(1).all(|row| api.contains(row)), "{page}\n---\n{api}");
}

#[tokio::test]
async fn the_openapi_document_names_every_route_the_api_serves() {
    let portal = portal(None, &[]).await;
    let doc: Value = client().get(format!("{}/api/v1/openapi.json", portal.url)).send().await.unwrap().json().await.unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    // Every documented route is served: asked with no token, each answers the API's own
    // 401, never the "no such route" fallback.
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 30, "{}", paths.len());
    for (path, item) in paths {
        for method in item.as_object().unwrap().keys() {
            let concrete = path.replace("{code}", "CS-101").replace("{id}", "1").replace("{username}", "alice").replace("{index}", "0");
            let resp = client()
                .request(method.to_uppercase().parse().unwrap(), format!("{}/api/v1{concrete}", portal.url))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 401, "{method} {path} is documented but not served");
            assert!(item[method]["security"].is_array(), "{method} {path} names no scope");
        }
    }
    // And nothing is served that the document leaves out: the API's routes are registered
    // only through its documented handlers (`routes!`); any other route under /api/v1 is
    // one of the two that serve the document itself.
    let source_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut undocumented = Vec::new();
    for entry in walk(std::path::Path::new(source_dir)) {
        let text = std::fs::read_to_string(&entry).unwrap();
        let in_api = entry.to_string_lossy().contains("/api_v1/");
        for (n, line) in text.lines().enumerate() {
            let plain_route = line.contains(".route(") && !line.contains("routes!(");
            let names_api = line.contains("\"/api/v1") || in_api;
            if plain_route && names_api && !line.contains("OPENAPI_PATH") && !line.contains("DOCS_PATH") {
                undocumented.push(format!("{}:{}: {}", entry.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(undocumented.is_empty(), "routes under /api/v1 outside the OpenAPI document:\n{}", undocumented.join("\n"));
    let page = client().get(format!("{}/api/v1/docs", portal.url)).send().await.unwrap().text().await.unwrap();
    for path in paths.keys() {
        assert!(page.contains(&format!("/api/v1{path}")), "the docs page lacks {path}");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

#[tokio::test]
async fn the_cli_drives_a_remote_portal_with_a_token_file() {
    let portal = portal(postgres_database().await, &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{}\n", token(&portal, "admin", &["read", "admin"]))).unwrap();
    let remote = |args: &[&str]| {
        let out = std::process::Command::new(BIN)
            .args(["--url", &portal.url, "--token-file", file.to_str().unwrap()])
            .args(args)
            .env("SLICEHUB_DATA_DIR", dir.path().join("elsewhere"))
            .output()
            .unwrap();
        (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    };
    let (ok, users) = remote(&["user", "list", "--json"]);
    assert!(ok, "{users}");
    let users: Value = serde_json::from_str(&users).unwrap();
    assert!(users.as_array().unwrap().iter().any(|u| u["username"] == "alice"), "{users}");
    assert!(!dir.path().join("elsewhere").exists(), "no local database was made");
    let (ok, drained) = remote(&["gpu", "drain", "0"]);
    assert!(ok && drained.contains("GPU 0: drained"), "{drained}");
    let (_, board) = call(&portal, Method::GET, "/gpus", &token(&portal, "admin", &["read"]), None).await;
    assert!(board.to_string().contains("\"drained_by\":\"admin\""), "{board}");
    let (ok, refused) = remote(&["course", "list"]);
    assert!(!ok && refused.contains("with --url only"), "{refused}");
    std::fs::write(&file, "shp_not-a-token\n").unwrap();
    let (ok, refused) = remote(&["user", "list"]);
    assert!(!ok && refused.contains("personal access token"), "{refused}");
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[tokio::test]
async fn one_address_is_paced_before_its_tokens_are_looked_up_and_streams_are_capped() {
    let portal = portal(None, &[("SLICEHUB_SERVER_API_REQUESTS_PER_MINUTE", "6"), ("SLICEHUB_SERVER_API_BURST", "3")]).await;
    // Eleven people on one address, each within their own pace (3 at once): together
    // they pass the address's (30 at once), and the rest are refused for the address.
    let mut tokens = Vec::new();
    for n in 0..11 {
        let name = format!("p{n}");
        portal.cli(&["user", "add", &name, "--password-stdin"], "person-password-1\n");
        tokens.push(token(&portal, &name, &["read"]));
    }
    let mut refused_for_the_address = 0;
    for token in &tokens {
        for _ in 0..3 {
            let (status, body) = call(&portal, Method::GET, "/me", token, None).await;
            match status.as_u16() {
                200 => {}
                429 => {
                    assert!(body["message"].as_str().unwrap().contains("from this address"), "{body}");
                    refused_for_the_address += 1;
                }
                other => panic!("{other}: {body}"),
            }
        }
    }
    assert_eq!(refused_for_the_address, 3, "33 asked, 30 let through");

    // Event streams: one person holds at most 8 open through the API at once.
    let portal = self::portal(None, &[]).await;
    let alices = token(&portal, "alice", &["read"]);
    let open = || client().get(format!("{}/api/v1/sessions/events", portal.url)).bearer_auth(&alices).send();
    let mut streams = Vec::new();
    for _ in 0..8 {
        let resp = open().await.unwrap();
        assert_eq!(resp.status(), 200);
        streams.push(resp);
    }
    let refused = open().await.unwrap();
    assert_eq!(refused.status(), 429);
    let words: Value = refused.json().await.unwrap();
    assert!(words["message"].as_str().unwrap().contains("event streams open"), "{words}");
    drop(streams.pop());
    let until = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let resp = open().await.unwrap();
        if resp.status() == 200 {
            break;
        }
        assert!(std::time::Instant::now() < until, "a closed stream's place was never freed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_token_made_by_a_token_ends_with_it_and_makes_none() {
    on_sqlite_then_postgres(|database| async move {
        let portal = portal(database, &[]).await;
        let parent = token(&portal, "alice", &["read", "sessions"]);
        let mint = |maker: String, body: Option<&'static str>| {
            let url = format!("{}/hub/api/users/alice/tokens", portal.url);
            async move {
                let mut request = client().post(url).header("authorization", format!("token {maker}"));
                if let Some(body) = body {
                    request = request.header("content-type", "application/json").body(body);
                }
                let resp = request.send().await.unwrap();
                (resp.status().as_u16(), resp.json::<Value>().await.unwrap())
            }
        };
        // As in JupyterHub, no body (here without a JSON type at all) asks for the defaults:
        // the maker's scopes.
        let (status, child) = mint(parent.clone(), None).await;
        assert_eq!(status, 201, "{child}");
        assert_eq!(child["scopes"], json!(["read", "sessions"]));
        let child = child["token"].as_str().unwrap().to_string();
        assert_eq!(call(&portal, Method::GET, "/me", &child, None).await.0, 200);
        let (status, refused) = mint(child.clone(), Some("null")).await;
        assert_eq!(status, 403, "a made token makes no tokens: {refused}");

        // Revoking the maker ends what it made, at once.
        let (_, listed) = call(&portal, Method::GET, "/tokens", &parent, None).await;
        let parent_id = listed.as_array().unwrap().iter().find(|t| t["name"] == "test").unwrap()["id"].as_i64().unwrap();
        let (status, _) = call(&portal, Method::DELETE, &format!("/tokens/{parent_id}"), &parent, None).await;
        assert_eq!(status, 204);
        assert_eq!(call(&portal, Method::GET, "/me", &child, None).await.0, 401, "the made token ended with its maker");
    })
    .await;
}
