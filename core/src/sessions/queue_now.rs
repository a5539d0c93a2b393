//! The fleet and the line as one queue pass sees them at one moment: each GPU with what
//! it holds, the holds and windows kept, the bookings near enough to matter, and how long
//! sessions of each size ran lately.

use std::collections::HashMap;

use slicehub_mig::{Booked, Catalog, GpuState, Hold, Layout, Mode, Placement, Window};

use crate::gpu::GpuInfo;
use crate::store::{QueueWindow, WaitingClaim};
use crate::CourseId;

/// Only this many claims, first in line, are given a window (a latest start) at a time;
/// those behind them get one as the line moves. Keeps a pass cheap with a thousand waiting.
pub(super) const PLANNED: usize = 100;

/// The whole fleet as the queue sees it at one moment.
pub(super) struct QueueNow {
    pub fleet: Vec<GpuNow>,
    pub holds: Vec<Hold>,
    /// For each hold: its session's profile, when it started and any stop announced for it.
    pub hold_starts: Vec<Option<HoldStart>>,
    pub waiting: Vec<WaitingClaim>,
    pub windows: HashMap<String, (Window, QueueWindow)>,
    /// Windows booked for courses' lab sessions, near enough to matter.
    pub booked: Vec<Booked>,
    /// How long recent sessions of each profile ran (for "about" estimates).
    pub typical: TypicalLengths,
    pub now_ms: i64,
}

impl QueueNow {
    pub fn states(&self) -> Vec<GpuState<'_>> {
        allocator_states(&self.fleet)
    }

    /// Every window a new claim of `course` must keep out of: those kept for waiting
    /// claims, and those booked for other courses (all booked ones without a course).
    pub fn windows_against(&self, course: Option<CourseId>) -> Vec<Window> {
        self.windows
            .values()
            .map(|(w, _)| *w)
            .chain(self.booked.iter().filter(|b| Some(b.owner) != course.map(|c| c.0)).map(|b| b.window))
            .collect()
    }

    /// [`QueueNow::windows_against`] as a promise sees them: a booked window reaches on by
    /// its owner's tail (a session started in it may run that long past its end), as the
    /// queue's own plan reads it.
    pub fn windows_promising(&self, course: Option<CourseId>) -> Vec<Window> {
        self.windows
            .values()
            .map(|(w, _)| *w)
            .chain(
                self.booked
                    .iter()
                    .filter(|b| Some(b.owner) != course.map(|c| c.0))
                    .map(|b| Window { until_ms: b.window.until_ms.saturating_add(b.tail_ms), ..b.window }),
            )
            .collect()
    }

    /// The latest window kept for a waiting claim of `profile`: a new claim of that size is
    /// promised no earlier (claims of one size start in the order they came).
    pub fn same_size_not_before(&self, profile: &str) -> Option<i64> {
        self.waiting
            .iter()
            .filter(|w| w.profile == profile)
            .filter_map(|w| self.windows.get(&w.id).map(|(window, _)| window.from_ms))
            .max()
    }

    pub fn gpu_of(&self, uuid: &str) -> Option<usize> {
        self.fleet.iter().position(|g| g.info.uuid == uuid)
    }
}

/// How long sessions of each profile ran lately (the median of the last ones).
pub(super) type TypicalLengths = HashMap<String, i64>;

/// A running session as the estimate sees it.
#[derive(Debug, Clone)]
pub(super) struct HoldStart {
    pub session_id: String,
    pub profile: String,
    /// Ready, or last changed.
    pub started_ms: i64,
    /// An idle stop already announced to its student.
    pub announced_stop_ms: Option<i64>,
}

/// One GPU with everything a decision needs.
pub(super) struct GpuNow {
    pub info: GpuInfo,
    pub catalog: Catalog,
    pub mode: Mode,
    pub layout: Layout,
    pub held: Vec<Placement>,
}

impl GpuNow {
    /// Whether claims create and destroy instances on this GPU (not a static layout).
    pub(super) fn is_dynamic(&self) -> bool {
        self.mode == Mode::Dynamic
    }
}

/// The GPUs as the pure allocator takes them.
pub(super) fn allocator_states(fleet_now: &[GpuNow]) -> Vec<GpuState<'_>> {
    fleet_now
        .iter()
        .map(|g| GpuState {
            catalog: &g.catalog,
            mode: g.mode,
            layout: g.layout.clone(),
            held: g.held.clone(),
        })
        .collect()
}

/// The waiting sessions as expected to go (see `Sessions::expected` in `eta.rs`).
pub(super) struct ExpectedPlan {
    pub starts: Vec<Option<i64>>,
    pub taken: Vec<Window>,
    pub holds: Vec<Hold>,
}
