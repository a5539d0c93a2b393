//! The portal's Prometheus metrics (`/metrics`): counters and histograms kept as things
//! happen in this process, and gauges read from the database at each scrape
//! ([`scrape::render`]). One set per process, as a process is one portal.

mod scrape;

use std::sync::LazyLock;

use prometheus::{HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts, Registry};

pub use scrape::render;

pub struct Metrics {
    registry: Registry,
    /// From holding a slice to ready (the portal's and the engine's part of a spawn).
    pub spawn_seconds: HistogramVec,
    /// From the claim to ready, queue included.
    pub time_to_ready_seconds: HistogramVec,
    pub proxy_requests: IntCounterVec,
    pub proxy_seconds: HistogramVec,
    pub login_failures: IntCounter,
    pub reconcile_actions: IntCounterVec,
    pub background_panics: IntCounterVec,
    gauges: scrape::Gauges,
}

/// Seconds, for spawns (a JupyterLab start takes a few) and waits (a queue may take hours).
const SPAWN_BUCKETS: &[f64] = &[0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 60.0, 120.0, 300.0];
const WAIT_BUCKETS: &[f64] = &[
    1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0,
];
const PROXY_BUCKETS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

pub static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

fn histogram(name: &str, help: &str, labels: &[&str], buckets: &[f64]) -> HistogramVec {
    HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets.to_vec()), labels)
        .expect("a valid histogram")
}

impl Metrics {
    fn new() -> Metrics {
        let metrics = Metrics {
            registry: Registry::new(),
            spawn_seconds: histogram(
                "slicehub_spawn_seconds",
                "Seconds from a session holding its slice to ready, by kind (notebook, job).",
                &["kind"],
                SPAWN_BUCKETS,
            ),
            time_to_ready_seconds: histogram(
                "slicehub_time_to_ready_seconds",
                "Seconds from a claim to ready, queue included, by kind.",
                &["kind"],
                WAIT_BUCKETS,
            ),
            proxy_requests: IntCounterVec::new(
                Opts::new("slicehub_proxy_requests_total", "Requests forwarded to notebooks, by kind (http, websocket)."),
                &["kind"],
            )
            .expect("a valid counter"),
            proxy_seconds: histogram(
                "slicehub_proxy_request_seconds",
                "Seconds until a notebook's answer (its head) came back through the proxy, by kind.",
                &["kind"],
                PROXY_BUCKETS,
            ),
            login_failures: IntCounter::new("slicehub_login_failures_total", "Failed sign-ins.")
                .expect("a valid counter"),
            reconcile_actions: IntCounterVec::new(
                Opts::new("slicehub_reconcile_actions_total", "What the reconciler changed, by action."),
                &["action"],
            )
            .expect("a valid counter"),
            background_panics: IntCounterVec::new(
                Opts::new(
                    "slicehub_background_panics_total",
                    "Passes of a background loop that panicked (the loop goes on), by loop.",
                ),
                &["loop"],
            )
            .expect("a valid counter"),
            gauges: scrape::Gauges::new(),
        };
        let collectors: Vec<Box<dyn prometheus::core::Collector>> = vec![
            Box::new(metrics.spawn_seconds.clone()),
            Box::new(metrics.time_to_ready_seconds.clone()),
            Box::new(metrics.proxy_requests.clone()),
            Box::new(metrics.proxy_seconds.clone()),
            Box::new(metrics.login_failures.clone()),
            Box::new(metrics.reconcile_actions.clone()),
            Box::new(metrics.background_panics.clone()),
        ];
        for collector in collectors.into_iter().chain(metrics.gauges.collectors()) {
            metrics.registry.register(collector).expect("metric names are unique");
        }
        metrics
    }

    /// A session became ready: `placed_ms` when it got its slice.
    pub fn ready(&self, kind: &str, requested_ms: i64, placed_ms: i64, ready_ms: i64) {
        let seconds = |from: i64| ((ready_ms - from).max(0) as f64) / 1000.0;
        self.spawn_seconds.with_label_values(&[kind]).observe(seconds(placed_ms));
        self.time_to_ready_seconds.with_label_values(&[kind]).observe(seconds(requested_ms));
    }

    pub fn reconciled(&self, report: &crate::sessions::ReconcileReport) {
        let counts = [
            ("orphan_container_removed", report.orphan_containers_removed),
            ("session_ended", report.sessions_ended),
            ("slice_released", report.slices_released),
            ("usage_closed", report.usage_closed),
            ("instance_destroyed", report.instances_destroyed),
            ("instance_prepared", report.instances_prepared),
            ("stopped_at_time_limit", report.stopped_at_time_limit),
            ("stopped_at_quota", report.stopped_at_quota),
            ("queued_placed", report.queued_placed),
            ("repaired", report.repaired),
        ];
        for (action, n) in counts {
            self.reconcile_actions.with_label_values(&[action]).inc_by(n as u64);
        }
    }

    pub fn background_panicked(&self, name: &str) {
        self.background_panics.with_label_values(&[name]).inc();
    }

    /// The counters and histograms in Prometheus' text format (without the gauges a
    /// scrape reads fresh).
    pub fn scrape_text(&self) -> String {
        use prometheus::Encoder;
        let mut text = Vec::new();
        let _ = prometheus::TextEncoder::new().encode(&self.registry.gather(), &mut text);
        String::from_utf8_lossy(&text).into_owned()
    }

    pub fn proxied(&self, kind: &str, seconds: f64) {
        self.proxy_requests.with_label_values(&[kind]).inc();
        self.proxy_seconds.with_label_values(&[kind]).observe(seconds);
    }
}
