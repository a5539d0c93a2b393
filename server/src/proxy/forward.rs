//! Forwarding one request to a notebook container at its session-network address: headers
//! cleaned (hop-by-hop out, the grant cookie and any client-sent forwarding or
//! authorization headers out), bodies streamed without buffering, and `Upgrade`
//! (WebSocket) requests spliced byte for byte once JupyterLab agrees.
//!
//! The session's token is added to safe requests (GET, HEAD, WebSocket upgrades) only.
//! JupyterLab answers such a request with its own login cookie for this host, and every
//! request that changes something then authenticates with that cookie, so JupyterLab's
//! XSRF check (`_xsrf` cookie against the `X-XSRFToken` header) applies to it.
//!
//! A notebook cannot hold the portal's connections without end: once JupyterLab has a
//! request's whole body it has [`HEAD_TIMEOUT`] to begin its answer (504 otherwise), and
//! each session has at most [`PER_SESSION`] requests in flight, an answer counting until
//! its body has been sent and a WebSocket until it is open; one more is refused at once
//! (503). Open WebSockets are counted apart, at most [`SOCKETS_PER_SESSION`] a session,
//! each until its splice ends: a notebook (or a script in it) cannot pile up sockets, and
//! so tasks and file descriptors, in the portal.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use hyper::body::{Frame, SizeHint};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

use super::pages;

/// How long JupyterLab may take to begin its answer once it has the whole request.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(120);
/// How many requests of one session may be in flight through the proxy at once.
pub const PER_SESSION: usize = 256;
/// How many WebSockets of one session may be open through the proxy at once: JupyterLab
/// opens one per kernel and terminal of each tab, and a few of its own.
pub const SOCKETS_PER_SESSION: usize = 128;

/// How long connecting to a notebook may take: it is on this host's bridge.
const UPSTREAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Headers meaningful only for one connection (RFC 9110 §7.6.1).
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The HTTP client the proxy forwards with: one pool of keep-alive connections, and what
/// each session has in flight through it.
#[derive(Clone)]
pub struct Upstream {
    client: Client<HttpConnector, Body>,
    head_timeout: Duration,
    in_flight: InFlight,
    open_sockets: InFlight,
}

impl Default for Upstream {
    fn default() -> Self {
        Upstream::new(HEAD_TIMEOUT, PER_SESSION)
    }
}

/// Each session's requests in flight, at most `limit` of them. A session's count exists
/// only while it has a request in flight.
#[derive(Clone)]
struct InFlight {
    limit: usize,
    sessions: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
}

/// One request's place among its session's in flight; given back when dropped.
struct Slot {
    permit: Option<OwnedSemaphorePermit>,
    session: String,
    sessions: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
}

impl InFlight {
    fn new(limit: usize) -> InFlight {
        InFlight {
            limit: limit.max(1),
            sessions: Arc::default(),
        }
    }

    /// A place for one more of `session`'s requests; `None` when it has `limit` in flight.
    fn take(&self, session: &str) -> Option<Slot> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let semaphore = sessions
            .entry(session.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(self.limit)))
            .clone();
        let permit = semaphore.try_acquire_owned().ok()?;
        Some(Slot {
            permit: Some(permit),
            session: session.to_string(),
            sessions: self.sessions.clone(),
        })
    }

    #[cfg(test)]
    fn sessions_tracked(&self) -> usize {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        drop(self.permit.take());
        // Clones of the semaphore are made and given to permits under the lock only, so a
        // count of one (the map's) means nothing of this session is in flight.
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if sessions.get(&self.session).is_some_and(|s| Arc::strong_count(s) == 1) {
            sessions.remove(&self.session);
        }
    }
}

/// A request body that tells when it has been read to its end (or dropped): JupyterLab's
/// time to answer counts from then, so a slow upload is not cut off.
struct Watched {
    inner: Body,
    done: Option<oneshot::Sender<()>>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.inner).poll_frame(cx);
        if matches!(frame, Poll::Ready(None) | Poll::Ready(Some(Err(_)))) {
            if let Some(done) = this.done.take() {
                let _ = done.send(());
            }
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// An answer's body, holding its request's place in flight until it is sent or dropped.
struct Holding {
    inner: Body,
    _slot: Slot,
}

impl HttpBody for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

pub(super) fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(header::UPGRADE)
        && headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("upgrade")))
}

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|t| t.trim().to_ascii_lowercase()))
        .collect();
    for name in HOP_BY_HOP.iter().copied().chain(named.iter().map(String::as_str)) {
        headers.remove(name);
    }
}

/// Headers a client could send to make JupyterLab believe something about the request
/// (its scheme, host or address) or to authenticate as someone.
const CLIENT_CLAIMS: [&str; 7] = [
    "authorization",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "x-scheme",
];

/// The Cookie header without the proxy's own cookies (the grant, the launch nonce): the
/// container never sees them.
fn without_cookies(headers: &mut HeaderMap, names: &[&str]) {
    // Read as the portal reads its own cookies (`http::cookies`), so a pair the portal
    // would take for its grant or nonce is never passed on in another spelling.
    let kept: Vec<String> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .filter(|c| !names.contains(&c.name()))
        .map(|c| format!("{}={}", c.name(), c.value()))
        .collect();
    headers.remove(header::COOKIE);
    if !kept.is_empty() {
        if let Ok(value) = HeaderValue::from_str(&kept.join("; ")) {
            headers.insert(header::COOKIE, value);
        }
    }
}

/// A container may set cookies for its own host only: one with a Domain attribute would
/// reach sibling notebook hosts (or a parent domain), and the grant and nonce cookies'
/// names are the proxy's.
fn cookie_allowed(set_cookie: &HeaderValue, proxy_cookies: &[&str]) -> bool {
    let Ok(text) = set_cookie.to_str() else { return false };
    let mut parts = text.split(';').map(str::trim);
    let name = parts.next().and_then(|p| p.split_once('=')).map(|(n, _)| n.trim()).unwrap_or("");
    let scoped = parts.any(|attr| {
        attr.split_once('=')
            .map(|(k, _)| k.trim())
            .unwrap_or(attr)
            .eq_ignore_ascii_case("domain")
    });
    !scoped && !name.is_empty() && !proxy_cookies.contains(&name) && !name.starts_with("__Host-slicehub")
}

impl Upstream {
    /// A client whose upstreams have `head_timeout` to begin each answer, with at most
    /// `per_session` requests of one session in flight.
    pub fn new(head_timeout: Duration, per_session: usize) -> Upstream {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        // A container that is gone answers nothing (its veth vanished, no reset): a
        // connection attempt gives up, and an open socket (a spliced kernel WebSocket) is
        // found dead by keep-alive probes within a minute or two, not TCP's quarter hour.
        connector.set_connect_timeout(Some(UPSTREAM_CONNECT_TIMEOUT));
        connector.set_keepalive(Some(Duration::from_secs(30)));
        connector.set_keepalive_interval(Some(Duration::from_secs(10)));
        connector.set_keepalive_retries(Some(6));
        Upstream {
            client: Client::builder(TokioExecutor::new()).build(connector),
            head_timeout,
            in_flight: InFlight::new(per_session),
            open_sockets: InFlight::new(SOCKETS_PER_SESSION),
        }
    }

    /// Forwards `request` to `session`'s JupyterLab. `address` is `IP:PORT` on the session
    /// network; `proxy_cookies` are the cookies the proxy keeps to itself; `scheme` is how
    /// the browser reached the notebook host (JupyterLab marks its cookies Secure over
    /// https).
    pub async fn forward(
        &self,
        mut request: Request,
        session: &str,
        address: &str,
        token: &str,
        proxy_cookies: &[&str],
        scheme: &'static str,
    ) -> Response {
        let Some(slot) = self.in_flight.take(session) else {
            tracing::warn!(session, "proxy: refused a request: the session has too many in flight");
            return pages::too_many_at_once("");
        };
        let upgrade = is_upgrade(request.headers());
        let socket_slot = match upgrade {
            true => match self.open_sockets.take(session) {
                Some(slot) => Some(slot),
                None => {
                    tracing::warn!(session, "proxy: refused a WebSocket: the session has too many open");
                    return pages::too_many_at_once("");
                }
            },
            false => None,
        };
        let safe = matches!(*request.method(), Method::GET | Method::HEAD);
        let path = request
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let Ok(uri) = format!("http://{address}{path}").parse::<Uri>() else {
            return pages::not_found("");
        };
        let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut request));
        let (mut parts, body) = request.into_parts();
        let upgrade_headers = upgrade.then(|| {
            (
                parts.headers.get(header::UPGRADE).cloned(),
                HeaderValue::from_static("upgrade"),
            )
        });
        strip_hop_by_hop(&mut parts.headers);
        if let Some((Some(protocol), connection)) = upgrade_headers {
            parts.headers.insert(header::UPGRADE, protocol);
            parts.headers.insert(header::CONNECTION, connection);
        }
        without_cookies(&mut parts.headers, proxy_cookies);
        for name in CLIENT_CLAIMS {
            parts.headers.remove(name);
        }
        parts.headers.insert("x-forwarded-proto", HeaderValue::from_static(scheme));
        if safe {
            if let Ok(value) = HeaderValue::from_str(&format!("token {token}")) {
                parts.headers.insert(header::AUTHORIZATION, value);
            }
        }
        parts.uri = uri;
        // The wait for the answer begins once the body has gone; an empty one has at once.
        let (body, body_sent) = if body.is_end_stream() {
            (body, None)
        } else {
            let (done, sent) = oneshot::channel();
            (Body::new(Watched { inner: body, done: Some(done) }), Some(sent))
        };
        // JupyterLab compares Origin with Host, so Host stays the notebook host's.
        let outgoing = Request::from_parts(parts, body);
        let answer = self.client.request(outgoing);
        let mut answer = std::pin::pin!(answer);
        let mut early = None;
        if let Some(body_sent) = body_sent {
            tokio::select! {
                biased;
                answered = &mut answer => early = Some(answered),
                _ = body_sent => {}
            }
        }
        let answered = match early {
            Some(answered) => answered,
            None => match tokio::time::timeout(self.head_timeout, answer).await {
                Ok(answered) => answered,
                Err(_) => {
                    tracing::warn!(address, session, "proxy: JupyterLab did not begin to answer in time");
                    return pages::timed_out("");
                }
            },
        };
        let mut response = match answered {
            Ok(response) => response,
            Err(e) => {
                tracing::warn!(error = %e, address, "proxy: JupyterLab did not answer");
                return pages::unavailable("", "JupyterLab did not answer; it may be restarting. Try again in a moment.");
            }
        };
        if response.status() == StatusCode::SWITCHING_PROTOCOLS {
            if let Some(client_upgrade) = client_upgrade {
                let server_upgrade = hyper::upgrade::on(&mut response);
                tokio::spawn(async move {
                    let _open = socket_slot;
                    match tokio::try_join!(client_upgrade, server_upgrade) {
                        Ok((client, server)) => {
                            let mut client = TokioIo::new(client);
                            let mut server = TokioIo::new(server);
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                        Err(e) => tracing::debug!(error = %e, "proxy: upgrade failed"),
                    }
                });
            }
            // An open WebSocket no longer counts as in flight.
            drop(slot);
            let (parts, _) = response.into_parts();
            return Response::from_parts(parts, Body::empty());
        }
        let (mut parts, body) = response.into_parts();
        strip_hop_by_hop(&mut parts.headers);
        let cookies: Vec<HeaderValue> = parts.headers.get_all(header::SET_COOKIE).iter().cloned().collect();
        parts.headers.remove(header::SET_COOKIE);
        for cookie in cookies {
            if cookie_allowed(&cookie, proxy_cookies) {
                parts.headers.append(header::SET_COOKIE, cookie);
            } else {
                tracing::warn!(address, "proxy: dropped a cookie the container tried to set beyond its host");
            }
        }
        Response::from_parts(parts, Body::new(Holding { inner: Body::new(body), _slot: slot }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_set_cookies_for_their_own_host_only() {
        let proxy = ["slicehub_notebook", "slicehub_launch"];
        let ok = |v: &'static str| cookie_allowed(&HeaderValue::from_static(v), &proxy);
        assert!(ok("_xsrf=abc; Path=/user/a/s-1/"));
        assert!(ok("username-s-1-nb-localhost-3000=x; HttpOnly; Path=/"));
        assert!(!ok("_xsrf=abc; Domain=nb.localhost; Path=/"));
        assert!(!ok("x=1; path=/; DOMAIN=.localhost"));
        assert!(!ok("slicehub_notebook=forged; Path=/"));
        assert!(!ok("slicehub_launch=planted; Path=/"));
        assert!(!ok("__Host-slicehub_session=forged; Path=/; Secure"));
        assert!(!ok("__Host-slicehub_launch=planted; Path=/; Secure"));
    }

    #[test]
    fn the_proxys_cookies_never_reach_the_container() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("_xsrf=1; slicehub_notebook=g; a=b"));
        headers.append(header::COOKIE, HeaderValue::from_static("slicehub_launch=n"));
        without_cookies(&mut headers, &["slicehub_notebook", "slicehub_launch"]);
        assert_eq!(headers.get_all(header::COOKIE).iter().collect::<Vec<_>>(), ["_xsrf=1; a=b"]);
    }

    #[test]
    fn a_grant_spelled_otherwise_is_stripped_as_the_portal_would_read_it() {
        // Whatever spelling the portal takes for its grant (cookies::values trims around
        // the name), the container never sees.
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("slicehub_notebook =g1;  slicehub_launch= n ;x=1"));
        let read = crate::http::cookies::values(&headers, "slicehub_notebook");
        assert_eq!(read, ["g1"], "the portal reads this spelling as the grant");
        without_cookies(&mut headers, &["slicehub_notebook", "slicehub_launch"]);
        let left: Vec<_> = headers.get_all(header::COOKIE).iter().map(|v| v.to_str().unwrap().to_string()).collect();
        assert_eq!(left, ["x=1"]);
    }

    #[test]
    fn each_session_has_its_own_places_in_flight_and_gives_them_back() {
        let in_flight = InFlight::new(2);
        let a1 = in_flight.take("s-a").expect("first");
        let a2 = in_flight.take("s-a").expect("second");
        assert!(in_flight.take("s-a").is_none(), "a third of s-a waits for nothing: refused");
        let b1 = in_flight.take("s-b").expect("another session is not held up");
        drop(a1);
        let a3 = in_flight.take("s-a").expect("a place given back is taken again");
        assert_eq!(in_flight.sessions_tracked(), 2);
        drop((a2, a3, b1));
        assert_eq!(in_flight.sessions_tracked(), 0, "sessions with nothing in flight are forgotten");
    }

    /// A JupyterLab that accepts connections, reads what comes, and never answers.
    async fn silent_upstream() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        address
    }

    fn get(path: &str) -> Request {
        axum::http::Request::builder().uri(path).body(Body::empty()).unwrap()
    }

    #[tokio::test]
    async fn an_upstream_that_never_answers_gets_a_504_in_time() {
        let address = silent_upstream().await;
        let upstream = Upstream::new(Duration::from_millis(300), 4);
        let began = std::time::Instant::now();
        let answer = upstream
            .forward(get("/user/a/s-1/api/status"), "s-1", &address, "t", &["slicehub_notebook"], "http")
            .await;
        assert_eq!(answer.status(), StatusCode::GATEWAY_TIMEOUT);
        assert!(began.elapsed() < Duration::from_secs(3), "{:?}", began.elapsed());
        assert_eq!(upstream.in_flight.sessions_tracked(), 0, "its place was given back");
        // A body that has gone counts the same way.
        let post = axum::http::Request::builder()
            .method("POST")
            .uri("/user/a/s-1/api/contents")
            .header(header::CONTENT_LENGTH, "5")
            .body(Body::from("hello"))
            .unwrap();
        let answer = upstream.forward(post, "s-1", &address, "t", &["slicehub_notebook"], "http").await;
        assert_eq!(answer.status(), StatusCode::GATEWAY_TIMEOUT);
    }

    #[tokio::test]
    async fn one_request_over_the_sessions_limit_is_refused_at_once() {
        let address = silent_upstream().await;
        let upstream = Upstream::new(Duration::from_secs(60), 2);
        let waiting: Vec<_> = (0..2)
            .map(|_| {
                let (upstream, address) = (upstream.clone(), address.clone());
                tokio::spawn(async move {
                    upstream
                        .forward(get("/user/a/s-1/api/status"), "s-1", &address, "t", &["slicehub_notebook"], "http")
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let began = std::time::Instant::now();
        let refused = upstream
            .forward(get("/user/a/s-1/api/status"), "s-1", &address, "t", &["slicehub_notebook"], "http")
            .await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(began.elapsed() < Duration::from_millis(500), "at once: {:?}", began.elapsed());
        let body = axum::body::to_bytes(refused.into_body(), usize::MAX).await.unwrap();
        assert!(String::from_utf8_lossy(&body).contains("too many requests at once"));
        // Another session's requests still go.
        let other = tokio::time::timeout(
            Duration::from_millis(200),
            upstream.forward(get("/user/b/s-2/api/status"), "s-2", &address, "t", &["slicehub_notebook"], "http"),
        )
        .await;
        assert!(other.is_err(), "s-2's request went on to wait for its JupyterLab");
        for task in waiting {
            task.abort();
            let _ = task.await;
        }
        assert_eq!(upstream.in_flight.sessions_tracked(), 0, "given back when the requests went away");
    }

    #[tokio::test]
    async fn an_open_websocket_no_longer_counts_as_in_flight() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut buffer = [0u8; 4096];
                let _ = socket.read(&mut buffer).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n")
                    .await;
                held.push(socket);
            }
        });
        let upstream = Upstream::new(Duration::from_secs(5), 1);
        let socket = axum::http::Request::builder()
            .uri("/user/a/s-1/api/events/subscribe")
            .header(header::CONNECTION, "upgrade")
            .header(header::UPGRADE, "websocket")
            .body(Body::empty())
            .unwrap();
        let answer = upstream.forward(socket, "s-1", &address, "t", &["slicehub_notebook"], "http").await;
        assert_eq!(answer.status(), StatusCode::SWITCHING_PROTOCOLS);
        assert_eq!(upstream.in_flight.sessions_tracked(), 0);
        assert!(upstream.in_flight.take("s-1").is_some(), "the one place is free again");
    }

    #[tokio::test]
    async fn a_websocket_over_the_sessions_open_sockets_is_refused_at_once() {
        let address = silent_upstream().await;
        let upstream = Upstream::new(Duration::from_secs(60), 4);
        let open: Vec<Slot> = (0..SOCKETS_PER_SESSION).map(|_| upstream.open_sockets.take("s-1").expect("a place")).collect();
        let socket = || {
            axum::http::Request::builder()
                .uri("/user/a/s-1/api/events/subscribe")
                .header(header::CONNECTION, "upgrade")
                .header(header::UPGRADE, "websocket")
                .body(Body::empty())
                .unwrap()
        };
        let began = std::time::Instant::now();
        let refused = upstream.forward(socket(), "s-1", &address, "t", &["slicehub_notebook"], "http").await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(began.elapsed() < Duration::from_millis(500), "at once: {:?}", began.elapsed());
        assert_eq!(upstream.in_flight.sessions_tracked(), 0, "a refused socket takes no request's place");
        // Plain requests of the session, and another session's sockets, still go on.
        let plain = tokio::time::timeout(
            Duration::from_millis(200),
            upstream.forward(get("/user/a/s-1/api/status"), "s-1", &address, "t", &["slicehub_notebook"], "http"),
        )
        .await;
        assert!(plain.is_err(), "s-1's request went on to wait for its JupyterLab");
        let other = tokio::time::timeout(
            Duration::from_millis(200),
            upstream.forward(socket(), "s-2", &address, "t", &["slicehub_notebook"], "http"),
        )
        .await;
        assert!(other.is_err(), "s-2's socket went on to wait for its JupyterLab");
        drop(open);
        assert_eq!(upstream.open_sockets.sessions_tracked(), 0, "closed sockets give their places back");
    }
}
