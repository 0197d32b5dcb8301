//! Network interfaces: what the multicast faces are opened on, and which of them a
//! whitelist and a blacklist let through.
//!
//! [`interfaces`] lists the host's interfaces (`getifaddrs`): name, index, flags, Ethernet
//! address, IP addresses. [`NetifPredicate`] is NFD's `NetworkInterfacePredicate`: an interface
//! is taken when some whitelist rule matches it and no blacklist rule does; a rule is `*`
//! (every interface), an interface name or shell-style pattern (`eth*`, matched as `fnmatch`
//! does), an Ethernet address (`02:00:00:00:00:01`), or a subnet (`192.0.2.0/24`,
//! `2001:db8::/32`: an interface with an address in it).

use std::ffi::{CStr, CString};
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An Ethernet (MAC) address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// Parses `aa:bb:cc:dd:ee:ff` (or with `-`), any case.
    pub fn parse(s: &str) -> Option<MacAddr> {
        let sep = if s.contains('-') { '-' } else { ':' };
        let mut out = [0u8; 6];
        let mut parts = s.split(sep);
        for b in &mut out {
            let p = parts.next()?;
            if p.len() != 2 {
                return None;
            }
            *b = u8::from_str_radix(p, 16).ok()?;
        }
        parts.next().is_none().then_some(MacAddr(out))
    }

    /// A group (multicast or broadcast) address: the least significant bit of the first
    /// octet set.
    pub fn is_group(&self) -> bool {
        self.0[0] & 1 == 1
    }
}

impl fmt::Display for MacAddr {
    /// Lower case, colon separated, as ndn-cxx writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// One network interface.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Netif {
    /// Its name (`eth0`).
    pub name: String,
    /// Its index.
    pub index: u32,
    /// Up.
    pub up: bool,
    /// A loopback interface.
    pub loopback: bool,
    /// Can multicast.
    pub multicast: bool,
    /// Its Ethernet address, if it has one.
    pub mac: Option<MacAddr>,
    /// Its IP addresses, each with its prefix length.
    pub addrs: Vec<(IpAddr, u8)>,
}

impl Netif {
    /// The address a multicast face of family `v4` uses (NFD's pick: the first of the family
    /// whose scope is link or global, i.e. not loopback).
    pub fn pick_addr(&self, v4: bool) -> Option<IpAddr> {
        self.addrs
            .iter()
            .map(|&(a, _)| a)
            .find(|a| a.is_ipv4() == v4 && !a.is_loopback() && !a.is_unspecified())
    }
}

/// The host's network interfaces, in the order `getifaddrs` gives them.
pub fn interfaces() -> io::Result<Vec<Netif>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out: Vec<Netif> = Vec::new();
    let mut p = head;
    // Bounded: the kernel's list ends with a null pointer.
    while !p.is_null() {
        // SAFETY: `p` is a node of the list getifaddrs returned, alive until freeifaddrs.
        let ifa = unsafe { &*p };
        p = ifa.ifa_next;
        // SAFETY: ifa_name is a C string of the node.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        let i = match out.iter().position(|n| n.name == name) {
            Some(i) => i,
            None => {
                let c = CString::new(name.clone()).unwrap_or_default();
                // SAFETY: `c` is a valid C string.
                let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
                let flags = ifa.ifa_flags;
                out.push(Netif {
                    name,
                    index,
                    up: flags & libc::IFF_UP as u32 != 0,
                    loopback: flags & libc::IFF_LOOPBACK as u32 != 0,
                    multicast: flags & libc::IFF_MULTICAST as u32 != 0,
                    ..Netif::default()
                });
                out.len() - 1
            }
        };
        // SAFETY: the addresses are null or point at sockaddrs of their family.
        unsafe { read_addr(&mut out[i], ifa.ifa_addr, ifa.ifa_netmask) };
    }
    // SAFETY: `head` came from getifaddrs.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

/// Adds what `addr` (with `mask`) tells of `n`: an IP address, or its Ethernet address.
///
/// # Safety
/// `addr` and `mask` are null or point at sockaddrs of the family they say.
unsafe fn read_addr(n: &mut Netif, addr: *const libc::sockaddr, mask: *const libc::sockaddr) {
    if addr.is_null() {
        return;
    }
    // SAFETY: the caller's promise: each pointer is a sockaddr of the family it says.
    unsafe {
        match i32::from((*addr).sa_family) {
            libc::AF_INET => {
                let a = &*(addr as *const libc::sockaddr_in);
                let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
                let len = if mask.is_null() {
                    32
                } else {
                    let m = &*(mask as *const libc::sockaddr_in);
                    u32::from_be(m.sin_addr.s_addr).count_ones() as u8
                };
                n.addrs.push((IpAddr::V4(ip), len));
            }
            libc::AF_INET6 => {
                let a = &*(addr as *const libc::sockaddr_in6);
                let ip = Ipv6Addr::from(a.sin6_addr.s6_addr);
                let len = if mask.is_null() {
                    128
                } else {
                    let m = &*(mask as *const libc::sockaddr_in6);
                    u128::from_be_bytes(m.sin6_addr.s6_addr).count_ones() as u8
                };
                n.addrs.push((IpAddr::V6(ip), len));
            }
            libc::AF_PACKET => {
                let l = &*(addr as *const libc::sockaddr_ll);
                if l.sll_halen == 6 {
                    let mut m = [0u8; 6];
                    m.copy_from_slice(&l.sll_addr[..6]);
                    n.mac = Some(MacAddr(m));
                }
            }
            _ => {}
        }
    }
}

/// One whitelist or blacklist rule.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Rule {
    /// Every interface.
    Any,
    /// An interface name or pattern.
    Name(CString),
    /// An Ethernet address.
    Mac(MacAddr),
    /// A subnet.
    Subnet(IpAddr, u8),
}

impl Rule {
    fn parse(s: &str) -> Result<Rule, String> {
        if s == "*" {
            return Ok(Rule::Any);
        }
        if let Some((a, l)) = s.split_once('/') {
            let ip: IpAddr = a.parse().map_err(|_| format!("malformed subnet {s:?}"))?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let len: u8 = l
                .parse()
                .ok()
                .filter(|&n| n <= max)
                .ok_or_else(|| format!("malformed subnet {s:?}"))?;
            return Ok(Rule::Subnet(ip, len));
        }
        if let Some(m) = MacAddr::parse(s) {
            return Ok(Rule::Mac(m));
        }
        match CString::new(s) {
            Ok(c) if !s.is_empty() => Ok(Rule::Name(c)),
            _ => Err(format!("malformed interface name {s:?}")),
        }
    }

    fn matches(&self, n: &Netif) -> bool {
        match self {
            Rule::Any => true,
            Rule::Mac(m) => n.mac == Some(*m),
            Rule::Subnet(net, len) => n.addrs.iter().any(|&(a, _)| in_subnet(a, *net, *len)),
            Rule::Name(pattern) => {
                let Ok(name) = CString::new(n.name.as_str()) else {
                    return false;
                };
                // SAFETY: both are valid C strings.
                unsafe { libc::fnmatch(pattern.as_ptr(), name.as_ptr(), 0) == 0 }
            }
        }
    }
}

/// Whether `a` is in `net`/`len` (addresses of another family never are).
fn in_subnet(a: IpAddr, net: IpAddr, len: u8) -> bool {
    match (a, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// Which interfaces a kind of multicast face is opened on (NFD's `NetworkInterfacePredicate`):
/// see the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetifPredicate {
    whitelist: Vec<Rule>,
    blacklist: Vec<Rule>,
}

impl Default for NetifPredicate {
    /// NFD's default: whitelist `*`, blacklist empty.
    fn default() -> Self {
        NetifPredicate {
            whitelist: vec![Rule::Any],
            blacklist: Vec::new(),
        }
    }
}

impl NetifPredicate {
    /// From the rules' texts; the error names the rule that does not parse.
    pub fn new<S: AsRef<str>>(whitelist: &[S], blacklist: &[S]) -> Result<Self, String> {
        let parse = |l: &[S]| -> Result<Vec<Rule>, String> {
            l.iter().map(|s| Rule::parse(s.as_ref())).collect()
        };
        Ok(NetifPredicate {
            whitelist: parse(whitelist)?,
            blacklist: parse(blacklist)?,
        })
    }

    /// Whether the interface is taken: a whitelist rule matches it and no blacklist rule does.
    pub fn matches(&self, n: &Netif) -> bool {
        self.whitelist.iter().any(|r| r.matches(n)) && !self.blacklist.iter().any(|r| r.matches(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn netif(name: &str, mac: [u8; 6], addrs: &[(&str, u8)]) -> Netif {
        Netif {
            name: name.into(),
            index: 2,
            up: true,
            loopback: false,
            multicast: true,
            mac: Some(MacAddr(mac)),
            addrs: addrs
                .iter()
                .map(|(a, l)| (a.parse().unwrap(), *l))
                .collect(),
        }
    }

    #[test]
    fn mac_addresses_parse_and_print_as_ndn_cxx() {
        let m = MacAddr::parse("01:00:5E:00:17:aa").unwrap();
        assert_eq!(m.to_string(), "01:00:5e:00:17:aa");
        assert!(m.is_group());
        assert_eq!(
            MacAddr::parse("02-00-00-00-00-01"),
            Some(MacAddr([2, 0, 0, 0, 0, 1]))
        );
        assert!(!MacAddr([2, 0, 0, 0, 0, 1]).is_group());
        for bad in [
            "",
            "01:00:5e:00:17",
            "01:00:5e:00:17:aa:bb",
            "0:00:5e:00:17:aa",
            "zz:00:5e:00:17:aa",
        ] {
            assert_eq!(MacAddr::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn whitelist_and_blacklist_match_as_nfd() {
        let eth0 = netif(
            "eth0",
            [2, 0, 0, 0, 0, 1],
            &[("192.0.2.7", 24), ("fe80::1", 64)],
        );
        let wlan0 = netif("wlan0", [2, 0, 0, 0, 0, 2], &[("198.51.100.3", 24)]);
        let p = |w: &[&str], b: &[&str]| NetifPredicate::new(w, b).unwrap();
        // The default takes every interface.
        assert!(NetifPredicate::default().matches(&eth0));
        assert!(p(&["*"], &[]).matches(&wlan0));
        // An empty whitelist takes none.
        assert!(!p(&[], &[]).matches(&eth0));
        // Names and patterns.
        assert!(p(&["eth0"], &[]).matches(&eth0));
        assert!(!p(&["eth0"], &[]).matches(&wlan0));
        assert!(p(&["eth*"], &[]).matches(&eth0));
        assert!(p(&["*"], &["w*"]).matches(&eth0));
        assert!(!p(&["*"], &["w*"]).matches(&wlan0));
        // Ethernet addresses, any case.
        assert!(p(&["02:00:00:00:00:02"], &[]).matches(&wlan0));
        assert!(!p(&["02:00:00:00:00:02"], &[]).matches(&eth0));
        assert!(!p(&["*"], &["02:00:00:00:00:01"]).matches(&eth0));
        // Subnets: any address of the interface.
        assert!(p(&["192.0.2.0/24"], &[]).matches(&eth0));
        assert!(!p(&["192.0.2.0/25"], &["192.0.2.0/29"]).matches(&eth0));
        assert!(p(&["fe80::/10"], &[]).matches(&eth0));
        assert!(!p(&["fe80::/10"], &[]).matches(&wlan0));
        assert!(p(&["0.0.0.0/0"], &[]).matches(&wlan0));
        // The blacklist wins.
        assert!(!p(&["eth0"], &["eth0"]).matches(&eth0));
    }

    #[test]
    fn malformed_rules_are_named() {
        for bad in ["", "10.0.0.0/33", "10.0.0/8", "fe80::/129", "x/8", "a\0b"] {
            let e = NetifPredicate::new(&[bad], &[]).unwrap_err();
            assert!(e.contains("malformed"), "{bad}: {e}");
        }
        assert!(NetifPredicate::new(&["*"], &["eth0", "10.0.0.0/8"]).is_ok());
    }

    #[test]
    fn the_host_has_a_loopback_interface() {
        let all = interfaces().unwrap();
        let lo = all
            .iter()
            .find(|n| n.loopback)
            .expect("a loopback interface");
        assert!(lo.index > 0);
        assert!(lo.addrs.iter().any(|(a, _)| a.is_loopback()));
        assert_eq!(lo.pick_addr(true), None);
    }
}
