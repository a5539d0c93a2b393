//! Waiting claims in time: when a claim can start at the latest, and whether a claim may
//! start now without pushing back a slot kept for another one.
//!
//! Every waiting claim keeps a [`Window`]: memory slices of one GPU from its latest start
//! for as long as it may run. Nobody else is placed on those slices if they could still
//! be running when the window opens ([`place_now`]); the holders there now end by then
//! ([`earliest_start`] only opens a window after their [`Hold`]s end). So a claim starts
//! at its window at the latest, or earlier if room frees up sooner.

use crate::allocator::allocate_avoiding;
use crate::error::MigError;
use crate::gpu::{Decision, GpuState, Mode};
use crate::layout::Placement;
use crate::Policy;

/// A held placement and the latest moment it is given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    pub gpu: usize,
    pub placement: Placement,
    pub until_ms: i64,
    /// The instance outlives the hold (an administrator's on a dynamic GPU): once the hold
    /// ends its slices stay taken, free only for a claim of its size.
    pub stays: bool,
}

/// Memory slices of one GPU kept for someone during `[from_ms, until_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub gpu: usize,
    pub mask: u8,
    pub from_ms: i64,
    pub until_ms: i64,
}

impl Window {
    pub fn overlaps(&self, from_ms: i64, until_ms: i64) -> bool {
        self.from_ms < until_ms && from_ms < self.until_ms
    }
}

/// Where and when a claim can start at the latest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub at_ms: i64,
    pub decision: Decision,
}

impl Slot {
    /// The window this slot keeps for a claim running `duration_ms`.
    pub fn window(&self, gpus: &[GpuState<'_>], duration_ms: i64) -> Window {
        let gpu = self.decision.gpu_index;
        let mask = gpus
            .get(gpu)
            .and_then(|g| {
                g.catalog
                    .profile_by_id(self.decision.placement.profile_id)
                    .ok()
            })
            .and_then(|p| p.mask_at(self.decision.placement.start))
            .unwrap_or(0xff);
        Window {
            gpu,
            mask,
            from_ms: self.at_ms,
            until_ms: self.at_ms.saturating_add(duration_ms),
        }
    }
}

/// The slices each GPU must keep free for a claim running during `[from_ms, until_ms)`.
fn kept(gpu_count: usize, windows: &[Window], from_ms: i64, until_ms: i64) -> Vec<u8> {
    let mut masks = vec![0u8; gpu_count];
    for w in windows.iter().filter(|w| w.overlaps(from_ms, until_ms)) {
        if let Some(m) = masks.get_mut(w.gpu) {
            *m |= w.mask;
        }
    }
    masks
}

/// Places a claim that would run `duration_ms` from `now_ms`, touching no window it could
/// still be running in.
pub fn place_now(
    gpus: &[GpuState<'_>],
    windows: &[Window],
    profile: &str,
    now_ms: i64,
    duration_ms: i64,
    policy: Policy,
) -> Result<Decision, MigError> {
    let avoid = kept(
        gpus.len(),
        windows,
        now_ms,
        now_ms.saturating_add(duration_ms),
    );
    allocate_avoiding(gpus, profile, policy, &avoid)
}

/// The first moment from `now_ms` (or a later moment it must not start before) at which
/// the claim fits for `duration_ms`, assuming every
/// hold runs to its `until_ms` and every window is taken. `None` if it never fits (no GPU
/// has the profile, or a placement with no known end is in the way for good).
pub fn earliest_start(
    gpus: &[GpuState<'_>],
    holds: &[Hold],
    windows: &[Window],
    profile: &str,
    now_ms: i64,
    duration_ms: i64,
    policy: Policy,
) -> Option<Slot> {
    let mut moments: Vec<i64> = std::iter::once(now_ms)
        .chain(holds.iter().map(|h| h.until_ms))
        .chain(windows.iter().map(|w| w.until_ms))
        .filter(|&t| t >= now_ms)
        .collect();
    moments.sort_unstable();
    moments.dedup();
    for at_ms in moments {
        let then: Vec<GpuState<'_>> = gpus
            .iter()
            .enumerate()
            .map(|(i, gpu)| state_at(gpu, i, holds, at_ms))
            .collect();
        match place_now(&then, windows, profile, at_ms, duration_ms, policy) {
            Ok(decision) => return Some(Slot { at_ms, decision }),
            Err(MigError::NoRoom { .. }) => continue,
            Err(_) => return None,
        }
    }
    None
}

/// Whether the instance `decision` takes outlives the hold. On a dynamic GPU a claim makes
/// its own instance and that goes with it; one that takes an instance already there (an
/// administrator's, most likely) is planned to leave it behind, the side on which no
/// promise is broken.
fn stays_after(gpu: &GpuState<'_>, decision: &Decision) -> bool {
    gpu.mode == Mode::Dynamic && decision.action == crate::gpu::Action::Claim
}

/// A GPU at `at_ms`: the holds that end by then are given back.
fn state_at<'c>(gpu: &GpuState<'c>, index: usize, holds: &[Hold], at_ms: i64) -> GpuState<'c> {
    let mut then = gpu.clone();
    for hold in holds
        .iter()
        .filter(|h| h.gpu == index && h.until_ms <= at_ms)
    {
        if let Some(i) = then.held.iter().position(|&p| p == hold.placement) {
            then.held.swap_remove(i);
            if then.mode == Mode::Dynamic && !hold.stays {
                let _ = then.layout.remove(gpu.catalog, hold.placement);
            }
        }
    }
    then
}

/// A claim waiting for a slice, in the order claims are served (oldest first).
#[derive(Debug, Clone, Copy)]
pub struct Waiting<'a> {
    pub profile: &'a str,
    /// How long it may hold its slice once placed (time limit and start-up).
    pub duration_ms: i64,
    /// The window kept for it so far.
    pub window: Option<Window>,
    /// Whether this pass may place it (a short-lived process keeps a window instead).
    pub may_place: bool,
    /// Whether it may be given a window if it has none (only the first claims in line
    /// are, so a pass stays cheap with a thousand waiting).
    pub may_plan: bool,
    /// Whose claim it is (a course): windows booked for this owner do not keep it out.
    pub owner: i64,
}

/// A window booked for an owner: kept from every claim but the owner's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Booked {
    pub window: Window,
    pub owner: i64,
    /// How long past the window's end an owner's session started in it may run: other
    /// claims are not promised those slices before then.
    pub tail_ms: i64,
}

/// The booked windows that keep `claim` out: as booked when placing now, with the
/// owner's tail when promising a start.
fn booked_against<'a>(booked: &'a [Booked], claim: &'a Waiting<'_>, promising: bool) -> impl Iterator<Item = Window> + 'a {
    booked.iter().filter(move |b| b.owner != claim.owner).map(move |b| {
        let tail = if promising { b.tail_ms } else { 0 };
        Window { until_ms: b.window.until_ms.saturating_add(tail), ..b.window }
    })
}

/// What [`serve`] decided for one waiting claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// It starts now here.
    Place(Decision),
    /// It keeps waiting; this window is kept for it (the same as before, or earlier).
    Wait(Window),
    /// It keeps waiting without a window yet (too far back in line to plan).
    WaitUnplanned,
    /// It cannot be placed or given a latest start (no GPU has the profile, or a holder
    /// with no known end is in the way).
    NoSlot(MigError),
}

/// How a pass treats windows it already kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replan {
    /// Look for an earlier window for every claim (after sessions ended).
    All,
    /// Keep every window as it is (a new claim changes no older one's start).
    None,
}

/// One pass over the waiting claims, oldest first: a claim starts now if it fits without
/// touching a window kept for another claim it could still be running in; otherwise it
/// keeps its window, or an earlier one if room freed up. Placements are applied to `gpus`
/// and `holds` as they are made. A window is never moved later unless its slices were
/// not free when it opened (a holder ran past its end, or its GPU went away).
pub fn serve(
    gpus: &mut [GpuState<'_>],
    holds: &mut Vec<Hold>,
    waiting: &[Waiting<'_>],
    booked: &[Booked],
    now_ms: i64,
    replan: Replan,
    policy: Policy,
) -> Vec<Step> {
    let mut windows: Vec<Option<Window>> = waiting.iter().map(|w| w.window).collect();
    let mut steps = Vec::with_capacity(waiting.len());
    // The shortest claim of each profile that found no room: a later one at least as long
    // finds none either (it must avoid that claim's window too).
    let mut no_room: Vec<(&str, i64)> = Vec::new();
    for (i, claim) in waiting.iter().enumerate() {
        let current = windows[i];
        // Only for claims without a window: one with a window may fit in its own slots.
        let known_full = current.is_none()
            && no_room
                .iter()
                .any(|&(p, d)| p == claim.profile && claim.duration_ms >= d);
        let keeps_window = current.is_some_and(|w| w.from_ms > now_ms) && replan == Replan::None;
        if known_full && !claim.may_plan {
            steps.push(Step::WaitUnplanned);
            continue;
        }
        let queued: Vec<Window> = windows
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .filter_map(|(_, w)| *w)
            .collect();
        let others: Vec<Window> = queued.iter().copied().chain(booked_against(booked, claim, false)).collect();
        let promising: Vec<Window> = queued.into_iter().chain(booked_against(booked, claim, true)).collect();
        let now = if known_full {
            Err(MigError::NoRoom {
                profile: claim.profile.to_string(),
                reason: String::new(),
            })
        } else {
            place_now(
                gpus,
                &others,
                claim.profile,
                now_ms,
                claim.duration_ms,
                policy,
            )
        };
        let step = match now {
            Ok(decision) if claim.may_place => match gpus[decision.gpu_index].apply(&decision) {
                Ok(()) => {
                    holds.push(Hold {
                        gpu: decision.gpu_index,
                        placement: decision.placement,
                        until_ms: now_ms.saturating_add(claim.duration_ms),
                        stays: stays_after(&gpus[decision.gpu_index], &decision),
                    });
                    Step::Place(decision)
                }
                Err(e) => Step::NoSlot(e),
            },
            Ok(decision) => Step::Wait(
                Slot {
                    at_ms: now_ms,
                    decision,
                }
                .window(gpus, claim.duration_ms),
            ),
            Err(MigError::NoRoom { .. }) => {
                let taken = if replan == Replan::All && claim.may_place && !known_full {
                    take_ahead_of_later(gpus, holds, &windows, i, waiting, booked, now_ms, policy)
                } else {
                    None
                };
                match taken {
                    Some(taken) => {
                        holds.push(taken.hold);
                        gpus[taken.decision.gpu_index] = taken.gpu;
                        windows = taken.windows;
                        Step::Place(taken.decision)
                    }
                    None if current.is_none() && !claim.may_plan => {
                        no_room.push((claim.profile, claim.duration_ms));
                        Step::WaitUnplanned
                    }
                    None => {
                        if current.is_none() {
                            no_room.push((claim.profile, claim.duration_ms));
                        }
                        let from_ms = not_before(&windows, waiting, i).max(now_ms);
                        plan(gpus, holds, &promising, claim, current, keeps_window, now_ms, from_ms, policy)
                    }
                }
            }
            Err(e) => Step::NoSlot(e),
        };
        windows[i] = match &step {
            Step::Wait(w) => Some(*w),
            _ => None,
        };
        steps.push(step);
    }
    steps
}

/// Claims of one size are promised in the order they came: claim `i`'s window opens no
/// earlier than an older one's of its profile.
fn not_before(windows: &[Option<Window>], waiting: &[Waiting<'_>], i: usize) -> i64 {
    windows[..i]
        .iter()
        .zip(waiting)
        .filter(|(_, w)| w.profile == waiting[i].profile)
        .filter_map(|(window, _)| window.map(|w| w.from_ms))
        .max()
        .unwrap_or(i64::MIN)
}

/// A waiting claim's window: the one it has if it keeps it, else the earliest from
/// `from_ms` it can get, never later than the one it had.
#[allow(clippy::too_many_arguments)]
fn plan(
    gpus: &[GpuState<'_>],
    holds: &[Hold],
    others: &[Window],
    claim: &Waiting<'_>,
    current: Option<Window>,
    keeps_window: bool,
    now_ms: i64,
    from_ms: i64,
    policy: Policy,
) -> Step {
    if let (Some(old), true) = (current, keeps_window) {
        return Step::Wait(old);
    }
    match earliest_start(
        gpus,
        holds,
        others,
        claim.profile,
        from_ms,
        claim.duration_ms,
        policy,
    ) {
        Some(slot) => {
            let fresh = slot.window(gpus, claim.duration_ms);
            match current {
                Some(old) if old.from_ms > now_ms && old.from_ms <= fresh.from_ms => {
                    Step::Wait(old)
                }
                _ => Step::Wait(fresh),
            }
        }
        None => Step::NoSlot(MigError::NoRoom {
            profile: claim.profile.to_string(),
            reason: "no GPU will have room for it while the present sessions run".to_string(),
        }),
    }
}

/// What [`take_ahead_of_later`] found: the claim starts now, later claims move windows.
struct TakenAhead<'c> {
    decision: Decision,
    gpu: GpuState<'c>,
    hold: Hold,
    windows: Vec<Option<Window>>,
}

/// When room frees up early it may lie in a later claim's window. Claim `i` (older) may
/// take it now if every later claim whose window it touches gets another window that
/// opens no later than its own did; otherwise nothing changes.
#[allow(clippy::too_many_arguments)]
fn take_ahead_of_later<'c>(
    gpus: &[GpuState<'c>],
    holds: &[Hold],
    windows: &[Option<Window>],
    i: usize,
    waiting: &[Waiting<'_>],
    booked: &[Booked],
    now_ms: i64,
    policy: Policy,
) -> Option<TakenAhead<'c>> {
    let claim = &waiting[i];
    let until_ms = now_ms.saturating_add(claim.duration_ms);
    let earlier: Vec<Window> = windows[..i]
        .iter()
        .flatten()
        .copied()
        .chain(booked_against(booked, claim, false))
        .collect();
    let decision = place_now(
        gpus,
        &earlier,
        claim.profile,
        now_ms,
        claim.duration_ms,
        policy,
    )
    .ok()?;
    let mut trial: Vec<GpuState<'c>> = gpus.to_vec();
    trial[decision.gpu_index].apply(&decision).ok()?;
    let hold = Hold {
        gpu: decision.gpu_index,
        placement: decision.placement,
        until_ms,
        stays: stays_after(&gpus[decision.gpu_index], &decision),
    };
    let mut trial_holds = holds.to_vec();
    trial_holds.push(hold);
    let taken = Slot {
        at_ms: now_ms,
        decision: decision.clone(),
    }
    .window(gpus, claim.duration_ms);
    let mut moved: Vec<Option<Window>> = windows.to_vec();
    moved[i] = None;
    for j in i + 1..waiting.len() {
        let Some(old) = moved[j] else { continue };
        if old.gpu != taken.gpu || old.mask & taken.mask == 0 || !old.overlaps(now_ms, until_ms) {
            continue;
        }
        let others: Vec<Window> = moved
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != j)
            .filter_map(|(_, w)| *w)
            .chain(booked_against(booked, &waiting[j], true))
            .collect();
        let slot = earliest_start(
            &trial,
            &trial_holds,
            &others,
            waiting[j].profile,
            now_ms,
            waiting[j].duration_ms,
            policy,
        )?;
        let fresh = slot.window(&trial, waiting[j].duration_ms);
        if fresh.from_ms > old.from_ms {
            return None;
        }
        moved[j] = Some(fresh);
    }
    let gpu = trial.swap_remove(decision.gpu_index);
    Some(TakenAhead {
        decision,
        gpu,
        hold,
        windows: moved,
    })
}

/// When each waiting claim (profile, expected length) would likely start if every holder
/// ends at its expected end: claims are taken oldest first, each where it first fits.
/// Also returns the windows they take, for a claim queued after them.
pub fn expected_starts(
    gpus: &[GpuState<'_>],
    holds: &[Hold],
    waiting: &[(&str, i64)],
    now_ms: i64,
    policy: Policy,
) -> (Vec<Option<i64>>, Vec<Window>) {
    let mut taken: Vec<Window> = Vec::new();
    let starts = waiting
        .iter()
        .map(|&(profile, duration_ms)| {
            let slot = earliest_start(gpus, holds, &taken, profile, now_ms, duration_ms, policy)?;
            taken.push(slot.window(gpus, duration_ms));
            Some(slot.at_ms)
        })
        .collect();
    (starts, taken)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{allocate, Catalog};

    const MIN: i64 = 60_000;

    fn h100() -> &'static Catalog {
        Catalog::for_model("NVIDIA H100 80GB HBM3").unwrap()
    }

    #[test]
    fn a_full_gpu_frees_up_when_its_first_holder_must_end() {
        let catalog = h100();
        let mut gpus = vec![GpuState::dynamic(catalog)];
        let mut holds = Vec::new();
        for i in 0..7 {
            let d = allocate(&gpus, "1g.10gb").unwrap();
            gpus[0].apply(&d).unwrap();
            holds.push(Hold {
                gpu: 0,
                placement: d.placement,
                until_ms: (60 - i) * MIN,
                stays: false,
            });
        }
        let slot = earliest_start(
            &gpus,
            &holds,
            &[],
            "1g.10gb",
            0,
            30 * MIN,
            Policy::default(),
        )
        .unwrap();
        assert_eq!(slot.at_ms, 54 * MIN);
        // A 3g needs four memory slices of one half: the last of those holders ends at 57.
        let big = earliest_start(
            &gpus,
            &holds,
            &[],
            "3g.40gb",
            0,
            30 * MIN,
            Policy::default(),
        )
        .unwrap();
        assert!(
            big.at_ms >= 54 * MIN && big.at_ms <= 60 * MIN,
            "{}",
            big.at_ms
        );
    }

    #[test]
    fn a_newer_claim_starts_now_only_if_it_ends_before_a_kept_window_opens() {
        let catalog = h100();
        let mut gpus = vec![GpuState::dynamic(catalog)];
        let d = allocate(&gpus, "4g.40gb").unwrap();
        gpus[0].apply(&d).unwrap();
        let holds = [Hold {
            gpu: 0,
            placement: d.placement,
            until_ms: 60 * MIN,
            stays: false,
        }];
        // A 7g waits for the whole GPU: its window opens at 60.
        let slot = earliest_start(
            &gpus,
            &holds,
            &[],
            "7g.80gb",
            0,
            120 * MIN,
            Policy::default(),
        )
        .unwrap();
        assert_eq!(slot.at_ms, 60 * MIN);
        let windows = [slot.window(&gpus, 120 * MIN)];
        // A 3g for 30 minutes ends before 60: it may start on the free half now.
        assert!(place_now(&gpus, &windows, "3g.40gb", 0, 30 * MIN, Policy::default()).is_ok());
        // For 90 minutes it would push the 7g back: it waits.
        let refused = place_now(&gpus, &windows, "3g.40gb", 0, 90 * MIN, Policy::default());
        assert!(
            matches!(refused, Err(MigError::NoRoom { ref reason, .. }) if reason.contains("kept")),
            "{refused:?}"
        );
        // Its own latest start is after the 7g's window closes.
        let later = earliest_start(
            &gpus,
            &holds,
            &windows,
            "3g.40gb",
            0,
            90 * MIN,
            Policy::default(),
        )
        .unwrap();
        assert_eq!(later.at_ms, 180 * MIN);
    }

    /// A 3g on an administrator's instance and a 3g the portal made, both held for an
    /// hour: when they end the portal's instance goes, the administrator's stays.
    #[test]
    fn an_instance_that_stays_after_its_hold_is_free_only_for_its_size() {
        let catalog = h100();
        let mut gpus = vec![GpuState::dynamic(catalog)];
        let mut holds = Vec::new();
        for (stays, until_ms) in [(true, 60 * MIN), (false, 90 * MIN)] {
            let d = allocate(&gpus, "3g.40gb").unwrap();
            gpus[0].apply(&d).unwrap();
            holds.push(Hold { gpu: 0, placement: d.placement, until_ms, stays });
        }
        let whole = earliest_start(&gpus, &holds, &[], "7g.80gb", 0, 30 * MIN, Policy::default());
        assert!(whole.is_none(), "no 7g fits beside the instance that stays: {whole:?}");
        let same = earliest_start(&gpus, &holds, &[], "3g.40gb", 0, 30 * MIN, Policy::default()).unwrap();
        assert_eq!(same.at_ms, 60 * MIN, "a 3g takes the instance that stays when its hold ends");
        assert_eq!(same.decision.placement, holds[0].placement);
        holds[0].stays = false;
        let freed = earliest_start(&gpus, &holds, &[], "7g.80gb", 0, 30 * MIN, Policy::default()).unwrap();
        assert_eq!(freed.at_ms, 90 * MIN, "without it the whole GPU frees when both end");
    }

    /// A pass places a 3g on an instance that was already there (an administrator's) on a
    /// dynamic GPU: a 7g behind it in the same pass is not promised the GPU when the 3g ends.
    #[test]
    fn a_pass_plans_an_instance_it_found_as_staying() {
        let catalog = h100();
        let mut gpus = vec![GpuState::dynamic(catalog)];
        let three_g = catalog.profile_by_name("3g.40gb").unwrap();
        gpus[0].layout.insert(catalog, Placement::new(three_g.id, 0)).unwrap();
        let claim = |profile| Waiting {
            profile,
            duration_ms: 60 * MIN,
            window: None,
            may_place: true,
            may_plan: true,
            owner: 1,
        };
        let mut holds = Vec::new();
        let steps = serve(&mut gpus, &mut holds, &[claim("3g.40gb"), claim("7g.80gb")], &[], 0, Replan::All, Policy::default());
        assert!(matches!(&steps[0], Step::Place(d) if d.action == crate::gpu::Action::Claim), "{steps:?}");
        assert!(holds[0].stays, "{holds:?}");
        assert!(!matches!(steps[1], Step::Wait(_)), "a 7g was promised a window: {steps:?}");
    }

    #[test]
    fn a_profile_no_gpu_has_never_gets_a_slot() {
        let gpus = vec![GpuState::dynamic(h100())];
        assert!(earliest_start(&gpus, &[], &[], "9g.999gb", 0, MIN, Policy::default()).is_none());
    }
}
