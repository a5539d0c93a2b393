//! Every page each role reaches (anonymous, student, instructor, administrator), at a
//! phone's 390 px and a desktop's 1280 px: never wider than the window, no WCAG 2 A/AA
//! violation axe-core finds, a screenshot of each. On the way: the menu button, plain
//! words on a student's sessions, confirmations before destructive clicks, success
//! messages and cleared forms, and error pages that keep the way around.
//! Needs the Docker engine and `slicehub/busybox:offline`.

use fantoccini::Locator;
use slicehub_end2end::classroom::{password_of, Classroom, ADMIN_PASSWORD, COURSE};
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::form::{client, get_text, post, urlencode};
use slicehub_end2end::Browser;

const BUSYBOX: &str = "slicehub/busybox:offline";

/// Opens `path`, waits for hydration and for `ready`, then checks the page as `name`.
async fn visit(browser: &Browser, url: &str, path: &str, ready: &str, name: &str) {
    browser.open(&format!("{url}{path}")).await;
    browser.wait_for(ready).await;
    browser.check_page(name).await;
}

async fn text(browser: &Browser, css: &str) -> String {
    browser.wait_for(css).await.text().await.unwrap()
}

async fn count(browser: &Browser, css: &str) -> usize {
    browser
        .client
        .find_all(Locator::Css(css))
        .await
        .unwrap()
        .len()
}

async fn sign_out(browser: &Browser) {
    browser.click(".who button[type=submit]").await;
    browser.wait_for("input[name=username]").await;
    browser.wait_text(".signed-out", "You are signed out").await;
}

async fn start_job(class: &Classroom, cookie: &str, command: &str) {
    let body = format!(
        "course_id=1&profile=1g.10gb&image={}&command={}",
        urlencode(BUSYBOX),
        urlencode(command)
    );
    let resp = post(
        &client(),
        &class.portal.url,
        Some(cookie),
        "start_session",
        body,
    )
    .await;
    assert!(
        resp.status().is_success(),
        "{}",
        resp.text().await.unwrap_or_default()
    );
}

#[tokio::test]
async fn every_page_fits_a_phone_and_passes_axe_for_every_role() {
    // The slice sampler every second, so a running job's card shows its activity soon.
    let class = Classroom::start(
        &built_portal(),
        &[("SLICEHUB_SESSIONS_SAMPLE_SECONDS", "1"), ("SLICEHUB_SESSIONS_IMAGES", BUSYBOX)],
    )
    .await;
    let url = class.portal.url.clone();
    class.portal.cli(
        &[
            "course",
            "policy",
            COURSE,
            "--images",
            BUSYBOX,
            "--profiles",
            "1g.10gb,2g.20gb",
        ],
        "",
    );
    let cookies = class.enroll(&["alice", "bob"]).await;
    class
        .portal
        .cli(&["course", "instructor", COURSE, "bob"], "");
    let browser = Browser::start().await;

    // Anonymous visitors.
    visit(&browser, &url, "/", ".status", "anon-home").await;
    visit(
        &browser,
        &url,
        "/login",
        "input[name=username]",
        "anon-login",
    )
    .await;
    visit(
        &browser,
        &url,
        "/no/such/page",
        ".notfound",
        "anon-not-found",
    )
    .await;

    // A student with a finished job, a failed one (its file is not in the home folder)
    // and one running.
    let alice = &cookies[0];
    browser.sign_in(&url, "alice", &password_of("alice")).await;
    start_job(&class, alice, "echo \"hello world\"").await;
    browser.open(&format!("{url}/sessions")).await;
    browser.wait_for(".history-row[data-state=ended]").await;
    start_job(&class, alice, "cat train.py").await;
    browser.wait_for(".history-row[data-state=failed]").await;
    start_job(&class, alice, "sleep 600").await;
    let card = text(&browser, ".live-sessions .session[data-state=ready]").await;
    assert!(
        card.contains("Job sleep 600") && card.contains("RUNNING"),
        "{card}"
    );
    assert!(
        card.contains("1g.10gb GPU slice") && card.contains("min left") && card.contains("Running for "),
        "{card}"
    );
    for internal in ["MIG-", "GPU-", "lowest GPU index", "placeable"] {
        assert!(
            !card.contains(internal),
            "{internal:?} is behind Details: {card}"
        );
    }
    let history = text(&browser, ".session-history").await;
    assert!(
        history.contains("Job echo 'hello world'"),
        "the title keeps the quotes: {history}"
    );
    assert!(
        history.contains("Finished without errors.") && history.contains("ran "),
        "{history}"
    );
    assert!(
        history.contains("exit code 1") && !history.contains("(exit code 1)"),
        "{history}"
    );
    assert_eq!(
        count(&browser, ".history-row details[open]").await,
        0,
        "past sessions are folded"
    );
    // The running job's slice: a live chart and what it uses (a sleeping job is idle).
    let activity = browser.wait_text(".live-sessions .activity-now", "% busy").await;
    assert!(activity.contains("memory"), "{activity}");
    browser.check_page("student-slice-activity").await;
    let hint = text(&browser, ".launch-job").await;
    assert!(hint.contains("home folder"), "{hint}");
    browser.check_page("student-sessions").await;

    // Details holds the internals; stopping asks first.
    browser
        .click(".live-sessions .session-details summary")
        .await;
    let details = text(&browser, ".live-sessions .session-details").await;
    // The student reads where it runs in plain words, never device or container ids.
    assert!(
        !details.contains("MIG-") && !details.contains("slicehub-s-") && details.contains("GPU 0"),
        "{details}"
    );
    browser.check_page("student-session-details").await;
    browser.click(".live-sessions button.stop").await;
    let dialog = text(&browser, ".confirm-dialog").await;
    assert!(dialog.contains("Stop this job?"), "{dialog}");
    browser.check_page("student-confirm-stop").await;
    browser.click(".confirm-dialog .confirm-cancel").await;
    assert_eq!(count(&browser, ".confirm-dialog").await, 0);
    assert_eq!(
        count(&browser, ".live-sessions .session").await,
        1,
        "Cancel stops nothing"
    );
    browser.click(".live-sessions button.stop").await;
    browser.click(".confirm-dialog .confirm-yes").await;
    browser
        .wait_text(".session-history", "stopped by alice")
        .await;

    // The history pages five at a time.
    for n in 1..=3 {
        start_job(&class, alice, &format!("echo page{n}")).await;
        browser
            .wait_text(".session-history .history-row:first-child", &format!("echo page{n}"))
            .await;
        browser
            .wait_for(".session-history .history-row:first-child[data-state=ended]")
            .await;
    }
    assert_eq!(count(&browser, ".session-history .history-row").await, 5);
    browser.wait_text(".pager", "Page 1 of 2").await;
    browser.click(".pager button.older").await;
    browser.wait_text(".pager", "Page 2 of 2").await;
    assert_eq!(count(&browser, ".session-history .history-row").await, 1);
    for width in [390, 1280] {
        browser.client.set_window_size(width, 1400).await.unwrap();
        browser
            .client
            .execute("document.querySelector('.pager').scrollIntoView({block: 'center'});", vec![])
            .await
            .unwrap();
        browser.screenshot(&format!("student-history-pager-{width}")).await;
    }
    browser.wait_text(".session-history", "echo 'hello world'").await;
    browser.click(".session-history .session-details summary").await;
    browser.check_page("student-history").await;

    // A student's home is their sessions: launch cards, what runs, the budget.
    visit(&browser, &url, "/", ".launch", "student-home").await;
    visit(
        &browser,
        &url,
        "/courses",
        ".course-grid",
        "student-courses",
    )
    .await;
    visit(
        &browser,
        &url,
        &format!("/courses/{COURSE}"),
        ".roster",
        "student-course",
    )
    .await;
    let members = text(&browser, "main .muted").await;
    assert!(
        members.contains(" members · ") && !members.contains("1 members"),
        "{members}"
    );
    // A student reads the course's rules and booked labs, and finds the way to start.
    let rules = text(&browser, ".course-rules").await.to_lowercase();
    for rule in [
        "slice sizes",
        "longest session",
        "sessions at once",
        "budget per student",
        "booked labs",
    ] {
        assert!(rules.contains(rule), "{rule:?} missing: {rules}");
    }
    assert_eq!(count(&browser, "a.start-link[href='/sessions']").await, 1);
    visit(
        &browser,
        &url,
        "/account",
        "input[name=current]",
        "student-account",
    )
    .await;

    // Error pages keep the navigation, and never offer a signed-in user "Sign in".
    visit(
        &browser,
        &url,
        "/no/such/page",
        ".notfound",
        "student-not-found",
    )
    .await;
    assert_eq!(
        count(&browser, "a.signin").await,
        0,
        "a signed-in user is not asked to sign in"
    );
    assert_eq!(count(&browser, ".who").await, 1);
    // The guard answers this one itself (the same page for a course that exists but is
    // not the student's, so codes cannot be tried out), like the 403 page: no bundle.
    browser.client.goto(&format!("{url}/courses/NO-SUCH-1")).await.unwrap();
    browser.wait_for(".notfound").await;
    browser.check_page("student-no-such-course").await;
    let page = text(&browser, "main").await;
    assert!(
        page.contains("There is no such course.") && !page.contains("status"),
        "{page}"
    );
    browser.client.goto(&format!("{url}/gpus")).await.unwrap();
    browser
        .wait_text("h1", "This page is not open to you.")
        .await;
    assert!(
        count(&browser, ".topbar .nav a").await >= 3 && count(&browser, "footer.footer").await == 1
    );
    browser.check_page("student-forbidden").await;

    // On a phone the navigation folds behind the menu button.
    browser.open(&format!("{url}/sessions")).await;
    browser.client.set_window_size(390, 1400).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!browser
        .wait_for(".topbar .nav")
        .await
        .is_displayed()
        .await
        .unwrap());
    browser.click(".menu-button").await;
    assert!(browser
        .wait_for(".topbar .nav")
        .await
        .is_displayed()
        .await
        .unwrap());
    browser.screenshot("student-menu-open-390").await;
    browser.click(".topbar .nav a[href='/courses']").await;
    browser.wait_for(".course-grid").await;
    assert!(
        !browser
            .wait_for(".topbar .nav")
            .await
            .is_displayed()
            .await
            .unwrap(),
        "the menu closes after a choice"
    );
    browser.client.set_window_size(1280, 1400).await.unwrap();
    sign_out(&browser).await;

    // The instructor.
    browser.sign_in(&url, "bob", &password_of("bob")).await;
    visit(&browser, &url, "/", ".teaching", "instructor-home").await;
    let teaching = text(&browser, &format!(".teaching[data-course=\"{COURSE}\"]")).await;
    assert!(teaching.contains("Class dashboard") && teaching.contains("1 student"), "{teaching}");
    visit(
        &browser,
        &url,
        &format!("/courses/{COURSE}"),
        ".import",
        "instructor-course",
    )
    .await;
    browser.click(".roster button.remove-student").await;
    browser
        .wait_text(".confirm-dialog", "Remove alice from CS-101?")
        .await;
    browser.click(".confirm-dialog .confirm-cancel").await;
    visit(
        &browser,
        &url,
        "/sessions",
        ".launch",
        "instructor-sessions",
    )
    .await;
    visit(
        &browser,
        &url,
        "/courses",
        ".course-grid",
        "instructor-courses",
    )
    .await;

    // Usage reports: alice's jobs count for the course, the chart draws them, and the
    // CSV behind the link carries the page's number.
    visit(&browser, &url, "/reports", ".report-table", "instructor-reports").await;
    let used = text(&browser, &format!(".report-table tbody tr[data-key=\"{COURSE}\"] .slice-hours")).await;
    assert!(count(&browser, ".use-chart svg rect").await > 0, "the chart has bars");
    let href = browser
        .wait_for(".report-csv")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let csv = get_text(&format!("{url}{href}"), &cookies[1]).await;
    let line = csv
        .lines()
        .find(|l| l.contains(&format!(",course,{COURSE},")))
        .unwrap_or_else(|| panic!("no {COURSE} line: {csv}"));
    assert_eq!(line.split(',').nth(4), Some(used.as_str()), "{csv}");
    sign_out(&browser).await;

    // The administrator.
    browser.sign_in(&url, "admin", ADMIN_PASSWORD).await;
    visit(&browser, &url, "/", ".gpu-card", "admin-home").await;
    let ops = text(&browser, ".ops-summary").await;
    assert!(ops.contains("Sessions now") && ops.contains("Needs attention"), "{ops}");
    // The operations home hydrated on some loads and panicked on others (a resource made
    // inside a Suspend): every load must come alive, with no panic in the console.
    for _ in 0..6 {
        browser.open(&format!("{url}/")).await;
        browser.wait_for(".gpu-card").await;
    }
    visit(&browser, &url, "/gpus", ".gpu-section", "admin-gpus").await;
    // A GPU is named the same on every page: its index and its model.
    let name = text(&browser, ".gpu-card .gpu-name").await;
    assert!(
        name.starts_with("GPU 0 · ") && name.len() > "GPU 0 · ".len(),
        "{name}"
    );
    // Draining a GPU says who drained it, on the card and above its instances; back in
    // service, both go.
    // It asks first and says what follows: on the only GPU, every claim waits.
    browser.click(".gpu-section button.drain").await;
    let warning = browser.wait_text(".confirm-warning", "only GPU taking sessions").await;
    assert!(warning.contains("No session runs on it now"), "{warning}");
    browser.click(".confirm-dialog .confirm-cancel").await;
    assert_eq!(count(&browser, ".drained-note").await, 0, "Cancel drained nothing");
    browser.click(".gpu-section button.drain").await;
    browser.click(".confirm-dialog .confirm-yes").await;
    browser.wait_text(".drained-note", "Drained by admin").await;
    browser.wait_text(".gpu-card .badge", "drained").await;
    browser.check_page("admin-gpu-drained").await;
    browser.click(".gpu-section button.undrain").await;
    browser.wait_for(".gpu-section button.drain").await;
    assert_eq!(count(&browser, ".drained-note").await, 0);
    visit(&browser, &url, "/status", ".status", "admin-status").await;
    visit(&browser, &url, "/reports?period=term&group=gpu", ".gpu-chart", "admin-reports-gpu").await;
    let gpu = text(&browser, ".report-table tbody th").await;
    assert!(gpu.starts_with("GPU-"), "admins see GPU UUIDs: {gpu}");
    // A range that ends before it begins: the form stays, with the reason.
    visit(
        &browser,
        &url,
        "/reports?period=custom&from=2026-12-01&to=2026-11-01&group=course",
        ".report-form",
        "admin-reports-bad-range",
    )
    .await;
    browser.wait_text(".page", "before it begins").await;
    // The audit log: sign-ins only, then a refused filter that keeps the form.
    visit(&browser, &url, "/admin/audit?what=login", ".audit-table", "admin-audit").await;
    let kinds: Vec<String> = {
        let rows = browser.client.find_all(Locator::Css(".audit-table tbody tr")).await.unwrap();
        let mut out = Vec::new();
        for row in rows {
            out.push(row.attr("data-action").await.unwrap().unwrap_or_default());
        }
        out
    };
    assert!(!kinds.is_empty() && kinds.iter().all(|k| k.starts_with("login")), "{kinds:?}");
    visit(&browser, &url, "/admin/audit?from=2026-12-01&to=2026-11-01", ".audit-form", "admin-audit-bad-range").await;
    browser.wait_text(".page", "before the first").await;

    // All sessions: alice's running job, stopped by the administrator with a reason she
    // then reads on her own sessions page.
    start_job(&class, alice, "sleep 600").await;
    let running = ".ops-sessions tr[data-state=ready]";
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        browser.open(&format!("{url}/admin/sessions?state=live")).await;
        if count(&browser, running).await == 1 {
            break;
        }
        assert!(std::time::Instant::now() < until, "alice's job never showed as running");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    browser.check_page("admin-all-sessions").await;
    let gpu = text(&browser, &format!("{running} td[data-label=GPU]")).await;
    assert!(
        gpu.starts_with("GPU ") && gpu.contains(" · "),
        "the GPU as the GPU page names it: {gpu}"
    );
    browser.click(&format!("{running} .stop-with-reason summary")).await;
    browser.fill(&format!("{running} .stop-form input[name=reason]"), "the GPU goes to maintenance").await;
    browser.click(&format!("{running} .stop-form button[type=submit]")).await;
    browser.wait_text(".form-ok", "Session stopped").await;
    // Over, it leaves the list of live sessions.
    browser.wait_text(".page", "No session matches this filter.").await;
    let mine = post(&client(), &url, Some(alice), "my_sessions", String::new()).await.text().await.unwrap();
    assert!(mine.contains("stopped by admin: the GPU goes to maintenance"), "{mine}");
    visit(&browser, &url, "/courses", ".course-grid", "admin-courses").await;
    visit(
        &browser,
        &url,
        &format!("/courses/{COURSE}"),
        ".roster",
        "admin-course",
    )
    .await;
    visit(
        &browser,
        &url,
        "/sessions",
        ".launch, .empty-state",
        "admin-sessions",
    )
    .await;
    visit(
        &browser,
        &url,
        "/account",
        "input[name=current]",
        "admin-account",
    )
    .await;

    // Adding a course says so and empties the form.
    browser.open(&format!("{url}/courses")).await;
    browser.fill("input[name=code]", "CS-102").await;
    browser.fill("input[name=title]", "Vision").await;
    browser
        .click(".grid-sidebar form button[type=submit]")
        .await;
    browser.wait_text(".form-ok", "Course created").await;
    browser.wait_text(".course-grid", "CS-102").await;
    assert_eq!(
        browser
            .wait_for("input[name=code]")
            .await
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default(),
        ""
    );

    // Users: adding clears the form; reset and disable ask first.
    visit(&browser, &url, "/admin/users", ".users", "admin-users").await;
    browser.fill("input[name=username]", "dana").await;
    browser.fill("input[name=display_name]", "Dana").await;
    browser
        .click(".grid-sidebar form button[type=submit]")
        .await;
    browser.wait_text(".otp", "dana").await;
    browser.wait_text(".users tbody", "Dana").await;
    assert_eq!(
        browser
            .wait_for("input[name=username]")
            .await
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default(),
        ""
    );
    browser.click("tr[data-user=alice] button.reset").await;
    browser
        .wait_text(".confirm-dialog", "Reset alice's password?")
        .await;
    browser.check_page("admin-confirm-reset").await;
    browser.click(".confirm-dialog .confirm-yes").await;
    browser.wait_text(".otp", "alice").await;
    let alice_otp = text(&browser, ".otp-value").await;
    browser.click("tr[data-user=dana] button.disable").await;
    browser.wait_text(".confirm-dialog", "Disable dana?").await;
    browser.click(".confirm-dialog .confirm-yes").await;
    browser.wait_text(".form-ok", "dana is disabled").await;
    browser.wait_text("tr[data-user=dana]", "disabled").await;
    browser.check_page("admin-users-after").await;
    sign_out(&browser).await;

    // A one-time password: the banner goes once the new password is set.
    browser.sign_in(&url, "alice", &alice_otp).await;
    browser.open(&format!("{url}/account")).await;
    browser
        .wait_text(".must-change", "Choose a new password")
        .await;
    browser.check_page("student-must-change").await;
    browser.fill("input[name=current]", &alice_otp).await;
    browser
        .fill("input[name=new_password]", "alice-new-password")
        .await;
    browser
        .fill("input[name=confirm]", "alice-new-password")
        .await;
    browser.click(".grid-2 form button[type=submit]").await;
    browser.wait_text(".form-ok", "Password changed").await;
    assert_eq!(
        count(&browser, ".must-change").await,
        0,
        "the banner is gone"
    );
    assert_eq!(
        browser
            .wait_for("input[name=current]")
            .await
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default(),
        ""
    );
    browser.check_page("student-password-changed").await;
    browser.close().await;
}

/// A fleet of MIG GPUs, whole GPUs and GPUs split into shares: the GPU page says how each
/// is used and what a session on it is guaranteed, and the launch card offers whole GPUs
/// and shares with what they give, guarantee and cost; both pages at both widths.
#[tokio::test]
async fn a_mixed_fleet_shows_whole_gpus_and_shares_on_the_gpu_page_and_the_launch_card() {
    let class = Classroom::start(
        &built_portal(),
        &[
            ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB, 1 x L40S-48GB, 1 x H100-80GB mig=off, 1 x L4-24GB, 1 x T4-16GB"),
            ("SLICEHUB_GPU_SHARES", "3 = 4 mps, 4 = 2 time-sliced-no-isolation"),
            ("SLICEHUB_GPU_WEIGHTS", "l40s.48gb = 4"),
            ("SLICEHUB_SESSIONS_IMAGES", BUSYBOX),
        ],
    )
    .await;
    let url = class.portal.url.clone();
    class.portal.cli(
        &["course", "policy", COURSE, "--images", BUSYBOX, "--profiles", "1g.10gb,l40s.48gb,h100.80gb,l4.24gb.1of4,t4.16gb.1of2", "--max-slices", "7"],
        "",
    );
    class.enroll(&["carol"]).await;
    let browser = Browser::start().await;
    browser.sign_in(&url, "admin", ADMIN_PASSWORD).await;
    visit(&browser, &url, "/gpus", ".gpu-section", "admin-gpus-mixed-fleet").await;
    let page = text(&browser, "main").await;
    assert!(page.contains("no MIG: used whole") && page.contains("MIG off: used whole"), "{page}");
    assert!(page.contains("l40s.48gb") && page.contains("h100.80gb"), "{page}");
    // The card's head is set in capitals.
    let lower = page.to_lowercase();
    assert!(lower.contains("sharing: 4 capped shares (mps)") && lower.contains("sharing: 2 time-sliced shares, no isolation"), "{page}");
    assert!(page.contains("4 of 4 shares") && page.contains("2 of 2 shares"), "{page}");
    assert!(page.contains("at most 5758 MiB of GPU memory and 25% of its compute"), "{page}");
    assert!(page.contains("MIG slice: its own memory and compute"), "{page}");
    // The shared GPUs' cards, further down the page, at both widths.
    browser.client.execute("document.querySelectorAll('.gpu-section')[3].scrollIntoView()", vec![]).await.unwrap();
    browser.screenshot_widths("admin-gpus-mixed-fleet-shares").await;
    sign_out(&browser).await;
    browser.sign_in(&url, "carol", &password_of("carol")).await;
    visit(&browser, &url, "/sessions", "section.launch", "student-launch-mixed-fleet").await;
    let options = text(&browser, "section.launch select[name=profile]").await;
    assert!(options.contains("l40s.48gb — 1 free · the whole GPU, 48 GB GPU memory, 4 slice-hours per hour"), "{options}");
    assert!(options.contains("h100.80gb — 1 free · the whole GPU, 80 GB GPU memory, 7 slice-hours per hour"), "{options}");
    assert!(
        options.contains("l4.24gb.1of4 — 4 free · 1 of 4 shares of a 24 GB GPU, 1.75 slice-hours per hour · capped share (MPS)"),
        "{options}"
    );
    let groups = browser.client.execute(
        "return [...document.querySelectorAll('section.launch .launch-notebook optgroup')].map(g => g.label + ': ' + [...g.children].map(o => o.value).join(','));",
        vec![],
    ).await.unwrap();
    assert_eq!(
        groups,
        serde_json::json!(["MIG slices: 1g.10gb", "Whole GPUs: l40s.48gb,h100.80gb", "Shares of a GPU: l4.24gb.1of4,t4.16gb.1of2"]),
        "a mixed fleet's sizes grouped by kind"
    );
    // The chosen size's facts stand in full under the list.
    browser.client.execute(
        "const s = document.querySelector('section.launch .launch-notebook select[name=profile]'); s.value = 'l4.24gb.1of4'; s.dispatchEvent(new Event('change'));",
        vec![],
    ).await.unwrap();
    browser.wait_text("section.launch .launch-notebook .size-facts", "not isolated from the GPU's other sessions (one MPS server, one /dev/shm)").await;
    browser.check_page("student-launch-mixed-fleet-share-chosen").await;
    assert!(options.contains("t4.16gb.1of2 — 2 free · 1 of 2 shares of a 16 GB GPU, 3.5 slice-hours per hour · time-sliced share: no memory cap"), "{options}");
    assert!(options.contains("1g.10gb — 7 free · 10 GB GPU memory, 1 of 7 compute slices"), "{options}");
    browser.close().await;
}
