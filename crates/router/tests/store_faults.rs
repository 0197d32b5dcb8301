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
