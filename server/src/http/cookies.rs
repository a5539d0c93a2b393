//! Reading cookies from a request's `Cookie` headers.

use axum::http::{header, HeaderMap};

/// Every non-empty value of the cookie `name`, in the order the browser sent them. A
/// browser sends several when cookies of one name exist for different domains or paths.
pub fn values(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .filter(|c| c.name() == name && !c.value().is_empty())
        .map(|c| c.value().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn every_value_of_the_name_in_order_and_nothing_else() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1; slicehub_session=first; b=2"));
        headers.append(header::COOKIE, HeaderValue::from_static("slicehub_session=; junk; slicehub_session=second"));
        headers.append(header::COOKIE, HeaderValue::from_static("x_slicehub_session=not-it; slicehub_session_x=nor-this"));
        assert_eq!(values(&headers, "slicehub_session"), vec!["first".to_string(), "second".to_string()]);
        assert!(values(&headers, "missing").is_empty());
    }

    #[test]
    fn the_portals_cookies_are_http_only_lax_site_wide_and_secure_over_https() {
        let set = slicehub_app::api::ssr::cookie_header("slicehub_launch", "n0nce", 600, true);
        for attribute in ["slicehub_launch=n0nce", "HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=600", "Secure"] {
            assert!(set.split("; ").any(|a| a == attribute), "{attribute} in {set}");
        }
        let plain = slicehub_app::api::ssr::cookie_header("slicehub_launch", "", 0, false);
        assert!(plain.contains("Max-Age=0") && !plain.contains("Secure"), "{plain}");
    }
}
