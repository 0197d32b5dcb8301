//! `[face_system.udp]` and `[face_system.ether]`: the multicast faces, one per interface, as
//! NFD's `face_system` section opens them (the same key names).
//!
//! Both are off by default in Cascade (NFD turns them on): a router started on a shared host
//! must not join its LAN's groups unasked, and routers started side by side (tests) must not
//! hear each other. `mcast = true` turns a kind on.

use std::net::IpAddr;

use face::netif::{MacAddr, NetifPredicate};
use face::table::{NFD_UDP4_GROUP, NFD_UDP6_GROUP, NFD_UDP_MCAST_PORT};
use serde::Deserialize;

/// NFD's Ethernet multicast group.
pub const NFD_ETHER_GROUP: &str = "01:00:5e:00:17:aa";

/// `[face_system]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FaceSystem {
    /// What applies to every kind of face (`[face_system.general]`).
    pub general: General,
    /// UDP multicast faces (`[face_system.udp]`).
    pub udp: UdpMcast,
    /// Ethernet faces (`[face_system.ether]`).
    pub ether: EtherMcast,
}

/// `[face_system.general]`, as NFD's `face_system.general`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct General {
    /// CongestionMarkingEnabled of the faces the router makes (on-demand, multicast and
    /// static faces) and of those `faces/create` makes without the flag: their send queues
    /// mark packets while congested. Default true (NFD's). A reload applies it to the faces
    /// made from then on (the open ones keep theirs).
    pub enable_congestion_marking: bool,
}

impl Default for General {
    fn default() -> Self {
        General {
            enable_congestion_marking: true,
        }
    }
}

/// `[face_system.udp]`: UDP multicast faces.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct UdpMcast {
    /// Open a UDP multicast face on every interface the lists take. Default false (NFD:
    /// true).
    pub mcast: bool,
    /// IPv4 group. Default `224.0.23.170` (NFD's).
    pub mcast_group: String,
    /// IPv4 group's port. Default 56363.
    pub mcast_port: u16,
    /// IPv6 group (link-local scope, joined on each interface). Default `ff02::1234`.
    pub mcast_group_v6: String,
    /// IPv6 group's port. Default 56363.
    pub mcast_port_v6: u16,
    /// Interfaces taken: `*`, a name or pattern (`eth*`), an Ethernet address, a subnet.
    /// Default `["*"]`.
    pub whitelist: Vec<String>,
    /// Interfaces left out, the same rules. Default empty.
    pub blacklist: Vec<String>,
}

impl Default for UdpMcast {
    fn default() -> Self {
        UdpMcast {
            mcast: false,
            mcast_group: NFD_UDP4_GROUP.into(),
            mcast_port: NFD_UDP_MCAST_PORT,
            mcast_group_v6: NFD_UDP6_GROUP.into(),
            mcast_port_v6: NFD_UDP_MCAST_PORT,
            whitelist: vec!["*".into()],
            blacklist: Vec::new(),
        }
    }
}

/// `[face_system.ether]`: Ethernet faces.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct EtherMcast {
    /// Open an Ethernet multicast face on every interface the lists take. Default false
    /// (NFD: true).
    pub mcast: bool,
    /// The group. Default `01:00:5e:00:17:aa` (NFD's).
    pub mcast_group: String,
    /// Open an Ethernet channel (`dev://ifname`) on every interface with an Ethernet address:
    /// `faces/create` makes unicast faces (`ether://[MAC]`) on it, and a frame to this
    /// interface from a source with no face makes an on-demand face (within the on-demand
    /// quota, closed when idle as on-demand UDP faces are). Default false (NFD: channels
    /// whenever the section is present, listening by default).
    pub listen: bool,
    /// Interfaces taken, as for UDP. Default `["*"]`.
    pub whitelist: Vec<String>,
    /// Interfaces left out. Default empty.
    pub blacklist: Vec<String>,
}

impl Default for EtherMcast {
    fn default() -> Self {
        EtherMcast {
            mcast: false,
            mcast_group: NFD_ETHER_GROUP.into(),
            listen: false,
            whitelist: vec!["*".into()],
            blacklist: Vec::new(),
        }
    }
}

impl UdpMcast {
    /// The IPv4 and IPv6 groups (checked by [`FaceSystem::validate`]).
    pub fn groups(&self) -> Vec<std::net::SocketAddr> {
        let g4 = self.mcast_group.parse::<IpAddr>().ok();
        let g6 = self.mcast_group_v6.parse::<IpAddr>().ok();
        [(g4, self.mcast_port), (g6, self.mcast_port_v6)]
            .into_iter()
            .filter_map(|(g, p)| g.map(|g| std::net::SocketAddr::new(g, p)))
            .collect()
    }

    /// The interface lists (checked by [`FaceSystem::validate`]).
    pub fn predicate(&self) -> NetifPredicate {
        NetifPredicate::new(&self.whitelist, &self.blacklist).unwrap_or_default()
    }
}

impl EtherMcast {
    /// The group (checked by [`FaceSystem::validate`]).
    pub fn group(&self) -> MacAddr {
        MacAddr::parse(&self.mcast_group).unwrap_or_default()
    }

    /// The interface lists (checked by [`FaceSystem::validate`]).
    pub fn predicate(&self) -> NetifPredicate {
        NetifPredicate::new(&self.whitelist, &self.blacklist).unwrap_or_default()
    }
}

/// A multicast group of `v4`'s family, or a one-line error naming `key`.
fn group(key: &str, s: &str, v4: bool) -> Result<(), String> {
    match s.parse::<IpAddr>() {
        Ok(ip) if ip.is_multicast() && ip.is_ipv4() == v4 => Ok(()),
        Ok(_) => Err(format!(
            "{key}: {s:?} is not an IPv{} multicast address",
            if v4 { 4 } else { 6 }
        )),
        Err(_) => Err(format!("{key}: {s:?} cannot be parsed as an IP address")),
    }
}

impl FaceSystem {
    /// One line naming the key on error.
    pub fn validate(&self) -> Result<(), String> {
        let u = &self.udp;
        group("face_system.udp.mcast_group", &u.mcast_group, true)?;
        group("face_system.udp.mcast_group_v6", &u.mcast_group_v6, false)?;
        for (key, port) in [
            ("face_system.udp.mcast_port", u.mcast_port),
            ("face_system.udp.mcast_port_v6", u.mcast_port_v6),
        ] {
            if port == 0 {
                return Err(format!("{key}: 0 is not a port (1 to 65535)"));
            }
        }
        let e = &self.ether;
        match MacAddr::parse(&e.mcast_group) {
            Some(m) if m.is_group() => {}
            _ => {
                return Err(format!(
                    "face_system.ether.mcast_group: {:?} is not a multicast Ethernet address",
                    e.mcast_group
                ))
            }
        }
        for (key, w, b) in [
            ("face_system.udp", &u.whitelist, &u.blacklist),
            ("face_system.ether", &e.whitelist, &e.blacklist),
        ] {
            NetifPredicate::new(w, &[] as &[String])
                .map_err(|m| format!("{key}.whitelist: {m}"))?;
            NetifPredicate::new(&[] as &[String], b)
                .map_err(|m| format!("{key}.blacklist: {m}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn multicast_is_off_by_default_with_nfds_groups() {
        let d = Config::default().face_system;
        assert!(!d.udp.mcast && !d.ether.mcast);
        assert!(d.general.enable_congestion_marking, "NFD's default");
        let off = "[face_system.general]\nenable_congestion_marking = false\n";
        assert!(
            !Config::from_toml(off)
                .unwrap()
                .face_system
                .general
                .enable_congestion_marking
        );
        let bad = "[face_system.general]\ncongestion_marking = false\n";
        assert!(Config::from_toml(bad).is_err());
        let g: Vec<String> = d.udp.groups().iter().map(|g| g.to_string()).collect();
        assert_eq!(g, ["224.0.23.170:56363", "[ff02::1234]:56363"]);
        assert_eq!(d.ether.group().to_string(), "01:00:5e:00:17:aa");
        assert!(d.validate().is_ok());
    }

    #[test]
    fn face_system_sections_are_read_and_checked() {
        let c = Config::from_toml(
            "[face_system.udp]\nmcast = true\nmcast_group = \"239.1.2.3\"\nmcast_port = 7000\n\
             whitelist = [\"veth*\", \"10.0.0.0/8\"]\nblacklist = [\"02:00:00:00:00:01\"]\n\
             [face_system.ether]\nmcast = true\n",
        )
        .unwrap();
        assert!(c.face_system.udp.mcast && c.face_system.ether.mcast);
        assert_eq!(c.face_system.udp.groups()[0].to_string(), "239.1.2.3:7000");
        for (text, key) in [
            (
                "[face_system.udp]\nmcast_group = \"10.0.0.1\"",
                "face_system.udp.mcast_group:",
            ),
            (
                "[face_system.udp]\nmcast_group = \"ff02::1\"",
                "face_system.udp.mcast_group:",
            ),
            (
                "[face_system.udp]\nmcast_group_v6 = \"x\"",
                "face_system.udp.mcast_group_v6:",
            ),
            (
                "[face_system.udp]\nmcast_port = 0",
                "face_system.udp.mcast_port:",
            ),
            (
                "[face_system.udp]\nwhitelist = [\"10.0.0.0/40\"]",
                "face_system.udp.whitelist:",
            ),
            (
                "[face_system.ether]\nblacklist = [\"\"]",
                "face_system.ether.blacklist:",
            ),
            (
                "[face_system.ether]\nmcast_group = \"02:00:00:00:00:01\"",
                "face_system.ether.mcast_group:",
            ),
        ] {
            let e = Config::from_toml(text).unwrap_err();
            assert!(e.starts_with(key), "{text}: {e}");
            assert!(!e.contains('\n'));
        }
        assert!(Config::from_toml("[face_system.udp]\nmcast_ad_hoc = true").is_err());
    }
}
