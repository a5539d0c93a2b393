//! Who sent a request: its TCP peer, unless that peer is a trusted reverse proxy
//! (`server.trusted_proxies`); then the right-most `X-Forwarded-For` address that is not
//! itself a trusted proxy. Entries left of that one were written by the client and are
//! never believed.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderMap;
use slicehub_core::config::TrustedProxies;

const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// Loopback when the request carries no peer (a router called without a socket).
pub fn of_request(request: &Request, trusted: &TrustedProxies) -> IpAddr {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    resolve(peer, request.headers(), trusted)
}

/// An entry that is not an address stops the walk: the last trusted hop reached is then
/// the client, as nothing further left can be vouched for.
pub fn resolve(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let mut client = peer.to_canonical();
    if !trusted.contains(client) {
        // A proxy on this host or network forwarding for others, untrusted: every client
        // is then the proxy, and one client's failed logins slow all of them.
        // Only a peer on this host: on a campus network any machine could send the header
        // and have the portal advise trusting it.
        if client.is_loopback()
            && headers.contains_key(X_FORWARDED_FOR)
            && slicehub_core::health::note_untrusted_forwarder(client)
        {
            tracing::warn!(
                peer = %client,
                "requests from {client} carry X-Forwarded-For, but server.trusted_proxies does not name it: every client behind it counts as {client} (one client's failed logins slow all of them); add it to server.trusted_proxies"
            );
        }
        return client;
    }
    let hops: Vec<Option<IpAddr>> = headers
        .get_all(X_FORWARDED_FOR)
        .iter()
        .flat_map(|line| match line.to_str() {
            Ok(text) => text.split(',').map(hop_address).collect(),
            Err(_) => vec![None],
        })
        .collect();
    for hop in hops.into_iter().rev() {
        let Some(address) = hop else { break };
        client = address;
        if !trusted.contains(address) {
            break;
        }
    }
    client
}

/// `192.0.2.1`, `2001:db8::1`, and the forms with a port some proxies write
/// (`192.0.2.1:5000`, `[2001:db8::1]:5000`).
fn hop_address(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    text.parse::<IpAddr>()
        .or_else(|_| text.parse::<SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn forwarded(lines: &[&[u8]]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(X_FORWARDED_FOR, HeaderValue::from_bytes(line).unwrap());
        }
        headers
    }

    fn proxies(list: &str) -> TrustedProxies {
        TrustedProxies::parse(list).unwrap()
    }

    #[test]
    fn a_peer_that_is_not_trusted_is_the_client_whatever_it_forwards() {
        let spoofed = forwarded(&[b"203.0.113.9"]);
        assert_eq!(
            resolve(ip("198.51.100.4"), &spoofed, &proxies("10.0.0.0/8")),
            ip("198.51.100.4")
        );
        assert_eq!(
            resolve(ip("10.0.0.2"), &spoofed, &TrustedProxies::default()),
            ip("10.0.0.2"),
            "no trusted proxies: the header is never read"
        );
    }

    #[test]
    fn the_right_most_untrusted_hop_is_the_client() {
        let trusted = proxies("10.0.0.0/8, 127.0.0.1");
        let chain = forwarded(&[b"203.0.113.9, 198.51.100.7", b"10.1.1.1"]);
        assert_eq!(
            resolve(ip("127.0.0.1"), &chain, &trusted),
            ip("198.51.100.7"),
            "two trusted proxies; the client made up 203.0.113.9"
        );
        let mapped = forwarded(&[b"::ffff:198.51.100.7"]);
        assert_eq!(
            resolve(ip("::ffff:10.0.0.5"), &mapped, &trusted),
            ip("198.51.100.7")
        );
        let v6 = forwarded(&[b"[2001:db8::7]:443"]);
        assert_eq!(resolve(ip("10.0.0.5"), &v6, &trusted), ip("2001:db8::7"));
    }

    #[test]
    fn a_chain_of_only_trusted_hops_ends_at_the_left_most() {
        let trusted = proxies("10.0.0.0/8");
        let internal = forwarded(&[b"10.9.9.9, 10.0.0.3"]);
        assert_eq!(resolve(ip("10.0.0.2"), &internal, &trusted), ip("10.9.9.9"));
        assert_eq!(
            resolve(ip("10.0.0.2"), &HeaderMap::new(), &trusted),
            ip("10.0.0.2"),
            "no header: the proxy itself"
        );
    }

    #[test]
    fn garbage_stops_at_the_last_trusted_hop() {
        let trusted = proxies("10.0.0.0/8");
        for junk in [
            &b"not-an-address"[..],
            b"unknown",
            b"",
            b"198.51.100.7, 10.0.0.3 extra",
            b"\xff\xfe",
        ] {
            assert_eq!(
                resolve(ip("10.0.0.2"), &forwarded(&[junk]), &trusted),
                ip("10.0.0.2"),
                "{}",
                String::from_utf8_lossy(junk)
            );
        }
        let junk_left = forwarded(&[b"garbage, 198.51.100.7"]);
        assert_eq!(
            resolve(ip("10.0.0.2"), &junk_left, &trusted),
            ip("198.51.100.7"),
            "what the client wrote left of its own address does not matter"
        );
    }
}
