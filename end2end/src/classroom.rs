//! A portal set up for a class: simulated GPUs, an administrator, course CS-101 (course
//! id 1) and students signed in, for the tests and benchmarks that launch sessions.

use std::path::Path;

use crate::form::{base64, client, post, sign_in, urlencode};
use crate::Portal;

pub const ADMIN_PASSWORD: &str = "classroom-admin-password";
pub const COURSE: &str = "CS-101";

pub struct Classroom {
    pub portal: Portal,
    /// The administrator's session cookie.
    pub admin: String,
}

/// Every student's password.
pub fn password_of(username: &str) -> String {
    format!("{username}-password-1")
}

impl Classroom {
    /// One simulated H100-80GB and 1 GiB of memory per memory slice; `env` adds or
    /// overrides `SLICEHUB_*` settings.
    pub async fn start(bin: &Path, env: &[(&str, &str)]) -> Classroom {
        let mut all = vec![
            ("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("SLICEHUB_GPU_BACKEND", "simulated"),
            ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB"),
            ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "1024"),
        ];
        all.retain(|(k, _)| !env.iter().any(|(e, _)| e == k));
        all.extend_from_slice(env);
        let portal = Portal::start(bin, &all).await;
        portal.cli(&["course", "add", COURSE, "Deep Learning"], "");
        let admin = sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD)
            .await
            .expect("the administrator signs in");
        Classroom { portal, admin }
    }

    /// Creates the accounts (password from [`password_of`]), enrolls them in the course
    /// through a roster import, and signs each in: their session cookies, in order.
    pub async fn enroll(&self, usernames: &[&str]) -> Vec<String> {
        enroll(&self.portal.url, &self.admin, usernames, |args, stdin| {
            self.portal.cli(args, stdin);
        })
        .await
    }
}

/// [`Classroom::enroll`] on the portal at `url`, whose CLI `cli(args, stdin)` runs wherever
/// that portal lives (here, or in a container).
pub async fn enroll(
    url: &str,
    admin: &str,
    usernames: &[&str],
    cli: impl Fn(&[&str], &str),
) -> Vec<String> {
    let mut csv = String::from("username,display name,email\n");
    for user in usernames {
        cli(&["user", "add", user, "--password-stdin"], &format!("{}\n", password_of(user)));
        csv.push_str(&format!("{user},{user},\n"));
    }
    let body = format!("code={COURSE}&csv_base64={}", urlencode(&base64(csv.as_bytes())));
    let resp = post(&client(), url, Some(admin), "import_roster", body).await;
    assert!(resp.status().is_success(), "{}", resp.text().await.unwrap_or_default());
    let mut cookies = Vec::with_capacity(usernames.len());
    for user in usernames {
        let cookie = sign_in(&client(), url, user, &password_of(user))
            .await
            .unwrap_or_else(|| panic!("{user} signs in"));
        cookies.push(cookie);
    }
    cookies
}
