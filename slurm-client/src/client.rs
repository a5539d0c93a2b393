//! `slurmrestd`'s job and node API (OpenAPI v0.0.38, Slurm 22.05), authenticated with a JWT
//! (`tokens.rs`): the student's own for their jobs, the portal's for reads.

use std::time::Duration;

use serde_json::Value;
use slicehub_core::slurm::{log_skipped, node_gres, JobPhase, JobRequest, SlurmCluster, SlurmJob, SlurmNode};
use slicehub_core::CoreError;

use crate::tokens::SlurmIdentity;

const API: &str = "slurm/v0.0.38";

pub struct SlurmClient {
    http: reqwest::Client,
    url: String,
    identity: SlurmIdentity,
}

impl SlurmClient {
    pub fn new(url: &str, identity: SlurmIdentity) -> SlurmClient {
        SlurmClient {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            url: url.trim_end_matches('/').to_string(),
            identity,
        }
    }

    /// A request as `student` (their jobs) or, with `None`, as the portal (reads).
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        student: Option<&str>,
    ) -> Result<Value, CoreError> {
        let (user, token) = self.identity.credentials(student)?;
        let mut request = self
            .http
            .request(method, format!("{}/{API}/{path}", self.url))
            .header("X-SLURM-USER-NAME", &user)
            .header("X-SLURM-USER-TOKEN", &token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| CoreError::Cluster(format!("slurmrestd at {} does not answer: {e}", self.url)))?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            return Err(CoreError::Cluster(format!(
                "slurmrestd refused the token for {user} ({status}): check slurm.token (`scontrol token username={user}`) or slurm.jwt_key_file"
            )));
        }
        let text = response
            .text()
            .await
            .map_err(|e| CoreError::Cluster(format!("slurmrestd's answer broke off: {e}")))?;
        let value: Value = serde_json::from_str(&text).map_err(|_| {
            CoreError::Cluster(format!("slurmrestd answered {status} with something that is not JSON"))
        })?;
        Ok(value)
    }

    /// Slurm's first error in an answer, in its own words.
    fn first_error(value: &Value) -> Option<String> {
        let error = value["errors"].as_array()?.first()?;
        let text = error["error"].as_str().or(error["description"].as_str()).unwrap_or("unknown error");
        let detail = error["description"].as_str().filter(|d| *d != text && !d.is_empty());
        Some(match detail {
            Some(d) => format!("{text}: {d}"),
            None => text.to_string(),
        })
    }

    async fn cancel_by(&self, id: u64, owner: Option<&str>) -> Result<(), CoreError> {
        let value = self.call(reqwest::Method::DELETE, &format!("job/{id}"), None, owner).await?;
        match Self::first_error(&value) {
            Some(e) if !(e.contains("already") || e.contains("Invalid job id")) => {
                Err(CoreError::Cluster(format!("Slurm did not cancel job {id}: {e}")))
            }
            _ => Ok(()),
        }
    }
}

#[async_trait::async_trait]
impl SlurmCluster for SlurmClient {
    /// Whether each student's jobs run as their own user.
    fn per_student(&self) -> bool {
        self.identity.per_student()
    }

    /// The portal names the administrator's file links to cluster users.
    fn linked_portal_names(&self) -> Vec<String> {
        self.identity.linked_portal_names()
    }

    /// The cluster account portal user `student`'s jobs run as.
    fn cluster_user(&self, student: &str) -> Result<String, CoreError> {
        self.identity.cluster_user(student)
    }

    async fn ping(&self) -> Result<(), CoreError> {
        let value = self.call(reqwest::Method::GET, "ping", None, None).await?;
        match Self::first_error(&value) {
            Some(e) => Err(CoreError::Cluster(format!("slurmctld does not answer: {e}"))),
            None => Ok(()),
        }
    }

    /// Submits the job as `student`; its id.
    async fn submit(&self, job: &JobRequest, student: &str) -> Result<u64, CoreError> {
        let value = self.call(reqwest::Method::POST, "job/submit", Some(&job.body()), Some(student)).await?;
        // A job id means Slurm has the job, whatever else it says (a held job comes with
        // an "error" that is only a remark).
        match (value["job_id"].as_u64(), Self::first_error(&value)) {
            (Some(id), _) => Ok(id),
            (None, Some(e)) => Err(CoreError::Cluster(format!("Slurm refused the job: {e}"))),
            (None, None) => Err(CoreError::Cluster("Slurm answered the job with no job id".into())),
        }
    }

    /// Every job Slurm still knows (finished ones for `MinJobAge`).
    async fn jobs(&self) -> Result<Vec<SlurmJob>, CoreError> {
        let value = self.call(reqwest::Method::GET, "jobs", None, None).await?;
        if let Some(e) = Self::first_error(&value) {
            return Err(CoreError::Cluster(format!("Slurm's job list cannot be read: {e}")));
        }
        Ok(value["jobs"].as_array().map(|jobs| jobs.iter().filter_map(job_from).collect()).unwrap_or_default())
    }

    /// One job, or `None` when Slurm no longer knows it.
    async fn job(&self, id: u64) -> Result<Option<SlurmJob>, CoreError> {
        let value = self.call(reqwest::Method::GET, &format!("job/{id}"), None, None).await?;
        match Self::first_error(&value) {
            Some(e) if e.contains("Invalid job id") => Ok(None),
            Some(e) => Err(CoreError::Cluster(format!("Slurm's job {id} cannot be read: {e}"))),
            None => Ok(value["jobs"].as_array().and_then(|jobs| jobs.iter().find_map(job_from))),
        }
    }

    /// Cancels a job as its owner; one already over is not an error.
    async fn cancel(&self, id: u64, owner: &str) -> Result<(), CoreError> {
        self.cancel_by(id, Some(owner)).await
    }

    /// Cancels a job as the portal's own user (`slurm.user`).
    async fn cancel_as_portal(&self, id: u64) -> Result<(), CoreError> {
        self.cancel_by(id, None).await
    }

    async fn nodes(&self) -> Result<Vec<SlurmNode>, CoreError> {
        let value = self.call(reqwest::Method::GET, "nodes", None, None).await?;
        if let Some(e) = Self::first_error(&value) {
            return Err(CoreError::Cluster(format!("Slurm's nodes cannot be read: {e}")));
        }
        Ok(value["nodes"].as_array().map(|nodes| nodes.iter().filter_map(node_from).collect()).unwrap_or_default())
    }
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn job_from(value: &Value) -> Option<SlurmJob> {
    let node = Some(text(&value["batch_host"]))
        .filter(|n| !n.is_empty())
        .or_else(|| Some(text(&value["nodes"])).filter(|n| !n.is_empty()));
    Some(SlurmJob {
        id: value["job_id"].as_u64()?,
        state: text(&value["job_state"]),
        reason: text(&value["state_reason"]),
        comment: text(&value["comment"]),
        account: text(&value["account"]),
        user: text(&value["user_name"]),
        partition: text(&value["partition"]),
        node,
        start_ms: value["start_time"].as_i64().filter(|s| *s > 0).map(|s| s * 1000),
        exit_code: value["exit_code"].as_i64().map(exit_code_of),
        // While it runs Slurm gives its expected end here: only an ended job's counts.
        end_ms: value["end_time"]
            .as_i64()
            .filter(|e| *e > 0 && matches!(JobPhase::of(&text(&value["job_state"])), JobPhase::Over(_)))
            .map(|e| e * 1000),
        priority: value["priority"].as_u64().unwrap_or(0),
    })
}

/// Slurm reports a job's exit as a wait status: the code in the high byte, or the signal
/// that killed it in the low bits (then 128 + the signal, as a shell says it).
fn exit_code_of(status: i64) -> i64 {
    match status & 0x7f {
        0 => (status >> 8) & 0xff,
        signal => 128 + signal,
    }
}

fn node_from(value: &Value) -> Option<SlurmNode> {
    let name = value["name"].as_str()?.to_string();
    let gres = node_gres(value["gres"].as_str().unwrap_or_default(), value["gres_used"].as_str().unwrap_or_default());
    log_skipped(&name, &gres.skipped);
    Some(SlurmNode {
        name,
        address: text(&value["address"]),
        state: text(&value["state"]),
        flags: value["state_flags"]
            .as_array()
            .map(|f| f.iter().map(text).collect())
            .unwrap_or_default(),
        reason: text(&value["reason"]),
        partitions: value["partitions"]
            .as_array()
            .map(|p| p.iter().map(text).collect())
            .unwrap_or_default(),
        gres: gres.offered,
        used: gres.used,
        left_out_shards: gres.left_out_shards,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn slurms_wait_status_becomes_an_exit_code() {
        assert_eq!(super::exit_code_of(768), 3);
        assert_eq!(super::exit_code_of(0), 0);
        assert_eq!(super::exit_code_of(15), 143);
        assert_eq!(super::exit_code_of(9), 137);
    }
}
