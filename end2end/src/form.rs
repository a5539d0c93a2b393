//! Talking to the portal the way a browser form does, for tests and benchmarks.

/// `application/x-www-form-urlencoded` escaping of one value.
pub fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%' && i + 2 < bytes.len() + 1)
            .then(|| {
                text.get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            })
            .flatten();
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A client that does not follow redirects, so `Set-Cookie` on them can be read.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// POSTs a form body to `/api/FUNCTION` from the portal's own origin.
/// The body of a GET of `url` with the login cookie `cookie`.
pub async fn get_text(url: &str, cookie: &str) -> String {
    let resp = client().get(url).header("cookie", cookie).send().await.expect("GET answered");
    resp.text().await.expect("a body")
}

pub async fn post(
    client: &reqwest::Client,
    url: &str,
    cookie: Option<&str>,
    function: &str,
    body: String,
) -> reqwest::Response {
    let mut request = client
        .post(format!("{url}/api/{function}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", url)
        .timeout(std::time::Duration::from_secs(1800))
        .body(body);
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.send().await.expect("the portal answers")
}

/// Signs in; the `name=value` of the session cookie, or None when refused.
pub async fn sign_in(
    client: &reqwest::Client,
    url: &str,
    user: &str,
    password: &str,
) -> Option<String> {
    let body = format!(
        "username={}&password={}",
        urlencode(user),
        urlencode(password)
    );
    let resp = post(client, url, None, "login", body).await;
    resp.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("slicehub_session=") && !v.starts_with("slicehub_session=;"))
        .map(|v| v.split(';').next().unwrap_or_default().to_string())
}
