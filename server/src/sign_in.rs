//! The sign-in providers at `serve`'s start: each is read once, and one that cannot be read
//! stops the start only when it would be the sole way in.

use slicehub_core::Services;
use slicehub_sign_in::oidc::OidcProviders;

use crate::error::CliError;

pub async fn oidc_providers(services: &Services) -> Result<OidcProviders, CliError> {
    let providers = OidcProviders::from_config(&services.config).map_err(|e| CliError::Io(e.to_string()))?;
    let others = providers.all().len() > 1
        || services.config.sign_in.ldap.url.is_some()
        || services.config.sign_in.header.user_header.is_some()
        || services.store.count_users_with_password().await.map_err(|e| CliError::Io(e.to_string()))? > 0;
    for provider in providers.all() {
        if let Err(e) = provider.check().await {
            let name = &provider.config.name;
            if !others {
                return Err(CliError::Io(format!(
                    "[oidc.{name}] is the only way to sign in and its discovery document cannot be read: {e}"
                )));
            }
            tracing::warn!(provider = %name, error = %e, "a sign-in provider cannot be read; its button will fail until it can");
        }
    }
    Ok(providers)
}

/// Says in the log, in the background, whether the LDAP directory answers now: local
/// accounts sign in all the same, and directory sign-ins are tried again each time.
pub fn check_directory(config: &slicehub_core::config::Config) {
    if config.sign_in.ldap.url.is_none() {
        return;
    }
    let Ok(directory) = slicehub_sign_in::ldap::LdapDirectory::new(&config.sign_in.ldap) else {
        return;
    };
    tokio::spawn(async move {
        match directory.probe().await {
            Ok(what) => tracing::info!("LDAP sign-in: {what}"),
            Err(why) => tracing::warn!(
                "LDAP sign-in: the directory cannot be used right now ({why}); the sign-in form still works for local accounts, and directory sign-ins are tried again each time"
            ),
        }
    });
}
