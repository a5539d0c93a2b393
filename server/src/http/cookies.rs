//! Reading cookies from a request's `Cookie` headers.

use axum::http::{header, HeaderMap};

/// Every non-empty value of the cookie `name`, in the order the browser sent them. A
/// browser sends several when cookies of one name exist for different domains or paths.
pub fn values(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(k, v)| *k == name && !v.is_empty())
        .map(|(_, v)| v.to_string())
        .collect()
}
