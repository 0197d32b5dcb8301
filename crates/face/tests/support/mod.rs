//! What the face table's tests share: a sink that records what the table tells it, and a
//! driver that turns the table as a forwarder's I/O loop does.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use face::table::FaceBounds;
use face::table::{BoundCounters, FaceTable, Notice};
use face::{Face, FaceConfig, FaceId, FaceRx, FaceSink, LpHeaders, PacketKind, Reassembler};
use mio::{Events, Poll};
use wire::{Limits, LpPacketView};

/// First byte of a packet the test sink calls malformed.
pub const GARBAGE: u8 = 0xEE;

/// A sink that records everything, reassembles fragments and calls [`GARBAGE`] malformed.
#[derive(Default)]
pub struct Sink {
    pub now: u64,
    pub up: Vec<FaceId>,
    pub changed: Vec<FaceId>,
    pub down: Vec<(FaceId, String)>,
    /// DOWN (false) and UP (true) of redialing faces.
    pub states: Vec<(FaceId, bool)>,
    pub packets: Vec<(FaceId, Vec<u8>, LpHeaders)>,
    pub bounds: Vec<BoundCounters>,
    /// Connections refused: `Some(address)` by the per-address limit, `None` by the face
    /// limit.
    pub refused: Vec<Option<std::net::IpAddr>>,
}

impl FaceSink for Sink {
    fn now_ms(&self) -> u64 {
        self.now
    }
    fn face_up(&mut self, face: &Face) {
        self.up.push(face.id());
    }
    fn face_changed(&mut self, face: &Face) {
        self.changed.push(face.id());
    }
    fn face_down(&mut self, face: &Face, why: &str) {
        self.down.push((face.id(), why.to_string()));
    }
    fn face_state(&mut self, face: &Face, up: bool) {
        self.states.push((face.id(), up));
    }
    fn receive(&mut self, rx: FaceRx<'_>, bytes: &[u8], now_ms: u64) -> bool {
        rx.counters.in_bytes += bytes.len() as u64;
        if bytes.first() == Some(&GARBAGE) {
            rx.counters.malformed += 1;
            return true;
        }
        if bytes.first() != Some(&0x64) {
            rx.counters.count_in(kind_of(bytes));
            self.packets
                .push((rx.id, bytes.to_vec(), LpHeaders::default()));
            return false;
        }
        let lp = LpPacketView::decode(bytes, &Limits::default()).unwrap();
        let r: &mut Reassembler = rx.reassembler.expect("a datagram face");
        match r.receive(u64::from(rx.id), &lp, now_ms) {
            Ok(Some(whole)) => {
                rx.counters.count_in(kind_of(&whole.packet));
                self.packets
                    .push((rx.id, whole.packet.into_owned(), whole.headers));
            }
            Ok(None) => {}
            Err(e) => assert!(!e.is_malformed(), "{e}"),
        }
        false
    }
    fn notice(&mut self, n: Notice<'_>) {
        match n {
            Notice::Bounds(b) => self.bounds.push(*b),
            Notice::AddressLimit(ip) => self.refused.push(Some(ip)),
            Notice::FaceLimit => self.refused.push(None),
            _ => {}
        }
    }
}

/// An Interest (0x05) or, for the test, anything else: a Data.
pub fn kind_of(bytes: &[u8]) -> PacketKind {
    match bytes.first() {
        Some(0x05) => PacketKind::Interest,
        _ => PacketKind::Data,
    }
}

pub fn config() -> FaceConfig {
    FaceConfig {
        max_faces: 8,
        send_queue_bytes: 1 << 20,
        udp_mtu: 1400,
        udp_idle_timeout_ms: 10_000,
        malformed_limit: 3,
        max_packet_bytes: 8800,
        bounds: FaceBounds::default(),
        udp_rx: face::UdpRx::Recvmmsg,
        // Connections are not timed out here (the clocks of these tests jump); the timeouts'
        // own tests set them.
        stream: face::StreamLimits {
            idle_timeout_ms: 0,
            first_packet_timeout_ms: 0,
            ..face::StreamLimits::default()
        },
        local: Default::default(),
        congestion_marking: true,
    }
}

pub struct Driver {
    pub poll: Poll,
    pub events: Events,
    pub table: FaceTable,
    pub sink: Sink,
}

impl Driver {
    pub fn new(cfg: FaceConfig) -> Driver {
        let poll = Poll::new().unwrap();
        let table = FaceTable::new(poll.registry().try_clone().unwrap(), cfg);
        Driver {
            poll,
            events: Events::with_capacity(64),
            table,
            sink: Sink::default(),
        }
    }

    /// One turn of an I/O loop.
    pub fn turn(&mut self) {
        self.table.flush(&mut self.sink);
        self.table.start_turn();
        self.poll
            .poll(&mut self.events, Some(Duration::from_millis(20)))
            .unwrap();
        for ev in self.events.iter() {
            let readable = ev.is_readable() || ev.is_read_closed();
            self.table
                .on_event(ev.token(), readable, ev.is_writable(), &mut self.sink);
        }
        self.table.serve_pending(&mut self.sink);
    }

    /// Turns until `done` or five seconds have passed.
    pub fn until(&mut self, mut done: impl FnMut(&Driver) -> bool) {
        let end = Instant::now() + Duration::from_secs(5);
        while !done(self) {
            assert!(Instant::now() < end, "timed out");
            self.turn();
        }
    }
}
