//! The L2 store's directory and its faults at the router's level: one router per directory,
//! crash leftovers that must not stop a start, and storage faults that turn L2 off while
//! forwarding goes on from RAM.

use std::path::{Path, PathBuf};

use router::{Config, Router};

/// A test's scratch directory, removed when the test ends.
struct TmpDir(PathBuf);

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp_dir(tag: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!("cascade-l2f-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TmpDir(d)
}

/// A router with a unix socket `<dir>/<name>.sock`, no TCP or UDP, two workers, and its L2 in
/// `l2`.
fn config(dir: &Path, name: &str, l2: &Path) -> Config {
    let mut c = Config::default();
    c.listen.unix = dir.join(format!("{name}.sock")).display().to_string();
    c.listen.tcp = String::new();
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
    let dir = tmp_dir("lock");
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
    let dir = tmp_dir("crash");
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
