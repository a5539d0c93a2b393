//! What the portal asks Slurm to run for a session, and what Slurm's job states mean to it.

use serde_json::{json, Value};

use super::gres::GresRequest;
use super::notebook_secret::{notebook_port, NOTEBOOK_PORTS_TRIED};
use crate::auth::token_sha256;

/// One session as a Slurm batch job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRequest {
    pub session_id: String,
    /// Marks the portal's jobs (`comment`), so it never touches another job.
    pub tag: String,
    pub partition: String,
    /// The course: Slurm's own fair share and accounting see one account per course.
    pub account: String,
    /// One of the GRES that the session's profile is offered as: `gpu:1g.10gb:1`,
    /// `gpu:l40s:1`, `shard:l40s:1` (typed shards), `shard:1` (untyped).
    pub gres: GresRequest,
    pub time_limit_minutes: i64,
    pub image: String,
    /// Words put before the command, `{image}` replaced (`apptainer exec --nv {image}`);
    /// empty runs it on the node as it is.
    pub container_command: Vec<String>,
    pub path: String,
    pub work: JobWork,
}

#[derive(Debug, Clone, PartialEq)]
pub enum JobWork {
    Notebook { token: String, base_url: String },
    Command(Vec<String>),
}

impl JobRequest {
    /// The body of `POST /slurm/v0.0.38/job/submit`.
    pub fn body(&self) -> Value {
        let mut environment = json!({
            "PATH": self.path,
            "LANG": "C.UTF-8",
            "SLICEHUB_SESSION": self.session_id,
        });
        if let JobWork::Notebook { token, base_url } = &self.work {
            environment["SLICEHUB_TOKEN_SHA256"] = json!(token_sha256(token));
            environment["SLICEHUB_NOTEBOOK_PORT"] = json!(notebook_port(token).to_string());
            environment["SLICEHUB_NOTEBOOK_PORT_RETRIES"] = json!((NOTEBOOK_PORTS_TRIED - 1).to_string());
            environment["SLICEHUB_BASE_URL"] = json!(base_url);
        }
        json!({
            "script": self.script(),
            "job": {
                "name": format!("slicehub-{}", self.session_id),
                "partition": self.partition,
                "account": self.account,
                "comment": self.tag,
                "time_limit": self.time_limit_minutes.max(1),
                "gres": self.gres.as_str(),
                "requeue": false,
                "environment": environment,
                "current_working_directory": "/tmp",
                // Written by the script into the student's own home instead: a file in a
                // node's /tmp is readable by the node's other users, and its name guessable.
                "standard_output": "/dev/null",
            }
        })
    }

    /// The batch script: a shell runs it on the node, so every word is single-quoted.
    pub fn script(&self) -> String {
        let command: Vec<String> = match &self.work {
            JobWork::Notebook { .. } => vec!["slicehub-notebook".into()],
            JobWork::Command(argv) => argv.clone(),
        };
        let words: Vec<String> = self
            .container_command
            .iter()
            .map(|w| w.replace("{image}", &self.image))
            .chain(command)
            .map(|w| quote(&w))
            .collect();
        format!(
            "#!/bin/sh\n\
             # SliceHub session {session}\n\
             HOME=$(getent passwd \"$(id -un)\" | cut -d: -f6)\n\
             export HOME\n\
             cd \"$HOME\" 2>/dev/null || cd /tmp\n\
             if (umask 077 && mkdir -p \"$HOME/.slicehub\") 2>/dev/null; then\n\
             \x20 mask=$(umask); umask 077\n\
             \x20 exec >>\"$HOME/.slicehub/slurm-$SLURM_JOB_ID.out\" 2>&1\n\
             \x20 umask \"$mask\"\n\
             fi\n\
             exec {command}\n",
            session = self.session_id,
            command = words.join(" ")
        )
    }
}

fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Where a job is in Slurm's life, as the portal acts on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobPhase {
    /// Waiting for resources or priority (`reason` is Slurm's word for why).
    Pending,
    Running,
    /// On its way out (`COMPLETING`): the final state follows.
    Ending,
    /// Over: Slurm's state name (`COMPLETED`, `CANCELLED`, `NODE_FAIL`…).
    Over(String),
}

impl JobPhase {
    pub fn of(state: &str) -> JobPhase {
        match state {
            "PENDING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED" | "RESV_DEL_HOLD" => JobPhase::Pending,
            "RUNNING" | "CONFIGURING" | "SUSPENDED" | "RESIZING" => JobPhase::Running,
            "COMPLETING" | "SIGNALING" | "STAGE_OUT" => JobPhase::Ending,
            other => JobPhase::Over(other.to_string()),
        }
    }
}

/// Pending reasons that do not clear by waiting: the job would sit in the queue for good.
pub fn never_starts(reason: &str) -> bool {
    matches!(
        reason,
        "PartitionTimeLimit"
            | "PartitionNodeLimit"
            | "PartitionConfig"
            | "InvalidAccount"
            | "InvalidQOS"
            | "BadConstraints"
            | "JobHeldAdmin"
            | "JobHeldUser"
            | "DependencyNeverSatisfied"
            | "AssocMaxWallDurationPerJobLimit"
            | "QOSMaxWallDurationPerJobLimit"
    )
}

/// What a student reads for Slurm's pending reason.
pub fn pending_words(reason: &str) -> String {
    match reason {
        "Resources" => "waiting for a free slice on the cluster".into(),
        "Priority" => "waiting behind jobs with higher priority".into(),
        "None" | "" => "waiting for the cluster to schedule it".into(),
        "ReqNodeNotAvail" | "NodeDown" => "waiting: the nodes it needs are not available".into(),
        "PartitionDown" | "PartitionInactive" => "waiting: the partition is not accepting jobs".into(),
        other => format!("waiting ({other})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(work: JobWork) -> JobRequest {
        JobRequest {
            session_id: "s-abc".into(),
            tag: "slicehub:i-1:s-abc".into(),
            partition: "gpu".into(),
            account: "cs101".into(),
            gres: GresRequest::one("gpu:1g.10gb").unwrap(),
            time_limit_minutes: 90,
            image: "/images/lab.sif".into(),
            container_command: vec!["apptainer".into(), "exec".into(), "--nv".into(), "{image}".into()],
            path: "/usr/bin:/bin".into(),
            work,
        }
    }

    #[test]
    fn a_job_asks_for_one_mig_gres_of_its_profile_under_the_course_account() {
        let body = request(JobWork::Notebook { token: "t0k".into(), base_url: "/user/a/s-abc/".into() }).body();
        let job = &body["job"];
        assert_eq!(job["gres"], "gpu:1g.10gb:1");
        assert_eq!(job["account"], "cs101");
        assert_eq!(job["time_limit"], 90);
        assert_eq!(job["comment"], "slicehub:i-1:s-abc");
        assert_eq!(job["requeue"], false);
        let environment = job["environment"].to_string();
        assert!(!environment.contains("t0k"), "Slurm keeps the environment: {environment}");
        assert_eq!(job["environment"]["SLICEHUB_TOKEN_SHA256"], token_sha256("t0k"));
        assert_eq!(job["environment"]["SLICEHUB_NOTEBOOK_PORT"], notebook_port("t0k").to_string());
        let script = body["script"].as_str().unwrap();
        assert!(script.contains("exec 'apptainer' 'exec' '--nv' '/images/lab.sif' 'slicehub-notebook'"), "{script}");
        assert!(!script.contains("t0k"), "the token stays out of the script");
        assert_eq!(job["standard_output"], "/dev/null", "nothing in the node's /tmp");
        assert!(script.contains("exec >>\"$HOME/.slicehub/slurm-$SLURM_JOB_ID.out\" 2>&1"), "{script}");
        assert!(script.contains("(umask 077 && mkdir -p \"$HOME/.slicehub\")"), "{script}");
    }

    #[test]
    fn a_whole_gpu_or_a_shard_is_asked_for_by_its_gres() {
        let mut r = request(JobWork::Command(vec!["true".into()]));
        r.gres = GresRequest::one("gpu:l40s").unwrap();
        assert_eq!(r.body()["job"]["gres"], "gpu:l40s:1");
        r.gres = GresRequest::one("shard:l40s").unwrap();
        assert_eq!(r.body()["job"]["gres"], "shard:l40s:1", "a typed shard asks for its GPU's type");
        r.gres = GresRequest::one("shard").unwrap();
        assert_eq!(r.body()["job"]["gres"], "shard:1", "untyped shards, as Slurm reports them");
    }

    #[test]
    fn a_commands_words_reach_the_node_unchanged() {
        let mut r = request(JobWork::Command(vec!["python".into(), "-c".into(), "print('it''s $HOME')".into()]));
        r.container_command.clear();
        let script = r.script();
        assert!(script.ends_with("exec 'python' '-c' 'print('\\''it'\\'''\\''s $HOME'\\'')'\n"), "{script}");
    }

    #[test]
    fn slurm_states_map_to_phases() {
        assert_eq!(JobPhase::of("PENDING"), JobPhase::Pending);
        assert_eq!(JobPhase::of("RUNNING"), JobPhase::Running);
        assert_eq!(JobPhase::of("NODE_FAIL"), JobPhase::Over("NODE_FAIL".into()));
        assert_eq!(JobPhase::of("COMPLETING"), JobPhase::Ending);
        assert!(never_starts("PartitionTimeLimit") && !never_starts("Resources") && !never_starts("Priority"));
    }
}
