//! A student's GPU sessions in a real browser: run a training job and read its output,
//! start JupyterLab and watch each step arrive, stop it. Screenshots of each state.
//! Needs the Docker engine, `slicehub/busybox:offline` and `slicehub/jupyterlab:offline`.

use fantoccini::Locator;
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::classroom::{password_of, Classroom, ADMIN_PASSWORD};
use slicehub_end2end::form::{client, post};
use slicehub_end2end::Browser;

const BUSYBOX: &str = "slicehub/busybox:offline";
const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

/// The newest session's card, once it is in `state`.
async fn session_card_text(browser: &Browser, state: &str) -> String {
    let css = format!(".session-list .session:first-child[data-state={state}]");
    browser.wait_for(&css).await.text().await.unwrap()
}

#[tokio::test]
async fn a_student_runs_a_job_then_a_notebook_and_stops_it() {
    let class = Classroom::start(&built_portal(), &[]).await;
    let (portal, admin) = (&class.portal, &class.admin);
    portal.cli(
        &["course", "policy", "CS-101", "--images", &format!("{JUPYTERLAB},{BUSYBOX}"), "--profiles", "1g.10gb,2g.20gb"],
        "",
    );
    class.enroll(&["alice"]).await;

    let browser = Browser::start().await;
    browser.sign_in(&portal.url, "alice", &password_of("alice")).await;
    browser.open(&format!("{}/sessions", portal.url)).await;
    let card = browser.wait_text(".launch", "CS-101").await;
    assert!(card.contains("1g.10gb — 7 free"), "{card}");
    assert!(card.contains("2g.20gb — 3 free"), "{card}");
    assert!(!card.contains("3g.40gb"), "the course allows only two profiles: {card}");
    browser.screenshot("sessions-start").await;

    // A job: its command is argv, so the semicolon is printed, not run.
    browser
        .client
        .find(Locator::Css(&format!("form.launch-job option[value='{BUSYBOX}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.fill("form.launch-job input[name=command]", "echo training; done").await;
    browser.click("form.launch-job button[type=submit]").await;
    let ended = session_card_text(&browser, "ended").await;
    for step in ["requested", "allocating", "creating", "starting", "ready", "stopping", "ended"] {
        assert!(ended.contains(step), "step {step} missing: {ended}");
    }
    browser.wait_text(".session-list .session:first-child .log-tail", "training; done").await;
    browser.screenshot("sessions-job-ended").await;

    // A notebook, followed live until JupyterLab answers.
    browser.click("form.launch-notebook button[type=submit]").await;
    let ready = session_card_text(&browser, "ready").await;
    assert!(ready.contains("JupyterLab answers at /user/alice/"), "{ready}");
    assert!(ready.contains("MIG-"), "the MIG device is shown: {ready}");
    let launch = browser.wait_text(".launch", "1g.10gb").await;
    assert!(launch.contains("1g.10gb — 6 free"), "availability follows the claim: {launch}");
    browser.screenshot("sessions-notebook-ready").await;

    browser.click(".session-list .session:first-child button.stop").await;
    let stopped = session_card_text(&browser, "ended").await;
    assert!(stopped.contains("stopped by alice"), "{stopped}");
    assert!(browser.client.find(Locator::Css(".session-list .session:first-child button.stop")).await.is_err());
    browser.screenshot("sessions-notebook-stopped").await;

    // Another notebook; the administrator's GPU board names who holds its slice.
    browser.click("form.launch-notebook button[type=submit]").await;
    session_card_text(&browser, "ready").await;
    let id = browser
        .client
        .find(Locator::Css(".session-list .session:first-child"))
        .await
        .unwrap()
        .attr("data-session")
        .await
        .unwrap()
        .unwrap();
    browser.click(".who button[type=submit]").await;
    browser.wait_for("input[name=username]").await;
    browser.sign_in(&portal.url, "admin", ADMIN_PASSWORD).await;
    browser.open(&format!("{}/gpus", portal.url)).await;
    browser.wait_text(".instances", &format!("alice · {id}")).await;
    browser.screenshot("gpus-held").await;
    let resp = post(&client(), &portal.url, Some(admin), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200);
    browser.close().await;
}
