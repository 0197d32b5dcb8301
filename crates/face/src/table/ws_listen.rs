//! The WebSocket listeners' sockets: an IPv6 one takes IPv6 connections only (`IPV6_V6ONLY`),
//! so that `0.0.0.0` and `[::]` on the same port are two listeners, as NFD's WebSocket
//! channels are (`enable_v4`, `enable_v6`).

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use mio::net::TcpListener;

/// Connections waiting to be accepted (as `mio`'s own listeners).
const BACKLOG: libc::c_int = 1024;

/// A non-blocking TCP listener on `addr`; on an IPv6 address, for IPv6 only.
pub fn bind_ws_listener(addr: SocketAddr) -> io::Result<TcpListener> {
    let SocketAddr::V6(v6) = addr else {
        return TcpListener::bind(addr);
    };
    let flags = libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: a new socket, owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET6, flags, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor this function just opened and nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let one: libc::c_int = 1;
    for (level, opt) in [
        (libc::IPPROTO_IPV6, libc::IPV6_V6ONLY),
        (libc::SOL_SOCKET, libc::SO_REUSEADDR),
    ] {
        // SAFETY: the option's value is a live c_int of the size given.
        let r = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                level,
                opt,
                (&one as *const libc::c_int).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    let sa = crate::udp::sockaddr_v6(&v6);
    // SAFETY: `sa` is a live sockaddr_in6 of the size given.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_in6).cast(),
            size_of::<libc::sockaddr_in6>() as libc::socklen_t,
        )
    };
    // SAFETY: a socket this function owns.
    if r < 0 || unsafe { libc::listen(fd.as_raw_fd(), BACKLOG) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpListener::from_std(std::net::TcpListener::from(fd)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_and_ipv6_wildcards_listen_apart_on_one_port() {
        let Ok(v6) = bind_ws_listener("[::]:0".parse().unwrap()) else {
            return; // no IPv6 on this host
        };
        let port = v6.local_addr().unwrap().port();
        // Without IPV6_V6ONLY, [::] would hold the port for IPv4 too.
        let v4 = bind_ws_listener(SocketAddr::from(([0, 0, 0, 0], port)));
        assert!(v4.is_ok(), "{v4:?}");
        let again = bind_ws_listener(SocketAddr::from(([0u16; 8], port)));
        assert!(again.is_err(), "one listener per address");
    }
}
