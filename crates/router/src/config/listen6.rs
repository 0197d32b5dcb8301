//! The IPv6 listeners beside the IPv4 ones: `[listen] tcp6` and `udp6`.
//!
//! NFD listens for TCP and UDP on `0.0.0.0` and `[::]`, port 6363, unless its `enable_v4` or
//! `enable_v6` is off. Here `tcp` and `udp` are the IPv4 listeners (empty: off, as
//! `enable_v4 no`) and `tcp6` and `udp6` the IPv6 ones: `"auto"` (the default) listens on
//! `[::]` with the IPv4 listener's port when that one is on the IPv4 wildcard, and on nothing
//! otherwise (a listener on a given IPv4 address, as tests use, gets no IPv6 twin); an empty
//! string turns it off (`enable_v6 no`); an IPv6 address listens there. The IPv6 sockets are
//! IPv6 only, as NFD's, so that they share the port with the IPv4 wildcard.

use std::net::{Ipv6Addr, SocketAddr};

use super::Listen;

/// The value that derives an IPv6 listener from the IPv4 one.
pub const AUTO: &str = "auto";

/// The IPv6 address `v6` (the value of `key`) names beside IPv4 listener `v4`; `None`: off.
fn resolve(key: &str, v6: &str, v4: &str) -> Result<Option<SocketAddr>, String> {
    if v6.is_empty() {
        return Ok(None);
    }
    if v6 == AUTO {
        let wildcard = v4.parse::<SocketAddr>().ok().filter(|a| match a {
            SocketAddr::V4(a) => a.ip().is_unspecified(),
            SocketAddr::V6(_) => false,
        });
        return Ok(wildcard.map(|a| SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), a.port())));
    }
    match v6.parse::<SocketAddr>() {
        Ok(a) if a.is_ipv6() => Ok(Some(a)),
        _ => Err(format!(
            "{key}: {v6:?} is not \"auto\", \"\" or an IPv6 address like [::]:6363"
        )),
    }
}

/// `auto`, an address `"auto"` derived, on the port the IPv4 listener bound (`v4_port`) when
/// it asked for any port (0): the twins share their port, as NFD's.
pub fn port_of(auto: SocketAddr, v4_port: Option<u16>) -> SocketAddr {
    match v4_port {
        Some(p) if auto.port() == 0 => SocketAddr::new(auto.ip(), p),
        _ => auto,
    }
}

impl Listen {
    /// Where the IPv6 TCP listener listens (`None`: off).
    pub fn tcp6_addr(&self) -> Result<Option<SocketAddr>, String> {
        resolve("listen.tcp6", &self.tcp6, &self.tcp)
    }

    /// Where the IPv6 UDP listener listens (`None`: off).
    pub fn udp6_addr(&self) -> Result<Option<SocketAddr>, String> {
        resolve("listen.udp6", &self.udp6, &self.udp)
    }

    /// Checks `tcp6` and `udp6`: one line naming the key on error.
    pub(super) fn validate_v6(&self) -> Result<(), String> {
        self.tcp6_addr()?;
        self.udp6_addr()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn addrs(toml: &str) -> (Option<String>, Option<String>) {
        let c = Config::from_toml(toml).unwrap();
        let s = |a: Option<std::net::SocketAddr>| a.map(|a| a.to_string());
        (
            s(c.listen.tcp6_addr().unwrap()),
            s(c.listen.udp6_addr().unwrap()),
        )
    }

    #[test]
    fn ipv6_listeners_follow_the_ipv4_wildcard_unless_set() {
        let both = Some("[::]:6363".to_string());
        assert_eq!(addrs(""), (both.clone(), both));
        let t = "[listen]\ntcp = \"0.0.0.0:7000\"\nudp = \"127.0.0.1:0\"\n";
        assert_eq!(addrs(t), (Some("[::]:7000".into()), None));
        let t = "[listen]\ntcp = \"\"\nudp6 = \"\"\n";
        assert_eq!(addrs(t), (None, None));
        let t = "[listen]\ntcp = \"\"\ntcp6 = \"[::1]:0\"\nudp = \"\"\nudp6 = \"[::]:9\"\n";
        assert_eq!(addrs(t), (Some("[::1]:0".into()), Some("[::]:9".into())));
        for (bad, key) in [
            ("[listen]\ntcp6 = \"127.0.0.1:1\"\n", "listen.tcp6"),
            ("[listen]\nudp6 = \"yes\"\n", "listen.udp6"),
        ] {
            let e = Config::from_toml(bad)
                .and_then(|c| c.validate())
                .unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
    }
}
