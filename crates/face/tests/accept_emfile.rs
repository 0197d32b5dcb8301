//! `accept` out of file descriptors: counted, and accepting goes on once descriptors are free
//! (the waiting connections are tried again at the next sweep). In a test binary of its own:
//! it lowers this process's open-file limit.
#![cfg(target_os = "linux")]

mod support;

use std::net::TcpStream;

use face::table::Listener;
use support::Driver;

fn nofile() -> libc::rlimit {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid rlimit out-parameter.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) }, 0);
    r
}

fn set_soft(r: libc::rlimit, soft: libc::rlim_t) {
    let l = libc::rlimit {
        rlim_cur: soft,
        rlim_max: r.rlim_max,
    };
    // SAFETY: a valid rlimit, the soft limit at most the hard one.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) }, 0);
}

/// One past the highest descriptor open now.
fn fd_end() -> libc::rlim_t {
    let fds: Vec<u64> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    fds.into_iter().max().unwrap() + 1
}

#[test]
fn accept_goes_on_after_emfile() {
    let mut d = Driver::new(support::config());
    let l = mio::net::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = l.local_addr().unwrap();
    d.table.add_listener(Listener::Tcp(l, addr)).unwrap();
    let clients: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let saved = nofile();
    // No descriptor left (the holes below the limit filled): every accept fails with EMFILE.
    set_soft(saved, fd_end());
    let mut fillers = Vec::new();
    loop {
        // SAFETY: duplicating stdin's descriptor; closed below.
        let fd = unsafe { libc::dup(0) };
        if fd < 0 {
            break;
        }
        fillers.push(fd);
    }
    for _ in 0..5 {
        d.turn();
    }
    for fd in fillers {
        // SAFETY: a descriptor this test opened.
        unsafe { libc::close(fd) };
    }
    set_soft(saved, saved.rlim_cur);
    let c = d.table.stream_limit_counters();
    assert!(c.accept_fd_exhausted >= 1, "{c:?}");
    assert!(d.sink.up.is_empty());
    // No new readiness event comes for connections already waiting: the sweep tries again.
    d.sink.now += 1000;
    d.table.sweep(d.sink.now, &mut d.sink);
    d.until(|d| d.sink.up.len() == clients.len());
}
