//! The claim → launch → stop lifecycle of GPU sessions, and the reconciler that keeps the
//! database, Docker and the GPUs in agreement.

mod activity;
mod allocate;
mod argv;
mod booked_instances;
mod booking_limits;
mod bookings;
mod course_share;
mod eta;
mod finish;
mod idle;
mod idle_rule;
mod host_firewall;
mod in_flight;
mod launch_gate;
mod shutdown;
mod jupyter_activity;
mod launch;
mod leftover_instances;
mod manager;
mod model;
mod policy;
mod queue;
mod quota_stop;
mod readiness;
mod reconcile;
mod resume;
mod search;
mod slurm_pool;
mod slurm_start;
mod slurm_watch;
mod supervised;

pub use activity::{SliceNow, SliceSample, KEPT_SAMPLES};
pub use allocate::ProfileAvailability;
pub use argv::split_command;
pub use booked_instances::PREPARE_LEAD_MS;
pub use bookings::{Booking, BookingForm, BookingRequest};
pub use eta::QueueEstimate;
pub use idle::IdleNotice;
pub use idle_rule::{IdlePolicy, IdleVerdict, IdleWarning, Judged};
pub use manager::{ClaimRequest, Sessions, Workload};
pub use model::{
    queue_position, GpuSession, SessionEvent, SessionKind, SessionPool, SessionState, SlicePlacement,
};
pub use policy::{
    admin_limit_problems, policy_of, set_policy, split_list, CoursePolicy, FieldProblem, PolicyForm,
    Quota,
};
pub use reconcile::ReconcileReport;
pub use slurm_pool::SlurmWait;
pub use search::{find_sessions, SessionFilter, RECENT_DAYS, STATE_FILTERS};
pub use supervised::{failing_loops, loop_states, LoopState, STALLED_AFTER};
