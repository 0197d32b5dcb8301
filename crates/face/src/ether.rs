//! Ethernet frames carrying NDN (EtherType 0x8624), and the `AF_PACKET` socket an interface's
//! Ethernet faces share, as NFD's Ethernet transports frame them.
//!
//! A frame is the destination address, the source address, the EtherType and one NDNLPv2
//! packet (or bare network packet); a payload shorter than Ethernet's 46-byte minimum is padded
//! with zeros ([`encode_frame`]), and on receipt the payload is cut to its one TLV element, so
//! the padding is dropped ([`decode_frame`]). As NFD, a frame shorter than 60 bytes, of another
//! EtherType, or whose payload is no whole TLV element is refused.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::netif::{MacAddr, Netif};

/// NDN's EtherType.
pub const ETHERTYPE_NDN: u16 = 0x8624;
/// Ethernet header: two addresses and the EtherType.
pub const HDR_LEN: usize = 14;
/// Smallest payload Ethernet carries (shorter ones are padded).
pub const MIN_DATA_LEN: usize = 46;
/// Smallest frame (without the frame check sequence).
pub const MIN_FRAME_LEN: usize = HDR_LEN + MIN_DATA_LEN;
/// Largest interface MTU a port takes (jumbo frames).
pub const MAX_ETHER_MTU: usize = 9216;

/// A received frame's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Destination.
    pub dst: MacAddr,
    /// Source.
    pub src: MacAddr,
    /// The one TLV element it carries (padding cut off).
    pub payload: &'a [u8],
}

/// Why a frame was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// Shorter than [`MIN_FRAME_LEN`].
    TooShort,
    /// Another EtherType (a VLAN tag, say).
    WrongType,
    /// The payload is no whole TLV element.
    Malformed,
}

/// Appends to `out` the frame from `src` to `dst` carrying `payload`, padded with zeros to
/// [`MIN_FRAME_LEN`].
pub fn encode_frame(out: &mut Vec<u8>, dst: MacAddr, src: MacAddr, payload: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&dst.0);
    out.extend_from_slice(&src.0);
    out.extend_from_slice(&ETHERTYPE_NDN.to_be_bytes());
    out.extend_from_slice(payload);
    if out.len() - start < MIN_FRAME_LEN {
        out.resize(start + MIN_FRAME_LEN, 0);
    }
}

/// The parts of `frame`, its payload cut to the TLV element it starts with.
pub fn decode_frame(frame: &[u8]) -> Result<Frame<'_>, FrameError> {
    if frame.len() < MIN_FRAME_LEN {
        return Err(FrameError::TooShort);
    }
    if u16::from_be_bytes([frame[12], frame[13]]) != ETHERTYPE_NDN {
        return Err(FrameError::WrongType);
    }
    let mac = |b: &[u8]| {
        let mut m = [0u8; 6];
        m.copy_from_slice(b);
        MacAddr(m)
    };
    let payload = &frame[HDR_LEN..];
    let (_, t) = wire::tlv::read_var_number(payload, 0).map_err(|_| FrameError::Malformed)?;
    let (len, l) =
        wire::tlv::read_var_number(&payload[t..], t).map_err(|_| FrameError::Malformed)?;
    let end = usize::try_from(len)
        .ok()
        .and_then(|n| n.checked_add(t + l))
        .filter(|&e| e <= payload.len())
        .ok_or(FrameError::Malformed)?;
    Ok(Frame {
        dst: mac(&frame[0..6]),
        src: mac(&frame[6..12]),
        payload: &payload[..end],
    })
}

/// An `AF_PACKET` socket on one interface taking NDN's EtherType, a member of a multicast
/// group, not hearing its own frames.
pub struct PacketSocket {
    fd: OwnedFd,
    /// The interface's MTU (the largest payload of a frame).
    pub mtu: usize,
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl PacketSocket {
    /// Opens the socket on `netif`, a member of `group` if any. Needs `CAP_NET_RAW`.
    pub fn open(netif: &Netif, group: Option<MacAddr>) -> io::Result<PacketSocket> {
        let proto = ETHERTYPE_NDN.to_be();
        let flags = libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
        // SAFETY: a plain socket call; the fd is owned at once.
        let fd = check(unsafe { libc::socket(libc::AF_PACKET, flags, i32::from(proto)) })?;
        // SAFETY: `fd` is a fresh socket nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sockaddr_ll is plain data; zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = netif.index as i32;
        // SAFETY: `sll` is a sockaddr_ll of the size given.
        check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of_val(&sll) as libc::socklen_t,
            )
        })?;
        // Not hearing its own frames (Linux 4.20 on; older kernels: the source check drops
        // them).
        let _ = setsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_IGNORE_OUTGOING,
            &1i32,
        );
        let mtu = interface_mtu(fd.as_raw_fd(), &netif.name)?.clamp(64, MAX_ETHER_MTU);
        let s = PacketSocket { fd, mtu };
        if let Some(g) = group {
            s.join(netif, g)?;
        }
        Ok(s)
    }

    /// A socket of tests: `fd`, a datagram socket (one end of a Unix socket pair), standing for
    /// an interface of MTU `mtu`.
    #[cfg(test)]
    pub(crate) fn from_fd(fd: OwnedFd, mtu: usize) -> PacketSocket {
        PacketSocket { fd, mtu }
    }

    /// Joins multicast group `group` on `netif` (`PACKET_ADD_MEMBERSHIP`).
    pub fn join(&self, netif: &Netif, group: MacAddr) -> io::Result<()> {
        // SAFETY: packet_mreq is plain data.
        let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mr.mr_ifindex = netif.index as i32;
        mr.mr_type = libc::PACKET_MR_MULTICAST as u16;
        mr.mr_alen = 6;
        mr.mr_address[..6].copy_from_slice(&group.0);
        setsockopt(
            self.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mr,
        )
    }

    /// Sends one whole frame; false if the socket did not take it (full, or the link down).
    pub fn send(&self, frame: &[u8]) -> bool {
        // SAFETY: `frame` is live for the call, of the length given.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                libc::MSG_DONTWAIT,
            )
        };
        n == frame.len() as isize
    }

    /// Receives one frame into `buf`: its length (a longer frame is cut, and then refused as
    /// malformed).
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` is live and writable for the call, of the length given.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

impl AsRawFd for PacketSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Sets a socket option of type `T`.
pub(crate) fn setsockopt<T>(fd: RawFd, level: i32, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: `value` points at a live T of the size given.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// The MTU of interface `name` (`SIOCGIFMTU`).
fn interface_mtu(fd: RawFd, name: &str) -> io::Result<usize> {
    // SAFETY: ifreq is plain data.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    let n = name.len().min(ifr.ifr_name.len() - 1);
    for (d, s) in ifr.ifr_name.iter_mut().zip(&name.as_bytes()[..n]) {
        *d = *s as libc::c_char;
    }
    // SAFETY: `ifr` is an ifreq naming the interface; the kernel fills its MTU.
    check(unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &mut ifr) })?;
    // SAFETY: SIOCGIFMTU set the union's MTU member.
    Ok(unsafe { ifr.ifr_ifru.ifru_mtu }.max(0) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
    const G: MacAddr = MacAddr([1, 0, 0x5e, 0, 0x17, 0xaa]);

    #[test]
    fn short_frames_are_padded_and_the_padding_is_dropped_on_receipt() {
        // A 7-byte element: the frame is padded to 60 bytes.
        let payload = [0x05, 0x05, 0x07, 0x03, 0x08, 0x01, 0x61];
        let mut f = vec![0xee];
        encode_frame(&mut f, G, A, &payload);
        let f = &f[1..];
        assert_eq!(f.len(), MIN_FRAME_LEN);
        assert_eq!(&f[..6], &G.0);
        assert_eq!(&f[6..12], &A.0);
        assert_eq!(&f[12..14], &[0x86, 0x24]);
        assert!(f[HDR_LEN + payload.len()..].iter().all(|&b| b == 0));
        let d = decode_frame(f).unwrap();
        assert_eq!((d.dst, d.src, d.payload), (G, A, &payload[..]));
        // A long element is not padded, and comes back whole.
        let mut long = vec![0x64, 0x50];
        long.extend(std::iter::repeat_n(0xab, 0x50));
        let mut f = Vec::new();
        encode_frame(&mut f, A, G, &long);
        assert_eq!(f.len(), HDR_LEN + long.len());
        assert_eq!(decode_frame(&f).unwrap().payload, &long[..]);
    }

    #[test]
    fn bad_frames_are_refused() {
        let mut f = Vec::new();
        encode_frame(&mut f, G, A, &[0x05, 0x00]);
        assert!(decode_frame(&f).is_ok());
        assert_eq!(decode_frame(&f[..59]), Err(FrameError::TooShort));
        let mut vlan = f.clone();
        vlan[12..14].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(decode_frame(&vlan), Err(FrameError::WrongType));
        // An element longer than the frame, and a truncated length.
        let mut g = Vec::new();
        encode_frame(&mut g, G, A, &[0x05, 0x40]);
        assert_eq!(decode_frame(&g), Err(FrameError::Malformed));
        let mut h = f.clone();
        h[HDR_LEN..HDR_LEN + 2].copy_from_slice(&[0x05, 0xfd]);
        h.truncate(MIN_FRAME_LEN);
        h[HDR_LEN + 2..].fill(0xff);
        assert_eq!(decode_frame(&h), Err(FrameError::Malformed));
    }
}
