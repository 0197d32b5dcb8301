//! The router's HTTP endpoint (`[http]`): Prometheus metrics at `/metrics`, a live status page
//! at `/` and the JSON it polls at `/status.json`.
//!
//! Off the forwarding path: one thread of its own runs a small poll loop (mio) over the
//! listener and at most `max_connections` connections (more are closed at once and counted),
//! each with a deadline (`timeout_ms`) and a request of at most [`MAX_REQUEST_BYTES`]; requests
//! are parsed by `httparse`, and every answer closes its connection. The figures come from the
//! management thread, by the path the status datasets take ([`mgmt::StatusView`]): the
//! workers answer a snapshot request between batches, as they do for `cascade ctl status`, and
//! nothing is shared with them beyond the control channels management already uses.

mod json;
mod metrics;

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use crate::config::Http;
use crate::io::MgmtInput;
use crate::mgmt_queue::MgmtSender;
use crate::shard::IoHandles;
use crate::worker::WorkerLink;

pub use json::status_json;
pub use metrics::render_metrics;

/// Largest request (line and headers) read, in bytes; a longer one is answered 431.
pub const MAX_REQUEST_BYTES: usize = 8192;

/// How often the loop looks at the stop flag and the deadlines.
const TICK: Duration = Duration::from_millis(100);

/// The status page, embedded in the binary.
const STATUS_PAGE: &str = include_str!("status.html");

/// How long the endpoint waits for the management thread's figures.
const FIGURES_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts the endpoint's thread (`cascade-http`) if `[http] listen` is set: its address and
/// thread. A listen address that does not bind is logged and leaves the router without the
/// endpoint (forwarding does not depend on it).
pub(crate) fn start(
    cfg: &Http,
    mgmt: MgmtSender,
    io: Arc<IoHandles>,
    links: &[Arc<WorkerLink>],
    started: Instant,
    stop: Arc<AtomicBool>,
    failure: &Arc<crate::failure::Failure>,
) -> Option<(SocketAddr, std::thread::JoinHandle<()>)> {
    let addr = cfg.addr()?;
    let links = links.to_vec();
    let source: Source = Box::new(move |http| {
        let (reply, answer) = std::sync::mpsc::channel();
        mgmt.event(MgmtInput::Status(reply)).then_some(())?;
        let view = answer.recv_timeout(FIGURES_TIMEOUT).ok()?;
        Some(Figures {
            view: *view,
            input_ring_full: links
                .iter()
                .map(|l| l.input_full.load(Ordering::Relaxed))
                .collect(),
            bounds: io.bounds(),
            uptime_s: started.elapsed().as_secs_f64(),
            http,
        })
    });
    let settings = HttpSettings {
        max_connections: cfg.max_connections,
        timeout: Duration::from_millis(cfg.timeout_ms),
    };
    let server = match HttpServer::bind(addr, settings, source) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("{e}: no HTTP endpoint");
            return None;
        }
    };
    let bound = server.local_addr().unwrap_or(addr);
    let run_stop = Arc::clone(&stop);
    let thread = crate::failure::spawn(
        "cascade-http".into(),
        Box::new(move || server.run(run_stop)),
        &stop,
        failure,
    );
    match thread {
        Ok(t) => {
            tracing::info!(%bound, "HTTP endpoint: /metrics, / (status page)");
            Some((bound, t))
        }
        Err(e) => {
            tracing::warn!("{e}: no HTTP endpoint");
            None
        }
    }
}

/// What the endpoint reports: management's view and what only the router knows.
#[derive(Debug, Clone)]
pub struct Figures {
    /// The datasets' figures.
    pub view: mgmt::StatusView,
    /// Per worker: packets the I/O loop dropped because its input ring was full.
    pub input_ring_full: Vec<u64>,
    /// What the face tables' bounds refused or evicted, over every I/O loop.
    pub bounds: face::table::BoundCounters,
    /// Seconds since the router started.
    pub uptime_s: f64,
    /// The endpoint's own counters.
    pub http: HttpCounters,
}

/// The endpoint's own counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpCounters {
    /// Requests answered (any status).
    pub requests: u64,
    /// Connections closed at once: `max_connections` were open.
    pub refused_connections: u64,
    /// Requests over [`MAX_REQUEST_BYTES`].
    pub too_large: u64,
    /// Requests that did not parse, or not a GET.
    pub bad_requests: u64,
    /// Connections closed at their deadline.
    pub timeouts: u64,
    /// Requests the router did not answer in time (503).
    pub unavailable: u64,
}

/// Where the figures come from: asks the router (None if it did not answer).
pub type Source = Box<dyn FnMut(HttpCounters) -> Option<Figures> + Send>;

/// The endpoint's settings.
#[derive(Debug, Clone, Copy)]
pub struct HttpSettings {
    /// Connections served at once.
    pub max_connections: usize,
    /// A connection's deadline from its accept.
    pub timeout: Duration,
}

/// One connection: the request read so far, then the answer being written.
struct Conn {
    stream: TcpStream,
    request: Vec<u8>,
    answer: Vec<u8>,
    written: usize,
    deadline: Instant,
}

/// The endpoint: its listener, connections and counters.
pub struct HttpServer {
    poll: Poll,
    listener: TcpListener,
    conns: Vec<Option<Conn>>,
    settings: HttpSettings,
    counters: HttpCounters,
    source: Source,
}

/// Token of the listener; connection `i` has token `i + 1`.
const LISTENER: Token = Token(0);

impl HttpServer {
    /// Binds `addr`; the error names the key.
    pub fn bind(addr: SocketAddr, settings: HttpSettings, source: Source) -> Result<Self, String> {
        let err = |e: std::io::Error| format!("http.listen {addr}: {e}");
        let mut listener = TcpListener::bind(addr).map_err(err)?;
        let poll = Poll::new().map_err(err)?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)
            .map_err(err)?;
        Ok(HttpServer {
            poll,
            listener,
            conns: (0..settings.max_connections).map(|_| None).collect(),
            settings,
            counters: HttpCounters::default(),
            source,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Serves until `stop` is set.
    pub fn run(mut self, stop: Arc<AtomicBool>) {
        let mut events = Events::with_capacity(64);
        while !stop.load(Ordering::Relaxed) {
            if let Err(e) = self.poll.poll(&mut events, Some(TICK)) {
                if e.kind() != ErrorKind::Interrupted {
                    tracing::warn!("http: poll: {e}");
                    return;
                }
            }
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept(),
                    Token(t) => self.serve(t - 1),
                }
            }
            self.expire(Instant::now());
        }
    }

    fn accept(&mut self) {
        loop {
            let mut stream = match self.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    tracing::debug!("http: accept: {e}");
                    return;
                }
            };
            let Some(slot) = self.conns.iter().position(Option::is_none) else {
                self.counters.refused_connections += 1;
                continue; // dropping the stream closes it
            };
            let token = Token(slot + 1);
            let both = Interest::READABLE | Interest::WRITABLE;
            if self
                .poll
                .registry()
                .register(&mut stream, token, both)
                .is_ok()
            {
                self.conns[slot] = Some(Conn {
                    stream,
                    request: Vec::with_capacity(1024),
                    answer: Vec::new(),
                    written: 0,
                    deadline: Instant::now() + self.settings.timeout,
                });
            }
        }
    }

    /// Reads what connection `i` sent, answers once its request is whole, writes the answer;
    /// closes it when written or on an error.
    fn serve(&mut self, i: usize) {
        let Some(mut c) = self.conns.get_mut(i).and_then(Option::take) else {
            return;
        };
        if c.answer.is_empty() {
            match read_request(&mut c) {
                ReadState::More => {
                    self.conns[i] = Some(c);
                    return;
                }
                ReadState::Closed => return self.close(c),
                ReadState::TooLarge => {
                    self.counters.too_large += 1;
                    c.answer = response(431, "text/plain", b"request too large\n");
                }
                ReadState::Whole(end) => c.answer = self.answer(&c.request[..end]),
            }
        }
        loop {
            match c.stream.write(&c.answer[c.written..]) {
                Ok(0) => return self.close(c),
                Ok(n) => {
                    c.written += n;
                    if c.written == c.answer.len() {
                        return self.close(c);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.close(c),
            }
        }
        self.conns[i] = Some(c);
    }

    fn close(&mut self, mut c: Conn) {
        let _ = self.poll.registry().deregister(&mut c.stream);
    }

    /// Closes the connections past their deadline.
    fn expire(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            if self.conns[i].as_ref().is_some_and(|c| c.deadline <= now) {
                if let Some(c) = self.conns[i].take() {
                    self.counters.timeouts += 1;
                    self.close(c);
                }
            }
        }
    }

    /// The answer to a whole request.
    fn answer(&mut self, request: &[u8]) -> Vec<u8> {
        self.counters.requests += 1;
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        let path = match req.parse(request) {
            Ok(httparse::Status::Complete(_)) if req.method == Some("GET") => {
                req.path.unwrap_or("/")
            }
            _ => {
                self.counters.bad_requests += 1;
                return response(400, "text/plain", b"GET only\n");
            }
        };
        let path = path.split('?').next().unwrap_or("/");
        match path {
            "/" | "/index.html" => {
                response(200, "text/html; charset=utf-8", STATUS_PAGE.as_bytes())
            }
            "/metrics" | "/status.json" => match (self.source)(self.counters) {
                None => {
                    self.counters.unavailable += 1;
                    response(503, "text/plain", b"the router did not answer\n")
                }
                Some(f) if path == "/metrics" => response(
                    200,
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    render_metrics(&f).as_bytes(),
                ),
                Some(f) => response(200, "application/json", status_json(&f).as_bytes()),
            },
            _ => response(404, "text/plain", b"not found\n"),
        }
    }
}

/// What reading a request found.
enum ReadState {
    /// Not whole yet.
    More,
    /// The peer closed or failed.
    Closed,
    /// Over [`MAX_REQUEST_BYTES`].
    TooLarge,
    /// Whole: its head ends at this offset.
    Whole(usize),
}

fn read_request(c: &mut Conn) -> ReadState {
    let mut buf = [0u8; 2048];
    loop {
        match c.stream.read(&mut buf) {
            Ok(0) => return ReadState::Closed,
            Ok(n) => {
                if c.request.len() + n > MAX_REQUEST_BYTES {
                    return ReadState::TooLarge;
                }
                c.request.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return ReadState::Closed,
        }
    }
    match c.request.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(p) => ReadState::Whole(p + 4),
        None => ReadState::More,
    }
}

/// A whole HTTP/1.1 answer that closes the connection.
fn response(status: u16, content_type: &str, body: &[u8]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests;
