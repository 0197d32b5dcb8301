//! NDNLPv2 fields on the packets the daemon forwards, as NFD 24.07 sets them: a CongestionMark
//! travels with the Interest upstream and with the Data downstream (NFD keeps an incoming
//! packet's mark as a tag that its link service writes on the packet it forwards), and
//! IncomingFaceId names the face a packet came in on, the content store's id (254) only for a
//! Data the CS served, also when the Interest went upstream after a miss in the L2 tier.
//!
//! The apps read the link-layer packets themselves (the client's face keeps neither an
//! Interest's CongestionMark nor a Data's IncomingFaceId); their management commands go through
//! the client's face on the same stream, before any packet is read raw.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use client::control::Controller;
use client::Face;
use router::{Config, Router};
use wire::data::MetaInfo;
use wire::nfd::ControlParameters;
use wire::{Data, DataView, Interest, InterestView, Limits, LpPacket, LpPacketView, Name};

/// NFD's face id for Data served from the content store.
const CONTENT_STORE: u64 = 254;

/// A test's scratch directory, removed with its contents when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("cascade-ff-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A router on a unix socket in `dir` (no other listener), one worker.
fn config(dir: &Path) -> Config {
    let mut c = Config::default();
    c.listen.unix = dir.join("r.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.websocket = String::new();
    c.listen.udp = String::new();
    c.listen.tcp6 = String::new();
    c.listen.udp6 = String::new();
    c.http.listen = String::new();
    c.workers.threads = router::config::Threads::One;
    c
}

/// One packet as an app read it off the stream: its link-layer fields and network packet.
struct Got {
    lp: LpPacket,
    packet: Vec<u8>,
}

/// An app on a unix face: management through the client's face, packets raw.
struct App {
    raw: UnixStream,
    id: u64,
}

impl App {
    /// Connects, registers `prefix` (its face id comes back) and, if `local_fields`, turns
    /// LocalFieldsEnabled on.
    fn new(r: &Router, prefix: &str, local_fields: bool) -> App {
        let s = UnixStream::connect(r.bound().unix.clone().unwrap()).unwrap();
        let raw = s.try_clone().unwrap();
        let mut face = Face::from_unix_stream(s, "test");
        let ok = face.register(&Name::from_uri(prefix).unwrap()).unwrap();
        if local_fields {
            let p = ControlParameters {
                flags: Some(1),
                mask: Some(1),
                ..ControlParameters::default()
            };
            let r = Controller::new(&mut face)
                .command("faces", "update", &p)
                .unwrap();
            assert_eq!(r.flags.map(|f| f & 1), Some(1));
        }
        raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        App {
            raw,
            id: ok.face_id.unwrap(),
        }
    }

    /// Sends `packet` in an LpPacket that `f` fills in.
    fn send(&mut self, packet: Vec<u8>, f: impl FnOnce(&mut LpPacket)) {
        let mut lp = LpPacket {
            fragment: Some(packet),
            ..LpPacket::default()
        };
        f(&mut lp);
        self.raw.write_all(&lp.to_wire()).unwrap();
    }

    /// The next packet from the router (a bare one has no link-layer fields).
    fn recv(&mut self) -> Got {
        let mut head = [0u8; 2];
        self.raw.read_exact(&mut head).unwrap();
        let mut frame = head.to_vec();
        let len = match head[1] {
            253 => 2,
            254 => 4,
            n => {
                frame.resize(2 + usize::from(n), 0);
                self.raw.read_exact(&mut frame[2..]).unwrap();
                return parse(frame);
            }
        };
        let mut l = vec![0u8; len];
        self.raw.read_exact(&mut l).unwrap();
        let n = l.iter().fold(0usize, |a, &b| a << 8 | usize::from(b));
        frame.extend_from_slice(&l);
        let start = frame.len();
        frame.resize(start + n, 0);
        self.raw.read_exact(&mut frame[start..]).unwrap();
        parse(frame)
    }

    /// The next Interest it gets (its name checked).
    fn interest(&mut self, uri: &str) -> Got {
        let g = self.recv();
        let i = InterestView::decode(&g.packet, &Limits::default()).unwrap();
        assert_eq!(i.name().to_name(), Name::from_uri(uri).unwrap());
        g
    }

    /// The next Data it gets (its name checked).
    fn data(&mut self, uri: &str) -> Got {
        let g = self.recv();
        let d = DataView::decode(&g.packet, &Limits::default()).unwrap();
        assert_eq!(d.name().to_name(), Name::from_uri(uri).unwrap());
        g
    }

    /// Answers Interest `got` with a Data of its name, fresh for `freshness_ms`, with its PIT
    /// token and the CongestionMark `mark` (0: none).
    fn answer(&mut self, got: &Got, freshness_ms: u64, mark: u64) {
        let i = InterestView::decode(&got.packet, &Limits::default()).unwrap();
        let mut d = Data::new(i.name().to_name(), vec![7; 20]);
        d.meta_info = Some(MetaInfo {
            freshness_ms: Some(freshness_ms),
            ..MetaInfo::default()
        });
        d.sign_digest_sha256();
        let token = got.lp.pit_token.clone();
        self.send(d.to_wire(), |lp| {
            lp.pit_token = token;
            lp.congestion_mark = (mark != 0).then_some(mark);
        });
    }
}

fn parse(frame: Vec<u8>) -> Got {
    if frame[0] != 0x64 {
        return Got {
            lp: LpPacket::default(),
            packet: frame,
        };
    }
    let view = LpPacketView::decode(&frame, &Limits::default()).unwrap();
    let lp = view.to_lp_packet();
    Got {
        packet: lp.fragment.clone().unwrap(),
        lp,
    }
}

fn interest(uri: &str, nonce: u32) -> Interest {
    let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes());
    i.lifetime_ms = Some(4000);
    i
}

#[test]
fn a_congestion_mark_travels_upstream_with_its_interest_and_downstream_with_its_data() {
    let dir = Scratch::new("cm");
    let r = Router::start(&config(&dir.0)).unwrap();
    let mut producer = App::new(&r, "/c", false);
    let mut consumer = App::new(&r, "/app", false);

    consumer.send(interest("/c/x", 1).to_wire(), |lp| {
        lp.congestion_mark = Some(5)
    });
    let got = producer.interest("/c/x");
    assert_eq!(got.lp.congestion_mark, Some(5), "the Interest's mark");
    producer.answer(&got, 1000, 4);
    assert_eq!(
        consumer.data("/c/x").lp.congestion_mark,
        Some(4),
        "the Data's mark"
    );

    // Unmarked, they stay unmarked.
    consumer.send(interest("/c/y", 2).to_wire(), |_| {});
    let got = producer.interest("/c/y");
    assert_eq!(got.lp.congestion_mark, None);
    producer.answer(&got, 1000, 0);
    assert_eq!(consumer.data("/c/y").lp.congestion_mark, None);
    r.stop_handle().stop();
    r.join();
}

/// Waits until the router's L2 files hold `n` chunks.
fn wait_stored(r: &Router, n: u64) {
    let t0 = Instant::now();
    loop {
        let stored: u64 = r
            .snapshots()
            .iter()
            .map(|s| s.l2.unwrap().stored_chunks)
            .sum();
        if stored >= n {
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{stored} of {n}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn incoming_face_id_is_the_content_store_s_only_for_data_the_cs_served() {
    let dir = Scratch::new("ifi");
    let mut c = config(&dir.0);
    c.store.l2_path = dir.0.join("l2").display().to_string();
    c.store.l2_capacity = 4000;
    c.store.batch = 1;
    c.store.prefetch_ahead = false;
    let r = Router::start(&c).unwrap();
    let mut producer = App::new(&r, "/f", true);
    let mut consumer = App::new(&r, "/app", true);
    let fresh_ms = 300;

    // Through the router: each learns the other's face.
    consumer.send(interest("/f/seg=0", 1).to_wire(), |_| {});
    let got = producer.interest("/f/seg=0");
    assert_eq!(got.lp.incoming_face_id, Some(consumer.id));
    producer.answer(&got, fresh_ms, 0);
    let d = consumer.data("/f/seg=0");
    assert_eq!(d.lp.incoming_face_id, Some(producer.id));
    wait_stored(&r, 1);

    // From the RAM CS: the content store's id.
    consumer.send(interest("/f/seg=0", 2).to_wire(), |_| {});
    assert_eq!(
        consumer.data("/f/seg=0").lp.incoming_face_id,
        Some(CONTENT_STORE)
    );

    // Stale in the RAM CS and in L2: a MustBeFresh Interest waits for L2, which misses, and
    // goes upstream from the copy stored meanwhile; its Data comes from the producer.
    std::thread::sleep(Duration::from_millis(fresh_ms + 100));
    let mut i = interest("/f/seg=0", 3);
    i.must_be_fresh = true;
    consumer.send(i.to_wire(), |_| {});
    let got = producer.interest("/f/seg=0");
    assert_eq!(
        got.lp.incoming_face_id,
        Some(consumer.id),
        "after an L2 miss"
    );
    producer.answer(&got, fresh_ms, 0);
    let d = consumer.data("/f/seg=0");
    assert_eq!(d.lp.incoming_face_id, Some(producer.id), "after an L2 miss");
    let stale: u64 = r.snapshots().iter().map(|s| s.l2.unwrap().tier.stale).sum();
    assert_eq!(stale, 1, "L2 was asked and missed");

    // An Interest with a HopLimit goes as a copy (decremented): still the consumer's.
    let mut i = interest("/f/seg=1", 4);
    i.hop_limit = Some(5);
    consumer.send(i.to_wire(), |_| {});
    let got = producer.interest("/f/seg=1");
    assert_eq!(got.lp.incoming_face_id, Some(consumer.id), "HopLimit");
    r.stop_handle().stop();
    r.join();
}
