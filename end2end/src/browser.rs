use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};

use crate::{free_port, workspace_root};

/// Headless Debian Chromium driven through chromedriver.
pub struct Browser {
    pub client: Client,
    driver: Child,
}

impl Browser {
    pub async fn start() -> Browser {
        Browser::start_with(serde_json::json!({})).await
    }

    /// A browser that blocks third-party cookies, as Safari and Firefox do by default and
    /// Chrome does when asked (an LMS framing a tool keeps no cookie for it).
    pub async fn start_blocking_third_party_cookies() -> Browser {
        Browser::start_with(serde_json::json!({ "profile.cookie_controls_mode": 1, "profile.block_third_party_cookies": true })).await
    }

    async fn start_with(prefs: serde_json::Value) -> Browser {
        // Already installed by an earlier browser of this process: that is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (scripts/setup.sh --test installs Debian's chromium-driver)");
        let profile = tempfile::tempdir().expect("profile dir").keep();
        let caps = serde_json::json!({
            "goog:chromeOptions": {
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--window-size=1280,1400",
                    format!("--user-data-dir={}", profile.display()),
                ],
                "prefs": prefs
            },
            "goog:loggingPrefs": { "browser": "ALL" }
        });
        let caps = caps.as_object().expect("object").clone();
        let deadline = Instant::now() + Duration::from_secs(30);
        let client = loop {
            match ClientBuilder::rustls()
                .expect("rustls")
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(client) => break client,
                Err(e) if Instant::now() > deadline => panic!("chromedriver did not start: {e}"),
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        };
        Browser { client, driver }
    }

    /// Polls until `css` matches, up to 30 s.
    pub async fn wait_for(&self, css: &str) -> fantoccini::elements::Element {
        self.wait_for_within(css, Duration::from_secs(30)).await
    }

    /// Polls until `css` matches, up to `limit`; saves a screenshot named `failure` first
    /// when it never does.
    pub async fn wait_for_within(&self, css: &str, limit: Duration) -> fantoccini::elements::Element {
        match self
            .client
            .wait()
            .at_most(limit)
            .for_element(Locator::Css(css))
            .await
        {
            Ok(element) => element,
            Err(e) => {
                let shot = self.screenshot("failure").await;
                panic!("no element matched {css:?} within {limit:?} (screenshot {}): {e}", shot.display())
            }
        }
    }

    /// Types `text` into the first element matching `css` (waiting for it).
    pub async fn fill(&self, css: &str, text: &str) {
        self.wait_for(css)
            .await
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("typing into {css:?}: {e}"));
    }

    /// Empties the first field matching `css` (waiting for it), then types `text`.
    pub async fn replace(&self, css: &str, text: &str) {
        let field = self.wait_for(css).await;
        field.clear().await.unwrap_or_else(|e| panic!("clearing {css:?}: {e}"));
        field.send_keys(text).await.unwrap_or_else(|e| panic!("typing into {css:?}: {e}"));
    }

    /// Signs out through the header's button and waits for the sign-in form.
    pub async fn sign_out(&self) {
        self.click(".who button[type=submit]").await;
        self.wait_for("input[name=username]").await;
    }

    /// Clicks the first element matching `css` (waiting for it).
    pub async fn click(&self, css: &str) {
        self.click_within(css, Duration::from_secs(30)).await;
    }

    /// Clicks the first element matching `css` once it exists and takes clicks, up to
    /// `limit`: a page that is still laying out (JupyterLab behind its splash screen)
    /// answers "not interactable" or "click intercepted" for a while, and a re-render
    /// makes the found element stale.
    pub async fn click_within(&self, css: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let element = self.wait_for_within(css, limit).await;
            let error = match element.click().await {
                Ok(()) => return,
                Err(e) => e,
            };
            let transient = matches!(
                &error,
                fantoccini::error::CmdError::Standard(w) if matches!(
                    w.error,
                    fantoccini::error::ErrorStatus::ElementNotInteractable
                        | fantoccini::error::ErrorStatus::ElementClickIntercepted
                        | fantoccini::error::ErrorStatus::StaleElementReference
                )
            );
            if !transient || Instant::now() > deadline {
                let shot = self.screenshot("failure").await;
                panic!("clicking {css:?}: {error} (screenshot {})", shot.display());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits until `css` holds text containing `needle` (ignoring case, as CSS may
    /// upper-case it), up to 20 s; saves a screenshot named `failure` before giving up.
    pub async fn wait_text(&self, css: &str, needle: &str) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(el) = self.client.find(Locator::Css(css)).await {
                let text = el.text().await.unwrap_or_default();
                if text.to_lowercase().contains(&needle.to_lowercase()) {
                    return text;
                }
            }
            if std::time::Instant::now() > deadline {
                let shot = self.screenshot("failure").await;
                panic!(
                    "{css:?} never showed {needle:?} (screenshot {})",
                    shot.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Signs in through the portal's login page and waits for the signed-in header.
    pub async fn sign_in(&self, portal_url: &str, username: &str, password: &str) {
        self.open(&format!("{portal_url}/login")).await;
        self.fill("input[name=username]", username).await;
        self.fill("input[name=password]", password).await;
        self.click("form button[type=submit]").await;
        self.wait_for(".who").await;
    }

    /// Opens `url` and waits for hydration. Fails on any script error or panic the page
    /// before it logged, and on any this page logs while it starts.
    pub async fn open(&self, url: &str) {
        self.assert_no_console_errors("before opening").await;
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("opening {url}: {e}"));
        self.wait_hydrated().await;
        self.assert_no_console_errors(url).await;
    }

    /// The script errors and panics the portal's pages logged since the last call: every
    /// `console.error` and uncaught exception, not failed requests (a 404 page's own status
    /// is a network entry), nor what JupyterLab logs on a notebook's host.
    pub async fn console_errors(&self) -> Vec<String> {
        let entries = self
            .client
            .issue_cmd(BrowserLog)
            .await
            .unwrap_or_else(|e| panic!("reading the browser's console log: {e}"));
        entries
            .as_array()
            .into_iter()
            .flatten()
            .filter(|entry| entry["level"] == "SEVERE" && entry["source"] != "network")
            .filter_map(|entry| entry["message"].as_str())
            .filter(|message| !message.split_whitespace().next().unwrap_or("").contains(".nb.localhost"))
            .map(String::from)
            .collect()
    }

    /// Panics with the console's errors if the portal's pages logged any.
    pub async fn assert_no_console_errors(&self, context: &str) {
        let errors = self.console_errors().await;
        if !errors.is_empty() {
            let shot = self.screenshot("failure").await;
            panic!(
                "the browser console logged errors ({context}; screenshot {}):\n{}",
                shot.display(),
                errors.join("\n")
            );
        }
    }

    /// Runs `command` as a job in `image` from the sessions page's launch card.
    pub async fn run_job(&self, image: &str, command: &str) {
        self.click(&format!("form.launch-job option[value='{image}']")).await;
        self.fill("form.launch-job input[name=command]", command).await;
        self.click("form.launch-job button[type=submit]").await;
    }

    /// Waits until the wasm bundle has hydrated the page.
    pub async fn wait_hydrated(&self) {
        self.wait_for(".app[data-hydrated=\"true\"]").await;
    }

    /// Saves a PNG under target/screenshots/ and returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("screenshot");
        let dir = workspace_root().join("target/screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write screenshot");
        path
    }

    /// Screenshots at each of [`crate::WIDTHS`] (`NAME-320`, `NAME-390`, `NAME-1280`), then
    /// restores the desktop width.
    pub async fn screenshot_widths(&self, name: &str) {
        for width in crate::WIDTHS {
            self.client.set_window_size(width, 1400).await.expect("window size");
            tokio::time::sleep(Duration::from_millis(300)).await;
            self.screenshot(&format!("{name}-{width}")).await;
        }
    }

    /// Ends the browser; fails first if the last page logged a script error or panic.
    pub async fn close(mut self) {
        self.assert_no_console_errors("at the end of the test").await;
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// chromedriver's console log (`goog:loggingPrefs` turns it on): each call returns and
/// clears what was logged since the last one.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_string()))
    }
}
