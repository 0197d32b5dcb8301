//! The load generator: one thread that plays consumer and producer, and what one run of it
//! measured.

use std::collections::HashMap;
use std::io;
use std::time::{Duration, Instant};

use client::{Aimd, AimdOptions};
use wire::tlv::{write_nni_tlv, write_tlv, write_var_number};
use wire::{tt, Limits, LpPacketView, NackReason, PacketView};

use super::cpu::{this_thread_cpu, threads_cpu, CpuTime};
use super::link::{wait_any, Link};
use super::ForwardBenchArgs;

pub(super) const PREFIX: &str = "bench";

/// Workload.
#[derive(Debug, Clone, Copy)]
pub(super) enum Workload {
    Unique,
    Cached(u64),
}

pub(super) fn parse_workload(s: &str) -> Result<Workload, String> {
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

pub(super) fn push_generic(out: &mut Vec<u8>, v: &[u8]) {
    write_tlv(out, tt::GENERIC_COMPONENT, v);
}

/// Writes the Interest for name number `name_no` into `out`, building its Name and its body in
/// `scratch` (all reused, so the generator does not allocate per packet).
pub(super) fn write_interest(
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
pub(super) fn name_number(name: &wire::NameView<'_>) -> Option<u64> {
    let c = name.last()?;
    (u32::from(c.typ) == tt::SEQUENCE_NUM).then(|| c.as_number())?
}

pub(super) struct Producer {
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
pub(super) struct RunResult {
    pub(super) satisfied: u64,
    pub(super) timeouts: u64,
    pub(super) nacks: HashMap<String, u64>,
    pub(super) seconds: f64,
    pub(super) rtt_us: Vec<u32>,
    pub(super) produced: u64,
    /// The generator thread's CPU time over the measured window.
    pub(super) generator_cpu: CpuTime,
    /// The CPU time of the router's threads (`cascade-*`) over the measured window; zero unless
    /// [`Gen::router_cpu`].
    pub(super) router_cpu: CpuTime,
}

impl RunResult {
    pub(super) fn rate(&self) -> f64 {
        self.satisfied as f64 / self.seconds.max(1e-9)
    }

    pub(super) fn pct(&mut self, p: f64) -> f64 {
        if self.rtt_us.is_empty() {
            return 0.0;
        }
        self.rtt_us.sort_unstable();
        let i = ((self.rtt_us.len() - 1) as f64 * p).round() as usize;
        f64::from(self.rtt_us[i])
    }
}

/// The consumer's window: fixed at `window` Interests, or (`--aimd`) an AIMD window of at most
/// that many that halves, at most once per RTT, on a Data with a CongestionMark, a Nack
/// Congestion or a timeout, and grows on unmarked Data (`client::Aimd`, what `cascade get`
/// runs).
pub(super) struct Window {
    max: u64,
    aimd: Option<Aimd>,
    /// Serial number of the last Interest sent.
    serial: u64,
}

impl Window {
    pub(super) fn new(max: u64, aimd: bool) -> Self {
        let opts = AimdOptions {
            max_cwnd: max as f64,
            ..AimdOptions::default()
        };
        Window {
            max,
            aimd: aimd.then(|| Aimd::new(opts)),
            serial: 0,
        }
    }

    /// Interests that may be outstanding now.
    pub(super) fn limit(&self) -> u64 {
        self.aimd.as_ref().map_or(self.max, |a| a.window() as u64)
    }

    /// An Interest goes out: its serial number.
    fn sent(&mut self) -> u64 {
        self.serial += 1;
        self.serial
    }

    /// The Data of the Interest with serial `serial` came, `marked` or not.
    pub(super) fn answered(&mut self, serial: u64, marked: bool) {
        match (self.aimd.as_mut(), marked) {
            (Some(a), true) => {
                a.on_congestion(serial, self.serial);
            }
            (Some(a), false) => a.on_data(),
            (None, _) => {}
        }
    }

    /// The Interest with serial `serial` was Nacked Congestion or timed out.
    pub(super) fn lost(&mut self, serial: u64) {
        if let Some(a) = self.aimd.as_mut() {
            a.on_congestion(serial, self.serial);
        }
    }

    /// Drops the names outstanding (`sent`: when, and the Interest's serial) for `lifetime`
    /// or longer at `now`, each a loss; returns how many.
    fn expire(
        &mut self,
        sent: &mut HashMap<u64, (Instant, u64)>,
        now: Instant,
        lifetime: Duration,
    ) -> u64 {
        let before = sent.len();
        sent.retain(|_, (t0, serial)| {
            let alive = now.duration_since(*t0) < lifetime;
            if !alive {
                self.lost(*serial);
            }
            alive
        });
        (before - sent.len()) as u64
    }
}

pub(super) struct Gen {
    pub(super) window: u64,
    /// Run the window as AIMD on congestion marks ([`Window`]).
    pub(super) aimd: bool,
    pub(super) workload: Workload,
    pub(super) lifetime_ms: u64,
    pub(super) run: u64,
    /// Whether to measure the CPU time of a router started in this process.
    pub(super) router_cpu: bool,
}

/// The CPU time so far of the router's threads (if `g` measures them) and of this thread.
fn cpu_sample(g: &Gen) -> (CpuTime, CpuTime) {
    let router = if g.router_cpu {
        threads_cpu("cascade-")
    } else {
        CpuTime::default()
    };
    (router, this_thread_cpu())
}

/// What the consumer reads of a received packet: its Nack header (with its reason), its
/// CongestionMark (0: none) and the network packet.
type LinkView<'a> = (Option<Option<NackReason>>, u64, &'a [u8]);

/// The [`LinkView`] of a received packet; `None` for a malformed LpPacket.
fn link_view<'a>(p: &'a [u8], limits: &Limits) -> Option<LinkView<'a>> {
    if p.first() != Some(&(tt::LP_PACKET as u8)) {
        return Some((None, 0, p));
    }
    let lp = LpPacketView::decode(p, limits).ok()?;
    Some((
        lp.nack.map(|n| n.reason),
        lp.congestion_mark.unwrap_or(0),
        lp.fragment().unwrap_or(&[]),
    ))
}

/// Runs the generator: `cons` sends Interests, `prod` answers them; `measure` seconds after a
/// one-second warm-up.
pub(super) fn drive(
    g: &Gen,
    cons: &mut Link,
    prod: &mut Link,
    producer: &mut Producer,
    measure: Duration,
) -> io::Result<RunResult> {
    let limits = Limits::default();
    // Outstanding names: when sent, and the serial of the Interest.
    let mut sent: HashMap<u64, (Instant, u64)> = HashMap::with_capacity(g.window as usize * 2);
    let mut window = Window::new(g.window, g.aimd);
    let mut next: u64 = 0;
    let mut interest = Vec::with_capacity(128);
    let mut scratch = (Vec::with_capacity(64), Vec::with_capacity(128));
    let start = Instant::now();
    let warm = start + Duration::from_secs(1);
    let end = warm + measure;
    let mut r = RunResult::default();
    let mut measuring = false;
    let mut cpu0 = (CpuTime::default(), CpuTime::default());
    let mut last_sweep = Instant::now();
    let mut nonce: u32 = 0x9e37_79b9 ^ (g.run as u32);
    let fds = [cons.fd(), prod.fd()];
    let lifetime = Duration::from_millis(g.lifetime_ms);
    loop {
        let now = Instant::now();
        if !measuring && now >= warm {
            measuring = true;
            r = RunResult::default();
            cpu0 = cpu_sample(g);
        }
        if now >= end {
            break;
        }
        // Consumer: fill the window.
        while (sent.len() as u64) < window.limit() {
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
            sent.insert(no, (now, window.sent()));
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
            let Some((nack, mark, ibytes)) = link_view(p, &limits) else {
                return;
            };
            match PacketView::decode(ibytes, &limits) {
                Ok(PacketView::Data(d)) => {
                    let Some(no) = name_number(&d.name()) else {
                        return;
                    };
                    if let Some((t0, serial)) = sent.remove(&no) {
                        window.answered(serial, mark > 0);
                        if measuring {
                            r.satisfied += 1;
                            r.rtt_us.push(tnow.duration_since(t0).as_micros() as u32);
                        }
                    }
                }
                Ok(PacketView::Interest(i)) => {
                    if let (Some(reason), Some(no)) = (nack, name_number(&i.name())) {
                        let nacked = sent.remove(&no).map(|(_, serial)| {
                            if reason == Some(NackReason::Congestion) {
                                window.lost(serial);
                            }
                        });
                        if nacked.is_some() && measuring {
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
            let expired = window.expire(&mut sent, now, lifetime);
            r.timeouts += if measuring { expired } else { 0 };
        }
        if work == 0 && !cons.pending_out() && !prod.pending_out() {
            wait_any(&fds, 1);
        }
    }
    let gen1 = this_thread_cpu();
    let (router1, _) = cpu_sample(g);
    r.generator_cpu = gen1 - cpu0.1;
    r.router_cpu = router1 - cpu0.0;
    r.seconds = measure.as_secs_f64();
    Ok(r)
}

pub(super) fn recv_and_answer(
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

/// The generator's producer end, with its buffers.
pub(super) fn producer(args: &ForwardBenchArgs) -> Producer {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_window_ignores_marks_and_an_aimd_window_halves_on_them() {
        let mut fixed = Window::new(64, false);
        let s = fixed.sent();
        fixed.answered(s, true);
        fixed.lost(s);
        assert_eq!(fixed.limit(), 64);
        let mut w = Window::new(64, true);
        assert_eq!(w.limit(), 2);
        // Unmarked Data grow it (slow start), up to the bench's window.
        for _ in 0..100 {
            let s = w.sent();
            w.answered(s, false);
        }
        assert_eq!(w.limit(), 64);
        // A marked Data halves it; the others of the same flight do not again.
        let flight: Vec<u64> = (0..64).map(|_| w.sent()).collect();
        w.answered(flight[0], true);
        assert_eq!(w.limit(), 32);
        w.answered(flight[1], true);
        w.lost(flight[2]);
        assert_eq!(w.limit(), 32);
        // Marks on later flights go on halving, to 1.
        for _ in 0..8 {
            let s = w.sent();
            w.answered(s, true);
        }
        assert_eq!(w.limit(), 1);
    }
}
