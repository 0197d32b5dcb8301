//! The Unix listener's start-up cases: a free path, a stale socket (replaced), a live one
//! (refused), a file that is not a socket (refused, left alone).

use std::io::ErrorKind;
use std::os::unix::fs::FileTypeExt as _;
use std::path::PathBuf;

use face::table::{bind_unix, UNIX_IN_USE, UNIX_NOT_A_SOCKET};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("face-unix-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("nfd.sock")
}

#[test]
fn a_stale_socket_is_replaced() {
    let path = tmp("stale");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // A socket file nobody listens on any more: connect is refused.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(std::fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_socket());
    let _l = bind_unix(&path).expect("a stale socket is replaced");
    std::os::unix::net::UnixStream::connect(&path).expect("the new listener answers");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn a_live_socket_is_refused_and_named() {
    let path = tmp("live");
    let _first = bind_unix(&path).unwrap();
    let e = bind_unix(&path).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AddrInUse);
    assert_eq!(e.to_string(), format!("{UNIX_IN_USE} {}", path.display()));
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn a_file_that_is_not_a_socket_is_refused_and_kept() {
    let path = tmp("file");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"precious").unwrap();
    let e = bind_unix(&path).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert!(e.to_string().contains(UNIX_NOT_A_SOCKET), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
