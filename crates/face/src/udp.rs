//! Batched UDP I/O for datagram faces: many datagrams per system call with Linux's `recvmmsg` and
//! `sendmmsg`.
//!
//! **Memory.** A [`UdpBatch`] owns its socket and one receive buffer of `batch × max_datagram`
//! bytes (defaults [`DEFAULT_BATCH`] × [`DEFAULT_MAX_DATAGRAM`]), plus one source address per slot,
//! all allocated once. Received datagrams are handed out as slices of that buffer (no copy) and
//! stay valid until the next [`UdpBatch::recv_batch`]. The small per-call header arrays the kernel
//! reads (one `iovec` and one `mmsghdr` per datagram) are built on each call, so no raw pointer is
//! kept in the struct and it stays `Send`.
//!
//! **Receiving.** [`UdpBatch::recv_batch`] makes exactly one `recvmmsg` call with
//! `MSG_WAITFORONE`: it waits (as the socket allows: blocking, read timeout or non-blocking) for
//! the first datagram, then takes whatever else is already queued, up to `batch`. A datagram longer
//! than `max_datagram` comes back with `MSG_TRUNC`; it is counted in
//! [`UdpCounters::truncated`] and dropped, never returned. Read the rest with
//! [`UdpBatch::datagram`].
//!
//! **Sending.** [`UdpBatch::send_batch`] makes exactly one `sendmmsg` call and returns how many
//! datagrams the kernel took, always from the front; the caller retries the rest.
//!
//! **Unsafe.** The only unsafe code is the two system calls, each in one small function
//! (`recv_mmsg`, `send_mmsg`) that builds its headers from buffers it borrows for the call.
//! Addresses are built and read as `sockaddr_in` or `sockaddr_in6` values, chosen by the socket's
//! own address family, so no pointer casts are needed.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;

/// Default number of datagrams one [`UdpBatch::recv_batch`] can receive.
pub const DEFAULT_BATCH: usize = 64;

/// Default receive slot size, in bytes: a jumbo Ethernet frame's payload.
pub const DEFAULT_MAX_DATAGRAM: usize = 9000;

/// Largest `batch` accepted, and most items one [`UdpBatch::send_batch`] passes to the kernel
/// (Linux's `UIO_MAXIOV`, the cap on `vlen` in `recvmmsg` and `sendmmsg`).
pub const MAX_BATCH: usize = 1024;

/// Largest `max_datagram` accepted: the largest UDP payload over IPv6 without jumbograms.
pub const MAX_DATAGRAM_LIMIT: usize = 65_535;

/// Most datagrams in one segmented message of [`UdpBatch::send_segments`] (the kernel's
/// `UDP_MAX_SEGMENTS` since `UDP_SEGMENT` came, in Linux 4.18).
pub const MAX_SEGMENTS: usize = 64;

/// Most payload bytes in one segmented message of [`UdpBatch::send_segments`]: what one IPv6
/// UDP datagram can carry, less room for extension headers.
pub const MAX_SEGMENTED_BYTES: usize = 65_000;

/// One message of [`UdpBatch::send_segments`]: datagrams `first..first + count` of the
/// call's list, all to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segments {
    /// Index of its first datagram.
    pub first: usize,
    /// Datagrams (at least one).
    pub count: usize,
    /// With more than one datagram: the size of each but the last, which may be shorter
    /// (0: send them as one datagram, their bytes back to back).
    pub segment: u16,
    /// Destination.
    pub to: SocketAddr,
}

/// Counters of one [`UdpBatch`], all monotonically increasing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpCounters {
    /// `recvmmsg` calls that succeeded.
    pub recv_calls: u64,
    /// Datagrams received whole and handed out.
    pub datagrams_in: u64,
    /// Bytes in the datagrams counted in `datagrams_in`.
    pub bytes_in: u64,
    /// `sendmmsg` calls that succeeded.
    pub send_calls: u64,
    /// Datagrams the kernel took for sending.
    pub datagrams_out: u64,
    /// Bytes in the datagrams counted in `datagrams_out`.
    pub bytes_out: u64,
    /// Datagrams longer than `max_datagram`, dropped.
    pub truncated: u64,
}

/// Receive-side source addresses, one per slot, typed by the socket's address family.
#[derive(Debug)]
enum RecvAddrs {
    V4(Vec<libc::sockaddr_in>),
    V6(Vec<libc::sockaddr_in6>),
}

/// One received datagram: its slot, length and source.
#[derive(Debug, Clone, Copy)]
struct Received {
    slot: usize,
    len: usize,
    from: SocketAddr,
}

/// What the kernel reported for one slot of a `recvmmsg` call.
#[derive(Debug, Clone, Copy, Default)]
struct SlotResult {
    len: usize,
    flags: libc::c_int,
    addr_len: libc::socklen_t,
}

/// A UDP socket with fixed buffers for batched receive and send. See the [module docs](self).
#[derive(Debug)]
pub struct UdpBatch {
    socket: UdpSocket,
    max_datagram: usize,
    buf: Box<[u8]>,
    addrs: RecvAddrs,
    results: Vec<SlotResult>,
    ready: Vec<Received>,
    counters: UdpCounters,
}

impl UdpBatch {
    /// Wraps a bound socket with [`DEFAULT_BATCH`] slots of [`DEFAULT_MAX_DATAGRAM`] bytes.
    ///
    /// The caller binds the socket and sets it non-blocking or gives it a read timeout as it
    /// needs. Fails only if the socket's local address cannot be read.
    pub fn new(socket: UdpSocket) -> io::Result<Self> {
        Self::with_capacity(socket, DEFAULT_BATCH, DEFAULT_MAX_DATAGRAM)
    }

    /// Wraps a bound socket with `batch` receive slots of `max_datagram` bytes each.
    ///
    /// Fails with [`io::ErrorKind::InvalidInput`] unless `1 <= batch <= MAX_BATCH` and
    /// `1 <= max_datagram <= MAX_DATAGRAM_LIMIT`, or if the socket's local address cannot be
    /// read.
    pub fn with_capacity(socket: UdpSocket, batch: usize, max_datagram: usize) -> io::Result<Self> {
        if !(1..=MAX_BATCH).contains(&batch) || !(1..=MAX_DATAGRAM_LIMIT).contains(&max_datagram) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "UdpBatch needs 1..={MAX_BATCH} slots of 1..={MAX_DATAGRAM_LIMIT} bytes, \
                     got {batch} x {max_datagram}"
                ),
            ));
        }
        let addrs = match socket.local_addr()? {
            SocketAddr::V4(_) => RecvAddrs::V4(vec![sockaddr_v4(&unspecified_v4()); batch]),
            SocketAddr::V6(_) => RecvAddrs::V6(vec![sockaddr_v6(&unspecified_v6()); batch]),
        };
        Ok(UdpBatch {
            socket,
            max_datagram,
            buf: vec![0u8; batch * max_datagram].into_boxed_slice(),
            addrs,
            results: vec![SlotResult::default(); batch],
            ready: Vec::with_capacity(batch),
            counters: UdpCounters::default(),
        })
    }

    /// The socket, for options, `local_addr` or polling.
    pub fn socket(&self) -> &UdpSocket {
        &self.socket
    }

    /// Gives the socket back, dropping the buffers.
    pub fn into_socket(self) -> UdpSocket {
        self.socket
    }

    /// Number of receive slots.
    pub fn batch(&self) -> usize {
        self.results.len()
    }

    /// Size of each receive slot: the longest datagram received whole.
    pub fn max_datagram(&self) -> usize {
        self.max_datagram
    }

    /// The counters so far.
    pub fn counters(&self) -> UdpCounters {
        self.counters
    }

    /// Receives up to `batch` datagrams with one `recvmmsg` call and returns how many can be read
    /// with [`datagram`](Self::datagram) (`0..len()`), dropping the previous batch.
    ///
    /// Waits for the first datagram as the socket is set up to (a non-blocking socket or an
    /// expired read timeout gives [`io::ErrorKind::WouldBlock`] or [`io::ErrorKind::TimedOut`]),
    /// then takes only what is already queued. May return `Ok(0)` when every datagram received was
    /// truncated (see [`UdpCounters::truncated`]). On error the previous batch is gone too.
    pub fn recv_batch(&mut self) -> io::Result<usize> {
        self.ready.clear();
        let n = recv_mmsg(
            &self.socket,
            &mut self.buf,
            self.max_datagram,
            &mut self.addrs,
            &mut self.results,
        )?;
        self.counters.recv_calls += 1;
        for (slot, r) in self.results[..n].iter().enumerate() {
            if r.flags & libc::MSG_TRUNC != 0 || r.len > self.max_datagram {
                self.counters.truncated += 1;
                continue;
            }
            let from = match &self.addrs {
                RecvAddrs::V4(a) => std_addr_v4(&a[slot], r.addr_len),
                RecvAddrs::V6(a) => std_addr_v6(&a[slot], r.addr_len),
            };
            // UDP always reports a source of the socket's own family; anything else is dropped.
            let Some(from) = from else { continue };
            self.counters.datagrams_in += 1;
            self.counters.bytes_in += r.len as u64;
            self.ready.push(Received {
                slot,
                len: r.len,
                from,
            });
        }
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
        let start = r.slot * self.max_datagram;
        (&self.buf[start..start + r.len], r.from)
    }

    /// Iterates over the datagrams of the last [`recv_batch`](Self::recv_batch).
    pub fn datagrams(&self) -> impl Iterator<Item = (&[u8], SocketAddr)> + '_ {
        (0..self.ready.len()).map(move |i| self.datagram(i))
    }

    /// Sends `items` (payload, destination) with one `sendmmsg` call and returns how many the
    /// kernel took, from the front; the caller retries the rest. At most [`MAX_BATCH`] items are
    /// passed per call. An empty `items` returns `Ok(0)` without a call.
    ///
    /// Fails if not even the first item could be sent (for example
    /// [`io::ErrorKind::WouldBlock`] on a full non-blocking socket, or a destination of the other
    /// address family).
    pub fn send_batch(&mut self, items: &[(&[u8], SocketAddr)]) -> io::Result<usize> {
        let items = &items[..items.len().min(MAX_BATCH)];
        if items.is_empty() {
            return Ok(0);
        }
        let (n, bytes) = send_mmsg(
            &self.socket,
            items.len(),
            items.len(),
            |i| items[i].0,
            |i| (i, 1, 0, items[i].1),
        )?;
        self.counters.send_calls += 1;
        self.counters.datagrams_out += n as u64;
        self.counters.bytes_out += bytes;
        Ok(n)
    }

    /// Sends `msgs` over `datagrams` with one `sendmmsg` call, like
    /// [`send_batch`](Self::send_batch): each message is one datagram or, with more than one
    /// and a non-zero [`Segments::segment`], a run of datagrams the kernel sends as one
    /// payload and cuts into datagrams again (UDP generic segmentation offload,
    /// `UDP_SEGMENT`): one pass through the socket and IP layers for the whole run. Returns
    /// how many messages the kernel took, from the front. At most [`MAX_BATCH`] messages are
    /// passed per call.
    ///
    /// In a segmented message every datagram but the last must be `segment` bytes long and
    /// the last at most that; it may hold at most [`MAX_SEGMENTS`] datagrams and
    /// [`MAX_SEGMENTED_BYTES`] bytes, and a segment plus the headers must fit the path's
    /// MTU. Otherwise the kernel refuses it (`EINVAL`, `EMSGSIZE`; `EIO` where the path cannot
    /// segment), as does a kernel without `UDP_SEGMENT` (before Linux 4.18).
    ///
    /// # Panics
    /// If a message's datagrams are not within `datagrams`, or it has none.
    pub fn send_segments(&mut self, datagrams: &[&[u8]], msgs: &[Segments]) -> io::Result<usize> {
        let msgs = &msgs[..msgs.len().min(MAX_BATCH)];
        if msgs.is_empty() {
            return Ok(0);
        }
        let (n, bytes) = send_mmsg(
            &self.socket,
            msgs.len(),
            datagrams.len(),
            |i| datagrams[i],
            |i| {
                let m = &msgs[i];
                let segment = if m.count > 1 { m.segment } else { 0 };
                (m.first, m.count, segment, m.to)
            },
        )?;
        self.counters.send_calls += 1;
        self.counters.datagrams_out += msgs[..n].iter().map(|m| m.count as u64).sum::<u64>();
        self.counters.bytes_out += bytes;
        Ok(n)
    }
}

fn unspecified_v4() -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)
}

fn unspecified_v6() -> SocketAddrV6 {
    SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, 0, 0, 0)
}

fn sockaddr_v4(a: &SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(a.ip().octets()),
        },
        sin_zero: [0; 8],
    }
}

pub(crate) fn sockaddr_v6(a: &SocketAddrV6) -> libc::sockaddr_in6 {
    libc::sockaddr_in6 {
        sin6_family: libc::AF_INET6 as libc::sa_family_t,
        sin6_port: a.port().to_be(),
        sin6_flowinfo: a.flowinfo().to_be(),
        sin6_addr: libc::in6_addr {
            s6_addr: a.ip().octets(),
        },
        sin6_scope_id: a.scope_id(),
    }
}

fn std_addr_v4(a: &libc::sockaddr_in, len: libc::socklen_t) -> Option<SocketAddr> {
    if (len as usize) < size_of::<libc::sockaddr_in>() || i32::from(a.sin_family) != libc::AF_INET {
        return None;
    }
    let ip = Ipv4Addr::from(a.sin_addr.s_addr.to_ne_bytes());
    Some(SocketAddr::V4(SocketAddrV4::new(
        ip,
        u16::from_be(a.sin_port),
    )))
}

fn std_addr_v6(a: &libc::sockaddr_in6, len: libc::socklen_t) -> Option<SocketAddr> {
    if (len as usize) < size_of::<libc::sockaddr_in6>()
        || i32::from(a.sin6_family) != libc::AF_INET6
    {
        return None;
    }
    Some(SocketAddr::V6(SocketAddrV6::new(
        Ipv6Addr::from(a.sin6_addr.s6_addr),
        u16::from_be(a.sin6_port),
        u32::from_be(a.sin6_flowinfo),
        a.sin6_scope_id,
    )))
}

/// One `recvmmsg(MSG_WAITFORONE)` into `results.len()` slots of `slot` bytes of `buf`, source
/// addresses into `addrs`. Returns how many slots were filled (from the front).
fn recv_mmsg(
    socket: &UdpSocket,
    buf: &mut [u8],
    slot: usize,
    addrs: &mut RecvAddrs,
    results: &mut [SlotResult],
) -> io::Result<usize> {
    let n = results.len();
    let (names, name_len): (Vec<*mut libc::c_void>, usize) = match addrs {
        RecvAddrs::V4(a) => (
            a.iter_mut()
                .map(|p| (p as *mut libc::sockaddr_in).cast())
                .collect(),
            size_of::<libc::sockaddr_in>(),
        ),
        RecvAddrs::V6(a) => (
            a.iter_mut()
                .map(|p| (p as *mut libc::sockaddr_in6).cast())
                .collect(),
            size_of::<libc::sockaddr_in6>(),
        ),
    };
    assert!(names.len() == n && buf.len() == n * slot);
    let mut iovs: Vec<libc::iovec> = buf
        .chunks_exact_mut(slot)
        .map(|c| libc::iovec {
            iov_base: c.as_mut_ptr().cast(),
            iov_len: c.len(),
        })
        .collect();
    let mut msgs: Vec<libc::mmsghdr> = iovs
        .iter_mut()
        .zip(&names)
        .map(|(iov, &name)| {
            // SAFETY: `mmsghdr` is a plain C struct; all zeros (null pointers, zero lengths) is
            // a valid value, and the fields that matter are set just below.
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_name = name;
            m.msg_hdr.msg_namelen = name_len as libc::socklen_t;
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
            m
        })
        .collect();
    // SAFETY: `msgs` holds `n` headers; each points at one `iovec` in `iovs` (a `slot`-byte chunk
    // of `buf`, borrowed mutably) and at one address of `name_len` bytes in `addrs` (borrowed
    // mutably), all of which outlive this call; the kernel writes no more than those lengths. The
    // timeout pointer is null (none).
    let rc = unsafe {
        libc::recvmmsg(
            socket.as_raw_fd(),
            msgs.as_mut_ptr(),
            n as libc::c_uint,
            libc::MSG_WAITFORONE,
            std::ptr::null_mut(),
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let got = (rc as usize).min(n);
    for (r, m) in results.iter_mut().zip(&msgs[..got]) {
        *r = SlotResult {
            len: m.msg_len as usize,
            flags: m.msg_hdr.msg_flags,
            addr_len: m.msg_hdr.msg_namelen,
        };
    }
    Ok(got)
}

/// One `sendmmsg` of `n` messages over the datagrams `datagram(0..)`: message `i` is
/// `message(i)` = (first datagram, datagrams, segment size or 0, destination), its datagrams
/// gathered from consecutive entries. Returns how many messages the kernel took and their
/// total bytes.
fn send_mmsg<'a>(
    socket: &UdpSocket,
    n: usize,
    datagrams: usize,
    datagram: impl Fn(usize) -> &'a [u8],
    message: impl Fn(usize) -> (usize, usize, u16, SocketAddr),
) -> io::Result<(usize, u64)> {
    let mut v4: Vec<libc::sockaddr_in> = Vec::new();
    let mut v6: Vec<libc::sockaddr_in6> = Vec::new();
    for i in 0..n {
        match message(i).3 {
            SocketAddr::V4(a) => v4.push(sockaddr_v4(&a)),
            SocketAddr::V6(a) => v6.push(sockaddr_v6(&a)),
        }
    }
    let mut iovs: Vec<libc::iovec> = (0..datagrams)
        .map(|i| libc::iovec {
            // The kernel only reads through this pointer (sendmmsg does not write payloads).
            iov_base: datagram(i).as_ptr().cast_mut().cast(),
            iov_len: datagram(i).len(),
        })
        .collect();
    // One control buffer per message (aligned for `cmsghdr`), used by segmented ones only.
    let mut controls: Vec<[u64; 4]> = vec![[0; 4]; n];
    // SAFETY: CMSG_SPACE only computes a size.
    let control_len = unsafe { libc::CMSG_SPACE(size_of::<u16>() as u32) } as usize;
    assert!(control_len <= size_of::<[u64; 4]>());
    let (mut i4, mut i6) = (v4.iter_mut(), v6.iter_mut());
    let mut msgs: Vec<libc::mmsghdr> = Vec::with_capacity(n);
    for (i, control) in controls.iter_mut().enumerate() {
        let (first, count, segment, to) = message(i);
        assert!(count > 0 && first + count <= datagrams);
        let (name, name_len): (*mut libc::c_void, usize) = match to {
            SocketAddr::V4(_) => (
                i4.next().map_or(std::ptr::null_mut(), |p| {
                    (p as *mut libc::sockaddr_in).cast()
                }),
                size_of::<libc::sockaddr_in>(),
            ),
            SocketAddr::V6(_) => (
                i6.next().map_or(std::ptr::null_mut(), |p| {
                    (p as *mut libc::sockaddr_in6).cast()
                }),
                size_of::<libc::sockaddr_in6>(),
            ),
        };
        // SAFETY: `mmsghdr` is a plain C struct; all zeros (null pointers, zero lengths) is a
        // valid value, and the fields that matter are set just below.
        let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
        m.msg_hdr.msg_name = name;
        m.msg_hdr.msg_namelen = name_len as libc::socklen_t;
        m.msg_hdr.msg_iov = iovs[first..].as_mut_ptr();
        m.msg_hdr.msg_iovlen = count;
        if segment > 0 {
            m.msg_hdr.msg_control = control.as_mut_ptr().cast();
            m.msg_hdr.msg_controllen = control_len as _;
            // SAFETY: the header's control buffer is `control_len` bytes of `control`, which
            // is aligned for `cmsghdr` and outlives the call; CMSG_FIRSTHDR is then non-null
            // and CMSG_DATA points inside that buffer, with room for the u16 (checked above).
            unsafe {
                let c = libc::CMSG_FIRSTHDR(&m.msg_hdr);
                (*c).cmsg_level = libc::SOL_UDP;
                (*c).cmsg_type = libc::UDP_SEGMENT;
                (*c).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as _;
                libc::CMSG_DATA(c).cast::<u16>().write_unaligned(segment);
            }
        }
        msgs.push(m);
    }
    // SAFETY: `msgs` holds `n` headers; each points at `count` consecutive `iovec`s in `iovs`
    // (checked in bounds above), each describing one borrowed payload slice, at one address of `name_len` bytes in `v4` or `v6` (one per
    // item of that family, so never null) and, when segmented, at its control buffer in
    // `controls`; all outlive this call and the kernel only reads them (it writes `msg_len` in
    // `msgs`).
    let rc = unsafe {
        libc::sendmmsg(
            socket.as_raw_fd(),
            msgs.as_mut_ptr(),
            msgs.len() as libc::c_uint,
            libc::MSG_NOSIGNAL,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let sent = (rc as usize).min(msgs.len());
    let bytes = msgs[..sent].iter().map(|m| u64::from(m.msg_len)).sum();
    Ok((sent, bytes))
}
