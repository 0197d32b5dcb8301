//! Binding the IPv6 UDP listener (`[listen] udp6`): a group of sockets steered as the IPv4
//! group is, so that a remote's face sits on the loop that receives its datagrams whatever its
//! family.

use std::net::UdpSocket;

use face::table::{bind_udp6_group, UdpSteering};

use crate::config::{listen6, Config};

/// The IPv6 UDP listener as `n` sockets (fewer when `steering`, the IPv4 group's, has fewer),
/// one a loop, on the IPv4 group's port (`v4`) when `"auto"`. Without an IPv4 group (`v4`
/// `None`), `steering` becomes the IPv6 group's. A
/// listener that cannot bind is an error naming the key when set explicitly, else a warning
/// (the default `"auto"` on a host without IPv6).
pub(super) fn bind_udp6(
    cfg: &Config,
    n: usize,
    steering: &mut UdpSteering,
    v4: Option<u16>,
) -> Result<Vec<UdpSocket>, String> {
    let Some(addr) = cfg.listen.udp6_addr()? else {
        return Ok(Vec::new());
    };
    let auto = cfg.listen.udp6 == listen6::AUTO;
    let addr = if auto {
        listen6::port_of(addr, v4)
    } else {
        addr
    };
    let v4 = v4.is_some();
    let want = if v4 { steering.sockets() } else { n };
    let bound = bind_udp6_group(addr, want).and_then(|(group, s6)| {
        if s6.sockets() == want || !v4 {
            return Ok((group, s6));
        }
        // The kernel steered the IPv4 group but not this one: one socket, on the first loop.
        let local = group[0].local_addr()?;
        drop(group);
        tracing::warn!("UDP {addr}: IPv6 datagrams are all received by the first loop");
        bind_udp6_group(local, 1)
    });
    match bound {
        Ok((group, s6)) => {
            if !v4 {
                *steering = s6;
            }
            Ok(group)
        }
        Err(e) if !auto => Err(format!("listen.udp6: cannot bind UDP {addr}: {e}")),
        Err(e) => {
            tracing::warn!("no IPv6 UDP listener on {addr}: {e}");
            Ok(Vec::new())
        }
    }
}
