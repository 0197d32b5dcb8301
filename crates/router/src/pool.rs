//! Packet buffers shared by the I/O thread and the workers.
//!
//! A buffer is a boxed byte slice moved between threads through bounded rings, so exactly one
//! thread owns it at a time and no lock is needed. Buffers are allocated lazily, up to a
//! capacity fixed at start-up, and recycled through a lock-free free list: after warm-up no
//! packet allocates. When every buffer is in flight, the receiver drops (and counts) instead of
//! growing, as a NIC does with a full ring.

use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_queue::ArrayQueue;
use engine::table::pit_cs::FaceId;
use face::link::{encode_link, link_len};
use face::lp_frag::LpHeaders;

/// One packet in a pool buffer, with the face it came from or goes to.
///
/// The buffer's capacity is [`Pool::buf_bytes`]; writers check the room they need first, so it
/// never reallocates.
#[derive(Debug)]
pub struct Pkt {
    /// Incoming face (to a worker) or destination face (from a worker).
    pub face: FaceId,
    /// What the packet is (for face counters).
    pub kind: PktKind,
    /// The packet's bytes.
    pub buf: Vec<u8>,
    /// The full-name hash of its Interest, Data or Nack, when the I/O thread's dispatcher
    /// computed it (the worker's engine then need not: the precomputed hash of So, Narayanan and
    /// Oran, "Named Data Networking on a Router: Fast and DoS-resistant Forwarding with Hash
    /// Tables", ANCS 2013).
    pub full_hash: Option<u64>,
}

impl Pkt {
    /// The packet's bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// The network-layer kind of a packet, for counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PktKind {
    /// An Interest.
    Interest,
    /// A Data.
    Data,
    /// A Nack.
    Nack,
    /// Anything else (IDLE, fragments, garbage).
    #[default]
    Other,
    /// A chunk (bare Data) that another worker received and that this worker owns: to be
    /// stored in this worker's L2, not forwarded.
    Admit,
    /// A CanBePrefix Interest another worker's L2 missed and handed on to this worker: its
    /// link-layer packet, then what is left of its downstream's lifetime (8 bytes, ms, little
    /// endian).
    HandOn,
}

impl PktKind {
    /// The kind of a link-layer packet (bare or in an LpPacket; fragments are `Other`).
    pub fn of_link(bytes: &[u8]) -> PktKind {
        match bytes.first() {
            Some(0x05) => PktKind::Interest,
            Some(0x06) => PktKind::Data,
            Some(0x64) => match wire::LpPacketView::decode(bytes, &wire::Limits::default()) {
                Ok(lp) if lp.nack.is_some() => PktKind::Nack,
                Ok(lp) if lp.frag_index.unwrap_or(0) == 0 => match lp.fragment() {
                    Some(f) => PktKind::of_link(f),
                    None => PktKind::Other,
                },
                _ => PktKind::Other,
            },
            _ => PktKind::Other,
        }
    }
}

impl From<PktKind> for face::PacketKind {
    /// The kind a face counts (an L2 admission is never sent or received by a face).
    #[inline]
    fn from(k: PktKind) -> Self {
        match k {
            PktKind::Interest => face::PacketKind::Interest,
            PktKind::Data => face::PacketKind::Data,
            PktKind::Nack => face::PacketKind::Nack,
            PktKind::Other | PktKind::Admit | PktKind::HandOn => face::PacketKind::Other,
        }
    }
}

/// The shared buffer pool.
#[derive(Debug)]
pub struct Pool {
    free: ArrayQueue<Vec<u8>>,
    allocated: AtomicUsize,
    capacity: usize,
    buf_bytes: usize,
}

impl Pool {
    /// A pool of at most `capacity` buffers of `buf_bytes` each.
    pub fn new(capacity: usize, buf_bytes: usize) -> Self {
        assert!(capacity > 0 && buf_bytes > 0);
        Pool {
            free: ArrayQueue::new(capacity),
            allocated: AtomicUsize::new(0),
            capacity,
            buf_bytes,
        }
    }

    /// Allocates up to `n` more buffers now (never past the capacity), writes every page of
    /// each so that the kernel maps them now rather than on the packet path, and puts them on
    /// the free list. Returns how many it added.
    pub fn prefault(&self, n: usize) -> usize {
        let mut added = 0;
        while added < n {
            let got = self
                .allocated
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
                    (k < self.capacity).then_some(k + 1)
                });
            if got.is_err() {
                break;
            }
            let mut buf = Vec::with_capacity(self.buf_bytes);
            crate::mem::touch(buf.spare_capacity_mut());
            self.put(buf);
            added += 1;
        }
        added
    }

    /// Size of every buffer.
    pub fn buf_bytes(&self) -> usize {
        self.buf_bytes
    }

    /// A free, empty buffer, or `None` when all `capacity` buffers are in flight.
    #[inline]
    pub fn get(&self) -> Option<Vec<u8>> {
        if let Some(b) = self.free.pop() {
            return Some(b);
        }
        // Warm-up: allocate, never past the capacity.
        let prev = self
            .allocated
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.capacity).then_some(n + 1)
            });
        prev.ok().map(|_| Vec::with_capacity(self.buf_bytes))
    }

    /// A packet holding a copy of `bytes` for `face`, or `None` if no buffer is free or the
    /// bytes do not fit.
    #[inline]
    pub fn pkt_from(&self, face: FaceId, bytes: &[u8]) -> Option<Pkt> {
        if bytes.len() > self.buf_bytes {
            return None;
        }
        let mut buf = self.get()?;
        buf.extend_from_slice(bytes);
        Some(Pkt {
            face,
            kind: PktKind::Other,
            buf,
            full_hash: None,
        })
    }

    /// A packet holding `packet` with link `headers`, as [`face::link::encode_link`] writes
    /// them, for `face`; `None` if no buffer is free or the bytes do not fit.
    #[inline]
    pub fn pkt_link(&self, face: FaceId, headers: &LpHeaders, packet: &[u8]) -> Option<Pkt> {
        if link_len(headers, packet.len()) > self.buf_bytes {
            return None;
        }
        let mut buf = self.get()?;
        let fits = encode_link(&mut buf, headers, packet, self.buf_bytes);
        debug_assert!(fits);
        Some(Pkt {
            face,
            kind: PktKind::Other,
            buf,
            full_hash: None,
        })
    }

    /// Returns a buffer.
    #[inline]
    pub fn put(&self, mut buf: Vec<u8>) {
        debug_assert!(buf.capacity() >= self.buf_bytes && buf.capacity() < 2 * self.buf_bytes);
        buf.clear();
        // The free list holds every buffer ever allocated, so this cannot overflow.
        let r = self.free.push(buf);
        debug_assert!(r.is_ok());
    }

    /// Buffers allocated so far.
    pub fn allocated(&self) -> usize {
        self.allocated.load(Ordering::Relaxed)
    }

    /// Buffers currently free.
    pub fn free_len(&self) -> usize {
        self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_recycled() {
        let p = Pool::new(3, 16);
        let a = p.pkt_from(1, b"abc").unwrap();
        let b = p.get().unwrap();
        let c = p.get().unwrap();
        assert!(p.get().is_none(), "capacity is a hard limit");
        assert_eq!(a.bytes(), b"abc");
        assert!(p.pkt_from(1, &[0; 17]).is_none(), "too large");
        let ptr = b.as_ptr();
        p.put(b);
        let again = p.get().unwrap();
        assert_eq!(again.as_ptr(), ptr, "recycled, not reallocated");
        assert!(again.is_empty());
        assert_eq!(p.allocated(), 3);
        p.put(again);
        p.put(c);
        p.put(a.buf);
        assert_eq!(p.free_len(), 3);
    }

    #[test]
    fn prefault_fills_the_free_list_up_to_the_capacity() {
        let p = Pool::new(4, 10_000);
        assert_eq!(p.prefault(3), 3);
        assert_eq!((p.allocated(), p.free_len()), (3, 3));
        assert_eq!(p.prefault(5), 1, "capacity is a hard limit");
        let b = p.get().unwrap();
        assert!(b.capacity() >= 10_000 && b.is_empty());
        assert_eq!(p.allocated(), 4);
        p.put(b);
        assert_eq!(p.free_len(), 4);
    }

    #[test]
    fn kinds() {
        use wire::{Data, Interest, LpPacket, Name};
        let i = Interest::new(Name::from_uri("/a").unwrap(), [0; 4]).to_wire();
        let d = Data::new(Name::from_uri("/a").unwrap(), vec![]).to_wire();
        assert_eq!(PktKind::of_link(&i), PktKind::Interest);
        assert_eq!(PktKind::of_link(&d), PktKind::Data);
        let nack = LpPacket::nack(i.clone(), wire::NackReason::NoRoute).to_wire();
        assert_eq!(PktKind::of_link(&nack), PktKind::Nack);
        let wrapped = LpPacket {
            fragment: Some(d),
            ..LpPacket::default()
        };
        assert_eq!(PktKind::of_link(&wrapped.to_wire()), PktKind::Data);
        assert_eq!(PktKind::of_link(&[9, 9]), PktKind::Other);
    }
}
