//! The Slurm pool in a real browser, the course in its own partition (`class`: node 2 and
//! its three 1g GRES): a claim waiting on the cluster shows Slurm's reason, the student's
//! place and Slurm's estimated start on the sessions page, and the launch card counts the
//! partition's GRES; the GPU page lists the cluster's nodes with their partitions and MIG
//! GRES, used of total; the status page says whether the cluster answers. Screenshots of
//! each. Needs the test cluster (`scripts/slurm-cluster.sh`).

use std::time::{Duration, Instant};

use slicehub_end2end::classroom::{password_of, Classroom, ADMIN_PASSWORD};
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::slurm_cluster::SlurmCluster;
use slicehub_end2end::Browser;

const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

#[tokio::test]
async fn a_claim_waiting_on_slurm_shows_slurms_reason_and_estimate_and_the_gpu_page_its_nodes() {
    let cluster = SlurmCluster::up();
    // The shared mode: every job runs as the cluster's one portal user.
    let env = cluster.shared_env(&[("SLICEHUB_SLURM_COURSES", "CS-101=class")]);
    let class = Classroom::start(&built_portal(), &env).await;
    let portal = &class.portal;
    let names: Vec<String> = (0..4).map(|i| format!("sp-{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let cookies = class.enroll(&refs).await;

    // Three training jobs fill the partition's three 1g GRES.
    let body = format!("course_id=1&profile=1g.10gb&image={}&command=sleep+600", urlencode(JUPYTERLAB));
    for cookie in &cookies[..3] {
        let resp = post(&client(), &portal.url, Some(cookie), "start_session", body.clone()).await;
        assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap_or_default());
    }
    let until = Instant::now() + Duration::from_secs(60);
    while cluster.live_jobs().iter().filter(|(_, s)| s == "RUNNING").count() < 3 {
        assert!(Instant::now() < until, "the three jobs do not run: {:?}", cluster.live_jobs());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    for (job, _) in cluster.live_jobs() {
        assert_eq!(cluster.job(job)["Partition"], "class", "the course's own partition");
    }

    // The fourth student's notebook waits in Slurm: the card says why and when.
    let browser = Browser::start().await;
    browser.sign_in(&portal.url, &names[3], &password_of(&names[3])).await;
    browser.open(&format!("{}/sessions", portal.url)).await;
    browser.click("form.launch-notebook button[type=submit]").await;
    let until = Instant::now() + Duration::from_secs(30);
    // Found afresh each round: reopening the page (or a live update) replaces the element.
    let text = loop {
        let wait = browser
            .wait_for_within(".live-sessions .session[data-state=queued] .cluster-wait", Duration::from_secs(30))
            .await;
        let text = wait.text().await.unwrap_or_default();
        if text.contains("Slurm expects it to start at") {
            break text;
        }
        assert!(Instant::now() < until, "no estimate shown: {text}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        browser.open(&format!("{}/sessions", portal.url)).await;
    };
    assert!(text.contains("On the Slurm cluster: waiting for a free slice on the cluster"), "{text}");
    assert!(text.contains("Resources"), "Slurm's own reason: {text}");
    // The launch card counts the partition's free GRES (node 1's are another partition's),
    // not this machine's GPU.
    let launch = browser.wait_text("form.launch-notebook", "1g.10gb").await;
    assert!(launch.contains("1g.10gb — none free, 1 waiting") && !launch.contains("3g.40gb"), "{launch}");
    let now = browser.wait_text(".live-sessions .session .now", "Waiting").await;
    assert!(now.contains("you are next in line"), "{now}");
    browser.check_page("sessions-slurm-waiting").await;

    // The administrator's GPU page: the nodes, their GRES, used of total.
    browser.sign_out().await;
    browser.sign_in(&portal.url, "admin", ADMIN_PASSWORD).await;
    browser.open(&format!("{}/gpus", portal.url)).await;
    let node1 = browser.wait_text(".slurm-pool tr[data-node=slurmnode1]", "1g.10gb").await;
    assert!(node1.contains("0 of 4 in use") && node1.contains("3g.40gb 0 of 1 in use") && !node1.contains("class"), "{node1}");
    let node2 = browser.wait_text(".slurm-pool tr[data-node=slurmnode2]", "1g.10gb").await;
    assert!(node2.contains("3 of 3 in use") && node2.contains("gpu, class"), "{node2}");
    let pool = browser.wait_text(".slurm-pool", "Sessions of").await;
    assert!(pool.contains("Sessions of CS-101 (partition class) run here"), "{pool}");
    browser.check_page("gpus-slurm").await;
    browser.open(&format!("{}/status", portal.url)).await;
    let row = browser.wait_text(".checks", "Slurm cluster").await;
    assert!(row.contains("2 of 2 nodes up"), "{row}");
    browser.check_page("status-slurm").await;
    browser.close().await;
    cluster.ctl(&["scancel", "--user=jovyan"]);
}
