//! A visit to a notebook on its own origin, as a browser makes it: the portal's
//! `/user/NAME/SESSION/…` door sends the browser to `SESSION.nb.localhost`, which sets its
//! launch nonce and sends it back to the door for a launch ticket bound to that nonce; the
//! notebook host trades the ticket (with the nonce) for its own cookie, and JupyterLab
//! adds its login and `_xsrf` cookies. Names under `.localhost` resolve to loopback in
//! browsers, not in the system resolver, so the client is told where they live.

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, SET_COOKIE};

use crate::Portal;

/// The notebook host's launch nonce cookie (without `server.secure_cookies`).
pub const NONCE_COOKIE: &str = "slicehub_launch";

pub struct NotebookVisit {
    pub client: reqwest::Client,
    /// `http://s-….nb.localhost:PORT`
    pub origin: String,
    /// The notebook host's cookies, by name.
    pub cookies: BTreeMap<String, String>,
}

/// The `name → value` pairs of every `Set-Cookie` in `headers`.
pub fn set_cookies(headers: &HeaderMap) -> Vec<(String, String, String)> {
    headers
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| {
            let (pair, attributes) = v.split_once(';').unwrap_or((v, ""));
            let (name, value) = pair.split_once('=')?;
            Some((name.trim().to_string(), value.trim().to_string(), attributes.to_string()))
        })
        .collect()
}

/// A client that resolves `host` to the portal's loopback address and never follows
/// redirects.
pub fn client_for(portal: &Portal, host: &str) -> reqwest::Client {
    let port: u16 = portal.url.rsplit(':').next().unwrap().parse().unwrap();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .resolve(host, std::net::SocketAddr::from(([127, 0, 0, 1], port)))
        .build()
        .expect("client")
}

impl NotebookVisit {
    /// Follows the door at `path` (on the portal, with `portal_cookie`) to the notebook
    /// host, which gives the browser its launch nonce and sends it back to the door; the
    /// door's ticket is redeemed with that nonce and the page it leads to loaded. Panics
    /// unless each step answers as it should for someone let in.
    pub async fn open(portal: &Portal, portal_cookie: &str, path: &str) -> NotebookVisit {
        let at_the_door = |url: String| crate::form::client().get(url).header("cookie", portal_cookie).send();
        let door = at_the_door(format!("{}{path}", portal.url)).await.unwrap();
        assert_eq!(door.status(), 303, "the door at {path} lets this user through");
        let there = door.headers()["location"].to_str().unwrap().to_string();
        let host = there.split_once("://").unwrap().1.split([':', '/']).next().unwrap().to_string();
        let begun = client_for(portal, &host).get(&there).send().await.unwrap();
        assert_eq!(begun.status(), 303, "{there} sends the browser back to the door with its nonce");
        let nonce = set_cookies(begun.headers())
            .into_iter()
            .find(|(name, ..)| name == NONCE_COOKIE)
            .expect("the notebook host sets the browser's launch nonce")
            .1;
        let back = begun.headers()["location"].to_str().unwrap().to_string();
        let minted = at_the_door(back).await.unwrap();
        assert_eq!(minted.status(), 303, "the door mints a ticket");
        let launch = minted.headers()["location"].to_str().unwrap().to_string();
        NotebookVisit::redeem(portal, &launch, &nonce).await
    }

    /// Redeems a launch URL `http://HOST/_slicehub/launch?ticket=…` in the browser holding
    /// the launch nonce `nonce` (the ticket was minted for it), and loads where it leads.
    pub async fn redeem(portal: &Portal, launch: &str, nonce: &str) -> NotebookVisit {
        let rest = launch.split_once("://").unwrap().1;
        let host = rest.split([':', '/']).next().unwrap();
        let origin = launch[..launch.find("/_slicehub/").unwrap()].to_string();
        let mut visit = NotebookVisit {
            client: client_for(portal, host),
            origin,
            cookies: [(NONCE_COOKIE.to_string(), nonce.to_string())].into(),
        };
        let redeemed = visit.client.get(launch).header("cookie", visit.cookie_header()).send().await.unwrap();
        assert_eq!(redeemed.status(), 303, "the ticket is redeemed");
        visit.keep(redeemed.headers());
        let next = redeemed.headers()["location"].to_str().unwrap().to_string();
        let page = visit.get(&next).await;
        assert_eq!(page.status(), 200, "{next} loads");
        visit
    }

    pub fn keep(&mut self, headers: &HeaderMap) {
        for (name, value, _) in set_cookies(headers) {
            self.cookies.insert(name, value);
        }
    }

    pub fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// A GET on the notebook host with the visit's cookies, keeping what it sets.
    pub async fn get(&mut self, path: &str) -> reqwest::Response {
        let response = self
            .client
            .get(format!("{}{path}", self.origin))
            .header("cookie", self.cookie_header())
            .send()
            .await
            .unwrap();
        self.keep(response.headers());
        response
    }

    /// A JSON POST as JupyterLab's page sends it: from its own origin, with the XSRF
    /// header (when `xsrf`) copied from the `_xsrf` cookie.
    pub async fn post_json(&self, path: &str, body: &serde_json::Value, origin: &str, xsrf: bool) -> reqwest::Response {
        let mut request = self
            .client
            .post(format!("{}{path}", self.origin))
            .header("cookie", self.cookie_header())
            .header("origin", origin)
            .json(body);
        if xsrf {
            request = request.header("x-xsrftoken", self.cookies.get("_xsrf").cloned().unwrap_or_default());
        }
        request.send().await.unwrap()
    }
}
