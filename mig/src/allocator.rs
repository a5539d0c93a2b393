use std::cmp::Reverse;

use crate::capacity::capacity;
use crate::catalog::Catalog;
use crate::error::MigError;
use crate::gpu::{Action, Decision, GpuState, Mode};
use crate::layout::{Occupancy, Placement};

/// How the allocator picks among the places a request could go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// Claim an idle instance if one exists; otherwise create the instance where the
    /// least room for larger profiles is lost (see `capacity`), ties going to the fuller
    /// GPU (best fit), then the lowest GPU index, then the lowest start.
    #[default]
    FragmentationAware,
    /// The lowest GPU index that has room, an idle instance first, else the lowest start.
    /// A baseline for benchmarks.
    FirstFit,
}

/// Where to put one instance of `profile` (a name such as `3g.40gb`) on these GPUs,
/// with the fragmentation-aware policy. Pure: the caller applies the decision.
pub fn allocate(gpus: &[GpuState<'_>], profile: &str) -> Result<Decision, MigError> {
    allocate_with(gpus, profile, Policy::FragmentationAware)
}

/// [`allocate`] with an explicit policy.
pub fn allocate_with(
    gpus: &[GpuState<'_>],
    profile: &str,
    policy: Policy,
) -> Result<Decision, MigError> {
    allocate_avoiding(gpus, profile, policy, &[])
}

/// [`allocate_with`] that never touches the memory slices in `avoid[i]` of GPU `i`
/// (slices kept for someone else; GPUs past the end of `avoid` have none kept).
pub fn allocate_avoiding(
    gpus: &[GpuState<'_>],
    profile: &str,
    policy: Policy,
    avoid: &[u8],
) -> Result<Decision, MigError> {
    let mut occupancies: Vec<Option<Occupancy>> = Vec::with_capacity(gpus.len());
    let mut best: Option<Candidate> = None;
    let mut runner_up: Option<Candidate> = None;
    let mut any_has_profile = false;
    let mut resolved: Option<(&Catalog, Option<usize>)> = None;

    for (gpu_index, gpu) in gpus.iter().enumerate() {
        let occupancy = usable_occupancy(gpu);
        occupancies.push(occupancy);
        let index = match resolved {
            Some((catalog, index)) if std::ptr::eq(catalog, gpu.catalog) => index,
            _ => {
                let index = gpu.catalog.profile_index_by_name(profile);
                resolved = Some((gpu.catalog, index));
                index
            }
        };
        let Some(index) = index else { continue };
        any_has_profile = true;
        let Some(occupancy) = occupancy else { continue };
        let p = &gpu.catalog.profiles()[index];
        let kept = avoid.get(gpu_index).copied().unwrap_or(0);
        let touches_kept = |start: u8| p.mask_at(start).is_none_or(|m| m & kept != 0);

        let mut offer = |candidate: Candidate| {
            let key = candidate.key(policy);
            if best.is_none_or(|b| key < b.key(policy)) {
                runner_up = best;
                best = Some(candidate);
            } else if runner_up.is_none_or(|r| key < r.key(policy)) {
                runner_up = Some(candidate);
            }
        };
        let base = Candidate {
            gpu: gpu_index,
            start: 0,
            profile_id: p.id,
            action: Action::Claim,
            loss: 0,
            used_slices: occupancy.mask.count_ones(),
            used_compute: occupancy.compute,
        };
        for placement in gpu.free_instances() {
            if placement.profile_id == p.id && !touches_kept(placement.start) {
                offer(Candidate {
                    start: placement.start,
                    ..base
                });
            }
        }
        if gpu.mode == Mode::Dynamic {
            let before = match policy {
                Policy::FragmentationAware => capacity(gpu.catalog, &occupancy),
                Policy::FirstFit => 0,
            };
            for &start in &p.starts {
                if !occupancy.fits(p, index, start) || touches_kept(start) {
                    continue;
                }
                let loss = match policy {
                    Policy::FragmentationAware => {
                        let mut after = occupancy;
                        after.add(p, index, start);
                        before.saturating_sub(capacity(gpu.catalog, &after))
                    }
                    Policy::FirstFit => 0,
                };
                offer(Candidate {
                    start,
                    action: Action::Create,
                    loss,
                    ..base
                });
            }
        }
    }

    let Some(best) = best else {
        if avoid.iter().any(|&m| m != 0) && allocate_with(gpus, profile, policy).is_ok() {
            return Err(MigError::NoRoom {
                profile: profile.to_string(),
                reason: "the free slices are kept for claims waiting longer or for a booked lab"
                    .to_string(),
            });
        }
        return Err(no_room(gpus, profile, any_has_profile));
    };
    let placement = Placement::new(best.profile_id, best.start);
    if let Some(Some(occupancy)) = occupancies.get_mut(best.gpu) {
        if best.action == Action::Create {
            let gpu = &gpus[best.gpu];
            if let Some(index) = gpu.catalog.profile_index(best.profile_id) {
                occupancy.add(&gpu.catalog.profiles()[index], index, best.start);
            }
        }
    }
    let explanation = explain(gpus, &occupancies, &best, runner_up.as_ref(), policy);
    Ok(Decision {
        gpu_index: best.gpu,
        placement,
        action: best.action,
        explanation,
    })
}

#[derive(Debug, Clone, Copy)]
struct Candidate {
    gpu: usize,
    start: u8,
    profile_id: u32,
    action: Action,
    loss: u32,
    used_slices: u32,
    used_compute: u8,
}

type CandidateKey = (u32, Reverse<u32>, Reverse<u8>, usize, bool, u8);

impl Candidate {
    fn key(&self, policy: Policy) -> CandidateKey {
        let creates = self.action == Action::Create;
        match policy {
            Policy::FragmentationAware => (
                self.loss,
                Reverse(self.used_slices),
                Reverse(self.used_compute),
                self.gpu,
                creates,
                self.start,
            ),
            Policy::FirstFit => (0, Reverse(0), Reverse(0), self.gpu, creates, self.start),
        }
    }
}

/// The GPU's occupancy if its state is consistent (valid layout, held ⊆ layout).
fn usable_occupancy(gpu: &GpuState<'_>) -> Option<Occupancy> {
    if gpu.held.iter().any(|&h| !gpu.layout.contains(h)) {
        return None;
    }
    Occupancy::of_valid(gpu.catalog, &gpu.layout)
}

fn explain(
    gpus: &[GpuState<'_>],
    occupancies: &[Option<Occupancy>],
    best: &Candidate,
    runner_up: Option<&Candidate>,
    policy: Policy,
) -> String {
    let gpu = &gpus[best.gpu];
    let name = gpu
        .catalog
        .profile_by_id(best.profile_id)
        .map(|p| p.name.as_str())
        .unwrap_or("?");
    let head = match best.action {
        Action::Create => format!("gpu{} start {}: create {name}", best.gpu, best.start),
        Action::Claim => format!("gpu{} start {}: claim idle {name}", best.gpu, best.start),
    };
    let keeps = match largest_placeable(gpus, occupancies, best) {
        Some((largest, on)) => format!("keeps a {largest} placeable on {}", list_gpus(&on)),
        None => "no further instance fits on any GPU".to_string(),
    };
    let why = match (policy, runner_up) {
        (Policy::FirstFit, _) => "first fit".to_string(),
        (_, None) => "the only place it fits".to_string(),
        (_, Some(_)) if best.action == Action::Claim => {
            "reuses an idle instance, nothing created".to_string()
        }
        (_, Some(r)) if best.loss < r.loss => format!(
            "loses the least room for larger profiles ({} vs {} next best)",
            best.loss, r.loss
        ),
        (_, Some(r))
            if (best.used_slices, best.used_compute) != (r.used_slices, r.used_compute) =>
        {
            "best-fit on the fuller GPU".to_string()
        }
        (_, Some(r)) if best.gpu != r.gpu => "lowest GPU index among equals".to_string(),
        _ => "lowest start among equals".to_string(),
    };
    format!("{head}; {keeps}; {why}")
}

/// The largest profile (by memory × compute slices) that could still be had after the
/// decision, and the GPUs offering it.
fn largest_placeable(
    gpus: &[GpuState<'_>],
    occupancies: &[Option<Occupancy>],
    best: &Candidate,
) -> Option<(String, Vec<usize>)> {
    let mut largest: Option<(u32, String, Vec<usize>)> = None;
    for (i, (gpu, occupancy)) in gpus.iter().zip(occupancies).enumerate() {
        let Some(occupancy) = occupancy else { continue };
        let claimed = (i == best.gpu && best.action == Action::Claim)
            .then(|| Placement::new(best.profile_id, best.start));
        let mut top: Option<(u32, &str)> = None;
        for (index, p) in gpu.catalog.profiles().iter().enumerate() {
            let available = match gpu.mode {
                Mode::Dynamic => p.starts.iter().any(|&s| occupancy.fits(p, index, s)),
                Mode::Static => false,
            } || gpu
                .free_instances()
                .any(|f| f.profile_id == p.id && Some(f) != claimed);
            if available && top.is_none_or(|(area, _)| p.area() > area) {
                top = Some((p.area(), p.name.as_str()));
            }
        }
        let Some((area, name)) = top else { continue };
        match &mut largest {
            Some((a, n, on)) if *a == area && n == name => on.push(i),
            Some((a, _, _)) if *a >= area => {}
            _ => largest = Some((area, name.to_string(), vec![i])),
        }
    }
    largest.map(|(_, name, on)| (name, on))
}

fn list_gpus(indices: &[usize]) -> String {
    const SHOWN: usize = 4;
    let names: Vec<String> = indices
        .iter()
        .take(SHOWN)
        .map(|i| format!("gpu{i}"))
        .collect();
    match (names.len(), indices.len()) {
        (0, _) => String::new(),
        (1, 1) => names[0].clone(),
        (n, total) if total <= SHOWN => {
            format!("{} and {}", names[..n - 1].join(", "), names[n - 1])
        }
        (_, total) => format!("{} and {} more GPUs", names.join(", "), total - SHOWN),
    }
}

/// Why no GPU can take `profile`, one clause per GPU.
fn no_room(gpus: &[GpuState<'_>], profile: &str, any_has_profile: bool) -> MigError {
    if gpus.is_empty() {
        return MigError::NoRoom {
            profile: profile.to_string(),
            reason: "there are no GPUs".to_string(),
        };
    }
    if !any_has_profile {
        return gpus[0].catalog.missing_profile(profile);
    }
    const SHOWN: usize = 8;
    let mut reasons: Vec<String> = gpus
        .iter()
        .enumerate()
        .take(SHOWN)
        .map(|(i, gpu)| gpu_reason(i, gpu, profile))
        .collect();
    if gpus.len() > SHOWN {
        reasons.push(format!("{} more GPUs not shown", gpus.len() - SHOWN));
    }
    MigError::NoRoom {
        profile: profile.to_string(),
        reason: reasons.join("; "),
    }
}

fn gpu_reason(i: usize, gpu: &GpuState<'_>, profile: &str) -> String {
    let catalog = gpu.catalog;
    let Some(index) = catalog.profile_index_by_name(profile) else {
        return format!("gpu{i} ({}) has no {profile} profile", catalog.key());
    };
    let p = &catalog.profiles()[index];
    if let Some(h) = gpu.held.iter().find(|&&h| !gpu.layout.contains(h)) {
        return format!(
            "gpu{i} skipped: held {} is not in its layout",
            h.describe(catalog)
        );
    }
    let occupancy = match Occupancy::of(catalog, &gpu.layout) {
        Ok(occupancy) => occupancy,
        Err(e) => return format!("gpu{i} skipped: its layout is invalid ({e})"),
    };
    let layout = gpu.layout.describe(catalog);
    match gpu.mode {
        Mode::Static => {
            let total = gpu
                .layout
                .placements()
                .iter()
                .filter(|q| q.profile_id == p.id)
                .count();
            if total == 0 {
                format!("gpu{i} (static: {layout}) has no {} instance", p.name)
            } else {
                format!(
                    "gpu{i} (static: {layout}) has {total} {} instance(s), all held",
                    p.name
                )
            }
        }
        Mode::Dynamic => {
            let memory_free = p
                .starts
                .iter()
                .any(|&s| p.mask_at(s).is_some_and(|m| m & occupancy.mask == 0));
            let why = if occupancy.counts[index] >= p.max_instances {
                format!("already {} {} (max)", p.max_instances, p.name)
            } else if !memory_free {
                format!("starts {} are all taken", p.starts_text())
            } else {
                format!(
                    "needs {} compute slices, {} free",
                    p.compute_slices,
                    crate::catalog::COMPUTE_SLICES.saturating_sub(occupancy.compute)
                )
            };
            format!("gpu{i} (dynamic) has {layout}: {why}")
        }
    }
}
