//! The claim → launch → stop lifecycle of GPU sessions, and the reconciler that keeps the
//! database, Docker and the GPUs in agreement.

mod activity;
mod allocate;
mod background;
mod activity_state;
mod booking_limits;
mod booking_model;
mod bookings;
mod claim;
mod context;
mod course_share;
mod eta;
mod ids;
mod in_flight;
mod jupyter_activity;
mod launch;
mod launch_gate;
mod lifecycle;
mod model;
mod process_owner;
mod pools;
mod queue;
mod queue_now;
mod queue_state;
mod readiness;
mod resume;
mod search;
mod service;
mod shared_queue;
mod shutdown;
mod slurm_pool;
mod slurm_start;
mod slurm_state;
mod slurm_watch;
mod stop;
pub(crate) mod supervised;

pub use activity_state::{GpuIdentity, SliceNow, SliceSample, KEPT_SAMPLES};
pub use allocate::ProfileAvailability;
pub use crate::argv::split_command;
pub use booking_model::{Booking, BookingForm, BookingRequest};
pub use queue_state::QueueEstimate;
pub use lifecycle::{IdleNotice, IdlePolicy, IdleVerdict, IdleWarning, Judged, ReconcileReport, Rule, ORDER, PREPARE_LEAD_MS};
pub use claim::{ClaimRequest, Workload};
pub use service::Sessions;
pub use model::{
    queue_position, GpuSession, SessionEvent, SessionKind, SessionPool, SessionState, SlicePlacement,
};
pub use slurm_state::SlurmWait;
pub use search::{find_sessions, SessionFilter, RECENT_DAYS, STATE_FILTERS};
pub use supervised::{failing_loops, loop_states, LoopState, STALLED_AFTER};
