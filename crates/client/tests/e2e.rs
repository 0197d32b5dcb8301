//! Consumer, producer and management client end to end through a small in-test forwarder
//! ("hub") on Unix socket pairs. The hub answers management commands with the real server-side
//! parser (`mgmt::parse_command`), serves a segmented dataset built by `mgmt::dataset_segments`,
//! forwards Interests by longest-prefix match on registered routes, returns Data along its
//! pending Interests, and can inject a Nack(Congestion) or a CongestionMark. It attaches its
//! own PitToken to every Interest it forwards and counts whether the Data came back with it.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use client::control::Controller;
use client::{get, Error, Face, FetchOptions, Outcome, ServeOptions};
use face::{LpHeaders, PitToken, StreamFramer};
use wire::lp::Nack;
use wire::nfd::{ControlParameters, FaceStatus};
use wire::{Component, Data, Interest, NackReason, Name, PacketView};

fn name(s: &str) -> Name {
    Name::from_uri(s).unwrap()
}

#[derive(Default)]
struct Faults {
    /// Names whose first Interest is Nacked with Congestion instead of forwarded.
    nack_once: Mutex<HashSet<Name>>,
    /// Names whose first Data is forwarded with a CongestionMark.
    mark_once: Mutex<HashSet<Name>>,
}

struct Pit {
    name: Name,
    can_be_prefix: bool,
    face: usize,
    token: Vec<u8>,
}

#[derive(Default)]
struct HubState {
    routes: Mutex<Vec<(Name, usize)>>,
    pit: Mutex<Vec<Pit>>,
    faults: Faults,
    tokens_ok: AtomicU64,
    tokens_bad: AtomicU64,
    next_token: AtomicU64,
    faces_dataset: Vec<Vec<u8>>,
}

struct Hub {
    threads: Vec<thread::JoinHandle<()>>,
    state: Arc<HubState>,
}

fn send(w: &Mutex<UnixStream>, pkt: &[u8], headers: &LpHeaders) {
    let mut out = Vec::new();
    if headers.is_empty() {
        out.extend_from_slice(pkt);
    } else {
        let lp = wire::LpPacket {
            pit_token: headers.pit_token.map(|t| t.as_bytes().to_vec()),
            nack: headers.nack,
            congestion_mark: headers.congestion_mark,
            fragment: Some(pkt.to_vec()),
            ..wire::LpPacket::default()
        };
        lp.encode(&mut out);
    }
    // The peer may be gone already (a producer that stopped); that is not the hub's problem.
    let _ = w.lock().unwrap().write_all(&out);
}

fn faces_dataset() -> Vec<Vec<u8>> {
    let mut content = Vec::new();
    for id in 1..=40u64 {
        FaceStatus {
            face_id: id,
            uri: format!("unix:///app/{id}"),
            local_uri: "unix:///run/hub.sock".into(),
            ..FaceStatus::default()
        }
        .encode(&mut content);
    }
    // Small segments so that the dataset takes several.
    mgmt::dataset_segments(&name("/localhost/nfd/faces/list"), 1, &content, 500)
}

fn handle(state: &HubState, writers: &[Mutex<UnixStream>], from: usize, pkt: &[u8]) {
    let limits = wire::Limits::default();
    let Ok(view) = PacketView::decode(pkt, &limits) else {
        return;
    };
    let (net, token): (Vec<u8>, Option<Vec<u8>>) = match view {
        PacketView::Lp(lp) => {
            if lp.nack.is_some() {
                return;
            }
            let Some(f) = lp.fragment() else { return };
            (f.to_vec(), lp.pit_token.map(<[u8]>::to_vec))
        }
        PacketView::Interest(i) => (i.wire().to_vec(), None),
        PacketView::Data(d) => (d.wire().to_vec(), None),
    };
    match PacketView::decode(&net, &limits).unwrap() {
        PacketView::Interest(iv) => {
            let i = iv.to_interest();
            let to = |w: &[u8], h: &LpHeaders| send(&writers[from], w, h);
            let dataset = name("/localhost/nfd/faces/list");
            if dataset.is_prefix_of(&i.name) {
                let seg = if i.name.len() == dataset.len() + 2 {
                    i.name.components[dataset.len() + 1].as_number().unwrap() as usize
                } else {
                    0
                };
                to(&state.faces_dataset[seg], &LpHeaders::default());
                return;
            }
            if name("/localhost").is_prefix_of(&i.name) {
                let resp = match mgmt::parse_command(&iv, true) {
                    Ok(c) if (c.module.as_str(), c.verb.as_str()) == ("rib", "register") => {
                        let prefix = c.params.name.clone().unwrap();
                        state.routes.lock().unwrap().push((prefix, from));
                        mgmt::ok(c.params)
                    }
                    Ok(_) => mgmt::unsupported(),
                    Err(r) => r,
                };
                to(
                    &mgmt::response_data(&iv.name().to_name(), &resp),
                    &LpHeaders::default(),
                );
                return;
            }
            if state.faults.nack_once.lock().unwrap().remove(&i.name) {
                let h = LpHeaders {
                    nack: Some(Nack {
                        reason: Some(NackReason::Congestion),
                    }),
                    pit_token: token.as_deref().and_then(PitToken::new),
                    ..LpHeaders::default()
                };
                to(&net, &h);
                return;
            }
            let route = state
                .routes
                .lock()
                .unwrap()
                .iter()
                .filter(|(p, _)| p.is_prefix_of(&i.name))
                .max_by_key(|(p, _)| p.len())
                .map(|(_, f)| *f);
            let Some(out) = route else {
                let h = LpHeaders {
                    nack: Some(Nack {
                        reason: Some(NackReason::NoRoute),
                    }),
                    ..LpHeaders::default()
                };
                to(&net, &h);
                return;
            };
            let t = state
                .next_token
                .fetch_add(1, Ordering::Relaxed)
                .to_be_bytes();
            state.pit.lock().unwrap().push(Pit {
                name: i.name.clone(),
                can_be_prefix: i.can_be_prefix,
                face: from,
                token: t.to_vec(),
            });
            let h = LpHeaders {
                pit_token: PitToken::new(&t),
                ..LpHeaders::default()
            };
            send(&writers[out], &net, &h);
        }
        PacketView::Data(dv) => {
            let dname = dv.name().to_name();
            let mut pit = state.pit.lock().unwrap();
            let mut mark = state.faults.mark_once.lock().unwrap().remove(&dname);
            let mut i = 0;
            while i < pit.len() {
                let p = &pit[i];
                if p.name == dname || (p.can_be_prefix && p.name.is_prefix_of(&dname)) {
                    if token.as_deref() == Some(&p.token[..]) {
                        state.tokens_ok.fetch_add(1, Ordering::Relaxed);
                    } else {
                        state.tokens_bad.fetch_add(1, Ordering::Relaxed);
                    }
                    let h = LpHeaders {
                        congestion_mark: mark.then_some(1),
                        ..LpHeaders::default()
                    };
                    mark = false;
                    send(&writers[p.face], &net, &h);
                    pit.swap_remove(i);
                } else {
                    i += 1;
                }
            }
        }
        PacketView::Lp(_) => {}
    }
}

impl Hub {
    /// A hub with `n` application faces; returns the hub and the applications' ends.
    fn start(n: usize) -> (Hub, Vec<Face>) {
        let state = Arc::new(HubState {
            faces_dataset: faces_dataset(),
            ..HubState::default()
        });
        let mut apps = Vec::new();
        let mut readers = Vec::new();
        let mut writers = Vec::new();
        for i in 0..n {
            let (app, hub) = UnixStream::pair().unwrap();
            apps.push(Face::from_unix_stream(app, format!("hub face {i}")));
            writers.push(Mutex::new(hub.try_clone().unwrap()));
            readers.push(hub);
        }
        let writers = Arc::new(writers);
        let threads = readers
            .into_iter()
            .enumerate()
            .map(|(i, mut r)| {
                let (state, writers) = (state.clone(), writers.clone());
                thread::spawn(move || {
                    let mut framer = StreamFramer::default();
                    loop {
                        match framer.fill_from(&mut r) {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        }
                        while let Ok(Some(p)) = framer.next_packet() {
                            handle(&state, &writers, i, p);
                        }
                    }
                })
            })
            .collect();
        (Hub { threads, state }, apps)
    }

    fn join(self) -> Arc<HubState> {
        for t in self.threads {
            t.join().unwrap();
        }
        self.state
    }
}

/// Deterministic test content.
fn content(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// Runs `put` on face 1 (registered before the consumer starts) and `get` on face 0.
fn put_and_get(
    len: usize,
    segment_size: usize,
    faults: impl FnOnce(&HubState),
) -> (Vec<u8>, client::Stats, client::ServeStats, Arc<HubState>) {
    let (hub, mut faces) = Hub::start(2);
    let mut producer = faces.pop().unwrap();
    let mut consumer = faces.pop().unwrap();
    let prefix = name("/test/file");
    producer.register(&prefix).unwrap();
    faults(&hub.state);
    let data = content(len);
    let served = data.clone();
    let p = prefix.clone();
    let server = thread::spawn(move || {
        let opts = ServeOptions {
            segment_size,
            version: Some(42),
            once: true,
            register: false,
            ..ServeOptions::default()
        };
        let stop = AtomicBool::new(false);
        client::serve_content(&mut producer, &p, &served, &opts, &stop).unwrap()
    });
    let mut out = Vec::new();
    let stats = get(&mut consumer, &prefix, &FetchOptions::default(), &mut out).unwrap();
    let served = server.join().unwrap();
    drop(consumer);
    (out, stats, served, hub.join())
}

#[test]
fn get_fetches_what_put_serves() {
    let (out, st, served, hub) = put_and_get(100_000, 1000, |_| {});
    assert_eq!(out, content(100_000));
    assert_eq!(st.segments, 100);
    assert_eq!(st.bytes, 100_000);
    assert_eq!(st.versioned_name, name("/test/file/v=42"));
    assert_eq!((st.timeouts, st.nacks, st.retransmissions), (0, 0, 0));
    // One discovery Interest plus one per remaining segment.
    assert_eq!(st.interests, 99);
    assert_eq!(st.rtt.unwrap().count, 99);
    // The window grew past its initial 2.
    assert!(st.final_cwnd > 2.0);
    assert_eq!((served.version, served.segments), (42, 100));
    // The version was discovered through RDR metadata.
    assert_eq!(served.metadata_sent, 1);
    // Every Data (the metadata and 100 segments) came back with the PitToken of the Interest
    // it answered.
    assert_eq!(hub.tokens_ok.load(Ordering::Relaxed), 101);
    assert_eq!(hub.tokens_bad.load(Ordering::Relaxed), 0);
}

#[test]
fn get_recovers_from_congestion_nack_and_reacts_to_marks() {
    let seg = |n: u64| name("/test/file/v=42").with(Component::segment(n));
    let (out, st, _, _) = put_and_get(20_000, 1000, |h| {
        h.faults.nack_once.lock().unwrap().insert(seg(3));
        h.faults.mark_once.lock().unwrap().insert(seg(7));
    });
    assert_eq!(out, content(20_000));
    assert_eq!(st.nacks, 1);
    assert_eq!(st.retransmissions, 1);
    assert_eq!(st.congestion_marks, 1);
    assert!(st.window_decreases >= 1);
}

#[test]
fn get_of_an_empty_file_and_a_single_segment() {
    let (out, st, _, _) = put_and_get(0, 1000, |_| {});
    assert!(out.is_empty());
    assert_eq!((st.segments, st.interests), (1, 0));
    let (out, st, _, _) = put_and_get(999, 1000, |_| {});
    assert_eq!(out, content(999));
    assert_eq!(st.segments, 1);
}

#[test]
fn express_reports_nack_and_poke_peek_round_trip() {
    let (hub, mut faces) = Hub::start(2);
    let mut producer = faces.pop().unwrap();
    let mut consumer = faces.pop().unwrap();
    // Nothing is registered: NoRoute.
    let mut i = Interest::new(name("/nowhere"), client::random_nonce());
    i.lifetime_ms = Some(10_000);
    match consumer.express(&i).unwrap() {
        Outcome::Nack(n) => assert_eq!(n.reason, Some(NackReason::NoRoute)),
        o => panic!("expected a Nack, got {o:?}"),
    }
    assert!(matches!(consumer.fetch(&i), Err(Error::Nack { .. })));
    // poke-like: register, then serve one Data.
    let n = name("/poke/me");
    producer.register(&n).unwrap();
    let mut d = Data::new(n.clone(), b"hello".to_vec());
    d.sign_digest_sha256();
    let wire = d.to_wire();
    let p = n.clone();
    let server = thread::spawn(move || {
        let stop = AtomicBool::new(false);
        client::producer::serve_one(&mut producer, &p, &wire, false, false, None, &stop)
            .unwrap()
            .is_some()
    });
    let mut i = Interest::new(name("/poke/me"), client::random_nonce());
    i.can_be_prefix = true;
    i.lifetime_ms = Some(10_000);
    let got = consumer.fetch(&i).unwrap();
    assert_eq!(got.name, n);
    assert_eq!(got.content(), b"hello");
    assert!(got.digest_valid);
    assert!(server.join().unwrap());
    drop(consumer);
    hub.join();
}

#[test]
fn management_commands_and_datasets() {
    let (hub, mut faces) = Hub::start(1);
    let mut f = faces.pop().unwrap();
    let mut c = Controller::new(&mut f);
    // A command the hub knows: 200 with the parameters echoed.
    let p = client::control::register_params(&name("/a/b"));
    assert_eq!(c.command("rib", "register", &p).unwrap(), p);
    // A command it does not: the StatusCode and StatusText come back as the error.
    match c.command("rib", "frobnicate", &ControlParameters::default()) {
        Err(Error::Command { code, text }) => {
            assert_eq!((code, text.as_str()), (501, "Unknown command"));
        }
        r => panic!("expected a command error, got {r:?}"),
    }
    // A dataset of several segments, reassembled and decoded.
    assert!(hub.state.faces_dataset.len() > 2);
    let faces = c.faces().unwrap();
    assert_eq!(faces.len(), 40);
    assert_eq!(faces[39].face_id, 40);
    assert_eq!(faces[0].uri, "unix:///app/1");
    drop(f);
    hub.join();
}

#[test]
fn packets_with_lp_headers_reach_the_decoder() {
    // A PitToken-only LpPacket around an Interest is delivered as an Interest with the token.
    let (a, b) = UnixStream::pair().unwrap();
    let mut fa = Face::from_unix_stream(a, "a");
    let mut fb = Face::from_unix_stream(b, "b");
    let i = Interest::new(name("/x"), [1, 2, 3, 4]).to_wire();
    let token = PitToken::new(b"tok").unwrap();
    fa.send_packet(
        &i,
        &LpHeaders {
            pit_token: Some(token),
            ..LpHeaders::default()
        },
    )
    .unwrap();
    let got = fb
        .recv(std::time::Duration::from_secs(10))
        .unwrap()
        .unwrap();
    let client::Received::Interest(ip) = got else {
        panic!("expected an Interest")
    };
    assert_eq!(ip.pit_token, Some(token));
    assert_eq!(ip.wire, i);
}

#[test]
fn get_falls_back_to_can_be_prefix_discovery_when_no_metadata_comes() {
    // A producer that does not speak RDR: it answers segments and CanBePrefix discovery only.
    let (hub, mut faces) = Hub::start(2);
    let mut producer = faces.pop().unwrap();
    let mut consumer = faces.pop().unwrap();
    let prefix = name("/old/file");
    producer.register(&prefix).unwrap();
    let segs = client::segment_data(&prefix, 3, &content(5000), 1000, 1000);
    let p = prefix.clone();
    let server = thread::spawn(move || {
        let (mut answered, mut ignored) = (0u64, 0u64);
        while answered < segs.len() as u64 {
            let Ok(Some(client::Received::Interest(i))) =
                producer.recv(std::time::Duration::from_secs(30))
            else {
                break;
            };
            match client::producer::answering_segment(&i.interest, &p, 3, 5, true) {
                Some(s) => {
                    producer.put_data(&segs[s as usize], i.pit_token).unwrap();
                    answered += 1;
                }
                None => ignored += 1,
            }
        }
        ignored
    });
    let opts = FetchOptions {
        lifetime_ms: 200,
        ..FetchOptions::default()
    };
    let mut out = Vec::new();
    let st = get(&mut consumer, &prefix, &opts, &mut out).unwrap();
    assert_eq!(out, content(5000));
    assert_eq!(st.versioned_name, name("/old/file/v=3"));
    // The metadata Interest reached the producer and went unanswered.
    assert_eq!(server.join().unwrap(), 1);
    drop(consumer);
    hub.join();
}
