//! The consumer: a trace of unique names sent over UDP at a fixed rate (open loop, as Pan et
//! al.'s host sends its 100 kpps), every Interest timed to its Data.
//!
//! Interests are encoded before the trace starts and sent in `sendmmsg` batches as they fall
//! due; answers are read with `recvmmsg`. Each name is asked once, so an answer is matched to
//! its Interest by name alone. An Interest unanswered for its lifetime is a timeout. The trace
//! ends when every Interest is answered, Nacked or timed out, or on the stop flag.
//!
//! With congestion control ([`Trace::aimd`]), the rate is a ceiling and an AIMD window
//! ([`client::aimd::Aimd`], the window of `cascade get`) bounds the Interests in flight: +1 per
//! window of unmarked Data (slow start first), halved on a Data with a CongestionMark or a
//! timeout, at most once per RTT (a signal about an Interest sent before the last decrease is
//! ignored: every Interest's serial is its place in the trace).

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use client::aimd::{Aimd, AimdOptions};
use face::udp::UdpBatch;
use wire::{tt, Interest, Limits, LpPacketView, PacketView};

use super::catalogue::Catalogue;

/// Interests per `sendmmsg`.
const SEND_BATCH: usize = 64;

/// Receive batches read per loop turn at most.
const RECV_TURNS: usize = 16;

/// The consumer's socket buffers (past the system's caps where permitted).
const RCVBUF_BYTES: libc::c_int = 8 << 20;

/// Not sent yet, or answered: no send time.
const IDLE: u64 = u64::MAX;

/// What one trace measured.
#[derive(Debug, Clone, Default)]
pub struct TraceResult {
    /// Interests sent.
    pub sent: u64,
    /// Seconds from the first Interest to the last one sent.
    pub send_seconds: f64,
    /// Data received for Interests outstanding.
    pub received: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Interests unanswered for their lifetime.
    pub timeouts: u64,
    /// Data carrying a CongestionMark.
    pub marked: u64,
    /// Seconds from the first Data to the last.
    pub data_seconds: f64,
    /// Seconds from the first Interest sent to the first Data.
    pub first_data_seconds: f64,
    /// Round-trip times of the answered Interests, µs.
    pub rtt_us: Vec<u32>,
    /// Times the AIMD window was halved (0 without congestion control).
    pub window_decreases: u64,
    /// The largest AIMD window reached (0 without congestion control).
    pub window_max: u64,
}

impl TraceResult {
    /// Interests per second offered (sent over the sending time).
    pub fn offered_pps(&self) -> f64 {
        if self.send_seconds > 0.0 {
            self.sent as f64 / self.send_seconds
        } else {
            self.sent as f64
        }
    }

    /// Data per second, as Pan et al. measure it: Data received over the time between the
    /// first and the last. When every Data came in one receive batch (a short run on a busy
    /// machine), over the time from the first Interest to that batch instead.
    pub fn throughput_pps(&self) -> f64 {
        if self.received >= 2 && self.data_seconds > 0.0 {
            (self.received - 1) as f64 / self.data_seconds
        } else if self.received > 0 && self.first_data_seconds > 0.0 {
            self.received as f64 / self.first_data_seconds
        } else {
            0.0
        }
    }

    /// Mean, median and 99th percentile of the RTT, ms (zeros without any answer).
    pub fn rtt_ms(&self) -> (f64, f64, f64) {
        if self.rtt_us.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        let mut v = self.rtt_us.clone();
        v.sort_unstable();
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        let at = |p: f64| f64::from(v[((v.len() - 1) as f64 * p).round() as usize]) / 1000.0;
        (mean / 1000.0, at(0.5), at(0.99))
    }
}

/// A trace: which chunks, in which order.
#[derive(Debug, Clone)]
pub struct Trace {
    /// Chunk numbers in sending order, each once.
    pub chunks: Vec<u64>,
    /// Interests per second.
    pub rate_pps: u64,
    /// InterestLifetime.
    pub lifetime_ms: u64,
    /// The consumer's AIMD window, if it runs congestion control.
    pub aimd: Option<AimdOptions>,
}

/// The consumer's AIMD window: slow start from 2 Interests, halving on a signal; no ceiling of
/// its own beyond the trace's rate, so that only the congestion control limits it.
pub fn consumer_aimd() -> AimdOptions {
    AimdOptions {
        max_cwnd: f64::from(1u32 << 20),
        ..AimdOptions::default()
    }
}

impl Trace {
    /// `n` distinct chunks of a catalogue of `total`, drawn at random (a partial
    /// Fisher-Yates shuffle seeded by `seed`).
    pub fn draw(total: u64, n: u64, seed: u64, rate_pps: u64, lifetime_ms: u64) -> Trace {
        let mut all: Vec<u64> = (0..total).collect();
        let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
        let n = n.min(total) as usize;
        for i in 0..n {
            x = splitmix(x);
            let j = i + (x % (total - i as u64)) as usize;
            all.swap(i, j);
        }
        all.truncate(n);
        Trace {
            chunks: all,
            rate_pps,
            lifetime_ms,
            aimd: None,
        }
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Opens the consumer's socket (in the calling thread's network namespace).
pub fn socket(bind: SocketAddr) -> io::Result<UdpBatch> {
    let s = UdpSocket::bind(bind)?;
    s.set_nonblocking(true)?;
    face::table::set_socket_buffer_bytes(&s, RCVBUF_BYTES, true);
    UdpBatch::with_capacity(s, SEND_BATCH, 9000)
}

/// The trace's state while it runs.
struct Run<'a> {
    cat: &'a Catalogue,
    /// Send time (ns from the start) per chunk of the catalogue, or [`IDLE`].
    sent_at: Vec<u64>,
    /// Place in the trace (from 1) per chunk of the catalogue: its serial for the window.
    serial: Vec<u64>,
    /// Interests sent so far (the newest serial).
    sent: u64,
    /// The AIMD window, with congestion control.
    window: Option<Aimd>,
    outstanding: u64,
    first_data: Option<Instant>,
    last_data: Option<Instant>,
    r: TraceResult,
}

impl Run<'_> {
    /// A congestion signal about chunk `k` (a marked Data or a timeout).
    fn congestion(&mut self, k: u64) {
        if let Some(w) = self.window.as_mut() {
            if w.on_congestion(self.serial[k as usize], self.sent) {
                self.r.window_decreases += 1;
            }
        }
    }

    /// Times out the Interests of `chunks` (the trace sent so far) from `oldest` on that were
    /// sent at or before `before_ns` (sent in order, so they expire in order); returns the new
    /// oldest.
    fn expire(&mut self, chunks: &[u64], mut oldest: usize, before_ns: u64) -> usize {
        while let Some(&k) = chunks.get(oldest) {
            let t0 = self.sent_at[k as usize];
            if t0 != IDLE {
                if t0 > before_ns {
                    break;
                }
                self.sent_at[k as usize] = IDLE;
                self.outstanding -= 1;
                self.r.timeouts += 1;
                self.congestion(k);
            }
            oldest += 1;
        }
        oldest
    }

    /// How many more Interests the window lets out now (unbounded without one).
    fn room(&self) -> usize {
        self.window.as_ref().map_or(usize::MAX, |w| {
            w.window().saturating_sub(self.outstanding as usize)
        })
    }

    fn on_packet(&mut self, p: &[u8], start: Instant, now: Instant, limits: &Limits) {
        let (mark, nack, bytes) = if p.first() == Some(&(tt::LP_PACKET as u8)) {
            match LpPacketView::decode(p, limits) {
                Ok(lp) => (
                    lp.congestion_mark.unwrap_or(0),
                    lp.nack.is_some(),
                    lp.fragment().unwrap_or(&[]),
                ),
                Err(_) => return,
            }
        } else {
            (0, false, p)
        };
        let (name, is_data) = match PacketView::decode(bytes, limits) {
            Ok(PacketView::Data(d)) => (d.name(), true),
            Ok(PacketView::Interest(i)) if nack => (i.name(), false),
            _ => return,
        };
        let Some(k) = self.cat.index_of(&name) else {
            return;
        };
        let t0 = std::mem::replace(&mut self.sent_at[k as usize], IDLE);
        if t0 == IDLE {
            return; // answered already, or timed out
        }
        self.outstanding -= 1;
        if !is_data {
            self.r.nacks += 1;
            return;
        }
        let rtt_ns = (now - start).as_nanos() as u64 - t0;
        self.r.received += 1;
        self.r.marked += u64::from(mark > 0);
        if mark > 0 {
            self.congestion(k);
        } else if let Some(w) = self.window.as_mut() {
            w.on_data();
            self.r.window_max = self.r.window_max.max(w.window() as u64);
        }
        self.r
            .rtt_us
            .push((rtt_ns / 1000).min(u64::from(u32::MAX)) as u32);
        self.first_data.get_or_insert(now);
        self.last_data = Some(now);
    }
}

/// Runs `trace` against the router at `peer`; `progress` is called with the Interests
/// resolved (answered, Nacked or timed out) so far.
pub fn run_trace(
    sock: &mut UdpBatch,
    peer: SocketAddr,
    cat: &Catalogue,
    trace: &Trace,
    stop: &AtomicBool,
    progress: &dyn Fn(u64),
) -> io::Result<TraceResult> {
    let interests: Vec<Vec<u8>> = trace
        .chunks
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let mut int = Interest::new(cat.name(k), (i as u32 ^ 0x5bd1_e995).to_be_bytes());
            int.lifetime_ms = Some(trace.lifetime_ms);
            int.to_wire()
        })
        .collect();
    let limits = Limits::default();
    let lifetime_ns = trace.lifetime_ms * 1_000_000;
    let total = interests.len();
    let mut serial = vec![0; cat.chunks() as usize];
    for (i, &k) in trace.chunks.iter().enumerate() {
        serial[k as usize] = i as u64 + 1;
    }
    let mut run = Run {
        cat,
        sent_at: vec![IDLE; cat.chunks() as usize],
        serial,
        sent: 0,
        window: trace.aimd.map(Aimd::new),
        outstanding: 0,
        first_data: None,
        last_data: None,
        r: TraceResult::default(),
    };
    run.r.window_max = run.window.as_ref().map_or(0, |w| w.window() as u64);
    let (mut sent, mut oldest) = (0usize, 0usize);
    let start = Instant::now();
    let mut last_send = start;
    let mut items: Vec<(&[u8], SocketAddr)> = Vec::with_capacity(SEND_BATCH);
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let t_ns = (now - start).as_nanos() as u64;
        // Send what is due.
        let due = ((t_ns as f64 / 1e9 * trace.rate_pps as f64) as usize + 1).min(total);
        while sent < due && run.room() > 0 {
            items.clear();
            let end = (sent + SEND_BATCH.min(run.room())).min(due);
            items.extend(interests[sent..end].iter().map(|i| (&i[..], peer)));
            let n = match sock.send_batch(&items) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
                Err(e) => return Err(e),
            };
            for &k in &trace.chunks[sent..sent + n] {
                run.sent_at[k as usize] = t_ns;
            }
            run.outstanding += n as u64;
            sent += n;
            run.sent = sent as u64;
            last_send = now;
            if n < items.len() {
                break; // the socket is full: the rest later
            }
        }
        // Receive.
        let mut got = 0;
        for _ in 0..RECV_TURNS {
            match sock.recv_batch() {
                Ok(0) => break,
                Ok(n) => {
                    got += n;
                    let now = Instant::now();
                    for i in 0..n {
                        run.on_packet(sock.datagram(i).0, start, now, &limits);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        if let Some(before_ns) = t_ns.checked_sub(lifetime_ns) {
            oldest = run.expire(&trace.chunks[..sent], oldest, before_ns);
        }
        progress(sent as u64 - run.outstanding);
        if sent == total && run.outstanding == 0 {
            break;
        }
        if got == 0 {
            // Until the next Interest falls due, at most 1 ms (timeouts are checked then).
            let next_ns = if sent < total && run.room() > 0 {
                (sent as f64 * 1e9 / trace.rate_pps as f64) as u64
            } else {
                u64::MAX
            };
            let now_ns = start.elapsed().as_nanos() as u64;
            poll_in(
                sock.socket().as_raw_fd(),
                next_ns.saturating_sub(now_ns).min(1_000_000),
            );
        }
    }
    run.r.sent = sent as u64;
    run.r.send_seconds = (last_send - start).as_secs_f64();
    if let (Some(a), Some(b)) = (run.first_data, run.last_data) {
        run.r.data_seconds = (b - a).as_secs_f64();
        run.r.first_data_seconds = a.saturating_duration_since(start).as_secs_f64();
    }
    Ok(run.r)
}

/// Waits until `fd` is readable or `ns` nanoseconds pass (under a millisecond: a short sleep,
/// so that sending stays on time).
fn poll_in(fd: i32, ns: u64) {
    if ns < 1_000_000 {
        std::thread::sleep(Duration::from_nanos(ns.min(50_000)));
        return;
    }
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, (ns / 1_000_000) as i32) };
}

#[cfg(test)]
mod tests {
    use super::super::scenario::Content;
    use super::*;

    #[test]
    fn a_trace_draws_distinct_chunks_reproducibly() {
        let t = Trace::draw(1000, 300, 7, 100, 1000);
        let mut v = t.chunks.clone();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 300);
        assert!(v.iter().all(|&k| k < 1000));
        assert_eq!(Trace::draw(1000, 300, 7, 100, 1000).chunks, t.chunks);
        assert_ne!(Trace::draw(1000, 300, 8, 100, 1000).chunks, t.chunks);
        assert_eq!(Trace::draw(5, 9, 1, 1, 1).chunks.len(), 5);
    }

    #[test]
    fn statistics_of_a_result() {
        let r = TraceResult {
            sent: 100,
            send_seconds: 0.5,
            received: 11,
            data_seconds: 2.0,
            rtt_us: vec![3000, 1000, 2000, 4000],
            ..TraceResult::default()
        };
        assert_eq!(r.offered_pps(), 200.0);
        assert_eq!(r.throughput_pps(), 5.0);
        // Every Data in one batch, 0.25 s after the first Interest.
        let one_batch = TraceResult {
            data_seconds: 0.0,
            first_data_seconds: 0.25,
            ..r.clone()
        };
        assert_eq!(one_batch.throughput_pps(), 44.0);
        assert_eq!(r.rtt_ms(), (2.5, 3.0, 4.0));
        assert_eq!(TraceResult::default().rtt_ms(), (0.0, 0.0, 0.0));
        assert_eq!(TraceResult::default().throughput_pps(), 0.0);
    }

    /// A producer on a plain UDP socket answers half the names and Nacks none: the consumer
    /// matches Data to Interests, times the rest out, and counts marks.
    #[test]
    fn a_trace_against_a_udp_producer() {
        let cat = Catalogue::new(&Content {
            prefix: "/t".into(),
            contents: 4,
            segments: 10,
            segment_bytes: 50,
            producer_in_run: false,
        });
        let prod = UdpSocket::bind("127.0.0.1:0").unwrap();
        let peer = prod.local_addr().unwrap();
        let mut sock = socket("127.0.0.1:0".parse().unwrap()).unwrap();
        let trace = Trace::draw(cat.chunks(), 20, 3, 10_000, 300);
        let cat2 = cat.clone();
        let server = std::thread::spawn(move || {
            let mut buf = [0u8; 9000];
            let limits = Limits::default();
            let _ = prod.set_read_timeout(Some(Duration::from_millis(500)));
            while let Ok((n, from)) = prod.recv_from(&mut buf) {
                let Ok(PacketView::Interest(i)) = PacketView::decode(&buf[..n], &limits) else {
                    continue;
                };
                let k = cat2.index_of(&i.name()).unwrap();
                if k % 2 == 0 {
                    let data = cat2.data(k);
                    let reply = if k % 4 == 0 {
                        let h = face::lp_frag::LpHeaders {
                            congestion_mark: Some(1),
                            ..Default::default()
                        };
                        let mut out = Vec::new();
                        h.encode(&mut out);
                        wrap_lp(&out, &data)
                    } else {
                        data
                    };
                    prod.send_to(&reply, from).unwrap();
                }
            }
        });
        let stop = AtomicBool::new(false);
        let r = run_trace(&mut sock, peer, &cat, &trace, &stop, &|_| {}).unwrap();
        server.join().unwrap();
        let even = trace.chunks.iter().filter(|&&k| k % 2 == 0).count() as u64;
        let marked = trace.chunks.iter().filter(|&&k| k % 4 == 0).count() as u64;
        assert_eq!(r.sent, 20);
        assert_eq!(r.received, even);
        assert_eq!(r.timeouts, 20 - even);
        assert_eq!(r.marked, marked);
        assert_eq!(r.rtt_us.len() as u64, even);
    }

    /// With AIMD, the Interests in flight never exceed the window: a producer that answers in
    /// bursts (all it received, once nothing more arrives) sees bursts no larger than the
    /// largest window; a marked Data halves it.
    #[test]
    fn an_aimd_trace_keeps_to_its_window() {
        let cat = Catalogue::new(&Content {
            prefix: "/w".into(),
            contents: 4,
            segments: 20,
            segment_bytes: 50,
            producer_in_run: false,
        });
        let prod = UdpSocket::bind("127.0.0.1:0").unwrap();
        let peer = prod.local_addr().unwrap();
        let mut sock = socket("127.0.0.1:0".parse().unwrap()).unwrap();
        let mut trace = Trace::draw(cat.chunks(), 60, 5, 1_000_000, 2000);
        trace.aimd = Some(consumer_aimd());
        let cat2 = cat.clone();
        let server = std::thread::spawn(move || {
            let mut buf = [0u8; 9000];
            let limits = Limits::default();
            let (mut burst, mut largest, mut answered) = (Vec::new(), 0, 0);
            let _ = prod.set_read_timeout(Some(Duration::from_millis(30)));
            while answered < 60 {
                match prod.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        if let Ok(PacketView::Interest(i)) = PacketView::decode(&buf[..n], &limits)
                        {
                            burst.push((cat2.index_of(&i.name()).unwrap(), from));
                        }
                    }
                    Err(_) if burst.is_empty() => break,
                    Err(_) => {
                        largest = largest.max(burst.len());
                        for (k, from) in burst.drain(..) {
                            let h = face::lp_frag::LpHeaders {
                                congestion_mark: (answered == 20).then_some(1),
                                ..Default::default()
                            };
                            let mut out = Vec::new();
                            h.encode(&mut out);
                            prod.send_to(&wrap_lp(&out, &cat2.data(k)), from).unwrap();
                            answered += 1;
                        }
                    }
                }
            }
            largest
        });
        let stop = AtomicBool::new(false);
        let r = run_trace(&mut sock, peer, &cat, &trace, &stop, &|_| {}).unwrap();
        let largest = server.join().unwrap() as u64;
        assert_eq!((r.sent, r.received, r.marked), (60, 60, 1));
        assert_eq!(r.window_decreases, 1);
        assert!(
            largest >= 2 && largest <= r.window_max,
            "{largest} {}",
            r.window_max
        );
        assert!(r.window_max < 60, "{}", r.window_max);
    }

    /// An LpPacket of the encoded header fields `fields` around `packet`.
    fn wrap_lp(fields: &[u8], packet: &[u8]) -> Vec<u8> {
        let mut inner = fields.to_vec();
        wire::tlv::write_tlv(&mut inner, tt::LP_FRAGMENT, packet);
        let mut out = Vec::new();
        wire::tlv::write_tlv(&mut out, tt::LP_PACKET, &inner);
        out
    }
}
