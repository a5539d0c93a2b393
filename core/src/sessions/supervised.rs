//! One pass of a background loop (reconcile, sampling, the Slurm watcher, following the
//! engine's events) run so that a panic in it cannot end the loop: it is logged, counted in
//! `slicehub_background_panics_total`, and `/healthz` says `degraded` until a later pass of
//! the same loop gets through.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{LazyLock, Mutex};

use futures_util::FutureExt;

/// The loops whose last pass panicked.
static FAILING: LazyLock<Mutex<HashMap<&'static str, String>>> = LazyLock::new(Default::default);

/// Runs `pass` for loop `name`; returns whether it finished without a panic.
pub async fn pass<F: Future<Output = ()>>(name: &'static str, pass: F) -> bool {
    match AssertUnwindSafe(pass).catch_unwind().await {
        Ok(()) => {
            failing().remove(name);
            true
        }
        Err(panic) => {
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
    }
}

/// [`pass`] for a loop whose one pass runs as long as it is healthy (an event stream):
/// its starting again already clears the last pass's panic.
pub async fn long_pass<F: Future<Output = ()>>(name: &'static str, pass_: F) -> bool {
    failing().remove(name);
    pass(name, pass_).await
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
    }
}
