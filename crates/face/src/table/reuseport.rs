//! A group of UDP sockets on one address (`SO_REUSEPORT`), one per thread of a sharded router,
//! with the kernel steering each remote's datagrams to the socket a function of its address
//! names ([`UdpSteering::owner`]), so that the thread that owns a remote's face is the one that
//! receives from it.
//!
//! Steering is a classic BPF program attached to the group (`SO_ATTACH_REUSEPORT_CBPF`): it
//! reads the source address and port from the IP and UDP headers, mixes them and answers the
//! index of the socket. [`UdpSteering::owner`] computes the same function in user space. Without
//! a program the kernel would spread remotes by a hash of the 4-tuple with a secret of its own,
//! which nobody outside the kernel can compute, so a face created by management could sit on
//! one thread while its remote's datagrams reach another.

use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Most sockets in one group (and threads of a sharded router).
pub const MAX_GROUP: usize = 255;

/// `SO_ATTACH_REUSEPORT_CBPF` (asm-generic; not in the `libc` crate for Linux).
const SO_ATTACH_REUSEPORT_CBPF: libc::c_int = 51;

/// The multiplier of the mix (2^32 / φ).
const MIX: u32 = 0x9E37_79B1;

/// Which socket of a group receives a remote's datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpSteering {
    sockets: usize,
}

impl UdpSteering {
    /// Everything to the first socket (a group of one, or no program attached).
    pub const SINGLE: UdpSteering = UdpSteering { sockets: 1 };

    /// Steering over `sockets` sockets (at least one).
    pub fn over(sockets: usize) -> Self {
        UdpSteering {
            sockets: sockets.clamp(1, MAX_GROUP),
        }
    }

    /// Sockets in the group.
    pub fn sockets(&self) -> usize {
        self.sockets
    }

    /// The index of the socket that receives `remote`'s datagrams: the mix of its IPv4 address
    /// (or the last 32 bits of its IPv6 address) with its port, as the group's program computes
    /// it from the headers.
    pub fn owner(&self, remote: SocketAddr) -> usize {
        if self.sockets == 1 {
            return 0;
        }
        let word = match remote.ip() {
            IpAddr::V4(a) => u32::from(a),
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => u32::from(v4),
                None => {
                    let o = a.octets();
                    u32::from_be_bytes([o[12], o[13], o[14], o[15]])
                }
            },
        };
        let mixed = (word ^ u32::from(remote.port())).wrapping_mul(MIX) >> 16;
        (mixed % self.sockets as u32) as usize
    }
}

/// One classic BPF instruction.
fn op(code: u32, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

/// The steering program for a group of `n` sockets: [`UdpSteering::owner`] on the datagram's
/// headers. It runs with the UDP payload at offset 0, so it reads the headers relative to the
/// network header (`SKF_NET_OFF`): IPv4 (the header's own length, options included) or IPv6
/// (a UDP header right after the fixed header; extension headers are not followed).
fn program(n: usize) -> Vec<libc::sock_filter> {
    use libc::{
        BPF_A, BPF_ABS, BPF_ALU, BPF_B, BPF_H, BPF_IND, BPF_JA, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD,
        BPF_LDX, BPF_MEM, BPF_MOD, BPF_MSH, BPF_MUL, BPF_RET, BPF_RSH, BPF_ST, BPF_W, BPF_X,
        BPF_XOR,
    };
    let net = libc::SKF_NET_OFF as u32;
    vec![
        // A = IP version.
        op(BPF_LD | BPF_B | BPF_ABS, 0, 0, net),
        op(BPF_ALU | BPF_RSH | BPF_K, 0, 0, 4),
        op(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 4),
        // IPv4: M[0] = source address; A = source port, after the header's own length.
        op(BPF_LD | BPF_W | BPF_ABS, 0, 0, net.wrapping_add(12)),
        op(BPF_ST, 0, 0, 0),
        op(BPF_LDX | BPF_B | BPF_MSH, 0, 0, net),
        op(BPF_LD | BPF_H | BPF_IND, 0, 0, net),
        op(BPF_JMP | BPF_JA, 0, 0, 3),
        // IPv6: M[0] = the source address's last 32 bits; A = source port.
        op(BPF_LD | BPF_W | BPF_ABS, 0, 0, net.wrapping_add(20)),
        op(BPF_ST, 0, 0, 0),
        op(BPF_LD | BPF_H | BPF_ABS, 0, 0, net.wrapping_add(40)),
        // A = ((A ^ M[0]) * MIX >> 16) % n.
        op(BPF_LDX | BPF_W | BPF_MEM, 0, 0, 0),
        op(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0),
        op(BPF_ALU | BPF_MUL | BPF_K, 0, 0, MIX),
        op(BPF_ALU | BPF_RSH | BPF_K, 0, 0, 16),
        op(BPF_ALU | BPF_MOD | BPF_K, 0, 0, n as u32),
        op(BPF_RET | BPF_A, 0, 0, 0),
    ]
}

/// A UDP socket with `SO_REUSEPORT` set, bound to `addr` (IPv6 only if `v6only`).
fn bind_reuseport(addr: SocketAddr, v6only: bool) -> io::Result<UdpSocket> {
    bind_socket(addr, libc::SOCK_DGRAM, true, v6only).map(UdpSocket::from)
}

/// Sets the `c_int` socket option `level`/`name` of `fd` to `value`.
fn set_int(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: a valid descriptor and a c_int option of the size given.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A socket of type `ty` bound to `addr`: with `SO_REUSEPORT` if `reuseport`, `SO_REUSEADDR`
/// if a stream, `IPV6_V6ONLY` if `v6only` and `addr` is IPv6.
fn bind_socket(
    addr: SocketAddr,
    ty: libc::c_int,
    reuseport: bool,
    v6only: bool,
) -> io::Result<OwnedFd> {
    let family = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: a plain system call; the descriptor is owned at once.
    let fd = unsafe { libc::socket(family, ty | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    if reuseport {
        set_int(&fd, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)?;
    }
    if ty == libc::SOCK_STREAM {
        set_int(&fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    }
    if v6only && addr.is_ipv6() {
        set_int(&fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 1)?;
    }
    let (storage, len) = sockaddr(addr);
    // SAFETY: the address is a valid sockaddr of the length given.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&storage as *const libc::sockaddr_storage).cast(),
            len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// A listening TCP socket on IPv6 address `addr`, IPv6 only (`IPV6_V6ONLY`, as NFD's channels
/// on `[::]` are), so that it shares its port with a listener on the IPv4 wildcard.
pub fn bind_tcp6_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let fd = bind_socket(addr, libc::SOCK_STREAM, false, true)?;
    // SAFETY: a valid, bound stream socket.
    if unsafe { libc::listen(fd.as_raw_fd(), 1024) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(std::net::TcpListener::from(fd))
}

/// `addr` as a `sockaddr_storage` and its length.
fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: a zeroed sockaddr_storage is valid, and large enough for either family.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(*a.ip()).to_be(),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// Attaches the steering program for `n` sockets to the group `s` belongs to.
fn attach_steering(s: &UdpSocket, n: usize) -> io::Result<()> {
    let mut prog = program(n);
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_mut_ptr(),
    };
    // SAFETY: a valid fd and a sock_fprog pointing at `prog`, which outlives the call.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ATTACH_REUSEPORT_CBPF,
            (&fprog as *const libc::sock_fprog).cast(),
            std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Binds `n` UDP sockets to `addr` (port 0: one port the kernel picks, for all of them), in
/// one `SO_REUSEPORT` group steered by [`UdpSteering::owner`], socket `i` receiving the
/// remotes it names `i`. With `n` = 1, one ordinary socket.
///
/// Before the group is made, a plain socket is bound to `addr` and closed, so that an address
/// another process holds is refused as it would be without `SO_REUSEPORT` (a process of the
/// same user could otherwise join the group). If the kernel refuses the program, the group
/// shrinks to its first socket, which then receives everything: the answer says so
/// ([`UdpSteering::SINGLE`]).
pub fn bind_udp_group(addr: SocketAddr, n: usize) -> io::Result<(Vec<UdpSocket>, UdpSteering)> {
    bind_group(addr, n, false)
}

/// [`bind_udp_group`] on IPv6 address `addr`, IPv6 only (`IPV6_V6ONLY`, as NFD's channels on
/// `[::]` are), so that it shares its port with a group on the IPv4 wildcard.
pub fn bind_udp6_group(addr: SocketAddr, n: usize) -> io::Result<(Vec<UdpSocket>, UdpSteering)> {
    bind_group(addr, n, true)
}

fn bind_group(
    addr: SocketAddr,
    n: usize,
    v6only: bool,
) -> io::Result<(Vec<UdpSocket>, UdpSteering)> {
    let n = n.clamp(1, MAX_GROUP);
    if n == 1 {
        let one = bind_socket(addr, libc::SOCK_DGRAM, false, v6only)?;
        return Ok((vec![UdpSocket::from(one)], UdpSteering::SINGLE));
    }
    if addr.port() != 0 {
        drop(bind_socket(addr, libc::SOCK_DGRAM, false, v6only)?);
    }
    let first = bind_reuseport(addr, v6only)?;
    let local = first.local_addr()?;
    let mut group = vec![first];
    for _ in 1..n {
        group.push(bind_reuseport(local, v6only)?);
    }
    match attach_steering(&group[0], n) {
        Ok(()) => Ok((group, UdpSteering::over(n))),
        Err(_) => {
            group.truncate(1);
            Ok((group, UdpSteering::SINGLE))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Every datagram reaches the socket [`UdpSteering::owner`] names, from many remotes, over
    /// IPv4 and (where the host has it) IPv6.
    #[test]
    fn the_kernel_steers_each_remote_where_owner_says() {
        let mut local = vec!["127.0.0.1:0"];
        if UdpSocket::bind("[::1]:0").is_ok() {
            local.push("[::1]:0");
        }
        for (n, at) in [2, 3]
            .into_iter()
            .flat_map(|n| local.iter().map(move |a| (n, *a)))
        {
            let (group, steering) = bind_udp_group(at.parse().unwrap(), n).unwrap();
            assert_eq!(steering.sockets(), n, "the program was attached");
            let to = group[0].local_addr().unwrap();
            assert!(group.iter().all(|s| s.local_addr().unwrap() == to));
            let mut seen = vec![0usize; n];
            for k in 0..24u8 {
                let c = UdpSocket::bind(at).unwrap();
                c.connect(to).unwrap();
                c.send(&[k]).unwrap();
                let want = steering.owner(c.local_addr().unwrap());
                let s = &group[want];
                s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut buf = [0u8; 4];
                let (len, from) = s.recv_from(&mut buf).unwrap();
                assert_eq!((len, buf[0], from), (1, k, c.local_addr().unwrap()));
                seen[want] += 1;
            }
            assert!(seen.iter().all(|&s| s > 0), "{seen:?}");
        }
    }

    /// The owner of an IPv4-mapped IPv6 remote is the IPv4 remote's (the header is IPv4).
    #[test]
    fn owners_of_mapped_addresses_are_the_ipv4_ones() {
        let s = UdpSteering::over(4);
        for port in [1u16, 6363, 40000] {
            let v4: SocketAddr = format!("10.1.2.3:{port}").parse().unwrap();
            let mapped: SocketAddr = format!("[::ffff:10.1.2.3]:{port}").parse().unwrap();
            assert_eq!(s.owner(v4), s.owner(mapped));
            assert!(s.owner(v4) < 4);
        }
        assert_eq!(UdpSteering::SINGLE.owner("10.0.0.1:1".parse().unwrap()), 0);
    }

    /// An address another socket holds is refused, as without `SO_REUSEPORT`.
    #[test]
    fn a_held_address_is_refused() {
        let held = UdpSocket::bind("127.0.0.1:0").unwrap();
        let e = bind_udp_group(held.local_addr().unwrap(), 2).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
    }

    /// The IPv6 wildcard, IPv6 only, shares its port with the IPv4 wildcard (a dual-stack
    /// socket could not), for TCP and UDP, one socket or a group.
    #[test]
    fn ipv6_only_listeners_share_the_port_of_the_ipv4_wildcard() {
        if UdpSocket::bind("[::1]:0").is_err() {
            return; // no IPv6 here
        }
        let (v4, _) = bind_udp_group("0.0.0.0:0".parse().unwrap(), 1).unwrap();
        let port = v4[0].local_addr().unwrap().port();
        let v6: SocketAddr = format!("[::]:{port}").parse().unwrap();
        assert!(
            bind_udp_group(v6, 1).is_err(),
            "dual-stack takes the IPv4 port too"
        );
        for n in [1, 2] {
            let (g, _) = bind_udp6_group(v6, n).unwrap();
            assert_eq!(g.len(), n.min(g.len()));
            assert_eq!(g[0].local_addr().unwrap(), v6);
        }
        let t4 = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
        let t6: SocketAddr = format!("[::]:{}", t4.local_addr().unwrap().port())
            .parse()
            .unwrap();
        let l = bind_tcp6_listener(t6).unwrap();
        assert_eq!(l.local_addr().unwrap(), t6);
        let c = std::net::TcpStream::connect(format!("[::1]:{}", t6.port())).unwrap();
        let (s, _) = l.accept().unwrap();
        assert_eq!(s.peer_addr().unwrap(), c.local_addr().unwrap());
        // The same address twice is refused.
        assert!(bind_tcp6_listener(t6).is_err());
    }
}
