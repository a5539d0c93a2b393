use std::net::IpAddr;

use ipnet::IpNet;

/// `server.trusted_proxies`: the reverse proxies whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// `10.0.0.0/8, 127.0.0.1, ::1`: CIDR blocks or single addresses, separated by commas.
    pub fn parse(text: &str) -> Result<Self, ()> {
        let nets = text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| match item.parse::<IpNet>() {
                Ok(net) => Ok(net.trunc()),
                Err(_) => item.parse::<IpAddr>().map(IpNet::from).map_err(|_| ()),
            })
            .collect::<Result<_, _>>()?;
        Ok(TrustedProxies(nets))
    }

    /// An IPv4-mapped IPv6 address (a dual-stack socket's view of IPv4) counts as IPv4.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.0.iter().any(|net| net.contains(&address))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn blocks_and_single_addresses_parse_and_match() {
        let trusted = TrustedProxies::parse(" 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32,").unwrap();
        assert!(trusted.contains(ip("10.200.0.1")));
        assert!(trusted.contains(ip("::ffff:10.1.2.3")));
        assert!(trusted.contains(ip("192.0.2.7")));
        assert!(!trusted.contains(ip("192.0.2.8")));
        assert!(trusted.contains(ip("2001:db8:ffff::1")));
        assert!(!trusted.contains(ip("11.0.0.1")));
        assert!(TrustedProxies::parse("").unwrap().is_empty());
    }

    #[test]
    fn anything_else_is_refused() {
        for bad in [
            "10.0.0.0/33",
            "proxy.example",
            "10.0.0.0/8; 127.0.0.1",
            "10.0.0",
            "*",
        ] {
            assert_eq!(TrustedProxies::parse(bad), Err(()), "{bad}");
        }
    }
}
