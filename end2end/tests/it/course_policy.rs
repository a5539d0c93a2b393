//! An instructor sets the course policy and a slice-hour quota in the browser (bad values
//! get per-field messages and keep what was typed), a student sees the budget and is
//! refused a launch it cannot pay for, and extra time granted shows in the class's table
//! (its audit row is checked in core/tests/it/quotas.rs). The instructor then watches the
//! class on its dashboard and stops the student's session with a reason the student reads.
//! Screenshots of each at 390 and 1280 px, checked by axe.

use slicehub_end2end::classroom::{password_of, Classroom, ADMIN_PASSWORD, COURSE};
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::Browser;

#[tokio::test]
async fn an_instructor_sets_a_quota_and_the_student_sees_and_meets_it() {
    // Warnings two hours ahead, so a session that may run one more hour shows one at once.
    // The administrator's list of images holds one this engine does not have.
    let class = Classroom::start(
        &built_portal(),
        &[("SLICEHUB_QUOTAS_WARN_MINUTES", "120"), ("SLICEHUB_SESSIONS_IMAGES", "slicehub/not-here:1")],
    )
    .await;
    let url = class.portal.url.clone();
    let cookies = class.enroll(&["uma", "vic", "wes"]).await;
    class.portal.cli(&["course", "instructor", COURSE, "vic"], "");
    let browser = Browser::start().await;

    browser.sign_in(&url, "vic", &password_of("vic")).await;
    browser.open(&format!("{url}/courses/{COURSE}")).await;
    browser.click("a.policy-link").await;
    browser.wait_for("form.policy-form").await;
    browser.wait_hydrated().await;
    assert_eq!(
        browser.wait_for("#policy-max_slices").await.prop("value").await.unwrap().as_deref(),
        Some("4"),
        "the default cap keeps a whole GPU from one student"
    );
    let offered = browser
        .client
        .execute("return Array.from(document.querySelectorAll('#policy-max_slices option')).map(o => o.value).join(',');", vec![])
        .await
        .unwrap();
    assert_eq!(offered, serde_json::json!("1,2,3,4,7"), "only sizes an H100 has (no 5g or 6g)");

    // Bad values: a message under each field, nothing saved, nothing typed lost.
    browser.replace("#policy-quota_hours", "-2").await;
    browser.replace("#policy-time_zone", "Mars/Olympus").await;
    browser.replace("#policy-max_minutes", "0").await;
    browser.click("form.policy-form button[type=submit]").await;
    browser.wait_text("[data-field=quota_hours] .field-error", "from 0.1 to 10000").await;
    browser.wait_text("[data-field=time_zone] .field-error", "not a time zone").await;
    browser.wait_text("[data-field=max_minutes] .field-error", "outside 1 to 10080").await;
    browser.wait_text("main", "Nothing was saved").await;
    let typed = browser.wait_for("#policy-time_zone").await.prop("value").await.unwrap();
    assert_eq!(typed.as_deref(), Some("Mars/Olympus"), "what was typed stays");
    browser.check_page("policy-refused").await;

    // The images are the administrator's list, the course's own ticked; the one this
    // engine lacks is marked. Ticked and saved with right values, it is refused with words
    // (the engine pulls nothing, so every start would fail) and nothing is saved.
    let images = "slicehub/jupyterlab:offline".to_string();
    let field = "input[type=hidden][name=images]";
    assert_eq!(browser.wait_for(field).await.attr("value").await.unwrap().as_deref(), Some(images.as_str()));
    browser.wait_text("#policy-images", "not on this server").await;
    browser.click(".images-ticks input[value='slicehub/not-here:1']").await;
    assert_eq!(
        browser.wait_for(field).await.attr("value").await.unwrap().as_deref(),
        Some("slicehub/jupyterlab:offline, slicehub/not-here:1")
    );
    browser.replace("#policy-quota_hours", "0.1").await;
    browser.replace("#policy-time_zone", "Europe/Berlin").await;
    browser.replace("#policy-max_minutes", "90").await;
    browser.click("form.policy-form button[type=submit]").await;
    browser.wait_text("[data-field=images] .field-error", "not present on this server: slicehub/not-here:1").await;
    browser.check_page("policy-images").await;

    // From the attacker's side: no call, not even an administrator's, gives the course an
    // image off the list (with Slurm it would run as every student with their home).
    let off_list = "code=CS-101&images=evil/any:1&profiles=&max_minutes=60&max_sessions=1&max_slices=2&internet=on&quota_hours=&period=week&reset_day=0&reset_time=00:00&term_starts=&term_ends=&time_zone=UTC";
    let answer = slicehub_end2end::form::post(&slicehub_end2end::form::client(), &url, Some(&class.admin), "save_course_policy", off_list.to_string()).await;
    let answer = answer.text().await.unwrap_or_default();
    assert!(answer.contains("not among this portal") && answer.contains("evil/any:1"), "{answer}");
    let audit = slicehub_end2end::form::get_text(&format!("{url}/admin/audit.csv"), &class.admin).await;
    assert!(audit.contains("course.") && !audit.contains("evil/any"), "no policy with it was stored: {audit}");

    // Right values: saved, and the student's page follows. The sizes are these GPUs' own,
    // ticked rather than typed.
    browser.click(".images-ticks input[value='slicehub/not-here:1']").await;
    browser.click(".profiles-ticks input[value='1g.10gb']").await;
    browser.click("#policy-booked_time option[value=free]").await;
    browser.click("form.policy-form button[type=submit]").await;
    browser.wait_text(".form-ok", "Policy saved").await;
    assert_eq!(
        browser.wait_for("#policy-booked_time").await.prop("value").await.unwrap().as_deref(),
        Some("free"),
        "booked lab time is free for this course"
    );
    assert_eq!(
        browser.wait_for("#policy-quota_hours").await.prop("value").await.unwrap().as_deref(),
        Some("0.1")
    );
    assert_eq!(
        browser.wait_for("input[type=hidden][name=profiles]").await.attr("value").await.unwrap().as_deref(),
        Some("1g.10gb"),
        "the ticked size is the course's only one"
    );
    browser.wait_text(".student-budgets", "0 of 0.1").await;
    browser.check_page("policy-saved").await;

    // A lab booking: one in the past is refused with the reason and keeps nothing; one
    // tomorrow afternoon (the course's time, Berlin) is listed for the class.
    browser.open(&format!("{url}/courses/{COURSE}")).await;
    browser.click("a.bookings-link").await;
    browser.wait_for("form.booking-form").await;
    browser.wait_hydrated().await;
    browser.wait_text("main", "No lab session is booked.").await;
    // The date field takes YYYY-MM-DD from a script whatever the browser's locale.
    let set_day = |days: i64| {
        let client = browser.client.clone();
        async move {
            let script = "document.querySelector('form.booking-form input[name=date]').value = \
                new Date(Date.now() + arguments[0] * 86400000).toISOString().slice(0, 10);";
            client.execute(script, vec![days.into()]).await.unwrap();
        }
    };
    set_day(-1).await;
    browser.replace("form.booking-form input[name=slices]", "2").await;
    browser.click("form.booking-form button[type=submit]").await;
    browser.wait_text(".form-error, [role=alert]", "has passed").await;
    browser.wait_text("main", "No lab session is booked.").await;
    browser.check_page("bookings-refused").await;
    set_day(1).await;
    browser.click("form.booking-form button[type=submit]").await;
    browser.wait_text(".form-ok, [role=status]", "Booked").await;
    let row = browser.wait_text("table.bookings tbody tr", "2 × 1g.10gb").await;
    assert!(row.contains("once") && row.contains("by vic"), "{row}");
    browser.check_page("bookings-saved").await;
    browser.sign_out().await;

    browser.sign_in(&url, "uma", &password_of("uma")).await;
    browser.open(&format!("{url}/sessions")).await;
    let budget = browser.wait_text(".launch .budget", "slice-hours left").await;
    assert!(
        budget.contains("0.1 of 0.1 slice-hours left this week")
            && budget.contains("resets Monday 00:00 (Europe/Berlin)"),
        "{budget}"
    );
    browser.wait_text(".launch .launch-head", "Sessions stop after 90 minutes").await;
    // 0.1 slice-hours do not pay for the shortest start (15 minutes of a 1g): the card says
    // so instead of offering sizes that would be refused, and Start is off.
    let why = browser.wait_text(".launch .launch-full", "slice-hours").await;
    assert!(
        why.contains("do not cover the shortest start") && why.contains("resets Monday 00:00 (Europe/Berlin)"),
        "{why}"
    );
    let start_disabled = browser
        .wait_for("form.launch-notebook button[type=submit]")
        .await
        .prop("disabled")
        .await
        .unwrap();
    assert_eq!(start_disabled.as_deref(), Some("true"), "Start is off while nothing is affordable");
    let label = browser
        .client
        .execute("return document.querySelector('form.launch-notebook select[name=profile] option').textContent;", vec![])
        .await
        .unwrap();
    let label = label.as_str().unwrap_or_default().to_string();
    assert!(label.starts_with("1g.10gb") && label.contains("not enough slice-hours left"), "{label}");
    assert!(
        browser.client.find(fantoccini::Locator::Css(".live-sessions .session")).await.is_err(),
        "nothing was queued"
    );
    browser.check_page("student-budget-refused").await;
    browser.sign_out().await;

    // Extra time for the student, recorded and shown in the class's table.
    browser.sign_in(&url, "vic", &password_of("vic")).await;
    browser.open(&format!("{url}/courses/{COURSE}/policy")).await;
    browser.wait_for(".grant-form").await;
    browser.replace(".grant-form input[name=hours]", "1").await;
    browser.replace(".grant-form input[name=reason]", "makeup lab").await;
    browser.click(".grant-form button[type=submit]").await;
    browser.wait_text(".form-ok", "1 more slice-hours").await;
    browser.wait_text(".student-budgets tr[data-student=uma]", "0 of 1.1").await;
    browser.check_page("policy-granted").await;
    browser.sign_out().await;

    // Now the student runs: 1.1 slice-hours on a 1g last 66 minutes, before the 90-minute
    // limit, so the card says the budget stops it and warns ahead.
    browser.sign_in(&url, "uma", &password_of("uma")).await;
    browser.open(&format!("{url}/sessions")).await;
    browser.wait_text(".launch .budget", "1.1 of 1.1 slice-hours left").await;
    browser.fill(".launch-job input[name=command]", "sleep 600").await;
    browser.click(".launch-job button[type=submit]").await;
    browser.wait_for(".live-sessions .session[data-state=ready]").await;
    let card = browser
        .wait_text(".live-sessions .session", "when your slice-hours run out")
        .await;
    assert!(card.contains("min left"), "{card}");
    let warning = browser.wait_text(".live-sessions .stop-warning", "Save your work").await;
    assert!(warning.contains("(your slice-hours run out)"), "{warning}");
    browser.check_page("student-quota-warning").await;
    browser.sign_out().await;

    // A classmate's job runs too, on the row after uma's (with an hour granted for it).
    let grant = slicehub_end2end::form::post(
        &slicehub_end2end::form::client(),
        &url,
        Some(&class.admin),
        "grant_extra_hours",
        format!("code={COURSE}&username=wes&hours=1&reason=lab"),
    )
    .await;
    assert_eq!(grant.status(), 200, "{}", grant.text().await.unwrap_or_default());
    let body = format!("course_id=1&profile=1g.10gb&image={}&command=sleep+600", slicehub_end2end::form::urlencode(&images));
    let resp = slicehub_end2end::form::post(&slicehub_end2end::form::client(), &url, Some(&cookies[2]), "start_session", body).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap_or_default());

    // The instructor watches the class, and stops the session with a reason.
    browser.sign_in(&url, "vic", &password_of("vic")).await;
    browser.open(&format!("{url}/courses/{COURSE}")).await;
    browser.click("a.class-link").await;
    let row = browser.wait_text(".class-sessions tr[data-student=uma]", "running").await;
    assert!(row.contains("1g.10gb job") && row.contains("min left"), "{row}");
    browser.wait_text(".class-usage tr[data-student=uma]", "1.1").await;
    browser.wait_text("table.bookings", "2 × 1g.10gb").await;
    browser.wait_hydrated().await;
    browser.check_page("class-dashboard").await;
    browser.click(".class-sessions tr[data-student=uma] .stop-with-reason summary").await;
    browser.fill(".class-sessions tr[data-student=uma] input[name=reason]", "the lab is over").await;
    browser.screenshot_widths("class-dashboard-stop").await;
    browser.wait_text(".class-sessions tr[data-student=wes]", "running").await;
    browser.click(".class-sessions tr[data-student=uma] .stop-form button[type=submit]").await;
    let done = browser.wait_text(".form-ok", "Session stopped").await;
    assert!(done.contains("uma"), "the confirmation names the student: {done}");
    // The form and its reason went with uma's row: wes's row, now first, has neither.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while browser.client.find(fantoccini::Locator::Css(".class-sessions tr[data-student=uma]")).await.is_ok() {
        assert!(std::time::Instant::now() < deadline, "uma's row stayed");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let open_forms = browser
        .client
        .find_all(fantoccini::Locator::Css(".class-sessions tr[data-student=wes] .stop-with-reason[open]"))
        .await
        .unwrap();
    assert!(open_forms.is_empty(), "a stop form opened itself on wes's row");
    let typed = browser
        .client
        .execute(
            "const f = document.querySelector('.class-sessions tr[data-student=wes] input[name=reason]'); return f ? f.value : '';",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(typed, serde_json::json!(""), "uma's reason reappeared on wes's row");
    browser.screenshot_widths("class-dashboard-after-stop").await;
    browser.sign_out().await;

    // The student reads who stopped it and why.
    browser.sign_in(&url, "uma", &password_of("uma")).await;
    browser.open(&format!("{url}/sessions")).await;
    browser
        .wait_text(".session-history .history-row[data-state=ended]", "Stopped by vic: the lab is over.")
        .await;
    // ...at the top of the page, not only under "Earlier sessions".
    let told = browser.wait_text(".ended-banner", "has ended").await;
    assert!(told.contains("stopped by vic: the lab is over"), "{told}");
    browser.check_page("sessions-ended-banner").await;
    browser.sign_out().await;

    // The administrator's GPU page lists every course's bookings.
    browser.sign_in(&url, "admin", ADMIN_PASSWORD).await;
    browser.open(&format!("{url}/gpus")).await;
    let booked = browser.wait_text(".gpu-bookings table.bookings", "2 × 1g.10gb").await;
    assert!(booked.contains(COURSE), "{booked}");
    browser.check_page("gpus-bookings").await;
    browser.close().await;
}
