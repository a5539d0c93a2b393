//! The portal in a real browser: server-rendered, hydrated, and calling a server function.

use std::time::Duration;

use fantoccini::Locator;
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::{Browser, Portal};

#[tokio::test]
async fn home_page_hydrates_and_rechecks_through_a_server_function() {
    let portal = Portal::start(
        &built_portal(),
        &[("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB, 1 x A100-40GB")],
    )
    .await;
    let browser = Browser::start().await;
    let client = &browser.client;

    client.goto(&portal.url).await.unwrap();
    browser.wait_hydrated().await;
    assert_eq!(client.title().await.unwrap(), "SliceHub");
    let body = client
        .find(Locator::Css("main"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // Anonymous visitors see free slices per profile, not GPU models, holders or UUIDs.
    assert!(body.contains("1g.10gb") && body.contains("free"), "{body}");
    assert!(!body.contains("NVIDIA H100 80GB HBM3") && !body.contains("GPU-simulated"), "{body}");
    assert_eq!(client.find_all(Locator::Css(".gpu-card")).await.unwrap().len(), 0);
    assert_eq!(
        client
            .find_all(Locator::Css(".capacity .badge-sim"))
            .await
            .unwrap()
            .len(),
        1
    );

    let checked = client
        .find(Locator::Css(".checked-at"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    browser.screenshot_widths("home").await;
    // The time shown has one-second resolution; let it move on before asking again.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    browser
        .wait_for("button.recheck:not([disabled])")
        .await
        .click()
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let now = client
            .find(Locator::Css(".checked-at"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if now != checked {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the re-check never came back ({checked})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        portal.log().contains("/api/check_instance"),
        "the click reached the server function"
    );

    // Client-side navigation works once hydrated.
    browser.click("a.signin").await;
    browser.wait_for("input[name=username]").await;
    assert!(client
        .current_url()
        .await
        .unwrap()
        .as_str()
        .ends_with("/login"));
    browser.screenshot("login").await;

    client
        .goto(&format!("{}/no/such/page", portal.url))
        .await
        .unwrap();
    browser.wait_hydrated().await;
    let text = client
        .find(Locator::Css("main"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("There is no page here."), "{text}");
    browser.screenshot("not-found").await;
    browser.close().await;
}

#[tokio::test]
async fn a_down_docker_engine_is_shown_with_its_reason_to_administrators_only() {
    let portal = Portal::start(
        &built_portal(),
        &[
            ("SLICEHUB_DOCKER_HOST", "unix:///nonexistent/docker.sock"),
            ("SLICEHUB_ADMIN_PASSWORD", "engine-down-admin-1"),
        ],
    )
    .await;
    let browser = Browser::start().await;
    browser.client.goto(&portal.url).await.unwrap();
    browser.wait_hydrated().await;
    let panel = browser
        .wait_for(".status.status-degraded")
        .await
        .text()
        .await
        .unwrap();
    assert!(panel.contains("Running with problems"), "{panel}");
    let row = browser.wait_for(".check-down").await.text().await.unwrap();
    assert!(row.contains("Docker engine") && row.contains("not working right now"), "{row}");
    assert!(!row.contains("/nonexistent/docker.sock"), "anonymous visitors: {row}");
    browser.screenshot("home-engine-down").await;

    browser.sign_in(&portal.url, "admin", "engine-down-admin-1").await;
    browser.open(&portal.url).await;
    let row = browser.wait_for(".check-down").await.text().await.unwrap();
    assert!(
        row.contains("no Docker socket at unix:///nonexistent/docker.sock"),
        "the administrator sees why: {row}"
    );
    browser.screenshot_widths("home-engine-down-admin").await;
    browser.close().await;
}
