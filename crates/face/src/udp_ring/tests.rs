use super::*;
use crate::udp::{Segments, UdpBatch};

fn bound() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_nonblocking(true).unwrap();
    crate::table::set_socket_buffers(&s);
    s
}

/// Waits (at most a second) for the ring's descriptor to be readable.
fn wait(ring: &UdpRing) -> bool {
    let mut p = libc::pollfd {
        fd: ring.ring_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, 1000) > 0 }
}

/// Receives until `want` datagrams came or nothing comes for a second.
fn receive_all(ring: &mut UdpRing, want: usize) -> Vec<(Vec<u8>, SocketAddr)> {
    let mut got = Vec::new();
    for _ in 0..100_000 {
        if got.len() >= want {
            break;
        }
        match ring.recv_batch() {
            Ok(n) => got.extend((0..n).map(|i| {
                let (b, from) = ring.datagram(i);
                (b.to_vec(), from)
            })),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !wait(ring) {
                    break;
                }
            }
            Err(e) => panic!("recv_batch: {e}"),
        }
    }
    got
}

/// A burst eight times the ring's buffers arrives whole and in order: the kernel ends the
/// receive for want of buffers, and it is armed again once they are back.
#[test]
fn a_burst_larger_than_the_ring_arrives_whole() {
    let rx = bound();
    let to = rx.local_addr().unwrap();
    let mut ring = UdpRing::new(&rx, 8, 2048, 4, false).unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let n = 64u32;
    for i in 0..n {
        tx.send_to(&[&i.to_be_bytes()[..], &[7; 60]].concat(), to)
            .unwrap();
    }
    let got = receive_all(&mut ring, n as usize);
    assert_eq!(got.len(), n as usize);
    for (i, (bytes, from)) in got.iter().enumerate() {
        assert_eq!(bytes[..4], (i as u32).to_be_bytes());
        assert_eq!(bytes.len(), 64);
        assert_eq!(*from, tx.local_addr().unwrap());
    }
    let c = ring.counters();
    assert!(c.no_buffers >= 1, "{c:?}");
    assert!(c.arms >= 2, "{c:?}");
    assert_eq!(c.datagrams_in, u64::from(n));
    // Still armed and working after the bursts.
    tx.send_to(b"after", to).unwrap();
    assert_eq!(receive_all(&mut ring, 1)[0].0, b"after");
}

/// Datagrams from many senders come with their own source addresses; one longer than a buffer
/// is counted and dropped, never handed out cut short.
#[test]
fn sources_are_reported_and_long_datagrams_dropped() {
    let rx = bound();
    let to = rx.local_addr().unwrap();
    let mut ring = UdpRing::new(&rx, 16, 100, 64, false).unwrap();
    let senders: Vec<UdpSocket> = (0..10)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    senders[0].send_to(&[1; 101], to).unwrap();
    for (i, s) in senders.iter().enumerate() {
        s.send_to(&[i as u8; 100], to).unwrap();
    }
    let got = receive_all(&mut ring, senders.len());
    assert_eq!(got.len(), senders.len());
    for ((bytes, from), (i, s)) in got.iter().zip(senders.iter().enumerate()) {
        assert_eq!(*from, s.local_addr().unwrap());
        assert_eq!(bytes[..], [i as u8; 100]);
    }
    assert_eq!(ring.counters().truncated, 1);
}

/// With GRO, what a sender sent as one segmented message (over loopback the kernel hands it
/// over whole) is cut back into its datagrams.
#[test]
fn gro_buffers_are_cut_into_their_datagrams() {
    let rx = bound();
    let to = rx.local_addr().unwrap();
    let mut ring = UdpRing::new(&rx, 8, 1500, 64, true).unwrap();
    let mut tx = UdpBatch::new(UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
    let payloads: Vec<Vec<u8>> = (0..10u8)
        .map(|i| vec![i; if i == 9 { 300 } else { 1000 }])
        .collect();
    let datagrams: Vec<&[u8]> = payloads.iter().map(|p| &p[..]).collect();
    let msg = Segments {
        first: 0,
        count: 10,
        segment: 1000,
        to,
    };
    assert_eq!(tx.send_segments(&datagrams, &[msg]).unwrap(), 1);
    let got = receive_all(&mut ring, 10);
    let bytes: Vec<&[u8]> = got.iter().map(|(b, _)| &b[..]).collect();
    assert_eq!(bytes, datagrams);
    assert_eq!(ring.counters().coalesced, 1);
}

#[test]
fn sizes_out_of_range_are_refused() {
    let rx = bound();
    for (buffers, bytes, batch) in [(3, 100, 1), (0, 100, 1), (8, 0, 1), (8, 100, 0)] {
        let e = UdpRing::new(&rx, buffers, bytes, batch, false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}

#[test]
fn control_messages_parse() {
    let header = size_of::<libc::cmsghdr>();
    let mut c = vec![0u8; header + 8];
    c[..size_of::<usize>()].copy_from_slice(&(header + 4).to_ne_bytes());
    let level = std::mem::offset_of!(libc::cmsghdr, cmsg_level);
    let kind = std::mem::offset_of!(libc::cmsghdr, cmsg_type);
    c[level..level + 4].copy_from_slice(&libc::SOL_UDP.to_ne_bytes());
    c[kind..kind + 4].copy_from_slice(&libc::UDP_GRO.to_ne_bytes());
    c[header..header + 4].copy_from_slice(&1200i32.to_ne_bytes());
    assert_eq!(gro_segment(&c), Some(1200));
    assert_eq!(gro_segment(&c[..header]), None);
    c[kind..kind + 4].copy_from_slice(&0i32.to_ne_bytes());
    assert_eq!(gro_segment(&c), None);
    assert_eq!(gro_segment(&[]), None);
}
