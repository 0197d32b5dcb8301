//! UDP multicast faces: one per interface and group, as NFD's `MulticastUdpTransport`.
//!
//! A multicast face has two sockets. The receiving one is bound to the group's address and
//! port (`SO_REUSEADDR`), joins the group on the interface (`IP_ADD_MEMBERSHIP` /
//! `IPV6_JOIN_GROUP`) and is bound to the interface (`SO_BINDTODEVICE`; for IPv6, the group's
//! interface scope does it), so that two faces of
//! one group on two interfaces each hear their own link only; every datagram it receives,
//! whatever its source, is the face's. The sending one is bound to the interface's address and
//! an ephemeral port (the face's LocalUri, as NFD's), sends to the group out of that interface
//! (`IP_MULTICAST_IF` / `IPV6_MULTICAST_IF`) and does not loop its packets back to this host.
//! The face is permanent, non-local, multi-access; its link service is the unicast UDP face's
//! (NDNLPv2 fragmentation to the UDP MTU and reassembly within the shared budget).

use std::io;
use std::net::{IpAddr, SocketAddr, SocketAddrV6, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd};

use wire::nfd::FacePersistency;

use super::{CreateError, FaceDesc, FaceSink, FaceTable};
use crate::ether::setsockopt;
use crate::netif::Netif;

/// NFD's IPv4 UDP multicast group.
pub const NFD_UDP4_GROUP: &str = "224.0.23.170";
/// NFD's IPv6 UDP multicast group (link-local scope).
pub const NFD_UDP6_GROUP: &str = "ff02::1234";
/// NFD's UDP multicast port.
pub const NFD_UDP_MCAST_PORT: u16 = 56363;

impl FaceTable {
    /// Opens a multicast face of `group` (address and port) on interface `netif`, sending
    /// from its address `local` (of the group's family); see the module docs of `table::multicast`. The
    /// error says which step failed (a host without multicast, or without the privilege to
    /// bind to a device, fails here).
    pub fn add_udp_multicast(
        &mut self,
        netif: &Netif,
        local: IpAddr,
        group: SocketAddr,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, CreateError> {
        let failed = |what: &str, e: io::Error| CreateError::Failed(format!("{what}: {e}"));
        if !group.ip().is_multicast() || group.is_ipv4() != local.is_ipv4() {
            return Err(CreateError::Failed(format!(
                "{group} is not a multicast group of {local}'s family"
            )));
        }
        let group = scoped(group, netif.index);
        let rx = rx_socket(netif, local, group).map_err(|e| failed("receiving socket", e))?;
        let tx = tx_socket(netif, local).map_err(|e| failed("sending socket", e))?;
        let tx = self
            .add_udp_socket(tx, false)
            .map_err(|e| failed("sending socket", e))?;
        let rx = self
            .add_udp_socket(rx, false)
            .map_err(|e| failed("receiving socket", e))?;
        let params = self.own_params(FacePersistency::Permanent);
        let id = self
            .add_udp_face(tx, group, &params, false, sink)
            .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
        self.udp[rx].multicast = Some(id);
        let f = self.faces.get_mut(&id).expect("the face just added");
        if group.is_ipv6() {
            // NFD names the scope by the interface's name.
            let (number, name) = (format!("%{}]", netif.index), format!("%{}]", netif.name));
            f.uri = f.uri.replace(&number, &name);
            f.local_uri = f.local_uri.replace(&number, &name);
        }
        Ok(f.desc())
    }
}

/// An IPv6 link-local group with the interface's scope (as NFD's remote endpoint).
fn scoped(group: SocketAddr, index: u32) -> SocketAddr {
    match group {
        SocketAddr::V6(g) => SocketAddr::V6(SocketAddrV6::new(*g.ip(), g.port(), 0, index)),
        v4 => v4,
    }
}

/// A UDP socket of `addr`'s family, with `SO_REUSEADDR` (and `IPV6_V6ONLY`) set, bound to
/// `addr` (an IPv6 link-local address still tentative, for a second or two after its
/// interface comes up, cannot be bound: the face is not opened).
fn bound_reusable(addr: SocketAddr) -> io::Result<UdpSocket> {
    let family = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: a plain socket call; the fd is owned by the UdpSocket below at once.
    let fd = unsafe { libc::socket(family, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh socket nobody else owns.
    let sock = unsafe { UdpSocket::from_raw_fd(fd) };
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32)?;
    let r = match addr {
        SocketAddr::V4(a) => {
            let sa = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(*a.ip()).to_be(),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: `sa` is a sockaddr_in of the size given.
            unsafe {
                libc::bind(
                    fd,
                    (&sa as *const libc::sockaddr_in).cast(),
                    std::mem::size_of_val(&sa) as libc::socklen_t,
                )
            }
        }
        SocketAddr::V6(a) => {
            setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, &1i32)?;
            let sa = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: `sa` is a sockaddr_in6 of the size given.
            unsafe {
                libc::bind(
                    fd,
                    (&sa as *const libc::sockaddr_in6).cast(),
                    std::mem::size_of_val(&sa) as libc::socklen_t,
                )
            }
        }
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(sock)
}

/// The receiving socket: bound to the group, a member of it on the interface, bound to the
/// interface.
fn rx_socket(netif: &Netif, local: IpAddr, group: SocketAddr) -> io::Result<UdpSocket> {
    let s = bound_reusable(group)?;
    match (group.ip(), local) {
        (IpAddr::V4(g), IpAddr::V4(l)) => {
            s.join_multicast_v4(&g, &l)?;
            bind_to_device(&s, &netif.name)?;
        }
        // Bound to the group with the interface's scope: bound to the interface already.
        (IpAddr::V6(g), _) => s.join_multicast_v6(&g, netif.index)?,
        _ => return Err(io::Error::from(io::ErrorKind::InvalidInput)),
    }
    Ok(s)
}

/// The sending socket: bound to the interface's address (an ephemeral port), out of the
/// interface, no loopback of its own packets.
fn tx_socket(netif: &Netif, local: IpAddr) -> io::Result<UdpSocket> {
    let addr = match local {
        IpAddr::V6(a) => SocketAddr::V6(SocketAddrV6::new(a, 0, 0, netif.index)),
        v4 => SocketAddr::new(v4, 0),
    };
    let s = bound_reusable(addr)?;
    let fd = s.as_raw_fd();
    match local {
        IpAddr::V4(a) => {
            s.set_multicast_loop_v4(false)?;
            let mreq = libc::ip_mreqn {
                imr_multiaddr: libc::in_addr { s_addr: 0 },
                imr_address: libc::in_addr {
                    s_addr: u32::from(a).to_be(),
                },
                imr_ifindex: netif.index as i32,
            };
            setsockopt(fd, libc::IPPROTO_IP, libc::IP_MULTICAST_IF, &mreq)?;
        }
        IpAddr::V6(_) => {
            s.set_multicast_loop_v6(false)?;
            let index = netif.index as i32;
            setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_MULTICAST_IF, &index)?;
        }
    }
    Ok(s)
}

/// `SO_BINDTODEVICE` (needs `CAP_NET_RAW`).
fn bind_to_device(s: &UdpSocket, ifname: &str) -> io::Result<()> {
    let name = ifname.as_bytes();
    // SAFETY: `name` is live for the call, of the length given.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_BINDTODEVICE,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl FaceDesc {
    /// A multi-access face (NFD's LinkType): its remote is a group, a multicast UDP address
    /// (`udp4://224.0.23.170:56363`) or a group Ethernet address (`ether://[01:00:5e:00:17:aa]`).
    pub fn multi_access(&self) -> bool {
        let Some((scheme, rest)) = self.uri.split_once("://") else {
            return false;
        };
        let host = match rest.strip_prefix('[') {
            Some(r) => r.split(']').next().unwrap_or(""),
            None => rest.rsplit_once(':').map_or(rest, |(h, _)| h),
        };
        let host = host.split('%').next().unwrap_or(host);
        match scheme {
            "udp4" | "udp6" => host.parse::<IpAddr>().is_ok_and(|ip| ip.is_multicast()),
            "ether" => crate::netif::MacAddr::parse(host).is_some_and(|m| m.is_group()),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(uri: &str) -> FaceDesc {
        FaceDesc {
            id: 300,
            uri: uri.into(),
            local_uri: String::new(),
            local: false,
            persistency: FacePersistency::Permanent,
            mtu: None,
            options: Default::default(),
            counters: Default::default(),
        }
    }

    #[test]
    fn multicast_and_group_remotes_are_multi_access() {
        for uri in [
            "udp4://224.0.23.170:56363",
            "udp6://[ff02::1234%eth0]:56363",
            "ether://[01:00:5e:00:17:aa]",
        ] {
            assert!(desc(uri).multi_access(), "{uri}");
        }
        for uri in [
            "udp4://192.0.2.1:6363",
            "udp6://[2001:db8::1]:6363",
            "ether://[02:00:00:00:00:01]",
            "tcp4://127.0.0.1:6363",
            "fd://300",
            "unix:///run/nfd.sock",
        ] {
            assert!(!desc(uri).multi_access(), "{uri}");
        }
    }

    #[test]
    fn ipv6_groups_take_the_interface_scope() {
        let g: SocketAddr = "[ff02::1234]:56363".parse().unwrap();
        let want: SocketAddr = "[ff02::1234%3]:56363".parse().unwrap();
        assert_eq!(scoped(g, 3), want);
        let g4: SocketAddr = "224.0.23.170:56363".parse().unwrap();
        assert_eq!(scoped(g4, 3), g4);
    }
}
