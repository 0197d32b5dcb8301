//! The emulated network: one network namespace per node (the consumer's included) joined by
//! veth pairs, each link shaped by `tc tbf`; or, where namespaces are not permitted, every
//! router on its own loopback UDP port.
//!
//! [`Net`] owns what it created and deletes it when dropped (the namespaces, and with them
//! their veths and qdiscs); routers must have stopped first.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::{Command, Stdio};

use super::scenario::Scenario;

/// The UDP port routers listen on inside their namespaces.
pub const NS_PORT: u16 = 6363;

/// MTU of the veths: a 4 KB segment fits in one datagram.
pub const VETH_MTU: u32 = 9000;

/// `faces.udp_mtu` of the routers: a datagram fills a veth frame (IPv4 and UDP headers off).
pub const UDP_MTU: u32 = VETH_MTU - 28;

/// Runs a command and returns its error output as the error.
pub fn sh(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}`: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Where the nodes live.
#[derive(Debug)]
pub struct Net {
    /// Namespaces (consumer first, then the routers), or none on loopback.
    namespaces: Vec<String>,
    /// Whether the links are rate-limited.
    pub shaped: bool,
    /// One line: what was used and why.
    pub note: String,
}

/// How the network is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetChoice {
    /// Namespaces if permitted, else loopback.
    Auto,
    /// Namespaces or an error.
    Namespaces,
    /// Loopback UDP.
    Loopback,
}

impl Net {
    /// Sets the network up for scenario `s`; `tag` makes the namespace names unique.
    pub fn setup(s: &Scenario, choice: NetChoice, tag: &str) -> Result<Net, String> {
        if choice == NetChoice::Loopback {
            return Ok(Net::loopback("loopback UDP ports (--loopback)".into()));
        }
        let mut net = Net {
            namespaces: Vec::new(),
            shaped: false,
            note: String::new(),
        };
        // The consumer's namespace first: the probe of whether namespaces are permitted.
        let consumer = format!("{tag}-consumer");
        if let Err(e) = sh("ip", &["netns", "add", &consumer]) {
            if choice == NetChoice::Namespaces {
                return Err(format!("network namespaces are not permitted: {e}"));
            }
            return Ok(Net::loopback(format!(
                "loopback UDP ports (network namespaces not permitted: {e})"
            )));
        }
        net.namespaces.push(consumer);
        for n in &s.nodes {
            let name = format!("{tag}-{}", n.name);
            sh("ip", &["netns", "add", &name])?;
            net.namespaces.push(name);
        }
        let mut unshaped = Vec::new();
        for i in 0..s.nodes.len() {
            net.link(i, s.link_rate_mbit(i), &mut unshaped)?;
        }
        net.shaped = unshaped.is_empty();
        net.note = if unshaped.is_empty() {
            "network namespaces joined by veth pairs, links shaped by tc tbf".into()
        } else {
            format!(
                "network namespaces joined by veth pairs; not shaped: {}",
                unshaped.join("; ")
            )
        };
        Ok(net)
    }

    fn loopback(note: String) -> Net {
        Net {
            namespaces: Vec::new(),
            shaped: false,
            note,
        }
    }

    /// Whether the nodes run in namespaces.
    pub fn namespaces(&self) -> bool {
        !self.namespaces.is_empty()
    }

    /// The consumer's namespace.
    pub fn consumer_ns(&self) -> Option<&str> {
        self.namespaces.first().map(String::as_str)
    }

    /// Router `i`'s namespace.
    pub fn node_ns(&self, i: usize) -> Option<&str> {
        self.namespaces.get(i + 1).map(String::as_str)
    }

    /// The address router `i` is reached at from its downstream neighbour (namespaces only:
    /// on loopback each router's port is known once it has started).
    pub fn node_addr(i: usize) -> SocketAddr {
        SocketAddr::from((link_ip(i, 2), NS_PORT))
    }

    /// Link `i`: between the consumer (i = 0) or router `i - 1` and router `i`.
    fn link(&self, i: usize, rate_mbit: u64, unshaped: &mut Vec<String>) -> Result<(), String> {
        let (down, up) = (&self.namespaces[i], &self.namespaces[i + 1]);
        let (d_if, u_if) = (format!("e{i}u"), format!("e{i}d"));
        sh(
            "ip",
            &[
                "-n", down, "link", "add", &d_if, "type", "veth", "peer", "name", &u_if, "netns",
                up,
            ],
        )?;
        for (ns, dev, ip) in [(down, &d_if, link_ip(i, 1)), (up, &u_if, link_ip(i, 2))] {
            let mtu = VETH_MTU.to_string();
            sh("ip", &["-n", ns, "link", "set", dev, "mtu", &mtu, "up"])?;
            sh("ip", &["-n", ns, "link", "set", "lo", "up"])?;
            let cidr = format!("{ip}/24");
            sh("ip", &["-n", ns, "addr", "add", &cidr, "dev", dev])?;
            if rate_mbit > 0 {
                // Burst: at least 10 ms of the rate and two jumbo frames.
                let burst = (rate_mbit * 1_000_000 / 8 / 100).max(2 * u64::from(VETH_MTU));
                let rate = format!("{rate_mbit}mbit");
                let b = burst.to_string();
                let args = [
                    "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", &rate, "burst",
                    &b, "latency", "100ms",
                ];
                if let Err(e) = sh("tc", &args) {
                    unshaped.push(e);
                }
            }
        }
        Ok(())
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for ns in self.namespaces.drain(..).rev() {
            if let Err(e) = sh("ip", &["netns", "del", &ns]) {
                eprintln!("cascade emulate: {e}");
            }
        }
    }
}

/// Deletes the namespaces an emulator that no longer runs left behind (it was killed
/// outright): those named `<prefix><pid>-…` whose process `pid` is gone.
pub fn remove_stale(prefix: &str) {
    let Ok(list) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for e in list.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = stale_pid(&name, prefix) {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = sh("ip", &["netns", "del", &name]);
            }
        }
    }
}

/// The process id in a name `<prefix><pid>-…`.
pub fn stale_pid(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?.split('-').next()?.parse().ok()
}

/// The address of end `end` (1: downstream, 2: upstream) of link `i`.
fn link_ip(i: usize, end: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 213, i as u8, end)
}

/// Moves the calling thread into network namespace `ns` (sockets it opens afterwards live
/// there; other threads are not affected).
pub fn enter_namespace(ns: &str) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let path = format!("/run/netns/{ns}");
    let f = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
    // SAFETY: a valid descriptor of a namespace file; setns changes only this thread.
    let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    if r != 0 {
        return Err(format!("setns {path}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Datagrams the kernel dropped for want of room in a UDP socket's receive buffer
/// (`RcvbufErrors` of `/proc/net/snmp`) in namespace `ns`.
pub fn udp_rcvbuf_errors(ns: &str) -> Option<u64> {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        enter_namespace(&ns).ok()?;
        let text = std::fs::read_to_string("/proc/thread-self/net/snmp").ok()?;
        rcvbuf_errors(&text)
    })
    .join()
    .ok()
    .flatten()
}

/// `RcvbufErrors` of the `Udp:` lines of `/proc/net/snmp`.
fn rcvbuf_errors(snmp: &str) -> Option<u64> {
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (udp.next()?, udp.next()?);
    let at = names.split_whitespace().position(|n| n == "RcvbufErrors")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_get_their_own_subnet() {
        assert_eq!(link_ip(0, 1), Ipv4Addr::new(10, 213, 0, 1));
        assert_eq!(
            Net::node_addr(3),
            SocketAddr::from(([10, 213, 3, 2], NS_PORT))
        );
        let n = Net::loopback("x".into());
        assert!(!n.namespaces() && n.consumer_ns().is_none() && n.node_ns(0).is_none());
    }

    #[test]
    fn udp_receive_buffer_drops_are_read_from_snmp() {
        let snmp =
            "Ip: Forwarding\nIp: 1\nUdp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors\n\
                    Udp: 5 0 7 9 7\nUdpLite: InDatagrams\nUdpLite: 0\n";
        assert_eq!(rcvbuf_errors(snmp), Some(7));
        assert_eq!(rcvbuf_errors("Udp: x\n"), None);
    }

    #[test]
    fn stale_names_carry_their_creators_pid() {
        assert_eq!(stale_pid("cascade-emu-4242-R1", "cascade-emu-"), Some(4242));
        assert_eq!(stale_pid("cascade-emu-x-R1", "cascade-emu-"), None);
        assert_eq!(stale_pid("other-4242-R1", "cascade-emu-"), None);
    }

    #[test]
    fn a_failing_command_reports_its_output() {
        let e = sh("sh", &["-c", "echo nope >&2; exit 3"]).unwrap_err();
        assert!(e.contains("nope"), "{e}");
        assert!(sh("no-such-program-here", &[]).is_err());
    }
}
