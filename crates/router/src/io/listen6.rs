//! The IPv6 listeners of the I/O loop (`[listen] tcp6`, `udp6`), beside the IPv4 ones: IPv6
//! only, as NFD's channels on `[::]`, so that they share the port with the IPv4 wildcard.

use std::net::{SocketAddr, UdpSocket};

use face::table::{bind_tcp6_listener, Listener};
use mio::net::TcpListener;

use super::Io;

impl Io {
    /// Listens for TCP on IPv6 address `tcp6` (the first loop, as the other stream listeners)
    /// and receives on `udp6` (this loop's socket of the IPv6 UDP group). A listener that
    /// cannot bind is an error naming its key when `required`, else a warning (the default
    /// `"auto"` on a host without IPv6).
    pub fn listen_v6(
        &mut self,
        tcp6: Option<SocketAddr>,
        udp6: Option<UdpSocket>,
        required: bool,
    ) -> Result<(), String> {
        if let Some(addr) = tcp6 {
            match bind_tcp6_listener(addr) {
                Ok(l) => {
                    l.set_nonblocking(true).map_err(|e| e.to_string())?;
                    let local = l.local_addr().map_err(|e| e.to_string())?;
                    self.bound.tcp6 = Some(local);
                    self.faces
                        .add_listener(Listener::Tcp(TcpListener::from_std(l), local))
                        .map_err(|e| format!("register listener: {e}"))?;
                }
                Err(e) if required => {
                    return Err(format!("listen.tcp6: cannot listen on TCP {addr}: {e}"))
                }
                Err(e) => tracing::warn!("no IPv6 TCP listener on {addr}: {e}"),
            }
        }
        if let Some(s) = udp6 {
            let local = s.local_addr().map_err(|e| e.to_string())?;
            self.bound.udp6 = Some(local);
            self.faces
                .add_udp_socket(s, true)
                .map_err(|e| format!("UDP {local}: {e}"))?;
        }
        Ok(())
    }
}
