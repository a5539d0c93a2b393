//! The sessions page follows events over one server-sent event stream, and closes it when
//! the student moves to another page of the portal (each visit used to leave one open).

use std::time::{Duration, Instant};

use slicehub_end2end::classroom::{password_of, Classroom};
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::Browser;

/// The count is for administrators: anonymous health checks learn only the status.
async fn open_streams(class: &Classroom) -> u64 {
    let health: serde_json::Value =
        serde_json::from_str(&slicehub_end2end::form::get_text(&format!("{}/healthz", class.portal.url), &class.admin).await).unwrap();
    health["event_streams"].as_u64().expect("healthz counts event streams")
}

async fn until_streams(class: &Classroom, wanted: u64) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let open = open_streams(class).await;
        if open == wanted {
            return;
        }
        assert!(Instant::now() < until, "{open} event streams open, expected {wanted}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn leaving_the_sessions_page_closes_its_event_stream() {
    let class = Classroom::start(&built_portal(), &[]).await;
    let portal = &class.portal;
    let ivy = format!("ivy{}", std::process::id());
    class.enroll(&[&ivy]).await;
    let browser = Browser::start().await;
    browser.sign_in(&portal.url, &ivy, &password_of(&ivy)).await;
    for _ in 0..3 {
        browser.open(&format!("{}/sessions", portal.url)).await;
        until_streams(&class, 1).await;
        // In-app navigation: the page is replaced without unloading the document.
        browser.click("a[href='/courses']").await;
        browser.wait_for("main h1").await;
        until_streams(&class, 0).await;
    }
    browser.close().await;
}

/// Each event brings the student's sessions with it: the page follows a job from the
/// claim to running without asking the portal for its sessions once per step (it asked
/// once per step before; now once, for the start itself, at most).
#[tokio::test]
async fn the_sessions_page_follows_a_start_from_the_events_alone() {
    const BUSYBOX: &str = "slicehub/busybox:offline";
    let class = Classroom::start(&built_portal(), &[("SLICEHUB_SESSIONS_IMAGES", BUSYBOX)]).await;
    let portal = &class.portal;
    portal.cli(&["course", "policy", "CS-101", "--images", BUSYBOX], "");
    let kim = format!("kim{}", std::process::id());
    class.enroll(&[&kim]).await;
    let browser = Browser::start().await;
    browser.sign_in(&portal.url, &kim, &password_of(&kim)).await;
    browser.open(&format!("{}/sessions", portal.url)).await;
    browser.wait_hydrated().await;
    until_streams(&class, 1).await;
    // Counts the page's own requests for its sessions from here on.
    browser
        .client
        .execute(
            "window.sessionReads = 0; const fetchOnce = window.fetch; \
             window.fetch = (...args) => { if (String(args[0].url || args[0]).includes('my_sessions')) window.sessionReads += 1; return fetchOnce(...args); }; \
             return true;",
            vec![],
        )
        .await
        .unwrap();
    browser.run_job(BUSYBOX, "sleep 600").await;
    let css = ".live-sessions .session[data-state=ready]";
    browser.wait_for(css).await;
    browser.click(&format!("{css} .session-details summary")).await;
    let card = browser.wait_for(css).await.text().await.unwrap();
    for step in ["requested", "allocating", "creating", "starting", "ready"] {
        assert!(card.contains(step), "step {step} missing from the card: {card}");
    }
    let reads = browser.client.execute("return window.sessionReads;", vec![]).await.unwrap();
    assert!(reads.as_u64().is_some_and(|n| n <= 1), "the page asked for its sessions {reads} times while they started");
    browser.assert_no_console_errors("sessions page following a start").await;
    browser.close().await;
}
