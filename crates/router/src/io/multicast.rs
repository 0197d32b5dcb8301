//! The multicast faces of the I/O loop (the first loop's, as the listeners): one per
//! interface and group, opened at start-up as `[face_system]` asks. An interface that cannot
//! take one (no multicast, no address of the family, no privilege) is a warning and skipped.

use face::netif::{interfaces, Netif, NetifPredicate};
use face::CreateError;

use super::Io;
use crate::config::FaceSystem;

impl Io {
    /// Opens the multicast faces `fs` turns on; how many were opened.
    pub fn open_multicast(&mut self, fs: &FaceSystem) -> usize {
        if !fs.udp.mcast && !fs.ether.mcast && !fs.ether.listen {
            return 0;
        }
        let netifs = match interfaces() {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!("multicast faces: cannot list the interfaces: {e}");
                return 0;
            }
        };
        let mut opened = 0;
        if fs.ether.listen {
            self.open_ether_channels(&netifs);
        }
        if fs.ether.mcast {
            opened += self.open_ether(fs, &netifs);
        }
        if !fs.udp.mcast {
            return opened;
        }
        let predicate = fs.udp.predicate();
        for n in netifs.iter().filter(|n| eligible(n, &predicate, "UDP")) {
            for group in fs.udp.groups() {
                let Some(local) = n.pick_addr(group.is_ipv4()) else {
                    tracing::debug!(
                        "no UDP multicast face on {}: no address for {group}",
                        n.name
                    );
                    continue;
                };
                match self.faces.add_udp_multicast(n, local, group, &mut self.rx) {
                    Ok(d) => {
                        tracing::info!(
                            "UDP multicast face {} on {}: {} from {}",
                            d.id,
                            n.name,
                            d.uri,
                            d.local_uri
                        );
                        opened += 1;
                    }
                    Err(e) => tracing::warn!(
                        "cannot open a UDP multicast face of {group} on {} ({local}): {}",
                        n.name,
                        reason(&e)
                    ),
                }
            }
        }
        opened
    }
}

impl Io {
    /// Opens the Ethernet channels (as NFD: on every interface up, not loopback, with an
    /// Ethernet address; the lists do not apply).
    fn open_ether_channels(&mut self, netifs: &[Netif]) {
        for n in netifs.iter().filter(|n| n.up && !n.loopback) {
            if n.mac.is_none_or(|m| m.0 == [0; 6]) {
                continue;
            }
            match self.faces.add_ether_channel(n, true) {
                Ok(_) => tracing::info!("Ethernet channel dev://{}", n.name),
                Err(e) => tracing::warn!("cannot open an Ethernet channel on {}: {e}", n.name),
            }
        }
    }

    /// Opens the Ethernet multicast faces (on interfaces with an Ethernet address).
    fn open_ether(&mut self, fs: &FaceSystem, netifs: &[Netif]) -> usize {
        let predicate = fs.ether.predicate();
        let group = fs.ether.group();
        let mut opened = 0;
        for n in netifs
            .iter()
            .filter(|n| eligible(n, &predicate, "Ethernet"))
        {
            if n.mac.is_none_or(|m| m.0 == [0; 6]) {
                tracing::debug!(
                    "no Ethernet multicast face on {}: no Ethernet address",
                    n.name
                );
                continue;
            }
            match self.faces.add_ether_multicast(n, group, &mut self.rx) {
                Ok(d) => {
                    tracing::info!("Ethernet multicast face {} on {}: {}", d.id, n.name, d.uri);
                    opened += 1;
                }
                Err(e) => tracing::warn!(
                    "cannot open an Ethernet multicast face on {}: {}",
                    n.name,
                    reason(&e)
                ),
            }
        }
        opened
    }
}

/// Whether a multicast face of `kind` goes on `n` (as NFD: up, not loopback, can multicast,
/// taken by the lists).
fn eligible(n: &Netif, predicate: &NetifPredicate, kind: &str) -> bool {
    let why = if !n.up {
        "down"
    } else if n.loopback {
        "loopback"
    } else if !n.multicast {
        "cannot multicast"
    } else if !predicate.matches(n) {
        "left out by whitelist/blacklist"
    } else {
        return true;
    };
    tracing::debug!("no {kind} multicast face on {}: {why}", n.name);
    false
}

/// Why a face could not be opened, in words.
fn reason(e: &CreateError) -> String {
    match e {
        CreateError::Failed(why) => why.clone(),
        CreateError::Exists(d) => format!("face {} has that remote", d.id),
    }
}
