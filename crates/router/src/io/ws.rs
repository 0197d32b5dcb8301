//! The WebSocket listeners of the I/O loop (the first loop's, as the other listeners): `ws://`,
//! or `wss://` when `[listen]` names a certificate and key; one per address of
//! `listen.websocket` (IPv4's and IPv6's wildcards by default, apart: [`bind_ws_listener`]).

use face::table::{bind_ws_listener, Listener};

use super::Io;
use crate::config::Listen;

impl Io {
    /// Listens for WebSocket connections on the addresses of `listen.websocket` (none if
    /// empty), with TLS if `listen` names a certificate; the error names what failed and how
    /// to change it. Where the kernel has no IPv6, an IPv6 address is left out (logged).
    /// [`super::Bound::ws`] is the first listener's address.
    pub fn listen_ws(&mut self, listen: &Listen) -> Result<(), String> {
        let addrs = listen.ws_addrs()?;
        let tls = if addrs.is_empty() {
            None
        } else {
            listen.ws_tls()?
        };
        for a in addrs {
            let l = match bind_ws_listener(a) {
                Ok(l) => l,
                Err(e) if a.is_ipv6() && e.raw_os_error() == Some(libc::EAFNOSUPPORT) => {
                    tracing::warn!("no IPv6 WebSocket listener on {a}: {e}");
                    continue;
                }
                Err(e) => {
                    return Err(format!(
                        "cannot listen on WebSocket {a}: {e} (change it with --websocket \
                         ADDR[,ADDR], or --websocket '' to disable)"
                    ))
                }
            };
            let local = l.local_addr().map_err(|e| e.to_string())?;
            self.bound.ws.get_or_insert(local);
            let l = match &tls {
                Some(t) => Listener::Wss(l, local, t.clone()),
                None => Listener::Ws(l, local),
            };
            self.faces
                .add_listener(l)
                .map_err(|e| format!("register listener: {e}"))?;
        }
        Ok(())
    }
}
