//! A face table set up for io_uring receives falls back to `recvmmsg` when the kernel refuses
//! a ring (here: no file descriptor left for it), and its UDP faces work as before.
//!
//! One test in its own binary: it lowers the process's descriptor limit for a moment.
#![cfg(target_os = "linux")]

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use face::table::{FaceBounds, FaceTable, Notice};
use face::{Face, FaceConfig, FaceRx, FaceSink, UdpRx};
use mio::{Events, Poll};

#[derive(Default)]
struct Sink {
    packets: Vec<Vec<u8>>,
}

impl FaceSink for Sink {
    fn now_ms(&self) -> u64 {
        0
    }
    fn face_up(&mut self, _: &Face) {}
    fn face_changed(&mut self, _: &Face) {}
    fn face_down(&mut self, _: &Face, _: &str) {}
    fn receive(&mut self, rx: FaceRx<'_>, bytes: &[u8], _: u64) -> bool {
        rx.counters.in_bytes += bytes.len() as u64;
        self.packets.push(bytes.to_vec());
        false
    }
    fn notice(&mut self, _: Notice<'_>) {}
}

/// The lowest descriptor number not open.
fn lowest_free_fd() -> libc::rlim_t {
    // SAFETY: F_GETFD only queries a descriptor number.
    (0..)
        .find(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0)
        .unwrap() as libc::rlim_t
}

fn set_nofile(soft: libc::rlim_t, hard: libc::rlim_t) {
    let l = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: a valid rlimit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) }, 0);
}

#[test]
fn a_refused_ring_falls_back_to_recvmmsg() {
    let poll = Poll::new().unwrap();
    let cfg = FaceConfig {
        max_faces: 8,
        send_queue_bytes: 1 << 20,
        udp_mtu: 1400,
        udp_idle_timeout_ms: 10_000,
        malformed_limit: 3,
        max_packet_bytes: 8800,
        bounds: FaceBounds::default(),
        udp_rx: UdpRx::Uring { gro: false },
        stream: face::StreamLimits::default(),
        local: Default::default(),
        congestion_marking: true,
    };
    let mut table = FaceTable::new(poll.registry().try_clone().unwrap(), cfg);
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = s.local_addr().unwrap();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut old) }, 0);
    // Every descriptor below the limit is open: io_uring_setup gets EMFILE.
    set_nofile(lowest_free_fd(), old.rlim_max);
    let added = table.add_udp_socket(s, true);
    set_nofile(old.rlim_cur, old.rlim_max);
    added.unwrap();
    assert!(table.udp_ring_failure().is_some());
    assert!(table.udp_ring_counters().is_none());

    let interest = wire::Interest::new(wire::Name::from_uri("/t").unwrap(), [1; 4]).to_wire();
    peer.send_to(&interest, addr).unwrap();
    let mut sink = Sink::default();
    let mut events = Events::with_capacity(8);
    let end = Instant::now() + Duration::from_secs(5);
    let mut poll = poll;
    while sink.packets.is_empty() {
        assert!(Instant::now() < end, "timed out");
        table.start_turn();
        poll.poll(&mut events, Some(Duration::from_millis(20)))
            .unwrap();
        for ev in events.iter() {
            table.on_event(ev.token(), ev.is_readable(), ev.is_writable(), &mut sink);
        }
        table.serve_pending(&mut sink);
    }
    assert_eq!(sink.packets, vec![interest]);
    assert_eq!(table.list().len(), 1);
}
