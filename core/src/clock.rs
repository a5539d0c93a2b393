//! The time boundary: everything whose outcome depends on "now" (session expiry, login
//! lockouts) asks a `Clock`, so tests can move time instead of sleeping.

use std::sync::atomic::{AtomicI64, Ordering};

pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The machine's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock that only moves when told to: the in-process implementation for tests.
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    pub fn starting_at(now_ms: i64) -> Self {
        ManualClock {
            now_ms: AtomicI64::new(now_ms),
        }
    }

    pub fn advance_ms(&self, ms: i64) {
        self.now_ms.fetch_add(ms, Ordering::SeqCst);
    }

    pub fn set_ms(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

/// The machine's clock, moved ahead by however much a test skipped: time goes on as usual
/// (timeouts, stuck launches) and a test can still jump past a deadline. The store stamps
/// its rows with the machine's clock, so after a skip every session between states looks
/// long stuck and every claim's limit grows by the skip: skip when nothing is under way.
#[derive(Debug, Default)]
pub struct SkippingClock {
    ahead_ms: AtomicI64,
}

impl SkippingClock {
    pub fn skip_ms(&self, ms: i64) {
        self.ahead_ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for SkippingClock {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + self.ahead_ms.load(Ordering::SeqCst)
    }
}

/// An instant for files people open elsewhere: `2026-11-30T00:00:00Z`.
pub fn iso_utc(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}
