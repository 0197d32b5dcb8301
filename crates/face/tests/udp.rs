//! Batched UDP I/O over loopback: `recvmmsg` / `sendmmsg` through `UdpBatch`.
#![cfg(target_os = "linux")]

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use face::udp::{Segments, UdpBatch, MAX_BATCH};
use face::UdpCounters;

/// A bound socket with a read timeout, so no test can hang.
fn socket(ip: &str) -> Option<UdpSocket> {
    match UdpSocket::bind((ip, 0)) {
        Ok(s) => {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            Some(s)
        }
        // No IPv6 loopback in this environment: nothing to test.
        Err(e) if ip.contains(':') => {
            eprintln!("skipping {ip}: {e}");
            None
        }
        Err(e) => panic!("bind {ip}: {e}"),
    }
}

fn pair(ip: &str, batch: usize, max_datagram: usize) -> Option<(UdpBatch, UdpBatch)> {
    let tx = UdpBatch::new(socket(ip)?).unwrap();
    let rx = UdpBatch::with_capacity(socket(ip)?, batch, max_datagram).unwrap();
    Some((tx, rx))
}

fn addr(b: &UdpBatch) -> SocketAddr {
    b.socket().local_addr().unwrap()
}

/// Datagram `i`: its index in the first two bytes, then a pattern, `len` bytes in all.
fn payload(i: usize, len: usize) -> Vec<u8> {
    let mut v: Vec<u8> = (0..len).map(|k| (k * 7 + i) as u8).collect();
    v[..2].copy_from_slice(&(i as u16).to_be_bytes());
    v
}

/// Sends every item, retrying what the kernel did not take.
fn send_all(tx: &mut UdpBatch, items: &[(&[u8], SocketAddr)]) {
    let mut done = 0;
    while done < items.len() {
        done += tx.send_batch(&items[done..]).unwrap();
    }
}

/// Receives exactly `n` datagrams (however many calls it takes).
fn recv_n(rx: &mut UdpBatch, n: usize) -> Vec<(Vec<u8>, SocketAddr)> {
    let mut out = Vec::new();
    while out.len() < n {
        let got = rx.recv_batch().unwrap();
        assert_eq!(got, rx.len());
        out.extend(rx.datagrams().map(|(d, a)| (d.to_vec(), a)));
    }
    assert_eq!(out.len(), n, "more datagrams than sent");
    out
}

fn round_trip(ip: &str) {
    let Some((mut tx, mut rx)) = pair(ip, 16, 2000) else {
        return;
    };
    let (from, to) = (addr(&tx), addr(&rx));
    let sizes: Vec<usize> = (0..200).map(|i| 2 + (i * 149) % 1999).collect();
    let payloads: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| payload(i, n))
        .collect();

    // Chunks of 25, drained between chunks so the receive queue never overflows.
    let mut received = Vec::new();
    for chunk in payloads.chunks(25) {
        let items: Vec<(&[u8], SocketAddr)> = chunk.iter().map(|p| (p.as_slice(), to)).collect();
        send_all(&mut tx, &items);
        received.extend(recv_n(&mut rx, chunk.len()));
    }
    for (i, (data, src)) in received.iter().enumerate() {
        assert_eq!(*src, from, "datagram {i} source");
        assert_eq!(data, &payloads[i], "datagram {i} content or order");
    }

    let total: u64 = sizes.iter().map(|&n| n as u64).sum();
    let (t, r) = (tx.counters(), rx.counters());
    assert_eq!(t.datagrams_out, 200);
    assert_eq!(t.bytes_out, total);
    assert!(t.send_calls >= 8 && t.send_calls <= 200);
    assert_eq!(r.datagrams_in, 200);
    assert_eq!(r.bytes_in, total);
    assert_eq!(r.truncated, 0);
    // 16 slots: at least 13 calls for 200 datagrams.
    assert!(r.recv_calls >= 13 && r.recv_calls <= 200, "{r:?}");
    assert_eq!((t.recv_calls, t.datagrams_in, t.bytes_in), (0, 0, 0));
    assert_eq!((r.send_calls, r.datagrams_out, r.bytes_out), (0, 0, 0));
}

#[test]
fn round_trip_ipv4() {
    round_trip("127.0.0.1");
}

#[test]
fn round_trip_ipv6() {
    round_trip("::1");
}

fn batching(ip: &str) {
    let Some((mut tx, mut rx)) = pair(ip, 64, 9000) else {
        return;
    };
    let to = addr(&rx);
    let payloads: Vec<Vec<u8>> = (0..10).map(|i| payload(i, 100 + i)).collect();
    let items: Vec<(&[u8], SocketAddr)> = payloads.iter().map(|p| (p.as_slice(), to)).collect();
    // Loopback delivers during sendmmsg, so all ten are queued when it returns.
    assert_eq!(tx.send_batch(&items).unwrap(), 10);
    assert_eq!(tx.counters().send_calls, 1);

    let got = rx.recv_batch().unwrap();
    assert!(got > 1, "one recv_batch returned {got} datagram(s)");
    assert_eq!(rx.counters().recv_calls, 1);
    let mut all: Vec<Vec<u8>> = rx.datagrams().map(|(d, _)| d.to_vec()).collect();
    all.extend(recv_n(&mut rx, 10 - got).into_iter().map(|(d, _)| d));
    assert_eq!(all, payloads);
}

#[test]
fn one_call_receives_many_ipv4() {
    batching("127.0.0.1");
}

#[test]
fn one_call_receives_many_ipv6() {
    batching("::1");
}

#[test]
fn oversize_datagram_is_counted_and_dropped() {
    let Some((mut tx, mut rx)) = pair("127.0.0.1", 8, 100) else {
        return;
    };
    let to = addr(&rx);
    let (a, big, exact, c) = (
        payload(1, 50),
        payload(2, 101),
        payload(3, 100),
        payload(4, 60),
    );
    let items = [
        (a.as_slice(), to),
        (big.as_slice(), to),
        (exact.as_slice(), to),
        (c.as_slice(), to),
    ];
    send_all(&mut tx, &items);

    let mut got = Vec::new();
    while rx.counters().datagrams_in + rx.counters().truncated < 4 {
        rx.recv_batch().unwrap();
        got.extend(rx.datagrams().map(|(d, _)| d.to_vec()));
    }
    assert_eq!(got, vec![a.clone(), exact.clone(), c.clone()]);
    let r = rx.counters();
    assert_eq!(r.truncated, 1);
    assert_eq!(r.datagrams_in, 3);
    assert_eq!(r.bytes_in, 210);
    assert_eq!(tx.counters().bytes_out, 311);
    assert_eq!(tx.counters().datagrams_out, 4);
}

#[test]
fn only_truncated_gives_zero() {
    let Some((mut tx, mut rx)) = pair("127.0.0.1", 4, 10) else {
        return;
    };
    let to = addr(&rx);
    let big = payload(0, 500);
    send_all(&mut tx, &[(big.as_slice(), to)]);
    assert_eq!(rx.recv_batch().unwrap(), 0);
    assert!(rx.is_empty());
    assert_eq!(rx.counters().truncated, 1);
    assert_eq!(rx.counters().recv_calls, 1);
}

#[test]
fn timeout_and_empty_send() {
    let s = socket("127.0.0.1").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut b = UdpBatch::new(s).unwrap();
    assert_eq!(b.batch(), 64);
    assert_eq!(b.max_datagram(), 9000);
    let e = b.recv_batch().unwrap_err();
    assert!(matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ));
    assert_eq!(b.send_batch(&[]).unwrap(), 0);
    assert_eq!(b.counters(), UdpCounters::default());
}

#[test]
fn wrong_family_destination_fails() {
    let Some(v6) = socket("::1") else {
        return;
    };
    let mut tx = UdpBatch::new(socket("127.0.0.1").unwrap()).unwrap();
    let to = v6.local_addr().unwrap();
    assert!(tx.send_batch(&[(b"x".as_slice(), to)]).is_err());
    assert_eq!(tx.counters().datagrams_out, 0);
}

#[test]
fn bad_capacity_is_rejected() {
    for (batch, max) in [(0, 100), (MAX_BATCH + 1, 100), (4, 0), (4, 70_000)] {
        let s = socket("127.0.0.1").unwrap();
        let e = UdpBatch::with_capacity(s, batch, max).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    }
}

/// One `sendmmsg` of a segmented run (five datagrams of 200 bytes and a last one of 80), a
/// single datagram and a run of two to another address: the receivers get each datagram
/// whole, in order, with its own boundaries, and the counters count datagrams, not messages.
fn segmented(ip: &str) {
    let Some((mut tx, mut rx)) = pair(ip, 64, 2000) else {
        return;
    };
    let Some(mut rx2) = socket(ip).map(|s| UdpBatch::new(s).unwrap()) else {
        return;
    };
    let (to, to2) = (addr(&rx), addr(&rx2));
    let lens = [200, 200, 200, 200, 200, 80, 33, 500, 500];
    let payloads: Vec<Vec<u8>> = lens
        .iter()
        .enumerate()
        .map(|(i, &n)| payload(i, n))
        .collect();
    let datagrams: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
    let msgs = [
        Segments {
            first: 0,
            count: 6,
            segment: 200,
            to,
        },
        Segments {
            first: 6,
            count: 1,
            segment: 0,
            to,
        },
        Segments {
            first: 7,
            count: 2,
            segment: 500,
            to: to2,
        },
    ];
    match tx.send_segments(&datagrams, &msgs) {
        Ok(n) => assert_eq!(n, 3),
        // A kernel without UDP_SEGMENT (before 4.18): nothing more to test.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return eprintln!("no GSO: {e}"),
        Err(e) => panic!("{e}"),
    }
    let got = recv_n(&mut rx, 7);
    for (i, (data, _)) in got.iter().enumerate() {
        assert_eq!(data, &payloads[i], "datagram {i}");
    }
    let got2 = recv_n(&mut rx2, 2);
    assert_eq!((&got2[0].0, &got2[1].0), (&payloads[7], &payloads[8]));
    let t = tx.counters();
    assert_eq!((t.send_calls, t.datagrams_out), (1, 9));
    assert_eq!(t.bytes_out, lens.iter().sum::<usize>() as u64);
}

#[test]
fn segmented_runs_arrive_as_their_datagrams_ipv4() {
    segmented("127.0.0.1");
}

#[test]
fn segmented_runs_arrive_as_their_datagrams_ipv6() {
    segmented("::1");
}
