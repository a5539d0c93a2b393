//! Combinations of settings that make a deployment unsafe, found before serving: one that
//! cannot work is refused, one that weakens the notebooks' isolation is warned about.

use slicehub_core::config::Config;
use slicehub_core::CoreError;

/// Refuses what cannot work; returns the warnings to log.
pub fn check(config: &Config) -> Result<Vec<String>, CoreError> {
    let public_url = config.public_url();
    let portal_host = host_of(&public_url);
    let domain = config.server.notebook_domain.as_str();
    if is_loopback_name(domain) && !is_loopback_name(&portal_host) {
        return Err(CoreError::Config(format!(
            "server.notebook_domain is {domain}, but browsers reach the portal at {public_url}: a notebook link would send \
             each student to their own machine. Set server.notebook_domain to a name whose wildcard (*.{domain}) resolves \
             to this portal, on a registrable domain of its own (see the README's deployment section)."
        )));
    }
    let mut warnings = Vec::new();
    // Both as the URL reader writes hosts (an internationalised name in punycode).
    let domain_host = host_of(&format!("http://{domain}"));
    if !is_loopback_name(domain) && registrable(&domain_host) == registrable(&portal_host) {
        warnings.push(format!(
            "server.notebook_domain {domain} shares the registrable domain {} with the portal: a notebook's scripts can set \
             cookies for every site under it. Use a registrable domain of its own for notebooks (e.g. example-notebooks.org).",
            registrable(domain)
        ));
    }
    if config.sign_in.header.user_header.is_some() && config.server.trusted_proxies.is_empty() {
        warnings.push(
            "header_sign_in.user_header is set but server.trusted_proxies is empty: the header is believed from no one, \
             so nobody signs in by it. Set server.trusted_proxies to the web server in front (docs/sign-in/web-server.md)."
                .to_string(),
        );
    }
    Ok(warnings)
}

/// The host of an `http(s)://host[:port][/…]` URL, lower-case, without brackets.
pub(crate) fn host_of(text: &str) -> String {
    let host = match url::Url::parse(text) {
        Ok(url) => url.host_str().unwrap_or_default().to_string(),
        Err(_) => String::new(),
    };
    host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

pub(crate) fn is_loopback_name(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The registrable domain (the part a cookie may be set for), approximated without the
/// public suffix list: the last two labels, or three under a two-letter country's
/// `ac`/`co`/`com`/`edu`/`gov`/`net`/`org` (example.ac.uk). Only a warning rests on it.
fn registrable(host: &str) -> String {
    let labels: Vec<&str> = host.split('.').filter(|l| !l.is_empty()).collect();
    let n = labels.len();
    let keep = if n >= 3
        && labels[n - 1].len() == 2
        && ["ac", "co", "com", "edu", "gov", "net", "org"].contains(&labels[n - 2])
    {
        3
    } else {
        2
    };
    labels[n.saturating_sub(keep)..].join(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use slicehub_core::config::{NotebookDomain, PublicUrl};

    fn config(public_url: &str, domain: &str) -> Config {
        let mut config = Config::default();
        config.server.public_url = PublicUrl::parse(public_url).ok();
        config.server.notebook_domain = NotebookDomain::parse(domain).unwrap();
        config
    }

    #[test]
    fn a_loopback_notebook_domain_behind_a_real_name_is_refused() {
        let refused = check(&config("https://gpu.example.edu", "nb.localhost")).unwrap_err();
        assert!(refused.to_string().contains("server.notebook_domain is nb.localhost"), "{refused}");
        assert!(check(&config("", "nb.localhost")).unwrap().is_empty(), "the default on loopback is fine");
        assert!(check(&config("http://127.0.0.1:3000", "nb.localhost")).unwrap().is_empty());
    }

    #[test]
    fn a_notebook_domain_under_the_portals_registrable_domain_is_warned_about() {
        let warnings = check(&config("https://gpu.example.edu", "nb.gpu.example.edu")).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("example.edu"), "{warnings:?}");
        assert_eq!(check(&config("https://gpu.cs.ox.ac.uk", "nb.ox.ac.uk")).unwrap().len(), 1);
        assert!(check(&config("https://gpu.example.edu", "example-notebooks.org")).unwrap().is_empty());
        assert!(check(&config("https://gpu.ox.ac.uk", "nb.cam.ac.uk")).unwrap().is_empty());
    }

    #[test]
    fn hosts_are_read_from_urls() {
        assert_eq!(host_of("https://GPU.example.edu:8443/portal"), "gpu.example.edu");
        assert_eq!(host_of("http://[::1]:3000"), "::1");
        assert!(is_loopback_name(&host_of("http://[::1]:3000")));
    }
}
