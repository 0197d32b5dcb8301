//! `[http]`: the router's HTTP endpoint (Prometheus `/metrics`, the status page `/` and its
//! `/status.json`), served by its own thread ([`crate::http`]).

use std::net::SocketAddr;

use serde::Deserialize;

/// The HTTP endpoint's port by default: clear of NDN's 6363 and NFD's WebSocket 9696.
pub const DEFAULT_HTTP_PORT: u16 = 6380;

/// `[http]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Http {
    /// Listen address (`""`: no HTTP endpoint). Default `127.0.0.1:6380`.
    pub listen: String,
    /// Connections served at once; more are closed at once and counted. Default 8.
    pub max_connections: usize,
    /// How long a connection may take to send its request and read the answer, in
    /// milliseconds. Default 5000.
    pub timeout_ms: u64,
}

impl Default for Http {
    fn default() -> Self {
        Http {
            listen: format!("127.0.0.1:{DEFAULT_HTTP_PORT}"),
            max_connections: 8,
            timeout_ms: 5000,
        }
    }
}

impl Http {
    /// The listen address, if the endpoint is on.
    pub fn addr(&self) -> Option<SocketAddr> {
        self.listen.parse().ok()
    }

    /// One line naming the key on error.
    pub fn validate(&self) -> Result<(), String> {
        if !self.listen.is_empty() && self.addr().is_none() {
            return Err(format!(
                "http.listen: {:?} is not an address like 127.0.0.1:{DEFAULT_HTTP_PORT}",
                self.listen
            ));
        }
        super::range("http.max_connections", self.max_connections, 1, 1024)?;
        super::range(
            "http.timeout_ms",
            self.timeout_ms.min(usize::MAX as u64) as usize,
            100,
            600_000,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn http_section_is_read_and_checked() {
        let d = Config::default();
        assert_eq!(d.http.listen, "127.0.0.1:6380");
        let c = Config::from_toml("[http]\nlisten = \"\"\nmax_connections = 4\n").unwrap();
        assert_eq!((c.http.addr(), c.http.max_connections), (None, 4));
        assert!(c.validate().is_ok());
        let bad = Config::from_toml("[http]\nlisten = \"localhost\"\n").unwrap_err();
        assert!(bad.starts_with("http.listen:"), "{bad}");
        let bad = Config::from_toml("[http]\nmax_connections = 0\n").unwrap_err();
        assert!(bad.starts_with("http.max_connections:"), "{bad}");
        assert!(Config::from_toml("[http]\nport = 1\n").is_err());
    }
}
