//! The legitimate side of an attack run: a producer app and a sink app on Unix faces behind the
//! router, a consumer fetching through it at a fixed window, and probes that open a new face
//! now and then (a new UDP remote, a new Unix connection) to see whether the router still
//! takes one.
//!
//! Each runs on a thread of its own with the blocking [`client::Face`], and counts what it got
//! in shared atomics that the run reads at the phase boundaries.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use client::{Consumer, Face, Outcome, Received, TransportUri};
use wire::data::MetaInfo;
use wire::{Data, Interest, Name};

use super::child::RouterChild;

/// The prefix the producer serves.
pub(super) const PRODUCER_PREFIX: &str = "/bench";
/// Names under the producer's prefix answered with [`BIG_PAYLOAD_BYTES`] of content (the
/// reflection attack's CS entries).
pub(super) const BIG: &str = "big";
/// Content bytes of a Data under `/bench/big`: close to the largest a packet carries.
pub(super) const BIG_PAYLOAD_BYTES: usize = 8000;
/// The prefix the sink registers and never answers (the PIT attack's Interests wait there).
pub(super) const SINK_PREFIX: &str = "/sink";
/// The UDP MTU of the consumer and the probes (the router's default).
const MTU: usize = router::config::DEFAULT_UDP_MTU;
/// One probe every this long.
const PROBE_EVERY: Duration = Duration::from_millis(250);
/// Lifetime of a probe's Interest.
const PROBE_LIFETIME_MS: u64 = 1000;
/// How long a receive loop waits before it looks at the stop flag again.
const POLL: Duration = Duration::from_millis(50);

/// The legitimate consumer's face kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LegitFace {
    /// UDP from 127.0.0.1: an on-demand face, in the quota the attackers compete for.
    Udp,
    /// A Unix stream socket: a local face.
    Unix,
}

/// How the legitimate consumer fetches.
#[derive(Clone, Copy, Debug)]
pub(super) struct LegitOptions {
    pub(super) face: LegitFace,
    /// Interests outstanding at most.
    pub(super) window: usize,
    /// Interests per second at most (`None`: as fast as the window allows).
    pub(super) rate: Option<f64>,
    /// InterestLifetime of the consumer's Interests.
    pub(super) lifetime_ms: u64,
}

/// What the legitimate side counted so far.
#[derive(Default)]
pub(super) struct Counters {
    satisfied: AtomicU64,
    timeouts: AtomicU64,
    nacks: AtomicU64,
    probe_udp_sent: AtomicU64,
    probe_udp_ok: AtomicU64,
    probe_unix_sent: AtomicU64,
    probe_unix_ok: AtomicU64,
}

/// A copy of [`Counters`] at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Snapshot {
    pub(super) satisfied: u64,
    pub(super) timeouts: u64,
    pub(super) nacks: u64,
    pub(super) probe_udp_sent: u64,
    pub(super) probe_udp_ok: u64,
    pub(super) probe_unix_sent: u64,
    pub(super) probe_unix_ok: u64,
}

impl std::ops::Sub for Snapshot {
    type Output = Snapshot;

    fn sub(self, o: Snapshot) -> Snapshot {
        Snapshot {
            satisfied: self.satisfied - o.satisfied,
            timeouts: self.timeouts - o.timeouts,
            nacks: self.nacks - o.nacks,
            probe_udp_sent: self.probe_udp_sent - o.probe_udp_sent,
            probe_udp_ok: self.probe_udp_ok - o.probe_udp_ok,
            probe_unix_sent: self.probe_unix_sent - o.probe_unix_sent,
            probe_unix_ok: self.probe_unix_ok - o.probe_unix_ok,
        }
    }
}

impl Counters {
    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            satisfied: self.satisfied.load(Relaxed),
            timeouts: self.timeouts.load(Relaxed),
            nacks: self.nacks.load(Relaxed),
            probe_udp_sent: self.probe_udp_sent.load(Relaxed),
            probe_udp_ok: self.probe_udp_ok.load(Relaxed),
            probe_unix_sent: self.probe_unix_sent.load(Relaxed),
            probe_unix_ok: self.probe_unix_ok.load(Relaxed),
        }
    }
}

/// The producer and the sink, registered and serving.
pub(super) struct Apps {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<(), String>>>,
}

/// The consumer and the probes, running.
pub(super) struct Traffic {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<(), String>>>,
    pub(super) counters: Arc<Counters>,
}

/// Stops `threads` and returns the first error one of them ended with.
fn join_all(stop: &AtomicBool, threads: Vec<JoinHandle<Result<(), String>>>) -> Result<(), String> {
    stop.store(true, Relaxed);
    let mut first = Ok(());
    for t in threads {
        let r = t.join().unwrap_or_else(|_| Err("a thread panicked".into()));
        if first.is_ok() {
            first = r;
        }
    }
    first
}

impl Apps {
    /// Connects the producer (`/bench`) and the sink (`/sink`) to the router's Unix socket and
    /// registers their prefixes.
    pub(super) fn start(router: &RouterChild, payload: usize) -> Result<Apps, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let uri = TransportUri::Unix(router.unix.clone());
        let connect_and_register = |prefix: &str| -> Result<Face, String> {
            let mut f = Face::connect(&uri).map_err(|e| e.to_string())?;
            let name = Name::from_uri(prefix).map_err(|e| e.to_string())?;
            f.register(&name)
                .map_err(|e| format!("register {prefix}: {e}"))?;
            Ok(f)
        };
        let mut producer = connect_and_register(PRODUCER_PREFIX)?;
        let mut sink = connect_and_register(SINK_PREFIX)?;
        let s1 = Arc::clone(&stop);
        let s2 = Arc::clone(&stop);
        let threads = vec![
            spawn("attack-producer", move || {
                produce(&mut producer, payload, &s1)
            })?,
            spawn("attack-sink", move || drain(&mut sink, &s2))?,
        ];
        Ok(Apps { stop, threads })
    }

    /// Stops the apps; an error if one of them failed.
    pub(super) fn stop(self) -> Result<(), String> {
        join_all(&self.stop, self.threads)
    }
}

impl Traffic {
    /// Starts the consumer and the probes against `router`. `run` makes the names unique.
    pub(super) fn start(
        router: &RouterChild,
        opts: LegitOptions,
        run: u64,
    ) -> Result<Traffic, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let mut face = match opts.face {
            LegitFace::Udp => udp_face(Ipv4Addr::LOCALHOST, router.udp)?,
            LegitFace::Unix => Face::connect(&TransportUri::Unix(router.unix.clone()))
                .map_err(|e| e.to_string())?,
        };
        let (s1, c1) = (Arc::clone(&stop), Arc::clone(&counters));
        let (s2, c2) = (Arc::clone(&stop), Arc::clone(&counters));
        let (unix, udp) = (router.unix.clone(), router.udp);
        let threads = vec![
            spawn("attack-consumer", move || {
                consume(&mut face, opts, run, &s1, &c1)
            })?,
            spawn("attack-probe", move || {
                probe(&unix, udp, run, &s2, &c2);
                Ok(())
            })?,
        ];
        Ok(Traffic {
            stop,
            threads,
            counters,
        })
    }

    /// Stops the consumer and the probes; an error if the consumer failed.
    pub(super) fn stop(self) -> Result<(), String> {
        join_all(&self.stop, self.threads)
    }
}

/// A SequenceNum component (not a segment, so that names spread over the workers).
pub(super) fn seq_component(n: u64) -> wire::Component {
    wire::Component::number(wire::tt::SEQUENCE_NUM as u16, n)
}

fn spawn(
    name: &str,
    f: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Result<JoinHandle<Result<(), String>>, String> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|e| e.to_string())
}

/// A UDP face from `local` (any port) to `router`.
pub(super) fn udp_face(local: Ipv4Addr, router: SocketAddr) -> Result<Face, String> {
    let s =
        UdpSocket::bind(SocketAddrV4::new(local, 0)).map_err(|e| format!("bind {local}: {e}"))?;
    s.connect(router).map_err(|e| e.to_string())?;
    Face::from_udp_socket(s, MTU, format!("udp4://{router}")).map_err(|e| e.to_string())
}

/// The Data the producer answers an Interest for `name` with: `payload` bytes of content, or
/// [`BIG_PAYLOAD_BYTES`] under `/bench/big`, fresh for 10 s, signed DigestSha256.
pub(super) fn answer(name: &Name, payload: usize) -> Vec<u8> {
    let big = name
        .components
        .get(1)
        .is_some_and(|c| c.value.as_slice() == BIG.as_bytes());
    let n = if big { BIG_PAYLOAD_BYTES } else { payload };
    let mut d = Data::new(name.clone(), vec![0x5a; n]);
    d.meta_info = Some(MetaInfo {
        freshness_ms: Some(10_000),
        ..MetaInfo::default()
    });
    d.sign_digest_sha256();
    d.to_wire()
}

fn produce(face: &mut Face, payload: usize, stop: &AtomicBool) -> Result<(), String> {
    while !stop.load(Relaxed) {
        match face.recv(POLL) {
            Ok(Some(Received::Interest(i))) => {
                let d = answer(&i.interest.name, payload);
                face.put_data(&d, i.pit_token)
                    .map_err(|e| format!("producer: {e}"))?;
            }
            Ok(_) => {}
            Err(e) => return Err(format!("producer: {e}")),
        }
    }
    Ok(())
}

fn drain(face: &mut Face, stop: &AtomicBool) -> Result<(), String> {
    while !stop.load(Relaxed) {
        face.recv(POLL).map_err(|e| format!("sink: {e}"))?;
    }
    Ok(())
}

/// The consumer: unique names `/bench/legit/<run>/<n>`, at most `window` outstanding and, with
/// a rate, at most `rate` sent per second (a stall earns no more than a window of credit).
fn consume(
    face: &mut Face,
    opts: LegitOptions,
    run: u64,
    stop: &AtomicBool,
    c: &Counters,
) -> Result<(), String> {
    let prefix = Name::from_uri(PRODUCER_PREFIX)
        .map_err(|e| e.to_string())?
        .with_str("legit")
        .with(wire::Component::generic(run.to_be_bytes()));
    let mut cons = Consumer::new(face, opts.window);
    let t0 = Instant::now();
    let (mut seq, mut sent) = (0u64, 0u64);
    let window = opts.window as u64;
    while !stop.load(Relaxed) {
        let allowed;
        (sent, allowed) = pace(opts.rate, t0.elapsed().as_secs_f64(), window, sent);
        while cons.outstanding() < opts.window && sent < allowed {
            let name = prefix.clone().with(seq_component(seq));
            let mut i = Interest::new(name, client::random_nonce());
            i.lifetime_ms = Some(opts.lifetime_ms);
            cons.express(i).map_err(|e| format!("consumer: {e}"))?;
            seq += 1;
            sent += 1;
        }
        if cons.outstanding() == 0 {
            std::thread::sleep(Duration::from_micros(500));
            continue;
        }
        match cons.next_outcome().map_err(|e| format!("consumer: {e}"))? {
            Some((_, Outcome::Data(_))) => c.satisfied.fetch_add(1, Relaxed),
            Some((_, Outcome::Nack(_))) => c.nacks.fetch_add(1, Relaxed),
            Some((_, Outcome::Timeout)) => c.timeouts.fetch_add(1, Relaxed),
            None => 0,
        };
    }
    Ok(())
}

/// The consumer's pacing: with `sent` Interests sent `elapsed_s` seconds after it started, how
/// many it may have sent by now at `rate` per second (none: no limit), and `sent` raised so
/// that a stall earns at most a `window` of credit. Returns (sent, allowed).
fn pace(rate: Option<f64>, elapsed_s: f64, window: u64, sent: u64) -> (u64, u64) {
    match rate {
        Some(r) => {
            let due = (elapsed_s * r) as u64 + 1;
            (sent.max(due.saturating_sub(window)), due)
        }
        None => (sent, u64::MAX),
    }
}

/// Every [`PROBE_EVERY`], a new face asks for one new name: a UDP socket from a new address of
/// 127.2.0.0/16 (so that no per-host limit applies to the probes), then a new Unix connection,
/// in turn. A probe counts as good when Data comes back within its lifetime.
fn probe(unix: &std::path::Path, udp: SocketAddr, run: u64, stop: &AtomicBool, c: &Counters) {
    let mut n: u64 = 0;
    let mut next = Instant::now();
    while !stop.load(Relaxed) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(POLL));
            continue;
        }
        next += PROBE_EVERY;
        n += 1;
        let name = Name::from_uri(PRODUCER_PREFIX)
            .unwrap_or_default()
            .with_str("probe")
            .with(wire::Component::generic(run.to_be_bytes()))
            .with(seq_component(n));
        let mut i = Interest::new(name, client::random_nonce());
        i.lifetime_ms = Some(PROBE_LIFETIME_MS);
        let udp_turn = n % 2 == 0;
        let face = if udp_turn {
            let host = (n / 2) as u16;
            udp_face(Ipv4Addr::new(127, 2, (host >> 8) as u8, host as u8), udp)
        } else {
            Face::connect(&TransportUri::Unix(unix.to_path_buf())).map_err(|e| e.to_string())
        };
        let ok = face.is_ok_and(|mut f| matches!(f.express(&i), Ok(Outcome::Data(_))));
        // Counted when it ends, so that a phase counts the probes it saw end.
        let (sent, good) = if udp_turn {
            (&c.probe_udp_sent, &c.probe_udp_ok)
        } else {
            (&c.probe_unix_sent, &c.probe_unix_ok)
        };
        sent.fetch_add(1, Relaxed);
        good.fetch_add(u64::from(ok), Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_names_get_big_data_and_others_the_payload() {
        let small = Name::from_uri("/bench/legit/1").unwrap();
        let big = Name::from_uri("/bench/big/7").unwrap();
        let lim = wire::Limits::default();
        let d = |w: &[u8]| {
            wire::DataView::decode(w, &lim)
                .unwrap()
                .content()
                .unwrap()
                .len()
        };
        assert_eq!(d(&answer(&small, 100)), 100);
        assert_eq!(d(&answer(&big, 100)), BIG_PAYLOAD_BYTES);
        assert!(answer(&big, 100).len() <= wire::MAX_NDN_PACKET_BYTES);
    }

    #[test]
    fn pacing_allows_the_rate_with_a_window_of_credit_at_most() {
        // Unpaced: always allowed, whatever was sent.
        assert_eq!(pace(None, 10.0, 16, 1_000_000), (1_000_000, u64::MAX));
        // 100/s: 1 s in, 101 due; nothing sent yet after a stall: credit of one window.
        assert_eq!(pace(Some(100.0), 1.0, 16, 0), (85, 101));
        // On pace: unchanged.
        assert_eq!(pace(Some(100.0), 1.0, 16, 100), (100, 101));
        // Ahead (cannot happen, but harmless): nothing more allowed.
        let (sent, allowed) = pace(Some(100.0), 1.0, 16, 200);
        assert!(sent >= allowed);
    }

    #[test]
    fn snapshots_subtract_field_by_field() {
        let a = Snapshot {
            satisfied: 10,
            timeouts: 2,
            probe_udp_ok: 3,
            ..Snapshot::default()
        };
        let b = Snapshot {
            satisfied: 4,
            timeouts: 1,
            probe_udp_ok: 1,
            ..Snapshot::default()
        };
        let d = a - b;
        assert_eq!((d.satisfied, d.timeouts, d.probe_udp_ok), (6, 1, 2));
    }
}
