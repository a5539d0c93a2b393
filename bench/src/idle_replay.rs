//! Replays a trace with the portal's idle culler: a first-come-first-served queue per
//! profile (`slicehub_mig::serve` without promised starts), and every running notebook
//! judged once a minute by the portal's own rule (`IdlePolicy::judge`). Some sessions go
//! idle a while after they start and their students never answer the warning; the others
//! stay active to their length. The lab closes at its end, cutting what runs and leaving
//! what waits unserved.

use std::collections::BTreeSet;

use slicehub_core::sessions::{IdlePolicy, IdleVerdict, IdleWarning, Judged};
use slicehub_mig::{serve, Catalog, GpuState, Hold, Policy, Replan, Step, Waiting};

use crate::rng::Rng;
use crate::trace::{Class, Request};

const S: i64 = 1_000;
const MINUTE: i64 = 60 * S;

/// Which sessions go idle: `fraction` of them (rounded), chosen by `seed`.
pub fn pick_idle(sessions: usize, fraction: f64, seed: u64) -> Vec<bool> {
    let mut rng = Rng::new(seed);
    let mut order: Vec<usize> = (0..sessions).collect();
    let count = ((sessions as f64 * fraction).round() as usize).min(sessions);
    let mut idle = vec![false; sessions];
    for k in 0..count {
        let j = k + (rng.next_u64() % (sessions - k) as u64) as usize;
        order.swap(k, j);
        idle[order[k]] = true;
    }
    idle
}

/// The lab's clock, in seconds.
#[derive(Debug, Clone, Copy)]
pub struct LabClock {
    pub close_s: u32,
    /// The course time limit: no session runs longer.
    pub limit_s: u32,
    /// How long after its start an idle session's student stops working.
    pub idle_after_s: u32,
}

/// What one replay delivered; slice-seconds are compute slices × seconds before the close.
#[derive(Debug, Clone, Default)]
pub struct IdleOutcome {
    /// Seconds from arrival to start of each claim that waited; one still waiting at the
    /// close counts its wait till then.
    pub waits: Vec<i64>,
    pub unserved: usize,
    pub culled: usize,
    /// Held while the student was working.
    pub useful_slice_seconds: u64,
    /// Held by idle sessions after their students stopped working.
    pub idle_held_slice_seconds: u64,
    /// What culled sessions would still have held had they run to their end.
    pub recovered_slice_seconds: u64,
}

struct Running {
    request: usize,
    hold: Hold,
    started: i64,
    ends: i64,
    warned: Option<IdleWarning>,
}

struct Replay<'a, 'c> {
    gpus: Vec<GpuState<'c>>,
    holds: Vec<Hold>,
    running: Vec<Running>,
    trace: &'a [Request],
    profiles: Vec<&'a str>,
    idle: &'a [bool],
    clock: LabClock,
    started: Vec<Option<i64>>,
    culled_at: Vec<Option<i64>>,
    dropped: Vec<bool>,
    moments: BTreeSet<i64>,
}

impl Replay<'_, '_> {
    fn length(&self, request: usize) -> i64 {
        let r = &self.trace[request];
        i64::from((r.departure - r.arrival).min(self.clock.limit_s)) * S
    }

    fn release(gpus: &mut [GpuState<'_>], holds: &mut Vec<Hold>, hold: Hold) {
        gpus[hold.gpu]
            .release(hold.placement)
            .expect("release of a granted placement");
        holds.retain(|h| *h != hold);
    }

    fn end_finished(&mut self, now: i64) {
        let (gpus, holds) = (&mut self.gpus, &mut self.holds);
        self.running.retain(|r| {
            if r.ends > now {
                return true;
            }
            Self::release(gpus, holds, r.hold);
            false
        });
    }

    fn waiting(&self, now: i64) -> Vec<usize> {
        (0..self.trace.len())
            .filter(|&i| i64::from(self.trace[i].arrival) * S <= now)
            .filter(|&i| self.started[i].is_none() && !self.dropped[i])
            .collect()
    }

    fn serve_queue(&mut self, now: i64) {
        let order = self.waiting(now);
        let limit = i64::from(self.clock.limit_s) * S;
        let claims: Vec<Waiting<'_>> = order
            .iter()
            .map(|&i| Waiting {
                profile: self.profiles[i],
                duration_ms: limit,
                window: None,
                may_place: true,
                may_plan: false,
                owner: 0,
            })
            .collect();
        let steps = serve(
            &mut self.gpus,
            &mut self.holds,
            &claims,
            &[],
            now,
            Replan::All,
            Policy::FragmentationAware,
        );
        for (&i, step) in order.iter().zip(steps) {
            match step {
                Step::Place(decision) => {
                    let ends = now + self.length(i);
                    self.running.push(Running {
                        request: i,
                        hold: Hold {
                            gpu: decision.gpu_index,
                            placement: decision.placement,
                            until_ms: now + limit,
                            stays: false,
                        },
                        started: now,
                        ends,
                        warned: None,
                    });
                    self.moments.insert(ends);
                    self.started[i] = Some(now);
                }
                Step::NoSlot(_) => self.dropped[i] = true,
                Step::Wait(_) | Step::WaitUnplanned => {}
            }
        }
    }

    /// One pass of the culler; true if it stopped a session.
    fn cull(&mut self, now: i64, policy: &IdlePolicy) -> bool {
        let waiting_profiles: Vec<&str> = self
            .waiting(now)
            .into_iter()
            .map(|i| self.profiles[i])
            .collect();
        let idle_after = i64::from(self.clock.idle_after_s) * S;
        let (gpus, holds, culled_at) = (&mut self.gpus, &mut self.holds, &mut self.culled_at);
        let (idle, profiles) = (self.idle, &self.profiles);
        let before = self.running.len();
        self.running.retain_mut(|r| {
            let last_active = if idle[r.request] {
                now.min(r.started + idle_after)
            } else {
                now
            };
            let someone_waits = waiting_profiles.contains(&profiles[r.request]);
            match policy.judge(Judged::Notebook, last_active, r.warned, someone_waits, now) {
                IdleVerdict::Active => r.warned = None,
                IdleVerdict::Warn(w) => r.warned = Some(w),
                IdleVerdict::Stop(_) => {
                    Self::release(gpus, holds, r.hold);
                    culled_at[r.request] = Some(now);
                    return false;
                }
            }
            true
        });
        self.running.len() < before
    }
}

/// Replays `trace` on `gpus`; `idle[i]` says whether session `i` goes idle.
pub fn replay_idle(
    catalog: &Catalog,
    gpus: Vec<GpuState<'_>>,
    trace: &[Request],
    idle: &[bool],
    clock: LabClock,
    policy: IdlePolicy,
) -> IdleOutcome {
    let names = [Class::G1, Class::G2, Class::G3, Class::G4, Class::G7]
        .map(|c| c.profile_name(catalog).unwrap_or_default());
    let close = i64::from(clock.close_s) * S;
    let mut moments: BTreeSet<i64> = trace.iter().map(|r| i64::from(r.arrival) * S).collect();
    moments.extend((0..=close).step_by(MINUTE as usize));
    let mut replay = Replay {
        gpus,
        holds: Vec::new(),
        running: Vec::new(),
        trace,
        profiles: trace
            .iter()
            .map(|r| names[r.class as usize].as_str())
            .collect(),
        idle,
        clock,
        started: vec![None; trace.len()],
        culled_at: vec![None; trace.len()],
        dropped: vec![false; trace.len()],
        moments,
    };
    while let Some(now) = replay.moments.pop_first() {
        if now >= close {
            break;
        }
        replay.end_finished(now);
        replay.serve_queue(now);
        if now % MINUTE == 0 && replay.cull(now, &policy) {
            replay.serve_queue(now);
        }
    }

    let idle_after = i64::from(clock.idle_after_s) * S;
    let mut out = IdleOutcome::default();
    for (i, r) in trace.iter().enumerate() {
        let arrival = i64::from(r.arrival) * S;
        let Some(start) = replay.started[i] else {
            out.waits.push((close - arrival).max(0) / S);
            out.unserved += 1;
            continue;
        };
        if start > arrival {
            out.waits.push((start - arrival) / S);
        }
        let slices = catalog
            .profile_by_name(replay.profiles[i])
            .map_or(0, |p| u64::from(p.compute_slices));
        let natural_end = (start + replay.length(i)).min(close);
        let end = replay.culled_at[i].unwrap_or(natural_end);
        let working_until = if idle[i] {
            (start + idle_after).min(end)
        } else {
            end
        };
        out.useful_slice_seconds += slices * ((working_until - start) / S) as u64;
        out.idle_held_slice_seconds += slices * ((end - working_until) / S) as u64;
        if let Some(culled) = replay.culled_at[i] {
            out.culled += 1;
            out.recovered_slice_seconds += slices * ((natural_end - culled) / S) as u64;
        }
    }
    out
}
