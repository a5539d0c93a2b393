//! Benchmark of SliceHub's MIG allocator on generated classroom traces: the
//! fragmentation-aware policy against first-fit, static layouts and the offline optimum;
//! and what the portal benchmarks read about a process.

pub mod bare;
pub mod history;
pub mod idle_replay;
pub mod mixed_fleet;
pub mod mixed_no_queue;
pub mod mixed_queue;
pub mod mixed_statics;
pub mod mixed_trace;
pub mod optimum;
pub mod process;
pub mod queue_replay;
pub mod rng;
pub mod simulate;
pub mod stats;
pub mod statics;
pub mod trace;
