//! Values that are checked once, when the configuration is read, and trusted after.

use std::fmt;

/// `server.public_url`: `http(s)://host[:port]` and nothing more (no path, query,
/// fragment or credentials), without a trailing `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(String);

impl PublicUrl {
    pub fn parse(text: &str) -> Result<PublicUrl, ()> {
        let text = text.trim().trim_end_matches('/');
        let url = url::Url::parse(text).map_err(|_| ())?;
        // Literally lower-case http:// or https://: the cookie rules read the prefix as written.
        let origin = (text.starts_with("http://") || text.starts_with("https://"))
            && url.host_str().is_some_and(|h| !h.is_empty())
            && url.path() == "/"
            && !text.ends_with('/')
            && url.query().is_none()
            && url.fragment().is_none()
            && url.username().is_empty()
            && url.password().is_none()
            && !text.contains(' ');
        if origin {
            Ok(PublicUrl(text.to_string()))
        } else {
            Err(())
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_https(&self) -> bool {
        self.0.starts_with("https://")
    }
}

impl fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `server.notebook_domain`: a lower-case DNS name with at least two labels, no trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotebookDomain(String);

impl NotebookDomain {
    pub fn parse(text: &str) -> Result<NotebookDomain, ()> {
        let v = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
        };
        if v.len() > 200 || !v.contains('.') || !v.split('.').all(label_ok) {
            return Err(());
        }
        Ok(NotebookDomain(v))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for NotebookDomain {
    fn default() -> Self {
        NotebookDomain("nb.localhost".to_string())
    }
}

impl fmt::Display for NotebookDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::{NotebookDomain, PublicUrl};

    #[test]
    fn a_public_url_is_an_origin_and_nothing_more() {
        for good in ["https://gpu.example.edu", "http://127.0.0.1:3000", "https://[::1]:8443", "https://GPU.example.edu:443"] {
            assert!(PublicUrl::parse(good).is_ok(), "{good}");
        }
        assert_eq!(PublicUrl::parse("https://gpu.example.edu/").unwrap().as_str(), "https://gpu.example.edu", "a trailing / is dropped");
        for bad in [
            "gpu.example.edu",
            "HTTPS://gpu.example.edu",
            "https:gpu.example.edu",
            "https:/gpu.example.edu",
            "https:\\\\gpu.example.edu",
            "ftp://gpu.example.edu",
            "javascript:alert(1)",
            "https://",
            "https://gpu.example.edu/portal",
            "https://gpu.example.edu?next=evil",
            "https://gpu.example.edu#top",
            "https://evil.example@gpu.example.edu",
            "https://user:pw@gpu.example.edu",
            "https://gpu example.edu",
            "https://gpu.example.edu:99999",
        ] {
            assert!(PublicUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_notebook_domain_is_a_dns_name_of_two_labels_or_more() {
        assert_eq!(NotebookDomain::parse(" NB.Example.edu. ").unwrap().as_str(), "nb.example.edu");
        for bad in ["localhost", "nb..example.edu", "-nb.example.edu", "nb_x.example.edu", "nb.example.edu/x", ""] {
            assert!(NotebookDomain::parse(bad).is_err(), "{bad}");
        }
    }
}
