//! The test Slurm cluster (`scripts/slurm-cluster.sh`): started or kept, its settings for a
//! portal, and Slurm's own commands run on its controller, as an operator would.

use std::collections::HashMap;
use std::process::Command;

use crate::portal::workspace_root;

pub struct SlurmCluster {
    /// `SLICEHUB_SLURM_URL`, `…_USER`, `…_TOKEN`, `…_PARTITION`.
    pub settings: Vec<(String, String)>,
}

impl SlurmCluster {
    /// Starts the cluster (or keeps the running one) and cancels every job left on it, whoever
    /// owns it.
    pub fn up() -> SlurmCluster {
        let out = Command::new(workspace_root().join("scripts/slurm-cluster.sh"))
            .arg("up")
            .output()
            .expect("scripts/slurm-cluster.sh runs");
        assert!(out.status.success(), "the Slurm cluster did not start:\n{}", String::from_utf8_lossy(&out.stderr));
        let settings = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let cluster = SlurmCluster { settings };
        for (job, _) in cluster.live_jobs() {
            cluster.ctl(&["scancel", &job.to_string()]);
        }
        cluster
    }

    /// The settings with `extra` added, as `Portal::start` takes them: each student's jobs
    /// run as their own user (see [`SlurmCluster::add_users`]).
    pub fn env<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut env: Vec<(&str, &str)> = self.settings.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env.extend_from_slice(extra);
        env
    }

    /// [`SlurmCluster::env`] without the cluster's key: every job runs as the one user.
    pub fn shared_env<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut env = self.env(extra);
        env.retain(|(k, _)| *k != "SLICEHUB_SLURM_JWT_KEY_FILE");
        env
    }

    /// Unix accounts for these students on every host (as a site's directory would have
    /// them), added in the same order everywhere so their ids agree.
    pub fn add_users(&self, names: &[&str]) {
        let script = format!(
            "for u in {}; do id -u \"$u\" >/dev/null 2>&1 || useradd --create-home --key HOME_MODE=0700 --shell /bin/sh \"$u\"; done",
            names.join(" ")
        );
        for host in ["slurmctl", "slurmnode1", "slurmnode2"] {
            let out = Command::new("docker").args(["exec", host, "sh", "-c", &script]).output().expect("docker exec runs");
            assert!(out.status.success(), "users on {host}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }

    /// Runs a Slurm command on the controller; its output (panics if it fails).
    pub fn ctl(&self, args: &[&str]) -> String {
        self.ctl_as("root", args)
    }

    /// [`SlurmCluster::ctl`] as another user of the cluster.
    pub fn ctl_as(&self, user: &str, args: &[&str]) -> String {
        let out = Command::new("docker")
            .args(["exec", "-u", user, "slurmctl"])
            .args(args)
            .output()
            .expect("docker exec runs");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `scontrol show job -o ID` as fields (`JobState`, `NodeList`, `Account`, `TresPerNode`…).
    pub fn job(&self, id: u64) -> HashMap<String, String> {
        self.ctl(&["scontrol", "show", "job", "-o", &id.to_string()])
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// `scontrol show job -o -d ID` as fields: with `JOB_GRES` and, for a job placed on one
    /// node, `Nodes` and `GRES` as allocated there, device indices included
    /// (`gpu:l40s:1(IDX:5)`).
    pub fn job_detail(&self, id: u64) -> HashMap<String, String> {
        self.ctl(&["scontrol", "show", "job", "-o", "-d", &id.to_string()])
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Ids of every job Slurm still knows (ended ones too, for `MinJobAge`), in order.
    pub fn known_jobs(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .ctl(&["scontrol", "show", "job", "-o"])
            .lines()
            .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("JobId="))?.parse().ok())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Ids of the jobs not over yet, with their state.
    pub fn live_jobs(&self) -> Vec<(u64, String)> {
        self.ctl(&["squeue", "-h", "-o", "%i %T"])
            .lines()
            .filter_map(|l| {
                let (id, state) = l.split_once(' ')?;
                Some((id.parse().ok()?, state.to_string()))
            })
            .collect()
    }
}
