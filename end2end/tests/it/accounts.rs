//! Signing in as each role in a real browser: the right navigation, the right refusals,
//! one-time passwords, an instructor importing a roster (an existing account invited, and
//! joining), resetting a student's password, and the admin's GPU board.

use fantoccini::Locator;
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::{form, workspace_root, Browser, Portal};

const ADMIN_PASSWORD: &str = "correct-horse-battery";

async fn sign_in(browser: &Browser, url: &str, username: &str, password: &str) {
    browser.open(&format!("{url}/login")).await;
    browser.fill("input[name=username]", username).await;
    browser.fill("input[name=password]", password).await;
    browser.click("form button[type=submit]").await;
}

async fn sign_out(browser: &Browser) {
    browser.click(".who button[type=submit]").await;
    browser.wait_for("input[name=username]").await;
}

async fn nav_links(browser: &Browser) -> Vec<String> {
    let mut out = Vec::new();
    for link in browser
        .client
        .find_all(Locator::Css(".topbar .nav a"))
        .await
        .unwrap()
    {
        out.push(link.text().await.unwrap());
    }
    out
}

async fn change_password(browser: &Browser, current: &str, new: &str) {
    browser.fill("input[name=current]", current).await;
    browser.fill("input[name=new_password]", new).await;
    browser.fill("input[name=confirm]", new).await;
    browser.click(".grid-2 form button[type=submit]").await;
    browser.wait_text(".form-ok", "Password changed").await;
}

#[tokio::test]
async fn each_role_sees_its_own_portal() {
    let portal = Portal::start(
        &built_portal(),
        &[
            ("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB, 1 x A100-40GB"),
        ],
    )
    .await;
    portal.cli(&["gpu", "layout", "0", "all-balanced"], "");
    let browser = Browser::start().await;
    let url = portal.url.clone();

    // A wrong password says so, without telling whether the account exists.
    sign_in(&browser, &url, "admin", "not-the-password").await;
    let error = browser
        .wait_text(".form-error", "Wrong username or password.")
        .await;
    sign_in(&browser, &url, "nobody", "not-the-password").await;
    assert_eq!(browser.wait_text(".form-error", "Wrong").await, error);
    browser.check_page("login-error").await;

    // The administrator sees everything, the GPU board included.
    sign_in(&browser, &url, "admin", ADMIN_PASSWORD).await;
    browser.wait_text(".who-name", "Administrator").await;
    assert_eq!(
        nav_links(&browser).await,
        ["Overview", "Sessions", "Courses", "Reports", "All sessions", "GPUs", "Users", "Audit", "LMS", "Status"]
    );
    browser.screenshot("admin-home").await;
    browser.open(&format!("{url}/gpus")).await;
    let board = browser
        .wait_text(".gpu-section", "static: all-balanced")
        .await;
    assert!(
        board.contains("3g.40gb") && board.contains("2g.20gb"),
        "{board}"
    );
    assert_eq!(
        browser
            .client
            .find_all(Locator::Css(".gpu-section .instance"))
            .await
            .unwrap()
            .len(),
        4
    );
    browser.screenshot("admin-gpus").await;
    browser.open(&format!("{url}/status")).await;
    browser.wait_text(".status", "Database").await;
    browser.screenshot("admin-status").await;

    // …adds an instructor, who gets a one-time password…
    browser.open(&format!("{url}/admin/users")).await;
    browser.fill("input[name=username]", "ivy").await;
    browser
        .fill("input[name=display_name]", "Ivy Instructor")
        .await;
    browser
        .click(".grid-sidebar form button[type=submit]")
        .await;
    let notice = browser.wait_text(".otp", "ivy").await;
    let ivy_otp = browser.wait_for(".otp-value").await.text().await.unwrap();
    assert!(ivy_otp.len() >= 10, "{notice}");
    browser.wait_text(".users tbody", "Ivy Instructor").await;
    browser.screenshot("admin-users").await;

    // …creates a course and makes her its instructor.
    browser.open(&format!("{url}/courses")).await;
    browser.fill("input[name=code]", "CS-101").await;
    browser.fill("input[name=title]", "Deep Learning Lab").await;
    browser
        .click(".grid-sidebar form button[type=submit]")
        .await;
    browser.wait_text(".course-grid", "CS-101").await;
    browser.screenshot("courses").await;
    browser.open(&format!("{url}/courses/CS-101")).await;
    browser.fill("form input[name=username]", "ivy").await;
    browser.click(".stack form button[type=submit]").await;
    browser.wait_text(".roster tbody", "ivy").await;
    sign_out(&browser).await;

    // The instructor must replace the one-time password before anything else.
    sign_in(&browser, &url, "ivy", &ivy_otp).await;
    browser.wait_text(".notice", "Choose a new password").await;
    browser.screenshot("account-must-change").await;
    browser
        .client
        .goto(&format!("{url}/courses"))
        .await
        .unwrap();
    browser.wait_for("input[name=current]").await; // sent back to the account page
    change_password(&browser, &ivy_otp, "ivy-new-password").await;

    // She imports a roster: preview first, then apply, then the passwords file.
    let csv = workspace_root().join("target/e2e-roster.csv");
    std::fs::write(
        &csv,
        "username,display name,email\nsam,Sam Student,sam@example.edu\npat,Pat Student,\n",
    )
    .unwrap();
    browser.open(&format!("{url}/courses/CS-101")).await;
    browser
        .fill("input[type=file]", csv.to_str().unwrap())
        .await;
    browser.wait_text(".preview-summary", "2 new").await;
    browser.check_page("roster-preview").await;
    browser.click("button.apply-roster:not([disabled])").await;
    browser.wait_text(".applied", "2 created").await;
    let href = browser
        .wait_for("a.download-passwords")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    browser.wait_text(".roster tbody", "Sam Student").await;
    browser.check_page("roster-applied").await;
    let passwords = form::percent_decode(href.split_once(',').unwrap().1);
    let sam_otp = passwords
        .lines()
        .find_map(|l| l.strip_prefix("sam,"))
        .expect("sam's one-time password is in the download")
        .trim()
        .to_string();
    assert_eq!(nav_links(&browser).await, ["Overview", "Sessions", "Courses", "Reports"]);
    sign_out(&browser).await;

    // A student sees their course and nothing of the administration.
    sign_in(&browser, &url, "sam", &sam_otp).await;
    change_password(&browser, &sam_otp, "sam-new-password").await;
    assert_eq!(nav_links(&browser).await, ["Overview", "Sessions", "Courses"]);
    browser.open(&format!("{url}/courses")).await;
    browser.wait_text(".course-grid", "Deep Learning Lab").await;
    browser.client.goto(&format!("{url}/gpus")).await.unwrap();
    browser
        .wait_text("h1", "This page is not open to you.")
        .await;
    browser.screenshot("student-forbidden").await;
    sign_out(&browser).await;

    // Sam forgets the password: the instructor gives a new one-time password from the
    // roster, which ends the old one.
    sign_in(&browser, &url, "ivy", "ivy-new-password").await;
    browser.wait_text(".who-name", "Ivy").await;
    browser.open(&format!("{url}/courses/CS-101")).await;
    browser
        .click("tr[data-member=sam] button.reset-student")
        .await;
    browser.wait_text(".confirm-question", "Give sam a new password?").await;
    browser.click(".confirm-dialog button.confirm-yes").await;
    browser.wait_text(".otp", "sam").await;
    let sam_reset = browser.wait_for(".otp-value").await.text().await.unwrap();
    browser.check_page("roster-password-reset").await;
    sign_out(&browser).await;
    sign_in(&browser, &url, "sam", "sam-new-password").await;
    browser.wait_text(".form-error", "Wrong username or password.").await;
    sign_in(&browser, &url, "sam", &sam_reset).await;
    browser.wait_text(".notice", "Choose a new password").await;
    sign_out(&browser).await;

    // An account that exists already is invited, not enrolled: its owner decides, and the
    // file's name and e-mail for it are neither stored nor shown.
    portal.cli(&["user", "add", "olga", "--name", "Olga", "--password-stdin"], "olga-password-1\n");
    sign_in(&browser, &url, "ivy", "ivy-new-password").await;
    browser.wait_text(".who-name", "Ivy").await;
    std::fs::write(&csv, "username,display name,email\nolga,Someone Else,trap@example.edu\n").unwrap();
    browser.open(&format!("{url}/courses/CS-101")).await;
    browser.fill("input[type=file]", csv.to_str().unwrap()).await;
    browser.wait_text(".preview-summary", "1 to invite").await;
    browser.click("button.apply-roster:not([disabled])").await;
    browser.wait_text(".applied", "1 invited").await;
    let roster = browser.wait_text(".invited", "olga (Olga)").await;
    assert!(!roster.contains("trap@example.edu") && !roster.contains("Someone Else"), "{roster}");
    sign_out(&browser).await;
    sign_in(&browser, &url, "olga", "olga-password-1").await;
    browser.wait_text(".who-name", "Olga").await;
    browser.open(&format!("{url}/courses")).await;
    browser.wait_text(".invitations", "ivy invited you").await;
    browser.check_page("courses-invitation").await;
    browser.click(".invitation[data-course=CS-101] button.join-course").await;
    browser.wait_text(".form-ok", "Joined").await;
    browser.wait_text(".course-grid", "Deep Learning Lab").await;
    browser.close().await;
}
