//! The generator's WebSocket link: one NDN packet per binary message over a loopback TCP
//! connection, as a browser's NDN library speaks to a router's `ws://` listener. Messages are
//! written into `tungstenite`'s write buffer and sent by one flush; payloads are cut from a
//! staging buffer that is reclaimed after each write (no allocation per packet).

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};

use bytes::BytesMut;
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Error, Message, WebSocket};

/// Messages read per [`WsLink::recv`] call.
const MESSAGES_PER_RECV: usize = 1024;

/// One end of a WebSocket connection, non-blocking.
pub(super) struct WsLink {
    ws: WebSocket<TcpStream>,
    stage: BytesMut,
    unflushed: bool,
}

fn io_err(e: Error) -> io::Error {
    match e {
        Error::Io(e) => e,
        e => io::Error::other(e),
    }
}

fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(256 * 1024)
        .write_buffer_size(1 << 20)
        .max_write_buffer_size(16 << 20)
        .max_message_size(Some(wire::MAX_NDN_PACKET_BYTES))
}

impl WsLink {
    fn new(ws: WebSocket<TcpStream>) -> io::Result<WsLink> {
        ws.get_ref().set_nonblocking(true)?;
        let _ = ws.get_ref().set_nodelay(true);
        Ok(WsLink {
            ws,
            stage: BytesMut::with_capacity(64 * 1024),
            unflushed: false,
        })
    }

    /// A client connection to the `ws://` listener at `addr` (handshake done).
    pub(super) fn connect(addr: SocketAddr) -> io::Result<WsLink> {
        let s = TcpStream::connect(addr)?;
        let url = format!("ws://{addr}/");
        let (ws, _) = tungstenite::client::client_with_config(url, s, Some(config()))
            .map_err(|e| io::Error::other(e.to_string()))?;
        WsLink::new(ws)
    }

    /// Two ends of one connection over loopback: a client and a server (no router between).
    pub(super) fn pair() -> io::Result<(WsLink, WsLink)> {
        let l = TcpListener::bind("127.0.0.1:0")?;
        let addr = l.local_addr()?;
        let server = std::thread::spawn(move || -> io::Result<WebSocket<TcpStream>> {
            let (s, _) = l.accept()?;
            tungstenite::accept_with_config(s, Some(config()))
                .map_err(|e| io::Error::other(e.to_string()))
        });
        let client = WsLink::connect(addr)?;
        let server = server
            .join()
            .map_err(|_| io::Error::other("handshake thread panicked"))??;
        // Re-made with the server role's framing (no masking) from the handshaken stream.
        let server = WebSocket::from_raw_socket(server.into_inner(), Role::Server, Some(config()));
        Ok((client, WsLink::new(server)?))
    }

    pub(super) fn fd(&self) -> RawFd {
        self.ws.get_ref().as_raw_fd()
    }

    pub(super) fn queue(&mut self, pkt: &[u8]) -> io::Result<()> {
        self.stage.extend_from_slice(pkt);
        let payload = self.stage.split().freeze();
        self.unflushed = true;
        match self.ws.write(Message::Binary(payload)) {
            Err(Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            r => r.map_err(io_err),
        }
    }

    pub(super) fn flush(&mut self) -> io::Result<()> {
        match self.ws.flush() {
            Ok(()) => {
                self.unflushed = false;
                Ok(())
            }
            Err(Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(io_err(e)),
        }
    }

    pub(super) fn pending_out(&self) -> bool {
        self.unflushed
    }

    pub(super) fn recv(&mut self, f: &mut impl FnMut(&[u8])) -> io::Result<usize> {
        let mut n = 0;
        while n < MESSAGES_PER_RECV {
            match self.ws.read() {
                Ok(Message::Binary(b)) => {
                    f(&b);
                    n += 1;
                }
                Ok(_) => {}
                Err(Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(Error::Io(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(e)),
            }
        }
        Ok(n)
    }
}
