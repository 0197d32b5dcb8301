//! NB-Cache's switches in a running router (Pan et al., "NB-Cache: Non-Blocking In-Network
//! Caching for High-Performance Content Routers"): the filter in front of the CS skips it for
//! names the router does not hold, knows L2's names again after a restart, and the blocking
//! I/O mode still serves from L2.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use client::face::{Outcome, Received};
use client::transport::TransportUri;
use client::Face;
use router::config::StoreIo;
use router::{Config, Router};
use wire::{Data, Interest, Name};

struct TmpDir(PathBuf);

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp_dir(tag: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!("cascade-nbc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TmpDir(d)
}

/// One worker, a RAM CS of 4, L2 in `<dir>/l2`, the CS filter on.
fn config(dir: &Path, io: StoreIo) -> Config {
    let mut c = Config::default();
    c.listen.unix = dir.join("r.sock").display().to_string();
    c.listen.tcp = String::new();
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
    let mut f = face(r);
    f.register(&Name::from_uri(prefix).unwrap()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let (s, a) = (stop.clone(), answered.clone());
    let thread = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            if let Ok(Some(Received::Interest(ip))) = f.recv(Duration::from_millis(50)) {
                let mut d = Data::new(ip.interest.name.clone(), vec![0xab; 500]);
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

fn fetch(consumer: &mut Face, uri: &str, nonce: u32) {
    let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes());
    i.lifetime_ms = Some(2000);
    match consumer.express(&i).unwrap() {
        Outcome::Data(d) => assert_eq!(d.name.to_string(), uri),
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
    let t0 = Instant::now();
    while snapshot(r).l2.unwrap().stored_chunks < 12 {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "writes never finished"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_filter_skips_absent_names_and_knows_l2_after_a_restart() {
    let dir = tmp_dir("filter");
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
    let dir = tmp_dir("blocking");
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
