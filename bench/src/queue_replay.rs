//! Replays a trace with a queue instead of losses, the way the portal serves it
//! (`slicehub_mig::serve`): a claim that finds no room waits with a latest start, a newer
//! one starts first only if it ends before it could delay an older one. Sessions run
//! their length and hold their slice for at most the time limit; the lab closes at its
//! end, cutting what runs and leaving what waits unserved.

use slicehub_mig::{
    expected_starts, serve, Catalog, GpuState, Hold, Policy, Replan, Step, Waiting, Window,
};

use crate::trace::{Class, Request};

const S: i64 = 1_000;

/// What one queued replay delivered, in seconds.
#[derive(Debug, Clone, Default)]
pub struct QueueOutcome {
    /// Each request's wait; one still waiting when the lab closes counts its wait till then.
    pub waits: Vec<i64>,
    pub unserved: usize,
    /// Compute slices × seconds delivered before the lab closed.
    pub slice_seconds: u64,
    /// For each claim that waited: first "at the latest" minus its actual start (≥ 0 when
    /// the promise held).
    pub latest_margin: Vec<i64>,
    /// For each claim that waited: |first "about" − actual start|.
    pub about_error: Vec<i64>,
    /// Claims that started after their first "at the latest" time.
    pub violations: usize,
}

struct Running {
    hold: Hold,
    started: i64,
    ends: i64,
}

/// Replays `trace` (lab of `lab_s` seconds, time limit `limit_s`) on `gpus`; the first
/// `planned` claims in line get a promised latest start (the portal plans 100; 0 is a
/// queue without promises, served first come per size).
pub fn replay_queued(
    catalog: &Catalog,
    mut gpus: Vec<GpuState<'_>>,
    trace: &[Request],
    lab_s: u32,
    limit_s: u32,
    planned: usize,
    policy: Policy,
) -> QueueOutcome {
    let names = [Class::G1, Class::G2, Class::G3, Class::G4, Class::G7]
        .map(|c| c.profile_name(catalog).unwrap_or_default());
    let profiles: Vec<&str> = trace
        .iter()
        .map(|r| names[r.class as usize].as_str())
        .collect();
    let slices_of = |i: usize| {
        catalog
            .profile_by_name(profiles[i])
            .map_or(0, |p| i64::from(p.compute_slices))
    };
    let (lab, limit) = (i64::from(lab_s) * S, i64::from(limit_s) * S);
    let length = |r: &Request| i64::from(r.departure - r.arrival) * S;

    let mut out = QueueOutcome::default();
    let mut holds: Vec<Hold> = Vec::new();
    let mut running: Vec<Running> = Vec::new();
    let mut windows: Vec<Option<Window>> = vec![None; trace.len()];
    let mut promised: Vec<Option<(i64, i64)>> = vec![None; trace.len()];
    let mut started: Vec<Option<i64>> = vec![None; trace.len()];
    let mut dropped = vec![false; trace.len()];
    let mut lengths_seen: Vec<i64> = Vec::new();
    let mut moments: Vec<i64> = trace.iter().map(|r| i64::from(r.arrival) * S).collect();
    moments.push(lab);
    let mut now = -1;
    loop {
        moments.retain(|&t| t > now);
        moments.sort_unstable();
        moments.dedup();
        let Some(&next) = moments.first() else { break };
        now = next;
        running.retain(|r| {
            if r.ends > now {
                return true;
            }
            let _ = gpus[r.hold.gpu].release(r.hold.placement);
            holds.retain(|h| *h != r.hold);
            lengths_seen.push(r.ends - r.started);
            false
        });
        if now >= lab {
            break;
        }
        let order: Vec<usize> = (0..trace.len())
            .filter(|&i| {
                i64::from(trace[i].arrival) * S <= now && started[i].is_none() && !dropped[i]
            })
            .collect();
        let waits: Vec<Waiting<'_>> = order
            .iter()
            .enumerate()
            .map(|(position, &i)| Waiting {
                profile: profiles[i],
                duration_ms: limit,
                window: windows[i],
                may_place: true,
                may_plan: position < planned,
                owner: 0,
            })
            .collect();
        let steps = serve(&mut gpus, &mut holds, &waits, &[], now, Replan::All, policy);
        let mut newly_waiting = Vec::new();
        for (&i, step) in order.iter().zip(steps) {
            match step {
                Step::Place(decision) => {
                    let hold = Hold {
                        gpu: decision.gpu_index,
                        placement: decision.placement,
                        until_ms: now + limit,
                        stays: false,
                    };
                    let ends = now + length(&trace[i]);
                    running.push(Running {
                        hold,
                        started: now,
                        ends,
                    });
                    moments.push(ends);
                    started[i] = Some(now);
                    windows[i] = None;
                    if let Some((about, latest)) = promised[i] {
                        out.latest_margin.push((latest - now) / S);
                        out.about_error.push((about - now).abs() / S);
                        if now > latest {
                            out.violations += 1;
                        }
                    }
                }
                Step::Wait(window) => {
                    if promised[i].is_none() {
                        newly_waiting.push(i);
                    }
                    windows[i] = Some(window);
                    moments.push(window.from_ms);
                }
                Step::WaitUnplanned => {}
                Step::NoSlot(_) => dropped[i] = true,
            }
        }
        if !newly_waiting.is_empty() {
            let abouts = about_starts(
                &gpus,
                &running,
                &order,
                &started,
                &dropped,
                &profiles,
                &lengths_seen,
                limit,
                now,
                policy,
            );
            for i in newly_waiting {
                let latest = windows[i].map_or(i64::MAX, |w| w.from_ms);
                let about = abouts
                    .get(&i)
                    .copied()
                    .flatten()
                    .unwrap_or(latest)
                    .min(latest);
                promised[i] = Some((about, latest));
            }
        }
    }
    for (i, r) in trace.iter().enumerate() {
        let arrival = i64::from(r.arrival) * S;
        match started[i] {
            Some(at) => {
                out.waits.push((at - arrival) / S);
                let delivered = (at + length(r)).min(lab) - at;
                out.slice_seconds += (slices_of(i) * delivered / S) as u64;
            }
            None => {
                out.waits.push((lab - arrival).max(0) / S);
                out.unserved += 1;
            }
        }
    }
    out
}

/// "About" starts of the waiting claims: running sessions last the median length seen so
/// far (the time limit before any ended), as the portal estimates from recent sessions.
#[allow(clippy::too_many_arguments)]
fn about_starts(
    gpus: &[GpuState<'_>],
    running: &[Running],
    order: &[usize],
    started: &[Option<i64>],
    dropped: &[bool],
    profiles: &[&str],
    lengths_seen: &[i64],
    limit: i64,
    now: i64,
    policy: Policy,
) -> std::collections::HashMap<usize, Option<i64>> {
    let typical = if lengths_seen.is_empty() {
        limit
    } else {
        let mut sorted = lengths_seen.to_vec();
        sorted.sort_unstable();
        sorted[sorted.len() / 2]
    };
    let holds: Vec<Hold> = running
        .iter()
        .map(|r| Hold {
            until_ms: (r.started + typical).clamp(now + S, r.hold.until_ms.max(now + S)),
            ..r.hold
        })
        .collect();
    let still: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| started[i].is_none() && !dropped[i])
        .collect();
    let claims: Vec<(&str, i64)> = still
        .iter()
        .map(|&i| (profiles[i], typical.min(limit)))
        .collect();
    let (starts, _) = expected_starts(gpus, &holds, &claims, now, policy);
    still.into_iter().zip(starts).collect()
}
