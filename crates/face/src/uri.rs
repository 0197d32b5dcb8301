//! Face URIs: `unix:///path`, `tcp://host[:port]`, `udp://host[:port]` (and `tcp4`, `tcp6`,
//! `udp4`, `udp6`, which admit one address family), as NFD and ndn-cxx write them.
//!
//! One reading for every caller: the router's static faces and `faces/create`, the client's
//! transport, and the URIs the face table gives its faces ([`FaceUri::udp`], [`FaceUri::tcp`]).
//! Surrounding whitespace is ignored and the scheme is case-insensitive; trailing `/`s after a
//! `tcp`/`udp` authority are dropped, and anything else after it is refused; an IPv6 address
//! goes in brackets; the port is 1 to 65535 and defaults to [`DEFAULT_PORT`]; a Unix path is
//! absolute (`unix://` alone means [`DEFAULT_UNIX_PATH`]). Parsing never resolves a name:
//! [`FaceUri::socket_addrs`] does.

use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::str::FromStr;

/// NDN's TCP and UDP port.
pub const DEFAULT_PORT: u16 = 6363;

/// NFD's Unix socket on Linux: where an application finds its forwarder by default.
pub const DEFAULT_UNIX_PATH: &str = "/run/nfd/nfd.sock";

/// Which address family a `tcp`/`udp` URI may resolve to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `tcp://`, `udp://`: either.
    Any,
    /// `tcp4://`, `udp4://`: IPv4 only.
    V4,
    /// `tcp6://`, `udp6://`: IPv6 only.
    V6,
}

impl Family {
    fn suffix(self) -> &'static str {
        match self {
            Family::Any => "",
            Family::V4 => "4",
            Family::V6 => "6",
        }
    }

    /// Does an address of this family qualify?
    pub fn admits(self, a: &SocketAddr) -> bool {
        match self {
            Family::Any => true,
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        }
    }

    fn of(a: &SocketAddr) -> Family {
        match a {
            SocketAddr::V4(_) => Family::V4,
            SocketAddr::V6(_) => Family::V6,
        }
    }
}

/// A parsed face URI.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FaceUri {
    /// `unix:///path/to/socket`.
    Unix(PathBuf),
    /// `tcp[46]://host[:port]`.
    Tcp {
        /// Host name or address (IPv6 without brackets).
        host: String,
        /// Port (default 6363).
        port: u16,
        /// Address family.
        family: Family,
    },
    /// `udp[46]://host[:port]`.
    Udp {
        /// Host name or address (IPv6 without brackets).
        host: String,
        /// Port (default 6363).
        port: u16,
        /// Address family.
        family: Family,
    },
}

impl Default for FaceUri {
    /// `unix:///run/nfd/nfd.sock`.
    fn default() -> Self {
        FaceUri::Unix(PathBuf::from(DEFAULT_UNIX_PATH))
    }
}

/// The host part of a socket address as a URI shows it (an IPv6 scope id after a `%`).
fn host_of(a: &SocketAddr) -> String {
    match a {
        SocketAddr::V6(v6) if v6.scope_id() != 0 => format!("{}%{}", v6.ip(), v6.scope_id()),
        _ => a.ip().to_string(),
    }
}

impl FaceUri {
    /// The canonical URI of a UDP endpoint: `udp4://a.b.c.d:port` or `udp6://[addr]:port`.
    pub fn udp(a: SocketAddr) -> FaceUri {
        FaceUri::Udp {
            host: host_of(&a),
            port: a.port(),
            family: Family::of(&a),
        }
    }

    /// The canonical URI of a TCP endpoint: `tcp4://a.b.c.d:port` or `tcp6://[addr]:port`.
    pub fn tcp(a: SocketAddr) -> FaceUri {
        FaceUri::Tcp {
            host: host_of(&a),
            port: a.port(),
            family: Family::of(&a),
        }
    }

    /// Parses a face URI (see the [module docs](self)).
    pub fn parse(s: &str) -> Result<FaceUri, UriError> {
        s.parse()
    }

    /// The socket addresses a `tcp`/`udp` URI resolves to (in resolver order, filtered by
    /// family); an error for a Unix URI or a name that does not resolve.
    pub fn socket_addrs(&self) -> Result<Vec<SocketAddr>, ResolveError> {
        let (host, port, family) = match self {
            FaceUri::Unix(_) => return Err(ResolveError::NotInet(self.to_string())),
            FaceUri::Tcp { host, port, family } | FaceUri::Udp { host, port, family } => {
                (host, *port, *family)
            }
        };
        let addrs: Vec<SocketAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|source| ResolveError::Lookup {
                host: host.clone(),
                source,
            })?
            .filter(|a| family.admits(a))
            .collect();
        if addrs.is_empty() {
            return Err(ResolveError::NoAddressOfFamily {
                host: host.clone(),
                uri: self.to_string(),
            });
        }
        Ok(addrs)
    }
}

impl fmt::Display for FaceUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (scheme, host, port, family) = match self {
            FaceUri::Unix(p) => return write!(f, "unix://{}", p.display()),
            FaceUri::Tcp { host, port, family } => ("tcp", host, port, family),
            FaceUri::Udp { host, port, family } => ("udp", host, port, family),
        };
        write!(f, "{scheme}{}://", family.suffix())?;
        if host.contains(':') {
            write!(f, "[{host}]:{port}")
        } else {
            write!(f, "{host}:{port}")
        }
    }
}

/// What is wrong with a face URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriErrorKind {
    /// No `SCHEME://`.
    NoScheme,
    /// A scheme other than unix, tcp, tcp4, tcp6, udp, udp4, udp6.
    UnsupportedScheme,
    /// A `unix` URI whose path is not absolute.
    RelativeUnixPath,
    /// A path after a `tcp`/`udp` authority.
    Path,
    /// `[` without `]`.
    UnclosedBracket,
    /// Something other than `:port` after `]`.
    JunkAfterBracket,
    /// An IPv6 address without brackets.
    UnbracketedIpv6,
    /// No host.
    NoHost,
    /// A port that is not a number from 1 to 65535.
    BadPort,
}

/// A face URI that could not be parsed: the input, its scheme as written, and what is wrong.
///
/// Displayed in one line, in the words ndn-cxx applications use for their transport:
/// `bad transport URI 'ether://x': unsupported scheme 'ether' (expected ...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriError {
    input: String,
    scheme: Option<String>,
    kind: UriErrorKind,
}

impl UriError {
    /// What is wrong.
    pub fn kind(&self) -> &UriErrorKind {
        &self.kind
    }

    /// The scheme as written (`None` without `SCHEME://`).
    pub fn scheme(&self) -> Option<&str> {
        self.scheme.as_deref()
    }

    /// Why the URI was refused, without the URI itself.
    pub fn reason(&self) -> String {
        match self.kind {
            UriErrorKind::NoScheme => "expected SCHEME://...".into(),
            UriErrorKind::UnsupportedScheme => format!(
                "unsupported scheme '{}' (expected unix, tcp, tcp4, tcp6, udp, udp4 or udp6)",
                self.scheme.as_deref().unwrap_or("").to_ascii_lowercase()
            ),
            UriErrorKind::RelativeUnixPath => {
                "a unix URI needs an absolute path (unix:///path)".into()
            }
            UriErrorKind::Path => "a tcp or udp URI takes no path".into(),
            UriErrorKind::UnclosedBracket => "unclosed '['".into(),
            UriErrorKind::JunkAfterBracket => "junk after ']'".into(),
            UriErrorKind::UnbracketedIpv6 => "an IPv6 address must be in brackets".into(),
            UriErrorKind::NoHost => "no host".into(),
            UriErrorKind::BadPort => "port must be a number from 1 to 65535".into(),
        }
    }
}

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad transport URI '{}': {}", self.input, self.reason())
    }
}

impl std::error::Error for UriError {}

/// Why a face URI has no socket address.
#[derive(Debug)]
pub enum ResolveError {
    /// A Unix URI (shown here) has none.
    NotInet(String),
    /// The host name did not resolve.
    Lookup {
        /// The host.
        host: String,
        /// The resolver's error.
        source: io::Error,
    },
    /// The host has no address of the family the URI asks for.
    NoAddressOfFamily {
        /// The host.
        host: String,
        /// The URI.
        uri: String,
    },
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::NotInet(uri) => write!(f, "{uri} has no socket address"),
            ResolveError::Lookup { host, source } => write!(f, "cannot resolve {host}: {source}"),
            ResolveError::NoAddressOfFamily { host, uri } => {
                write!(f, "{host} has no address of the family {uri} asks for")
            }
        }
    }
}

impl std::error::Error for ResolveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ResolveError::Lookup { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Splits a `tcp`/`udp` authority into host and port (`None`: the default).
fn host_port(authority: &str) -> Result<(&str, Option<&str>), UriErrorKind> {
    if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or(UriErrorKind::UnclosedBracket)?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or(UriErrorKind::JunkAfterBracket)?),
        };
        return Ok((h, port));
    }
    match authority.rsplit_once(':') {
        Some((h, _)) if h.contains(':') => Err(UriErrorKind::UnbracketedIpv6),
        Some((h, p)) => Ok((h, Some(p))),
        None => Ok((authority, None)),
    }
}

/// Parses the part after `SCHEME://` for a lowercase `scheme`.
fn parse_rest(scheme: &str, rest: &str) -> Result<FaceUri, UriErrorKind> {
    let (is_tcp, family) = match scheme {
        "unix" => {
            if rest.is_empty() {
                return Ok(FaceUri::default());
            }
            if !rest.starts_with('/') {
                return Err(UriErrorKind::RelativeUnixPath);
            }
            return Ok(FaceUri::Unix(PathBuf::from(rest)));
        }
        "tcp" => (true, Family::Any),
        "tcp4" => (true, Family::V4),
        "tcp6" => (true, Family::V6),
        "udp" => (false, Family::Any),
        "udp4" => (false, Family::V4),
        "udp6" => (false, Family::V6),
        _ => return Err(UriErrorKind::UnsupportedScheme),
    };
    let authority = rest.trim_end_matches('/');
    if authority.contains('/') {
        return Err(UriErrorKind::Path);
    }
    let (host, port) = host_port(authority)?;
    if host.is_empty() {
        return Err(UriErrorKind::NoHost);
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(p) if p != 0 => p,
            _ => return Err(UriErrorKind::BadPort),
        },
    };
    let host = host.to_owned();
    Ok(if is_tcp {
        FaceUri::Tcp { host, port, family }
    } else {
        FaceUri::Udp { host, port, family }
    })
}

impl FromStr for FaceUri {
    type Err = UriError;

    fn from_str(s: &str) -> Result<Self, UriError> {
        let s = s.trim();
        let error = |scheme: Option<&str>, kind| UriError {
            input: s.to_owned(),
            scheme: scheme.map(str::to_owned),
            kind,
        };
        let (scheme, rest) = s
            .split_once("://")
            .ok_or_else(|| error(None, UriErrorKind::NoScheme))?;
        parse_rest(&scheme.to_ascii_lowercase(), rest).map_err(|k| error(Some(scheme), k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> FaceUri {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn udp(host: &str, port: u16, family: Family) -> FaceUri {
        FaceUri::Udp {
            host: host.into(),
            port,
            family,
        }
    }

    fn tcp(host: &str, port: u16, family: Family) -> FaceUri {
        FaceUri::Tcp {
            host: host.into(),
            port,
            family,
        }
    }

    /// Everything the router's configuration, its `faces/create` and the client's transport
    /// accepted.
    #[test]
    fn accepts_every_scheme_and_form() {
        for (s, want) in [
            ("udp4://127.0.0.1:6364", udp("127.0.0.1", 6364, Family::V4)),
            ("tcp://127.0.0.1", tcp("127.0.0.1", 6363, Family::Any)),
            ("udp6://[::1]:7", udp("::1", 7, Family::V6)),
            ("udp://[::1]", udp("::1", 6363, Family::Any)),
            ("udp://localhost:6363/", udp("localhost", 6363, Family::Any)),
            ("udp4://10.0.0.1:1//", udp("10.0.0.1", 1, Family::V4)),
            ("tcp://localhost", tcp("localhost", 6363, Family::Any)),
            ("tcp4://127.0.0.1:7000/", tcp("127.0.0.1", 7000, Family::V4)),
            ("tcp6://[fe80::1]:65535", tcp("fe80::1", 65535, Family::V6)),
            ("UDP://h", udp("h", 6363, Family::Any)),
            ("  Tcp6://[::1]:9 \n", tcp("::1", 9, Family::V6)),
            ("unix:///tmp/x.sock", FaceUri::Unix("/tmp/x.sock".into())),
            ("unix:///tmp/x.sock/", FaceUri::Unix("/tmp/x.sock/".into())),
            ("unix://", FaceUri::default()),
        ] {
            assert_eq!(p(s), want, "{s}");
            assert_eq!(FaceUri::parse(s).unwrap(), want, "{s}");
        }
        assert_eq!(FaceUri::default().to_string(), "unix:///run/nfd/nfd.sock");
    }

    #[test]
    fn rejects_with_the_reason_and_the_scheme_as_written() {
        for (s, kind, why) in [
            ("localhost:6363", UriErrorKind::NoScheme, "SCHEME://"),
            (
                "Ether://x",
                UriErrorKind::UnsupportedScheme,
                "unsupported scheme 'ether' (expected unix, tcp, tcp4, tcp6, udp, udp4 or udp6)",
            ),
            (
                "unix://relative",
                UriErrorKind::RelativeUnixPath,
                "absolute path",
            ),
            ("tcp://", UriErrorKind::NoHost, "no host"),
            ("udp://:6363", UriErrorKind::NoHost, "no host"),
            ("tcp://h:0", UriErrorKind::BadPort, "port"),
            ("tcp://h:", UriErrorKind::BadPort, "port"),
            ("tcp://h:99999", UriErrorKind::BadPort, "port"),
            ("tcp://h:x", UriErrorKind::BadPort, "port"),
            ("tcp://::1", UriErrorKind::UnbracketedIpv6, "brackets"),
            ("udp://h:1:2", UriErrorKind::UnbracketedIpv6, "brackets"),
            ("tcp://[::1", UriErrorKind::UnclosedBracket, "unclosed"),
            ("udp://[::1]junk", UriErrorKind::JunkAfterBracket, "junk"),
            ("tcp://h/path", UriErrorKind::Path, "no path"),
        ] {
            let e = s.parse::<FaceUri>().unwrap_err();
            assert_eq!(e.kind(), &kind, "{s}");
            let text = e.to_string();
            assert!(text.contains(why), "{s}: {text}");
            assert!(
                text.starts_with(&format!("bad transport URI '{}': ", s.trim())),
                "{text}"
            );
            assert!(!text.contains('\n'));
            assert_eq!(e.scheme(), s.split_once("://").map(|x| x.0), "{s}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "unix:///run/nfd/nfd.sock",
            "tcp://example.net:6363",
            "tcp4://127.0.0.1:1",
            "udp6://[::1]:6363",
            "udp://h:2",
        ] {
            assert_eq!(p(s).to_string(), s);
            assert_eq!(p(&p(s).to_string()), p(s));
        }
        // Defaults are written out.
        assert_eq!(p("udp://h/").to_string(), "udp://h:6363");
    }

    /// The URIs the face table gives its faces: what `SocketAddr`'s display shows, after a
    /// scheme naming the family.
    #[test]
    fn canonical_uris_of_socket_addresses() {
        for a in ["127.0.0.1:6363", "[::1]:9", "[fe80::1%3]:7"] {
            let a: SocketAddr = a.parse().unwrap();
            let v = if a.is_ipv4() { 4 } else { 6 };
            assert_eq!(FaceUri::udp(a).to_string(), format!("udp{v}://{a}"));
            assert_eq!(FaceUri::tcp(a).to_string(), format!("tcp{v}://{a}"));
        }
        let a: SocketAddr = "[fe80::1%3]:7".parse().unwrap();
        assert_eq!(FaceUri::udp(a).to_string(), "udp6://[fe80::1%3]:7");
        let a: SocketAddr = "10.1.2.3:6363".parse().unwrap();
        assert_eq!(p(&FaceUri::tcp(a).to_string()), FaceUri::tcp(a));
        assert_eq!(p(&FaceUri::tcp(a).to_string()).socket_addrs().unwrap(), [a]);
    }

    #[test]
    fn socket_addrs_filter_by_family() {
        let a = p("tcp4://127.0.0.1:5").socket_addrs().unwrap();
        assert_eq!(a, vec!["127.0.0.1:5".parse().unwrap()]);
        let e = p("tcp6://127.0.0.1:5").socket_addrs().unwrap_err();
        assert!(matches!(e, ResolveError::NoAddressOfFamily { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "127.0.0.1 has no address of the family tcp6://127.0.0.1:5 asks for"
        );
        let e = p("unix:///x").socket_addrs().unwrap_err();
        assert_eq!(e.to_string(), "unix:///x has no socket address");
    }
}
