//! Send-queue congestion marking, as NFD's GenericLinkService does it (`checkCongestionLevel`).
//!
//! A face's send queue is what Cascade holds for it in user space plus what the kernel holds
//! in the socket: `SIOCOUTQNSD` for TCP (bytes not sent yet, as NFD's TCP transport reads it),
//! `SIOCOUTQ` for Unix streams and UDP sockets. The kernel's part is read once per flush (not
//! per packet) and added to the user-space bytes when a packet is queued.
//!
//! When the queue is above the threshold (the face's DefaultCongestionThreshold, 65,536 bytes by
//! default, or half the queue's capacity if that is smaller), a marking state starts: the packet
//! sent carries an NDNLPv2 CongestionMark of 1, the next is marked one
//! BaseCongestionMarkingInterval (100 ms by default) later, and the following marks come at
//! intervals shrinking as `interval / sqrt(marks + 1)` (NFD's CoDel-like law) for as long as the
//! queue stays above; the state ends as soon as a packet finds the queue at or below the
//! threshold. NFD waits one interval before its first mark; Cascade marks at once, so that a
//! consumer in slow start (its window doubling every round trip) hears of the queue before it
//! has filled it, not 100 ms later: marks come well before drops. Faces with
//! CongestionMarkingEnabled only. WebSocket faces mark too (NFD's WebSocket transport reports
//! no queue length and never marks): their queue is what `tungstenite` holds since its buffer
//! was last seen empty plus what the kernel holds (`SIOCOUTQNSD`), of at most the send queue
//! bound. The mirrors of UDP faces in a sharded router mark by their own socket's queue.
//!
//! A UDP socket's kernel queue is read when a face that marks queues a packet and the queue
//! could be above its threshold: the kernel holds at most what it held at the last reading
//! plus what was sent since, so below that bound no reading is needed to decide (at most one
//! reading per flush, as often as before, while the queue stays long; one per threshold's
//! worth of bytes sent while it stays short). With marking off
//! (`face_system.general.enable_congestion_marking = false` and no face turned on by
//! `faces/update`) the send path makes no `ioctl`.

use std::os::fd::RawFd;

use wire::nfd::FacePersistency;

use super::{FaceCounters, FaceParams, FaceTable, LinkOptions};
use crate::link::append_marked;

/// `SIOCOUTQNSD`: bytes in a TCP socket's send queue not sent yet.
const SIOCOUTQNSD: libc::c_ulong = 0x894B;

/// The marking state of one face. Allocation-free and clock-free: the caller passes the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Marker {
    /// When the next packet is to be marked (`u64::MAX`: not in a marking state), in ns.
    next_mark_ns: u64,
    /// Marks in the current marking state.
    marked: u32,
}

impl Default for Marker {
    fn default() -> Self {
        Marker {
            next_mark_ns: u64::MAX,
            marked: 0,
        }
    }
}

impl Marker {
    /// Whether the packet being queued now carries a mark, given the queue's length and the
    /// threshold, the face's base interval and the time, all in bytes and nanoseconds.
    pub(super) fn check(
        &mut self,
        queue_bytes: usize,
        threshold_bytes: usize,
        interval_ns: u64,
        now_ns: u64,
    ) -> bool {
        if queue_bytes <= threshold_bytes {
            // The congestion incident has ended.
            *self = Marker::default();
            return false;
        }
        if self.next_mark_ns == u64::MAX {
            // The first packet over the threshold is marked at once (NFD waits one interval).
            self.next_mark_ns = now_ns.saturating_add(interval_ns);
            self.marked = 1;
            return true;
        }
        if now_ns < self.next_mark_ns {
            return false;
        }
        self.marked = self.marked.saturating_add(1);
        let step = interval_ns as f64 / f64::from(self.marked.saturating_add(1)).sqrt();
        self.next_mark_ns = self.next_mark_ns.saturating_add(step as u64);
        true
    }

    /// In a marking state (the queue was above the threshold at the last packet)?
    #[cfg(test)]
    pub(super) fn marking(&self) -> bool {
        self.next_mark_ns != u64::MAX
    }
}

impl FaceTable {
    /// The parameters of a face the table makes itself (on-demand, multicast), with
    /// `persistency`: the link options' defaults, congestion marking as configured
    /// ([`super::FaceConfig::congestion_marking`], as NFD's channels apply
    /// `face_system.general.enable_congestion_marking`).
    pub(super) fn own_params(&self, persistency: FacePersistency) -> FaceParams {
        let mut p = FaceParams {
            persistency,
            ..FaceParams::default()
        };
        p.options.congestion_marking = self.cfg.congestion_marking;
        p
    }
}

/// `bytes`, or `bytes` with a CongestionMark (in `mark_buf`, counted in `counters`) if the
/// face with options and marker `(o, m)` marks the packet it queues now, its queue holding
/// `queue_bytes` of at most `capacity_bytes`.
#[inline]
pub(super) fn marked<'a>(
    (o, m): (&LinkOptions, &mut Marker),
    (queue_bytes, capacity_bytes): (usize, usize),
    now_ns: u64,
    counters: &mut FaceCounters,
    mark_buf: &'a mut Vec<u8>,
    bytes: &'a [u8],
) -> &'a [u8] {
    let t = threshold_bytes(o, capacity_bytes);
    let interval_ns = o.base_congestion_marking_interval_ns;
    if o.congestion_marking && m.check(queue_bytes, t, interval_ns, now_ns) {
        mark_buf.clear();
        if append_marked(mark_buf, bytes).is_some() {
            counters.congestion_marks += 1;
            return mark_buf;
        }
    }
    bytes
}

/// The threshold of a face whose queue holds at most `capacity_bytes`.
#[inline]
pub(super) fn threshold_bytes(o: &LinkOptions, capacity_bytes: usize) -> usize {
    let t = usize::try_from(o.default_congestion_threshold_bytes).unwrap_or(usize::MAX);
    t.min(capacity_bytes / 2)
}

/// Bytes the kernel holds in the send queue of socket `fd` (`tcp`: not yet sent, else not yet
/// taken by the receiver); 0 where it cannot tell.
pub(super) fn kernel_send_queue(fd: RawFd, tcp: bool) -> usize {
    let mut n: libc::c_int = 0;
    let req = if tcp { SIOCOUTQNSD } else { libc::TIOCOUTQ };
    // SAFETY: a valid fd and a c_int out-parameter, as SIOCOUTQ and SIOCOUTQNSD take.
    let r = unsafe { libc::ioctl(fd, req as _, &mut n as *mut libc::c_int) };
    if r < 0 {
        return 0;
    }
    usize::try_from(n).unwrap_or(0)
}

/// A socket's send buffer size (`SO_SNDBUF`), the capacity of a datagram face's queue as NFD's
/// datagram transports take it; `None` where it cannot tell.
pub(super) fn send_buffer_bytes(fd: RawFd) -> Option<usize> {
    let mut n: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid fd, a c_int option value and its length.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&mut n as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (r == 0).then(|| usize::try_from(n).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// The first packet above the threshold is marked; the next one interval later, then at
    /// 100 ms / sqrt(n + 1) steps; a packet at or below the threshold ends the state, and the
    /// next incident starts with a mark again.
    #[test]
    fn codel_like_law() {
        let mut m = Marker::default();
        let (t, i) = (1000, 100 * MS);
        assert!(!m.check(1000, t, i, 0));
        assert!(!m.marking());
        assert!(m.check(1001, t, i, 5 * MS));
        assert!(m.marking());
        assert!(!m.check(5000, t, i, 6 * MS));
        assert!(!m.check(5000, t, i, 104 * MS));
        // Due at 105 ms.
        assert!(m.check(5000, t, i, 105 * MS));
        // Next due 105 + 100/sqrt(3) = 162.7 ms.
        assert!(!m.check(5000, t, i, 162 * MS));
        assert!(m.check(5000, t, i, 163 * MS));
        // Then + 100/sqrt(4) = 50 ms: due at 212.7 ms.
        assert!(!m.check(5000, t, i, 212 * MS));
        assert!(m.check(5000, t, i, 213 * MS));
        let marks_at = |m: &mut Marker, from: u64, to: u64| {
            (from..to)
                .filter(|&ms| m.check(5000, t, i, ms * MS))
                .count()
        };
        // Intervals shrink: more marks per second as the incident goes on.
        let first = marks_at(&mut m, 214, 1214);
        let second = marks_at(&mut m, 1214, 2214);
        assert!(second > first, "{first} then {second}");
        assert!(!m.check(t, t, i, 3000 * MS));
        assert!(!m.marking());
        assert!(m.check(5000, t, i, 3001 * MS));
        assert!(!m.check(5000, t, i, 3100 * MS));
        assert!(m.check(5000, t, i, 3101 * MS));
    }

    #[test]
    fn threshold_is_the_smaller_of_option_and_half_capacity() {
        let o = LinkOptions::default();
        assert_eq!(threshold_bytes(&o, 1 << 20), 65_536);
        assert_eq!(threshold_bytes(&o, 100_000), 50_000);
        let o = LinkOptions {
            default_congestion_threshold_bytes: 10,
            ..o
        };
        assert_eq!(threshold_bytes(&o, 1 << 20), 10);
    }

    #[test]
    fn kernel_queue_of_a_stream_with_no_reader_grows() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let (mut a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(kernel_send_queue(a.as_raw_fd(), false), 0);
        a.write_all(&[7u8; 4000]).unwrap();
        assert!(kernel_send_queue(a.as_raw_fd(), false) >= 4000);
        assert!(send_buffer_bytes(a.as_raw_fd()).unwrap() > 0);
        assert_eq!(kernel_send_queue(-1, true), 0);
    }
}
