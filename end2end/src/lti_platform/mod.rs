//! An LTI 1.3 platform (an LMS stand-in like Canvas or Moodle) for tests of SliceHub as an
//! LTI tool, written here in Rust (axum) on a free loopback port.
//!
//! What it does, after LTI 1.3 Core, the 1EdTech Security Framework 1.0 and Names and Role
//! Provisioning Services 2.0:
//! - `GET /course`: a course page that frames the tool (`<iframe name="tool">`); the frame
//!   loads `GET /launch-frame`, which POSTs the third-party login initiation to
//!   `TOOL/lti/login` (`iss`, `login_hint`, `target_link_uri`, `lti_message_hint`,
//!   `client_id`, `lti_deployment_id`).
//! - `GET|POST /auth`: the OIDC authentication request the tool redirects to. Checked like an
//!   LMS does (400 with a plain-text reason otherwise); answered with a page that POSTs
//!   `id_token` and `state` to the `redirect_uri` (form_post, in the same frame).
//! - `GET /jwks`: the platform's public key (one at a time; see [`LtiPlatform::rotate_key`]).
//! - `POST /token`: client-credentials grants authenticated with a JWT the tool signed
//!   (`private_key_jwt`), checked against the keys the tool serves at `TOOL/lti/jwks`
//!   (fetched on every request).
//! - `GET /nrps/{context_id}`: the membership of a course, paged (2 members a page unless the
//!   tool asks `?limit=N`), with `Link: <…>; rel="self", <…>; rel="next"` (absolute,
//!   relative or on another site: [`LtiPlatform::set_next_links`]).
//!
//! The `lti_message_hint` a login initiation carries is bound to the launch (user and
//! course) set when it was made, as Canvas does; tampering ([`Tamper`]) applies when an
//! id_token is signed.

mod keys;
mod launch;
mod pages;
mod services;

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::extract::State as AxumState;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use serde_json::json;

use keys::RsaKey;

pub const INSTRUCTOR: &str = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor";
pub const LEARNER: &str = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner";
pub const LMS_ADMIN: &str = "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator";

/// The NRPS scope a token request must ask for.
pub const NRPS_SCOPE: &str = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";
/// The media type of an NRPS membership container.
pub const NRPS_MEDIA_TYPE: &str = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";

const CLIENT_ID: &str = "slicehub-tool";
const DEPLOYMENT_ID: &str = "dep-1";

/// Who launches: `sub` is the LMS's stable user id; `roles` are full role URIs
/// ([`INSTRUCTOR`], [`LEARNER`], [`LMS_ADMIN`]…).
#[derive(Clone, Debug)]
pub struct LtiUser {
    pub sub: String,
    pub name: String,
    pub email: String,
    pub roles: Vec<String>,
}

/// The course the launch comes from.
#[derive(Clone, Debug)]
pub struct LtiContext {
    pub id: String,
    pub label: String,
    pub title: String,
}

/// One NRPS member; `status` is "Active", "Inactive" or "Deleted".
#[derive(Clone, Debug)]
pub struct Member {
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub roles: Vec<String>,
    pub status: String,
}

/// How NRPS pages name the next page in their `Link` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NextLinks {
    /// The next page's absolute URL (the default).
    Absolute,
    /// Relative to the page's URL (`?limit=2&from=2`).
    Relative,
    /// The same path and query on this origin instead (e.g. `http://127.0.0.2:9`).
    Elsewhere(String),
}

/// How the id_tokens signed from now on are spoiled, for the tool to refuse them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tamper {
    None,
    /// `deployment_id` is "dep-other".
    WrongDeployment,
    /// `exp` is 5 minutes ago (`iat` 10).
    Expired,
    /// `aud` and `azp` name another client.
    WrongAudience,
    /// Signed by a key the JWKS does not publish, under the published key's `kid`.
    OtherKey,
    /// `iss` is another platform's URL.
    WrongIssuer,
    /// Unsigned: header `alg: none`, empty signature.
    AlgNone,
    /// No `deployment_id` claim.
    NoDeployment,
}

/// A running platform. Stopped on drop.
pub struct LtiPlatform {
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

/// What the handlers share: fixed configuration, mutable state, an HTTP client.
struct Shared {
    issuer: String,
    /// The tool's base URL without a trailing slash.
    tool: String,
    http: reqwest::Client,
    state: Mutex<State>,
}

#[derive(Clone)]
struct Launch {
    user: LtiUser,
    context: LtiContext,
}

struct State {
    launch: Launch,
    /// Every course ever launched from: NRPS answers for these.
    contexts: HashSet<String>,
    members: Vec<Member>,
    /// Courses whose NRPS answer is their own rather than `members`.
    members_of: HashMap<String, Vec<Member>>,
    next_links: NextLinks,
    /// `launch_presentation.return_url` of the id_tokens signed from now on.
    return_url: Option<String>,
    tamper: Tamper,
    key: RsaKey,
    /// The key [`Tamper::OtherKey`] signs with, made when first needed.
    other_key: Option<RsaKey>,
    /// `lti_message_hint`s handed out, with the launch each stands for.
    hints: HashMap<String, Launch>,
    /// Client-assertion `jti`s seen (replays are refused).
    jtis: HashSet<String>,
    /// Access tokens issued: expiry and granted scope.
    tokens: HashMap<String, (Instant, String)>,
    token_requests: usize,
    nrps_requests: usize,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn token_url(&self) -> String {
        format!("{}/token", self.issuer)
    }
    fn tool_login_url(&self) -> String {
        format!("{}/lti/login", self.tool)
    }
    fn tool_launch_url(&self) -> String {
        format!("{}/lti/launch", self.tool)
    }
    fn tool_jwks_url(&self) -> String {
        format!("{}/lti/jwks", self.tool)
    }
    fn target_link_uri(&self) -> String {
        format!("{}/", self.tool)
    }
    /// `ISSUER/nrps/CONTEXT_ID`, the id as one escaped path segment.
    fn memberships_url(&self, context_id: &str) -> String {
        let mut url = url::Url::parse(&self.issuer).expect("issuer URL");
        url.path_segments_mut().expect("http URL").push("nrps").push(context_id);
        url.to_string()
    }

    /// The login initiation parameters for the current launch, with a new
    /// `lti_message_hint` bound to it.
    fn login_params(&self) -> Vec<(&'static str, String)> {
        let hint = random_token();
        let mut state = self.state();
        let launch = state.launch.clone();
        state.hints.insert(hint.clone(), launch.clone());
        vec![
            ("iss", self.issuer.clone()),
            ("login_hint", launch.user.sub),
            ("target_link_uri", self.target_link_uri()),
            ("lti_message_hint", hint),
            ("client_id", CLIENT_ID.to_string()),
            ("lti_deployment_id", DEPLOYMENT_ID.to_string()),
        ]
    }
}

impl LtiPlatform {
    /// Starts it for the tool at `tool_url` (its base URL, e.g. `http://127.0.0.1:3000`) on
    /// 127.0.0.1 and a free port. Until [`LtiPlatform::set_launch`], launches are by a
    /// learner `lti-learner-1` in course `course-1`; NRPS has no members until
    /// [`LtiPlatform::set_members`].
    pub async fn start(tool_url: &str) -> LtiPlatform {
        // A port free_port found may be taken by another test before we bind it: try again.
        let mut attempt = 0;
        let (port, listener) = loop {
            let port = crate::free_port();
            match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
                Ok(listener) => break (port, listener),
                Err(e) if attempt < 5 && e.kind() == std::io::ErrorKind::AddrInUse => attempt += 1,
                Err(e) => panic!("LTI platform cannot listen on 127.0.0.1:{port}: {e}"),
            }
        };
        let launch = Launch {
            user: LtiUser {
                sub: "lti-learner-1".into(),
                name: "Lee Learner".into(),
                email: "lee.learner@lms.example".into(),
                roles: vec![LEARNER.into()],
            },
            context: LtiContext { id: "course-1".into(), label: "GPU101".into(), title: "GPU Computing 101".into() },
        };
        let shared = Arc::new(Shared {
            issuer: format!("http://127.0.0.1:{port}"),
            tool: tool_url.trim_end_matches('/').to_string(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(std::time::Duration::from_secs(10))
                .build()
                .expect("HTTP client"),
            state: Mutex::new(State {
                contexts: HashSet::from([launch.context.id.clone()]),
                launch,
                members: Vec::new(),
                members_of: HashMap::new(),
                next_links: NextLinks::Absolute,
                return_url: None,
                tamper: Tamper::None,
                key: RsaKey::generate(new_kid()),
                other_key: None,
                hints: HashMap::new(),
                jtis: HashSet::new(),
                tokens: HashMap::new(),
                token_requests: 0,
                nrps_requests: 0,
            }),
        });
        let app = Router::new()
            .route("/jwks", get(jwks))
            .route("/course", get(course))
            .route("/launch-frame", get(launch_frame))
            .route("/auth", get(auth).post(auth))
            .route("/token", post(services::token))
            .route("/nrps/{context_id}", get(services::nrps))
            .with_state(shared.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        LtiPlatform { shared, shutdown: Some(tx) }
    }

    /// Its base URL, `http://127.0.0.1:PORT` (no trailing slash): the `iss` of its id_tokens.
    pub fn issuer(&self) -> String {
        self.shared.issuer.clone()
    }
    /// "slicehub-tool".
    pub fn client_id(&self) -> String {
        CLIENT_ID.into()
    }
    /// "dep-1".
    pub fn deployment_id(&self) -> String {
        DEPLOYMENT_ID.into()
    }
    /// `ISSUER/auth`: the OIDC authorization endpoint.
    pub fn auth_login_url(&self) -> String {
        format!("{}/auth", self.shared.issuer)
    }
    /// `ISSUER/token`: the OAuth 2 token endpoint (also the `aud` client assertions need).
    pub fn token_url(&self) -> String {
        self.shared.token_url()
    }
    /// `ISSUER/jwks`.
    pub fn jwks_url(&self) -> String {
        format!("{}/jwks", self.shared.issuer)
    }
    /// `ISSUER/course`: the course page that frames the tool and starts a launch in it.
    pub fn course_page_url(&self) -> String {
        format!("{}/course", self.shared.issuer)
    }
    /// `ISSUER/nrps/CONTEXT_ID`: what the id_tokens give as `context_memberships_url`.
    pub fn memberships_url(&self, context_id: &str) -> String {
        self.shared.memberships_url(context_id)
    }

    /// Who the next launch is (for login initiations made from now on), and in which course.
    pub fn set_launch(&self, user: LtiUser, context: LtiContext) {
        let mut state = self.shared.state();
        state.contexts.insert(context.id.clone());
        state.launch = Launch { user, context };
    }

    /// What NRPS answers, for every course launched from.
    pub fn set_members(&self, members: Vec<Member>) {
        self.shared.state().members = members;
    }

    /// What NRPS answers for the course `context_id` (which it then serves, launched from or
    /// not), instead of [`LtiPlatform::set_members`]'s list.
    pub fn set_members_of(&self, context_id: &str, members: Vec<Member>) {
        let mut state = self.shared.state();
        state.contexts.insert(context_id.to_string());
        state.members_of.insert(context_id.to_string(), members);
    }

    /// How NRPS pages link to the next page from now on.
    pub fn set_next_links(&self, how: NextLinks) {
        self.shared.state().next_links = how;
    }

    /// The `launch_presentation.return_url` of the id_tokens signed from now on (None: no
    /// return_url, the default).
    pub fn set_return_url(&self, url: Option<String>) {
        self.shared.state().return_url = url;
    }

    /// Spoils the id_tokens signed from now on ([`Tamper::None`] to stop).
    pub fn tamper(&self, how: Tamper) {
        // Made outside the lock: openssl takes a while and handlers wait on it.
        let other_key = (how == Tamper::OtherKey && self.shared.state().other_key.is_none())
            .then(|| RsaKey::generate(String::new()));
        let mut state = self.shared.state();
        if other_key.is_some() && state.other_key.is_none() {
            state.other_key = other_key;
        }
        state.tamper = how;
    }

    /// A new signing key with a new `kid`; the JWKS then publishes only the new one.
    pub fn rotate_key(&self) {
        let key = RsaKey::generate(new_kid());
        self.shared.state().key = key;
    }

    /// The `kid` id_tokens are signed under now.
    pub fn kid(&self) -> String {
        self.shared.state().key.kid.clone()
    }

    /// How many client-credentials grants it accepted (access tokens issued).
    pub fn token_requests(&self) -> usize {
        self.shared.state().token_requests
    }

    /// How many NRPS pages it served (answers 200; refused requests are not counted).
    pub fn nrps_requests(&self) -> usize {
        self.shared.state().nrps_requests
    }

    /// For HTTP-only tests: the login initiation parameters the platform would POST to
    /// `TOOL/lti/login` now (what `/launch-frame` sends), with a fresh `lti_message_hint`
    /// bound to the current launch.
    pub fn login_params(&self) -> Vec<(&'static str, String)> {
        self.shared.login_params()
    }

    /// For HTTP-only tests: the signed id_token the platform would post for this auth
    /// request (given the tool's redirect Location URL to `ISSUER/auth?...`); checks the
    /// request like `/auth` does. Returns (id_token, state, redirect_uri).
    pub async fn id_token_for(&self, auth_request_url: &str) -> Result<(String, String, String), String> {
        let url = url::Url::parse(auth_request_url).map_err(|e| format!("not a URL: {auth_request_url}: {e}"))?;
        let expected = url::Url::parse(&self.auth_login_url()).expect("auth URL");
        if url.origin() != expected.origin() || url.path() != expected.path() {
            return Err(format!("not this platform's auth endpoint ({}): {auth_request_url}", expected));
        }
        let params: HashMap<String, String> = url.query_pairs().into_owned().collect();
        let ok = launch::authorize(&self.shared, &params)?;
        Ok((ok.id_token, ok.state, ok.redirect_uri))
    }
}

impl Drop for LtiPlatform {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn jwks(AxumState(shared): AxumState<Arc<Shared>>) -> Response {
    let jwk = shared.state().key.jwk();
    ([(header::CACHE_CONTROL, "no-store")], Json(json!({ "keys": [jwk] }))).into_response()
}

async fn course(AxumState(shared): AxumState<Arc<Shared>>) -> Html<String> {
    let title = shared.state().launch.context.title.clone();
    Html(pages::course_page(&title))
}

async fn launch_frame(AxumState(shared): AxumState<Arc<Shared>>) -> Html<String> {
    let params = shared.login_params();
    let fields: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Html(pages::auto_post("Launching the tool", &shared.tool_login_url(), &fields))
}

/// The OIDC authentication request (query for GET, form body for POST).
async fn auth(AxumState(shared): AxumState<Arc<Shared>>, Form(params): Form<HashMap<String, String>>) -> Response {
    match launch::authorize(&shared, &params) {
        Ok(ok) => Html(pages::auto_post(
            "Launching the tool",
            &ok.redirect_uri,
            &[("id_token", ok.id_token.as_str()), ("state", ok.state.as_str())],
        ))
        .into_response(),
        Err(reason) => (StatusCode::BAD_REQUEST, format!("LTI authentication request refused: {reason}\n")).into_response(),
    }
}

/// 32 random bytes as hex, from the OS.
fn random_token() -> String {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("reading /dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn new_kid() -> String {
    format!("lms-{}", &random_token()[..12])
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_secs()
}
