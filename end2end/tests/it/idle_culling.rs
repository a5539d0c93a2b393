//! An idle notebook's warning in a real browser, inside JupyterLab (the script the proxy
//! adds to its page) and on the portal's sessions page, each with "Keep it running",
//! which clears it; the class dashboard says who is idle. The portal's loop runs every
//! 2 s; the course stops notebooks idle for 2 minutes and warns one minute ahead.
//! Screenshots of each.
//! Needs the Docker engine and `slicehub/jupyterlab:offline`.

use std::time::{Duration, Instant};

use fantoccini::Locator;
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::classroom::{password_of, Classroom, ADMIN_PASSWORD};
use slicehub_end2end::form::get_text;
use slicehub_end2end::Browser;

const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";
/// A warning comes a minute after the last activity; the page in JupyterLab asks every 30 s.
const WARNING: Duration = Duration::from_secs(150);

async fn gone(browser: &Browser, css: &str, limit: Duration) {
    let until = Instant::now() + limit;
    while browser.client.find(Locator::Css(css)).await.is_ok() {
        assert!(Instant::now() < until, "{css} still shown after {limit:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn an_idle_notebook_warns_in_jupyterlab_and_on_the_portal_and_keep_it_running_clears_it() {
    let class = Classroom::start(&built_portal(), &[("SLICEHUB_SESSIONS_SAMPLE_SECONDS", "2")]).await;
    let portal = &class.portal;
    let set = portal.cli(
        &["course", "policy", "CS-101", "--images", JUPYTERLAB, "--idle-minutes", "2", "--idle-warning-minutes", "1"],
        "",
    );
    assert!(set.contains("idle notebooks stop after 2 minutes"), "{set}");
    let ivy = format!("ivy{}", std::process::id());
    class.enroll(&[&ivy]).await;

    let browser = Browser::start().await;
    browser.sign_in(&portal.url, &ivy, &password_of(&ivy)).await;
    browser.open(&format!("{}/sessions", portal.url)).await;
    browser.click("form.launch-notebook button[type=submit]").await;
    let open = browser.wait_for(".live-sessions .session a.open-lab").await;
    let href = open.attr("href").await.unwrap().unwrap();

    // In JupyterLab, left alone: the warning appears above it.
    browser.client.goto(&format!("{}{href}", portal.url)).await.unwrap();
    browser.wait_for_within(".jp-LauncherCard", Duration::from_secs(90)).await;
    let banner = browser.wait_for_within("#slicehub-idle-warning", WARNING).await;
    let text = banner.text().await.unwrap();
    assert!(text.contains("idle for") && text.contains("unless you continue"), "{text}");
    browser.screenshot_widths("idle-warning-jupyterlab").await;
    browser.click("#slicehub-idle-warning button").await;
    gone(&browser, "#slicehub-idle-warning", Duration::from_secs(10)).await;

    // On the sessions page: kept a moment ago, no warning; idle again, the warning comes.
    browser.open(&format!("{}/sessions", portal.url)).await;
    browser.wait_for(".live-sessions .session[data-state=ready]").await;
    assert!(browser.client.find(Locator::Css(".idle-warning")).await.is_err(), "kept running: no warning");
    let warning = browser.wait_for_within(".live-sessions .idle-warning", WARNING).await;
    let text = warning.text().await.unwrap();
    assert!(text.contains("Idle for") && text.contains("unless you continue"), "{text}");
    browser.check_page("sessions-idle-warning").await;

    // The class dashboard shows the instructor (here the admin) who is idle, until when.
    browser.sign_out().await;
    browser.sign_in(&portal.url, "admin", ADMIN_PASSWORD).await;
    browser.open(&format!("{}/courses/CS-101/class", portal.url)).await;
    let note = browser.wait_text(".class-sessions .idle-note", "idle since").await;
    assert!(note.contains("stops"), "{note}");
    browser.check_page("class-idle").await;
    browser.sign_out().await;
    browser.sign_in(&portal.url, &ivy, &password_of(&ivy)).await;
    browser.open(&format!("{}/sessions", portal.url)).await;
    browser.click(".idle-warning button.keep-running").await;
    gone(&browser, ".idle-warning", Duration::from_secs(10)).await;
    let audit = get_text(&format!("{}/admin/audit.csv?what=session.&who={ivy}", portal.url), &class.admin).await;
    assert_eq!(audit.matches(&format!(",{ivy},session.keep,")).count(), 2, "both answers are audited: {audit}");
    browser.close().await;
}
