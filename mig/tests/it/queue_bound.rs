//! On scripted timelines (claims of every size arriving, each running up to its time limit
//! and often ending early), a queued claim starts no later than the first "at the latest"
//! time it was shown, and that time never moves later while it waits.

use proptest::prelude::*;
use slicehub_mig::{serve, Catalog, GpuState, Hold, Policy, Replan, Step, Waiting, Window};

const MIN: i64 = 60_000;
/// Claims planned at a time, fewer than the portal's so the tests reach the rest.
const PLANNED: usize = 6;
const PROFILES: [&str; 5] = ["1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"];

#[derive(Debug, Clone)]
struct Claim {
    arrival: i64,
    profile: &'static str,
    limit: i64,
    /// How long it really runs, at most its limit.
    runs: i64,
}

fn claims() -> impl Strategy<Value = Vec<Claim>> {
    prop::collection::vec((0i64..240, 0usize..5, 1i64..=12, 1u32..=100), 1..40).prop_map(|raw| {
        raw.into_iter()
            .map(|(arrival, size, tens, share)| {
                let limit = tens * 10 * MIN;
                Claim {
                    arrival: arrival * MIN,
                    profile: PROFILES[size],
                    limit,
                    runs: (limit * i64::from(share) / 100).max(MIN),
                }
            })
            .collect()
    })
}

struct Outcome {
    first_bound: Option<i64>,
    last_bound: Option<i64>,
    started: Option<i64>,
}

/// Runs the timeline and returns each claim's bounds and start.
fn run(gpus_count: usize, static_layout: bool, claims: &[Claim]) -> Vec<Outcome> {
    let catalog = Catalog::for_model("NVIDIA H100 80GB HBM3").unwrap();
    let mut gpus: Vec<GpuState<'_>> = (0..gpus_count)
        .map(|i| {
            if static_layout && i == 0 {
                GpuState::with_static_layout(catalog, "all-balanced").unwrap()
            } else {
                GpuState::dynamic(catalog)
            }
        })
        .collect();
    let mut holds: Vec<Hold> = Vec::new();
    let mut outcomes: Vec<Outcome> = claims
        .iter()
        .map(|_| Outcome {
            first_bound: None,
            last_bound: None,
            started: None,
        })
        .collect();
    let mut windows: Vec<Option<Window>> = vec![None; claims.len()];
    // (claim, gpu, placement, ends_at)
    let mut running: Vec<(usize, Hold, i64)> = Vec::new();
    let mut moments: Vec<i64> = claims.iter().map(|c| c.arrival).collect();
    let mut now = -1;
    loop {
        moments.retain(|&t| t > now);
        moments.sort_unstable();
        moments.dedup();
        let Some(&next) = moments.first() else { break };
        now = next;
        let before = running.len();
        running.retain(|(_, hold, ends)| {
            if *ends > now {
                return true;
            }
            gpus[hold.gpu].release(hold.placement).unwrap();
            holds.retain(|h| h != hold);
            false
        });
        let order: Vec<usize> = (0..claims.len())
            .filter(|&i| claims[i].arrival <= now && outcomes[i].started.is_none())
            .collect();
        // A pass after sessions ended looks for earlier windows; one for arrivals keeps
        // them. Only the first claims in line are planned, as in the portal.
        let replan = if running.len() < before {
            Replan::All
        } else {
            Replan::None
        };
        let waiting: Vec<Waiting<'_>> = order
            .iter()
            .enumerate()
            .map(|(position, &i)| Waiting {
                profile: claims[i].profile,
                duration_ms: claims[i].limit,
                window: windows[i],
                may_place: true,
                may_plan: position < PLANNED,
                owner: 0,
            })
            .collect();
        let steps = serve(
            &mut gpus,
            &mut holds,
            &waiting,
            &[],
            now,
            replan,
            Policy::default(),
        );
        for (&i, step) in order.iter().zip(steps) {
            match step {
                Step::Place(decision) => {
                    let hold = *holds
                        .iter()
                        .rev()
                        .find(|h| h.placement == decision.placement && h.gpu == decision.gpu_index)
                        .unwrap();
                    outcomes[i].started = Some(now);
                    windows[i] = None;
                    running.push((i, hold, now + claims[i].runs));
                    moments.push(now + claims[i].runs);
                }
                Step::Wait(window) => {
                    let o = &mut outcomes[i];
                    o.first_bound.get_or_insert(window.from_ms);
                    if let Some(last) = o.last_bound {
                        assert!(
                            window.from_ms <= last,
                            "claim {i}: its latest start moved from {last} to {}",
                            window.from_ms
                        );
                    }
                    o.last_bound = Some(window.from_ms);
                    windows[i] = Some(window);
                    moments.push(window.from_ms);
                }
                Step::WaitUnplanned => assert!(
                    outcomes[i].first_bound.is_none(),
                    "claim {i} lost its window"
                ),
                Step::NoSlot(e) => panic!("claim {i} got no slot: {e}"),
            }
        }
    }
    outcomes
}

fn check(outcomes: &[Outcome]) -> Result<(), TestCaseError> {
    for (i, o) in outcomes.iter().enumerate() {
        let started = o
            .started
            .ok_or_else(|| TestCaseError::fail(format!("claim {i} never started")))?;
        if let Some(bound) = o.first_bound {
            prop_assert!(
                started <= bound,
                "claim {i} started at {started}, promised by {bound}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_queued_claim_starts_by_its_first_latest_time_on_dynamic_gpus(claims in claims(), gpus in 1usize..=2) {
        check(&run(gpus, false, &claims))?;
    }

    #[test]
    fn the_same_holds_with_a_static_gpu_beside_a_dynamic_one(claims in claims()) {
        check(&run(2, true, &claims))?;
    }
}

#[test]
fn a_full_class_waits_and_every_claim_keeps_its_promise() {
    // 30 students claim a 1g within ten minutes on one GPU, each for up to an hour, most
    // leaving after 20 minutes.
    let claims: Vec<Claim> = (0..30)
        .map(|i| Claim {
            arrival: i * 20_000,
            profile: "1g.10gb",
            limit: 60 * MIN,
            runs: if i % 3 == 0 { 60 * MIN } else { 20 * MIN },
        })
        .collect();
    let outcomes = run(1, false, &claims);
    check(&outcomes).unwrap();
    let waited = outcomes.iter().filter(|o| o.first_bound.is_some()).count();
    assert_eq!(waited, 23, "7 start at once, the rest wait");
    // Same size, same limit: the first slices to free up early go to the longest-waiting
    // claims, whichever slices their windows were on.
    let starts: Vec<i64> = outcomes.iter().map(|o| o.started.unwrap()).collect();
    let mut order: Vec<usize> = (7..30).collect();
    order.sort_by_key(|&i| (starts[i], i));
    assert_eq!(order[..2], [7, 8], "served out of order: {starts:?}");
}
