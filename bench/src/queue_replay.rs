//! Replays a trace with a queue instead of losses, the way the portal serves it
//! (`slicehub_mig::serve`): a claim that finds no room waits with a latest start, a newer
//! one starts first only if it ends before it could delay an older one. Sessions run
//! their length and hold their slice for at most the time limit; the lab closes at its
//! end, cutting what runs and leaving what waits unserved.

use slicehub_mig::{
    expected_starts, serve, Catalog, GpuState, Hold, Policy, Replan, Step, Waiting, Window,
};

use crate::simulate::{claims, class_names, Claim};
use crate::trace::Request;

const S: i64 = 1_000;

/// What one queued replay delivered, in seconds.
#[derive(Debug, Clone, Default)]
pub struct QueueOutcome {
    /// Each request's wait; one still waiting when the lab closes counts its wait till then.
    pub waits: Vec<i64>,
    pub unserved: usize,
    /// Compute slices × seconds delivered before the lab closed (whole GPUs and shares by
    /// their weight, a share's fraction of a slice-second dropped once, at the end).
    pub slice_seconds: u64,
    /// Each request's thousandths of a compute slice × seconds delivered, in trace order.
    pub delivered: Vec<u64>,
    /// For each claim that waited: first "at the latest" minus its actual start (≥ 0 when
    /// the promise held).
    pub latest_margin: Vec<i64>,
    /// For each claim that waited: |first "about" − actual start|.
    pub about_error: Vec<i64>,
    /// Claims that started after their first "at the latest" time.
    pub violations: usize,
    /// Memory slices × seconds free but kept for a promised window that had not opened.
    pub kept_idle: u64,
    /// Memory slices × seconds free and kept for nobody.
    pub free_idle: u64,
}

/// How the queue is run: how many claims in line are promised a start (the portal plans
/// 100; 0 is a queue without promises, served first come per size), the placement policy,
/// and the largest slice a claim may ask for in compute slices (a course's `max_slices`;
/// larger claims are refused when made and count as unserved, as a static layout without
/// their size refuses them).
#[derive(Debug, Clone, Copy)]
pub struct QueueRules {
    pub planned: usize,
    pub policy: Policy,
    pub largest: u8,
}

struct Running {
    hold: Hold,
    started: i64,
    ends: i64,
}

/// Replays `trace` (lab of `lab_s` seconds, time limit `limit_s`) on `gpus` by `rules`.
pub fn replay_queued(
    catalog: &Catalog,
    gpus: Vec<GpuState<'_>>,
    trace: &[Request],
    lab_s: u32,
    limit_s: u32,
    rules: QueueRules,
) -> QueueOutcome {
    let names = class_names(catalog);
    replay_queued_claims(gpus, &claims(catalog, &names, trace), lab_s, limit_s, rules)
}

/// [`replay_queued`] for claims on any fleet (models mixed, GPUs dynamic or static). A
/// claim counts against `rules.largest` by its weight rounded up, as the portal's caps do.
pub fn replay_queued_claims(
    mut gpus: Vec<GpuState<'_>>,
    trace: &[Claim<'_>],
    lab_s: u32,
    limit_s: u32,
    rules: QueueRules,
) -> QueueOutcome {
    let QueueRules { planned, policy, largest } = rules;
    let profiles: Vec<&str> = trace.iter().map(|c| c.profile).collect();
    let (lab, limit) = (i64::from(lab_s) * S, i64::from(limit_s) * S);
    let length = |r: &Claim<'_>| i64::from(r.departure - r.arrival) * S;

    let mut out = QueueOutcome::default();
    let mut holds: Vec<Hold> = Vec::new();
    let mut running: Vec<Running> = Vec::new();
    let mut windows: Vec<Option<Window>> = vec![None; trace.len()];
    let mut promised: Vec<Option<(i64, i64)>> = vec![None; trace.len()];
    let mut started: Vec<Option<i64>> = vec![None; trace.len()];
    let mut dropped: Vec<bool> = trace
        .iter()
        .map(|c| c.milli_slices.div_ceil(1000) > u64::from(largest))
        .collect();
    let mut lengths_seen: Vec<i64> = Vec::new();
    let mut moments: Vec<i64> = trace.iter().map(|r| i64::from(r.arrival) * S).collect();
    moments.push(lab);
    let mut now = -1;
    loop {
        moments.retain(|&t| t > now);
        moments.sort_unstable();
        moments.dedup();
        let Some(&next) = moments.first() else { break };
        if now >= 0 {
            let (kept, free) = idle_slices(&gpus, &windows, now);
            let seconds = ((next.min(lab) - now).max(0) / S) as u64;
            out.kept_idle += kept * seconds;
            out.free_idle += free * seconds;
        }
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
                let delivered = ((at + length(r)).min(lab) - at) / S;
                out.delivered.push(r.milli_slices * delivered as u64);
            }
            None => {
                out.waits.push((lab - arrival).max(0) / S);
                out.delivered.push(0);
                out.unserved += 1;
            }
        }
    }
    out.slice_seconds = out.delivered.iter().sum::<u64>() / 1000;
    out
}

/// Memory slices of every GPU that no session holds: those inside a promised window not
/// yet open, and the rest.
fn idle_slices(gpus: &[GpuState<'_>], windows: &[Option<Window>], now: i64) -> (u64, u64) {
    let (mut kept_idle, mut free_idle) = (0, 0);
    for (index, gpu) in gpus.iter().enumerate() {
        let held = gpu.held.iter().fold(0u8, |mask, p| {
            let slices = gpu.catalog.profile_by_id(p.profile_id).ok().and_then(|q| q.mask_at(p.start));
            mask | slices.unwrap_or(0)
        });
        let kept = windows
            .iter()
            .flatten()
            .filter(|w| w.gpu == index && w.from_ms > now)
            .fold(0u8, |mask, w| mask | w.mask);
        kept_idle += u64::from((kept & !held).count_ones());
        free_idle += u64::from((!kept & !held).count_ones());
    }
    (kept_idle, free_idle)
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
