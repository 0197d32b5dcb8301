//! The L2 store's directory and its faults at the router's level: one router per directory,
//! crash leftovers that must not stop a start, and storage faults that turn L2 off while
//! forwarding goes on from RAM.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use client::face::{Outcome, Received};
use client::transport::TransportUri;
use client::Face;
use common::Scratch;
use router::{Config, Router};
use wire::{Data, Interest, Name};

/// A router with a unix socket `<dir>/<name>.sock`, no TCP or UDP, two workers, and its L2 in
/// `l2`.
fn config(dir: &Path, name: &str, l2: &Path) -> Config {
    let mut c = Config::default();
    c.listen.unix = dir.join(format!("{name}.sock")).display().to_string();
    c.listen.tcp = String::new();
    c.listen.websocket = String::new();
    c.listen.udp = String::new();
    c.workers.count = 2;
    c.store.l2_path = l2.display().to_string();
    c.store.l2_capacity = 1000;
    c
}

fn stop(r: Router) {
    r.stop_handle().stop();
    r.join();
}

#[test]
fn a_second_router_on_the_same_store_is_refused_in_one_line_naming_the_holder() {
    let dir = Scratch::new("lock");
    let l2 = dir.0.join("l2");
    let a = Router::start(&config(&dir.0, "a", &l2)).unwrap();
    let e = Router::start(&config(&dir.0, "b", &l2))
        .err()
        .expect("the directory is taken");
    assert!(
        e.contains(&l2.display().to_string())
            && e.contains("in use by another router")
            && e.contains(&format!("pid {}", std::process::id()))
            && !e.contains('\n'),
        "{e}"
    );
    assert_eq!(router::start_exit_code(&e), 2, "a usage problem");
    assert_eq!(router::start_exit_code("anything else"), 1);
    // The first router is untouched, and its stop releases the directory.
    assert_eq!(a.snapshots().len(), 2);
    stop(a);
    stop(Router::start(&config(&dir.0, "b", &l2)).unwrap());
}

#[test]
fn what_a_crash_while_creating_the_store_leaves_starts() {
    let dir = Scratch::new("crash");
    let l2 = dir.0.join("l2");
    let cfg = config(&dir.0, "r", &l2);
    stop(Router::start(&cfg).unwrap());
    let key = std::fs::read(l2.join("hash.key")).unwrap();
    assert_eq!(key.len(), 22);
    let key_states: [(&str, &[u8]); 3] = [
        ("empty key file", b""),
        ("partial key file", &key[..9]),
        ("key file cut after the worker count", &key[..20]),
    ];
    for (state, bytes) in key_states {
        // A crash before any L2 file was created: only the key file (and the lock) exist.
        std::fs::remove_dir_all(&l2).unwrap();
        std::fs::create_dir_all(&l2).unwrap();
        std::fs::write(l2.join("hash.key"), bytes).unwrap();
        let r = Router::start(&cfg).unwrap_or_else(|e| panic!("{state}: {e}"));
        assert!(r.snapshots().iter().all(|s| s.l2.is_some()), "{state}");
        stop(r);
        let new = std::fs::read(l2.join("hash.key")).unwrap();
        assert_eq!(new.len(), 22, "{state}: a whole key written");
        stop(Router::start(&cfg).unwrap());
        assert_eq!(
            std::fs::read(l2.join("hash.key")).unwrap(),
            new,
            "{state}: kept"
        );
    }
    // A temporary key file a crash left behind is not read; the L2 files a crash left empty
    // or with a superblock but no extents are created again or extended.
    std::fs::write(l2.join("hash.key.tmp"), &key[..5]).unwrap();
    std::fs::remove_file(l2.join("hash.key")).unwrap();
    std::fs::write(l2.join("l2-w0.dat"), b"").unwrap();
    let w1 = std::fs::OpenOptions::new()
        .write(true)
        .open(l2.join("l2-w1.dat"))
        .unwrap();
    w1.set_len(4096).unwrap();
    drop(w1);
    let r = Router::start(&cfg).unwrap();
    assert!(r.snapshots().iter().all(|s| s.l2.is_some()));
    stop(r);
    assert_eq!(std::fs::read(l2.join("hash.key")).unwrap().len(), 22);
}

fn face(r: &Router) -> Face {
    Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap()
}

/// Answers every Interest under `prefix` with 1,000 bytes until `stop` is set (a CanBePrefix
/// one with segment 0 of a content one component longer); returns how many it answered.
fn producer(r: &Router, prefix: &str, stop: Arc<AtomicBool>) -> JoinHandle<u64> {
    let mut f = face(r);
    f.register(&Name::from_uri(prefix).unwrap()).unwrap();
    std::thread::spawn(move || {
        let mut answered = 0;
        while !stop.load(Ordering::Relaxed) {
            if let Ok(Some(Received::Interest(ip))) = f.recv(Duration::from_millis(50)) {
                let mut name = ip.interest.name.clone();
                if ip.interest.can_be_prefix {
                    name.push(wire::Component::generic(b"x".to_vec()));
                    name.push(wire::Component::segment(0));
                }
                let mut d = Data::new(name, vec![0xcd; 1000]);
                d.sign_digest_sha256();
                f.put_data(&d.to_wire(), ip.pit_token).unwrap();
                answered += 1;
            }
        }
        answered
    })
}

/// Expresses an Interest for `uri` and checks that Data named so came back.
fn fetch(consumer: &mut Face, uri: &str, nonce: u32) {
    let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes());
    i.lifetime_ms = Some(2000);
    match consumer.express(&i).unwrap() {
        Outcome::Data(d) => assert_eq!(d.name.to_string(), uri),
        other => panic!("{uri}: {other:?}"),
    }
}

/// Each worker's L2 snapshot (every worker of these routers is configured with L2).
fn l2_states(r: &Router) -> Vec<router::worker::L2Snapshot> {
    r.snapshots()
        .iter()
        .map(|s| s.l2.expect("L2 configured"))
        .collect()
}

/// Starts `cfg`, checks which workers have their L2 off, forwards a few Interests and fetches
/// by prefix (a Data whose longer name another worker owns is handed over to it for its L2):
/// every chunk handed over is received, also by a worker whose L2 is off, which counts it as
/// dropped. The stop does not wait for a worker without L2 until its deadline.
fn starts_with_l2_off(cfg: &Config, off: [bool; 2]) {
    let r = Router::start(cfg).unwrap_or_else(|e| panic!("{off:?}: {e}"));
    let states = l2_states(&r);
    assert_eq!(states.iter().map(|s| s.off).collect::<Vec<_>>(), off);
    for s in states.iter().filter(|s| s.off) {
        assert_eq!((s.capacity_chunks, s.stored_chunks), (0, 0));
    }
    let stop_producer = Arc::new(AtomicBool::new(false));
    let p = producer(&r, "/ram", stop_producer.clone());
    let mut consumer = face(&r);
    for k in 0..8u32 {
        fetch(&mut consumer, &format!("/ram/c{k}/seg=0"), k);
    }
    // 64 names: each one's Data is handed from worker 1 to worker 0 with probability 1/4.
    for k in 0..64u32 {
        let mut i = Interest::new(
            Name::from_uri(&format!("/ram/p{k}")).unwrap(),
            [9, 9, 0, k as u8],
        );
        i.can_be_prefix = true;
        i.lifetime_ms = Some(2000);
        assert!(
            matches!(consumer.express(&i).unwrap(), Outcome::Data(_)),
            "/ram/p{k}"
        );
    }
    let t0 = Instant::now();
    let states = loop {
        let states = l2_states(&r);
        let handed: u64 = states.iter().map(|s| s.admit.handed).sum();
        let received: u64 = states.iter().map(|s| s.admit.received).sum();
        if handed == received {
            break states;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{states:?}");
        std::thread::sleep(Duration::from_millis(10));
    };
    for s in &states {
        assert!(s.admit.balanced(), "{s:?}");
    }
    if off == [true, false] {
        assert!(states[1].admit.handed >= 1, "{states:?}");
        assert_eq!(states[0].admit.dropped, states[0].admit.received);
        assert_eq!(states[0].admit_dropped, states[0].admit.received);
    }
    stop_producer.store(true, Ordering::Relaxed);
    assert_eq!(p.join().unwrap(), 8 + 64);
    // A stop budget far above what a stop takes: a stop that waited for a worker without L2
    // until its deadline would show.
    let t0 = Instant::now();
    r.stop_handle().stop_within(Duration::from_secs(60));
    r.join();
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "the stop ran to its deadline"
    );
}

#[test]
fn a_store_that_cannot_be_opened_leaves_the_router_forwarding_from_ram() {
    let dir = Scratch::new("openfault");
    // A file where the directory should be.
    let file = dir.0.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    starts_with_l2_off(&config(&dir.0, "a", &file), [true, true]);
    // A directory nobody can create, root included.
    let proc = Path::new("/proc/cascade-no-such-dir/l2");
    starts_with_l2_off(&config(&dir.0, "p", proc), [true, true]);
    // A read-only directory (root writes into it anyway: then this part proves nothing).
    let ro = dir.0.join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    if std::fs::write(ro.join("probe"), b"x").is_err() {
        starts_with_l2_off(&config(&dir.0, "b", &ro), [true, true]);
    } else {
        eprintln!("running as root: the read-only directory case is skipped");
    }
    std::fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // One worker's file cannot be opened (a directory stands in its place): only that
    // worker's L2 is off.
    let l2 = dir.0.join("l2");
    std::fs::create_dir_all(l2.join("l2-w0.dat")).unwrap();
    starts_with_l2_off(&config(&dir.0, "c", &l2), [true, false]);
}

#[test]
fn a_storage_fault_at_run_time_turns_l2_off_and_forwarding_goes_on() {
    let dir = Scratch::new("runfault");
    let l2 = dir.0.join("l2");
    let mut cfg = config(&dir.0, "r", &l2);
    cfg.workers.count = 1;
    cfg.cs.capacity = 4;
    let r = Router::start(&cfg).unwrap();
    let stop_producer = Arc::new(AtomicBool::new(false));
    let p = producer(&r, "/rt", stop_producer.clone());
    let mut consumer = face(&r);
    // 20 chunks written through to L2; the RAM CS keeps the last 4.
    for k in 0..20u32 {
        fetch(&mut consumer, &format!("/rt/v=1/seg={k}"), k);
    }
    let t0 = Instant::now();
    while l2_states(&r)[0].stored_chunks < 20 {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "writes never finished"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // The file shrinks under the worker (as after a device error): the read of segment 0's
    // batch comes up short, the waiting Interest goes upstream and is answered there.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(l2.join("l2-w0.dat"))
        .unwrap();
    f.set_len(4096).unwrap();
    drop(f);
    let before = l2_states(&r)[0];
    assert!(!before.off);
    for k in 0..8u32 {
        fetch(&mut consumer, &format!("/rt/v=1/seg={k}"), 100 + k);
    }
    let after = l2_states(&r)[0];
    assert!(after.off, "{after:?}");
    assert!(after.file.read_errors >= 1, "{after:?}");
    assert_eq!(
        after.tier.served, before.tier.served,
        "nothing served from L2"
    );
    assert!(after.tier.failed >= 1, "{after:?}");
    // Later misses are not parked on L2 at all: refused at once, no new read.
    assert!(after.file.refused_off > 0, "{after:?}");
    fetch(&mut consumer, "/rt/v=1/seg=9", 200);
    let last = l2_states(&r)[0];
    assert_eq!(last.file.reads_submitted, after.file.reads_submitted);
    assert_eq!(last.tier.pending, after.tier.pending);
    stop_producer.store(true, Ordering::Relaxed);
    assert!(p.join().unwrap() >= 28);
    stop(r);
    // A clean stop writes no index for a store that was turned off.
    assert!(!l2.join("l2-w0.dat.idx").exists());
}
