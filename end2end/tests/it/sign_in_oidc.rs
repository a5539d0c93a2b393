//! Signing in through a real OpenID Connect provider (PyPI's oidc-provider-mock) in
//! Chromium: the provider's button on the sign-in page, the provider's consent form, back
//! signed in with the course its groups give; the account page says how the account signs
//! in, the users page shows the source, and signing out offers the provider's sign-out.

use slicehub_end2end::cli::built_portal;
use slicehub_end2end::oidc_provider::OidcProvider;
use slicehub_end2end::{free_port, Browser, Portal};

const ADMIN_PASSWORD: &str = "correct-horse-battery";

#[tokio::test]
async fn a_student_signs_in_with_the_campus_provider_and_gets_the_course_of_their_group() {
    let provider = OidcProvider::start(&[
        serde_json::json!({"sub": "u-1001", "preferred_username": "ann.lee", "name": "Ann Lee",
            "email": "ann.lee@campus.example", "groups": ["cs101-students"]}),
    ])
    .await;
    // A confidential client, registered for the portal's callback as a campus IdP would.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let (client_id, secret) = provider.register_client(&format!("{url}/login/oidc/campus/callback")).await;
    let dir = tempfile::tempdir().unwrap();
    let secret_file = dir.path().join("oidc-secret");
    std::fs::write(&secret_file, format!("{secret}\n")).unwrap();
    let config = dir.path().join("slicehub.toml");
    std::fs::write(
        &config,
        format!(
            "[oidc.campus]\nlabel = \"University login\"\nissuer = \"{}\"\nclient_id = \"{client_id}\"\n\
             client_secret_file = \"{}\"\ncourse_groups = \"CS-101: cs101-staff=instructor, cs101-students=student\"\n",
            provider.issuer(),
            secret_file.display()
        ),
    )
    .unwrap();
    let portal = Portal::start_on_port(
        &built_portal(),
        port,
        &[("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD), ("SLICEHUB_CONFIG", config.to_str().unwrap())],
    )
    .await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning Lab"], "");
    let browser = Browser::start().await;
    assert_eq!(portal.url, url);

    browser.open(&format!("{url}/login?next=/courses")).await;
    let button = browser.wait_text("a.sign-in-provider", "Sign in with University login").await;
    assert!(button.contains("University login"), "{button}");
    browser.check_page("sign-in-with-providers").await;
    browser.wait_hydrated().await;
    browser.click("a.sign-in-provider").await;
    // The provider's own consent page, then back to the page the student came for.
    browser.fill("input[name=sub]", "u-1001").await;
    browser.click("form button[type=submit]").await;
    browser.wait_text(".course-list, main", "CS-101").await;
    let here = browser.client.current_url().await.unwrap();
    assert_eq!(here.path(), "/courses", "back where the sign-in began: {here}");
    // Every page a student reaches, as the account the provider made.
    for (path, ready, name) in [
        ("/courses", "main", "provider-student-courses"),
        ("/courses/CS-101", ".roster", "provider-student-course"),
        ("/sessions", "main", "provider-student-sessions"),
        ("/", "main", "provider-student-home"),
    ] {
        browser.open(&format!("{url}{path}")).await;
        browser.wait_for(ready).await;
        browser.check_page(name).await;
    }

    browser.open(&format!("{url}/account")).await;
    let card = browser.wait_text(".sign-ins", "University login").await;
    assert!(card.contains("no password here"), "{card}");
    let password_card = browser.client.find(fantoccini::Locator::Css("input[name=current]")).await.unwrap();
    assert!(!password_card.is_displayed().await.unwrap(), "no password to change");
    browser.check_page("account-signed-in-by-provider").await;

    browser.sign_out().await;
    let end = browser.wait_text(".end-sessions", "Also sign out of University login").await;
    assert!(end.contains("University login"));
    browser.check_page("signed-out-with-provider").await;

    // The account has no password: the form does not take any for it.
    browser.fill("input[name=username]", "ann.lee").await;
    browser.fill("input[name=password]", "any-password-at-all").await;
    browser.click("form.form button[type=submit]").await;
    browser.wait_text(".form-error", "Wrong username or password").await;

    // The administrator sees where the account comes from.
    browser.open(&format!("{url}/login")).await;
    browser.fill("input[name=username]", "admin").await;
    browser.fill("input[name=password]", ADMIN_PASSWORD).await;
    browser.click("form.form button[type=submit]").await;
    browser.wait_for(".topbar .who").await;
    browser.open(&format!("{url}/admin/users")).await;
    let row = browser.wait_text("tr[data-user='ann.lee'] .sources", "University login").await;
    assert!(!row.contains("Password"), "{row}");
    let admin_row = browser.wait_text("tr[data-user='admin'] .sources", "Password").await;
    assert_eq!(admin_row.trim(), "Password");
    browser.check_page("users-with-sources").await;
    browser.open(&format!("{url}/status")).await;
    let health = browser.wait_text(".sign-in-health tr[data-provider='University login']", "reachable").await;
    assert!(health.contains("OpenID Connect"), "{health}");
    browser.check_page("status-with-sign-in-providers").await;
    browser.assert_no_console_errors("sign-in through a provider").await;
    browser.close().await;
}

#[tokio::test]
async fn a_forged_answer_from_the_provider_leaves_the_browser_signed_out_with_plain_words() {
    let provider = OidcProvider::start(&[serde_json::json!({"sub": "u-1", "preferred_username": "ben"})]).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("slicehub.toml");
    std::fs::write(
        &config,
        format!("[oidc.campus]\nissuer = \"{}\"\nclient_id = \"slicehub-portal\"\n", provider.issuer()),
    )
    .unwrap();
    let portal = Portal::start(&built_portal(), &[("SLICEHUB_CONFIG", config.to_str().unwrap())]).await;
    let browser = Browser::start().await;
    browser
        .open(&format!("{}/login/oidc/campus/callback?code=stolen&state=forged-state", portal.url))
        .await;
    let words = browser.wait_text(".sign-in-problem", "stale").await;
    assert!(words.contains("Start again"), "{words}");
    assert!(browser.client.find(fantoccini::Locator::Css(".topbar .who")).await.is_err(), "nobody is signed in");
    browser.check_page("sign-in-problem").await;
    browser.close().await;
}
