//! Sign-in through an LDAP directory (OpenLDAP, Active Directory) from the portal's own
//! password form: search-then-bind.
//!
//! 1. Bind as the service account (`ldap.bind_dn`) and search `ldap.user_base` for the
//!    one entry `ldap.user_filter` finds for the typed name (escaped first).
//! 2. On a fresh connection, bind as that entry's DN with the typed password: the
//!    directory, not the portal, decides whether it is right (and whether the entry is
//!    locked).
//! 3. With `ldap.group_base` set, search the groups the person is in (as the service
//!    account) for `ldap.admin_groups` and `ldap.course_groups`.
//!
//! Every connection is TLS (ldaps:// or StartTLS) unless `ldap.allow_plain` says
//! otherwise, checked against `ldap.ca_file` or the system's certificate authorities;
//! certificate checks are never turned off.

use std::sync::Arc;
use std::time::Duration;

use ldap3::{Ldap, LdapConnAsync, LdapConnSettings, Scope, SearchEntry, SearchOptions};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};
use secrecy::{ExposeSecret, SecretString};
use slicehub_core::auth::{ExternalIdentity, PasswordDirectory};
use slicehub_core::config::{GroupRoles, LdapConfig};
use slicehub_core::CoreError;

use crate::error::describe;

/// How identities from the directory are named in the database and the audit log.
pub const PROVIDER: &str = "ldap";

/// What a person reads when the directory does not answer; the reason goes to the log.
pub const UNREACHABLE: &str = "The campus directory cannot be reached; try again in a minute.";

/// LDAP result codes that mean "these credentials do not sign anyone in": wrong password
/// or a locked, expired or disabled entry (OpenLDAP's ppolicy and Active Directory answer
/// 49 for all of those; some servers answer 48 or 53 for a disabled entry).
const REFUSED_CODES: [u32; 3] = [
    49, // invalidCredentials
    48, // inappropriateAuthentication
    53, // unwillingToPerform
];

/// sizeLimitExceeded: the user search found more than one entry.
const SIZE_LIMIT_EXCEEDED: u32 = 4;

/// The directory behind the sign-in form (`[ldap]`).
pub struct LdapDirectory {
    url: url::Url,
    start_tls: bool,
    tls: Arc<ClientConfig>,
    bind_dn: String,
    bind_password: Option<SecretString>,
    config: LdapConfig,
    timeout: Duration,
}

/// Why a check could not be finished; the text is for the log only.
struct Trouble(String);

impl<E: std::fmt::Display> From<(&'static str, E)> for Trouble {
    fn from((doing, e): (&'static str, E)) -> Self {
        Trouble(format!("{doing}: {e}"))
    }
}

impl LdapDirectory {
    /// Checks the settings (refusing plain LDAP unless `ldap.allow_plain`) and reads the CA
    /// file; connects to nothing yet.
    pub fn new(config: &LdapConfig) -> Result<Self, CoreError> {
        let bad = |m: String| CoreError::Config(m);
        let url_text = config
            .url
            .as_deref()
            .ok_or_else(|| bad("`ldap.url` is not set".to_string()))?;
        let url = url::Url::parse(url_text).map_err(|e| bad(format!("`ldap.url` {url_text:?}: {e}")))?;
        let start_tls = match url.scheme() {
            "ldaps" => false,
            "ldap" if config.start_tls => true,
            "ldap" if config.allow_plain => {
                tracing::warn!(
                    url = %url,
                    "ldap.allow_plain: passwords typed into the sign-in form cross the network to the directory in clear"
                );
                false
            }
            "ldap" => {
                return Err(bad(format!(
                    "`ldap.url` is {url_text} with `ldap.start_tls = false`: passwords would cross the network in clear. \
                     Use an ldaps:// URL or `ldap.start_tls = true`; only for a directory on this very host, set `ldap.allow_plain = true`"
                )))
            }
            other => return Err(bad(format!("`ldap.url` must start with ldap:// or ldaps://, not {other}://"))),
        };
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad(format!("`ldap.url` {url_text} names no host")));
        }
        if config.user_base.trim().is_empty() {
            return Err(bad(
                "`ldap.user_base` is not set: name the DN people are found under, e.g. ou=people,dc=campus,dc=edu".to_string(),
            ));
        }
        if !config.bind_dn.is_empty() && config.bind_password.is_none() {
            return Err(bad(
                "`ldap.bind_dn` is set but `ldap.bind_password_file` is not: the service account needs its password".to_string(),
            ));
        }
        for (key, filter) in [("ldap.user_filter", &config.user_filter), ("ldap.group_filter", &config.group_filter)] {
            let sample = filter.replace("{username}", "x").replace("{dn}", "cn=x");
            if ldap3::parse_filter(&sample).is_err() {
                return Err(bad(format!("`{key}` is not an LDAP filter: {filter}")));
            }
        }
        let tls = Arc::new(tls_config(config)?);
        let timeout = Duration::from_secs(u64::from(config.timeout_seconds.max(1)));
        Ok(LdapDirectory {
            url,
            start_tls,
            tls,
            bind_dn: config.bind_dn.clone(),
            bind_password: config.bind_password.clone(),
            config: config.clone(),
            timeout,
        })
    }

    /// The directory's URL, for messages.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// Connects and binds as the service account (or anonymously without one), and
    /// searches `ldap.user_base` itself: what `slicehub check` and the start-up report.
    /// Ok: in words what worked; Err: what did not, for the operator.
    pub async fn probe(&self) -> Result<String, String> {
        let work = async {
            let mut ldap = self.connect().await?;
            self.service_bind(&mut ldap).await?;
            let found = ldap
                .search(&self.config.user_base, Scope::Base, "(objectClass=*)", vec!["1.1"])
                .await
                .map_err(|e| Trouble::from(("reading ldap.user_base", e)))?;
            if let Err(e) = found.success() {
                return Err(Trouble(format!("reading ldap.user_base {}: {e}", self.config.user_base)));
            }
            let _ = ldap.unbind().await;
            Ok(())
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(Ok(())) => Ok(match self.bind_dn.as_str() {
                "" => format!("{} answers; searched anonymously", self.url),
                dn => format!("{} answers; bound as {dn}", self.url),
            }),
            Ok(Err(Trouble(why))) => Err(format!("{}: {why}", self.url)),
            Err(_) => Err(format!("{}: no answer within {} s", self.url, self.timeout.as_secs())),
        }
    }

    /// A connection, TLS unless plain LDAP was allowed.
    async fn connect(&self) -> Result<Ldap, Trouble> {
        let settings = LdapConnSettings::new()
            .set_conn_timeout(self.timeout)
            .set_config(self.tls.clone())
            .set_starttls(self.start_tls);
        let (conn, ldap) = LdapConnAsync::from_url_with_settings(settings, &self.url)
            .await
            .map_err(|e| Trouble(format!("cannot connect: {}", describe(&e))))?;
        tokio::spawn(async move {
            if let Err(e) = conn.drive().await {
                tracing::debug!(error = %e, "LDAP connection ended");
            }
        });
        Ok(ldap)
    }

    async fn service_bind(&self, ldap: &mut Ldap) -> Result<(), Trouble> {
        let Some(password) = &self.bind_password else {
            return Ok(());
        };
        let result = ldap
            .simple_bind(&self.bind_dn, password.expose_secret())
            .await
            .map_err(|e| Trouble::from(("binding as the service account", e)))?;
        if result.rc != 0 {
            return Err(Trouble(format!(
                "the directory refused the service account {} (ldap.bind_dn, ldap.bind_password_file): {result}",
                self.bind_dn
            )));
        }
        Ok(())
    }

    async fn check_now(&self, typed: &str, password: &str) -> Result<Option<ExternalIdentity>, Trouble> {
        let cfg = &self.config;
        let mut service = self.connect().await?;
        self.service_bind(&mut service).await?;

        // 1. Who the typed name is: exactly one entry.
        let filter = cfg.user_filter.replace("{username}", &ldap3::ldap_escape(typed));
        let attrs = vec![cfg.username_attribute.as_str(), cfg.name_attribute.as_str(), cfg.email_attribute.as_str()];
        let found = service
            .with_search_options(SearchOptions::new().sizelimit(2))
            .search(&cfg.user_base, Scope::Subtree, &filter, attrs)
            .await
            .map_err(|e| Trouble::from(("searching ldap.user_base", e)))?;
        let ldap3::SearchResult(entries, result) = found;
        let entries: Vec<SearchEntry> = entries
            .into_iter()
            .filter(|e| !e.is_ref() && !e.is_intermediate())
            .map(SearchEntry::construct)
            .collect();
        if result.rc == SIZE_LIMIT_EXCEEDED || entries.len() > 1 {
            tracing::warn!(
                filter = %filter,
                base = %cfg.user_base,
                "ldap.user_filter finds more than one entry for this name; nobody is signed in with it (make the filter match one person)"
            );
            return Ok(None);
        }
        if result.rc != 0 {
            return Err(Trouble(format!("searching ldap.user_base {}: {result}", cfg.user_base)));
        }
        let Some(entry) = entries.into_iter().next() else {
            tracing::debug!(filter = %filter, "no entry in the directory for this name");
            return Ok(None);
        };

        // 2. The password, checked by the directory on a connection of its own.
        let mut person = self.connect().await?;
        let bound = person
            .simple_bind(&entry.dn, password)
            .await
            .map_err(|e| Trouble::from(("binding as the person", e)))?;
        let _ = person.unbind().await;
        match bound.rc {
            0 => {}
            rc if REFUSED_CODES.contains(&rc) => {
                // Active Directory says why in the text (data 52e: wrong password, 775:
                // locked, 533: disabled); the log keeps it, the person reads the usual words.
                tracing::info!(dn = %entry.dn, rc, text = %bound.text, "the directory refused the password");
                return Ok(None);
            }
            _ => return Err(Trouble(format!("binding as {}: {bound}", entry.dn))),
        }

        let username = first(&entry, &cfg.username_attribute).unwrap_or_else(|| typed.to_string());
        let display_name = first(&entry, &cfg.name_attribute).unwrap_or_else(|| username.clone());
        let email = first(&entry, &cfg.email_attribute);

        // 3. The groups, read as the service account.
        let mut groups = Vec::new();
        if !cfg.group_base.trim().is_empty() {
            let filter = cfg
                .group_filter
                .replace("{dn}", &ldap3::ldap_escape(entry.dn.as_str()))
                .replace("{username}", &ldap3::ldap_escape(username.as_str()));
            let found = service
                .search(&cfg.group_base, Scope::Subtree, &filter, vec![cfg.group_name_attribute.as_str()])
                .await
                .map_err(|e| Trouble::from(("searching ldap.group_base", e)))?;
            let (entries, _) = found
                .success()
                .map_err(|e| Trouble(format!("searching ldap.group_base {}: {e}", cfg.group_base)))?;
            for group in entries.into_iter().filter(|e| !e.is_ref() && !e.is_intermediate()) {
                let group = SearchEntry::construct(group);
                for name in values(&group, &cfg.group_name_attribute) {
                    if !groups.contains(name) {
                        groups.push(name.clone());
                    }
                }
            }
        }
        let _ = service.unbind().await;

        Ok(Some(ExternalIdentity {
            provider: PROVIDER.to_string(),
            subject: entry.dn,
            username,
            display_name,
            email,
            groups,
        }))
    }
}

#[async_trait::async_trait]
impl PasswordDirectory for LdapDirectory {
    async fn check(&self, username: &str, password: &str) -> Result<Option<ExternalIdentity>, CoreError> {
        let typed = username.trim();
        // A simple bind with an empty password is an anonymous bind, which succeeds: it
        // proves nothing, so it never reaches the directory.
        if typed.is_empty() || password.is_empty() {
            return Ok(None);
        }
        match tokio::time::timeout(self.timeout, self.check_now(typed, password)).await {
            Ok(Ok(identity)) => Ok(identity),
            Ok(Err(Trouble(why))) => {
                tracing::warn!(url = %self.url, reason = %why, "the LDAP directory could not check a sign-in");
                Err(CoreError::Auth(UNREACHABLE.to_string()))
            }
            Err(_) => {
                tracing::warn!(
                    url = %self.url,
                    "the LDAP directory did not answer a sign-in within ldap.timeout_seconds ({} s)",
                    self.timeout.as_secs()
                );
                Err(CoreError::Auth(UNREACHABLE.to_string()))
            }
        }
    }

    fn roles(&self) -> &GroupRoles {
        &self.config.roles
    }
}

/// The TLS settings: `ldap.ca_file`'s certificates, or the system's; ring's algorithms
/// named here (not the process default, which two providers in one build make ambiguous).
fn tls_config(config: &LdapConfig) -> Result<ClientConfig, CoreError> {
    let mut roots = RootCertStore::empty();
    match &config.ca_file {
        Some(path) => {
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<_, _>>())
                .map_err(|e| CoreError::Config(format!("`ldap.ca_file` {}: {e}", path.display())))?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(CoreError::Config(format!(
                    "`ldap.ca_file` {} holds no certificate (a PEM file with -----BEGIN CERTIFICATE----- is expected)",
                    path.display()
                )));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for e in &found.errors {
                tracing::warn!(error = %e, "a system certificate authority could not be read");
            }
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                tracing::warn!("no system certificate authorities found: set ldap.ca_file, or TLS to the directory fails");
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| CoreError::Config(format!("TLS for the LDAP directory: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// The values of `attribute` (attribute names are case-insensitive; servers answer with
/// their own spelling).
fn values<'a>(entry: &'a SearchEntry, attribute: &str) -> &'a [String] {
    entry
        .attrs
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(attribute))
        .map(|(_, v)| v.as_slice())
        .unwrap_or(&[])
}

fn first(entry: &SearchEntry, attribute: &str) -> Option<String> {
    values(entry, attribute).iter().map(|v| v.trim()).find(|v| !v.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> LdapConfig {
        LdapConfig {
            url: Some(url.to_string()),
            start_tls: true,
            user_base: "ou=people,dc=campus,dc=example".into(),
            user_filter: "(uid={username})".into(),
            username_attribute: "uid".into(),
            name_attribute: "cn".into(),
            email_attribute: "mail".into(),
            group_filter: "(member={dn})".into(),
            group_name_attribute: "cn".into(),
            timeout_seconds: 5,
            ..LdapConfig::default()
        }
    }

    #[test]
    fn plain_ldap_is_refused_unless_allowed() {
        let mut c = config("ldap://127.0.0.1:389");
        c.start_tls = false;
        let err = LdapDirectory::new(&c).err().expect("refused").to_string();
        assert!(err.contains("ldap.allow_plain") && err.contains("in clear"), "{err}");
        c.allow_plain = true;
        assert!(LdapDirectory::new(&c).is_ok());
        c.allow_plain = false;
        c.start_tls = true;
        assert!(LdapDirectory::new(&c).is_ok());
        assert!(LdapDirectory::new(&config("ldaps://dir.campus.example")).is_ok());
    }

    #[test]
    fn a_service_account_needs_its_password_and_people_a_base() {
        let mut c = config("ldaps://dir.campus.example");
        c.bind_dn = "cn=portal,dc=campus,dc=example".into();
        let err = LdapDirectory::new(&c).err().expect("refused").to_string();
        assert!(err.contains("ldap.bind_password_file"), "{err}");
        let mut c = config("ldaps://dir.campus.example");
        c.user_base = String::new();
        assert!(LdapDirectory::new(&c).err().expect("refused").to_string().contains("ldap.user_base"));
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = std::env::temp_dir().join(format!("slicehub-ldap-ca-{}", std::process::id()));
        std::fs::write(&dir, "not a certificate\n").unwrap();
        let mut c = config("ldaps://dir.campus.example");
        c.ca_file = Some(dir.clone());
        let err = LdapDirectory::new(&c).err().expect("refused").to_string();
        let _ = std::fs::remove_file(&dir);
        assert!(err.contains("ldap.ca_file"), "{err}");
    }

    #[test]
    fn typed_names_cannot_change_the_filter() {
        let filter = "(uid={username})".replace("{username}", &ldap3::ldap_escape("*)(uid=*))(|(uid=*"));
        assert_eq!(filter, r"(uid=\2a\29\28uid=\2a\29\29\28|\28uid=\2a)");
        assert!(ldap3::parse_filter(&filter).is_ok());
    }

    #[tokio::test]
    async fn an_empty_password_never_reaches_the_directory() {
        // Nothing listens on port 9: reaching out would be an error, not None.
        let mut c = config("ldap://127.0.0.1:9");
        c.start_tls = false;
        c.allow_plain = true;
        let d = LdapDirectory::new(&c).unwrap();
        assert_eq!(d.check("alice", "").await.unwrap(), None);
        assert_eq!(d.check("  ", "secret").await.unwrap(), None);
        let err = d.check("alice", "secret").await.unwrap_err().to_string();
        assert!(err.contains(UNREACHABLE), "{err}");
    }
}
