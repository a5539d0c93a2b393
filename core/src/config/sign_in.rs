//! The ways in besides local passwords: OpenID Connect providers (`[oidc.NAME]`, any
//! number), one LDAP directory (`[ldap]`) and a header set by a trusted web server
//! (`[header_sign_in]`).

use std::path::PathBuf;

use secrecy::SecretString;

use super::group_roles::GroupRoles;

#[derive(Debug, Clone, Default)]
pub struct SignInConfig {
    pub oidc: Vec<OidcProviderConfig>,
    pub ldap: LdapConfig,
    pub header: HeaderSignInConfig,
}

impl SignInConfig {
    /// Whether any provider besides local passwords is configured.
    pub fn has_providers(&self) -> bool {
        !self.oidc.is_empty() || self.ldap.url.is_some() || self.header.user_header.is_some()
    }
}

/// `[oidc.NAME]`
#[derive(Debug, Clone)]
pub struct OidcProviderConfig {
    /// `a-z0-9-`, from the table's name; identities are kept as `oidc:NAME`.
    pub name: String,
    pub label: String,
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<SecretString>,
    pub scopes: Vec<String>,
    pub username_claim: String,
    pub name_claim: String,
    pub email_claim: String,
    pub groups_claim: String,
    pub roles: GroupRoles,
}

impl OidcProviderConfig {
    pub fn new(name: &str) -> Self {
        OidcProviderConfig {
            name: name.to_string(),
            label: String::new(),
            issuer: String::new(),
            client_id: String::new(),
            client_secret: None,
            scopes: vec!["openid".into(), "profile".into(), "email".into()],
            username_claim: "preferred_username".into(),
            name_claim: "name".into(),
            email_claim: "email".into(),
            groups_claim: "groups".into(),
            roles: GroupRoles::default(),
        }
    }

    /// How identities of this provider are named in the database and audit log.
    pub fn key(&self) -> String {
        format!("oidc:{}", self.name)
    }

    /// The button's words: `label`, or the table's name.
    pub fn button_label(&self) -> &str {
        if self.label.is_empty() {
            &self.name
        } else {
            &self.label
        }
    }
}

/// `[ldap]`: search-then-bind against one directory; off while `url` is unset.
#[derive(Debug, Clone, Default)]
pub struct LdapConfig {
    pub url: Option<String>,
    pub start_tls: bool,
    /// Plain LDAP without StartTLS (passwords in clear on the wire): only when said.
    pub allow_plain: bool,
    pub ca_file: Option<PathBuf>,
    pub bind_dn: String,
    pub bind_password: Option<SecretString>,
    pub user_base: String,
    /// `{username}` is replaced by the escaped name typed in.
    pub user_filter: String,
    pub username_attribute: String,
    pub name_attribute: String,
    pub email_attribute: String,
    pub group_base: String,
    /// `{dn}` is the person's DN, `{username}` the name; escaped.
    pub group_filter: String,
    pub group_name_attribute: String,
    pub timeout_seconds: u32,
    pub roles: GroupRoles,
}

impl LdapConfig {
    pub const KEY: &'static str = "ldap";
}

/// `[header_sign_in]`: the web server in front (Apache mod_auth_mellon, Shibboleth SP)
/// signs people in and names them in a header; believed only from `server.trusted_proxies`.
#[derive(Debug, Clone, Default)]
pub struct HeaderSignInConfig {
    pub user_header: Option<String>,
    pub name_header: Option<String>,
    pub email_header: Option<String>,
    pub groups_header: Option<String>,
    pub groups_separator: String,
    pub roles: GroupRoles,
}

impl HeaderSignInConfig {
    pub const KEY: &'static str = "header";
}

/// `[oidc.NAME]` keys: `oidc.NAME.FIELD`. Returns None when `key` is not of that form.
pub(super) fn apply_oidc_key(
    providers: &mut Vec<OidcProviderConfig>,
    key: &str,
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Result<(), ()>> {
    let rest = key.strip_prefix("oidc.")?;
    let (name, field) = rest.split_once('.')?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return Some(Err(()));
    }
    let index = match providers.iter().position(|p| p.name == name) {
        Some(i) => i,
        None => {
            providers.push(OidcProviderConfig::new(name));
            providers.len() - 1
        }
    };
    let p = &mut providers[index];
    let v = value.trim();
    let text = |v: &str| -> Result<String, ()> {
        if v.is_empty() || v.chars().any(char::is_control) {
            Err(())
        } else {
            Ok(v.to_string())
        }
    };
    Some((|| {
        match field {
            "label" => p.label = text(v)?,
            "issuer" => {
                let url = url::Url::parse(v).map_err(|_| ())?;
                if !matches!(url.scheme(), "https" | "http") || url.query().is_some() {
                    return Err(());
                }
                p.issuer = v.to_string();
            }
            "client_id" => p.client_id = text(v)?,
            "client_secret_file" => p.client_secret = Some(super::secret_file::read(v)?),
            "client_secret_env" => {
                let value = env(&text(v)?).filter(|s| !s.trim().is_empty()).ok_or(())?;
                p.client_secret = Some(SecretString::from(value.trim().to_string()));
            }
            "scopes" => {
                let scopes: Vec<String> = v.split([' ', ',']).filter(|s| !s.is_empty()).map(str::to_string).collect();
                if !scopes.iter().any(|s| s == "openid") {
                    return Err(());
                }
                p.scopes = scopes;
            }
            "username_claim" => p.username_claim = text(v)?,
            "name_claim" => p.name_claim = text(v)?,
            "email_claim" => p.email_claim = text(v)?,
            "groups_claim" => p.groups_claim = text(v)?,
            "admin_groups" => p.roles.admin_groups = GroupRoles::parse_admin_groups(v)?,
            "course_groups" => p.roles.courses = GroupRoles::parse_course_groups(v)?,
            _ => return Err(()),
        }
        Ok(())
    })())
}

/// The fields of an `[oidc.NAME]` table, with the form each takes (refusals name them).
pub const OIDC_FIELDS: &[(&str, &str)] = &[
    ("issuer", "the provider's issuer URL, e.g. https://login.campus.edu/realms/main (required)"),
    ("client_id", "the client id the provider gave the portal (required)"),
    ("client_secret_file", "the path of a file holding the client secret"),
    ("client_secret_env", "the name of an environment variable holding the client secret"),
    ("label", "the sign-in button's words, e.g. University login"),
    ("scopes", "scopes separated by spaces, with openid (default: openid profile email)"),
    ("username_claim", "the claim that names the account (default: preferred_username)"),
    ("name_claim", "the claim with the display name (default: name)"),
    ("email_claim", "the claim with the e-mail address (default: email)"),
    ("groups_claim", "the claim listing the person's groups (default: groups)"),
    ("admin_groups", "groups whose members are administrators, separated by commas"),
    ("course_groups", "COURSE: group=instructor, group=student; COURSE: …"),
];

/// What is wrong with a provider as configured (a required field missing), if anything.
pub fn oidc_problem(p: &OidcProviderConfig) -> Option<String> {
    if p.issuer.is_empty() {
        return Some(format!("[oidc.{}] needs `issuer`", p.name));
    }
    if p.client_id.is_empty() {
        return Some(format!("[oidc.{}] needs `client_id`", p.name));
    }
    None
}
