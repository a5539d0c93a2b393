//! The cluster the `[slurm]` section names, with the identity it gives the portal.

use std::sync::Arc;

use slicehub_core::config::{ExposeSecret, SlurmConfig};
use slicehub_core::slurm::{ClusterUsers, SlurmCluster};

use crate::client::SlurmClient;
use crate::tokens::SlurmIdentity;

/// The cluster at `slurm.url`; `None` when none is configured.
pub fn connect(config: &SlurmConfig) -> Option<Arc<dyn SlurmCluster>> {
    let url = config.url.as_deref()?;
    Some(Arc::new(SlurmClient::new(url, identity(config))))
}

/// Per-student tokens signed with the cluster's key when `slurm.jwt_key_file` is set (read
/// at start; config loading checked it is a file), otherwise the one configured token.
fn identity(config: &SlurmConfig) -> SlurmIdentity {
    let token = config.token.as_ref().map(|t| t.expose_secret().to_string()).unwrap_or_default();
    let shared = || SlurmIdentity::Shared { user: config.user.clone(), token: token.clone() };
    let Some(key_file) = &config.jwt_key_file else {
        return shared();
    };
    match std::fs::read(key_file) {
        Ok(secret) => SlurmIdentity::PerStudent {
            user: config.user.clone(),
            key: jsonwebtoken::EncodingKey::from_secret(&secret),
            users: cluster_users(config),
        },
        Err(e) => {
            tracing::error!(file = %key_file.display(), error = %e, "slurm: the JWT key cannot be read; requests use slurm.token");
            shared()
        }
    }
}

/// The administrator's links from portal users to cluster users (`slurm.users_file`); with
/// none, no student's job runs in per-student mode.
fn cluster_users(config: &SlurmConfig) -> ClusterUsers {
    let Some(users_file) = &config.users_file else {
        tracing::error!("slurm: slurm.jwt_key_file is set but slurm.users_file is not: no student is linked to a cluster account, so none can start on the cluster");
        return Default::default();
    };
    match std::fs::read_to_string(users_file) {
        Ok(text) => {
            let (users, problems) = ClusterUsers::parse(&text, &config.user);
            for problem in problems {
                tracing::error!(file = %users_file.display(), %problem, "slurm: a line of the users file is left out");
            }
            users
        }
        Err(e) => {
            tracing::error!(file = %users_file.display(), error = %e, "slurm: the users file cannot be read; no student can start on the cluster");
            Default::default()
        }
    }
}
