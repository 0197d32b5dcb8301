//! `wss://`: TLS under the WebSocket face, by `rustls` (its `ring` provider), driven
//! non-blocking from the table's `mio` loop.
//!
//! A secure listener's connection is a [`rustls::ServerConnection`] over the TCP socket; the
//! WebSocket handshake and framing (`tungstenite`) run over the plaintext it yields
//! ([`WsStream::Tls`]). Reading feeds the socket's bytes to the TLS state machine
//! (`read_tls`, `process_new_packets`) until plaintext comes or the socket would block, and
//! writes out whatever TLS records that produced (handshake flights, alerts); writing
//! encrypts into the connection's bounded buffer ([`TLS_BUFFER_BYTES`]) and answers
//! `WouldBlock` once it is full, so the face's send queue is bounded as a `ws://` one is,
//! plus that buffer. The TLS handshake is the first part of the WebSocket handshake: the same
//! pending slot, deadline and bound apply to it; a TLS failure (a bad record, no common
//! cipher suite, a client that does not trust the certificate) is counted apart
//! ([`super::WsCounters::handshakes_tls_failed`]).

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use mio::net::TcpStream;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection};

/// Most bytes of TLS records (and plaintext not yet encrypted) a connection buffers for
/// sending, beyond the WebSocket write buffer.
pub const TLS_BUFFER_BYTES: usize = 64 * 1024;
/// TLS records read from the socket per read of plaintext (then the read would block).
const RECORDS_PER_READ: usize = 64;

/// A secure WebSocket listener's TLS settings: its certificate chain and key.
#[derive(Clone)]
pub struct WsTls(Arc<ServerConfig>);

impl std::fmt::Debug for WsTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WsTls")
    }
}

/// Which of a certificate and key pair a [`WsTls`] could not be made of, with why (one line
/// naming the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsTlsError {
    /// The certificate chain's file is missing, unreadable or holds no certificate.
    Cert(String),
    /// The key's file is missing, unreadable or holds no private key.
    Key(String),
    /// The key does not go with the certificate, or TLS refuses them.
    Pair(String),
}

impl WsTls {
    /// Loads a certificate chain (PEM, the server's certificate first) and its private key
    /// (PEM: PKCS#8, PKCS#1 or SEC1).
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<WsTls, WsTlsError> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect::<Result<_, _>>())
            .map_err(|e| WsTlsError::Cert(format!("{}: {e}", cert.display())))?;
        if chain.is_empty() {
            let e = format!("{}: no certificate in it", cert.display());
            return Err(WsTlsError::Cert(e));
        }
        let key_der = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| WsTlsError::Key(format!("{}: {e}", key.display())))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let cfg = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| WsTlsError::Pair(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)
            .map_err(|e| WsTlsError::Pair(format!("{}: {e}", key.display())))?;
        Ok(WsTls(Arc::new(cfg)))
    }
}

/// A TLS connection over a non-blocking TCP socket, read and written as a stream of
/// plaintext (see the module docs).
pub(super) struct TlsStream {
    tls: ServerConnection,
    tcp: TcpStream,
}

/// The socket under a WebSocket connection: plain (`ws://`) or TLS (`wss://`).
pub(super) enum WsStream {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
}

impl WsStream {
    /// The stream of a connection accepted on a listener with `tls` (or none).
    /// On error, the socket comes back with it.
    pub(super) fn new(
        tcp: TcpStream,
        tls: Option<&WsTls>,
    ) -> Result<WsStream, (io::Error, TcpStream)> {
        let Some(t) = tls else {
            return Ok(WsStream::Plain(tcp));
        };
        let mut conn = match ServerConnection::new(t.0.clone()) {
            Ok(c) => c,
            Err(e) => return Err((io::Error::other(e), tcp)),
        };
        conn.set_buffer_limit(Some(TLS_BUFFER_BYTES));
        Ok(WsStream::Tls(Box::new(TlsStream { tls: conn, tcp })))
    }

    /// The TCP socket (to register with the poll).
    pub(super) fn tcp(&mut self) -> &mut TcpStream {
        match self {
            WsStream::Plain(s) => s,
            WsStream::Tls(t) => &mut t.tcp,
        }
    }

    /// The TCP socket, to read its addresses.
    pub(super) fn tcp_ref(&self) -> &TcpStream {
        match self {
            WsStream::Plain(s) => s,
            WsStream::Tls(t) => &t.tcp,
        }
    }
}

/// Whether `e` is a TLS failure (not a socket's or the HTTP request's).
pub(super) fn is_tls_error(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
}

impl TlsStream {
    /// Writes the TLS records waiting, as far as the socket takes them.
    fn write_out(&mut self) -> io::Result<()> {
        while self.tls.wants_write() {
            if self.tls.write_tls(&mut self.tcp)? == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
        Ok(())
    }

    /// Sends what is waiting unless the socket would block (then the next flush does).
    fn write_out_now(&mut self) -> io::Result<()> {
        match self.write_out() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            r => r,
        }
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        for _ in 0..RECORDS_PER_READ {
            match self.tls.reader().read(buf) {
                // No plaintext yet: more records are needed.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                r => return r,
            }
            self.write_out_now()?;
            let n = match self.tls.read_tls(&mut self.tcp) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => r?,
            };
            if let Err(e) = self.tls.process_new_packets() {
                // The alert telling the peer why, if the socket takes it.
                let _ = self.write_out_now();
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            self.write_out_now()?;
            if n == 0 {
                // The peer is gone: the reader says how (cleanly or not).
                return self.tls.reader().read(buf);
            }
        }
        Err(io::ErrorKind::WouldBlock.into())
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_out_now()?;
        match self.tls.writer().write(buf)? {
            // The buffer is full: wait for the socket.
            0 if !buf.is_empty() => Err(io::ErrorKind::WouldBlock.into()),
            n => {
                self.write_out_now()?;
                Ok(n)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_out()
    }
}

impl Read for WsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            WsStream::Plain(s) => s.read(buf),
            WsStream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for WsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            WsStream::Plain(s) => s.write(buf),
            WsStream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            WsStream::Plain(s) => s.flush(),
            WsStream::Tls(t) => t.flush(),
        }
    }
}

/// Sends the TLS close alert on a connection being closed, as far as the socket takes it.
pub(super) fn close_tls(s: &mut WsStream) {
    if let WsStream::Tls(t) = s {
        t.tls.send_close_notify();
        let _ = t.write_out();
    }
}
