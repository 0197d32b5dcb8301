//! What several of the router's integration tests share: a scratch directory, a router that
//! listens on a unix socket only, waiting for L2 writes, and an app that reads and writes the
//! link-layer packets itself (the client's face keeps neither an Interest's CongestionMark nor
//! a Data's IncomingFaceId).
//!
//! Each test binary compiles this module and uses part of it.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use client::control::Controller;
use client::Face;
use router::{Config, Router};
use wire::data::MetaInfo;
use wire::nfd::ControlParameters;
use wire::{Data, DataView, InterestView, Limits, LpPacket, LpPacketView, Name};

/// A test's scratch directory, removed with its contents when the test ends.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh directory named after the test binary, `tag` and the process.
    pub fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!(
            "cascade-{}-{tag}-{}",
            env!("CARGO_CRATE_NAME"),
            std::process::id()
        ));
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

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

/// A router on the unix socket `<dir>/<name>.sock` and no other listener (no HTTP either),
/// one worker.
pub fn unix_config(dir: &Path, name: &str) -> Config {
    let mut c = Config::default();
    c.listen.unix = dir.join(format!("{name}.sock")).display().to_string();
    c.listen.tcp = String::new();
    c.listen.websocket = String::new();
    c.listen.udp = String::new();
    c.listen.tcp6 = String::new();
    c.listen.udp6 = String::new();
    c.http.listen = String::new();
    c.workers.threads = router::config::Threads::One;
    c
}

/// Waits (at most 10 s) until the router's L2 files hold `n` chunks, summed over its workers.
pub fn wait_stored(r: &Router, n: u64) {
    let t0 = Instant::now();
    loop {
        let stored: u64 = r
            .snapshots()
            .iter()
            .map(|s| s.l2.expect("L2 configured").stored_chunks)
            .sum();
        if stored >= n {
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{stored} of {n}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One packet as an app read it off the stream: its link-layer fields and network packet.
pub struct Got {
    pub lp: LpPacket,
    pub packet: Vec<u8>,
}

/// An app on a unix face: management through the client's face, packets raw.
pub struct App {
    raw: UnixStream,
    /// Its face's id at the router.
    pub id: u64,
}

impl App {
    /// Connects, registers `prefix` (its face id comes back) and, if `local_fields`, turns
    /// LocalFieldsEnabled on.
    pub fn new(r: &Router, prefix: &str, local_fields: bool) -> App {
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
    pub fn send(&mut self, packet: Vec<u8>, f: impl FnOnce(&mut LpPacket)) {
        let mut lp = LpPacket {
            fragment: Some(packet),
            ..LpPacket::default()
        };
        f(&mut lp);
        self.raw.write_all(&lp.to_wire()).unwrap();
    }

    /// The next packet from the router (a bare one has no link-layer fields).
    pub fn recv(&mut self) -> Got {
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
    pub fn interest(&mut self, uri: &str) -> Got {
        let g = self.recv();
        let i = InterestView::decode(&g.packet, &Limits::default()).unwrap();
        assert_eq!(i.name().to_name(), Name::from_uri(uri).unwrap());
        g
    }

    /// The next Data it gets (its name checked).
    pub fn data(&mut self, uri: &str) -> Got {
        let g = self.recv();
        let d = DataView::decode(&g.packet, &Limits::default()).unwrap();
        assert_eq!(d.name().to_name(), Name::from_uri(uri).unwrap());
        g
    }

    /// Answers Interest `got` with a Data named `name` (the Interest's name if `None`), fresh
    /// for `freshness_ms`, with its PIT token and the CongestionMark `mark` (0: none).
    pub fn answer_as(&mut self, got: &Got, name: Option<Name>, freshness_ms: u64, mark: u64) {
        let i = InterestView::decode(&got.packet, &Limits::default()).unwrap();
        let mut d = Data::new(name.unwrap_or_else(|| i.name().to_name()), vec![7; 20]);
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

    /// Answers Interest `got` with a Data of its name: [`App::answer_as`].
    pub fn answer(&mut self, got: &Got, freshness_ms: u64, mark: u64) {
        self.answer_as(got, None, freshness_ms, mark);
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
