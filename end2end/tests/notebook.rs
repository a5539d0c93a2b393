//! The student's whole way into JupyterLab in a real browser: start a notebook, watch its
//! steps, open JupyterLab through the portal, run a cell, stop. Screenshots of each step.
//! Needs the Docker engine and `slicehub/jupyterlab:offline`.

use std::time::Duration;

use fantoccini::Locator;
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::classroom::{password_of, Classroom};
use slicehub_end2end::Browser;

#[tokio::test]
async fn a_student_opens_jupyterlab_through_the_portal_and_runs_a_cell() {
    let class = Classroom::start(&built_portal(), &[]).await;
    let portal = &class.portal;
    // A new name each run: home volumes outlive sessions (and test runs), and JupyterLab
    // would reopen the last run's notebook instead of its launcher.
    let nora = format!("nora{}", std::process::id());
    class.enroll(&[&nora]).await;

    let browser = Browser::start().await;
    browser.sign_in(&portal.url, &nora, &password_of(&nora)).await;
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
    browser.wait_text(".jp-Notebook .jp-Cell .cm-content", "print(6 * 7)").await;
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
        if std::time::Instant::now() > deadline {
            let shot = browser.screenshot("failure").await;
            panic!("the cell printed nothing: {text:?} (screenshot {})", shot.display());
        }
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
