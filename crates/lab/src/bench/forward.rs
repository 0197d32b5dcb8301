//! `cascade bench forward`: drives a router over real sockets with its own consumer and
//! producer, and measures the generator's own ceiling (consumer straight to producer) in the
//! same run.
//!
//! The generator is one thread that plays both ends, so that on a small machine it takes one
//! core and leaves the rest to the router: the consumer keeps `window` Interests outstanding
//! (unique names, or a fixed set of names that the CS answers after the first round); the
//! producer registers its prefix with `rib/register` and answers each Interest with a Data of
//! `payload` bytes signed DigestSha256, echoing the PIT token. Every socket is non-blocking and
//! read and written in batches (`recvmmsg`/`sendmmsg` for UDP, large reads and coalesced writes
//! for Unix streams); the thread sleeps in `poll` only when it has nothing to do.

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use face::stream::StreamFramer;
use face::udp::UdpBatch;
use wire::tlv::{write_nni_tlv, write_tlv, write_var_number};
use wire::{tt, Limits, LpPacketView, PacketView};

/// Face kinds the generator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FaceKind {
    /// UDP unicast over loopback.
    Udp,
    /// Unix stream sockets.
    Unix,
}

/// Arguments of `cascade bench forward`.
#[derive(clap::Args, Debug)]
pub struct ForwardBenchArgs {
    /// Face kind between the generator and the router.
    #[arg(long, value_enum, default_value_t = FaceKind::Udp)]
    face: FaceKind,
    /// Drive a running router instead of starting one: `unix:///path` or `udp://host:port`.
    #[arg(long)]
    attach: Option<String>,
    /// With `--attach udp://...`: the router's Unix socket, for the management commands that
    /// create the producer's face and route (UDP faces are not local, so they may not register).
    #[arg(long, default_value = "/run/nfd/nfd.sock")]
    mgmt: PathBuf,
    /// Seconds of measurement (after a one-second warm-up).
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Interests outstanding.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    window: u64,
    /// Name workload: `unique` (every Interest goes to the producer) or `cached:N` (N names
    /// requested round-robin, answered by the router's CS after the first round).
    #[arg(long, default_value = "unique")]
    workload: String,
    /// Content bytes per Data.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(0..=8000))]
    payload: u64,
    /// Forwarding workers of the router started here (default: the router's default).
    #[arg(long)]
    workers: Option<usize>,
    /// Interest lifetime; an Interest unanswered this long counts as a timeout.
    #[arg(long, default_value_t = 1000)]
    lifetime_ms: u64,
    /// Skip the ceiling measurement.
    #[arg(long)]
    no_ceiling: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

const PREFIX: &str = "bench";

/// One end of a link: UDP socket or Unix stream, non-blocking, batched.
enum Link {
    Udp {
        batch: UdpBatch,
        peer: SocketAddr,
        stage: Vec<u8>,
        staged: Vec<(usize, usize)>,
    },
    Stream {
        sock: UnixStream,
        framer: StreamFramer,
        out: Vec<u8>,
        out_pos: usize,
    },
}

impl Link {
    fn udp_on(s: UdpSocket, peer: SocketAddr) -> io::Result<Link> {
        s.set_nonblocking(true)?;
        Ok(Link::Udp {
            batch: UdpBatch::with_capacity(s, 64, 9000)?,
            peer,
            stage: Vec::with_capacity(64 * 9000),
            staged: Vec::with_capacity(64),
        })
    }

    fn udp(peer: SocketAddr) -> io::Result<Link> {
        Link::udp_on(UdpSocket::bind("127.0.0.1:0")?, peer)
    }

    fn udp_pair() -> io::Result<(Link, Link)> {
        let a = UdpSocket::bind("127.0.0.1:0")?;
        let b = UdpSocket::bind("127.0.0.1:0")?;
        let (aa, ba) = (a.local_addr()?, b.local_addr()?);
        Ok((Link::udp_on(a, ba)?, Link::udp_on(b, aa)?))
    }

    fn stream(sock: UnixStream) -> io::Result<Link> {
        sock.set_nonblocking(true)?;
        Ok(Link::Stream {
            sock,
            framer: StreamFramer::new(wire::MAX_NDN_PACKET_BYTES, 256 * 1024),
            out: Vec::with_capacity(1 << 20),
            out_pos: 0,
        })
    }

    fn fd(&self) -> RawFd {
        match self {
            Link::Udp { batch, .. } => batch.socket().as_raw_fd(),
            Link::Stream { sock, .. } => sock.as_raw_fd(),
        }
    }

    /// Queues one packet (sent by [`Link::flush`]).
    fn queue(&mut self, pkt: &[u8]) -> io::Result<()> {
        match self {
            Link::Udp { staged, .. } if staged.len() >= 64 => {
                self.flush()?;
                self.queue(pkt)?;
            }
            Link::Udp { stage, staged, .. } => {
                staged.push((stage.len(), pkt.len()));
                stage.extend_from_slice(pkt);
            }
            Link::Stream { out, .. } => out.extend_from_slice(pkt),
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Link::Udp {
                batch,
                peer,
                stage,
                staged,
            } => {
                let mut start = 0;
                while start < staged.len() {
                    let items: Vec<(&[u8], SocketAddr)> = staged[start..]
                        .iter()
                        .map(|&(o, l)| (&stage[o..o + l], *peer))
                        .collect();
                    match batch.send_batch(&items) {
                        Ok(n) => start += n.max(1),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            wait_fd(batch.socket().as_raw_fd(), libc::POLLOUT, 10);
                        }
                        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => start += 1,
                        Err(e) => return Err(e),
                    }
                }
                stage.clear();
                staged.clear();
            }
            Link::Stream {
                sock, out, out_pos, ..
            } => {
                while *out_pos < out.len() {
                    match sock.write(&out[*out_pos..]) {
                        Ok(n) => *out_pos += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                if *out_pos == out.len() {
                    out.clear();
                    *out_pos = 0;
                }
            }
        }
        Ok(())
    }

    fn pending_out(&self) -> bool {
        match self {
            Link::Udp { staged, .. } => !staged.is_empty(),
            Link::Stream { out, out_pos, .. } => *out_pos < out.len(),
        }
    }

    /// Reads what is there (bounded) and calls `f` with each packet; returns how many.
    fn recv(&mut self, mut f: impl FnMut(&[u8])) -> io::Result<usize> {
        let mut n = 0;
        match self {
            Link::Udp { batch, .. } => {
                for _ in 0..4 {
                    match batch.recv_batch() {
                        Ok(k) => {
                            for i in 0..k {
                                f(batch.datagram(i).0);
                            }
                            n += k;
                            if k < batch.batch() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => break,
                        Err(e) => return Err(e),
                    }
                }
            }
            Link::Stream { sock, framer, .. } => {
                for _ in 0..4 {
                    match framer.fill_from(sock) {
                        Ok(0) => {
                            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"))
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    }
                    while let Some(p) = framer
                        .next_packet()
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
                    {
                        f(p);
                        n += 1;
                    }
                }
            }
        }
        Ok(n)
    }
}

fn wait_fd(fd: RawFd, events: libc::c_short, timeout_ms: i32) {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe {
        libc::poll(&mut p, 1, timeout_ms);
    }
}

fn wait_any(fds: &[RawFd], timeout_ms: i32) {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: a valid array of pollfds.
    unsafe {
        libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms);
    }
}

/// Workload.
#[derive(Debug, Clone, Copy)]
enum Workload {
    Unique,
    Cached(u64),
}

fn parse_workload(s: &str) -> Result<Workload, String> {
    match s {
        "unique" => Ok(Workload::Unique),
        _ => match s.strip_prefix("cached:").map(str::parse::<u64>) {
            Some(Ok(n)) if n > 0 => Ok(Workload::Cached(n)),
            _ => Err(format!(
                "--workload {s:?}: expected `unique` or `cached:N` with N > 0"
            )),
        },
    }
}

fn push_generic(out: &mut Vec<u8>, v: &[u8]) {
    write_tlv(out, tt::GENERIC_COMPONENT, v);
}

/// Writes the Interest for name number `name_no` into `out`, building its Name and its body in
/// `scratch` (all reused, so the generator does not allocate per packet).
fn write_interest(
    out: &mut Vec<u8>,
    scratch: &mut (Vec<u8>, Vec<u8>),
    run: u64,
    name_no: u64,
    nonce: u32,
    lifetime_ms: u64,
) {
    let (name, body) = scratch;
    name.clear();
    push_generic(name, PREFIX.as_bytes());
    write_nni_tlv(name, tt::GENERIC_COMPONENT, run);
    write_nni_tlv(name, tt::SEQUENCE_NUM, name_no);
    body.clear();
    write_tlv(body, tt::NAME, name);
    write_tlv(body, tt::NONCE, &nonce.to_be_bytes());
    write_nni_tlv(body, tt::INTEREST_LIFETIME, lifetime_ms);
    out.clear();
    write_tlv(out, tt::INTEREST, body);
}

/// The name number of a bench name (its last component), if it is one.
fn name_number(name: &wire::NameView<'_>) -> Option<u64> {
    let c = name.last()?;
    (u32::from(c.typ) == tt::SEQUENCE_NUM).then(|| c.as_number())?
}

struct Producer {
    payload: Vec<u8>,
    data: Vec<u8>,
    signed: Vec<u8>,
    frame: Vec<u8>,
    inner: Vec<u8>,
    rx: Vec<u8>,
    rx_offs: Vec<(usize, usize)>,
    limits: Limits,
}

impl Producer {
    /// Answers one received packet (an Interest, possibly in an LpPacket with a PIT token).
    fn answer(&mut self, pkt: &[u8], link: &mut Link) -> io::Result<bool> {
        let (token, ibytes) = if pkt.first() == Some(&(tt::LP_PACKET as u8)) {
            let Ok(lp) = LpPacketView::decode(pkt, &self.limits) else {
                return Ok(false);
            };
            if lp.nack.is_some() {
                return Ok(false);
            }
            match lp.fragment() {
                Some(f) => (lp.pit_token, f),
                None => return Ok(false),
            }
        } else {
            (None, pkt)
        };
        let Ok(PacketView::Interest(i)) = PacketView::decode(ibytes, &self.limits) else {
            return Ok(false);
        };
        let name = i.name();
        self.signed.clear();
        self.signed.extend_from_slice(name.wire());
        // MetaInfo: FreshnessPeriod 10 s, so cached workloads can be served with MustBeFresh too.
        // FreshnessPeriod (0x19) of 10,000 ms as a 2-byte NNI.
        write_tlv(&mut self.signed, tt::META_INFO, &[0x19, 0x02, 0x27, 0x10]);
        write_tlv(&mut self.signed, tt::CONTENT, &self.payload);
        write_tlv(&mut self.signed, tt::SIGNATURE_INFO, &[0x1b, 0x01, 0x00]);
        let digest = wire::sha256(&[&self.signed]);
        self.data.clear();
        let inner_len = self.signed.len() + 2 + digest.len();
        write_var_number(&mut self.data, u64::from(tt::DATA));
        write_var_number(&mut self.data, inner_len as u64);
        self.data.extend_from_slice(&self.signed);
        write_tlv(&mut self.data, tt::SIGNATURE_VALUE, &digest);
        match token {
            None => link.queue(&self.data)?,
            Some(t) => {
                self.frame.clear();
                self.inner.clear();
                write_tlv(&mut self.inner, tt::LP_PIT_TOKEN, t);
                write_tlv(&mut self.inner, tt::LP_FRAGMENT, &self.data);
                write_tlv(&mut self.frame, tt::LP_PACKET, &self.inner);
                link.queue(&self.frame)?;
            }
        }
        Ok(true)
    }
}

/// What one run measured.
#[derive(Debug, Default, Clone)]
struct RunResult {
    satisfied: u64,
    timeouts: u64,
    nacks: HashMap<String, u64>,
    seconds: f64,
    rtt_us: Vec<u32>,
    produced: u64,
}

impl RunResult {
    fn rate(&self) -> f64 {
        self.satisfied as f64 / self.seconds.max(1e-9)
    }

    fn pct(&mut self, p: f64) -> f64 {
        if self.rtt_us.is_empty() {
            return 0.0;
        }
        self.rtt_us.sort_unstable();
        let i = ((self.rtt_us.len() - 1) as f64 * p).round() as usize;
        f64::from(self.rtt_us[i])
    }
}

struct Gen {
    window: u64,
    workload: Workload,
    lifetime_ms: u64,
    run: u64,
}

/// Runs the generator: `cons` sends Interests, `prod` answers them; `measure` seconds after a
/// one-second warm-up.
fn drive(
    g: &Gen,
    cons: &mut Link,
    prod: &mut Link,
    producer: &mut Producer,
    measure: Duration,
) -> io::Result<RunResult> {
    let limits = Limits::default();
    let mut sent: HashMap<u64, Instant> = HashMap::with_capacity(g.window as usize * 2);
    let mut next: u64 = 0;
    let mut interest = Vec::with_capacity(128);
    let mut scratch = (Vec::with_capacity(64), Vec::with_capacity(128));
    let start = Instant::now();
    let warm = start + Duration::from_secs(1);
    let end = warm + measure;
    let mut r = RunResult::default();
    let mut measuring = false;
    let mut last_sweep = Instant::now();
    let mut nonce: u32 = 0x9e37_79b9 ^ (g.run as u32);
    let fds = [cons.fd(), prod.fd()];
    let lifetime = Duration::from_millis(g.lifetime_ms);
    loop {
        let now = Instant::now();
        if !measuring && now >= warm {
            measuring = true;
            r = RunResult::default();
        }
        if now >= end {
            break;
        }
        // Consumer: fill the window.
        while (sent.len() as u64) < g.window {
            let no = match g.workload {
                Workload::Unique => next,
                Workload::Cached(n) => next % n,
            };
            if sent.contains_key(&no) {
                // A cached name still outstanding: wait for its answer first.
                break;
            }
            next += 1;
            nonce = nonce.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            write_interest(&mut interest, &mut scratch, g.run, no, nonce, g.lifetime_ms);
            cons.queue(&interest)?;
            sent.insert(no, now);
        }
        cons.flush()?;
        // Producer: read and answer.
        let mut err = None;
        let mut work = 0usize;
        let produced = recv_and_answer(prod, producer, &mut err)?;
        if let Some(e) = err {
            return Err(e);
        }
        r.produced += produced as u64;
        work += produced;
        prod.flush()?;
        // Consumer: receive.
        let tnow = Instant::now();
        let got = cons.recv(|p| {
            let (nack, ibytes) = if p.first() == Some(&(tt::LP_PACKET as u8)) {
                match LpPacketView::decode(p, &limits) {
                    Ok(lp) => (lp.nack.map(|n| n.reason), lp.fragment().unwrap_or(&[])),
                    Err(_) => return,
                }
            } else {
                (None, p)
            };
            match PacketView::decode(ibytes, &limits) {
                Ok(PacketView::Data(d)) => {
                    let Some(no) = name_number(&d.name()) else {
                        return;
                    };
                    if let Some(t0) = sent.remove(&no) {
                        if measuring {
                            r.satisfied += 1;
                            r.rtt_us.push(tnow.duration_since(t0).as_micros() as u32);
                        }
                    }
                }
                Ok(PacketView::Interest(i)) => {
                    if let (Some(reason), Some(no)) = (nack, name_number(&i.name())) {
                        if sent.remove(&no).is_some() && measuring {
                            let k = reason.map_or("None".to_string(), |x| format!("{x:?}"));
                            *r.nacks.entry(k).or_default() += 1;
                        }
                    }
                }
                _ => {}
            }
        })?;
        work += got;
        if now.duration_since(last_sweep) > Duration::from_millis(50) {
            last_sweep = now;
            let before = sent.len();
            sent.retain(|_, t0| now.duration_since(*t0) < lifetime);
            if measuring {
                r.timeouts += (before - sent.len()) as u64;
            }
        }
        if work == 0 && !cons.pending_out() && !prod.pending_out() {
            wait_any(&fds, 1);
        }
    }
    r.seconds = measure.as_secs_f64();
    Ok(r)
}

fn recv_and_answer(
    prod: &mut Link,
    producer: &mut Producer,
    err: &mut Option<io::Error>,
) -> io::Result<usize> {
    // Collect packets first (the link is borrowed by recv), then answer on the same link; the
    // buffers are the producer's and are reused.
    let mut pkts = std::mem::take(&mut producer.rx);
    let mut offs = std::mem::take(&mut producer.rx_offs);
    pkts.clear();
    offs.clear();
    let r = prod.recv(|p| {
        offs.push((pkts.len(), p.len()));
        pkts.extend_from_slice(p);
    });
    let mut n = 0;
    if r.is_ok() {
        for &(o, l) in &offs {
            match producer.answer(&pkts[o..o + l], prod) {
                Ok(true) => n += 1,
                Ok(false) => {}
                Err(e) => {
                    *err = Some(e);
                    break;
                }
            }
        }
    }
    producer.rx = pkts;
    producer.rx_offs = offs;
    r.map(|_| n)
}

/// Creates a UDP face to the producer's socket and routes `/bench` to it, through the router's
/// Unix socket (what an operator does with `nfdc face create` and `nfdc route add`).
fn route_to_udp_producer(mgmt: &std::path::Path, prod: &Link) -> Result<(), String> {
    let Link::Udp { batch, .. } = prod else {
        return Err("not a UDP link".into());
    };
    let local = batch.socket().local_addr().map_err(|e| e.to_string())?;
    let uri = client::transport::TransportUri::Unix(mgmt.to_path_buf());
    let mut face = client::Face::connect(&uri).map_err(|e| e.to_string())?;
    let mut c = client::control::Controller::new(&mut face);
    let created = c
        .command(
            "faces",
            "create",
            &wire::nfd::ControlParameters {
                uri: Some(format!("udp4://{local}")),
                ..Default::default()
            },
        )
        .map_err(|e| format!("faces/create: {e}"))?;
    let id = created
        .face_id
        .ok_or("faces/create: no FaceId in the answer")?;
    c.command(
        "rib",
        "register",
        &wire::nfd::ControlParameters {
            name: wire::Name::from_uri("/bench").ok(),
            face_id: Some(id),
            origin: Some(client::control::ORIGIN_STATIC),
            ..Default::default()
        },
    )
    .map_err(|e| format!("rib/register: {e}"))?;
    Ok(())
}

/// Registers `/bench` from the producer's (local) link and waits for a 200.
fn register(prod: &mut Link) -> Result<(), String> {
    let params =
        client::control::register_params(&wire::Name::from_uri("/bench").unwrap_or_default());
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let i =
        client::control::command_interest("rib", "register", &params, now_ms, [7; 8], [1, 2, 3, 4]);
    prod.queue(&i.to_wire()).map_err(|e| e.to_string())?;
    prod.flush().map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let limits = Limits::default();
    while Instant::now() < deadline {
        wait_fd(prod.fd(), libc::POLLIN, 100);
        let mut status = None;
        prod.recv(|p| {
            let bytes = if p.first() == Some(&(tt::LP_PACKET as u8)) {
                match LpPacketView::decode(p, &limits) {
                    Ok(lp) => lp.fragment().unwrap_or(&[]),
                    Err(_) => return,
                }
            } else {
                p
            };
            if let Ok(PacketView::Data(d)) = PacketView::decode(bytes, &limits) {
                if let Ok(r) = wire::nfd::ControlResponse::decode(d.content().unwrap_or(&[])) {
                    status = Some((r.status_code, r.status_text));
                }
            }
        })
        .map_err(|e| e.to_string())?;
        match status {
            Some((200, _)) => return Ok(()),
            Some((c, t)) => return Err(format!("rib/register answered {c} {t}")),
            None => {}
        }
    }
    Err("rib/register: no answer within 5 s".into())
}

fn thread_cpu_seconds(prefix: &str) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut total = 0u64;
    for e in dir.flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if !comm.trim().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // Fields after the command (which is in parentheses): utime is 14th, stime 15th overall.
        if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ut: u64 = f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0);
            let st: u64 = f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0);
            total += ut + st;
        }
    }
    total as f64 / hz
}

fn connect(
    kind: FaceKind,
    unix: Option<&PathBuf>,
    udp: Option<SocketAddr>,
) -> Result<Link, String> {
    match kind {
        FaceKind::Udp => {
            let a = udp.ok_or("the router has no UDP listener")?;
            Link::udp(a).map_err(|e| format!("udp: {e}"))
        }
        FaceKind::Unix => {
            let p = unix.ok_or("the router has no Unix listener")?;
            let s = UnixStream::connect(p).map_err(|e| format!("connect {}: {e}", p.display()))?;
            Link::stream(s).map_err(|e| e.to_string())
        }
    }
}

/// Runs `cascade bench forward`.
pub fn run(args: &ForwardBenchArgs) -> Result<(), String> {
    let workload = parse_workload(&args.workload)?;
    if !(args.duration > 0.0 && args.duration <= 3600.0) {
        return Err(format!(
            "--duration {}: must be in (0, 3600] seconds",
            args.duration
        ));
    }
    let measure = Duration::from_secs_f64(args.duration);
    let run_id = std::process::id() as u64 ^ (Instant::now().elapsed().as_nanos() as u64);
    let g = Gen {
        window: args.window,
        workload,
        lifetime_ms: args.lifetime_ms.max(10),
        run: run_id & 0xFFFF_FFFF,
    };
    // Ceiling: consumer straight to producer, same code, no router.
    let ceiling = if args.no_ceiling {
        None
    } else {
        Some(measure_ceiling(args, &g, measure)?)
    };
    // The router: started here, or attached to.
    let Endpoints { unix, udp, started } = router_endpoints(args)?;
    let mut cons = connect(args.face, unix.as_ref(), udp)?;
    let mut prod = connect(args.face, unix.as_ref(), udp)?;
    match args.face {
        FaceKind::Unix => register(&mut prod)?,
        FaceKind::Udp => {
            let mgmt = unix.clone().unwrap_or_else(|| args.mgmt.clone());
            route_to_udp_producer(&mgmt, &prod)?;
        }
    }
    let cpu0 = thread_cpu_seconds("cascade-");
    let mut result =
        drive(&g, &mut cons, &mut prod, &mut producer(args), measure).map_err(|e| e.to_string());
    let cpu1 = thread_cpu_seconds("cascade-");
    let (drops, workers) = match started {
        Some((r, dir)) => stop_router(r, dir),
        None => (Vec::new(), 0),
    };
    let res = result.as_mut().map_err(|e| e.clone())?.clone();
    let router_cpu_s = cpu1 - cpu0;
    let cpu_us = if res.satisfied > 0 && args.attach.is_none() {
        Some(router_cpu_s * 1e6 / res.satisfied as f64)
    } else {
        None
    };
    let report = Report {
        args,
        res,
        ceiling,
        drops,
        workers,
        cpu_us,
    };
    if args.json {
        report.print_json();
    } else {
        report.print_text();
    }
    Ok(())
}

/// The generator's producer end, with its buffers.
fn producer(args: &ForwardBenchArgs) -> Producer {
    Producer {
        payload: vec![0x5a; args.payload as usize],
        data: Vec::with_capacity(9000),
        signed: Vec::with_capacity(9000),
        frame: Vec::with_capacity(9000),
        inner: Vec::with_capacity(9000),
        rx: Vec::with_capacity(1 << 20),
        rx_offs: Vec::with_capacity(1024),
        limits: Limits::default(),
    }
}

/// The generator's own ceiling: its consumer straight to its producer (unique names), no
/// router.
fn measure_ceiling(
    args: &ForwardBenchArgs,
    g: &Gen,
    measure: Duration,
) -> Result<RunResult, String> {
    let (mut c, mut p) = match args.face {
        FaceKind::Udp => Link::udp_pair().map_err(|e| e.to_string())?,
        FaceKind::Unix => {
            let (a, b) = UnixStream::pair().map_err(|e| e.to_string())?;
            (
                Link::stream(a).map_err(|e| e.to_string())?,
                Link::stream(b).map_err(|e| e.to_string())?,
            )
        }
    };
    let g2 = Gen {
        workload: Workload::Unique,
        ..*g
    };
    drive(&g2, &mut c, &mut p, &mut producer(args), measure).map_err(|e| e.to_string())
}

/// Where the router listens.
struct Endpoints {
    unix: Option<PathBuf>,
    udp: Option<SocketAddr>,
    /// The router started here and its directory (none with `--attach`).
    started: Option<(router::Router, PathBuf)>,
}

/// The router's Unix and UDP listeners: those of `--attach`, or of a router started here (in
/// a temporary directory).
fn router_endpoints(args: &ForwardBenchArgs) -> Result<Endpoints, String> {
    match &args.attach {
        Some(uri) => {
            if let Some(p) = uri.strip_prefix("unix://") {
                if args.face != FaceKind::Unix {
                    return Err("--attach unix://... needs --face unix".into());
                }
                Ok(Endpoints {
                    unix: Some(PathBuf::from(p)),
                    udp: None,
                    started: None,
                })
            } else if let Some(a) = uri.strip_prefix("udp://") {
                if args.face != FaceKind::Udp {
                    return Err("--attach udp://... needs --face udp".into());
                }
                let a: SocketAddr = a
                    .parse()
                    .map_err(|_| format!("--attach {uri}: bad address"))?;
                Ok(Endpoints {
                    unix: None,
                    udp: Some(a),
                    started: None,
                })
            } else {
                Err(format!(
                    "--attach {uri}: expected unix:///path or udp://host:port"
                ))
            }
        }
        None => {
            let dir = std::env::temp_dir().join(format!("cascade-bench-{}", std::process::id()));
            let _ = std::fs::create_dir_all(&dir);
            let mut cfg = router::Config::default();
            cfg.listen.unix = dir.join("nfd.sock").display().to_string();
            cfg.listen.tcp = String::new();
            cfg.listen.udp = "127.0.0.1:0".into();
            if let Some(w) = args.workers {
                cfg.workers.count = w;
            }
            let r = router::Router::start(&cfg)?;
            let b = r.bound().clone();
            Ok(Endpoints {
                unix: b.unix,
                udp: b.udp,
                started: Some((r, dir)),
            })
        }
    }
}

/// Stops a router started here and removes its directory; returns its drops by reason and
/// its worker count.
fn stop_router(r: router::Router, dir: PathBuf) -> (Vec<(String, u64)>, usize) {
    let mut drops: Vec<(String, u64)> = Vec::new();
    let workers = r.workers();
    let snaps = r.snapshots();
    for reason in engine::fw::pipeline::DropReason::ALL {
        let n: u64 = snaps.iter().map(|s| s.counters.drops[reason.index()]).sum();
        if n > 0 {
            drops.push((format!("{reason:?}"), n));
        }
    }
    let ring = r.input_ring_full();
    if ring > 0 {
        drops.push(("InputRingFull".into(), ring));
    }
    let out_full: u64 = snaps
        .iter()
        .map(|s| s.out_ring_full + s.out_no_buffer)
        .sum();
    if out_full > 0 {
        drops.push(("OutputRingFull".into(), out_full));
    }
    r.stop_handle().stop();
    r.join();
    let _ = std::fs::remove_dir_all(dir);
    (drops, workers)
}

/// What `cascade bench forward` reports.
struct Report<'a> {
    args: &'a ForwardBenchArgs,
    res: RunResult,
    ceiling: Option<RunResult>,
    drops: Vec<(String, u64)>,
    workers: usize,
    /// Router CPU time per satisfied Interest (a router started here only).
    cpu_us: Option<f64>,
}

impl Report<'_> {
    fn face(&self) -> &'static str {
        match self.args.face {
            FaceKind::Udp => "udp",
            FaceKind::Unix => "unix",
        }
    }

    fn print_json(mut self) {
        let args = self.args;
        let rate = self.res.rate();
        let res = &mut self.res;
        let (p50, p90, p99, max) = (res.pct(0.5), res.pct(0.9), res.pct(0.99), res.pct(1.0));
        let v = serde_json::json!({
            "face": self.face(),
            "workload": args.workload,
            "window": args.window,
            "payload_bytes": args.payload,
            "duration_s": self.res.seconds,
            "workers": self.workers,
            "satisfied_per_s": rate,
            "satisfied": self.res.satisfied,
            "timeouts": self.res.timeouts,
            "nacks": self.res.nacks,
            "router_drops": self.drops.iter().cloned().collect::<HashMap<String, u64>>(),
            "rtt_us": {"p50": p50, "p90": p90, "p99": p99, "max": max},
            "router_cpu_us_per_interest": self.cpu_us,
            "ceiling_per_s": self.ceiling.as_ref().map(RunResult::rate),
            "ceiling_timeouts": self.ceiling.as_ref().map(|c| c.timeouts),
        });
        println!("{v}");
    }

    fn print_text(mut self) {
        let args = self.args;
        let face = self.face();
        let rate = self.res.rate();
        let res = &mut self.res;
        let (p50, p90, p99, max) = (res.pct(0.5), res.pct(0.9), res.pct(0.99), res.pct(1.0));
        let res = &self.res;
        println!(
            "bench forward: face {face}, workload {}, window {}, payload {} B, {:.1} s, {} worker(s)",
            args.workload, args.window, args.payload, res.seconds, self.workers
        );
        println!(
            "  satisfied      {:>12.0} Interests/s ({} in total)",
            rate, res.satisfied
        );
        println!("  timeouts       {:>12}", res.timeouts);
        let nacks: Vec<String> = res.nacks.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!(
            "  nacks          {:>12}",
            if nacks.is_empty() {
                "0".into()
            } else {
                nacks.join(", ")
            }
        );
        let d: Vec<String> = self.drops.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!(
            "  router drops   {:>12}",
            if d.is_empty() {
                "0".into()
            } else {
                d.join(", ")
            }
        );
        println!("  RTT us         p50 {p50:.0}  p90 {p90:.0}  p99 {p99:.0}  max {max:.0}");
        if let Some(c) = self.cpu_us {
            println!("  router CPU     {c:>12.2} us per satisfied Interest");
        }
        if let Some(c) = self.ceiling.as_ref().map(RunResult::rate) {
            println!(
                "  ceiling        {:>12.0} exchanges/s (generator consumer -> producer, no router)",
                c
            );
        }
    }
}
