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
