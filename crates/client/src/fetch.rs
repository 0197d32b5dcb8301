//! Segmented fetch: version discovery, then a pipelined window (fixed, AIMD or CUBIC) with RFC
//! 6298 timers.
//!
//! [`get`] first asks for RDR metadata (`<name>/32=metadata`, [`crate::rdr`]) unless the name
//! ends with a version; with a versioned name (given or discovered) it asks for segment 0 by
//! exact name. Without a metadata answer (timeout, Nack, an answer that is not metadata) it falls back to one
//! Interest for the name with CanBePrefix and MustBeFresh. The answer must be a segment `<versioned name>/seg=<n>` carrying FinalBlockId. The remaining segments are
//! fetched by a [`Fetcher`], the deterministic core (it never reads a clock: the caller passes
//! the time), driven by [`get`] over a [`Face`]:
//!
//! - the window ([`Window`]: [`Aimd`], or [`crate::cubic::Cubic`] when
//!   [`FetchOptions::cubic`] is set) grows on an unmarked Data and shrinks, at most once per
//!   RTT, on a timeout, a Nack with reason Congestion, or a Data carrying an NDNLPv2
//!   CongestionMark (which then does not grow it); with a fixed window ([`AimdOptions::fixed`])
//!   it does neither;
//! - an Interest times out after the estimator's RTO ([`RttEstimator`]); the RTO backs off on a
//!   timeout that decreased the window; RTT samples come only from segments sent once (Karn);
//! - a timed-out segment, or one Nacked with Congestion or Duplicate, is sent again (before any
//!   new segment), at most `max_retries` times; any other Nack reason ends the fetch, and so
//!   does an application-level Nack (a Data of ContentType NACK for a segment not yet
//!   received, [`Error::ApplicationNack`]; for the metadata, see [`crate::rdr::discover`]), as
//!   in ndncatchunks;
//! - segments are handed out in order; those that arrive early wait in a reorder buffer, and no
//!   segment more than `max_reorder` beyond the next one to hand out is requested, which bounds
//!   the buffer;
//! - on request ([`Fetcher::record_events`]) it records what ndncatchunks' `--log-cwnd` and
//!   `--log-rtt` log ([`FetchEvent`]): each window change (a Data grew it, or a congestion
//!   event shrank it) and each RTT sample with the estimator's state after it; [`get_logged`]
//!   hands them out as they happen.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::time::{Duration, Instant};

use wire::{tt, Component, Interest, NackReason, Name};

#[cfg(doc)]
use crate::aimd::Aimd;
use crate::aimd::AimdOptions;
use crate::cubic::{CubicOptions, Window};
use crate::error::{Error, Result};
use crate::face::{segment_number, DataPacket, Face, Outcome, Received};
use crate::rtt::{RttEstimator, RttOptions, RttStats, RttSummary};

/// Options of a segmented fetch.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchOptions {
    /// InterestLifetime of every Interest, in milliseconds.
    pub lifetime_ms: u64,
    /// Most retransmissions of one segment (and of the discovery Interest) before giving up.
    pub max_retries: u32,
    /// The congestion window, unless `cubic` is set.
    pub aimd: AimdOptions,
    /// A CUBIC window instead of `aimd`.
    pub cubic: Option<CubicOptions>,
    /// Set MustBeFresh on every Interest.
    pub must_be_fresh: bool,
    /// Discover the version of a name without one (RDR metadata, else CanBePrefix); when off,
    /// the name is taken as the versioned name.
    pub version_discovery: bool,
    /// The RTT estimator.
    pub rtt: RttOptions,
    /// Ignore NDNLPv2 CongestionMarks (do not shrink the window on them).
    pub ignore_congestion_marks: bool,
    /// Most segments requested beyond the next one to hand out (bounds the reorder buffer).
    pub max_reorder: u64,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            lifetime_ms: 4000,
            max_retries: 15,
            aimd: AimdOptions::default(),
            cubic: None,
            must_be_fresh: false,
            version_discovery: true,
            rtt: RttOptions::default(),
            ignore_congestion_marks: false,
            max_reorder: 4096,
        }
    }
}

/// What a fetch did.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// The versioned name the segments were fetched under.
    pub versioned_name: Name,
    /// Bytes of content handed out.
    pub bytes: u64,
    /// Segments handed out.
    pub segments: u64,
    /// From the discovery Interest to the last segment.
    pub elapsed: Duration,
    /// Interests sent, retransmissions included.
    pub interests: u64,
    /// Retransmissions.
    pub retransmissions: u64,
    /// Interests that timed out.
    pub timeouts: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Data received with a CongestionMark.
    pub congestion_marks: u64,
    /// Times the window was decreased.
    pub window_decreases: u64,
    /// The window at the end.
    pub final_cwnd: f64,
    /// RTT statistics of the samples taken.
    pub rtt: Option<RttSummary>,
}

impl Stats {
    /// Content bits per second over `elapsed`.
    pub fn goodput_bps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }
}

/// Progress of a fetch, reported after each segment handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes handed out so far.
    pub bytes: u64,
    /// Segments handed out so far.
    pub segments: u64,
    /// Segments in all.
    pub total_segments: u64,
}

/// What ndncatchunks' `--log-cwnd` and `--log-rtt` record (its pipeline's `afterCwndChange`
/// and `afterRttMeasurement` signals).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FetchEvent {
    /// The congestion window changed: when (since the segment pipeline started) and its new
    /// size, in segments.
    Cwnd {
        /// Time since the pipeline started.
        at: Duration,
        /// The new window.
        cwnd: f64,
    },
    /// An RTT sample (from a segment sent once) and the estimator after it.
    Rtt {
        /// The segment it was taken on.
        segment: u64,
        /// The sample.
        rtt: Duration,
        /// Smoothed RTT.
        srtt: Duration,
        /// RTT variation.
        rttvar: Duration,
        /// Retransmission timeout.
        rto: Duration,
    },
}

#[derive(Debug, Clone, Copy)]
struct InFlight {
    serial: u64,
    sent_at: Duration,
    retries: u32,
}

/// The deterministic core of a segmented fetch: which segment to request next, and what to do
/// on Data, Nack and timer events. Times are offsets from any fixed instant. See the
/// [module docs](self).
#[derive(Debug)]
pub struct Fetcher {
    prefix: Name,
    last_segment: u64,
    next_new: u64,
    in_flight: HashMap<u64, InFlight>,
    lost: VecDeque<(u64, u32)>,
    early: BTreeMap<u64, Vec<u8>>,
    next_out: u64,
    serial: u64,
    window: Window,
    /// The time of the latest event (what a Nack, which comes without one, is dated).
    now: Duration,
    must_be_fresh: bool,
    rtt: RttEstimator,
    rtt_stats: RttStats,
    max_retries: u32,
    max_reorder: u64,
    ignore_marks: bool,
    /// Counters (bytes, segments and elapsed are filled in by [`get`]).
    stats: Stats,
    /// Events recorded since the last [`Fetcher::drain_events`], with the time the pipeline
    /// started; `None` when not recording.
    events: Option<(Duration, Vec<FetchEvent>)>,
}

impl Fetcher {
    /// A fetcher for segments 0..=`last_segment` under `versioned_name`.
    pub fn new(versioned_name: Name, last_segment: u64, opts: &FetchOptions) -> Self {
        Fetcher {
            prefix: versioned_name.clone(),
            last_segment,
            next_new: 0,
            in_flight: HashMap::new(),
            lost: VecDeque::new(),
            early: BTreeMap::new(),
            next_out: 0,
            serial: 0,
            window: match opts.cubic {
                Some(c) => Window::from(c),
                None => Window::from(opts.aimd),
            },
            now: Duration::ZERO,
            must_be_fresh: opts.must_be_fresh,
            rtt: RttEstimator::new(opts.rtt),
            rtt_stats: RttStats::default(),
            max_retries: opts.max_retries,
            max_reorder: opts.max_reorder.max(1),
            ignore_marks: opts.ignore_congestion_marks,
            stats: Stats {
                versioned_name,
                bytes: 0,
                segments: 0,
                elapsed: Duration::ZERO,
                interests: 0,
                retransmissions: 0,
                timeouts: 0,
                nacks: 0,
                congestion_marks: 0,
                window_decreases: 0,
                final_cwnd: 0.0,
                rtt: None,
            },
            events: None,
        }
    }

    /// The versioned name.
    pub fn prefix(&self) -> &Name {
        &self.prefix
    }

    /// The last segment number (FinalBlockId).
    pub fn last_segment(&self) -> u64 {
        self.last_segment
    }

    /// The window.
    pub fn window(&self) -> &Window {
        &self.window
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Interests in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn is_done(&self, seg: u64) -> bool {
        seg < self.next_out || self.early.contains_key(&seg)
    }

    /// Takes a segment that arrived without being requested by this fetcher (the discovery
    /// answer).
    pub fn add_unrequested(&mut self, seg: u64, content: Vec<u8>) {
        if seg <= self.last_segment && !self.is_done(seg) && !self.in_flight.contains_key(&seg) {
            self.lost.retain(|&(s, _)| s != seg);
            self.early.insert(seg, content);
        }
    }

    /// The next segment to request at `now`, if the window and the reorder bound allow one:
    /// a lost segment first, then the next new one. The caller sends the Interest
    /// ([`Fetcher::interest`]) right away.
    pub fn next_to_send(&mut self, now: Duration) -> Option<u64> {
        self.now = self.now.max(now);
        if self.in_flight.len() >= self.window.window() {
            return None;
        }
        let (seg, retries) = if let Some(x) = self.lost.pop_front() {
            self.stats.retransmissions += 1;
            x
        } else {
            while self.next_new <= self.last_segment && self.is_done(self.next_new) {
                self.next_new += 1;
            }
            if self.next_new > self.last_segment
                || self.next_new >= self.next_out.saturating_add(self.max_reorder)
            {
                return None;
            }
            self.next_new += 1;
            (self.next_new - 1, 0)
        };
        self.serial += 1;
        self.stats.interests += 1;
        self.in_flight.insert(
            seg,
            InFlight {
                serial: self.serial,
                sent_at: now,
                retries,
            },
        );
        Some(seg)
    }

    /// The Interest for segment `seg`.
    pub fn interest(&self, seg: u64, lifetime_ms: u64) -> Interest {
        let mut i = Interest::new(
            self.prefix.clone().with(Component::segment(seg)),
            crate::random_nonce(),
        );
        i.lifetime_ms = Some(lifetime_ms);
        i.must_be_fresh = self.must_be_fresh;
        i
    }

    fn congestion(&mut self, serial: u64) -> bool {
        let d = self.window.on_congestion(serial, self.serial, self.now);
        if d {
            self.stats.window_decreases += 1;
            self.cwnd_changed();
        }
        d
    }

    /// Records [`FetchEvent`]s from now on; the pipeline started at `started` (on the clock
    /// the events are given).
    pub fn record_events(&mut self, started: Duration) {
        self.events = Some((started, Vec::new()));
    }

    /// The events recorded since the last call (none unless [`Fetcher::record_events`]).
    pub fn drain_events(&mut self) -> impl Iterator<Item = FetchEvent> + '_ {
        self.events.iter_mut().flat_map(|(_, v)| v.drain(..))
    }

    fn cwnd_changed(&mut self) {
        let (now, cwnd) = (self.now, self.window.cwnd());
        if let Some((started, v)) = &mut self.events {
            let at = now.saturating_sub(*started);
            v.push(FetchEvent::Cwnd { at, cwnd });
        }
    }

    fn mark_lost(&mut self, seg: u64, retries: u32) -> Result<()> {
        if retries >= self.max_retries {
            return Err(Error::Timeout(format!(
                "segment {seg} of {}: no Data after {} retransmissions",
                self.prefix, self.max_retries
            )));
        }
        self.lost.push_back((seg, retries + 1));
        Ok(())
    }

    /// Segment `seg` arrived at `now` with `content`; `congestion_marked` if it carried an
    /// NDNLPv2 CongestionMark. Duplicates and segments not asked for are ignored.
    pub fn on_data(&mut self, seg: u64, content: Vec<u8>, congestion_marked: bool, now: Duration) {
        self.now = self.now.max(now);
        if seg > self.last_segment || self.is_done(seg) {
            return;
        }
        match self.in_flight.remove(&seg) {
            Some(t) => {
                let sample = (t.retries == 0).then(|| now.saturating_sub(t.sent_at));
                if let Some(rtt) = sample {
                    self.rtt.add_sample(rtt);
                    self.rtt_stats.add(rtt);
                }
                if congestion_marked {
                    self.stats.congestion_marks += 1;
                }
                if congestion_marked && !self.ignore_marks {
                    self.congestion(t.serial);
                } else {
                    self.window.on_data(now, self.rtt.srtt());
                    self.cwnd_changed();
                }
                if let (Some(rtt), Some((_, v))) = (sample, &mut self.events) {
                    v.push(FetchEvent::Rtt {
                        segment: seg,
                        rtt,
                        srtt: self.rtt.srtt().unwrap_or(rtt),
                        rttvar: self.rtt.rttvar(),
                        rto: self.rtt.rto(),
                    });
                }
            }
            None => {
                // A late answer to a transmission already declared lost.
                self.lost.retain(|&(s, _)| s != seg);
            }
        }
        self.early.insert(seg, content);
    }

    /// Segment `seg` was Nacked with `reason`. Congestion (the window shrinks) and Duplicate
    /// queue a retransmission; any other reason is an error.
    pub fn on_nack(&mut self, seg: u64, reason: Option<NackReason>) -> Result<()> {
        let Some(t) = self.in_flight.get(&seg).copied() else {
            return Ok(());
        };
        self.stats.nacks += 1;
        match reason {
            Some(NackReason::Congestion) => {
                self.in_flight.remove(&seg);
                self.congestion(t.serial);
                self.mark_lost(seg, t.retries)
            }
            Some(NackReason::Duplicate) => {
                self.in_flight.remove(&seg);
                self.mark_lost(seg, t.retries)
            }
            reason => Err(Error::Nack {
                name: self.prefix.clone().with(Component::segment(seg)),
                reason,
            }),
        }
    }

    /// Declares lost every Interest whose RTO has run out by `now`.
    pub fn on_tick(&mut self, now: Duration) -> Result<()> {
        self.now = self.now.max(now);
        let rto = self.rtt.rto();
        let mut expired: Vec<(u64, InFlight)> = self
            .in_flight
            .iter()
            .filter(|(_, t)| t.sent_at + rto <= now)
            .map(|(s, t)| (*s, *t))
            .collect();
        expired.sort_by_key(|(_, t)| t.serial);
        for (seg, t) in expired {
            self.in_flight.remove(&seg);
            self.stats.timeouts += 1;
            if self.congestion(t.serial) {
                self.rtt.backoff();
            }
            self.mark_lost(seg, t.retries)?;
        }
        Ok(())
    }

    /// When the next timer runs out (the earliest in-flight Interest's send time plus RTO).
    pub fn next_timer(&self) -> Option<Duration> {
        let rto = self.rtt.rto();
        self.in_flight.values().map(|t| t.sent_at + rto).min()
    }

    /// The next segment's content in order, if it has arrived.
    pub fn pop_ready(&mut self) -> Option<Vec<u8>> {
        let c = self.early.remove(&self.next_out)?;
        self.next_out += 1;
        self.stats.segments += 1;
        self.stats.bytes += c.len() as u64;
        Some(c)
    }

    /// Have all segments been handed out?
    pub fn is_complete(&self) -> bool {
        self.next_out > self.last_segment
    }

    /// The statistics so far (elapsed is left to the caller).
    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        s.final_cwnd = self.window.cwnd();
        s.rtt = self.rtt_stats.summary();
        s
    }
}

/// Asks for the first segment under `name` (discovering the version unless `name` has one),
/// retrying on timeouts and on congestion or duplicate Nacks. Returns that Data, its segment
/// number and the last segment number (from its FinalBlockId).
fn first_segment(
    face: &mut Face,
    name: &Name,
    opts: &FetchOptions,
) -> Result<(DataPacket, u64, u64)> {
    // A name that already ends with a version needs no discovery: ask for its first segment
    // by exact name (which any cache, RAM or disk, can answer without a fresh Data).
    let versioned_given = name
        .components
        .last()
        .is_some_and(|c| u32::from(c.typ) == tt::VERSION);
    let discovered = if versioned_given || !opts.version_discovery {
        Some(name.clone())
    } else {
        crate::rdr::discover(face, name, opts.lifetime_ms)?
    };
    let mut discovery = if let Some(v) = discovered {
        Interest::new(v.with(Component::segment(0)), [0; 4])
    } else {
        let mut i = Interest::new(name.clone(), [0; 4]);
        i.can_be_prefix = true;
        i.must_be_fresh = true;
        i
    };
    discovery.lifetime_ms = Some(opts.lifetime_ms);
    discovery.must_be_fresh |= opts.must_be_fresh;
    let mut first = None;
    for _ in 0..=opts.max_retries {
        discovery.nonce = Some(crate::random_nonce());
        match face.express(&discovery)? {
            Outcome::Data(d) => {
                first = Some(d);
                break;
            }
            Outcome::Nack(n) => {
                if n.reason != Some(NackReason::Congestion)
                    && n.reason != Some(NackReason::Duplicate)
                {
                    return Err(Error::Nack {
                        name: name.clone(),
                        reason: n.reason,
                    });
                }
            }
            Outcome::Timeout => {}
        }
    }
    let first = first.ok_or_else(|| {
        Error::Timeout(format!(
            "no Data for {name} after {} attempts",
            opts.max_retries + 1
        ))
    })?;
    if first.is_application_nack() {
        return Err(application_nack(&first));
    }
    let seg = first.segment().ok_or_else(|| {
        Error::Protocol(format!(
            "{} (the answer for {name}) is not a segment",
            first.name
        ))
    })?;
    let last = first.final_segment().ok_or_else(|| {
        Error::Protocol(format!("{} carries no segment FinalBlockId", first.name))
    })?;
    if seg > last {
        return Err(Error::Protocol(format!(
            "{} lies beyond its FinalBlockId {last}",
            first.name
        )));
    }
    Ok((first, seg, last))
}

/// The error for a Data of ContentType NACK.
fn application_nack(d: &DataPacket) -> Error {
    Error::ApplicationNack {
        name: d.name.clone(),
        content_bytes: d.content_range.len(),
    }
}

/// Fetches the segmented content under `name` and writes it to `out`. See the
/// [module docs](self).
pub fn get(
    face: &mut Face,
    name: &Name,
    opts: &FetchOptions,
    out: &mut dyn Write,
) -> Result<Stats> {
    get_with_progress(face, name, opts, out, &mut |_| {})
}

/// As [`get`], calling `progress` after each segment written.
pub fn get_with_progress(
    face: &mut Face,
    name: &Name,
    opts: &FetchOptions,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Stats> {
    get_logged(face, name, opts, out, progress, None)
}

/// As [`get_with_progress`], handing every [`FetchEvent`] to `log` (if any) as it happens.
pub fn get_logged(
    face: &mut Face,
    name: &Name,
    opts: &FetchOptions,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(&Progress),
    mut log: Option<&mut dyn FnMut(&FetchEvent)>,
) -> Result<Stats> {
    let start = Instant::now();
    let (first, seg, last) = first_segment(face, name, opts)?;
    let versioned = first.name.prefix(first.name.len() - 1);
    let mut f = Fetcher::new(versioned.clone(), last, opts);
    if log.is_some() {
        f.record_events(start.elapsed());
    }
    f.add_unrequested(seg, first.content().to_vec());
    let total_segments = last + 1;
    let mut done = Progress {
        bytes: 0,
        segments: 0,
        total_segments,
    };
    loop {
        while let Some(c) = f.pop_ready() {
            out.write_all(&c)
                .map_err(|e| Error::io("cannot write the output", e))?;
            done.bytes += c.len() as u64;
            done.segments += 1;
            progress(&done);
        }
        if f.is_complete() {
            break;
        }
        while let Some(s) = f.next_to_send(start.elapsed()) {
            face.send_interest(&f.interest(s, opts.lifetime_ms))?;
        }
        let Some(timer) = f.next_timer() else {
            // Nothing in flight and nothing to send cannot happen before completion; guard
            // against a livelock all the same.
            return Err(Error::Protocol(
                "fetch stalled with nothing in flight".into(),
            ));
        };
        let answer = face.recv_until(start + timer)?;
        let now = start.elapsed();
        let seg_of = |n: &Name| -> Option<u64> {
            (n.len() == versioned.len() + 1 && versioned.is_prefix_of(n))
                .then(|| segment_number(n.components.last()?))?
        };
        match answer {
            Some(Received::Data(d)) => {
                if let Some(s) = seg_of(&d.name) {
                    if d.is_application_nack() && s <= f.last_segment() && !f.is_done(s) {
                        return Err(application_nack(&d));
                    }
                    let marked = d.congestion_mark.is_some_and(|m| m > 0);
                    f.on_data(s, d.content().to_vec(), marked, now);
                }
            }
            Some(Received::Nack(n)) => {
                if let Some(s) = seg_of(&n.interest.name) {
                    f.on_nack(s, n.reason)?;
                }
            }
            Some(Received::Interest(_)) | None => {}
        }
        f.on_tick(now)?;
        if let Some(log) = log.as_mut() {
            f.drain_events().for_each(|e| log(&e));
        }
    }
    out.flush()
        .map_err(|e| Error::io("cannot write the output", e))?;
    let mut s = f.stats();
    s.elapsed = start.elapsed();
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn fetcher(last: u64, opts: &FetchOptions) -> Fetcher {
        Fetcher::new(Name::from_uri("/f/v=1").unwrap(), last, opts)
    }

    fn with_cwnd(initial_cwnd: f64) -> FetchOptions {
        FetchOptions {
            aimd: AimdOptions {
                initial_cwnd,
                ..AimdOptions::default()
            },
            ..FetchOptions::default()
        }
    }

    fn send_all(f: &mut Fetcher, now: Duration) -> Vec<u64> {
        std::iter::from_fn(|| f.next_to_send(now)).collect()
    }

    #[test]
    fn events_log_each_window_change_and_each_rtt_sample_as_ndncatchunks() {
        let mut f = fetcher(9, &with_cwnd(2.0));
        // Nothing is recorded until asked.
        assert_eq!(send_all(&mut f, ms(100)), vec![0, 1]);
        f.on_data(0, vec![], false, ms(130));
        assert_eq!(f.drain_events().count(), 0);
        f.record_events(ms(100));
        f.on_data(1, vec![], false, ms(150));
        let got: Vec<FetchEvent> = f.drain_events().collect();
        let FetchEvent::Cwnd { at, cwnd } = got[0] else {
            panic!("{got:?}")
        };
        assert_eq!((at, cwnd), (ms(50), f.window().cwnd()));
        let FetchEvent::Rtt {
            segment,
            rtt,
            srtt,
            rttvar,
            rto,
        } = got[1]
        else {
            panic!("{got:?}")
        };
        assert_eq!((segment, rtt), (1, ms(50)));
        assert_eq!(
            (Some(srtt), rttvar, rto),
            (f.rtt().srtt(), f.rtt().rttvar(), f.rtt().rto())
        );
        assert_eq!(got.len(), 2);
        // A timeout shrinks the window: one Cwnd event; the retransmitted segment's Data
        // grows it but brings no RTT sample (Karn).
        let sent = send_all(&mut f, ms(150));
        f.on_tick(ms(150) + f.rtt().rto()).unwrap();
        let got: Vec<FetchEvent> = f.drain_events().collect();
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(matches!(got[0], FetchEvent::Cwnd { cwnd, .. } if cwnd == f.window().cwnd()));
        let again = send_all(&mut f, ms(2_000));
        assert_eq!(again[0], sent[0]);
        f.on_data(sent[0], vec![], false, ms(2_010));
        let got: Vec<FetchEvent> = f.drain_events().collect();
        assert!(matches!(got[..], [FetchEvent::Cwnd { .. }]), "{got:?}");
    }

    #[test]
    fn window_grows_and_segments_come_out_in_order() {
        let mut f = fetcher(9, &FetchOptions::default());
        assert_eq!(send_all(&mut f, ms(0)), vec![0, 1]);
        // Segment 1 first: it waits for 0.
        f.on_data(1, b"b".to_vec(), false, ms(10));
        assert_eq!(f.pop_ready(), None);
        f.on_data(0, b"a".to_vec(), false, ms(10));
        assert_eq!(f.pop_ready(), Some(b"a".to_vec()));
        assert_eq!(f.pop_ready(), Some(b"b".to_vec()));
        // Slow start: 2 Data grew the window from 2 to 4.
        assert_eq!(f.window().window(), 4);
        assert_eq!(send_all(&mut f, ms(10)), vec![2, 3, 4, 5]);
        for s in 2..=5 {
            f.on_data(s, vec![s as u8], false, ms(20));
        }
        assert_eq!(send_all(&mut f, ms(20)), vec![6, 7, 8, 9]);
        for s in 6..=9 {
            f.on_data(s, vec![s as u8], false, ms(30));
        }
        // Nothing beyond FinalBlockId is requested.
        assert_eq!(send_all(&mut f, ms(30)), Vec::<u64>::new());
        let out: Vec<Vec<u8>> = std::iter::from_fn(|| f.pop_ready()).collect();
        assert_eq!(out.len(), 8);
        assert!(f.is_complete());
        let st = f.stats();
        assert_eq!((st.segments, st.bytes, st.interests), (10, 10, 10));
        assert_eq!(st.rtt.unwrap().count, 10);
        assert_eq!(st.rtt.unwrap().min, ms(10));
    }

    #[test]
    fn a_cubic_window_grows_in_slow_start_and_decreases_by_beta() {
        let opts = FetchOptions {
            cubic: Some(CubicOptions {
                initial_cwnd: 4.0,
                ..CubicOptions::default()
            }),
            must_be_fresh: true,
            ..FetchOptions::default()
        };
        let mut f = fetcher(99, &opts);
        assert!(f.interest(0, 100).must_be_fresh);
        assert_eq!(send_all(&mut f, ms(0)), vec![0, 1, 2, 3]);
        for s in 0..4 {
            f.on_data(s, vec![0], false, ms(10));
        }
        assert_eq!(f.window().cwnd(), 8.0);
        let sent = send_all(&mut f, ms(10));
        assert_eq!(sent.len(), 8);
        // A mark: 8 * 0.7 = 5.6, once for the whole flight.
        f.on_data(sent[0], vec![0], true, ms(20));
        f.on_data(sent[1], vec![0], true, ms(20));
        assert!((f.window().cwnd() - 5.6).abs() < 1e-9);
        assert_eq!(f.stats().window_decreases, 1);
    }

    #[test]
    fn timeout_halves_once_backs_off_and_retransmits_first() {
        let mut f = fetcher(100, &with_cwnd(8.0));
        assert_eq!(send_all(&mut f, ms(0)).len(), 8);
        assert_eq!(f.rtt().rto(), Duration::from_secs(1));
        assert_eq!(f.next_timer(), Some(ms(1000)));
        // Before the RTO nothing times out.
        f.on_tick(ms(999)).unwrap();
        assert_eq!(f.in_flight(), 8);
        // At the RTO all eight time out: one window decrease, one back-off.
        f.on_tick(ms(1000)).unwrap();
        assert_eq!(f.in_flight(), 0);
        assert_eq!(f.window().cwnd(), 4.0);
        assert_eq!(f.rtt().rto(), Duration::from_secs(2));
        let st = f.stats();
        assert_eq!((st.timeouts, st.window_decreases), (8, 1));
        // Lost segments go first, in order, within the new window.
        assert_eq!(send_all(&mut f, ms(1000)), vec![0, 1, 2, 3]);
        assert_eq!(f.stats().retransmissions, 4);
        // A retransmitted segment gives no RTT sample (Karn).
        f.on_data(0, vec![], false, ms(1100));
        assert!(f.stats().rtt.is_none());
    }

    #[test]
    fn congestion_nack_and_mark_decrease_once_per_rtt() {
        let mut f = fetcher(100, &with_cwnd(8.0));
        send_all(&mut f, ms(0));
        f.on_nack(3, Some(NackReason::Congestion)).unwrap();
        assert_eq!(f.window().cwnd(), 4.0);
        // A marked Data of the same flight does not decrease again, nor grow the window.
        f.on_data(0, vec![], true, ms(5));
        assert_eq!(f.window().cwnd(), 4.0);
        assert_eq!(f.stats().congestion_marks, 1);
        // The retransmission of 3 comes first.
        assert_eq!(f.next_to_send(ms(5)), None); // 6 in flight, window 4
        for s in [1, 2, 4, 5, 6, 7] {
            f.on_data(s, vec![], false, ms(6));
        }
        assert_eq!(f.next_to_send(ms(6)), Some(3));
        // A mark on a Data sent after the decrease is a new congestion event.
        let w = f.window().cwnd();
        f.on_data(3, vec![], true, ms(7));
        assert!(f.window().cwnd() < w);
        assert_eq!(f.stats().window_decreases, 2);
        // With marks ignored, they are only counted.
        let mut g = fetcher(
            10,
            &FetchOptions {
                ignore_congestion_marks: true,
                ..FetchOptions::default()
            },
        );
        send_all(&mut g, ms(0));
        g.on_data(0, vec![], true, ms(1));
        assert_eq!(g.stats().window_decreases, 0);
        assert_eq!(g.stats().congestion_marks, 1);
        assert_eq!(g.window().cwnd(), 3.0, "grown as by an unmarked Data");
    }

    #[test]
    fn retries_are_bounded_and_other_nacks_are_fatal() {
        let opts = FetchOptions {
            max_retries: 2,
            ..FetchOptions::default()
        };
        let mut f = fetcher(0, &opts);
        for _ in 0..2 {
            assert_eq!(f.next_to_send(ms(0)), Some(0));
            f.on_nack(0, Some(NackReason::Duplicate)).unwrap();
        }
        assert_eq!(f.next_to_send(ms(0)), Some(0));
        let e = f.on_nack(0, Some(NackReason::Duplicate)).unwrap_err();
        assert!(e.to_string().contains("after 2 retransmissions"), "{e}");

        let mut g = fetcher(0, &FetchOptions::default());
        g.next_to_send(ms(0));
        let e = g.on_nack(0, Some(NackReason::NoRoute)).unwrap_err();
        assert!(e.to_string().contains("NoRoute"), "{e}");
        // Nacks and Data for segments not in flight are ignored.
        let mut h = fetcher(3, &FetchOptions::default());
        h.on_nack(2, Some(NackReason::NoRoute)).unwrap();
        h.on_data(9, vec![1], false, ms(0));
        assert_eq!(h.pop_ready(), None);
    }

    #[test]
    fn late_answer_to_a_lost_segment_is_taken_and_not_resent() {
        let mut f = fetcher(1, &FetchOptions::default());
        send_all(&mut f, ms(0));
        f.on_tick(ms(1000)).unwrap();
        assert_eq!(f.in_flight(), 0);
        f.on_data(0, b"late".to_vec(), false, ms(1001));
        assert_eq!(f.next_to_send(ms(1001)), Some(1));
        assert_eq!(f.next_to_send(ms(1001)), None);
        assert_eq!(f.pop_ready(), Some(b"late".to_vec()));
    }

    #[test]
    fn reorder_bound_limits_requests_and_unrequested_segment_counts() {
        let opts = FetchOptions {
            max_reorder: 3,
            aimd: AimdOptions {
                initial_cwnd: 10.0,
                ..AimdOptions::default()
            },
            ..FetchOptions::default()
        };
        let mut f = fetcher(20, &opts);
        // The discovery answer was segment 1.
        f.add_unrequested(1, b"one".to_vec());
        // Only segments below next_out + 3 = 3 are requested, and 1 is already here.
        assert_eq!(send_all(&mut f, ms(0)), vec![0, 2]);
        f.on_data(0, b"zero".to_vec(), false, ms(1));
        assert_eq!(f.pop_ready(), Some(b"zero".to_vec()));
        assert_eq!(f.pop_ready(), Some(b"one".to_vec()));
        assert_eq!(send_all(&mut f, ms(1)), vec![3, 4]);
    }
}
