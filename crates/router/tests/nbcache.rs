//! NB-Cache's switches in a running router (Pan et al., "NB-Cache: Non-Blocking In-Network
//! Caching for High-Performance Content Routers"): the filter in front of the CS skips it for
//! names the router does not hold, knows L2's names again after a restart, and the blocking
//! I/O mode still serves from L2. Its congestion control between two routers over UDP: the
//! downstream bypasses its store to the upstream while the upstream is available, and once a
//! Nack-α (Cascade's NDNLPv2 field 952) came from it serves from its own store and marks the
//! Data; a signal reaches every worker of the downstream on a fragmented Data and, when no
//! Data goes to the downstream, alone on IDLE LpPackets; and a consumer whose Data are marked
//! shrinks its window.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use client::face::{DataPacket, Outcome, Received};
use client::transport::TransportUri;
use client::{AimdOptions, Face, FetchOptions, ServeOptions};
use common::{wait_stored, Scratch};
use router::config::StoreIo;
use router::dispatch::{Dispatcher, Route, WorkerMapping};
use router::{Config, Router};
use wire::lp::{LpPacket, NbccSignal};
use wire::{Data, Interest, Limits, Name};

/// One worker, a RAM CS of 4, L2 in `<dir>/l2`, the CS filter on.
fn config(dir: &Path, io: StoreIo) -> Config {
    let mut c = Config::default();
    c.listen.unix = dir.join("r.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.websocket = String::new();
    c.listen.udp = String::new();
    c.workers.count = 1;
    c.cs.capacity = 4;
    c.store.l2_path = dir.join("l2").display().to_string();
    c.store.l2_capacity = 1000;
    c.store.bloom = true;
    c.store.aqm = true;
    c.store.io = io;
    c
}

fn face(r: &Router) -> Face {
    Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap()
}

/// A producer under `prefix` counting the Interests it answers.
struct Producer {
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicU64>,
    thread: JoinHandle<()>,
}

fn producer(r: &Router, prefix: &str) -> Producer {
    producer_of(r, prefix, 500)
}

/// [`producer`] answering with Data of `content_bytes`.
fn producer_of(r: &Router, prefix: &str, content_bytes: usize) -> Producer {
    let mut f = face(r);
    f.register(&Name::from_uri(prefix).unwrap()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let (s, a) = (stop.clone(), answered.clone());
    let thread = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            if let Ok(Some(Received::Interest(ip))) = f.recv(Duration::from_millis(50)) {
                let mut d = Data::new(ip.interest.name.clone(), vec![0xab; content_bytes]);
                d.sign_digest_sha256();
                // Counted before it is sent, so that a consumer holding the Data sees the count.
                a.fetch_add(1, Ordering::Relaxed);
                f.put_data(&d.to_wire(), ip.pit_token).unwrap();
            }
        }
    });
    Producer {
        stop,
        answered,
        thread,
    }
}

impl Producer {
    fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }
    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap();
    }
}

fn fetch(consumer: &mut Face, uri: &str, nonce: u32) -> DataPacket {
    let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes());
    i.lifetime_ms = Some(2000);
    match consumer.express(&i).unwrap() {
        Outcome::Data(d) => {
            assert_eq!(d.name.to_string(), uri);
            d
        }
        other => panic!("{uri}: {other:?}"),
    }
}

fn snapshot(r: &Router) -> router::worker::Snapshot {
    r.snapshots().remove(0)
}

fn stop(r: Router) {
    r.stop_handle().stop();
    r.join();
}

/// Fetches 12 chunks (written through to L2; the RAM CS keeps 4) and waits for the writes.
fn fill(r: &Router, consumer: &mut Face) {
    for k in 0..12u32 {
        fetch(consumer, &format!("/nb/v=1/seg={k}"), k);
    }
    wait_stored(r, 12);
}

#[test]
fn the_filter_skips_absent_names_and_knows_l2_after_a_restart() {
    let dir = Scratch::new("filter");
    let cfg = config(&dir.0, StoreIo::NonBlocking);
    let r = Router::start(&cfg).unwrap();
    let p = producer(&r, "/nb");
    let mut consumer = face(&r);
    fill(&r, &mut consumer);
    let skips = snapshot(&r).counters.bypass.filter_skips;
    assert!(skips >= 12, "every first fetch was a sure miss: {skips}");
    // Segment 0 left the RAM CS but L2 holds it: the filter lets it through to L2.
    let answered = p.answered();
    fetch(&mut consumer, "/nb/v=1/seg=0", 100);
    assert_eq!(p.answered(), answered, "served from L2, not upstream");
    let s = snapshot(&r);
    assert!(s.l2.unwrap().tier.served >= 1);
    assert_eq!(s.counters.bypass.filter_skips, skips);
    p.stop();
    stop(r);

    // After a clean restart the filter holds L2's names again (from the index file): a chunk
    // only L2 holds is served from it, and a new name is still a sure miss.
    let r = Router::start(&cfg).unwrap();
    let p = producer(&r, "/nb");
    let mut consumer = face(&r);
    fetch(&mut consumer, "/nb/v=1/seg=5", 200);
    assert_eq!(p.answered(), 0, "served from L2 after the restart");
    assert_eq!(snapshot(&r).counters.bypass.filter_skips, 0);
    fetch(&mut consumer, "/nb/v=2/seg=0", 201);
    assert_eq!(p.answered(), 1);
    assert_eq!(snapshot(&r).counters.bypass.filter_skips, 1);
    p.stop();
    stop(r);
}

#[test]
fn blocking_io_still_serves_from_l2() {
    let dir = Scratch::new("blocking");
    let cfg = config(&dir.0, StoreIo::Blocking);
    let r = Router::start(&cfg).unwrap();
    let p = producer(&r, "/nb");
    let mut consumer = face(&r);
    fill(&r, &mut consumer);
    let answered = p.answered();
    for k in 0..4u32 {
        fetch(&mut consumer, &format!("/nb/v=1/seg={k}"), 300 + k);
    }
    assert_eq!(p.answered(), answered, "all from L2");
    assert!(snapshot(&r).l2.unwrap().tier.served >= 1);
    p.stop();
    stop(r);
}

// ---------------------------------------------------------------------------------------------
// Congestion control: NB-CC between two routers, and the consumer's AIMD
// ---------------------------------------------------------------------------------------------

/// NB-CC's switches on a router of [`config`].
fn with_cc(mut c: Config, ecn: bool, nbcc: bool, aqm: bool, threshold: usize) -> Config {
    c.store.ecn = ecn;
    c.store.nbcc = nbcc;
    c.store.aqm = aqm;
    c.store.bypass_threshold = threshold;
    c.store.nbcc_interval_ms = 20;
    c.store.nbcc_timeout_ms = 60_000;
    c
}

/// A packet carrying an NB-CC signal is handed to every worker: alone (IDLE), or on a Data
/// that would otherwise go to one worker only.
#[test]
fn the_dispatcher_hands_a_signal_to_every_worker() {
    let d = Dispatcher::new(
        engine::hash::HashKey::fixed(1, 2),
        4,
        WorkerMapping::Content,
        Limits::default(),
    );
    let mut idle = Vec::new();
    NbccSignal::Alpha.encode_idle(&mut idle);
    assert!(matches!(d.route(&idle), Route::AllWorkers { .. }));
    let data = Data::new(Name::from_uri("/a/b").unwrap(), vec![1]).to_wire();
    let token = router::dispatch::worker_token(2);
    let mut lp = LpPacket {
        pit_token: Some(token.to_vec()),
        fragment: Some(data),
        ..LpPacket::default()
    };
    assert_eq!(d.route(&lp.to_wire()), Route::Worker(2));
    lp.nbcc = Some(NbccSignal::Beta);
    assert_eq!(d.route(&lp.to_wire()), Route::AllWorkers { owner: 2 });
}

/// [`config`] with L2 batches of one chunk and no prefetch-ahead: every chunk the RAM CS does
/// not hold is one L2 read (a RAM hit never waits for the store, so NB-CC never marks it).
fn one_chunk_batches(dir: &Path) -> Config {
    let mut c = config(dir, StoreIo::NonBlocking);
    c.store.batch = 1;
    c.store.prefetch_ahead = false;
    c
}

/// Two routers over UDP, both holding the same chunks in L2. The downstream (R1, NB-CC, its
/// queue threshold 0: always past it) bypasses its store to the upstream (R2) for every held
/// chunk while R2 is available, and the Data come back unmarked. R2 restarts congested (its
/// threshold 0 too): its first Data carries a Nack-α, after which R1 serves the chunks from
/// its own L2 and marks them, since no bypass is possible.
#[test]
fn a_downstream_bypasses_until_the_upstream_sends_a_nack_alpha() {
    let dir = Scratch::new("nbcc2");
    let d2 = dir.0.join("r2");
    let d1 = dir.0.join("r1");
    std::fs::create_dir_all(&d2).unwrap();
    std::fs::create_dir_all(&d1).unwrap();
    let mut c2 = with_cc(one_chunk_batches(&d2), false, true, false, 1 << 20);
    c2.listen.udp = "127.0.0.1:0".into();
    let r2 = Router::start(&c2).unwrap();
    let r2_udp = r2.bound().udp.unwrap();
    let mut c1 = with_cc(one_chunk_batches(&d1), true, true, true, 0);
    let uri = format!("udp4://{r2_udp}");
    c1.static_faces
        .push(router::config::StaticFace { uri: uri.clone() });
    c1.routes.push(router::config::Route {
        prefix: "/nb".into(),
        face: uri,
        cost: 0,
    });
    let r1 = Router::start(&c1).unwrap();
    let p = producer(&r2, "/nb");
    let mut consumer = face(&r1);
    // Both stores get chunks 0..24 (the RAM CSs keep the last 4).
    for k in 0..24u32 {
        fetch(&mut consumer, &format!("/nb/v=1/seg={k}"), k);
    }
    wait_stored(&r1, 24);
    wait_stored(&r2, 24);
    assert_eq!(p.answered(), 24);
    let r2_in = snapshot(&r2).counters.in_interests;

    // R2 available: held chunks go to R2, which serves them from its store, unmarked.
    for k in 0..8u32 {
        let d = fetch(&mut consumer, &format!("/nb/v=1/seg={k}"), 100 + k);
        assert_eq!(d.congestion_mark, None, "seg {k}");
    }
    assert_eq!(snapshot(&r1).counters.bypass.queue_bypasses, 8);
    assert_eq!(snapshot(&r2).counters.in_interests, r2_in + 8);
    assert_eq!(p.answered(), 24, "R2 served them from its store");
    assert_eq!(snapshot(&r1).counters.congestion.data_marked, 0);
    p.stop();
    stop(r2);

    // R2 again, on the same address and store, now congested: it tells R1.
    let mut c2 = with_cc(one_chunk_batches(&d2), false, true, false, 0);
    c2.listen.udp = r2_udp.to_string();
    let r2 = Router::start(&c2).unwrap();
    let first = fetch(&mut consumer, "/nb/v=1/seg=8", 200);
    assert_eq!(
        first.congestion_mark, None,
        "bypassed: R2 was still available"
    );
    assert!(snapshot(&r2).counters.congestion.alpha_sent >= 1);
    // R2 stays congested (threshold 0) and repeats its Nack-α every round, so R1 may have had
    // more than one by now; it made R2 unavailable once.
    let c = snapshot(&r1).counters.congestion;
    assert!(c.alpha_received >= 1 && c.faces_unavailable == 1, "{c:?}");
    let r2_in = snapshot(&r2).counters.in_interests;
    for k in 9..20u32 {
        let d = fetch(&mut consumer, &format!("/nb/v=1/seg={k}"), 200 + k);
        assert_eq!(d.congestion_mark, Some(1), "seg {k}: no bypass possible");
    }
    let s1 = snapshot(&r1);
    assert_eq!(s1.counters.bypass.queue_bypasses, 9);
    assert_eq!(s1.counters.congestion.bypass_unavailable, 11);
    assert_eq!(s1.counters.congestion.data_marked, 11);
    assert_eq!(snapshot(&r2).counters.in_interests, r2_in, "R1 kept them");
    // The same counters through management, as `cascade ctl cs info --json` prints them.
    let sock = r1.bound().unix.clone().unwrap();
    let out = client::nfdc::run(
        client::nfdc::Command::CsInfo,
        Some(&format!("unix://{}", sock.display())),
        true,
    )
    .unwrap();
    for (k, v) in [
        ("n_queue_bypasses", 9),
        ("n_bypass_unavailable", 11),
        ("n_queue_no_upstream", 11),
        ("n_data_marked", 11),
        ("n_faces_unavailable", 1),
    ] {
        let field = format!("\"{k}\":{v}");
        let at = out
            .find(&field)
            .unwrap_or_else(|| panic!("{field} in {out}"));
        assert!(
            matches!(out.as_bytes()[at + field.len()], b',' | b'}'),
            "{out}"
        );
    }
    let alpha: u64 = out
        .split("\"n_alpha_received\":")
        .nth(1)
        .and_then(|t| t.split([',', '}']).next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("n_alpha_received in {out}"));
    assert!(alpha >= 1, "{out}");
    let nb = client::Controller::new(&mut consumer)
        .cs_nbcache(Duration::from_secs(2))
        .unwrap();
    assert_eq!((nb.n_faces_made_unavailable, nb.n_data_marked), (1, 11));
    // R2 keeps sending Nack-α on idle packets while it stays congested, so its count may grow
    // between two readings: management's figure lies between the snapshots taken around it.
    let alpha_before = snapshot(&r2).counters.congestion.alpha_sent;
    let nb2 = client::Controller::new(&mut face(&r2))
        .cs_nbcache(Duration::from_secs(2))
        .unwrap();
    let alpha_after = snapshot(&r2).counters.congestion.alpha_sent;
    assert!(
        alpha_before >= 1 && (alpha_before..=alpha_after).contains(&nb2.n_alpha_sent),
        "{alpha_before} <= {} <= {alpha_after}",
        nb2.n_alpha_sent
    );
    stop(r1);
    stop(r2);
}

/// `get` over a router whose store is always congested under plain ECN (threshold 0): every
/// Data is marked and the window shrinks to 1; without ECN nothing is marked and the window
/// grows; a fixed window stays put whatever the marks.
#[test]
fn marked_data_shrink_the_consumers_window() {
    let run = |tag: &str, ecn: bool, aimd: AimdOptions| {
        let dir = Scratch::new(tag);
        let r = Router::start(&with_cc(
            config(&dir.0, StoreIo::NonBlocking),
            ecn,
            false,
            false,
            0,
        ))
        .unwrap();
        let mut producer = face(&r);
        let prefix = Name::from_uri("/file").unwrap();
        producer.register(&prefix).unwrap();
        let content = vec![7u8; 200 * 100];
        let served = content.clone();
        let p = prefix.clone();
        let server = std::thread::spawn(move || {
            let opts = ServeOptions {
                segment_size: 100,
                version: Some(1),
                once: true,
                register: false,
                ..ServeOptions::default()
            };
            let stop = AtomicBool::new(false);
            client::serve_content(&mut producer, &p, &served, &opts, &stop).unwrap()
        });
        let mut consumer = face(&r);
        let opts = FetchOptions {
            aimd,
            ..FetchOptions::default()
        };
        let mut out = Vec::new();
        let stats = client::get(&mut consumer, &prefix, &opts, &mut out).unwrap();
        server.join().unwrap();
        assert_eq!(out, content);
        let marked = snapshot(&r).counters.congestion.data_marked;
        stop(r);
        (stats, marked)
    };
    let (plain, marked) = run("aimd-plain", false, AimdOptions::default());
    assert_eq!((plain.congestion_marks, marked), (0, 0));
    assert!(plain.final_cwnd > 8.0, "grew from 2: {plain:?}");
    // Every segment's Data is marked (the discovery's too, outside the window).
    let (ecn, marked) = run("aimd-ecn", true, AimdOptions::default());
    assert!(
        ecn.congestion_marks >= 199 && marked > ecn.congestion_marks,
        "{ecn:?}"
    );
    assert!(ecn.window_decreases >= 2, "{ecn:?}");
    assert_eq!(ecn.final_cwnd, 1.0);
    let (fixed, _) = run("aimd-fixed", true, AimdOptions::fixed(8.0));
    assert!(fixed.congestion_marks >= 199);
    assert_eq!((fixed.window_decreases, fixed.final_cwnd), (0, 8.0));
}

/// Two routers over UDP: R2 (NB-CC, always congested) and R1 (two workers) with a route to it.
/// R2's rounds are `interval_ms` apart.
fn cc_pair(dir: &Path, interval_ms: u64) -> (Router, Router) {
    let (d1, d2) = (dir.join("r1"), dir.join("r2"));
    std::fs::create_dir_all(&d1).unwrap();
    std::fs::create_dir_all(&d2).unwrap();
    let mut c2 = with_cc(one_chunk_batches(&d2), false, true, false, 0);
    c2.store.nbcc_interval_ms = interval_ms;
    c2.listen.udp = "127.0.0.1:0".into();
    c2.faces.udp_mtu = 1452;
    let r2 = Router::start(&c2).unwrap();
    let mut c1 = with_cc(one_chunk_batches(&d1), false, false, false, 1 << 20);
    c1.workers.count = 2;
    c1.faces.udp_mtu = 1452;
    let uri = format!("udp4://{}", r2.bound().udp.unwrap());
    c1.static_faces
        .push(router::config::StaticFace { uri: uri.clone() });
    for prefix in ["/nb", "/none"] {
        c1.routes.push(router::config::Route {
            prefix: prefix.into(),
            face: uri.clone(),
            cost: 0,
        });
    }
    (Router::start(&c1).unwrap(), r2)
}

/// Waits until every worker of `r` has received at least one Nack-α; returns how many each.
fn wait_alpha(r: &Router) -> Vec<u64> {
    let t0 = Instant::now();
    loop {
        let got: Vec<u64> = r
            .snapshots()
            .iter()
            .map(|s| s.counters.congestion.alpha_received)
            .collect();
        if got.len() == 2 && got.iter().all(|&n| n >= 1) {
            return got;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "Nack-α per worker: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A Nack-α on a Data too large for one UDP datagram (4 KB content, 1452-byte MTU) survives
/// the fragmentation: the reassembled Data hands it to every worker of the downstream. R2's
/// rounds are a minute apart, so no IDLE packet carries it meanwhile.
#[test]
fn a_signal_on_a_fragmented_data_reaches_every_worker() {
    let dir = Scratch::new("nbcc-frag");
    let (r1, r2) = cc_pair(&dir.0, 60_000);
    let p = producer_of(&r2, "/nb", 4000);
    let d = fetch(&mut face(&r1), "/nb/big/seg=0", 1);
    assert_eq!(d.content().len(), 4000);
    assert_eq!(wait_alpha(&r1), [1, 1], "one Nack-α, to both workers");
    let c2 = snapshot(&r2).counters.congestion;
    assert_eq!((c2.alpha_sent, c2.idle_sent), (1, 0), "on the Data");
    p.stop();
    stop(r1);
    stop(r2);
}

/// A downstream that gets no Data from a congested upstream (its Interest was Nacked: no
/// route there) still gets the upstream's Nack-α rounds, alone on IDLE LpPackets, in every
/// worker.
#[test]
fn a_downstream_without_data_gets_the_nack_alpha_on_idle_packets() {
    let dir = Scratch::new("nbcc-idle");
    let (r1, r2) = cc_pair(&dir.0, 20);
    let mut consumer = face(&r1);
    let mut i = Interest::new(Name::from_uri("/none/x").unwrap(), [9; 4]);
    i.lifetime_ms = Some(1000);
    let outcome = consumer.express(&i).unwrap();
    assert!(matches!(outcome, Outcome::Nack(_)), "{outcome:?}");
    wait_alpha(&r1);
    let c2: u64 = r2
        .snapshots()
        .iter()
        .map(|s| s.counters.congestion.idle_sent)
        .sum();
    assert!(c2 >= 1, "sent on IDLE packets: {c2}");
    assert_eq!(snapshot(&r2).counters.out_data, 0, "no Data went to R1");
    // The dataset says so too (it may have sent more since the snapshots).
    let nb2 = client::Controller::new(&mut face(&r2))
        .cs_nbcache(Duration::from_secs(2))
        .unwrap();
    assert!(nb2.n_idle_sent >= c2, "{nb2:?} against {c2}");
    stop(r1);
    stop(r2);
}
