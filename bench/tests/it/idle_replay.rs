use slicehub_bench::idle_replay::{pick_idle, replay_idle, IdleOutcome, LabClock};
use slicehub_bench::simulate::dynamic_fleet;
use slicehub_bench::trace::{Class, Request};
use slicehub_core::sessions::IdlePolicy;
use slicehub_mig::Catalog;

const MIN: u32 = 60;

/// One H100 (seven 1g slices): seven students start 90-minute notebooks at 0, the first
/// goes idle after 20 minutes; an eighth arrives at minute 1 and waits.
fn run(policy: IdlePolicy) -> IdleOutcome {
    let catalog = Catalog::by_key("H100-80GB").unwrap();
    let notebook = |arrival| Request {
        arrival,
        departure: arrival + 90 * MIN,
        class: Class::G1,
    };
    let mut trace: Vec<Request> = (0..7).map(|_| notebook(0)).collect();
    trace.push(notebook(MIN));
    let mut idle = vec![false; trace.len()];
    idle[0] = true;
    let clock = LabClock {
        close_s: 180 * MIN,
        limit_s: 90 * MIN,
        idle_after_s: 20 * MIN,
    };
    replay_idle(
        catalog,
        dynamic_fleet(catalog, 1),
        &trace,
        &idle,
        clock,
        policy,
    )
}

#[test]
fn queue_aware_culling_lets_the_eighth_student_in_earliest() {
    let off = run(IdlePolicy {
        idle_minutes: None,
        ..IdlePolicy::default()
    });
    let fixed = run(IdlePolicy {
        idle_minutes: Some(60),
        waiting_minutes: None,
        ..IdlePolicy::default()
    });
    let queue_aware = run(IdlePolicy {
        idle_minutes: Some(60),
        waiting_minutes: Some(20),
        ..IdlePolicy::default()
    });
    // Off: until the first notebook ends at 90. Fixed: idle at 20, stopped at 80.
    // Queue-aware: 20 minutes idle while someone waits, warned at 30, stopped at 40.
    assert_eq!(off.waits, vec![89 * 60]);
    assert_eq!(fixed.waits, vec![79 * 60]);
    assert_eq!(queue_aware.waits, vec![39 * 60]);
    assert_eq!((off.culled, fixed.culled, queue_aware.culled), (0, 1, 1));
    assert_eq!(off.recovered_slice_seconds, 0);
    assert_eq!(fixed.recovered_slice_seconds, 10 * 60);
    assert_eq!(queue_aware.recovered_slice_seconds, 50 * 60);
    assert_eq!(off.idle_held_slice_seconds, 70 * 60);
    assert_eq!(queue_aware.idle_held_slice_seconds, 20 * 60);
    // Everyone works 90 minutes except the idle student's 20.
    for outcome in [&off, &fixed, &queue_aware] {
        assert_eq!(outcome.useful_slice_seconds, (7 * 90 + 20) * 60);
    }
}

#[test]
fn thirty_percent_are_picked_the_same_way_for_a_seed() {
    let idle = pick_idle(40, 0.3, 7);
    assert_eq!(idle.iter().filter(|&&i| i).count(), 12);
    assert_eq!(idle, pick_idle(40, 0.3, 7));
    assert_ne!(idle, pick_idle(40, 0.3, 8));
}
