//! `slicehub slurm link NAME`: an administrator binds a line of `slurm.users_file` to the
//! portal account of that name.

use slicehub_core::config::Config;
use slicehub_core::slurm::ClusterUsers;
use slicehub_core::CoreError;

use crate::error::CliError;
use crate::startup::open_store;

pub async fn link(config: &Config, username: &str) -> Result<(), CliError> {
    let Some(users_file) = &config.slurm.users_file else {
        return Err(CoreError::InvalidRequest("slurm.users_file is not set: there are no lines to bind".to_string()).into());
    };
    let text = std::fs::read_to_string(users_file)
        .map_err(|e| CliError::Io(format!("cannot read slurm.users_file {}: {e}", users_file.display())))?;
    let listed = ClusterUsers::parse(&text, &config.slurm.user).0;
    let Some(cluster_user) = listed.cluster_name(username).map(str::to_string) else {
        return Err(CoreError::InvalidRequest(format!(
            "{username} is not linked to a cluster user in slurm.users_file ({}); add the line first",
            users_file.display()
        ))
        .into());
    };
    let store = open_store(config).await?;
    let linked = store.link_slurm_user(username).await;
    if matches!(linked, Ok(true)) {
        store.audit("cli", "slurm.link", username, &cluster_user).await?;
    }
    store.close().await;
    match linked? {
        true => {
            println!("{username}'s jobs run as the cluster user {cluster_user}");
            Ok(())
        }
        false => Err(CoreError::NotFound(format!("no portal account is named {username}")).into()),
    }
}
