//! The way into a notebook on its own origin. Each GPU session's JupyterLab is served on
//! `SESSION.NOTEBOOK_DOMAIN`, a host that never serves the portal and never receives its
//! cookie. The portal, after its normal login check, mints a **launch ticket**: random,
//! single-use, valid for a minute, naming one session and one user. The notebook host
//! redeems it for a **grant**, a cookie for that host only that lasts no longer than the
//! session. The proxy checks the grant on every request and WebSocket.
//!
//! A ticket is bound to the browser that asked for it, as an OAuth `state` binds a login
//! to its browser: before the portal's door mints one, the notebook host gives the
//! browser a random **nonce** in a cookie of its own (host-only, HttpOnly) and sends it
//! back to the door with the nonce in the address. The ticket is stored under a digest of
//! ticket and nonce together, so it is redeemed only where that cookie comes with it. A
//! ticket link sent to someone else's browser (which has no such cookie, or another one)
//! opens nothing, and does not use the ticket up.

use std::sync::Arc;

use crate::auth::tokens::{new_session_token, token_sha256};
use crate::config::Config;
use crate::sessions::GpuSession;
use crate::store::Store;
use crate::CoreError;
use crate::UserId;

/// How long a launch ticket may wait to be redeemed.
pub const TICKET_MS: i64 = 60_000;
/// How long an administrator's visit lasts before they must confirm again.
pub const ADMIN_VISIT_MS: i64 = 3_600_000;
/// How long a browser keeps its launch nonce: the way in takes a second, but an
/// administrator may read the confirmation page first.
pub const NONCE_SECS: i64 = 600;

/// A redeemed ticket: the grant cookie's value, how long it lasts, and where to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub grant: String,
    pub max_age_secs: i64,
    pub path: String,
}

#[derive(Clone)]
pub struct NotebookAccess {
    store: Store,
    config: Arc<Config>,
    /// `server.public_url` as resolved once: read on every notebook request.
    portal_url: Arc<str>,
    /// `http://` (or `https://`) before a notebook host, `:PORT` after it.
    origin_parts: Arc<(String, String)>,
}

impl NotebookAccess {
    pub fn new(store: Store, config: Arc<Config>) -> NotebookAccess {
        let public = config.public_url();
        NotebookAccess {
            store,
            config,
            origin_parts: Arc::new(origin_parts(&public)),
            portal_url: public.into(),
        }
    }

    /// How browsers reach the portal (`server.public_url`, resolved), without a trailing `/`.
    pub fn portal_url(&self) -> &str {
        &self.portal_url
    }

    /// The grant cookie's name: `__Host-` prefixed over HTTPS, so the browser refuses any
    /// version of it set with a Domain (from a sibling host) or without Secure.
    pub fn grant_cookie(&self) -> &'static str {
        if self.config.server.secure_cookies {
            "__Host-slicehub_notebook"
        } else {
            "slicehub_notebook"
        }
    }

    /// The launch nonce cookie's name, prefixed like the grant cookie's. Host-only, and
    /// never passed on to JupyterLab.
    pub fn nonce_cookie(&self) -> &'static str {
        if self.config.server.secure_cookies {
            "__Host-slicehub_launch"
        } else {
            "slicehub_launch"
        }
    }

    /// `http://s-abc.nb.localhost:3000`: the session's notebook origin, with the scheme and
    /// port browsers use for the portal.
    pub fn origin_of(&self, session_id: &str) -> String {
        let (scheme, port) = &*self.origin_parts;
        format!("{scheme}{session_id}.{}{port}", self.config.server.notebook_domain)
    }

    /// The session a request's Host names, when it is a notebook host: `Some(Some(id))`
    /// for `ID.NOTEBOOK_DOMAIN`, `Some(None)` for any other name under the notebook domain
    /// (served nothing), `None` for the portal's own hosts.
    pub fn session_of_host(&self, host: &str) -> Option<Option<String>> {
        session_of_host(host, self.config.server.notebook_domain.as_str())
    }

    /// A ticket for `user_id` into the session, landing on `path` (which must be under the
    /// session's base URL), redeemable only by the browser holding `nonce`.
    pub async fn mint_ticket(
        &self,
        session: &GpuSession,
        user_id: UserId,
        path: &str,
        nonce: &str,
    ) -> Result<String, CoreError> {
        if !path.starts_with(&session.base_url()) {
            return Err(CoreError::InvalidRequest(format!(
                "{path:?} is not inside this notebook"
            )));
        }
        if !is_nonce(nonce) {
            return Err(CoreError::InvalidRequest("the launch nonce is malformed".into()));
        }
        let ticket = new_session_token()?;
        let expires = crate::store::now_ms() + TICKET_MS;
        self.store
            .insert_notebook_ticket(&ticket_digest(&ticket, nonce), &session.id, user_id, path, expires)
            .await?;
        Ok(ticket)
    }

    /// Exchanges a ticket for a grant on the host of `session`, when one of `nonces` (the
    /// nonce cookie's values the browser sent) is the one the ticket was minted for.
    /// `None`: the ticket is unknown, used, expired, for another session, or for another
    /// browser.
    pub async fn redeem(
        &self,
        ticket: &str,
        nonces: &[String],
        session: &GpuSession,
    ) -> Result<Option<Entry>, CoreError> {
        let mut found = None;
        for nonce in nonces.iter().filter(|n| is_nonce(n)).take(4) {
            found = self.store.redeem_notebook_ticket(&ticket_digest(ticket, nonce)).await?;
            if found.is_some() {
                break;
            }
        }
        let Some(redeemed) = found else {
            return Ok(None);
        };
        if redeemed.session_id != session.id || session.state.is_final() {
            return Ok(None);
        }
        let now = crate::store::now_ms();
        let until = if redeemed.user_id == session.user_id {
            session.deadline_at_ms.max(now + TICKET_MS)
        } else {
            (now + ADMIN_VISIT_MS).min(session.deadline_at_ms.max(now + TICKET_MS))
        };
        let grant = new_session_token()?;
        self.store
            .insert_notebook_grant(&token_sha256(&grant), &session.id, redeemed.user_id, until)
            .await?;
        Ok(Some(Entry {
            grant,
            max_age_secs: (until - now) / 1000,
            path: redeemed.path,
        }))
    }

    /// Which of these grant cookie values (its index) lets its holder into the session
    /// now: the owner's, or an administrator's while `notebooks.admin_access` is on; never
    /// a disabled account's.
    pub async fn admits(&self, grants: &[String], session: &GpuSession) -> Result<Option<usize>, CoreError> {
        for (index, grant) in grants.iter().enumerate() {
            let Some(row) = self.store.notebook_grant(&token_sha256(grant), &session.id).await? else {
                continue;
            };
            let owner = row.user_id == session.user_id;
            let admin = row.user_is_admin && self.config.notebooks.admin_access;
            if !row.user_disabled && (owner || admin) {
                return Ok(Some(index));
            }
        }
        Ok(None)
    }

    /// Whether one of `grants` is the session's own student's (not an administrator's
    /// visit): only the student's own changes and answers count for the session.
    pub async fn held_by_owner(&self, grants: &[String], session: &GpuSession) -> Result<bool, CoreError> {
        for grant in grants {
            if let Some(row) = self.store.notebook_grant(&token_sha256(grant), &session.id).await? {
                if row.user_id == session.user_id && !row.user_disabled {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// A new launch nonce for a browser: 256 random bits, base64url.
pub fn new_nonce() -> Result<String, CoreError> {
    new_session_token()
}

/// Whether `text` looks like a nonce [`new_nonce`] made (anything else is never stored,
/// looked up or echoed).
pub fn is_nonce(text: &str) -> bool {
    text.len() == crate::auth::tokens::SESSION_TOKEN_LEN
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What the database keeps of a ticket: the digest of the ticket and its browser's nonce
/// together (`.` is in neither alphabet, so no two pairs share a text).
fn ticket_digest(ticket: &str, nonce: &str) -> String {
    token_sha256(&format!("{ticket}.{nonce}"))
}

/// `https://gpu.example.edu:8443` → (`https://`, `:8443`); no port, no suffix.
fn origin_parts(public_url: &str) -> (String, String) {
    match url::Url::parse(public_url) {
        Ok(url) => (
            format!("{}://", url.scheme()),
            url.port().map(|p| format!(":{p}")).unwrap_or_default(),
        ),
        Err(_) => ("http://".to_string(), String::new()),
    }
}

fn session_of_host(host: &str, domain: &str) -> Option<Option<String>> {
    let name = host_name(host).to_ascii_lowercase();
    if name == domain {
        return Some(None);
    }
    let label = name.strip_suffix(domain)?.strip_suffix('.')?;
    let is_session = label.starts_with("s-")
        && label.len() <= 63
        && label.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    Some(is_session.then(|| label.to_string()))
}

/// `example.edu:8080` → `example.edu`; `[::1]:3000` → `[::1]`.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_once(']').map(|(h, _)| &host[..=h.len()]).unwrap_or(host);
    }
    host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_is_kept_under_its_browsers_nonce() {
        let (a, b) = (new_nonce().unwrap(), new_nonce().unwrap());
        assert!(is_nonce(&a) && is_nonce(&b) && a != b);
        assert_ne!(ticket_digest("t", &a), ticket_digest("t", &b), "another browser's nonce finds nothing");
        assert_ne!(ticket_digest("t", &a), token_sha256("t"), "nor the ticket alone");
        assert_eq!(ticket_digest("t", &a), ticket_digest("t", &a));
        let (longer, odd) = (format!("{a}x"), format!("%{}", &a[1..]));
        for bad in ["", "short", "a.b", longer.as_str(), odd.as_str()] {
            assert!(!is_nonce(bad), "{bad:?}");
        }
    }

    #[test]
    fn notebook_origins_take_the_portals_scheme_and_port() {
        assert_eq!(origin_parts("http://127.0.0.1:3000"), ("http://".into(), ":3000".into()));
        assert_eq!(origin_parts("https://gpu.example.edu"), ("https://".into(), String::new()));
        assert_eq!(origin_parts("https://[::1]:8443"), ("https://".into(), ":8443".into()));
    }

    #[test]
    fn notebook_hosts_name_their_session_and_nothing_else_passes_for_one() {
        let d = "nb.localhost";
        assert_eq!(session_of_host("s-abc123.nb.localhost:3000", d), Some(Some("s-abc123".into())));
        assert_eq!(session_of_host("S-ABC123.NB.localhost", d), Some(Some("s-abc123".into())));
        assert_eq!(session_of_host("nb.localhost:3000", d), Some(None));
        assert_eq!(session_of_host("x.s-abc.nb.localhost", d), Some(None), "deeper names serve nothing");
        assert_eq!(session_of_host("www.nb.localhost", d), Some(None));
        assert_eq!(session_of_host("127.0.0.1:3000", d), None, "the portal");
        assert_eq!(session_of_host("evilnb.localhost", d), None, "not under the domain");
        assert_eq!(session_of_host("[::1]:3000", d), None);
    }
}
