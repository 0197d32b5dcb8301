//! A forwarding worker: one engine, its input ring, its output ring, its control channel.
//!
//! The loop takes up to [`MAX_BATCH`] packets from the input ring, runs them through the engine
//! and turns each action into a link-layer packet in a pool buffer (NDNLPv2 headers only when a
//! field is needed: the downstream's PIT token, our own PIT token on Interests sent upstream, a
//! Nack, a CongestionMark, IncomingFaceId for local faces that asked for it). Outputs go to the
//! worker's output ring, which the I/O thread drains into per-face queues. Nothing here locks or
//! allocates per packet; control messages (faces, strategies, CS settings, snapshots) are
//! applied between batches.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use engine::fw::pipeline::{Counters, Engine, FaceInfo, SendKind, MAX_BATCH};
use engine::fw::strategy::StrategyKind;
use engine::table::pit_cs::{CsPolicy, FaceId};
use face::lp_frag::{LpHeaders, PitToken};
use wire::lp::Nack;
use wire::tlv::write_var_number;
use wire::{tt, Name};

use crate::dispatch::worker_token;
use crate::pool::{Pkt, PktKind, Pool};

/// Face id NFD uses for Data served from the content store (IncomingFaceId).
pub const CONTENT_STORE_FACE_ID: u64 = 254;

/// A control message for a worker, applied between batches.
#[derive(Debug)]
pub enum Control {
    /// A face appeared or changed.
    Face {
        /// Face id.
        id: FaceId,
        /// Its properties for the engine.
        info: FaceInfo,
        /// Attach IncomingFaceId to packets sent to it.
        local_fields: bool,
    },
    /// Set (`Some`) or unset (`None`) the strategy of a prefix.
    Strategy {
        /// Prefix.
        prefix: Name,
        /// Strategy.
        kind: Option<StrategyKind>,
    },
    /// CS capacity and policy for this worker.
    CsConfig {
        /// Entries.
        capacity: usize,
        /// Policy.
        policy: CsPolicy,
    },
    /// Erase CS entries under a prefix; replies with the number erased.
    CsErase {
        /// Name prefix (its components' TLV bytes).
        prefix: Vec<u8>,
        /// Most entries to erase.
        limit: usize,
        /// Where the count goes.
        reply: Sender<usize>,
    },
    /// Reply with a snapshot of the worker's state.
    Snapshot(Sender<Snapshot>),
}

/// A worker's counters and table sizes.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Engine counters.
    pub counters: Counters,
    /// PIT entries.
    pub pit_len: usize,
    /// CS entries.
    pub cs_len: usize,
    /// CS capacity.
    pub cs_capacity: usize,
    /// CS policy is LRU.
    pub cs_lru: bool,
    /// Outputs dropped because the output ring was full.
    pub out_ring_full: u64,
    /// Outputs dropped because no buffer was free or the packet did not fit.
    pub out_no_buffer: u64,
    /// Batches processed.
    pub batches: u64,
    /// CS hits.
    pub cs_hits: u64,
    /// CS misses.
    pub cs_misses: u64,
}

/// What a worker shares with the I/O thread and management.
#[derive(Debug)]
pub struct WorkerLink {
    /// Packets to forward (pushed by the I/O thread).
    pub input: ArrayQueue<Pkt>,
    /// Packets to send (drained by the I/O thread).
    pub output: ArrayQueue<Pkt>,
    /// The worker is parked (or about to): unpark it after pushing.
    pub parked: AtomicBool,
    /// The worker's thread, to unpark it.
    pub thread: OnceLock<Thread>,
    /// Packets the I/O thread could not push because the input ring was full.
    pub input_full: AtomicU64,
}

impl WorkerLink {
    /// Rings of `capacity` packets.
    pub fn new(capacity: usize) -> Self {
        WorkerLink {
            input: ArrayQueue::new(capacity),
            output: ArrayQueue::new(capacity),
            parked: AtomicBool::new(false),
            thread: OnceLock::new(),
            input_full: AtomicU64::new(0),
        }
    }

    /// Wakes the worker if it is parked (call after pushing input or control).
    #[inline]
    pub fn wake(&self) {
        if self.parked.swap(false, Ordering::SeqCst) {
            if let Some(t) = self.thread.get() {
                t.unpark();
            }
        }
    }
}

/// Something that wakes the I/O thread.
pub trait Wake: Send + Sync {
    /// Wake it (cheap when it is not asleep).
    fn wake(&self);
}

/// Everything a worker runs with.
pub struct Worker {
    index: usize,
    engine: Engine,
    link: Arc<WorkerLink>,
    pool: Arc<Pool>,
    control: Receiver<Control>,
    io: Arc<dyn Wake>,
    stop: Arc<AtomicBool>,
    start: Instant,
    tick: Duration,
    local_fields: Vec<bool>,
    batch: Vec<Pkt>,
    out_ring_full: u64,
    out_no_buffer: u64,
    batches: u64,
}

/// Encoded length of a VAR-NUMBER.
#[inline]
fn var_len(x: usize) -> usize {
    match x {
        0..=252 => 1,
        253..=0xFFFF => 3,
        0x1_0000..=0xFFFF_FFFF => 5,
        _ => 9,
    }
}

/// Writes `packet` with `headers` into `buf`: bare when there are no headers, else an LpPacket.
/// Returns false (leaving `buf` empty) when it would not fit in `room` bytes.
pub fn encode_link(buf: &mut Vec<u8>, headers: &LpHeaders, packet: &[u8], room: usize) -> bool {
    buf.clear();
    if headers.is_empty() {
        if packet.len() > room {
            return false;
        }
        buf.extend_from_slice(packet);
        return true;
    }
    let frag = var_len(tt::LP_FRAGMENT as usize) + var_len(packet.len()) + packet.len();
    let inner = headers.encoded_len() + frag;
    let total = var_len(tt::LP_PACKET as usize) + var_len(inner) + inner;
    if total > room {
        return false;
    }
    write_var_number(buf, u64::from(tt::LP_PACKET));
    write_var_number(buf, inner as u64);
    headers.encode(buf);
    write_var_number(buf, u64::from(tt::LP_FRAGMENT));
    write_var_number(buf, packet.len() as u64);
    buf.extend_from_slice(packet);
    debug_assert_eq!(buf.len(), total);
    true
}

impl Worker {
    /// A worker around `engine`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: usize,
        engine: Engine,
        link: Arc<WorkerLink>,
        pool: Arc<Pool>,
        control: Receiver<Control>,
        io: Arc<dyn Wake>,
        stop: Arc<AtomicBool>,
        start: Instant,
        tick: Duration,
    ) -> Self {
        Worker {
            index,
            engine,
            link,
            pool,
            control,
            io,
            stop,
            start,
            tick,
            local_fields: Vec::new(),
            batch: Vec::with_capacity(MAX_BATCH),
            out_ring_full: 0,
            out_no_buffer: 0,
            batches: 0,
        }
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Runs until the stop flag is set.
    pub fn run(mut self) {
        let _ = self.link.thread.set(std::thread::current());
        while !self.stop.load(Ordering::Relaxed) {
            self.drain_control();
            if !self.run_batch() {
                let now = self.now_ms();
                self.engine.advance(now);
                self.link.parked.store(true, Ordering::SeqCst);
                if self.link.input.is_empty() && !self.stop.load(Ordering::SeqCst) {
                    std::thread::park_timeout(self.tick);
                }
                self.link.parked.store(false, Ordering::SeqCst);
            }
        }
    }

    /// Applies control messages: a bounded number per call.
    fn drain_control(&mut self) {
        for _ in 0..64 {
            match self.control.try_recv() {
                Ok(c) => self.apply(c),
                Err(_) => break,
            }
        }
    }

    fn apply(&mut self, c: Control) {
        match c {
            Control::Face {
                id,
                info,
                local_fields,
            } => {
                self.engine.set_face(id, info);
                let i = id as usize;
                if self.local_fields.len() <= i {
                    self.local_fields.resize(i + 1, false);
                }
                self.local_fields[i] = local_fields;
            }
            Control::Strategy { prefix, kind } => match kind {
                Some(k) => self.engine.strategies_mut().set(&prefix, k),
                None => {
                    self.engine.strategies_mut().unset(&prefix);
                }
            },
            Control::CsConfig { capacity, policy } => {
                self.engine.table_mut().set_cs_capacity(capacity, policy);
            }
            Control::CsErase {
                prefix,
                limit,
                reply,
            } => {
                let n = self.engine.table_mut().erase_cs(&prefix, limit);
                let _ = reply.send(n);
            }
            Control::Snapshot(reply) => {
                let t = self.engine.table();
                let _ = reply.send(Snapshot {
                    counters: self.engine.counters().clone(),
                    pit_len: t.pit_len(),
                    cs_len: t.cs_len(),
                    cs_capacity: t.config().cs_capacity,
                    cs_lru: t.config().cs_policy == CsPolicy::Lru,
                    out_ring_full: self.out_ring_full,
                    out_no_buffer: self.out_no_buffer,
                    batches: self.batches,
                    cs_hits: t.counters.cs_hits,
                    cs_misses: t.counters.cs_misses,
                });
            }
        }
    }

    /// Processes one batch; false if the input ring was empty.
    fn run_batch(&mut self) -> bool {
        let mut batch = std::mem::take(&mut self.batch);
        while batch.len() < MAX_BATCH {
            match self.link.input.pop() {
                Some(p) => batch.push(p),
                None => break,
            }
        }
        if batch.is_empty() {
            self.batch = batch;
            return false;
        }
        // A face is announced on the control channel before its first packet is pushed: having
        // popped the packet, the announcement is visible now.
        self.drain_control();
        self.batches += 1;
        let now = self.now_ms();
        let mut inputs: [(FaceId, &[u8]); MAX_BATCH] = [(0, &[]); MAX_BATCH];
        for (slot, p) in inputs.iter_mut().zip(&batch) {
            *slot = (p.face, p.bytes());
        }
        let inputs = &inputs[..batch.len()];
        let room = self.pool.buf_bytes();
        let token = worker_token(self.index);
        let out = self.engine.process(now, inputs);
        let mut sent = 0usize;
        for a in out.actions {
            let packet = out.bytes(a, inputs);
            let mut h = LpHeaders {
                pit_token: out.pit_token(a).and_then(PitToken::new),
                congestion_mark: (a.congestion_mark != 0).then_some(a.congestion_mark),
                ..LpHeaders::default()
            };
            match a.kind {
                SendKind::Interest => h.pit_token = PitToken::new(&token),
                SendKind::Nack(r) => h.nack = Some(Nack { reason: Some(r) }),
                SendKind::Data => {}
            }
            let wants_face_id = self.local_fields.get(a.face as usize).copied();
            if wants_face_id == Some(true) && !matches!(a.kind, SendKind::Nack(_)) {
                h.incoming_face_id = Some(match &a.packet {
                    engine::fw::pipeline::PacketRef::Input { index, .. } => {
                        u64::from(inputs[*index as usize].0)
                    }
                    engine::fw::pipeline::PacketRef::Out(_) => CONTENT_STORE_FACE_ID,
                });
            }
            let Some(mut buf) = self.pool.get() else {
                self.out_no_buffer += 1;
                continue;
            };
            if !encode_link(&mut buf, &h, packet, room) {
                self.out_no_buffer += 1;
                self.pool.put(buf);
                continue;
            }
            let kind = match a.kind {
                SendKind::Interest => PktKind::Interest,
                SendKind::Data => PktKind::Data,
                SendKind::Nack(_) => PktKind::Nack,
            };
            match self.link.output.push(Pkt {
                face: a.face,
                kind,
                buf,
            }) {
                Ok(()) => sent += 1,
                Err(p) => {
                    self.out_ring_full += 1;
                    self.pool.put(p.buf);
                }
            }
        }
        for p in batch.drain(..) {
            self.pool.put(p.buf);
        }
        self.batch = batch;
        if sent > 0 {
            self.io.wake();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_when_no_headers_else_lp_packet() {
        let mut buf = Vec::with_capacity(64);
        let pkt = [5u8, 2, 7, 0];
        assert!(encode_link(&mut buf, &LpHeaders::default(), &pkt, 64));
        assert_eq!(buf, pkt);
        let h = LpHeaders {
            pit_token: PitToken::new(&[1, 2, 3]),
            nack: Some(Nack {
                reason: Some(wire::NackReason::NoRoute),
            }),
            ..LpHeaders::default()
        };
        assert!(encode_link(&mut buf, &h, &pkt, 64));
        let lp = wire::LpPacketView::decode(&buf, &wire::Limits::default()).unwrap();
        assert_eq!(lp.pit_token, Some(&[1u8, 2, 3][..]));
        assert_eq!(lp.fragment(), Some(&pkt[..]));
        assert_eq!(lp.nack.unwrap().reason, Some(wire::NackReason::NoRoute));
        // Too large for the room: refused, nothing written.
        assert!(!encode_link(&mut buf, &h, &pkt, 10));
        assert!(buf.is_empty());
        assert!(!encode_link(&mut buf, &LpHeaders::default(), &[0; 65], 64));
    }
}
