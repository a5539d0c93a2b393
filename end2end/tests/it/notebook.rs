//! The student's whole way into JupyterLab in a real browser: start a notebook, watch its
//! steps, open JupyterLab on its own origin (`SESSION.nb.localhost`), run a cell, upload and
//! download a file, stop. Screenshots of each step.
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
    browser.wait_for(".live-sessions .session .step-requested").await;
    browser.screenshot("notebook-1-requested").await;
    let open = browser.wait_for(".live-sessions .session a.open-lab").await;
    browser.screenshot("notebook-2-ready").await;
    let href = open.attr("href").await.unwrap().unwrap();
    assert!(href.starts_with(&format!("/user/{nora}/s-")) && href.ends_with("/lab"), "{href}");

    // JupyterLab, on the notebook's own origin; the student never typed a token.
    browser.client.goto(&format!("{}{href}", portal.url)).await.unwrap();
    let card = ".jp-LauncherCard[data-category=\"Notebook\"]";
    browser.wait_for_within(card, Duration::from_secs(90)).await;
    let id = href.split('/').nth(3).unwrap();
    let port = portal.url.rsplit(':').next().unwrap();
    let here = browser.client.current_url().await.unwrap();
    assert_eq!(here.origin().ascii_serialization(), format!("http://{id}.nb.localhost:{port}"));
    assert_eq!(here.path(), href, "the door led to the same path on the notebook host");
    browser.screenshot("notebook-3-jupyterlab").await;
    // A chip at JupyterLab's bottom left says how long the session has left and leads back
    // to the portal's sessions page.
    let chip = browser.wait_text("#slicehub-chip", "min left").await;
    assert!(chip.starts_with("SliceHub · "), "{chip}");
    let back = browser.wait_for("#slicehub-chip").await;
    let portal_link = back.attr("href").await.unwrap().unwrap_or_default();
    assert!(portal_link.ends_with("/sessions"), "{portal_link}");
    assert_eq!(back.attr("target").await.unwrap().as_deref(), Some("_top"));
    browser.click(card).await;
    browser.click(".jp-Notebook .jp-Cell .cm-content").await;
    let editor = browser.wait_for(".jp-Notebook .jp-Cell .cm-content").await;
    editor.send_keys("print(6 * 7)").await.unwrap();
    browser.wait_text(".jp-Notebook .jp-Cell .cm-content", "print(6 * 7)").await;
    // The kernel connects after the notebook opens (its state is in the status bar); a run
    // sent before that is dropped, so wait for it, and like a person run the cell again if
    // nothing happened (on a busy machine the first connection can take a while).
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while !browser.wait_for("body").await.text().await.unwrap_or_default().contains("| Idle") {
        assert!(std::time::Instant::now() < deadline, "the kernel never became idle");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut next_run = std::time::Instant::now();
    loop {
        if std::time::Instant::now() >= next_run {
            let first = ".jp-Notebook .jp-Cell:first-child .cm-content";
            browser.click(first).await;
            // Shift+Enter runs the cell.
            browser.wait_for(first).await.send_keys("\u{E008}\u{E007}").await.unwrap();
            next_run = std::time::Instant::now() + Duration::from_secs(15);
        }
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
    // By now JupyterLab would have asked about "official Jupyter news" (the image's
    // settings turn that prompt off: a student can do nothing with it).
    let page = browser.wait_for("body").await.text().await.unwrap();
    assert!(!page.contains("Jupyter news"), "JupyterLab asks about news: {page}");

    // Upload and download a file the way JupyterLab's own page does: the contents API with
    // its XSRF header, then the file back through the proxy.
    let transfer = browser
        .client
        .execute_async(
            r#"const [base, done] = arguments;
               const xsrf = document.cookie.split('; ').find(c => c.startsWith('_xsrf=')).slice(6);
               const put = await fetch(base + 'api/contents/uploaded.txt', { method: 'PUT',
                 headers: { 'X-XSRFToken': xsrf, 'Content-Type': 'application/json' },
                 body: JSON.stringify({ type: 'file', format: 'text', content: 'sent through the notebook origin' }) });
               const back = await fetch(base + 'files/uploaded.txt');
               done([put.status, await back.text()]);"#,
            vec![serde_json::json!(href.trim_end_matches("lab"))],
        )
        .await
        .unwrap();
    assert_eq!(transfer, serde_json::json!([201, "sent through the notebook origin"]));
    browser.wait_for(".jp-DirListing-item[title*=\"uploaded.txt\"]").await;
    browser.screenshot("notebook-4b-file-uploaded").await;

    // An instructor (here the administrator) stops it while JupyterLab is open: the tab
    // says so across its top, with the reason and the way back, instead of leaving the
    // student with JupyterLab's "check your network".
    let stop = slicehub_end2end::form::post(
        &slicehub_end2end::form::client(),
        &portal.url,
        Some(&class.admin),
        "stop_session",
        format!("id={id}&reason=the+lab+is+over"),
    )
    .await;
    assert_eq!(stop.status(), 200, "{}", stop.text().await.unwrap_or_default());
    let bar = browser.wait_text("#slicehub-session-ended", "this session has ended").await;
    assert!(bar.contains("stopped by admin: the lab is over") && bar.contains("files are kept"), "{bar}");
    assert!(
        browser.client.find(Locator::Css("#slicehub-chip")).await.is_err(),
        "an ended session has no time left to show"
    );
    browser.screenshot("notebook-5-ended-in-jupyterlab").await;
    browser.click("#slicehub-session-ended a").await;
    // The sessions page tells the end at its top, not only under "Earlier sessions".
    browser.wait_hydrated().await;
    let told = browser.wait_text(".ended-banner", "has ended").await;
    assert!(told.contains("stopped by admin: the lab is over"), "{told}");
    browser.wait_for(".session-history .history-row:first-child[data-state=ended]").await;
    browser.check_page("notebook-5-stopped").await;

    browser.client.goto(&format!("{}{href}", portal.url)).await.unwrap();
    browser.wait_text("h1", "This session has ended").await;
    browser.check_page("notebook-6-ended-address").await;
    browser.close().await;
    let _ = std::process::Command::new("sh")
        .args(["-c", &format!("docker volume ls -q | grep -E -- '-home-[0-9]+-{nora}-' | xargs -r docker volume rm")])
        .output();
}
