//! The status page's sign-in providers: each configured way in, checked now, and a provider
//! that is down says so there (for administrators only) while the portal serves on.

use slicehub_end2end::form::{client, post, sign_in};
use slicehub_end2end::oidc_provider::OidcProvider;
use slicehub_end2end::{free_port, Portal};

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const ADMIN_PASSWORD: &str = "status-admin-1";

#[tokio::test]
async fn a_provider_that_is_down_shows_down_on_the_status_page_and_only_to_admins() {
    let provider = OidcProvider::start(&[serde_json::json!({"sub": "u-1", "preferred_username": "ann"})]).await;
    let closed = free_port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("slicehub.toml");
    std::fs::write(
        &config,
        format!(
            "[oidc.campus]\nlabel = \"University login\"\nissuer = \"{}\"\nclient_id = \"portal\"\n\
             [oidc.guests]\nlabel = \"Guest login\"\nissuer = \"http://127.0.0.1:{closed}\"\nclient_id = \"portal\"\n\
             [ldap]\nurl = \"ldap://127.0.0.1:{closed}\"\nstart_tls = false\nallow_plain = true\nuser_base = \"ou=people,dc=campus,dc=example\"\n",
            provider.issuer()
        ),
    )
    .unwrap();
    let portal = Portal::start(BIN.as_ref(), &[("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD), ("SLICEHUB_CONFIG", config.to_str().unwrap())]).await;
    let admin = sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.expect("admin signs in");
    let resp = post(&client(), &portal.url, Some(&admin), "sign_in_status", String::new()).await;
    assert_eq!(resp.status(), 200);
    let health: serde_json::Value = resp.json().await.unwrap();
    let row = |name: &str| health.as_array().unwrap().iter().find(|p| p["name"] == name).cloned().unwrap_or_else(|| panic!("no {name} in {health}"));
    assert_eq!(row("University login")["up"], true, "{health}");
    assert_eq!(row("Guest login")["up"], false, "{health}");
    assert_eq!(row("Campus directory")["up"], false, "{health}");
    // The portal serves on: the password form still signs the administrator in.
    assert!(sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.is_some());

    portal.cli(&["user", "add", "sam", "--password-stdin"], "sam-password-1\n");
    let sam = sign_in(&client(), &portal.url, "sam", "sam-password-1").await.expect("sam signs in");
    let refused = post(&client(), &portal.url, Some(&sam), "sign_in_status", String::new()).await;
    assert_eq!(refused.status(), 403);
    let body = refused.text().await.unwrap();
    assert!(!body.contains("127.0.0.1") && !body.contains("campus"), "nothing about the providers leaks: {body}");
    let anonymous = post(&client(), &portal.url, None, "sign_in_status", String::new()).await;
    assert_eq!(anonymous.status(), 401);
}
