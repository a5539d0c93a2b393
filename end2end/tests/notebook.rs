//! The student's whole way into JupyterLab in a real browser: start a notebook, watch its
//! steps, open JupyterLab through the portal, run a cell, stop. Screenshots of each step.
//! Needs the Docker engine and `slicehub/jupyterlab:offline`.

use std::time::Duration;

use fantoccini::Locator;
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::form::{base64, client, post, sign_in, urlencode};
use slicehub_end2end::{Browser, Portal};

const ADMIN_PASSWORD: &str = "correct-horse-battery";

#[tokio::test]
async fn a_student_opens_jupyterlab_through_the_portal_and_runs_a_cell() {
    let portal = Portal::start(
        &built_portal(),
        &[
            ("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("SLICEHUB_GPU_BACKEND", "simulated"),
            ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB"),
            ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "1024"),
        ],
    )
    .await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    // A new name each run: home volumes outlive sessions (and test runs), and JupyterLab
    // would reopen the last run's notebook instead of its launcher.
    let nora = format!("nora{}", std::process::id());
    portal.cli(&["user", "add", &nora, "--name", "Nora", "--password-stdin"], "nora-password-1\n");
    let admin = sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.unwrap();
    let csv = format!("username,display name,email\n{nora},Nora,\n");
    let body = format!("code=CS-101&csv_base64={}", urlencode(&base64(csv.as_bytes())));
    assert_eq!(post(&client(), &portal.url, Some(&admin), "import_roster", body).await.status(), 200);

    let browser = Browser::start().await;
    browser.open(&format!("{}/login", portal.url)).await;
    browser.fill("input[name=username]", &nora).await;
    browser.fill("input[name=password]", "nora-password-1").await;
    browser.click("form button[type=submit]").await;
    browser.wait_for(".who").await;
    browser.open(&format!("{}/sessions", portal.url)).await;
    browser.click("form.launch-notebook button[type=submit]").await;
    browser.wait_for(".session-list .session:first-child .step-requested").await;
    browser.screenshot("notebook-1-requested").await;
    let open = browser.wait_for(".session-list .session:first-child a.open-lab").await;
    browser.screenshot("notebook-2-ready").await;
    let href = open.attr("href").await.unwrap().unwrap();
    assert!(href.starts_with(&format!("/user/{nora}/s-")) && href.ends_with("/lab"), "{href}");

    // JupyterLab, on the portal's address; the student never typed a token.
    browser.client.goto(&format!("{}{href}", portal.url)).await.unwrap();
    let card = browser
        .wait_for_within(".jp-LauncherCard[data-category=\"Notebook\"]", Duration::from_secs(90))
        .await;
    browser.screenshot("notebook-3-jupyterlab").await;
    card.click().await.unwrap();
    let editor = browser.wait_for(".jp-Notebook .jp-Cell .cm-content").await;
    editor.click().await.unwrap();
    editor.send_keys("print(6 * 7)").await.unwrap();
    // Shift+Enter runs the cell.
    editor.send_keys("\u{E008}\u{E007}").await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let outputs = browser
            .client
            .find_all(Locator::Css(".jp-OutputArea-output"))
            .await
            .unwrap();
        let mut text = String::new();
        for o in outputs {
            text.push_str(&o.text().await.unwrap_or_default());
        }
        if text.contains("42") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the cell printed nothing: {text:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    browser.screenshot("notebook-4-cell-ran").await;

    browser.open(&format!("{}/sessions", portal.url)).await;
    browser.click(".session-list .session:first-child button.stop").await;
    browser.wait_for(".session-list .session:first-child[data-state=ended]").await;
    browser.screenshot("notebook-5-stopped").await;

    browser.client.goto(&format!("{}{href}", portal.url)).await.unwrap();
    browser.wait_text("h1", "This session has ended").await;
    browser.screenshot("notebook-6-ended-address").await;
    browser.close().await;
    let _ = std::process::Command::new("docker")
        .args(["volume", "rm", &format!("slicehub-home-{nora}")])
        .output();
}
