//! UDP receive through io_uring: one multishot `recvmsg` per socket filling buffers from a
//! provided-buffer ring, so that receiving costs no system call per datagram or per batch.
//!
//! **How.** A [`UdpRing`] owns an io_uring instance, a buffer ring of `buffers` buffers
//! (registered with the kernel as buffer group 0) and the memory behind them, all allocated
//! once. One multishot `IORING_OP_RECVMSG` stays armed on the socket: each datagram the kernel
//! receives goes into a free buffer of the ring (header, source address, control data, payload)
//! and posts one completion. [`UdpRing::recv_batch`] drains up to `batch` completions and hands
//! the datagrams out as slices of their buffers ([`UdpRing::datagram`]), valid until the next
//! call, which gives those buffers back to the kernel first.
//!
//! **Waiting.** The ring's file descriptor ([`UdpRing::ring_fd`]) is readable while completions
//! are queued: a poll loop registers it in place of the socket's.
//!
//! **Termination.** The kernel ends a multishot receive when it runs out of buffers
//! (`ENOBUFS`: a burst outran the ring), on an error or when its completion queue overflows;
//! its last completion then lacks `IORING_CQE_F_MORE`. The datagrams it did not take stay in the
//! socket's queue, and the next [`UdpRing::recv_batch`] arms a new receive once the buffers
//! are back: nothing is lost but what the socket's own buffer drops.
//!
//! **GRO.** Built with `gro`, the socket gets `UDP_GRO`: the kernel may hand over several
//! datagrams of one sender as one buffer (on loopback: what a sender sent as one `UDP_SEGMENT`
//! message), with their segment size in a control message. Each is cut back into its datagrams,
//! so callers see the same datagrams either way. A coalesced buffer can hold 64 KiB, so the
//! buffers are that large with `gro`.
//!
//! **Unsafe.** The ring's memory is shared with the kernel: the buffer ring (written here,
//! read by the kernel) and the buffers (written by the kernel, read here only after their
//! completion, and not handed back until the caller is done with them). The few unsafe
//! blocks are the registration, the writes of ring entries and the reads of completed
//! buffers, each with its reasoning.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::{BufRingEntry, CancelBuilder, Fd, RecvMsgOut};
use io_uring::{cqueue, opcode, IoUring};

/// Default number of provided buffers of a [`UdpRing`].
pub const DEFAULT_RING_BUFFERS: u16 = 256;

/// Largest number of provided buffers (the kernel's limit on a buffer ring).
pub const MAX_RING_BUFFERS: u16 = 32_768;

/// Largest payload one buffer takes with GRO: the largest UDP payload.
pub const GRO_MAX_BYTES: usize = 65_535;

/// Most datagrams one GRO buffer is cut into (the kernel's `UDP_MAX_SEGMENTS`).
const GRO_MAX_SEGMENTS: usize = 64;

/// The buffer group of every ring (one group per ring).
const GROUP: u16 = 0;
/// The user data of the multishot receive.
const RECV: u64 = 1;
/// Bytes of the header io_uring writes at the start of each buffer (`io_uring_recvmsg_out`).
const OUT_HEADER_BYTES: usize = 16;
/// Bytes reserved for the source address (a `sockaddr_in6`).
const NAME_BYTES: usize = size_of::<libc::sockaddr_in6>();
/// Bytes reserved for control messages with GRO: one `cmsghdr` carrying an `int`, rounded up.
const CONTROL_BYTES: usize = 32;
/// One page: the buffer ring must be page-aligned.
const PAGE: usize = 4096;

/// Counters of one [`UdpRing`], all monotonically increasing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpRingCounters {
    /// Completions taken from the ring.
    pub completions: u64,
    /// Datagrams handed out.
    pub datagrams_in: u64,
    /// Bytes in the datagrams counted in `datagrams_in`.
    pub bytes_in: u64,
    /// Multishot receives armed (the first, and one after each the kernel ended).
    pub arms: u64,
    /// Receives the kernel ended for want of a free buffer (`ENOBUFS`).
    pub no_buffers: u64,
    /// Receives that failed otherwise (ICMP errors on an unconnected socket, for one).
    pub errors: u64,
    /// Datagrams longer than a buffer, dropped.
    pub truncated: u64,
    /// Buffers that held several datagrams (GRO), cut into their datagrams.
    pub coalesced: u64,
}

impl UdpRingCounters {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &UdpRingCounters) {
        self.completions += o.completions;
        self.datagrams_in += o.datagrams_in;
        self.bytes_in += o.bytes_in;
        self.arms += o.arms;
        self.no_buffers += o.no_buffers;
        self.errors += o.errors;
        self.truncated += o.truncated;
        self.coalesced += o.coalesced;
    }
}

/// One received datagram: its bytes within the buffer memory, and its source.
#[derive(Debug, Clone, Copy)]
struct Received {
    offset: usize,
    len: usize,
    from: SocketAddr,
}

/// One page of the buffer ring's memory.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Page([u8; PAGE]);

/// A UDP socket's receive side on io_uring. See the [module docs](self).
pub struct UdpRing {
    // Declared first so that it is dropped first (after the receive is cancelled in `drop`):
    // the kernel lets go of the memory below when the ring goes.
    ring: IoUring,
    socket: RawFd,
    /// The buffer ring (`buffers` entries of 16 bytes), owned here, read by the kernel.
    entries: Box<[Page]>,
    /// The buffers, `buffers` × `buf_bytes`, written by the kernel; only reached through
    /// `base` (their address) once the ring is set up.
    _memory: Vec<u8>,
    base: *mut u8,
    buf_bytes: usize,
    buffers: u16,
    /// The next ring entry to fill.
    tail: u16,
    /// The message header the multishot receive was armed with (only its name and control
    /// lengths matter to the kernel, and to parsing the buffers).
    msghdr: Box<libc::msghdr>,
    armed: bool,
    batch: usize,
    ready: Vec<Received>,
    /// Buffers of the last batch, given back at the next call.
    held: Vec<u16>,
    counters: UdpRingCounters,
    last_error: Option<io::Error>,
}

// SAFETY: `base` points into `_memory`, which the struct owns and which moves with it (a
// vector's heap memory does not move); nothing else aliases it on this side. The kernel's use of
// the memory is tied to the ring, which moves with the struct too.
unsafe impl Send for UdpRing {}

impl std::fmt::Debug for UdpRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpRing")
            .field("socket", &self.socket)
            .field("buffers", &self.buffers)
            .field("buf_bytes", &self.buf_bytes)
            .field("armed", &self.armed)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl UdpRing {
    /// Sets up receiving on `socket` (which must outlive the ring: the caller keeps it) with
    /// `buffers` provided buffers (a power of two, 1..=[`MAX_RING_BUFFERS`]) for datagrams of
    /// up to `max_datagram` bytes (with `gro`: [`GRO_MAX_BYTES`]), handing out at most `batch`
    /// completions per [`recv_batch`](Self::recv_batch). The receive is armed at the first call,
    /// which should come from the thread that reads the ring: the kernel completes the receive
    /// in the thread that armed it.
    ///
    /// Fails where the kernel refuses io_uring (before Linux 5.19 there is no buffer ring,
    /// before 6.0 no multishot `recvmsg`; `io_uring_disabled`, seccomp or memory limits), or
    /// with [`io::ErrorKind::InvalidInput`] for sizes out of range.
    pub fn new(
        socket: &UdpSocket,
        buffers: u16,
        max_datagram: usize,
        batch: usize,
        gro: bool,
    ) -> io::Result<Self> {
        let sizes_ok = buffers.is_power_of_two()
            && buffers <= MAX_RING_BUFFERS
            && (1..=GRO_MAX_BYTES).contains(&max_datagram)
            && (1..=crate::udp::MAX_BATCH).contains(&batch);
        if !sizes_ok {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "UdpRing needs a power of two of at most {MAX_RING_BUFFERS} buffers, \
                     datagrams of 1..={GRO_MAX_BYTES} bytes and batches of 1..={}; got \
                     {buffers}, {max_datagram}, {batch}",
                    crate::udp::MAX_BATCH
                ),
            ));
        }
        let control = if gro { CONTROL_BYTES } else { 0 };
        let payload = if gro { GRO_MAX_BYTES } else { max_datagram };
        // Each buffer starts 8-byte aligned (the header is read in place).
        let buf_bytes = (OUT_HEADER_BYTES + NAME_BYTES + control + payload).next_multiple_of(8);
        // Every buffer can be in the completion queue at once, with room for error completions.
        let ring = IoUring::builder()
            .setup_cqsize(u32::from(buffers).max(64) * 2)
            .build(8)?;
        if gro {
            set_gro(socket)?;
        }
        let pages = (usize::from(buffers) * size_of::<BufRingEntry>()).div_ceil(PAGE);
        let mut memory = vec![0u8; usize::from(buffers) * buf_bytes];
        let base = memory.as_mut_ptr();
        // SAFETY: `msghdr` is a plain C struct; all zeros is a valid value.
        let mut msghdr: Box<libc::msghdr> = Box::new(unsafe { std::mem::zeroed() });
        msghdr.msg_namelen = NAME_BYTES as libc::socklen_t;
        msghdr.msg_controllen = control as _;
        let mut r = UdpRing {
            ring,
            socket: socket.as_raw_fd(),
            entries: vec![Page([0; PAGE]); pages].into_boxed_slice(),
            _memory: memory,
            base,
            buf_bytes,
            buffers,
            tail: 0,
            msghdr,
            armed: false,
            batch,
            ready: Vec::with_capacity(batch + GRO_MAX_SEGMENTS),
            held: Vec::with_capacity(batch),
            counters: UdpRingCounters::default(),
            last_error: None,
        };
        let ring_addr = r.entries.as_ptr() as u64;
        // SAFETY: the entries are page-aligned (`Page`), hold `buffers` entries, and live as
        // long as the ring: the struct drops the ring (after unregistering) before them.
        unsafe {
            r.ring
                .submitter()
                .register_buf_ring_with_flags(ring_addr, buffers, GROUP, 0)?;
        }
        for bid in 0..buffers {
            r.give_back(bid);
        }
        r.publish();
        Ok(r)
    }

    /// The ring's file descriptor: readable while completions wait (poll it instead of the
    /// socket).
    pub fn ring_fd(&self) -> RawFd {
        self.ring.as_raw_fd()
    }

    /// The counters so far.
    pub fn counters(&self) -> UdpRingCounters {
        self.counters
    }

    /// The last error a receive completed with (taken).
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.last_error.take()
    }

    /// Gives the last batch's buffers back, arms the receive if the kernel ended it, and takes
    /// up to `batch` completions; returns how many datagrams [`datagram`](Self::datagram)
    /// hands out (`0..len()`). [`io::ErrorKind::WouldBlock`] when there was no completion:
    /// wait for the ring's descriptor. `Ok(0)` when the completions held no datagram (the
    /// receive ended, or errors: see [`take_error`](Self::take_error)).
    pub fn recv_batch(&mut self) -> io::Result<usize> {
        self.ready.clear();
        for i in 0..self.held.len() {
            let bid = self.held[i];
            self.give_back(bid);
        }
        self.held.clear();
        self.publish();
        if !self.armed {
            self.arm()?;
        }
        let mut taken = 0usize;
        while taken < self.batch && self.ready.len() < self.batch {
            let Some(cqe) = self.ring.completion().next() else {
                break;
            };
            taken += 1;
            self.complete(cqe.result(), cqe.flags(), cqe.user_data());
        }
        if taken == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.counters.completions += taken as u64;
        Ok(self.ready.len())
    }

    /// Number of datagrams from the last [`recv_batch`](Self::recv_batch).
    pub fn len(&self) -> usize {
        self.ready.len()
    }

    /// Whether the last [`recv_batch`](Self::recv_batch) gave no datagram.
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty()
    }

    /// Datagram `i` of the last [`recv_batch`](Self::recv_batch), in arrival order, and its
    /// source address.
    ///
    /// # Panics
    /// If `i >= len()`.
    pub fn datagram(&self, i: usize) -> (&[u8], SocketAddr) {
        let r = self.ready[i];
        // SAFETY: `ready` holds only ranges of completed buffers (within the memory), which the
        // kernel does not write until the next call gives them back.
        let bytes = unsafe { std::slice::from_raw_parts(self.base.add(r.offset), r.len) };
        (bytes, r.from)
    }

    /// Arms the multishot receive (one `io_uring_enter`).
    fn arm(&mut self) -> io::Result<()> {
        let sqe = opcode::RecvMsgMulti::new(Fd(self.socket), &*self.msghdr, GROUP)
            .build()
            .user_data(RECV);
        // SAFETY: the message header is boxed and lives as long as the ring (the kernel copies
        // its lengths when it takes the entry); the buffers come from the registered group.
        unsafe {
            self.ring
                .submission()
                .push(&sqe)
                .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        }
        self.ring.submit()?;
        self.armed = true;
        self.counters.arms += 1;
        Ok(())
    }

    /// Handles one completion of the receive.
    fn complete(&mut self, result: i32, flags: u32, user_data: u64) {
        if user_data != RECV {
            return;
        }
        if !cqueue::more(flags) {
            self.armed = false;
        }
        let bid = cqueue::buffer_select(flags);
        if result < 0 {
            if result == -libc::ENOBUFS {
                self.counters.no_buffers += 1;
            } else {
                self.counters.errors += 1;
                self.last_error = Some(io::Error::from_raw_os_error(-result));
            }
        }
        let Some(bid) = bid.filter(|&b| b < self.buffers) else {
            return;
        };
        self.held.push(bid);
        let start = usize::from(bid) * self.buf_bytes;
        let len = (result.max(0) as usize).min(self.buf_bytes);
        // SAFETY: the kernel filled `len` bytes of buffer `bid` before posting this
        // completion and does not touch the buffer again until it is given back (next call).
        let buf = unsafe { std::slice::from_raw_parts(self.base.add(start), len) };
        let Ok(out) = RecvMsgOut::parse(buf, &self.msghdr) else {
            self.counters.truncated += 1;
            return;
        };
        let Some(from) = parse_addr(out.name_data()) else {
            return;
        };
        if out.is_payload_truncated() {
            self.counters.truncated += 1;
            return;
        }
        let payload = out.payload_data();
        let offset = start + (payload.as_ptr() as usize - buf.as_ptr() as usize);
        let segment = gro_segment(out.control_data())
            .unwrap_or(payload.len())
            .max(1);
        if segment < payload.len() {
            self.counters.coalesced += 1;
        }
        let mut at = 0;
        while at < payload.len() {
            let len = segment.min(payload.len() - at);
            self.counters.datagrams_in += 1;
            self.counters.bytes_in += len as u64;
            self.ready.push(Received {
                offset: offset + at,
                len,
                from,
            });
            at += len;
        }
    }

    /// Puts buffer `bid` on the buffer ring (seen by the kernel at the next [`publish`]).
    fn give_back(&mut self, bid: u16) {
        let mask = self.buffers - 1;
        let entries = self.entries.as_mut_ptr().cast::<BufRingEntry>();
        // SAFETY: `tail & mask` < `buffers`, so the entry is within the ring's memory; the
        // kernel reads only entries between its head and the published tail, and this one is
        // past the published tail.
        let e = unsafe { &mut *entries.add(usize::from(self.tail & mask)) };
        e.set_addr(self.base as u64 + u64::from(bid) * self.buf_bytes as u64);
        e.set_len(self.buf_bytes as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Publishes the ring's tail to the kernel.
    fn publish(&mut self) {
        let entries = self.entries.as_ptr().cast::<BufRingEntry>();
        // SAFETY: the tail is a u16 inside the first entry (aligned for it), shared with the
        // kernel, which reads it atomically: it is written atomically, after the entries.
        unsafe {
            let tail = BufRingEntry::tail(entries).cast_mut();
            AtomicU16::from_ptr(tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for UdpRing {
    fn drop(&mut self) {
        // The receive must be gone before the buffers are freed.
        let _ = self
            .ring
            .submitter()
            .register_sync_cancel(None, CancelBuilder::user_data(RECV).all());
        let _ = self.ring.submitter().unregister_buf_ring(GROUP);
    }
}

/// Turns `UDP_GRO` on for `socket`.
fn set_gro(socket: &UdpSocket) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a valid socket descriptor and a pointer to an int of the length given.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_UDP,
            libc::UDP_GRO,
            (&on as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The segment size of a `UDP_GRO` control message among `control`'s, if there is one.
fn gro_segment(control: &[u8]) -> Option<usize> {
    let header = size_of::<libc::cmsghdr>();
    let (level_at, type_at) = (
        std::mem::offset_of!(libc::cmsghdr, cmsg_level),
        std::mem::offset_of!(libc::cmsghdr, cmsg_type),
    );
    let mut at = 0;
    // Bounded: each step moves at least one header forward.
    while at + header <= control.len() {
        let c = &control[at..];
        let len = usize::from_ne_bytes(c[..size_of::<usize>()].try_into().ok()?);
        let level = i32::from_ne_bytes(c[level_at..level_at + 4].try_into().ok()?);
        let kind = i32::from_ne_bytes(c[type_at..type_at + 4].try_into().ok()?);
        if len < header || at + len > control.len() {
            return None;
        }
        if level == libc::SOL_UDP && kind == libc::UDP_GRO && len >= header + 4 {
            let v = i32::from_ne_bytes(c[header..header + 4].try_into().ok()?);
            return usize::try_from(v).ok().filter(|&s| s > 0);
        }
        at += len.next_multiple_of(size_of::<usize>());
    }
    None
}

/// A source address as the kernel wrote it (`sockaddr_in` or `sockaddr_in6`).
fn parse_addr(name: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes(name.get(..2)?.try_into().ok()?));
    let port = u16::from_be_bytes(name.get(2..4)?.try_into().ok()?);
    match family {
        libc::AF_INET => {
            let ip: [u8; 4] = name.get(4..8)?.try_into().ok()?;
            Some(SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(ip), port)))
        }
        libc::AF_INET6 => {
            let flow = u32::from_be_bytes(name.get(4..8)?.try_into().ok()?);
            let ip: [u8; 16] = name.get(8..24)?.try_into().ok()?;
            let scope = u32::from_ne_bytes(name.get(24..28)?.try_into().ok()?);
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(ip),
                port,
                flow,
                scope,
            )))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
