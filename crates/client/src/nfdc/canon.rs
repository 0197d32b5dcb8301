//! Face URIs made canonical as nfdc (ndn-cxx 0.9's `FaceUri::canonize`) makes them, with its
//! words for every refusal.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use crate::transport::TransportUri;

/// A face URI made canonical as nfdc does: `udp`, `tcp` (and their `4`/`6` forms) become
/// `udp4://ADDR:PORT` (or 6) with the address given or the first one the host name resolves
/// to (of the family the scheme names), the port given (0 included) or 6363 (56363 for a
/// multicast UDP address); `ether` and `dev` URIs are passed on for the forwarder to judge;
/// any other scheme is "scheme not supported". The error is ndn-cxx's reason.
pub fn canonical_face_uri(s: &str) -> Result<String, String> {
    let (scheme, rest) = s.split_once("://").ok_or("scheme not supported")?;
    let scheme = scheme.to_ascii_lowercase();
    let (base, family) = match scheme.as_str() {
        "udp" | "tcp" => (scheme.as_str(), None),
        "udp4" | "tcp4" => (&scheme[..3], Some(4)),
        "udp6" | "tcp6" => (&scheme[..3], Some(6)),
        "ether" | "dev" => return Ok(s.to_owned()),
        _ => return Err("scheme not supported".into()),
    };
    let (host, port) = split_host_port(rest).ok_or_else(|| format!("cannot canonize {s}"))?;
    let ip = match host.parse::<IpAddr>() {
        Ok(ip) if family.is_some_and(|f| f != version(ip)) => return Err("IPv4/v6 mismatch".into()),
        Ok(ip) => ip,
        Err(_) => resolve(host, family)?,
    };
    if base == "tcp" && ip.is_multicast() {
        return Err("cannot use multicast address".into());
    }
    let port = match port {
        None if ip.is_multicast() => 56363,
        None => 6363,
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| format!("invalid port number '{p}'"))?,
    };
    let a = SocketAddr::new(ip, port);
    Ok(if base == "tcp" {
        TransportUri::tcp(a)
    } else {
        TransportUri::udp(a)
    }
    .to_string())
}

fn version(ip: IpAddr) -> u8 {
    if ip.is_ipv4() {
        4
    } else {
        6
    }
}

/// `host[:port]` or `[v6]:port`; `None` for a path, an unclosed bracket or no host.
fn split_host_port(rest: &str) -> Option<(&str, Option<&str>)> {
    if rest.contains('/') {
        return None;
    }
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match rest.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    (!host.is_empty()).then_some((host, port))
}

/// The first address of `host` of the family asked for, or ndn-cxx's reason.
fn resolve(host: &str, family: Option<u8>) -> Result<IpAddr, String> {
    let addrs = (host, 0).to_socket_addrs().map_err(|e| {
        let reason = if e.to_string().contains("not known") {
            "Host not found (authoritative)"
        } else {
            "Host not found (non-authoritative), try again later"
        };
        format!("Hostname could not be resolved: {reason}")
    })?;
    addrs
        .map(|a| a.ip())
        .find(|ip| family.is_none_or(|f| f == version(*ip)))
        .ok_or_else(|| "No endpoints match the specified address selector".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_uris_are_canonized_as_ndn_cxx_does() {
        let ok = |s: &str| canonical_face_uri(s).unwrap();
        assert_eq!(ok("udp://127.0.0.1"), "udp4://127.0.0.1:6363");
        assert_eq!(ok("udp4://127.0.0.1:0"), "udp4://127.0.0.1:0");
        assert_eq!(ok("udp4://224.0.23.170"), "udp4://224.0.23.170:56363");
        assert_eq!(ok("tcp6://[::1]:7000"), "tcp6://[::1]:7000");
        assert_eq!(ok("udp4://localhost:7000"), "udp4://127.0.0.1:7000");
        assert_eq!(
            ok("ether://[01:00:5e:00:17:aa]"),
            "ether://[01:00:5e:00:17:aa]"
        );
        let err = |s: &str| canonical_face_uri(s).unwrap_err();
        assert_eq!(err("ws://127.0.0.1:9696"), "scheme not supported");
        assert_eq!(err("unix:///run/nfd.sock"), "scheme not supported");
        assert_eq!(err("udp4://127.0.0.1:99999"), "invalid port number '99999'");
        assert_eq!(err("udp6://127.0.0.1"), "IPv4/v6 mismatch");
        assert_eq!(err("tcp4://224.0.23.170"), "cannot use multicast address");
        assert_eq!(
            err("udp4://no-such-host.invalid:6363"),
            "Hostname could not be resolved: Host not found (authoritative)"
        );
    }
}
