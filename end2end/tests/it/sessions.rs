//! A student's GPU sessions in a real browser: run a training job and read its output,
//! start JupyterLab and watch each step arrive, stop it; wait in the queue of a full GPU
//! and see the tab's title say when the session started. Screenshots of each state.
//! Needs the Docker engine, `slicehub/busybox:offline` and `slicehub/jupyterlab:offline`.

use fantoccini::Locator;
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::classroom::{password_of, Classroom, ADMIN_PASSWORD};
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::Browser;

const BUSYBOX: &str = "slicehub/busybox:offline";
const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

/// The running session's card, once it is in `state`, with its Details open.
async fn session_card_text(browser: &Browser, state: &str) -> String {
    let css = format!(".live-sessions .session[data-state={state}]");
    browser.wait_for(&css).await;
    browser.click(&format!("{css} .session-details summary")).await;
    browser.wait_for(&css).await.text().await.unwrap()
}

/// The newest past session, once it is a `kind` that ended in `state`, with its Details
/// open.
async fn history_text(browser: &Browser, kind: &str, state: &str) -> String {
    let css = format!(".session-history .history-row:first-child[data-kind={kind}][data-state={state}]");
    browser.wait_for(&css).await;
    browser.click(&format!("{css} .session-details summary")).await;
    browser.wait_for(&css).await.text().await.unwrap()
}

/// The id of the (first) running or waiting session's card.
async fn live_session_id(browser: &Browser) -> String {
    browser
        .client
        .find(Locator::Css(".live-sessions .session"))
        .await
        .unwrap()
        .attr("data-session")
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_student_runs_a_job_then_a_notebook_and_stops_it() {
    let class = Classroom::start(&built_portal(), &[("SLICEHUB_SESSIONS_IMAGES", BUSYBOX)]).await;
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
    browser.run_job(BUSYBOX, "echo training; done").await;
    let ended = history_text(&browser, "job", "ended").await;
    for step in ["requested", "allocating", "creating", "starting", "ready", "stopping", "ended"] {
        assert!(ended.contains(step), "step {step} missing: {ended}");
    }
    assert!(ended.contains("Job echo training; done") && ended.contains("Finished without errors."), "{ended}");
    browser.wait_text(".session-history .history-row:first-child .log-tail", "training; done").await;
    browser.check_page("sessions-job-ended").await;
    // Its last lines of output show in its row, unfolded, and "Run again" starts the same
    // job once more.
    let output = ".session-history .history-row:first-child .history-output";
    browser.wait_text(output, "training; done").await;
    browser
        .click(".session-history .history-row:first-child button.run-again")
        .await;
    let finished = ".session-history .history-row[data-kind=job][data-state=ended]";
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let rows = browser
            .client
            .find_all(Locator::Css(finished))
            .await
            .unwrap();
        if rows.len() >= 2 {
            break;
        }
        assert!(
            std::time::Instant::now() < until,
            "Run again started no second job"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    browser.wait_text(output, "training; done").await;
    let first = browser
        .wait_text(".session-history .history-row:first-child .what", "Job")
        .await;
    assert!(
        first.contains("Job echo training; done"),
        "the same command ran again: {first}"
    );

    // A notebook, followed live until JupyterLab answers.
    browser.click("form.launch-notebook button[type=submit]").await;
    let ready = session_card_text(&browser, "ready").await;
    assert!(ready.contains("JupyterLab answers at /user/alice/"), "{ready}");
    assert!(!ready.contains("MIG-"), "a student reads no MIG device UUIDs: {ready}");
    let launch = browser.wait_text(".launch", "1g.10gb").await;
    assert!(launch.contains("1g.10gb — 6 free"), "availability follows the claim: {launch}");
    browser.check_page("sessions-notebook-ready").await;

    browser.click(".live-sessions button.stop").await;
    let warning = browser.wait_text(".confirm-dialog", "Stop this notebook?").await;
    assert!(warning.contains("not saved is lost"), "stopping a notebook warns about unsaved work: {warning}");
    browser.click(".confirm-dialog .confirm-yes").await;
    let stopped = history_text(&browser, "notebook", "ended").await;
    assert!(stopped.contains("Stopped by alice."), "{stopped}");
    assert!(browser.client.find(Locator::Css("button.stop")).await.is_err());
    browser.screenshot("sessions-notebook-stopped").await;

    // Another notebook; the administrator's GPU board names who holds its slice.
    browser.click("form.launch-notebook button[type=submit]").await;
    session_card_text(&browser, "ready").await;
    let id = live_session_id(&browser).await;
    browser.click(".who button[type=submit]").await;
    browser.wait_for("input[name=username]").await;
    browser.sign_in(&portal.url, "admin", ADMIN_PASSWORD).await;
    browser.open(&format!("{}/gpus", portal.url)).await;
    browser.wait_text(".instances", &format!("alice · {id}")).await;
    browser.check_page("gpus-held").await;
    let resp = post(&client(), &portal.url, Some(admin), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200);
    browser.click(".who button[type=submit]").await;
    browser.wait_for("input[name=username]").await;

    // A full GPU (three 2g and a 1g: nothing else fits): alice's claim waits, says where
    // she stands, and when a slice frees it starts and the tab's title says so.
    let cookies = class.enroll(&["bob", "carol", "dave", "erin"]).await;
    let mut fillers = Vec::new();
    for (cookie, profile) in cookies.iter().zip(["2g.20gb", "2g.20gb", "2g.20gb", "1g.10gb"]) {
        let body = format!("course_id=1&profile={profile}&image={}&command=sleep%20600", urlencode(BUSYBOX));
        let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
        let view: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
        fillers.push(view["id"].as_str().unwrap().to_string());
    }
    browser.sign_in(&portal.url, "alice", &password_of("alice")).await;
    browser.open(&format!("{}/sessions", portal.url)).await;
    browser
        .wait_text(".launch", "1g.10gb — none free, you would wait")
        .await;
    // Before she claims, the form says when a claim would start.
    let offer = browser
        .wait_text(".launch .launch-waits", "No 1g.10gb slice is free now")
        .await;
    assert!(
        offer.contains("a claim made now would start") && offer.contains("at the latest"),
        "{offer}"
    );
    browser.run_job(BUSYBOX, "sleep 600").await;
    let waiting = browser
        .wait_text(".live-sessions .session[data-state=queued]", "next in line")
        .await;
    assert!(
        waiting.contains("Waiting for a free 1g.10gb slice: you are next in line."),
        "{waiting}"
    );
    // ...and when it will start: at the latest when the first filler's time limit is up.
    assert!(
        waiting.contains("Expected start:") && waiting.contains("at the latest"),
        "{waiting}"
    );
    let eta = browser
        .wait_for(".live-sessions .session[data-state=queued] .queue-eta .eta")
        .await;
    let read = |name: &'static str| {
        let eta = eta.clone();
        async move {
            eta.attr(name)
                .await
                .unwrap()
                .unwrap()
                .parse::<i64>()
                .unwrap()
        }
    };
    let (about, latest) = (read("data-about-ms").await, read("data-latest-ms").await);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(
        now < about && about <= latest,
        "about {about}, latest {latest}, now {now}"
    );
    assert_eq!(
        browser.client.title().await.unwrap(),
        "My sessions · SliceHub"
    );
    browser.check_page("sessions-queued").await;
    // The class dashboard shows her claim waiting, with the same expected start.
    browser.sign_out().await;
    browser.sign_in(&portal.url, "admin", ADMIN_PASSWORD).await;
    browser.open(&format!("{}/courses/CS-101/class", portal.url)).await;
    let row = browser.wait_text(".class-sessions tr[data-student=alice]", "at the latest").await;
    // A fresh portal has too few finished sessions of the size to guess from: no "about",
    // only the promise it keeps.
    assert!(row.to_lowercase().contains("1st in the 1g.10gb queue") && !row.contains("about"), "{row}");
    browser.check_page("class-dashboard-queue").await;
    browser.sign_out().await;
    browser.sign_in(&portal.url, "alice", &password_of("alice")).await;
    browser.open(&format!("{}/sessions", portal.url)).await;
    browser.wait_for(".live-sessions .session[data-state=queued]").await;
    let resp = post(&client(), &portal.url, Some(admin), "stop_session", format!("id={}", fillers[0])).await;
    assert_eq!(resp.status(), 200);
    browser.wait_for(".live-sessions .session[data-state=ready]").await;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let title = loop {
        let title = browser.client.title().await.unwrap();
        if title.starts_with("Your 1g.10gb job is ready") || std::time::Instant::now() > until {
            break title;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(title, "Your 1g.10gb job is ready · My sessions · SliceHub");
    let mine = live_session_id(&browser).await;
    for id in fillers.iter().skip(1).chain([&mine]) {
        post(&client(), &portal.url, Some(admin), "stop_session", format!("id={id}")).await;
    }
    browser.close().await;
}
