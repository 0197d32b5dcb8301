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

#[test]
fn the_socket_takes_its_path_only_once_it_has_its_access() {
    use std::os::unix::fs::PermissionsExt as _;
    let path = tmp("access");
    let seen = std::cell::Cell::new(None);
    let _l = face::table::bind_unix_with(&path, |p| {
        assert!(!path.exists(), "not at its path before its access is set");
        seen.set(Some(p.to_path_buf()));
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600))
    })
    .unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(!seen.take().unwrap().exists(), "the temporary name is gone");
    std::os::unix::net::UnixStream::connect(&path).expect("it answers at its path");
    // An access that fails leaves nothing behind.
    let other = path.with_file_name("other.sock");
    let e = face::table::bind_unix_with(&other, |_| Err(std::io::Error::other("no")));
    assert!(e.is_err());
    let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the first socket: {left:?}");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
