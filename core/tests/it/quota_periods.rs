//! Budget periods in a course's time zone and the slice-hour arithmetic, at chosen instants.

use slicehub_core::quotas::{charged_ms, compute_slices, hours, parse_date, time_zone, QuotaPeriod};
use slicehub_core::store::UsageInterval;

fn at(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_millis()
}

#[test]
fn a_week_resets_on_its_weekday_and_time_in_the_course_zone() {
    let berlin = time_zone("Europe/Berlin").unwrap();
    let monday_midnight = QuotaPeriod::Weekly { weekday: 0, minute: 0 };
    // Wednesday 25 November 2026, 12:00 UTC: the week began Monday 00:00 in Berlin (UTC+1).
    let week = monday_midnight.bounds(berlin, at("2026-11-25T12:00:00Z"));
    assert_eq!(week.start_ms, at("2026-11-22T23:00:00Z"));
    assert_eq!(week.end_ms, at("2026-11-29T23:00:00Z"));
    // One second before the reset is still the old week; at the reset a new one begins.
    let before = monday_midnight.bounds(berlin, at("2026-11-29T22:59:59Z"));
    assert_eq!(before.end_ms, at("2026-11-29T23:00:00Z"));
    let after = monday_midnight.bounds(berlin, at("2026-11-29T23:00:00Z"));
    assert_eq!(after.start_ms, at("2026-11-29T23:00:00Z"));
    assert_eq!(
        monday_midnight.renewal(berlin),
        "resets Monday 00:00 (Europe/Berlin)"
    );

    // Friday 17:30 in New York, asked on that Friday at 17:00 local: the week began a week ago.
    let new_york = time_zone("America/New_York").unwrap();
    let friday = QuotaPeriod::Weekly { weekday: 4, minute: 17 * 60 + 30 };
    let week = friday.bounds(new_york, at("2026-11-27T22:00:00Z"));
    assert_eq!(week.start_ms, at("2026-11-20T22:30:00Z"));
    assert_eq!(week.end_ms, at("2026-11-27T22:30:00Z"));
}

#[test]
fn a_reset_inside_the_spring_gap_happens_when_the_clocks_have_moved() {
    let berlin = time_zone("Europe/Berlin").unwrap();
    // Sunday 29 March 2026, 02:30 does not exist in Berlin (02:00 → 03:00 CEST).
    let sunday = QuotaPeriod::Weekly { weekday: 6, minute: 150 };
    let week = sunday.bounds(berlin, at("2026-03-29T12:00:00Z"));
    assert_eq!(week.start_ms, at("2026-03-29T01:00:00Z"), "03:00 CEST");
    // The autumn weeks are an hour longer: Sunday 25 October 2026 has 25 hours in Berlin,
    // and its 02:30 happens twice (the first one starts the week).
    let week = sunday.bounds(berlin, at("2026-10-25T12:00:00Z"));
    assert_eq!(week.start_ms, at("2026-10-25T00:30:00Z"));
    assert_eq!(week.end_ms - week.start_ms, (7 * 24 + 1) * 3_600_000);
    let monday = QuotaPeriod::Weekly { weekday: 0, minute: 0 };
    let week = monday.bounds(berlin, at("2026-10-21T12:00:00Z"));
    assert_eq!(week.end_ms - week.start_ms, (7 * 24 + 1) * 3_600_000);
}

#[test]
fn a_term_runs_from_its_first_to_the_end_of_its_last_day() {
    let utc = time_zone("UTC").unwrap();
    let term = QuotaPeriod::Term {
        starts: parse_date("2026-10-01").unwrap(),
        ends: parse_date("2027-02-12").unwrap(),
    };
    let bounds = term.bounds(utc, at("2026-11-25T12:00:00Z"));
    assert_eq!(bounds.start_ms, at("2026-10-01T00:00:00Z"));
    assert_eq!(bounds.end_ms, at("2027-02-13T00:00:00Z"));
    assert_eq!(term.word(), "this term");
}

#[test]
fn slice_hours_count_compute_slices_times_hours_inside_the_period() {
    assert_eq!(compute_slices("3g.40gb"), 3);
    assert_eq!(compute_slices("1g.10gb+me"), 1);
    assert_eq!(compute_slices("7g.80gb"), 7);
    let hour = 3_600_000;
    let t0 = at("2026-11-23T10:00:00Z");
    let intervals = [
        // A 3g for two hours, half of it before the period began.
        UsageInterval { user_id: slicehub_core::UserId(1), profile: "3g.40gb".into(), started_at_ms: t0 - hour, ended_at_ms: Some(t0 + hour) },
        // A 1g still running.
        UsageInterval { user_id: slicehub_core::UserId(1), profile: "1g.10gb".into(), started_at_ms: t0 + 2 * hour, ended_at_ms: None },
    ];
    let used = charged_ms(&intervals, t0, t0 + 3 * hour + hour / 2);
    assert_eq!(used, 3 * hour + hour + hour / 2);
    assert_eq!(hours(used), "4.5");
    assert_eq!(hours(6 * hour), "6");
    assert_eq!(hours(hour / 4), "0.25");
}
