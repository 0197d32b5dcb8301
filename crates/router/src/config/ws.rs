//! `[listen]`'s WebSocket keys: the listeners' addresses (a list, by default IPv4's and IPv6's
//! wildcards, as NFD's `enable_v4` and `enable_v6`) and, for `wss://`, their certificate chain
//! and key (PEM files, both or neither).

use std::net::SocketAddr;
use std::path::Path;

use face::table::{WsTls, WsTlsError};

use super::Listen;

/// Most WebSocket listeners `listen.websocket` may name.
pub const MAX_WS_LISTENERS: usize = 8;

impl Listen {
    /// Checks the WebSocket keys: an address (or `""`), and a certificate and key that load.
    pub(super) fn validate_ws(&self) -> Result<(), String> {
        self.ws_addrs()?;
        self.ws_tls().map(|_| ())
    }

    /// The WebSocket listeners' addresses: `listen.websocket` is a comma-separated list (empty:
    /// none); the error is one line naming the key.
    pub fn ws_addrs(&self) -> Result<Vec<SocketAddr>, String> {
        let mut out: Vec<SocketAddr> = Vec::new();
        for a in self
            .websocket
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            let addr = a.parse().map_err(|_| {
                format!("listen.websocket: {a:?} is not an address like 0.0.0.0:9696 or [::]:9696")
            })?;
            if out.contains(&addr) {
                return Err(format!("listen.websocket: {a} is named twice"));
            }
            out.push(addr);
        }
        if out.len() > MAX_WS_LISTENERS {
            return Err(format!(
                "listen.websocket: {} addresses, at most {MAX_WS_LISTENERS}",
                out.len()
            ));
        }
        Ok(out)
    }

    /// The WebSocket listener's TLS settings: `None` for `ws://` (neither file named); the
    /// error is one line naming the key.
    pub fn ws_tls(&self) -> Result<Option<WsTls>, String> {
        let (cert, key) = (&self.websocket_tls_cert, &self.websocket_tls_key);
        match (cert.is_empty(), key.is_empty()) {
            (true, true) => return Ok(None),
            (false, true) => {
                return Err("listen.websocket_tls_key: missing (wss:// needs both the \
                            certificate and its key)"
                    .into())
            }
            (true, false) => {
                return Err("listen.websocket_tls_cert: missing (wss:// needs both the \
                            certificate and its key)"
                    .into())
            }
            (false, false) => {}
        }
        WsTls::from_pem_files(Path::new(cert), Path::new(key))
            .map(Some)
            .map_err(|e| match e {
                WsTlsError::Cert(e) => format!("listen.websocket_tls_cert: {e}"),
                WsTlsError::Key(e) => format!("listen.websocket_tls_key: {e}"),
                WsTlsError::Pair(e) => {
                    format!("listen.websocket_tls_key: does not go with the certificate: {e}")
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    fn fixture(file: &str) -> String {
        format!(
            "{}/../../tests/fixtures/wss/{file}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    fn with(cert: &str, key: &str) -> Result<Config, String> {
        Config::from_toml(&format!(
            "[listen]\nwebsocket_tls_cert = {cert:?}\nwebsocket_tls_key = {key:?}\n"
        ))
    }

    #[test]
    fn a_certificate_and_its_key_make_a_secure_listener() {
        let c = with(&fixture("cert.pem"), &fixture("key.pem")).unwrap();
        assert!(c.listen.ws_tls().unwrap().is_some());
        assert!(Config::default().listen.ws_tls().unwrap().is_none());
    }

    #[test]
    fn websocket_listens_on_ipv4_and_ipv6_by_default_or_on_a_list() {
        let addrs = |text: &str| {
            Config::from_toml(&format!("[listen]\nwebsocket = {text:?}\n"))
                .and_then(|c| c.listen.ws_addrs())
        };
        let want: Vec<std::net::SocketAddr> = vec![
            "0.0.0.0:9696".parse().unwrap(),
            "[::]:9696".parse().unwrap(),
        ];
        assert_eq!(Config::default().listen.ws_addrs().unwrap(), want);
        assert_eq!(addrs("").unwrap(), []);
        assert_eq!(addrs("[::1]:1").unwrap(), ["[::1]:1".parse().unwrap()]);
        assert_eq!(addrs(" 0.0.0.0:9696 ,[::]:9696").unwrap(), want);
        for bad in ["localhost:9696", "0.0.0.0:1, 0.0.0.0:1", "1.2.3.4"] {
            let e = addrs(bad).unwrap_err();
            assert!(e.starts_with("listen.websocket: "), "{e}");
        }
        let many: Vec<String> = (1..=9).map(|p| format!("127.0.0.1:{p}")).collect();
        assert!(addrs(&many.join(",")).is_err());
    }

    #[test]
    fn a_bad_certificate_or_key_is_one_line_naming_the_key() {
        let (cert, key) = (fixture("cert.pem"), fixture("key.pem"));
        let cases = [
            (
                cert.clone(),
                String::new(),
                "listen.websocket_tls_key: missing",
            ),
            (
                String::new(),
                key.clone(),
                "listen.websocket_tls_cert: missing",
            ),
            (
                fixture("none.pem"),
                key.clone(),
                "listen.websocket_tls_cert: ",
            ),
            (key.clone(), key.clone(), "listen.websocket_tls_cert: "),
            (
                cert.clone(),
                fixture("none.pem"),
                "listen.websocket_tls_key: ",
            ),
            (cert.clone(), cert.clone(), "listen.websocket_tls_key: "),
            (
                cert.clone(),
                fixture("other-key.pem"),
                "listen.websocket_tls_key: does not go with the certificate",
            ),
        ];
        for (c, k, want) in cases {
            let e = with(&c, &k).unwrap_err();
            assert!(e.starts_with(want), "{c} {k}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
