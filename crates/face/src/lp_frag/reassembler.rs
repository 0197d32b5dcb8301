//! Reassembly: joining NDNLPv2 fragments back into network packets, with memory bounded per
//! face and, through a shared [`ReassemblyBudget`], over every face.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use wire::LpPacketView;

use super::{LpHeaders, DEFAULT_REASSEMBLY_CAPACITY, DEFAULT_REASSEMBLY_TIMEOUT_MS, MAX_FRAGMENTS};

/// A whole network packet out of the [`Reassembler`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassembled<'a> {
    /// The network packet's bytes: borrowed from the LpPacket when it was not fragmented.
    pub packet: Cow<'a, [u8]>,
    /// Link headers (of the FragIndex 0 piece).
    pub headers: LpHeaders,
}

impl Reassembled<'_> {
    /// A copy that owns its bytes.
    pub fn into_owned(self) -> Reassembled<'static> {
        Reassembled {
            packet: Cow::Owned(self.packet.into_owned()),
            headers: self.headers,
        }
    }
}

/// Why a received LpPacket was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReassemblyError {
    /// FragIndex >= FragCount (FragCount defaults to 1 when absent).
    FragIndexOutOfRange {
        /// FragIndex.
        index: u64,
        /// FragCount.
        count: u64,
    },
    /// FragCount above [`MAX_FRAGMENTS`].
    TooManyFragments {
        /// FragCount.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// A piece's FragCount differs from that of earlier pieces of the same packet. The piece is
    /// dropped; the partial packet is kept.
    InconsistentFragCount {
        /// FragCount of the first piece received.
        expected: u64,
        /// FragCount of this piece.
        got: u64,
    },
    /// A piece of a fragmented packet without Sequence.
    MissingSequence,
    /// A piece of a fragmented packet without Fragment.
    MissingFragment,
    /// The packet would exceed `max_packet_bytes`; what had arrived of it is dropped.
    Oversize {
        /// Bytes it would have had so far.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// Holding the piece would take the reassemblers past their shared [`ReassemblyBudget`];
    /// what had arrived of its packet is dropped.
    OverBudget {
        /// Bytes the piece needed.
        bytes: usize,
        /// The budget.
        budget: usize,
    },
}

impl ReassemblyError {
    /// Is this a malformed piece (everything but [`ReassemblyError::Oversize`] and
    /// [`ReassemblyError::OverBudget`])?
    #[inline]
    pub fn is_malformed(&self) -> bool {
        !matches!(
            self,
            ReassemblyError::Oversize { .. } | ReassemblyError::OverBudget { .. }
        )
    }
}

impl fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReassemblyError::FragIndexOutOfRange { index, count } => {
                write!(f, "FragIndex {index} not below FragCount {count}")
            }
            ReassemblyError::TooManyFragments { count, max } => {
                write!(f, "FragCount {count} above the limit of {max}")
            }
            ReassemblyError::InconsistentFragCount { expected, got } => {
                write!(f, "FragCount {got} differs from earlier pieces' {expected}")
            }
            ReassemblyError::MissingSequence => f.write_str("fragment without Sequence"),
            ReassemblyError::MissingFragment => f.write_str("fragmented LpPacket without Fragment"),
            ReassemblyError::Oversize { bytes, max } => {
                write!(f, "reassembled packet of {bytes} bytes exceeds {max}")
            }
            ReassemblyError::OverBudget { bytes, budget } => {
                write!(
                    f,
                    "{bytes} more bytes would exceed the reassembly budget of {budget}"
                )
            }
        }
    }
}

impl std::error::Error for ReassemblyError {}

/// What a [`Reassembler`] has done since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReassemblyCounters {
    /// Packets joined from two or more pieces.
    pub reassembled: u64,
    /// Partial packets dropped because no piece came for `timeout_ms`.
    pub timeouts: u64,
    /// Partial packets dropped to make room for a new one.
    pub dropped_full: u64,
    /// Packets dropped for exceeding `max_packet_bytes`.
    pub dropped_oversize: u64,
    /// Pieces received twice (ignored).
    pub duplicates: u64,
    /// Malformed pieces (see [`ReassemblyError::is_malformed`]).
    pub malformed: u64,
    /// Pieces refused because the shared [`ReassemblyBudget`] had no room for them (with
    /// their packets).
    pub dropped_budget: u64,
}

/// A byte budget shared by many [`Reassembler`]s (one per face): the memory their partial
/// packets hold together, buffers and bookkeeping. A piece that would take them past it is
/// refused, with its packet, and counted here and in the reassembler's counters.
///
/// A handle: clones share one budget. The reassemblers of one face table all run on its
/// thread; the counts are atomics only so that the handle is `Send`.
#[derive(Clone)]
pub struct ReassemblyBudget(Arc<BudgetState>);

struct BudgetState {
    limit: usize,
    used: AtomicUsize,
    refused: AtomicU64,
}

impl fmt::Debug for ReassemblyBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReassemblyBudget")
            .field("limit", &self.limit())
            .field("used", &self.used())
            .field("refused", &self.refused())
            .finish()
    }
}

impl ReassemblyBudget {
    /// A budget of `limit_bytes`.
    pub fn new(limit_bytes: usize) -> Self {
        ReassemblyBudget(Arc::new(BudgetState {
            limit: limit_bytes,
            used: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
        }))
    }

    /// No limit beyond each reassembler's own (partials × `max_packet_bytes`).
    pub fn unlimited() -> Self {
        Self::new(usize::MAX)
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> usize {
        self.0.limit
    }

    /// Bytes held now by the reassemblers that share it.
    pub fn used(&self) -> usize {
        self.0.used.load(Ordering::Relaxed)
    }

    /// Pieces refused at the limit so far.
    pub fn refused(&self) -> u64 {
        self.0.refused.load(Ordering::Relaxed)
    }

    /// Takes `n` bytes if they fit.
    fn try_take(&self, n: usize) -> bool {
        let s = &self.0;
        s.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                u.checked_add(n).filter(|&t| t <= s.limit)
            })
            .is_ok()
    }

    /// Takes `n` bytes whatever the limit (an allocator's slack beyond what was asked for).
    fn force_take(&self, n: usize) {
        self.0.used.fetch_add(n, Ordering::Relaxed);
    }

    fn give_back(&self, n: usize) {
        let prev = self.0.used.fetch_sub(n, Ordering::Relaxed);
        debug_assert!(prev >= n, "reassembly budget given back more than it lent");
    }

    fn count_refused(&self) {
        self.0.refused.fetch_add(1, Ordering::Relaxed);
    }
}

const NIL: u32 = u32::MAX;
const MAX_PIECES: usize = MAX_FRAGMENTS as usize;

/// Bytes of bookkeeping a partial packet takes, charged to the budget besides its buffer.
pub const PARTIAL_BYTES: usize = std::mem::size_of::<Partial>();

/// A reassembler that held more than this many partials at once gives its slot tables back
/// to the allocator when it holds none again.
const SHRINK_ABOVE: usize = 8;

/// One packet being reassembled (boxed: it exists only while pieces of its packet are held).
/// Pieces are appended to `buf` in arrival order; `pieces[i]` says where piece `i` is.
struct Partial {
    remote: u64,
    base: u64,
    count: u64,
    /// Bit `i` set: piece `i` is in.
    received: u64,
    nreceived: u64,
    /// Every piece so far arrived in index order, so `buf` is already the packet's prefix.
    in_order: bool,
    headers: LpHeaders,
    last_ms: u64,
    pieces: [(u32, u32); MAX_PIECES],
    /// Grows with the pieces received, never ahead of them by more than it already holds.
    buf: Vec<u8>,
    /// Bytes taken from the budget for this partial: [`PARTIAL_BYTES`] and `buf`'s capacity.
    charged: usize,
    /// Neighbours in the activity list (least recently active first).
    prev: u32,
    next: u32,
}

/// Joins NDNLPv2 fragments back into network packets, with bounded memory.
///
/// Memory held: at most `capacity` partial packets of at most `max_packet_bytes` each, plus
/// [`PARTIAL_BYTES`] of bookkeeping per partial, all of it charged to a [`ReassemblyBudget`]
/// that may be shared with other reassemblers. Nothing is reserved ahead of the pieces: a
/// partial's buffer grows as its pieces arrive (at most doubling), whatever FragCount
/// announces, and a partial's memory goes back to the allocator (and to the budget) when it
/// completes, times out or is dropped. Every operation does work bounded by the size of the
/// piece (a completed packet is copied once when its pieces arrived out of order) plus the
/// number of partials that have timed out.
pub struct Reassembler {
    capacity: usize,
    timeout_ms: u64,
    max_packet_bytes: usize,
    budget: ReassemblyBudget,
    slots: Vec<Option<Box<Partial>>>,
    free: Vec<u32>,
    index: HashMap<(u64, u64), u32>,
    /// Least recently active partial.
    head: u32,
    /// Most recently active partial.
    tail: u32,
    counters: ReassemblyCounters,
}

impl fmt::Debug for Reassembler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reassembler")
            .field("capacity", &self.capacity)
            .field("timeout_ms", &self.timeout_ms)
            .field("max_packet_bytes", &self.max_packet_bytes)
            .field("in_flight", &self.in_flight())
            .field("held_bytes", &self.held_bytes())
            .field("counters", &self.counters)
            .finish()
    }
}

impl Default for Reassembler {
    /// [`DEFAULT_REASSEMBLY_CAPACITY`] partials, NFD's 500 ms timeout, 8800-byte packets, a
    /// budget of its own with no limit beyond those.
    fn default() -> Self {
        Reassembler::new(
            DEFAULT_REASSEMBLY_CAPACITY,
            DEFAULT_REASSEMBLY_TIMEOUT_MS,
            wire::MAX_NDN_PACKET_BYTES,
        )
    }
}

impl Drop for Reassembler {
    fn drop(&mut self) {
        // What it holds goes back to the shared budget.
        self.clear();
    }
}

impl Reassembler {
    /// At most `capacity` (at least 1) partial packets in flight, each dropped after `timeout_ms`
    /// without a new piece, each at most `max_packet_bytes` once joined; a budget of its own
    /// with no further limit.
    pub fn new(capacity: usize, timeout_ms: u64, max_packet_bytes: usize) -> Self {
        Self::with_budget(
            capacity,
            timeout_ms,
            max_packet_bytes,
            ReassemblyBudget::unlimited(),
        )
    }

    /// As [`Reassembler::new`], its memory charged to `budget` (shared with other reassemblers).
    pub fn with_budget(
        capacity: usize,
        timeout_ms: u64,
        max_packet_bytes: usize,
        budget: ReassemblyBudget,
    ) -> Self {
        let capacity = capacity.clamp(1, (NIL - 1) as usize);
        Reassembler {
            capacity,
            timeout_ms,
            max_packet_bytes: max_packet_bytes.min(u32::MAX as usize),
            budget,
            slots: Vec::new(),
            free: Vec::new(),
            index: HashMap::new(),
            head: NIL,
            tail: NIL,
            counters: ReassemblyCounters::default(),
        }
    }

    /// Most partial packets held at once.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Reassembly timeout in milliseconds.
    #[inline]
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms
    }

    /// Largest reassembled packet.
    #[inline]
    pub fn max_packet_bytes(&self) -> usize {
        self.max_packet_bytes
    }

    /// Partial packets held now.
    #[inline]
    pub fn in_flight(&self) -> usize {
        self.index.len()
    }

    /// Bytes this reassembler holds now (charged to its budget): bookkeeping and buffers of
    /// its partial packets.
    pub fn held_bytes(&self) -> usize {
        self.slots.iter().flatten().map(|p| p.charged).sum()
    }

    /// The budget it charges.
    pub fn budget(&self) -> &ReassemblyBudget {
        &self.budget
    }

    /// The counters.
    #[inline]
    pub fn counters(&self) -> ReassemblyCounters {
        self.counters
    }

    /// Takes one LpPacket from the sender `remote` (any stable key for it, such as a hash of its
    /// socket address) at time `now_ms`.
    ///
    /// `Ok(Some)`: a whole network packet (at once for an unfragmented LpPacket, borrowing its
    /// bytes). `Ok(None)`: a piece was stored, or was a duplicate, or the LpPacket carried no
    /// fragment at all (an IDLE packet). `Err`: the piece was dropped, and counted. Partials that
    /// have timed out by `now_ms` are dropped first.
    pub fn receive<'a>(
        &mut self,
        remote: u64,
        lp: &LpPacketView<'a>,
        now_ms: u64,
    ) -> Result<Option<Reassembled<'a>>, ReassemblyError> {
        self.expire(now_ms);
        let index = lp.frag_index.unwrap_or(0);
        let count = lp.frag_count.unwrap_or(1);
        if index >= count {
            return self.malformed(ReassemblyError::FragIndexOutOfRange { index, count });
        }
        let Some(frag) = lp.fragment() else {
            if count > 1 {
                return self.malformed(ReassemblyError::MissingFragment);
            }
            return Ok(None);
        };
        let max = self.max_packet_bytes;
        if count == 1 {
            if frag.len() > max {
                self.counters.dropped_oversize += 1;
                let bytes = frag.len();
                return Err(ReassemblyError::Oversize { bytes, max });
            }
            return Ok(Some(Reassembled {
                packet: Cow::Borrowed(frag),
                headers: LpHeaders::from_view(lp),
            }));
        }
        if count > MAX_FRAGMENTS {
            let max = MAX_FRAGMENTS;
            return self.malformed(ReassemblyError::TooManyFragments { count, max });
        }
        let Some(sequence) = lp.sequence else {
            return self.malformed(ReassemblyError::MissingSequence);
        };
        let key = (remote, sequence.wrapping_sub(index));
        let existing = self.index.get(&key).copied();
        if frag.len() > max {
            if let Some(slot) = existing {
                self.remove(slot);
            }
            self.counters.dropped_oversize += 1;
            let bytes = frag.len();
            return Err(ReassemblyError::Oversize { bytes, max });
        }
        let slot = match existing {
            Some(slot) => slot,
            None => self.allocate(key, count, now_ms)?,
        };
        let p = self.partial(slot);
        if p.count != count {
            let expected = p.count;
            return self.malformed(ReassemblyError::InconsistentFragCount {
                expected,
                got: count,
            });
        }
        let bit = 1u64 << index;
        if p.received & bit != 0 {
            self.counters.duplicates += 1;
            return Ok(None);
        }
        let bytes = p.buf.len() + frag.len();
        if bytes > max {
            self.remove(slot);
            self.counters.dropped_oversize += 1;
            return Err(ReassemblyError::Oversize { bytes, max });
        }
        self.grow(slot, frag.len())?;
        let p = self.partial(slot);
        p.pieces[index as usize] = (p.buf.len() as u32, frag.len() as u32);
        p.buf.extend_from_slice(frag);
        p.in_order &= index == p.nreceived;
        p.received |= bit;
        p.nreceived += 1;
        if index == 0 {
            p.headers = LpHeaders::from_view(lp);
        }
        p.last_ms = now_ms;
        if p.nreceived < count {
            self.unlink(slot);
            self.push_back(slot);
            return Ok(None);
        }
        let packet = if p.in_order {
            std::mem::take(&mut p.buf)
        } else {
            let mut out = Vec::with_capacity(p.buf.len());
            for &(off, len) in &p.pieces[..count as usize] {
                let (off, len) = (off as usize, len as usize);
                out.extend_from_slice(&p.buf[off..off + len]);
            }
            out
        };
        let headers = p.headers;
        self.remove(slot);
        self.counters.reassembled += 1;
        Ok(Some(Reassembled {
            packet: Cow::Owned(packet),
            headers,
        }))
    }

    /// Drops the partial packets that have had no new piece for `timeout_ms` or more by `now_ms`
    /// (their memory goes back to the allocator and the budget). Returns how many.
    pub fn expire(&mut self, now_ms: u64) -> usize {
        let mut n = 0;
        while self.head != NIL {
            let last_ms = self.partial(self.head).last_ms;
            if now_ms.saturating_sub(last_ms) < self.timeout_ms {
                break;
            }
            self.remove(self.head);
            n += 1;
        }
        self.counters.timeouts += n as u64;
        n
    }

    /// Drops every partial packet (counted nowhere), e.g. when the face closes.
    pub fn clear(&mut self) {
        while self.head != NIL {
            self.remove(self.head);
        }
    }

    fn malformed<T>(&mut self, e: ReassemblyError) -> Result<T, ReassemblyError> {
        self.counters.malformed += 1;
        Err(e)
    }

    /// A refusal at the budget for `bytes` more bytes, counted.
    fn over_budget<T>(&mut self, bytes: usize) -> Result<T, ReassemblyError> {
        self.counters.dropped_budget += 1;
        self.budget.count_refused();
        let budget = self.budget.limit();
        Err(ReassemblyError::OverBudget { bytes, budget })
    }

    #[inline]
    fn partial(&mut self, slot: u32) -> &mut Partial {
        match self.slots[slot as usize].as_deref_mut() {
            Some(p) => p,
            None => unreachable!("partial {slot} is not held"),
        }
    }

    /// A fresh partial for `key` (its bookkeeping charged, no buffer yet), making room first if
    /// the reassembler is at its capacity.
    fn allocate(
        &mut self,
        key: (u64, u64),
        count: u64,
        now_ms: u64,
    ) -> Result<u32, ReassemblyError> {
        if self.index.len() >= self.capacity {
            self.remove(self.head);
            self.counters.dropped_full += 1;
        }
        if !self.budget.try_take(PARTIAL_BYTES) {
            return self.over_budget(PARTIAL_BYTES);
        }
        let p = Box::new(Partial {
            remote: key.0,
            base: key.1,
            count,
            received: 0,
            nreceived: 0,
            in_order: true,
            headers: LpHeaders::default(),
            last_ms: now_ms,
            pieces: [(0, 0); MAX_PIECES],
            buf: Vec::new(),
            charged: PARTIAL_BYTES,
            prev: NIL,
            next: NIL,
        });
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(p);
                s
            }
            None => {
                self.slots.push(Some(p));
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key, slot);
        self.push_back(slot);
        Ok(slot)
    }

    /// Makes room in partial `slot`'s buffer for `more` bytes, charging the budget; at the
    /// budget, drops the partial.
    fn grow(&mut self, slot: u32, more: usize) -> Result<(), ReassemblyError> {
        let max = self.max_packet_bytes;
        let p = self.partial(slot);
        let (len, cap) = (p.buf.len(), p.buf.capacity());
        if len + more <= cap {
            return Ok(());
        }
        // At most double what is already held: the first piece gets exactly its own size.
        let want = (len + more).max(cap.saturating_mul(2).min(max));
        if !self.budget.try_take(want - cap) {
            self.remove(slot);
            return self.over_budget(want - cap);
        }
        let budget = self.budget.clone();
        let p = self.partial(slot);
        p.buf.reserve_exact(want - len);
        // Whatever the allocator gave beyond the request is held too.
        let slack = p.buf.capacity() - want;
        budget.force_take(slack);
        p.charged += want - cap + slack;
        Ok(())
    }

    fn remove(&mut self, slot: u32) {
        self.unlink(slot);
        let Some(p) = self.slots[slot as usize].take() else {
            return;
        };
        self.budget.give_back(p.charged);
        self.index.remove(&(p.remote, p.base));
        self.free.push(slot);
        if self.index.is_empty() && self.slots.len() > SHRINK_ABOVE {
            self.slots = Vec::new();
            self.free = Vec::new();
            self.index = HashMap::new();
        }
    }

    fn unlink(&mut self, slot: u32) {
        let (prev, next) = {
            let p = self.partial(slot);
            (p.prev, p.next)
        };
        match prev {
            NIL => self.head = next,
            x => self.partial(x).next = next,
        }
        match next {
            NIL => self.tail = prev,
            x => self.partial(x).prev = prev,
        }
        let p = self.partial(slot);
        p.prev = NIL;
        p.next = NIL;
    }

    fn push_back(&mut self, slot: u32) {
        let tail = self.tail;
        {
            let p = self.partial(slot);
            p.prev = tail;
            p.next = NIL;
        }
        match tail {
            NIL => self.head = slot,
            t => self.partial(t).next = slot,
        }
        self.tail = slot;
    }
}

#[cfg(test)]
mod tests {
    use super::super::Fragmenter;
    use super::*;
    use wire::Limits;

    #[test]
    fn activity_order_decides_eviction_and_expiry() {
        let mut f = Fragmenter::new(100, 0).unwrap().with_bare(false);
        let mut r = Reassembler::new(2, 50, 8800);
        let mut a = vec![];
        let mut b = vec![];
        let mut c = vec![];
        let h = LpHeaders::default();
        f.fragment(&[1; 300], &h, &mut a).unwrap();
        f.fragment(&[2; 300], &h, &mut b).unwrap();
        f.fragment(&[3; 300], &h, &mut c).unwrap();
        fn dec(d: &[u8]) -> LpPacketView<'_> {
            LpPacketView::decode(d, &Limits::default()).unwrap()
        }
        assert!(r.receive(1, &dec(&a[0]), 0).unwrap().is_none());
        assert!(r.receive(1, &dec(&b[0]), 1).unwrap().is_none());
        // Touch `a`: `b` becomes the least recently active and is evicted for `c`.
        assert!(r.receive(1, &dec(&a[1]), 2).unwrap().is_none());
        assert!(r.receive(1, &dec(&c[0]), 3).unwrap().is_none());
        assert_eq!(r.counters().dropped_full, 1);
        assert_eq!(r.in_flight(), 2);
        for d in &a[2..] {
            r.receive(1, &dec(d), 4).unwrap();
        }
        assert_eq!(r.counters().reassembled, 1);
        // `c` was last touched at 3: still alive at 52, gone at 53.
        assert_eq!(r.expire(52), 0);
        assert_eq!(r.expire(53), 1);
        assert_eq!(r.in_flight(), 0);
        assert_eq!(r.counters().timeouts, 1);
        // Slots are reused.
        assert!(r.receive(1, &dec(&b[1]), 60).unwrap().is_none());
        assert_eq!(r.slots.len(), 2);
        r.clear();
        assert_eq!(r.in_flight(), 0);
        assert_eq!((r.head, r.tail), (NIL, NIL));
    }
}
