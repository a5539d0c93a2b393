use std::fmt;
use std::path::{Path, PathBuf};

use super::{all_keys, Config, OIDC_FIELDS};

/// Where configuration comes from: an optional TOML file and the process environment.
#[derive(Debug, Clone, Default)]
pub struct ConfigSource {
    /// A file named on the command line or in SLICEHUB_CONFIG; it must exist.
    pub file: Option<PathBuf>,
}

/// A configuration problem, phrased so the operator can fix it without reading code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    InvalidValue {
        key: String,
        value: String,
        expected: String,
        origin: String,
    },
    UnknownKey {
        key: String,
        origin: String,
        known: Vec<String>,
    },
    Unreadable {
        path: String,
        reason: String,
    },
    Syntax {
        path: String,
        reason: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::InvalidValue {
                key,
                value,
                expected,
                origin,
            } => write!(
                f,
                "invalid value for `{key}` ({origin}): {value:?} — expected {expected}"
            ),
            ConfigError::UnknownKey { key, origin, known } => write!(
                f,
                "unknown key `{key}` ({origin}); known keys: {}",
                known.join(", ")
            ),
            ConfigError::Unreadable { path, reason } => {
                write!(f, "cannot read config file {path}: {reason}")
            }
            ConfigError::Syntax { path, reason } => {
                write!(f, "config file {path} is not valid TOML: {reason}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// The key whose default follows `server.public_url` (see [`secure_cookies_for_public_url`]).
const SECURE_COOKIES: &str = "server.secure_cookies";

/// Defaults, then the file, then `SLICEHUB_*` variables from `env`; then what follows
/// from them (`server.secure_cookies` from an https `server.public_url`).
pub fn load(
    source: &ConfigSource,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    // Where `server.secure_cookies` was given last, and as what; None: not given.
    let mut secure_cookies_given: Option<(String, String)> = None;

    let file = match &source.file {
        Some(path) => Some(path.clone()),
        None => Some(PathBuf::from("slicehub.toml")).filter(|p| p.exists()),
    };
    if let Some(path) = file {
        for (key, value) in read_file(&path)? {
            let origin = format!("in {}", path.display());
            apply(&mut config, &key, &value, &origin, &env)?;
            if key == SECURE_COOKIES {
                secure_cookies_given = Some((origin, value));
            }
        }
    }

    for spec in all_keys() {
        let name = spec.env_name();
        if let Some(value) = env(&name) {
            let origin = format!("from {name}");
            apply(&mut config, spec.key, &value, &origin, &env)?;
            if spec.key == SECURE_COOKIES {
                secure_cookies_given = Some((origin, value));
            }
        }
    }
    oidc_from_env(&mut config, &env)?;
    secure_cookies_for_public_url(&mut config, secure_cookies_given)?;
    Ok(config)
}

/// `SLICEHUB_OIDC_NAME_FIELD` overrides a field of a provider the file has; then each
/// provider must have what it cannot work without.
fn oidc_from_env(config: &mut Config, env: &dyn Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
    let names: Vec<String> = config.sign_in.oidc.iter().map(|p| p.name.clone()).collect();
    for name in &names {
        for (field, _) in OIDC_FIELDS {
            let variable = format!("SLICEHUB_OIDC_{}_{}", name.replace('-', "_"), field).to_uppercase();
            if let Some(value) = env(&variable) {
                apply(config, &format!("oidc.{name}.{field}"), &value, &format!("from {variable}"), env)?;
            }
        }
    }
    for provider in &config.sign_in.oidc {
        if let Some(problem) = super::oidc_problem(provider) {
            return Err(ConfigError::InvalidValue {
                key: format!("oidc.{}", provider.name),
                value: String::new(),
                expected: problem,
                origin: "in the configuration".to_string(),
            });
        }
    }
    Ok(())
}

/// Browsers that reach the portal over HTTPS must get `Secure` (and `__Host-`) cookies:
/// without them the login cookie also travels over plain HTTP, and a notebook host under
/// the portal's domain can plant a cookie of the same name that the portal reads first.
/// So with an `https://` `server.public_url`, `server.secure_cookies` is true unless given;
/// given as false, the portal refuses to start and says why (a deployment that really
/// serves HTTPS never needs cookies without `Secure`).
fn secure_cookies_for_public_url(
    config: &mut Config,
    given: Option<(String, String)>,
) -> Result<(), ConfigError> {
    let Some(public_url) = config.server.public_url.as_ref().filter(|u| u.is_https()) else {
        return Ok(());
    };
    match given {
        None => {
            config.server.secure_cookies = true;
            Ok(())
        }
        Some((origin, value)) if !config.server.secure_cookies => Err(ConfigError::InvalidValue {
            key: SECURE_COOKIES.to_string(),
            value,
            expected: format!(
                "true, or no value at all, while server.public_url is {public_url} (browsers reach the portal over HTTPS, so its cookies must be Secure)",
            ),
            origin,
        }),
        Some(_) => Ok(()),
    }
}

/// Keys whose values are secrets: a refusal names the key and never repeats the value.
const SECRET_KEYS: [&str; 3] = ["metrics.token", "slurm.token", "database.url"];

/// A refused value as a refusal may repeat it.
fn shown(key: &str, value: String) -> String {
    match SECRET_KEYS.contains(&key) {
        true => "(a secret, not shown)".to_string(),
        false => value,
    }
}

fn apply(
    config: &mut Config,
    key: &str,
    value: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    if let Some(applied) = super::sign_in::apply_oidc_key(&mut config.sign_in.oidc, key, value, env) {
        return applied.map_err(|()| {
            let field = key.rsplit('.').next().unwrap_or("");
            let expected = match OIDC_FIELDS.iter().find(|(f, _)| *f == field) {
                Some((_, form)) => form.to_string(),
                None => format!(
                    "one of the fields of an [oidc.NAME] table (NAME: a-z, 0-9, -): {}",
                    OIDC_FIELDS.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", ")
                ),
            };
            ConfigError::InvalidValue { key: key.to_string(), value: value.to_string(), expected, origin: origin.to_string() }
        });
    }
    let Some(spec) = all_keys().find(|k| k.key == key) else {
        return Err(ConfigError::UnknownKey {
            key: key.to_string(),
            origin: origin.to_string(),
            known: all_keys().map(|k| k.key.to_string()).chain(std::iter::once("oidc.NAME.*".to_string())).collect(),
        });
    };
    (spec.apply)(config, value).map_err(|()| ConfigError::InvalidValue {
        key: key.to_string(),
        value: shown(key, value.to_string()),
        expected: spec.expected.to_string(),
        origin: origin.to_string(),
    })
}

/// The file's keys as dotted names with their values as text, in file order.
fn read_file(path: &Path) -> Result<Vec<(String, String)>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Unreadable {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Syntax {
            path: path.display().to_string(),
            reason: e.message().to_string(),
        })?;
    let mut out = Vec::new();
    flatten("", &toml::Value::Table(table), path, &mut out)?;
    Ok(out)
}

fn flatten(
    prefix: &str,
    value: &toml::Value,
    path: &Path,
    out: &mut Vec<(String, String)>,
) -> Result<(), ConfigError> {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, path, out)?;
            }
        }
        toml::Value::String(s) => out.push((prefix.to_string(), s.clone())),
        toml::Value::Integer(i) => out.push((prefix.to_string(), i.to_string())),
        toml::Value::Float(x) => out.push((prefix.to_string(), x.to_string())),
        toml::Value::Boolean(b) => out.push((prefix.to_string(), b.to_string())),
        other => {
            let expected = all_keys()
                .find(|k| k.key == prefix)
                .map(|k| k.expected.to_string())
                .unwrap_or_else(|| "a string or a number".to_string());
            return Err(ConfigError::InvalidValue {
                key: prefix.to_string(),
                value: shown(prefix, other.to_string()),
                expected,
                origin: format!("in {}", path.display()),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GpuBackendChoice, LogFormat};
    use std::collections::HashMap;

    fn with_file(text: &str, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slicehub.toml");
        std::fs::write(&path, text).unwrap();
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        load(&ConfigSource { file: Some(path) }, |k| env.get(k).cloned())
    }

    #[test]
    fn defaults_apply_when_nothing_is_set() {
        let c = load(&ConfigSource::default(), |_| None).unwrap();
        assert_eq!(c.server.bind.to_string(), "127.0.0.1:3000");
        assert_eq!(c.gpu.backend, GpuBackendChoice::Auto);
        assert!(c
            .effective_database_url()
            .starts_with("sqlite://data/slicehub.db"));
    }

    #[test]
    fn file_values_apply_and_env_overrides_them() {
        let c = with_file(
            "data_dir = \"/srv/slicehub\"\n[server]\nbind = \"0.0.0.0:8080\"\n[log]\nformat = \"json\"\n",
            &[("SLICEHUB_SERVER_BIND", "127.0.0.1:9000")],
        )
        .unwrap();
        assert_eq!(c.data_dir, PathBuf::from("/srv/slicehub"));
        assert_eq!(c.server.bind.to_string(), "127.0.0.1:9000");
        assert_eq!(c.log.format, LogFormat::Json);
    }

    #[test]
    fn invalid_value_names_key_value_and_expected_form() {
        let err = with_file("[server]\nbind = \"not-an-address\"\n", &[]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`server.bind`"), "{msg}");
        assert!(msg.contains("\"not-an-address\""), "{msg}");
        assert!(msg.contains("expected an address and port"), "{msg}");
    }

    #[test]
    fn invalid_env_value_names_the_variable() {
        let err = with_file("", &[("SLICEHUB_DATABASE_MAX_CONNECTIONS", "lots")]).unwrap_err();
        assert!(
            err.to_string()
                .contains("from SLICEHUB_DATABASE_MAX_CONNECTIONS"),
            "{err}"
        );
    }

    #[test]
    fn only_lan_blocks_may_be_reachable_and_images_are_a_list() {
        let c = with_file("", &[("SLICEHUB_SESSIONS_REACHABLE_PRIVATE_RANGES", "10.20.30.7/24, 192.168.1.0/24")]).unwrap();
        assert_eq!(c.sessions.reachable_private_ranges, ["10.20.30.0/24", "192.168.1.0/24"]);
        for bad in ["0.0.0.0/0", "10.0.0.0/7", "169.254.0.0/16", "8.8.8.0/24", "fd00::/8", "mirror.lan"] {
            let err = with_file("", &[("SLICEHUB_SESSIONS_REACHABLE_PRIVATE_RANGES", bad)]);
            assert!(err.is_err(), "{bad} accepted");
        }
        let c = with_file("[sessions]\nimages = \"a/b:1, slicehub/jupyterlab:offline\"\n", &[]).unwrap();
        assert_eq!(c.offered_images(), ["slicehub/jupyterlab:offline", "a/b:1"], "the default first, once");
        assert!(with_file("[sessions]\nimages = \"a b\"\n", &[]).is_err());
    }

    #[test]
    fn unknown_key_is_refused_with_the_known_ones() {
        let err = with_file("[server]\nprot = 3000\n", &[]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("unknown key `server.prot`"), "{msg}");
        assert!(msg.contains("server.bind"), "{msg}");
    }

    #[test]
    fn broken_toml_and_missing_file_are_reported() {
        let err = with_file("[server\nbind=1", &[]).unwrap_err();
        assert!(matches!(err, ConfigError::Syntax { .. }), "{err}");
        let err = load(
            &ConfigSource {
                file: Some("/nonexistent/x.toml".into()),
            },
            |_| None,
        )
        .unwrap_err();
        assert!(err
            .to_string()
            .contains("cannot read config file /nonexistent/x.toml"));
    }

    #[test]
    fn secure_cookies_follow_an_https_public_url_unless_refused_explicitly() {
        let https = [("SLICEHUB_SERVER_PUBLIC_URL", "https://gpu.example.edu")];
        assert!(with_file("", &https).unwrap().server.secure_cookies, "derived from https");
        let http = with_file("", &[("SLICEHUB_SERVER_PUBLIC_URL", "http://portal.lan:8080")]).unwrap();
        assert!(!http.server.secure_cookies, "plain HTTP keeps the default");
        assert!(!with_file("", &[]).unwrap().server.secure_cookies);
        let given = with_file("[server]\npublic_url = \"https://gpu.example.edu\"\nsecure_cookies = true\n", &[]).unwrap();
        assert!(given.server.secure_cookies);

        let err = with_file("", &[https[0], ("SLICEHUB_SERVER_SECURE_COOKIES", "false")]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`server.secure_cookies`") && msg.contains("from SLICEHUB_SERVER_SECURE_COOKIES"), "{msg}");
        assert!(msg.contains("https://gpu.example.edu") && msg.contains("Secure"), "{msg}");
        let err = with_file("[server]\npublic_url = \"https://gpu.example.edu\"\nsecure_cookies = false\n", &[]).unwrap_err();
        assert!(err.to_string().contains("slicehub.toml"), "{err}");
        // The environment overrides the file, both ways.
        let fixed = with_file("[server]\nsecure_cookies = false\n", &[https[0], ("SLICEHUB_SERVER_SECURE_COOKIES", "true")]).unwrap();
        assert!(fixed.server.secure_cookies);
    }

    #[test]
    fn secrets_never_show_and_empty_keys_are_unset() {
        let c = with_file(
            "[metrics]\ntoken = \"prometheus-scrape-token-1234\"\n[slurm]\nurl = \"http://slurmctl:6820\"\ntoken = \"eyJhbGciOi.slurm.jwt\"\n",
            &[("SLICEHUB_DATABASE_URL", "postgres://portal:hunter2-db-pass@db:5432/slicehub")],
        )
        .unwrap();
        let shown = format!("{c:?}");
        for secret in ["prometheus-scrape-token-1234", "eyJhbGciOi.slurm.jwt", "hunter2-db-pass"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(c.effective_database_url().contains("hunter2-db-pass"), "the pool still gets the real URL");
        assert_eq!(c.slurm.url.as_deref(), Some("http://slurmctl:6820"));
        let unset = with_file("[metrics]\ntoken = \"  \"\n[docker]\nhost = \"\"\n", &[("SLICEHUB_SERVER_PUBLIC_URL", "")]).unwrap();
        assert!(unset.metrics.token.is_none() && unset.docker.host.is_none() && unset.server.public_url.is_none());
        assert!(unset.slurm.url.is_none() && unset.database.url.is_none() && unset.gpu.nvml_library.is_none());
        assert!(with_file("[server]\npublic_url = \"/\"\n", &[]).unwrap().server.public_url.is_none(), "a lone / is unset, as before");

        let refused = with_file("", &[("SLICEHUB_DATABASE_URL", "postgress://portal:hunter2-db-pass@db/x")]).unwrap_err().to_string();
        assert!(refused.contains("`database.url`") && !refused.contains("hunter2"), "{refused}");
        let refused = with_file("[metrics]\ntoken = \"short-secret\"\n", &[]).unwrap_err().to_string();
        assert!(refused.contains("`metrics.token`") && !refused.contains("short-secret"), "{refused}");
    }

    #[test]
    fn oidc_providers_are_tables_with_env_overrides_and_required_fields() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "s3cret-from-file\n").unwrap();
        let text = format!(
            "[oidc.campus]\nissuer = \"https://login.campus.edu\"\nclient_id = \"portal\"\nclient_secret_file = \"{}\"\n\
             course_groups = \"CS-101: staff=instructor, students=student\"\n[oidc.guests]\nissuer = \"https://guests.example.org\"\nclient_id = \"g\"\n",
            secret.display()
        );
        let c = with_file(&text, &[("SLICEHUB_OIDC_GUESTS_LABEL", "Guest account"), ("SLICEHUB_OIDC_CAMPUS_CLIENT_ID", "from-env")]).unwrap();
        let names: Vec<&str> = c.sign_in.oidc.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["campus", "guests"]);
        assert_eq!(c.sign_in.oidc[0].client_id, "from-env", "the variable wins");
        assert_eq!(c.sign_in.oidc[1].button_label(), "Guest account");
        assert_eq!(c.sign_in.oidc[0].roles.courses[0].course, "CS-101");
        assert!(!format!("{c:?}").contains("s3cret-from-file"), "the secret never shows");

        let missing = with_file("[oidc.campus]\nclient_id = \"portal\"\n", &[]).unwrap_err().to_string();
        assert!(missing.contains("oidc.campus") && missing.contains("issuer"), "{missing}");
        let unknown = with_file("[oidc.campus]\nissuer = \"https://a.b\"\nclient_id = \"x\"\nclient_secret = \"inline\"\n", &[]).unwrap_err().to_string();
        assert!(unknown.contains("client_secret_file"), "says which fields exist: {unknown}");
        assert!(with_file("[oidc.Bad_Name]\nissuer = \"https://a.b\"\n", &[]).is_err());
        assert!(with_file("[oidc.campus]\nissuer = \"ftp://a.b\"\nclient_id = \"x\"\n", &[]).is_err());
        assert!(with_file("[oidc.campus]\nissuer = \"https://a.b\"\nclient_id = \"x\"\nscopes = \"profile email\"\n", &[]).is_err(), "openid is required");
        let env_secret = with_file("[oidc.campus]\nissuer = \"https://a.b\"\nclient_id = \"x\"\nclient_secret_env = \"CAMPUS_SECRET\"\n", &[("CAMPUS_SECRET", "from-variable")]).unwrap();
        assert!(env_secret.sign_in.oidc[0].client_secret.is_some());
        assert!(with_file("[oidc.campus]\nissuer = \"https://a.b\"\nclient_id = \"x\"\nclient_secret_env = \"UNSET_SECRET\"\n", &[]).is_err());
    }

    #[test]
    fn ldap_and_header_sign_in_keys_check_their_values() {
        let c = with_file("[ldap]\nurl = \"ldaps://ldap.campus.edu\"\ncourse_groups = \"CS-101: cs101=student\"\n[header_sign_in]\nuser_header = \"X-Remote-User\"\n", &[]).unwrap();
        assert_eq!(c.sign_in.ldap.url.as_deref(), Some("ldaps://ldap.campus.edu"));
        assert_eq!(c.sign_in.header.user_header.as_deref(), Some("x-remote-user"));
        assert!(c.sign_in.ldap.start_tls && !c.sign_in.ldap.allow_plain, "TLS unless said otherwise");
        for bad in ["[ldap]\nurl = \"http://ldap\"\n", "[ldap]\nuser_filter = \"uid=x\"\n", "[header_sign_in]\nuser_header = \"X Remote\"\n", "[ldap]\ncourse_groups = \"CS-101: a=owner\"\n"] {
            assert!(with_file(bad, &[]).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_simulated_inventory_is_refused() {
        let err = with_file("[gpu]\nsimulated = \"3 x Z80\"\n", &[]).unwrap_err();
        assert!(err.to_string().contains("`gpu.simulated`"), "{err}");
    }
}
