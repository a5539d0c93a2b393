//! Launching SliceHub from an LMS (a real LTI 1.3 platform written for the tests, on
//! another site) in Chromium that blocks third-party cookies: the LMS course page frames
//! the tool, the launch inside the frame ends on a page that opens SliceHub in a window of
//! its own, whose "Continue as …" button signs in; there the instructor and then a student
//! land in the course, each with the role the LMS gave; the instructor reads the roster
//! from the LMS.

use slicehub_end2end::cli::built_portal;
use slicehub_end2end::lti_platform::{LtiContext, LtiPlatform, LtiUser, Member, INSTRUCTOR, LEARNER};
use slicehub_end2end::{free_port, Browser, Portal};

const ADMIN_PASSWORD: &str = "correct-horse-battery";

fn person(sub: &str, name: &str, email: &str, role: &str) -> LtiUser {
    LtiUser { sub: sub.into(), name: name.into(), email: email.into(), roles: vec![role.into()] }
}

fn course() -> LtiContext {
    LtiContext { id: "ctx-4711".into(), label: "ML-300".into(), title: "Machine Learning Systems".into() }
}

/// The LMS course page, the framed launch, SliceHub opened from it in a new window, and its
/// continue button (which says so when the browser is signed in as `signed_in_as`, another
/// account); returns with that window in front.
async fn launch_from_lms(browser: &Browser, platform: &LtiPlatform, shot: Option<&str>, signed_in_as: Option<&str>) {
    let client = &browser.client;
    let lms_window = client.window().await.unwrap();
    browser.client.goto(&platform.course_page_url()).await.unwrap();
    client.enter_frame(0).await.unwrap();
    browser.wait_for("a#open-slicehub").await;
    client.enter_parent_frame().await.unwrap();
    if let Some(name) = shot {
        browser.screenshot_widths(name).await;
    }
    client.enter_frame(0).await.unwrap();
    browser.click("a#open-slicehub").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let new_window = loop {
        let windows = client.windows().await.unwrap();
        if let Some(w) = windows.into_iter().find(|w| *w != lms_window) {
            break w;
        }
        assert!(std::time::Instant::now() < deadline, "no new window opened");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    client.switch_to_window(new_window).await.unwrap();
    // The new window only asks; its button signs in.
    let asked = browser.wait_text("main", "Continue as").await;
    if signed_in_as.is_none() {
        browser.check_page("lti-continue").await;
    }
    match signed_in_as {
        Some(other) => assert!(asked.contains(&format!("You are signed in as {other}")), "{asked}"),
        None => assert!(!asked.contains("You are signed in as"), "{asked}"),
    }
    browser.click("button#continue-slicehub").await;
}

async fn close_other_windows(browser: &Browser) {
    let client = &browser.client;
    let here = client.window().await.unwrap();
    client.close_window().await.unwrap();
    let rest = client.windows().await.unwrap();
    let back = rest.into_iter().find(|w| *w != here).expect("the LMS window");
    client.switch_to_window(back).await.unwrap();
}

#[tokio::test]
async fn an_instructor_and_a_student_launch_from_a_framing_lms_with_third_party_cookies_blocked() {
    let port = free_port();
    // Another site than the LMS (127.0.0.1): the frame is third-party to the LMS page.
    let tool_url = format!("http://localhost:{port}");
    let platform = LtiPlatform::start(&tool_url).await;
    let bind = format!("127.0.0.1:{port}");
    let portal = Portal::start_on_port(
        &built_portal(),
        port,
        &[
            ("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("SLICEHUB_SERVER_BIND", bind.as_str()),
            ("SLICEHUB_SERVER_PUBLIC_URL", tool_url.as_str()),
        ],
    )
    .await;
    let out = portal.cli(
        &[
            "lms", "add", "moodle", "--issuer", &platform.issuer(), "--client-id", &platform.client_id(),
            "--deployment", &platform.deployment_id(), "--login-url", &platform.auth_login_url(),
            "--token-url", &platform.token_url(), "--jwks-url", &platform.jwks_url(),
        ],
        "",
    );
    assert!(out.contains("registered moodle"), "{out}");
    platform.set_members(vec![
        Member { user_id: "u-prof".into(), name: "Pat Prof".into(), email: "pat.prof@campus.example".into(), roles: vec![INSTRUCTOR.into()], status: "Active".into() },
        Member { user_id: "u-stu".into(), name: "Sam Student".into(), email: "sam@campus.example".into(), roles: vec![LEARNER.into()], status: "Active".into() },
        Member { user_id: "u-kim".into(), name: "Kim Lee".into(), email: "kim.lee@campus.example".into(), roles: vec![LEARNER.into()], status: "Active".into() },
    ]);
    let browser = Browser::start_blocking_third_party_cookies().await;

    // A student first: the course does not exist here until its instructor launches.
    platform.set_launch(person("u-stu", "Sam Student", "sam@campus.example", LEARNER), course());
    browser.client.goto(&platform.course_page_url()).await.unwrap();
    browser.client.enter_frame(0).await.unwrap();
    let words = browser.wait_text(".problem", "has not opened SliceHub").await;
    assert!(words.contains("instructor"), "{words}");
    browser.client.enter_parent_frame().await.unwrap();

    platform.set_launch(person("u-prof", "Pat Prof", "pat.prof@campus.example", INSTRUCTOR), course());
    launch_from_lms(&browser, &platform, Some("lti-launch-in-lms-frame"), None).await;
    browser.wait_text("h1", "Machine Learning Systems").await;
    let here = browser.client.current_url().await.unwrap();
    assert_eq!(here.path(), "/courses/ML-300", "{here}");
    // The instructor's launch read the roster (in the background): both learners are in.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        browser.open(&format!("{tool_url}/courses/ML-300")).await;
        let roster = browser.wait_text(".roster", "Pat Prof").await;
        if roster.contains("Kim Lee") && roster.contains("Sam Student") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the roster was never read: {roster}");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    browser.wait_for(".lms-roster .sync-roster").await;
    browser.wait_hydrated().await;
    platform.set_members(vec![
        Member { user_id: "u-prof".into(), name: "Pat Prof".into(), email: "pat.prof@campus.example".into(), roles: vec![INSTRUCTOR.into()], status: "Active".into() },
        Member { user_id: "u-stu".into(), name: "Sam Student".into(), email: "sam@campus.example".into(), roles: vec![LEARNER.into()], status: "Active".into() },
        Member { user_id: "u-kim".into(), name: "Kim Lee".into(), email: "kim.lee@campus.example".into(), roles: vec![LEARNER.into()], status: "Deleted".into() },
    ]);
    browser.click(".lms-roster .sync-roster").await;
    let result = browser.wait_text(".lms-roster", "1 dropped").await;
    assert!(result.contains("kim.lee"), "{result}");
    browser.check_page("course-lms-roster-sync").await;
    let roster = browser.wait_text(".roster", "Sam Student").await;
    assert!(!roster.contains("Kim Lee"), "dropped from the roster: {roster}");
    assert!(platform.token_requests() >= 1 && platform.nrps_requests() >= 2, "Names and Roles really read");
    close_other_windows(&browser).await;

    // The student, now that the course exists: a student of it, and nothing more.
    platform.set_launch(person("u-stu", "Sam Student", "sam@campus.example", LEARNER), course());
    launch_from_lms(&browser, &platform, None, Some("pat.prof")).await;
    browser.wait_text("h1", "Machine Learning Systems").await;
    assert!(browser.client.find(fantoccini::Locator::Css(".lms-roster")).await.is_err(), "a student manages no roster");
    browser.client.goto(&format!("{tool_url}/courses/ML-300/class")).await.unwrap();
    browser.wait_text("h1", "not open to you").await;
    browser.assert_no_console_errors("LMS launches").await;

    // The administrator's page for LMS platforms (the student signed out first).
    close_other_windows(&browser).await;
    browser.open(&format!("{tool_url}/")).await;
    browser.sign_out().await;
    browser.open(&format!("{tool_url}/login")).await;
    browser.fill("input[name=username]", "admin").await;
    browser.fill("input[name=password]", ADMIN_PASSWORD).await;
    browser.click("form.form button[type=submit]").await;
    browser.wait_for(".topbar .who").await;
    browser.open(&format!("{tool_url}/admin/lms")).await;
    browser.wait_text("tr[data-platform='moodle']", &platform.issuer()).await;
    let urls = browser.wait_text(".tool-urls", "/lti/jwks").await;
    assert!(urls.contains(&format!("{tool_url}/lti/login")), "{urls}");
    browser.check_page("admin-lms").await;
    browser.close().await;
}
