//! What a router with an L2 answers from it: a chunk read back from L2 keeps the freshness it
//! had left (its FreshnessPeriod counts from its write, by the wall clock), and a CanBePrefix
//! Interest finds its Data whichever worker's L2 holds it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use client::face::{Outcome, Received};
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::data::MetaInfo;
use wire::{Data, Interest, Name};

/// A router on a unix socket in `dir` (no other listener), with `workers` workers and an L2.
fn config(dir: &Path, workers: usize) -> Config {
    let mut c = Config::default();
    c.listen.unix = dir.join("r.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.websocket = String::new();
    c.listen.udp = String::new();
    c.listen.tcp6 = String::new();
    c.listen.udp6 = String::new();
    c.http.listen = String::new();
    if workers == 1 {
        c.workers.threads = router::config::Threads::One;
    } else {
        c.workers.threads = router::config::Threads::IoWorkers;
        c.workers.count = workers;
    }
    c.store.l2_path = dir.join("l2").display().to_string();
    c.store.l2_capacity = 4000;
    c
}

fn face(r: &Router) -> Face {
    Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap()
}

/// A test's scratch directory, removed with its contents when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("cascade-l2l-{tag}-{}", std::process::id()));
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

fn interest(uri: &str, nonce: u32, can_be_prefix: bool, must_be_fresh: bool) -> Interest {
    let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes());
    i.lifetime_ms = Some(2000);
    i.can_be_prefix = can_be_prefix;
    i.must_be_fresh = must_be_fresh;
    i
}

/// Serves every Interest under `prefix` with a Data of its name, fresh for `freshness_ms`,
/// counting them in `answered`, until the router goes away.
fn producer(r: &Router, prefix: &str, freshness_ms: u64, answered: Arc<AtomicUsize>) {
    let mut f = face(r);
    f.register(&Name::from_uri(prefix).unwrap()).unwrap();
    std::thread::spawn(move || {
        while let Ok(Some(rx)) = f.recv(Duration::from_secs(30)) {
            if let Received::Interest(ip) = rx {
                let mut d = Data::new(ip.interest.name.clone(), vec![7; 100]);
                d.meta_info = Some(MetaInfo {
                    freshness_ms: Some(freshness_ms),
                    ..MetaInfo::default()
                });
                d.sign_digest_sha256();
                // Counted before it is sent: the consumer reads the count once it has the Data.
                answered.fetch_add(1, Ordering::SeqCst);
                if f.put_data(&d.to_wire(), ip.pit_token).is_err() {
                    break;
                }
            }
        }
    });
}

/// The Data `i` brings back through `f`, by name.
fn fetch(f: &mut Face, i: &Interest) -> Name {
    match f.express(i).unwrap() {
        Outcome::Data(d) => d.name.clone(),
        other => panic!("{}: {other:?}", i.name),
    }
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
fn a_chunk_read_back_from_l2_is_as_stale_as_its_write_time_says() {
    let dir = Scratch::new("fresh");
    let mut c = config(&dir.0, 1);
    c.cs.capacity = 2; // the RAM CS keeps the last two chunks only
    c.store.batch = 1; // an L2 read brings back the chunk asked for only
    c.store.prefetch_ahead = false;
    let r = Router::start(&c).unwrap();
    let answered = Arc::new(AtomicUsize::new(0));
    producer(&r, "/f", 1000, answered.clone());
    let mut f = face(&r);
    // Six chunks fresh for 1 s, each stored in L2 as it arrives; the first leaves the RAM CS.
    for k in 0..6 {
        fetch(&mut f, &interest(&format!("/f/seg={k}"), k, false, false));
    }
    assert_eq!(answered.load(Ordering::SeqCst), 6);
    wait_stored(&r, 6);
    std::thread::sleep(Duration::from_millis(1200));
    // Without MustBeFresh, L2 answers: the chunk comes back into the RAM CS...
    fetch(&mut f, &interest("/f/seg=0", 10, false, false));
    let served: u64 = r
        .snapshots()
        .iter()
        .map(|s| s.l2.unwrap().tier.served)
        .sum();
    assert_eq!((answered.load(Ordering::SeqCst), served), (6, 1));
    // ...stale, as it was written more than its FreshnessPeriod ago: MustBeFresh goes upstream.
    fetch(&mut f, &interest("/f/seg=0", 11, false, true));
    assert_eq!(
        answered.load(Ordering::SeqCst),
        7,
        "MustBeFresh went upstream"
    );
    // The producer's new copy is fresh: the next MustBeFresh Interest is answered here.
    fetch(&mut f, &interest("/f/seg=0", 12, false, true));
    assert_eq!(answered.load(Ordering::SeqCst), 7);
    r.stop_handle().stop();
    r.join();
}
