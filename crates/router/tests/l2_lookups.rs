//! What a router with an L2 answers from it: a chunk read back from L2 keeps the freshness it
//! had left (its FreshnessPeriod counts from its write, by the wall clock), and a CanBePrefix
//! Interest finds its Data whichever worker's L2 holds it.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use client::face::{Outcome, Received};
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::data::MetaInfo;
use wire::{Data, Interest, Name};

use common::{unix_config, wait_stored, App, Scratch};

/// A router on a unix socket in `dir` (no other listener), with `workers` workers and an L2.
fn config(dir: &Path, workers: usize) -> Config {
    let mut c = unix_config(dir, "r");
    if workers > 1 {
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

#[test]
fn a_chunk_read_back_from_l2_is_as_stale_as_its_write_time_says() {
    let dir = Scratch::new("fresh");
    let mut c = config(&dir, 1);
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

/// With write-back admission a chunk reaches L2 when the RAM CS evicts it, perhaps long after
/// it arrived: its slot records the arrival, so that a read-back is as stale as the chunk is.
#[test]
fn a_chunk_written_back_ages_from_its_arrival_not_from_its_write() {
    let dir = Scratch::new("wbfresh");
    let mut c = config(&dir, 1);
    c.cs.capacity = 2;
    c.store.batch = 1;
    c.store.prefetch_ahead = false;
    c.store.admission = router::config::L2Admission::WriteBack;
    let r = Router::start(&c).unwrap();
    let answered = Arc::new(AtomicUsize::new(0));
    producer(&r, "/f", 1000, answered.clone());
    producer(&r, "/g", 3_600_000, answered.clone());
    let mut f = face(&r);
    // Two chunks in the RAM CS, one fresh for 1 s, one for an hour...
    fetch(&mut f, &interest("/f/seg=0", 1, false, false));
    fetch(&mut f, &interest("/g/seg=0", 2, false, false));
    std::thread::sleep(Duration::from_millis(1200));
    // ...evicted into L2 more than a second after they arrived.
    fetch(&mut f, &interest("/f/seg=1", 3, false, false));
    fetch(&mut f, &interest("/f/seg=2", 4, false, false));
    wait_stored(&r, 2);
    assert_eq!(answered.load(Ordering::SeqCst), 4);
    // The hour-fresh chunk comes back from L2 to a MustBeFresh Interest...
    assert_eq!(
        fetch(&mut f, &interest("/g/seg=0", 5, false, true)),
        Name::from_uri("/g/seg=0").unwrap()
    );
    assert_eq!(answered.load(Ordering::SeqCst), 4, "served from L2");
    // ...the other is stale, counted from its arrival: MustBeFresh goes upstream.
    fetch(&mut f, &interest("/f/seg=0", 6, false, true));
    assert_eq!(answered.load(Ordering::SeqCst), 5, "went upstream");
    let stale: u64 = r.snapshots().iter().map(|s| s.l2.unwrap().tier.stale).sum();
    assert_eq!(stale, 1);
    r.stop_handle().stop();
    r.join();
}

/// The worker whose PIT token an Interest from the router carries (workers put
/// `[0xCA, 0x5C, worker]` on the Interests they send upstream).
fn token_worker(t: Option<&face::PitToken>) -> usize {
    match t.map(|t| t.as_bytes()) {
        Some([0xCA, 0x5C, w]) => usize::from(*w),
        other => panic!("not a worker's token: {other:?}"),
    }
}

/// Serves every Interest under `prefix` with a Data of its name (fresh for an hour for segment
/// 0 under a `v=2` component, for 1 ms otherwise) and reports, per Interest name, the
/// worker that sent it.
fn tell_tale_producer(r: &Router, prefix: &str) -> std::sync::mpsc::Receiver<(Name, usize)> {
    let mut f = face(r);
    f.register(&Name::from_uri(prefix).unwrap()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        while let Ok(Some(rx)) = f.recv(Duration::from_secs(30)) {
            if let Received::Interest(ip) = rx {
                let name = ip.interest.name.clone();
                let seg0 = name.components.last().and_then(|c| c.as_number()) == Some(0);
                let stale = !(seg0 && name.to_string().contains("/v=2/"));
                let mut d = Data::new(name.clone(), vec![7; 100]);
                d.meta_info = Some(MetaInfo {
                    freshness_ms: Some(if stale { 1 } else { 3_600_000 }),
                    ..MetaInfo::default()
                });
                d.sign_digest_sha256();
                if tx
                    .send((name, token_worker(ip.pit_token.as_ref())))
                    .is_err()
                {
                    break;
                }
                if f.put_data(&d.to_wire(), ip.pit_token).is_err() {
                    break;
                }
            }
        }
    });
    rx
}

/// Fetches `uri` (exact) through `f` and returns the worker that forwarded it upstream.
fn fetch_via(f: &mut Face, rx: &std::sync::mpsc::Receiver<(Name, usize)>, uri: &str) -> usize {
    let nonce = rand_nonce(uri);
    assert_eq!(
        fetch(f, &interest(uri, nonce, false, false)),
        Name::from_uri(uri).unwrap()
    );
    let (name, w) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(name, Name::from_uri(uri).unwrap());
    w
}

fn rand_nonce(uri: &str) -> u32 {
    uri.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// With three workers and `mapping = "content"`, the only fresh chunk under `/p` sits in a
/// worker's L2 that is not the first one a CanBePrefix Interest for `/p` asks (that one holds
/// stale chunks under `/p` only, so its prefix filter says yes and its L2 misses for
/// MustBeFresh): after a clean restart with the producer gone, the first worker hands the
/// Interest on, worker after worker, until the holder answers it.
#[test]
fn a_can_be_prefix_miss_is_handed_on_to_the_worker_whose_l2_holds_the_name() {
    let dir = Scratch::new("handon");
    let mut c = config(&dir, 3);
    c.workers.mapping = router::config::Mapping::Content;
    c.store.batch = 1;
    let r = Router::start(&c).unwrap();
    let rx = tell_tale_producer(&r, "/p");
    let mut f = face(&r);
    // The first candidate for /p is its owner (its filter will hold /p): the worker that
    // forwards an exact Interest for /p.
    let first = fetch_via(&mut f, &rx, "/p");
    // Stale versions until one is stored by the first candidate (bounded: the versions'
    // owners spread over the three workers).
    let mut stored = 0;
    let mut stale_there = false;
    for k in 0..64 {
        let w = fetch_via(&mut f, &rx, &format!("/p/v=1/{k}/seg=0"));
        stored += 1;
        if w == first {
            stale_there = true;
            break;
        }
    }
    assert!(stale_there, "no stale version landed on worker {first}");
    // One fresh version, on another worker: a stale segment 1 of each version tells its owner
    // (by content name), and only there segment 0 is fetched, fresh.
    let mut holder = None;
    for k in 0..64 {
        let w = fetch_via(&mut f, &rx, &format!("/p/v=2/{k}/seg=1"));
        stored += 1;
        if w != first {
            let uri = format!("/p/v=2/{k}/seg=0");
            assert_eq!(fetch_via(&mut f, &rx, &uri), w);
            stored += 1;
            holder = Some((uri, w));
            break;
        }
    }
    let (fresh, holder) = holder.expect("a fresh version on another worker");
    wait_stored(&r, stored);
    drop(f);
    r.stop_handle().stop();
    r.join();
    drop(rx); // the producer's face went with the router
              // Restarted, the producer gone, the RAM CS empty: discovery by prefix from L2.
    let r = Router::start(&c).unwrap();
    let mut f = face(&r);
    std::thread::sleep(Duration::from_millis(5)); // the stale versions are past 1 ms
    let got = fetch(&mut f, &interest("/p", 99, true, true));
    assert_eq!(got, Name::from_uri(&fresh).unwrap());
    // Nothing under /q anywhere: its prefix lookup misses (counted in cs/tiers), and with no
    // route it is Nacked.
    let q = f.express(&interest("/q", 98, true, false)).unwrap();
    assert!(matches!(q, Outcome::Nack(_)), "{q:?}");
    let snaps = r.snapshots();
    let l2 = |w: usize| snaps[w].l2.unwrap();
    assert!(
        l2(first).prefix_handovers >= 1,
        "worker {first} handed it on"
    );
    assert_eq!(l2(holder).prefix_handovers, 0, "the holder answered");
    let handed: u64 = (0..3).map(|w| l2(w).prefix_handovers).sum();
    assert!(handed <= 2, "each worker at most once: {handed}");
    assert_eq!(l2(holder).tier.served, 1);
    // Each Interest is counted once as incoming, whichever workers it visited; the workers
    // that took it from another count it as handed on.
    let ins: u64 = snaps.iter().map(|s| s.counters.in_interests).sum();
    assert_eq!(ins, 2);
    let handed_in: u64 = snaps.iter().map(|s| s.counters.handed_on_in).sum();
    assert_eq!(handed_in, handed);
    // The prefix index's misses, in the cs/tiers dataset.
    let missed: u64 = (0..3).map(|w| l2(w).tier.prefix_missed).sum();
    assert!(missed >= 1, "/q missed");
    let tiers = client::Controller::new(&mut f)
        .cs_tiers(Duration::from_secs(5))
        .unwrap();
    assert_eq!(tiers[0].n_prefix_missed, missed);
    r.stop_handle().stop();
    r.join();
}

/// A CanBePrefix Interest handed on from worker to worker keeps its CongestionMark: with
/// three workers (`mapping = "content"`) whose L2s hold only stale chunks under `/m`, after a
/// restart a MustBeFresh Interest for `/m` misses in each L2 that may hold `/m`, is handed on,
/// and the last worker sends it upstream with the mark the consumer put on it.
#[test]
fn a_handed_on_interest_goes_upstream_with_its_congestion_mark() {
    let dir = Scratch::new("handon-mark");
    let mut c = config(&dir, 3);
    c.workers.mapping = router::config::Mapping::Content;
    c.store.batch = 1;
    let r = Router::start(&c).unwrap();
    let rx = tell_tale_producer(&r, "/m");
    let mut f = face(&r);
    // The first candidate for /m: the worker that forwards an exact Interest for /m.
    let first = fetch_via(&mut f, &rx, "/m");
    // Stale chunks until the first candidate and another worker hold one each.
    let mut holders = [false; 3];
    let mut stored = 0;
    for k in 0..64 {
        holders[fetch_via(&mut f, &rx, &format!("/m/v=1/{k}/seg=0"))] = true;
        stored += 1;
        if holders[first] && holders.iter().filter(|h| **h).count() >= 2 {
            break;
        }
    }
    assert!(holders[first], "no stale chunk landed on worker {first}");
    wait_stored(&r, stored);
    drop(f);
    r.stop_handle().stop();
    r.join();
    drop(rx);

    let r = Router::start(&c).unwrap();
    let mut producer = App::new(&r, "/m", false);
    let mut consumer = App::new(&r, "/app", false);
    std::thread::sleep(Duration::from_millis(5)); // the chunks are past their 1 ms
    consumer.send(interest("/m", 7, true, true).to_wire(), |lp| {
        lp.congestion_mark = Some(3)
    });
    let got = producer.interest("/m");
    let handed: u64 = r
        .snapshots()
        .iter()
        .map(|s| s.l2.unwrap().prefix_handovers)
        .sum();
    assert!(handed >= 1, "the Interest was handed on");
    assert_eq!(
        got.lp.congestion_mark,
        Some(3),
        "its mark, after {handed} hand-ons"
    );
    let name = Name::from_uri("/m/v=3/seg=0").unwrap();
    producer.answer_as(&got, Some(name), 1000, 0);
    consumer.data("/m/v=3/seg=0");
    r.stop_handle().stop();
    r.join();
}
