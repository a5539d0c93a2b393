//! A student's notebook server is the student's to change: here real containers answer the
//! portal's readers (readiness, the idle pass over JupyterLab's kernels and terminals) with
//! an endless body, a redirect to a service on the portal's own host, and a hang. The
//! portal reads a bounded amount, follows nothing, gives up in time, and another student's
//! session runs on unaffected. Needs the Docker engine and `slicehub/busybox:offline`.


// A binary of its own: it measures the peak memory of its own process, which other
// modules' tests in one binary would add to.
#[macro_use]
#[path = "it/common/mod.rs"]
mod common;
#[path = "it/lab/mod.rs"]
mod lab;


use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::lab::{host_service, lab, BUSYBOX};
use slicehub_core::sessions::{ClaimRequest, SessionState, Workload};
use slicehub_core::courses::{set_policy, PolicyForm, PolicyFormRules};

const START: Duration = Duration::from_secs(60);

/// Answers `/api/status` as JupyterLab would (so the session gets ready) and everything
/// else as `/etc/hostile-mode` says.
const HANDLER: &str = r#"#!/bin/sh
read -r method path rest
case "$path" in
*/api/status*) printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'; exit 0 ;;
esac
case "$(cat /etc/hostile-mode)" in
endless) printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n['
  exec yes '{"execution_state":"idle","last_activity":"2026-01-01T00:00:00Z"},' ;;
redirect) printf 'HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' "$(cat /etc/hostile-target)" ;;
hang) sleep 600 ;;
esac
"#;

/// `slicehub/hostile:MODE-PID`, made from busybox with `docker commit` (no registry).
fn hostile_image(mode: &str, target: &str) -> String {
    let tag = format!("slicehub/hostile:{mode}-{}", std::process::id());
    let builder = format!("slicehub-hostile-build-{mode}-{}", std::process::id());
    let script = format!(
        "cat > /bin/hostile-handler <<'EOF'\n{HANDLER}EOF\n\
         printf '#!/bin/sh\\nexec nc -ll -p 8888 -e /bin/hostile-handler\\n' > /bin/slicehub-notebook\n\
         chmod 755 /bin/hostile-handler /bin/slicehub-notebook\n\
         echo {mode} > /etc/hostile-mode\n\
         echo '{target}' > /etc/hostile-target\n"
    );
    let docker = |args: &[&str]| {
        let out = std::process::Command::new("docker").args(args).output().expect("docker runs");
        assert!(out.status.success(), "docker {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let _ = std::process::Command::new("docker").args(["rm", "-f", &builder]).output();
    docker(&["run", "--name", &builder, "-u", "0", BUSYBOX, "sh", "-c", &script]);
    docker(&["commit", "--change", "USER 1000:100", &builder, &tag]);
    docker(&["rm", "-f", &builder]);
    tag
}

/// The most memory this process has held at once so far (freed buffers do not hide it).
fn peak_resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[tokio::test]
async fn hostile_notebook_servers_neither_exhaust_nor_steer_nor_stall_the_portal() {
    // A service on the portal's own host that a followed redirect would reach.
    let (port, reached) = host_service();
    let target = format!("http://127.0.0.1:{port}/steal");
    let images: Vec<String> = ["endless", "redirect", "hang"].iter().map(|m| hostile_image(m, &target)).collect();

    let fresh = common::sqlite().await;
    let offered = images.clone();
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", move |c| {
        c.sessions.images = offered;
        c.sessions.ready_timeout_seconds = 30;
    })
    .await;
    let known = lab.sessions.known_profiles().await.unwrap();
    let form = PolicyForm {
        images: format!("{BUSYBOX}, {}", images.join(", ")),
        max_minutes: "60".into(),
        max_sessions: "1".into(),
        max_slices: "7".into(),
        internet: "on".into(),
        time_zone: "UTC".into(),
        ..PolicyForm::default()
    };
    set_policy(&lab.store, &lab.config, lab.course_id, &form.parse(&known).unwrap(), &known, "vic").await.unwrap();

    // Another student's ordinary job, running throughout.
    let bystander = lab.student("hostile-bystander").await;
    let ordinary = lab.sessions.claim(lab.job(bystander, &["sleep", "300"])).await.unwrap();
    let mut notebooks = Vec::new();
    for (i, image) in images.iter().enumerate() {
        let student = lab.student(&format!("hostile-{i}")).await;
        let claim = ClaimRequest {
            user_id: student,
            course_id: lab.course_id,
            profile: "1g.10gb".into(),
            image: image.clone(),
            workload: Workload::Notebook,
        };
        let session = lab.sessions.claim(claim).await.unwrap();
        let ready = lab.until(&session.id, &[SessionState::Ready, SessionState::Failed], START).await;
        assert_eq!(ready.state, SessionState::Ready, "{image}: {} {}", ready.reason, ready.log_tail);
        notebooks.push(ready);
    }
    lab.until(&ordinary.id, &[SessionState::Ready], START).await;

    // The idle pass reads every notebook's kernels and terminals, again and again.
    let before = peak_resident_bytes();
    for pass in 0..5 {
        let started = Instant::now();
        lab.sessions.cull_idle().await.expect("the idle pass finishes");
        assert!(started.elapsed() < Duration::from_secs(10), "pass {pass} took {:?}", started.elapsed());
    }
    let grown = peak_resident_bytes().saturating_sub(before);
    assert!(grown < 64 << 20, "the portal's peak memory grew by {grown} bytes reading endless answers");
    assert_eq!(reached.load(Ordering::SeqCst), 0, "a redirect from a container made the portal fetch its host");
    for notebook in &notebooks {
        let now = lab.sessions.session(&notebook.id).await.unwrap();
        assert_eq!(now.state, SessionState::Ready, "{}: the portal did not fall over it", notebook.image);
    }
    let ordinary = lab.sessions.session(&ordinary.id).await.unwrap();
    assert_eq!(ordinary.state, SessionState::Ready, "the other student's job runs on");

    lab.clean_up().await;
    for image in &images {
        let _ = std::process::Command::new("docker").args(["rmi", "-f", image]).output();
    }
}
