//! A real OpenID Connect provider for single sign-on tests: `oidc-provider-mock` 0.3.4
//! (Python, installed by `scripts/setup.sh --test` into `target/idp-venv`) on a free port.
//!
//! What it does, read from its source and checked by running it:
//! - Every claim of a user that is not one of OpenID's standard ones (`groups`, say) goes
//!   into the ID token and the userinfo answer whatever the scope; standard ones (`name`,
//!   `preferred_username`, `email`…) only with their scope (`profile`, `email`).
//! - The claims are read when the code is exchanged, so [`OidcProvider::set_user`] between
//!   two sign-ins changes the second one's ID token.
//! - ID tokens are RS256 and their header has no `kid`; the key in `/jwks` has one.
//! - With `--require-nonce`, an authorization request without `nonce` is sent back to the
//!   relying party with `error=invalid_request`.

use std::fs::OpenOptions;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::{free_port, workspace_root};

/// A running provider. Killed on drop.
pub struct OidcProvider {
    child: Option<Child>,
    port: u16,
    users: Vec<Value>,
    issuer: String,
    log: tempfile::NamedTempFile,
    http: reqwest::Client,
}

impl OidcProvider {
    /// Starts it with these users, each a JSON object of claims with at least `sub`, e.g.
    /// `{"sub": "alice", "preferred_username": "alice", "name": "Alice", "email": "…",
    /// "groups": ["staff"]}`.
    pub async fn start(users: &[Value]) -> OidcProvider {
        let mut provider = OidcProvider {
            child: None,
            port: free_port(),
            users: users.to_vec(),
            issuer: String::new(),
            log: tempfile::NamedTempFile::new().expect("log file"),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("HTTP client"),
        };
        provider.spawn().await;
        provider
    }

    /// The discovery document's `issuer`: `http://127.0.0.1:PORT`, no trailing slash. The
    /// provider takes it from the request's Host, so relying parties must use this URL
    /// (asked through `localhost` it says `http://localhost:PORT`, in ID tokens too).
    pub fn issuer(&self) -> String {
        self.issuer.clone()
    }

    /// Registers a client for this callback; its id and secret. Registered clients must send
    /// the secret with HTTP Basic (`client_secret_basic`) and use exactly this redirect URI.
    /// Unregistered client ids are accepted too (the provider is not started with
    /// `--require-registration`): any secret, any redirect URI, either auth method.
    pub async fn register_client(&self, redirect_uri: &str) -> (String, String) {
        let resp = self
            .http
            .post(format!("{}/oauth2/clients", self.issuer))
            .json(&json!({ "redirect_uris": [redirect_uri] }))
            .send()
            .await
            .expect("client registration answers");
        assert_eq!(resp.status(), 201, "client registration: {}", resp.text().await.unwrap_or_default());
        let body: Value = resp.json().await.expect("registration JSON");
        let field = |k: &str| body[k].as_str().expect("client_id and client_secret").to_string();
        (field("client_id"), field("client_secret"))
    }

    /// Replaces all claims of the user `sub` (adds the user if new); `claims` without `sub`.
    /// Only until [`OidcProvider::restart`], which starts again with the users given to `start`.
    pub async fn set_user(&self, sub: &str, claims: Value) {
        let resp = self
            .http
            .put(format!("{}/users/{sub}", self.issuer))
            .json(&claims)
            .send()
            .await
            .expect("PUT /users answers");
        assert_eq!(resp.status(), 204, "set user {sub}: {}", resp.text().await.unwrap_or_default());
    }

    /// Stops it and starts it again on the same port with the users given to `start`. It
    /// makes a new RSA key at each start, so the `kid` in `/jwks` changes too (checked); as
    /// ID tokens name no `kid`, a relying party sees the change only as a bad signature.
    /// Codes, tokens and registrations are forgotten (a registered id then works as an
    /// unregistered one).
    pub async fn restart(&mut self) {
        self.stop();
        self.spawn().await;
    }

    /// What the browser does on the provider's consent page: signs in as `sub` (any
    /// subject; an unknown one gets only an `email` claim equal to it) on the authorization
    /// URL the relying party redirected to. Returns the redirect to the relying party's
    /// callback (`…?code=…&state=…`, or `?error=…`).
    pub async fn approve(&self, authorize_url: &str, sub: &str) -> String {
        let resp = self
            .http
            .post(authorize_url)
            .form(&[("sub", sub)])
            .send()
            .await
            .expect("authorization endpoint answers");
        let status = resp.status();
        match resp.headers().get(reqwest::header::LOCATION) {
            Some(location) if status.is_redirection() => location.to_str().expect("ASCII Location").to_string(),
            _ => panic!("approving {authorize_url} as {sub}: {status}\n{}", resp.text().await.unwrap_or_default()),
        }
    }

    async fn spawn(&mut self) {
        let bin = workspace_root().join("target/idp-venv/bin/oidc-provider-mock");
        let mut command = Command::new(&bin);
        command.args(["--port", &self.port.to_string(), "--require-nonce"]);
        for user in &self.users {
            command.arg("--user-claims").arg(user.to_string());
        }
        let log = OpenOptions::new().append(true).open(self.log.path()).expect("log file");
        let child = command
            .env("NO_COLOR", "1")
            .env("PYTHONWARNINGS", "ignore")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {} (run scripts/setup.sh --test): {e}", bin.display()));
        self.child = Some(child);

        let discovery = format!("http://127.0.0.1:{}/.well-known/openid-configuration", self.port);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("oidc-provider-mock exited early ({status}):\n{}", self.log());
            }
            if let Ok(resp) = self.http.get(&discovery).send().await {
                if resp.status().is_success() {
                    let doc: Value = resp.json().await.expect("discovery JSON");
                    self.issuer = doc["issuer"].as_str().expect("issuer").to_string();
                    return;
                }
            }
            if Instant::now() > deadline {
                panic!("oidc-provider-mock did not answer {discovery} within 30 s:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Its output so far (all runs), for a failing test to print.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        self.stop();
    }
}
