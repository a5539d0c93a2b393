//! A visit to a notebook on its own origin, as a browser makes it: the portal's
//! `/user/NAME/SESSION/…` door answers with a launch ticket for `SESSION.nb.localhost`, the
//! notebook host trades it for its own cookie, and JupyterLab adds its login and `_xsrf`
//! cookies. Names under `.localhost` resolve to loopback in browsers, not in the system
//! resolver, so the client is told where they live.

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, SET_COOKIE};

use crate::Portal;

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
    /// host, redeems the ticket and loads the page it leads to. Panics unless each step
    /// answers as it should for someone let in.
    pub async fn open(portal: &Portal, portal_cookie: &str, path: &str) -> NotebookVisit {
        let door = crate::form::client()
            .get(format!("{}{path}", portal.url))
            .header("cookie", portal_cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(door.status(), 303, "the door at {path} lets this user through");
        let launch = door.headers()["location"].to_str().unwrap().to_string();
        NotebookVisit::redeem(portal, &launch).await
    }

    /// Redeems a launch URL `http://HOST/_slicehub/launch?ticket=…` and loads where it leads.
    pub async fn redeem(portal: &Portal, launch: &str) -> NotebookVisit {
        let rest = launch.split_once("://").unwrap().1;
        let host = rest.split([':', '/']).next().unwrap();
        let origin = launch[..launch.find("/_slicehub/").unwrap()].to_string();
        let mut visit = NotebookVisit {
            client: client_for(portal, host),
            origin,
            cookies: BTreeMap::new(),
        };
        let redeemed = visit.client.get(launch).send().await.unwrap();
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
