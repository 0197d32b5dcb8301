//! Face URIs as NFD's `faces/create` judges them (ndn-cxx's `FaceUri`): whether one parses, and
//! whether it is canonical.
//!
//! A URI parses when it is `<scheme>://<authority>[/<path>]` with a scheme of word characters
//! (`udp4`, `tcp6`, `ether`, `udp6+dev`, ...). It is canonical, for the schemes that have a
//! canonical form, when:
//! - `udp4`/`udp6`/`tcp4`/`tcp6`: the host is an IP address of the scheme's family, written as
//!   the address prints (IPv6 in brackets, compressed, lower case), with a port (a number a
//!   port can be) and no path (TCP: not a multicast address);
//! - `ether`: the host is a MAC address in brackets, six lower-case two-digit groups;
//! - `dev`: a host (an interface name), no port, no path.
//!
//! Any other scheme has no canonical form (so `udp://`, `tcp://` with a host name, or `unix://`
//! are refused, as NFD refuses them: a client canonizes first).

use std::net::{IpAddr, SocketAddr};

/// A face URI, split as ndn-cxx splits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Uri<'a> {
    pub scheme: &'a str,
    host: &'a str,
    port: Option<&'a str>,
    path: &'a str,
}

/// Whether every character is a word character (`[A-Za-z0-9_]`).
fn word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Splits an authority into host and port as ndn-cxx does: `[v6]`, `[v6]:port`, `host`,
/// `host:port` (a host without `:`).
fn host_port(authority: &str) -> Option<(&str, Option<&str>)> {
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            p => p
                .strip_prefix(':')
                .filter(|p| digits(p))
                .map(|p| (host, Some(p))),
        };
    }
    match authority.split_once(':') {
        None if !authority.is_empty() => Some((authority, None)),
        Some((h, p)) if !h.is_empty() && !p.contains(':') && digits(p) => Some((h, Some(p))),
        _ => None,
    }
}

impl<'a> Uri<'a> {
    /// Parses a face URI; `None` when it does not parse (NFD: 400 "Malformed command").
    pub fn parse(s: &'a str) -> Option<Uri<'a>> {
        let (scheme, rest) = s.split_once("://")?;
        let scheme_ok = match scheme.split_once('+') {
            Some((a, b)) => word(a) && word(b),
            None => word(scheme),
        };
        if !scheme_ok || rest.contains('?') {
            return None;
        }
        let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
        let (host, port) = match authority {
            "" => ("", None),
            a => host_port(a)?,
        };
        Some(Uri {
            scheme,
            host,
            port,
            path,
        })
    }

    /// The host (an IP address, a MAC address, an interface name), without brackets.
    pub fn host(&self) -> &'a str {
        self.host
    }

    /// The socket address of a canonical `udp4`/`udp6`/`tcp4`/`tcp6` URI.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        let ip: IpAddr = self.host.parse().ok()?;
        let port: u16 = self.port?.parse().ok()?;
        Some(SocketAddr::new(ip, port))
    }

    /// Whether the URI is canonical (see the [module docs](self)).
    pub fn is_canonical(&self) -> bool {
        let v4 = match self.scheme {
            "udp4" | "tcp4" => true,
            "udp6" | "tcp6" => false,
            "ether" => {
                return self.port.is_none() && self.path.is_empty() && canonical_mac(self.host)
            }
            "dev" => return !self.host.is_empty() && self.port.is_none() && self.path.is_empty(),
            _ => return false,
        };
        let Some(addr) = self.socket_addr().filter(|_| self.path.is_empty()) else {
            return false;
        };
        let ip = addr.ip();
        ip.is_ipv4() == v4
            && ip.to_string() == self.host
            && !(self.scheme.starts_with("tcp") && ip.is_multicast())
    }
}

/// Whether `host` is a MAC address as ndn-cxx prints one: six lower-case two-digit groups.
fn canonical_mac(host: &str) -> bool {
    let groups: Vec<&str> = host.split(':').collect();
    groups.len() == 6
        && groups.iter().all(|g| {
            g.len() == 2
                && g.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(s: &str) -> Option<bool> {
        Uri::parse(s).map(|u| u.is_canonical())
    }

    #[test]
    fn parses_as_ndn_cxx_face_uri() {
        let u = Uri::parse("udp4://192.0.2.1:6363").unwrap();
        assert_eq!(
            (u.scheme, u.host, u.port, u.path),
            ("udp4", "192.0.2.1", Some("6363"), "")
        );
        let u = Uri::parse("tcp6://[2001:db8::1]:6363").unwrap();
        assert_eq!((u.host, u.port), ("2001:db8::1", Some("6363")));
        let u = Uri::parse("unix:///run/nfd.sock").unwrap();
        assert_eq!((u.host, u.path), ("", "/run/nfd.sock"));
        assert_eq!(
            Uri::parse("udp6+dev://eth0:6363").unwrap().scheme,
            "udp6+dev"
        );
        for bad in [
            "192.0.2.1:6363",
            "udp4:/192.0.2.1",
            "://x",
            "udp-4://x",
            "udp4://[::1",
            "udp4://[::1]x",
            "udp4://::1:6363",
            "udp4://h:port",
            "udp4://h:6363?q",
        ] {
            assert_eq!(Uri::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn canonical_forms() {
        for yes in [
            "udp4://192.0.2.1:6363",
            "tcp4://127.0.0.1:1",
            "udp4://192.0.2.1:06363",
            "udp6://[2001:db8::1]:6363",
            "tcp6://[::1]:6363",
            "udp4://224.0.23.170:56363",
            "ether://[01:00:5e:00:17:aa]",
            "dev://eth0",
        ] {
            assert_eq!(canonical(yes), Some(true), "{yes}");
        }
        for no in [
            "udp://192.0.2.1:6363",
            "udp4://192.0.2.1",
            "udp4://localhost:6363",
            "udp4://[2001:db8::1]:6363",
            "udp6://192.0.2.1:6363",
            "udp6://[2001:DB8::1]:6363",
            "udp6://[2001:db8:0::1]:6363",
            "udp4://192.0.2.1:99999",
            "udp4://192.0.2.1:6363/path",
            "tcp4://224.0.23.170:6363",
            "ether://[01:00:5E:00:17:AA]",
            "dev://eth0:1",
            "unix:///run/nfd.sock",
            "fd://3",
        ] {
            assert_eq!(canonical(no), Some(false), "{no}");
        }
    }
}
