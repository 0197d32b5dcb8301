//! The WebSocket listener of the I/O loop (the first loop's, as the other listeners).

use std::net::SocketAddr;

use face::table::Listener;
use mio::net::TcpListener;

use super::Io;

impl Io {
    /// Listens for WebSocket connections on `addr` (empty string = off); the error names what
    /// failed and how to change it.
    pub fn listen_ws(&mut self, addr: &str) -> Result<(), String> {
        if addr.is_empty() {
            return Ok(());
        }
        let a: SocketAddr = addr
            .parse()
            .map_err(|_| format!("bad WebSocket address {addr:?} (--websocket ADDR)"))?;
        let l = TcpListener::bind(a).map_err(|e| {
            format!(
                "cannot listen on WebSocket {a}: {e} (change it with --websocket ADDR, or \
                 --websocket '' to disable)"
            )
        })?;
        let local = l.local_addr().map_err(|e| e.to_string())?;
        self.bound.ws = Some(local);
        self.faces
            .add_listener(Listener::Ws(l, local))
            .map_err(|e| format!("register listener: {e}"))
    }
}
