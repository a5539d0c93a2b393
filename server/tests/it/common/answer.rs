//! An HTTP answer as the sign-in tests read it: status, `Location`, every `Set-Cookie`,
//! the Content-Security-Policy and the body (a portal that never finishes its body fails
//! the test instead of hanging it).

use std::time::Duration;

use slicehub_end2end::form::client;

#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub location: String,
    pub set_cookies: Vec<String>,
    pub csp: String,
    pub body: String,
}

impl Answer {
    /// `name=value` of the cookie `name` set with a value.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.set_cookies
            .iter()
            .map(|c| c.split(';').next().unwrap_or_default().trim())
            .find(|pair| pair.starts_with(&format!("{name}=")) && pair.len() > name.len() + 1)
            .map(str::to_string)
    }

    /// Whether the cookie `name` is removed (set empty).
    pub fn clears(&self, name: &str) -> bool {
        self.set_cookies.iter().any(|c| c.starts_with(&format!("{name}=;")) || c == &format!("{name}="))
    }

    /// The full `Set-Cookie` line of cookie `name`.
    pub fn set_cookie_line(&self, name: &str) -> Option<&str> {
        self.set_cookies.iter().find(|c| c.starts_with(&format!("{name}="))).map(String::as_str)
    }

    /// The sources of the Content-Security-Policy's `frame-ancestors`.
    pub fn frame_ancestors(&self) -> Vec<String> {
        self.csp
            .split(';')
            .map(str::trim)
            .find_map(|d| d.strip_prefix("frame-ancestors "))
            .unwrap_or_else(|| panic!("frame-ancestors in {:?}", self.csp))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }
}

pub async fn answer_of(resp: reqwest::Response) -> Answer {
    let status = resp.status().as_u16();
    let header = |name: &str| resp.headers().get(name).and_then(|l| l.to_str().ok()).unwrap_or_default().to_string();
    let (location, csp) = (header("location"), header("content-security-policy"));
    let set_cookies = resp.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).map(str::to_string).collect();
    let body = tokio::time::timeout(Duration::from_secs(30), resp.text()).await.ok().and_then(Result::ok).unwrap_or_default();
    Answer { status, location, set_cookies, csp, body }
}

/// GET `url` with these cookies (`name=value` each).
pub async fn get(url: &str, cookies: &[&str]) -> Answer {
    let mut request = client().get(url).timeout(Duration::from_secs(60));
    if !cookies.is_empty() {
        request = request.header("cookie", cookies.join("; "));
    }
    answer_of(request.send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"))).await
}
