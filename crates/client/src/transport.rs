//! Where the forwarder is: transport URIs and the ndn-cxx rules for finding one.
//!
//! Precedence, highest first (as ndn-cxx's `Face` does, with an explicit URI in front):
//! 1. an explicit URI (the `--transport` flag);
//! 2. the `NDN_CLIENT_TRANSPORT` environment variable, if set (an empty value means the default);
//! 3. the `transport=` line of the first `client.conf` that exists among
//!    `$HOME/.ndn/client.conf`, `/usr/local/etc/ndn/client.conf`, `/etc/ndn/client.conf` (only
//!    that first file is read; if it has no `transport` line, the default applies);
//! 4. [`DEFAULT_TRANSPORT`], `unix:///run/nfd/nfd.sock`.
//!
//! `client.conf` is an INI file: `key=value` lines, `;` or `#` comments, `[section]` headers;
//! `transport` is a top-level key.

use std::path::{Path, PathBuf};

/// A parsed transport URI: a face URI ([`face::uri`]: `unix://`, `tcp[46]://`, `udp[46]://`).
pub use face::uri::FaceUri as TransportUri;
pub use face::uri::{Family, DEFAULT_PORT, DEFAULT_UNIX_PATH};
use face::uri::{ResolveError, UriError};

use crate::error::{Error, Result};

/// The environment variable that overrides `client.conf`.
pub const ENV_VAR: &str = "NDN_CLIENT_TRANSPORT";

/// The transport used when nothing else says otherwise (NFD's Unix socket on Linux).
pub const DEFAULT_TRANSPORT: &str = "unix:///run/nfd/nfd.sock";

impl From<UriError> for Error {
    fn from(e: UriError) -> Self {
        Error::Config(e.to_string())
    }
}

impl From<ResolveError> for Error {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::Lookup { host, source } => {
                Error::io(format!("cannot resolve {host}"), source)
            }
            other => Error::Config(other.to_string()),
        }
    }
}

/// Where a resolved transport came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The explicit URI (`--transport`).
    Flag,
    /// The `NDN_CLIENT_TRANSPORT` environment variable.
    Env,
    /// A `client.conf` file.
    ConfigFile(PathBuf),
    /// [`DEFAULT_TRANSPORT`].
    Default,
}

/// The `client.conf` files ndn-cxx looks at, in order: `$HOME/.ndn/client.conf` (when `home` is
/// given), `/usr/local/etc/ndn/client.conf`, `/etc/ndn/client.conf`.
pub fn config_search_path(home: Option<&Path>) -> Vec<PathBuf> {
    let mut v = Vec::with_capacity(3);
    if let Some(h) = home {
        v.push(h.join(".ndn").join("client.conf"));
    }
    v.push(PathBuf::from("/usr/local/etc/ndn/client.conf"));
    v.push(PathBuf::from("/etc/ndn/client.conf"));
    v
}

/// The value of the top-level `transport` key of a `client.conf` text, if any.
///
/// Errors (naming the line) on a line that is neither blank, a comment, a section header nor
/// `key=value`, and on a repeated top-level `transport` key.
pub fn parse_client_conf(text: &str) -> core::result::Result<Option<String>, String> {
    let mut in_section = false;
    let mut found: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            if !line.ends_with(']') {
                return Err(format!("line {}: unclosed section header", i + 1));
            }
            in_section = true;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected key=value", i + 1));
        };
        if !in_section && key.trim() == "transport" {
            if found.is_some() {
                return Err(format!("line {}: duplicate key 'transport'", i + 1));
            }
            found = Some(value.trim().to_owned());
        }
    }
    Ok(found)
}

/// Resolves the transport from explicit inputs (see the [module docs](self) for the order).
///
/// `env` is the value of `NDN_CLIENT_TRANSPORT` if it is set; `config_paths` are the candidate
/// `client.conf` files in order (see [`config_search_path`]); only the first that exists is read.
pub fn resolve_from(
    flag: Option<&str>,
    env: Option<&str>,
    config_paths: &[PathBuf],
) -> Result<(TransportUri, Source)> {
    let parse_or_default = |s: &str| -> Result<TransportUri> {
        if s.trim().is_empty() {
            Ok(TransportUri::default())
        } else {
            Ok(s.parse()?)
        }
    };
    if let Some(f) = flag {
        return Ok((f.parse()?, Source::Flag));
    }
    if let Some(e) = env {
        let uri = parse_or_default(e).map_err(|err| Error::Config(format!("{ENV_VAR}: {err}")))?;
        return Ok((uri, Source::Env));
    }
    if let Some(path) = config_paths.iter().find(|p| p.is_file()) {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        let value = parse_client_conf(&text)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        return match value {
            Some(v) => {
                let uri = parse_or_default(&v)
                    .map_err(|err| Error::Config(format!("{}: {err}", path.display())))?;
                Ok((uri, Source::ConfigFile(path.clone())))
            }
            None => Ok((TransportUri::default(), Source::Default)),
        };
    }
    Ok((TransportUri::default(), Source::Default))
}

/// Resolves the transport from `flag`, this process's environment and the standard
/// `client.conf` locations.
pub fn resolve(flag: Option<&str>) -> Result<TransportUri> {
    let env = std::env::var_os(ENV_VAR).map(|v| v.to_string_lossy().into_owned());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let paths = config_search_path(home.as_deref());
    resolve_from(flag, env.as_deref(), &paths).map(|(u, _)| u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> TransportUri {
        s.parse().unwrap()
    }

    #[test]
    fn parses_every_scheme() {
        assert_eq!(
            p("unix:///tmp/x.sock"),
            TransportUri::Unix("/tmp/x.sock".into())
        );
        assert_eq!(p("unix://"), TransportUri::default());
        assert_eq!(
            p("tcp://localhost"),
            TransportUri::Tcp {
                host: "localhost".into(),
                port: 6363,
                family: Family::Any
            }
        );
        assert_eq!(
            p("tcp4://127.0.0.1:7000/"),
            TransportUri::Tcp {
                host: "127.0.0.1".into(),
                port: 7000,
                family: Family::V4
            }
        );
        assert_eq!(
            p("udp6://[::1]:9"),
            TransportUri::Udp {
                host: "::1".into(),
                port: 9,
                family: Family::V6
            }
        );
        assert_eq!(
            p("UDP://h"),
            TransportUri::Udp {
                host: "h".into(),
                port: 6363,
                family: Family::Any
            }
        );
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
    }

    #[test]
    fn rejects_bad_uris_with_the_reason() {
        for (s, why) in [
            ("localhost:6363", "SCHEME://"),
            ("ether://x", "unsupported scheme 'ether'"),
            ("unix://relative", "absolute path"),
            ("tcp://", "no host"),
            ("tcp://h:0", "port"),
            ("tcp://h:99999", "port"),
            ("tcp://h:x", "port"),
            ("tcp://::1", "brackets"),
            ("tcp://[::1", "unclosed"),
            ("tcp://h/path", "no path"),
        ] {
            let e = s.parse::<TransportUri>().unwrap_err().to_string();
            assert!(e.contains(why), "{s}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn socket_addrs_filter_by_family() {
        let a = p("tcp4://127.0.0.1:5").socket_addrs().unwrap();
        assert_eq!(a, vec!["127.0.0.1:5".parse().unwrap()]);
        assert!(p("tcp6://127.0.0.1:5").socket_addrs().is_err());
        assert!(p("unix:///x").socket_addrs().is_err());
    }

    #[test]
    fn client_conf_parsing() {
        let text = "; comment\n# another\n\ntransport = tcp://10.0.0.1:6363 \n\
                    [pib]\ntransport=ignored\npib=pib-sqlite3\n";
        assert_eq!(
            parse_client_conf(text).unwrap().as_deref(),
            Some("tcp://10.0.0.1:6363")
        );
        assert_eq!(parse_client_conf("pib=x\n").unwrap(), None);
        assert!(parse_client_conf("transport=a\ntransport=b\n")
            .unwrap_err()
            .contains("line 2"));
        assert!(parse_client_conf("garbage\n")
            .unwrap_err()
            .contains("line 1"));
    }

    /// A scratch directory unique to one test, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            let mut n = [0u8; 8];
            crate::fill_random(&mut n);
            let hex: String = n.iter().map(|b| format!("{b:02x}")).collect();
            let d = std::env::temp_dir().join(format!("cascade-client-{tag}-{hex}"));
            std::fs::create_dir_all(&d).unwrap();
            TempDir(d)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn precedence_flag_env_conf_default() {
        let t = TempDir::new("prec");
        let home = t.0.join("home");
        std::fs::create_dir_all(home.join(".ndn")).unwrap();
        let user_conf = home.join(".ndn/client.conf");
        let sys_conf = t.0.join("etc-client.conf");
        std::fs::write(&user_conf, "transport=tcp://user-conf:1\n").unwrap();
        std::fs::write(&sys_conf, "transport=tcp://sys-conf:2\n").unwrap();
        let paths = vec![user_conf.clone(), sys_conf.clone()];

        // The flag beats everything.
        let (u, s) = resolve_from(Some("udp://flag:3"), Some("tcp://env:4"), &paths).unwrap();
        assert_eq!((u, s), (p("udp://flag:3"), Source::Flag));
        // Then the environment.
        let (u, s) = resolve_from(None, Some("tcp://env:4"), &paths).unwrap();
        assert_eq!((u, s), (p("tcp://env:4"), Source::Env));
        // An empty environment value means the default, and the config is not read.
        let (u, s) = resolve_from(None, Some(""), &paths).unwrap();
        assert_eq!((u, s), (TransportUri::default(), Source::Env));
        // Then the first existing config file.
        let (u, s) = resolve_from(None, None, &paths).unwrap();
        assert_eq!(
            (u, s),
            (
                p("tcp://user-conf:1"),
                Source::ConfigFile(user_conf.clone())
            )
        );
        // Without the user's file, the next one.
        std::fs::remove_file(&user_conf).unwrap();
        let (u, s) = resolve_from(None, None, &paths).unwrap();
        assert_eq!(
            (u, s),
            (p("tcp://sys-conf:2"), Source::ConfigFile(sys_conf.clone()))
        );
        // A first file without a transport line means the default; later files are not read.
        std::fs::write(&user_conf, "; nothing\n").unwrap();
        let (u, s) = resolve_from(None, None, &paths).unwrap();
        assert_eq!((u, s), (TransportUri::default(), Source::Default));
        // No file at all: the default.
        let none = vec![t.0.join("missing.conf")];
        let (u, s) = resolve_from(None, None, &none).unwrap();
        assert_eq!((u, s), (p(DEFAULT_TRANSPORT), Source::Default));
    }

    #[test]
    fn bad_sources_name_themselves() {
        let t = TempDir::new("bad");
        let conf = t.0.join("client.conf");
        std::fs::write(&conf, "transport=ftp://x\n").unwrap();
        let e = resolve_from(None, None, std::slice::from_ref(&conf))
            .unwrap_err()
            .to_string();
        assert!(e.contains("client.conf") && e.contains("ftp"), "{e}");
        let e = resolve_from(None, Some("bogus"), &[])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(ENV_VAR), "{e}");
        let e = resolve_from(Some("bogus"), None, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus"), "{e}");
    }

    #[test]
    fn search_path_order() {
        let v = config_search_path(Some(Path::new("/home/u")));
        assert_eq!(
            v,
            vec![
                PathBuf::from("/home/u/.ndn/client.conf"),
                PathBuf::from("/usr/local/etc/ndn/client.conf"),
                PathBuf::from("/etc/ndn/client.conf"),
            ]
        );
        assert_eq!(config_search_path(None).len(), 2);
    }
}
