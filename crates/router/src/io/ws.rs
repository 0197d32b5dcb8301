//! The WebSocket listener of the I/O loop (the first loop's, as the other listeners): `ws://`,
//! or `wss://` when `[listen]` names a certificate and key.

use std::net::SocketAddr;

use face::table::Listener;
use mio::net::TcpListener;

use super::Io;
use crate::config::Listen;

impl Io {
    /// Listens for WebSocket connections on `listen.websocket` (empty string = off), with TLS
    /// if `listen` names a certificate; the error names what failed and how to change it.
    pub fn listen_ws(&mut self, listen: &Listen) -> Result<(), String> {
        let addr = &listen.websocket;
        if addr.is_empty() {
            return Ok(());
        }
        let a: SocketAddr = addr
            .parse()
            .map_err(|_| format!("bad WebSocket address {addr:?} (--websocket ADDR)"))?;
        let tls = listen.ws_tls()?;
        let l = TcpListener::bind(a).map_err(|e| {
            format!(
                "cannot listen on WebSocket {a}: {e} (change it with --websocket ADDR, or \
                 --websocket '' to disable)"
            )
        })?;
        let local = l.local_addr().map_err(|e| e.to_string())?;
        self.bound.ws = Some(local);
        let l = match tls {
            Some(t) => Listener::Wss(l, local, t),
            None => Listener::Ws(l, local),
        };
        self.faces
            .add_listener(l)
            .map_err(|e| format!("register listener: {e}"))
    }
}
