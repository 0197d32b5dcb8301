//! Readvertising to NLSR, as NFD's `readvertise_nlsr` does (its `Readvertise` with the
//! client-to-NLSR policy and the NFD-RIB destination at `/localhost/nlsr`).
//!
//! - Policy: a route of origin client (65) is readvertised as its own prefix; every other
//!   origin is not.
//! - Per prefix, the client routes are counted: the first one advertises the prefix (a
//!   `/localhost/nlsr/rib/register` command whose ControlParameters hold the Name only), the
//!   last one to go withdraws it (`.../rib/unregister`); a prefix advertised is advertised again
//!   every hour ([`REFRESH_MS`]) while it lasts.
//! - Destination: available while the RIB has a route of a prefix of `/localhost/nlsr` (NLSR
//!   registered it). When it becomes available, every prefix counted is advertised; while it is
//!   not, nothing is sent, and a prefix that loses its last route is simply forgotten.
//!
//! The commands are v0.3 signed Interests (DigestSha256: Cascade has no key chain; NLSR's
//! validator must accept them) sent to the next hops of `/localhost/nlsr` (what `/localhost`'s
//! multicast strategy does with the Interest NFD's RIB service sends). NLSR's answers are not
//! awaited: management does not sit behind a face of the forwarder, so it cannot retry a
//! refused command (NFD retries after 50 s, doubling up to an hour); the hourly refresh
//! repairs a lost one.

use std::collections::BTreeMap;

use wire::data::signature_type;
use wire::nfd::ControlParameters;
use wire::{tt, Component, Interest, Name, SignatureInfo};

use super::{RouteEvent, CLIENT_ORIGIN};

/// The prefix NLSR serves its RIB commands under.
pub const NLSR_PREFIX: &str = "/localhost/nlsr";

/// How often an advertised prefix is advertised again (NFD's client-to-NLSR policy: an hour).
pub const REFRESH_MS: u64 = 3_600_000;

/// The lifetime of a command Interest (ndn-cxx's default command timeout).
pub const COMMAND_LIFETIME_MS: u64 = 10_000;

/// One readvertised prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Readvertised {
    /// Its client routes.
    routes: usize,
    /// When it is advertised again (`None` while the destination is unavailable).
    refresh_at_ms: Option<u64>,
}

/// A command for NLSR: register (advertise) or unregister (withdraw) a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NlsrCommand {
    /// `true` for `rib/register`, `false` for `rib/unregister`.
    pub register: bool,
    /// The prefix.
    pub prefix: Name,
}

/// The readvertised prefixes and the destination's state.
#[derive(Debug, Clone)]
pub struct Readvertise {
    nlsr: Name,
    rrs: BTreeMap<Name, Readvertised>,
    available: bool,
    sent: u64,
    seq: u64,
}

impl Default for Readvertise {
    fn default() -> Self {
        Readvertise {
            nlsr: Name::from_uri(NLSR_PREFIX).expect("a valid name"),
            rrs: BTreeMap::new(),
            available: false,
            sent: 0,
            seq: 0,
        }
    }
}

impl Readvertise {
    /// The destination's prefix (`/localhost/nlsr`).
    pub fn destination(&self) -> &Name {
        &self.nlsr
    }

    /// The prefixes readvertised (those with a client route), in name order.
    pub fn prefixes(&self) -> impl Iterator<Item = &Name> {
        self.rrs.keys()
    }

    /// Commands sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Takes the RIB's route events, the destination's availability now and the time, and
    /// answers the commands to send, in order.
    pub fn update(
        &mut self,
        events: &[RouteEvent],
        available: bool,
        now_ms: u64,
    ) -> Vec<NlsrCommand> {
        let mut out = Vec::new();
        let cmd = |register, prefix: &Name| NlsrCommand {
            register,
            prefix: prefix.clone(),
        };
        for e in events.iter().filter(|e| e.origin == CLIENT_ORIGIN) {
            if e.added {
                let rr = self.rrs.entry(e.name.clone()).or_insert(Readvertised {
                    routes: 0,
                    refresh_at_ms: None,
                });
                rr.routes += 1;
                if rr.routes == 1 && self.available {
                    rr.refresh_at_ms = Some(now_ms + REFRESH_MS);
                    out.push(cmd(true, &e.name));
                }
            } else if let Some(rr) = self.rrs.get_mut(&e.name) {
                rr.routes = rr.routes.saturating_sub(1);
                if rr.routes == 0 {
                    self.rrs.remove(&e.name);
                    if self.available {
                        out.push(cmd(false, &e.name));
                    }
                }
            }
        }
        if available != self.available {
            self.available = available;
            for (name, rr) in &mut self.rrs {
                rr.refresh_at_ms = available.then_some(now_ms + REFRESH_MS);
                if available {
                    out.push(cmd(true, name));
                }
            }
        }
        for (name, rr) in &mut self.rrs {
            if rr.refresh_at_ms.is_some_and(|t| t <= now_ms) {
                rr.refresh_at_ms = Some(now_ms + REFRESH_MS);
                out.push(cmd(true, name));
            }
        }
        out
    }

    /// The signed command Interest for `c` (`wall_ms`: the SignatureTime), counted as sent.
    pub fn interest(&mut self, c: &NlsrCommand, wall_ms: u64) -> Vec<u8> {
        self.sent += 1;
        self.seq += 1;
        let mut cp = Vec::new();
        ControlParameters {
            name: Some(c.prefix.clone()),
            ..ControlParameters::default()
        }
        .encode(&mut cp);
        let verb = if c.register { "register" } else { "unregister" };
        let name = self
            .nlsr
            .clone()
            .with_str("rib")
            .with_str(verb)
            .with(Component::generic(cp));
        let mix = splitmix(wall_ms ^ self.seq.rotate_left(32));
        let sig_info = SignatureInfo {
            signature_type: signature_type::DIGEST_SHA256,
            nonce: Some(mix.to_be_bytes().to_vec()),
            time_ms: Some(wall_ms),
            ..SignatureInfo::default()
        };
        // DigestSha256 of the signed portion: the name's components (but the parameters
        // digest), the ApplicationParameters and the InterestSignatureInfo.
        let mut signed = Vec::new();
        for comp in &name.components {
            comp.encode(&mut signed);
        }
        wire::tlv::write_tlv(&mut signed, tt::APPLICATION_PARAMETERS, &[]);
        sig_info.encode(&mut signed, tt::INTEREST_SIGNATURE_INFO);
        let nonce = (mix >> 32) as u32;
        let mut i = Interest::new(name, nonce.to_be_bytes());
        i.lifetime_ms = Some(COMMAND_LIFETIME_MS);
        i.app_params = Some(Vec::new());
        i.signature_info = Some(sig_info);
        i.signature_value = Some(wire::sha256(&[&signed]).to_vec());
        i.to_wire()
    }
}

/// SplitMix64: nonces that differ from command to command.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{InterestView, Limits};

    fn ev(name: &str, origin: u64, added: bool) -> RouteEvent {
        RouteEvent {
            name: Name::from_uri(name).unwrap(),
            origin,
            added,
        }
    }

    fn cmds(v: &[NlsrCommand]) -> Vec<(bool, String)> {
        v.iter()
            .map(|c| (c.register, c.prefix.to_string()))
            .collect()
    }

    #[test]
    fn client_routes_are_advertised_once_and_withdrawn_with_the_last() {
        let mut rv = Readvertise::default();
        // Destination unavailable: counted, nothing sent.
        assert!(rv.update(&[ev("/a", 65, true)], false, 0).is_empty());
        // It becomes available: /a goes out.
        assert_eq!(cmds(&rv.update(&[], true, 10)), [(true, "/a".into())]);
        // Other origins are not readvertised; a second client route of /a sends nothing.
        let v = rv.update(&[ev("/b", 0, true), ev("/a", 65, true)], true, 20);
        assert!(v.is_empty());
        assert_eq!(
            cmds(&rv.update(&[ev("/c", 65, true)], true, 30)),
            [(true, "/c".into())]
        );
        assert!(rv.update(&[ev("/a", 65, false)], true, 40).is_empty());
        assert_eq!(
            cmds(&rv.update(&[ev("/a", 65, false)], true, 50)),
            [(false, "/a".into())]
        );
        assert_eq!(
            rv.prefixes().map(|n| n.to_string()).collect::<Vec<_>>(),
            ["/c"]
        );
        // Refresh an hour after /c's advertisement.
        assert!(rv.update(&[], true, 30 + REFRESH_MS - 1).is_empty());
        assert_eq!(
            cmds(&rv.update(&[], true, 30 + REFRESH_MS)),
            [(true, "/c".into())]
        );
        // Unavailable: a withdrawal is not sent, and no refresh either.
        assert!(rv.update(&[], false, 3 * REFRESH_MS).is_empty());
        assert!(rv
            .update(&[ev("/c", 65, false)], false, 3 * REFRESH_MS)
            .is_empty());
        assert_eq!(rv.prefixes().count(), 0);
    }

    #[test]
    fn command_interests_are_signed_rib_commands() {
        let mut rv = Readvertise::default();
        let c = NlsrCommand {
            register: true,
            prefix: Name::from_uri("/ndn/grp").unwrap(),
        };
        let a = rv.interest(&c, 1_700_000_000_000);
        let b = rv.interest(&c, 1_700_000_000_000);
        assert_eq!(rv.sent(), 2);
        let v = InterestView::decode(&a, &Limits::default()).unwrap();
        let name = v.name().to_name();
        let verb = Name::from_uri("/localhost/nlsr/rib/register").unwrap();
        assert_eq!(name.prefix(4), verb);
        let p = ControlParameters::decode(&name.components[4].value).unwrap();
        assert_eq!(p.name, Some(c.prefix.clone()));
        assert_eq!(p.face_id, None);
        assert_eq!(v.name().params_digest_count(), 1);
        assert_eq!(v.signature_value().map(<[u8]>::len), Some(32));
        let w = InterestView::decode(&b, &Limits::default()).unwrap();
        assert_ne!(v.nonce(), w.nonce());
        assert_eq!(v.lifetime_ms(), Some(COMMAND_LIFETIME_MS));
    }
}
