//! One pass of a background loop (reconcile, sampling, the Slurm watcher, following the
//! engine's events) run so that a panic in it cannot end the loop: it is logged, counted in
//! `slicehub_background_panics_total`, and `/healthz` says `degraded` until a later pass of
//! the same loop gets through. Each loop's last finished pass is kept, and a pass that has
//! run for longer than [`STALLED_AFTER`] (a call that hangs) makes `/healthz` `degraded` too.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;

/// How long one pass of a periodic loop may run before the loop counts as stalled.
pub const STALLED_AFTER: Duration = Duration::from_secs(120);

/// The loops whose last pass panicked.
static FAILING: LazyLock<Mutex<HashMap<&'static str, String>>> = LazyLock::new(Default::default);

/// Per loop: when its pass under way began, and when its last pass finished.
#[derive(Default, Clone, Copy)]
struct Passes {
    running_since: Option<Instant>,
    last_finished: Option<Instant>,
}

static PASSES: LazyLock<Mutex<HashMap<&'static str, Passes>>> = LazyLock::new(Default::default);

/// A loop as `/healthz` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopState {
    pub name: String,
    /// Seconds since its last pass finished, if one has.
    pub last_pass_secs_ago: Option<u64>,
    /// Seconds its pass under way has run, if it has run longer than the limit.
    pub stalled_for_secs: Option<u64>,
}

/// Runs `pass` for loop `name`; returns whether it finished without a panic.
pub async fn pass<F: Future<Output = ()>>(name: &'static str, pass: F) -> bool {
    passes().entry(name).or_default().running_since = Some(Instant::now());
    let ok = guarded(name, pass).await;
    let mut all = passes();
    let entry = all.entry(name).or_default();
    entry.running_since = None;
    entry.last_finished = Some(Instant::now());
    drop(all);
    if ok {
        failing().remove(name);
    }
    ok
}

/// [`pass`] for a loop whose one pass runs as long as it is healthy (an event stream):
/// its starting again already clears the last pass's panic, and a long pass is no stall.
pub async fn long_pass<F: Future<Output = ()>>(name: &'static str, pass: F) -> bool {
    failing().remove(name);
    guarded(name, pass).await
}

/// Runs `pass`, catching a panic: logged, counted, and kept as the loop's failure.
async fn guarded<F: Future<Output = ()>>(name: &'static str, pass: F) -> bool {
    let Err(panic) = AssertUnwindSafe(pass).catch_unwind().await else {
        return true;
    };
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string());
    tracing::error!(background_loop = name, panic = %what, "a background pass panicked; the loop goes on");
    crate::metrics::METRICS.background_panicked(name);
    failing().insert(name, what);
    false
}

/// Every periodic loop that has begun a pass, sorted by name; a pass running longer than
/// `limit` is reported as stalled.
pub fn loop_states(limit: Duration) -> Vec<LoopState> {
    let now = Instant::now();
    let mut list: Vec<LoopState> = passes()
        .iter()
        .map(|(name, p)| LoopState {
            name: name.to_string(),
            last_pass_secs_ago: p.last_finished.map(|at| now.duration_since(at).as_secs()),
            stalled_for_secs: p
                .running_since
                .map(|since| now.duration_since(since))
                .filter(|ran| *ran > limit)
                .map(|ran| ran.as_secs()),
        })
        .collect();
    list.sort_by(|a, b| a.name.cmp(&b.name));
    list
}

fn passes() -> std::sync::MutexGuard<'static, HashMap<&'static str, Passes>> {
    PASSES.lock().unwrap_or_else(|p| p.into_inner())
}

/// The loops whose last pass panicked, with the panic's words, sorted by name.
pub fn failing_loops() -> Vec<(String, String)> {
    let mut list: Vec<(String, String)> = failing().iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    list.sort();
    list
}

fn failing() -> std::sync::MutexGuard<'static, HashMap<&'static str, String>> {
    FAILING.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_pass_is_counted_and_the_next_good_one_clears_it() {
        assert!(!pass("test-loop", async { panic!("term date overflowed") }).await);
        assert_eq!(
            failing_loops().into_iter().find(|(n, _)| n == "test-loop").map(|(_, w)| w),
            Some("term date overflowed".to_string())
        );
        let scraped = crate::metrics::METRICS.scrape_text();
        assert!(scraped.contains(r#"slicehub_background_panics_total{loop="test-loop"} 1"#), "{scraped}");
        assert!(pass("test-loop", async {}).await);
        assert!(failing_loops().iter().all(|(n, _)| n != "test-loop"));
        let state = loop_states(STALLED_AFTER).into_iter().find(|l| l.name == "test-loop").unwrap();
        assert_eq!((state.last_pass_secs_ago, state.stalled_for_secs), (Some(0), None));
    }

    #[tokio::test]
    async fn a_pass_that_hangs_is_reported_stalled() {
        let hung = tokio::spawn(pass("hung-loop", std::future::pending::<()>()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let state = loop_states(Duration::from_millis(10)).into_iter().find(|l| l.name == "hung-loop").unwrap();
        assert_eq!(state.stalled_for_secs, Some(0), "{state:?}");
        assert_eq!(state.last_pass_secs_ago, None);
        assert!(loop_states(STALLED_AFTER).iter().all(|l| l.stalled_for_secs.is_none()));
        hung.abort();
    }
}
