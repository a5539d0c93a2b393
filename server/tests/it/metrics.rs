//! `/metrics` through the real binary, scraped by a real Prometheus (Debian's package,
//! installed by `scripts/setup.sh --test`): only the bearer token opens it, and a session
//! that starts shows in Prometheus' own query answers.
//! Needs the Docker engine and `slicehub/busybox:offline`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use slicehub_end2end::classroom::Classroom;
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::free_port;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const BUSYBOX: &str = "slicehub/busybox:offline";
const TOKEN: &str = "metrics-token-for-the-test-0123";

/// A Prometheus scraping the portal every second, with its own data directory.
struct Prometheus {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(portal_url: &str) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let target = portal_url.trim_start_matches("http://");
        let config = format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: slicehub\n    \
             authorization:\n      credentials: {TOKEN}\n    static_configs:\n      - targets: ['{target}']\n"
        );
        let config_path = dir.path().join("prometheus.yml");
        std::fs::write(&config_path, config).unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config_path.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("prometheus (scripts/setup.sh --test installs it)");
        Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        }
    }

    /// The values of an instant query, as numbers.
    async fn query(&self, promql: &str) -> Vec<f64> {
        let Ok(resp) = client()
            .get(format!("{}/api/v1/query?query={}", self.url, urlencode(promql)))
            .send()
            .await
        else {
            return Vec::new();
        };
        let body: serde_json::Value = resp.json().await.unwrap_or_default();
        body["data"]["result"]
            .as_array()
            .map(|results| {
                results
                    .iter()
                    .filter_map(|r| r["value"][1].as_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Waits until the query answers exactly `wanted`.
    async fn until(&self, promql: &str, wanted: &[f64]) {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let got = self.query(promql).await;
            if got == wanted {
                return;
            }
            assert!(Instant::now() < until, "{promql}: Prometheus answers {got:?}, expected {wanted:?}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every `"slicehub_…"` name the portal's metrics code declares.
fn defined_series() -> Vec<String> {
    let dir = slicehub_end2end::workspace_root().join("core/src/metrics");
    let mut names = Vec::new();
    for file in std::fs::read_dir(&dir).expect("core/src/metrics") {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap_or_default();
        names.extend(text.split('"').filter(|w| w.starts_with("slicehub_") && !w.contains(' ')).map(str::to_string));
    }
    names.sort();
    names.dedup();
    names
}

/// Every `slicehub_…` series the shipped Grafana dashboard queries (histogram suffixes cut).
fn dashboard_series() -> Vec<String> {
    let path = slicehub_end2end::workspace_root().join("docs/grafana/slicehub.json");
    let dashboard = std::fs::read_to_string(path).expect("the dashboard");
    let mut series: Vec<String> = dashboard
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("slicehub_"))
        .map(|w| w.trim_end_matches("_bucket").trim_end_matches("_sum").trim_end_matches("_count").to_string())
        .collect();
    series.sort();
    series.dedup();
    assert!(series.len() >= 10, "{series:?}");
    series
}

async fn scrape(url: &str, authorization: Option<&str>) -> (u16, String) {
    let mut request = client().get(format!("{url}/metrics"));
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let resp = request.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

#[tokio::test]
async fn prometheus_scrapes_the_portal_and_sees_a_session_start() {
    let class = Classroom::start(
        BIN.as_ref(),
        &[
            ("SLICEHUB_METRICS_TOKEN", TOKEN),
            ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX),
            ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128"),
            ("SLICEHUB_SESSIONS_SAMPLE_SECONDS", "1"),
        ],
    )
    .await;
    let url = class.portal.url.clone();

    // Nobody reads the class's numbers without the token: not anonymous, not a wrong
    // token, not the administrator's login.
    for authorization in [None, Some("Bearer wrong-token-wrong-token-0000"), Some(TOKEN)] {
        let (status, body) = scrape(&url, authorization).await;
        assert_eq!(status, 401, "{authorization:?}");
        assert!(!body.contains("slicehub_"), "{body}");
    }
    let admin = client()
        .get(format!("{url}/metrics"))
        .header("cookie", &class.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(admin.status(), 401);
    let bearer = format!("Bearer {TOKEN}");
    let (status, body) = scrape(&url, Some(&bearer)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("slicehub_slices_free{profile=\"1g.10gb\"} 7"), "{body}");
    // Counters with labels appear at their first event (a panicking loop, say), so the
    // dashboard's series are checked against what the portal defines, and those that are
    // already in this scrape against its text.
    let defined = defined_series();
    for series in dashboard_series() {
        assert!(defined.contains(&series), "docs/grafana/slicehub.json reads {series}, which the portal does not define");
    }
    for series in defined.iter().filter(|s| body.contains(&format!("# TYPE {s} "))) {
        assert!(dashboard_series().contains(series) || series.contains("memory_used"), "{series} is on no dashboard panel");
    }

    let prometheus = Prometheus::start(&url);
    prometheus.until("up{job=\"slicehub\"}", &[1.0]).await;
    prometheus.until("sum(slicehub_sessions{state=\"ready\"})", &[]).await;

    let cookies = class.enroll(&["mx-ada"]).await;
    let body = format!(
        "course_id=1&profile=1g.10gb&image={}&command={}",
        urlencode(BUSYBOX),
        urlencode("sleep 600")
    );
    let resp = post(&client(), &url, Some(&cookies[0]), "start_session", body).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    prometheus.until("slicehub_sessions{state=\"ready\",course=\"CS-101\"}", &[1.0]).await;
    prometheus.until("slicehub_slices_free{profile=\"1g.10gb\"}", &[6.0]).await;
    prometheus.until("slicehub_slices_held{gpu=\"0\",profile=\"1g.10gb\"}", &[1.0]).await;
    prometheus.until("slicehub_spawn_seconds_count{kind=\"job\"}", &[1.0]).await;
    prometheus.until("slicehub_time_to_ready_seconds_count{kind=\"job\"}", &[1.0]).await;

    // The slice's series carry the labels DCGM's exporter gives the same device: its GPU's
    // UUID and model and the MIG instance's id and profile, as `gpu inspect` reads them.
    let inspect: serde_json::Value = serde_json::from_str(&class.portal.cli(&["gpu", "inspect", "--json"], "")).unwrap();
    let gpu = &inspect["gpus"][0];
    let instance = gpu["instances"].as_array().unwrap().iter().find(|i| i["profile_name"] == "1g.10gb").expect("the job's instance");
    let wanted = [
        "gpu=\"0\"".to_string(),
        format!("UUID=\"{}\"", gpu["uuid"].as_str().unwrap()),
        format!("modelName=\"{}\"", gpu["name"].as_str().unwrap()),
        format!("GPU_I_ID=\"{}\"", instance["gpu_instance_id"]),
        "GPU_I_PROFILE=\"1g.10gb\"".to_string(),
        "course=\"CS-101\"".to_string(),
    ];
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let line = loop {
        let (_, body) = scrape(&url, Some(&bearer)).await;
        if let Some(line) = body.lines().find(|l| l.starts_with("slicehub_slice_memory_used_bytes{")) {
            break line.to_string();
        }
        assert!(std::time::Instant::now() < until, "no slice sample in 30 s: {body}");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    for label in &wanted {
        assert!(line.contains(label.as_str()), "{label} missing: {line}");
    }
    prometheus
        .until(&format!("count(slicehub_slice_memory_used_bytes{{{}}})", wanted.join(",")), &[1.0])
        .await;
}
