//! `slicehub token create|list|revoke`: personal access tokens of an account, on the
//! portal's own machine (the account page makes them too).

use slicehub_core::auth::{caller_of, Authenticator, TokenRequest};
use slicehub_core::config::Config;
use slicehub_core::CoreError;

use crate::cli::TokenCommand;
use crate::error::CliError;
use crate::startup::open_store;

pub async fn run(config: &Config, command: TokenCommand) -> Result<(), CliError> {
    let store = open_store(config).await?;
    let auth = Authenticator::from_config(store.clone(), config);
    let done = match command {
        TokenCommand::Create { username, name, scopes, days } => async {
            let user = account(&store, &username).await?;
            let caller = caller_of(&store, &user).await?;
            let scopes = scopes.iter().flat_map(|s| s.split(',')).map(|s| s.trim().to_string()).collect();
            let made = auth.create_api_token(&caller, &TokenRequest { name, scopes, days, made_by: None }).await?;
            // The secret alone on standard output, for `> token-file`.
            println!("{}", made.secret);
            eprintln!("token {} for {username}: {} (shown once)", made.row.id, made.row.scopes);
            Ok(())
        }
        .await,
        TokenCommand::List { username } => async {
            let user = account(&store, &username).await?;
            for t in auth.api_tokens_of(user.id).await? {
                println!("{}\t{}\t{}\texpires {}", t.id, t.name, t.scopes, t.expires_at.map_or("never".into(), |e| e.to_string()));
            }
            Ok(())
        }
        .await,
        TokenCommand::Revoke { username, id } => async {
            let user = account(&store, &username).await?;
            auth.revoke_api_token(&caller_of(&store, &user).await?, id).await?;
            println!("revoked token {id} of {username}");
            Ok(())
        }
        .await,
    };
    store.close().await;
    done
}

async fn account(store: &slicehub_core::store::Store, username: &str) -> Result<slicehub_core::store::User, CliError> {
    store
        .user_by_username(username)
        .await?
        .ok_or_else(|| CliError::Core(CoreError::NotFound(format!("there is no account {username}"))))
}
