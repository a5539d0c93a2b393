//! The claim → launch → stop lifecycle of GPU sessions, and the reconciler that keeps the
//! database, Docker and the GPUs in agreement.

mod activity;
mod allocate;
mod argv;
mod background;
mod booking_limits;
mod bookings;
mod course_share;
mod eta;
mod finish;
mod in_flight;
mod jupyter_activity;
mod launch;
mod launch_gate;
mod lifecycle;
mod manager;
mod model;
mod queue;
mod readiness;
mod resume;
mod search;
mod shutdown;
mod slurm_pool;
mod slurm_start;
mod slurm_watch;
pub(crate) mod supervised;

pub use activity::{SliceNow, SliceSample, KEPT_SAMPLES};
pub use allocate::ProfileAvailability;
pub use argv::split_command;
pub use bookings::{Booking, BookingForm, BookingRequest};
pub use eta::QueueEstimate;
pub use lifecycle::{IdleNotice, IdlePolicy, IdleVerdict, IdleWarning, Judged, ReconcileReport, Rule, ORDER, PREPARE_LEAD_MS};
pub use manager::{ClaimRequest, Sessions, Workload};
pub use model::{
    queue_position, GpuSession, SessionEvent, SessionKind, SessionPool, SessionState, SlicePlacement,
};
pub use slurm_pool::SlurmWait;
pub use search::{find_sessions, SessionFilter, RECENT_DAYS, STATE_FILTERS};
pub use supervised::{failing_loops, loop_states, LoopState, STALLED_AFTER};
