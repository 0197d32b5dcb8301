//! Readvertising to NLSR, as NFD's `readvertise_nlsr` does (its `Readvertise` with the
//! client-to-NLSR policy and the NFD-RIB destination at `/localhost/nlsr`).
//!
//! - Policy: a route of origin client (65) is readvertised as its own prefix; every other
//!   origin is not.
//! - Per prefix, the client routes are counted: the first one advertises the prefix (a
//!   `/localhost/nlsr/rib/register` command whose ControlParameters hold the Name only), the
//!   last one to go withdraws it (`.../rib/unregister`).
//! - Each command waits for NLSR's answer ([`Readvertise::on_reply`]), for at most
//!   [`COMMAND_LIFETIME_MS`] (ndn-cxx's command timeout). A ControlResponse below 400 is a
//!   success: an advertised prefix is advertised again an hour later ([`REFRESH_MS`]), a
//!   withdrawn one is forgotten. A refusal or no answer is a failure: the command is sent again
//!   after the prefix's retry delay, which starts at [`RETRY_DELAY_MIN_MS`] (50 s), doubles
//!   before each retry and stops growing at [`RETRY_DELAY_MAX_MS`] (an hour), and is reset
//!   by a success, a first route, a last route gone and NLSR's route appearing (NFD's
//!   schedule, without its ±5 ms jitter).
//! - Destination: available while the RIB has a route of a prefix of `/localhost/nlsr` (NLSR
//!   registered it). When it becomes available, every prefix counted is advertised; when it
//!   goes, retries and refreshes stop, the prefixes waiting for a withdrawal are forgotten,
//!   and while it is away nothing is sent.
//!
//! The commands are v0.3 signed Interests (DigestSha256: Cascade has no key chain; NLSR's
//! validator must accept them) sent to the next hops of `/localhost/nlsr` (what `/localhost`'s
//! multicast strategy does with the Interest NFD's RIB service sends). NLSR's answer Data,
//! named as the command, reaches management through the I/O loop (a Data under
//! `/localhost/nlsr/rib/register` or `unregister` from a local face goes to management, not
//! to the workers); its signature is not verified.

use std::collections::BTreeMap;

use wire::data::signature_type;
use wire::nfd::ControlParameters;
use wire::{tt, Component, Interest, InterestView, Limits, Name, SignatureInfo};

use super::{RouteEvent, CLIENT_ORIGIN};

/// The prefix NLSR serves its RIB commands under.
pub const NLSR_PREFIX: &str = "/localhost/nlsr";

/// How often an advertised prefix is advertised again (NFD's client-to-NLSR policy: an hour).
pub const REFRESH_MS: u64 = 3_600_000;

/// The lifetime of a command Interest, and how long its answer is awaited (ndn-cxx's default
/// command timeout).
pub const COMMAND_LIFETIME_MS: u64 = 10_000;

/// The first retry delay after a failed command (NFD's `Readvertise::RETRY_DELAY_MIN`); it
/// doubles before each retry.
pub const RETRY_DELAY_MIN_MS: u64 = 50_000;

/// The longest retry delay (NFD's `Readvertise::RETRY_DELAY_MAX`).
pub const RETRY_DELAY_MAX_MS: u64 = 3_600_000;

/// The command of a prefix awaiting NLSR's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InFlight {
    /// The command Interest's name (the answer's name).
    name: Name,
    /// `rib/register` (else `rib/unregister`).
    register: bool,
    /// When it counts as failed for want of an answer.
    deadline_ms: u64,
}

/// One readvertised prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Readvertised {
    /// Its client routes (0: being withdrawn).
    routes: usize,
    /// When its next command goes (an advertisement while it has routes, else a withdrawal);
    /// `None`: none is scheduled.
    next_at_ms: Option<u64>,
    /// The delay before the next retry, should the command in flight fail.
    retry_delay_ms: u64,
    /// The command awaiting an answer.
    in_flight: Option<InFlight>,
}

impl Readvertised {
    /// Schedules a command now, with the retry delay reset.
    fn due_now(&mut self, now_ms: u64, min_ms: u64) {
        self.retry_delay_ms = min_ms;
        self.next_at_ms = Some(now_ms);
    }

    /// The command in flight failed (refused or unanswered): doubles the delay and retries
    /// after it.
    fn failed(&mut self, now_ms: u64) {
        self.in_flight = None;
        self.retry_delay_ms = self
            .retry_delay_ms
            .saturating_mul(2)
            .min(RETRY_DELAY_MAX_MS);
        self.next_at_ms = Some(now_ms + self.retry_delay_ms);
    }
}

/// A command for NLSR: register (advertise) or unregister (withdraw) a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NlsrCommand {
    /// `true` for `rib/register`, `false` for `rib/unregister`.
    pub register: bool,
    /// The prefix.
    pub prefix: Name,
}

/// Counters of the commands and their outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadvertiseCounters {
    /// Commands sent (retries included).
    pub sent: u64,
    /// Commands NLSR answered with success.
    pub succeeded: u64,
    /// Commands NLSR refused (a ControlResponse of 400 or more, or no ControlResponse).
    pub refused: u64,
    /// Commands left unanswered past their lifetime.
    pub timed_out: u64,
}

/// The readvertised prefixes and the destination's state.
#[derive(Debug, Clone)]
pub struct Readvertise {
    nlsr: Name,
    rrs: BTreeMap<Name, Readvertised>,
    available: bool,
    retry_min_ms: u64,
    counters: ReadvertiseCounters,
    seq: u64,
}

impl Default for Readvertise {
    fn default() -> Self {
        Readvertise::with_retry_delay(RETRY_DELAY_MIN_MS)
    }
}

impl Readvertise {
    /// Readvertising whose first retry delay is `retry_min_ms` (at least 1 ms; NFD:
    /// [`RETRY_DELAY_MIN_MS`]).
    pub fn with_retry_delay(retry_min_ms: u64) -> Self {
        Readvertise {
            nlsr: Name::from_uri(NLSR_PREFIX).expect("a valid name"),
            rrs: BTreeMap::new(),
            available: false,
            retry_min_ms: retry_min_ms.clamp(1, RETRY_DELAY_MAX_MS),
            counters: ReadvertiseCounters::default(),
            seq: 0,
        }
    }

    /// The destination's prefix (`/localhost/nlsr`).
    pub fn destination(&self) -> &Name {
        &self.nlsr
    }

    /// The prefixes readvertised (those with a client route), in name order.
    pub fn prefixes(&self) -> impl Iterator<Item = &Name> {
        self.rrs
            .iter()
            .filter(|(_, rr)| rr.routes > 0)
            .map(|(n, _)| n)
    }

    /// Commands sent so far.
    pub fn sent(&self) -> u64 {
        self.counters.sent
    }

    /// The commands' counters.
    pub fn counters(&self) -> ReadvertiseCounters {
        self.counters
    }

    /// Takes the RIB's route events, the destination's availability now and the time, and
    /// answers the commands to send now, in order: first commands, retries of failed ones
    /// (refused, or unanswered past their lifetime) and refreshes. Each must be sent with
    /// [`Readvertise::interest`], which notes it in flight.
    pub fn update(
        &mut self,
        events: &[RouteEvent],
        available: bool,
        now_ms: u64,
    ) -> Vec<NlsrCommand> {
        let min = self.retry_min_ms;
        for e in events.iter().filter(|e| e.origin == CLIENT_ORIGIN) {
            if e.added {
                let rr = self.rrs.entry(e.name.clone()).or_insert(Readvertised {
                    routes: 0,
                    next_at_ms: None,
                    retry_delay_ms: min,
                    in_flight: None,
                });
                rr.routes += 1;
                if rr.routes == 1 {
                    rr.due_now(now_ms, min);
                }
            } else if let Some(rr) = self.rrs.get_mut(&e.name) {
                if rr.routes == 0 {
                    continue;
                }
                rr.routes -= 1;
                if rr.routes == 0 {
                    rr.due_now(now_ms, min);
                }
            }
        }
        if available != self.available {
            self.available = available;
            if available {
                self.rrs.values_mut().for_each(|rr| rr.due_now(now_ms, min));
            } else {
                self.rrs.retain(|_, rr| rr.routes > 0);
                for rr in self.rrs.values_mut() {
                    rr.next_at_ms = None;
                    rr.in_flight = None;
                }
            }
        }
        if !self.available {
            // Nothing is sent; a prefix that lost its last route is simply forgotten.
            self.rrs.retain(|_, rr| rr.routes > 0);
            self.rrs.values_mut().for_each(|rr| rr.next_at_ms = None);
            return Vec::new();
        }
        let mut out = Vec::new();
        for (name, rr) in &mut self.rrs {
            if rr
                .in_flight
                .as_ref()
                .is_some_and(|f| f.deadline_ms <= now_ms)
            {
                self.counters.timed_out += 1;
                rr.failed(now_ms);
            }
            if rr.next_at_ms.is_some_and(|t| t <= now_ms) {
                rr.next_at_ms = None;
                out.push(NlsrCommand {
                    register: rr.routes > 0,
                    prefix: name.clone(),
                });
            }
        }
        out
    }

    /// NLSR's answer to a command: the Data's name and its ControlResponse's status code
    /// (`None`: the content is no ControlResponse, a failure). Answers no command awaits
    /// (late, or of a command replaced since) are ignored. True if it answered one.
    pub fn on_reply(&mut self, name: &Name, code: Option<u64>, now_ms: u64) -> bool {
        let Some((prefix, rr)) = self
            .rrs
            .iter_mut()
            .find(|(_, rr)| rr.in_flight.as_ref().is_some_and(|f| &f.name == name))
        else {
            return false;
        };
        let register = rr.in_flight.as_ref().is_some_and(|f| f.register);
        match code {
            Some(c) if c < 400 => {
                self.counters.succeeded += 1;
                rr.in_flight = None;
                rr.retry_delay_ms = self.retry_min_ms;
                if register {
                    rr.next_at_ms = Some(now_ms + REFRESH_MS);
                } else {
                    let prefix = prefix.clone();
                    self.rrs.remove(&prefix);
                }
            }
            _ => {
                self.counters.refused += 1;
                rr.failed(now_ms);
            }
        }
        true
    }

    /// The signed command Interest for `c` (`wall_ms`: the SignatureTime), counted as sent
    /// and awaiting its answer until `now_ms` + [`COMMAND_LIFETIME_MS`].
    pub fn interest(&mut self, c: &NlsrCommand, now_ms: u64, wall_ms: u64) -> Vec<u8> {
        self.counters.sent += 1;
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
        let wire = i.to_wire();
        // The answer is named as the Interest, its parameters digest included.
        let full = InterestView::decode(&wire, &Limits::default()).map(|v| v.name().to_name());
        if let (Some(rr), Ok(name)) = (self.rrs.get_mut(&c.prefix), full) {
            rr.in_flight = Some(InFlight {
                name,
                register: c.register,
                deadline_ms: now_ms + COMMAND_LIFETIME_MS,
            });
        }
        wire
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

    /// Sends the commands due at `now`: their names (the answers' names), in order.
    fn send(rv: &mut Readvertise, v: &[NlsrCommand], now: u64) -> Vec<Name> {
        v.iter()
            .map(|c| {
                let w = rv.interest(c, now, 1_700_000_000_000 + now);
                let i = InterestView::decode(&w, &Limits::default()).unwrap();
                i.name().to_name()
            })
            .collect()
    }

    #[test]
    fn client_routes_are_advertised_once_and_withdrawn_with_the_last() {
        let mut rv = Readvertise::default();
        // Destination unavailable: counted, nothing sent.
        assert!(rv.update(&[ev("/a", 65, true)], false, 0).is_empty());
        // It becomes available: /a goes out.
        let v = rv.update(&[], true, 10);
        assert_eq!(cmds(&v), [(true, "/a".into())]);
        let a = send(&mut rv, &v, 10);
        assert!(rv.on_reply(&a[0], Some(200), 15));
        // Other origins are not readvertised; a second client route of /a sends nothing.
        let v = rv.update(&[ev("/b", 0, true), ev("/a", 65, true)], true, 20);
        assert!(v.is_empty());
        let v = rv.update(&[ev("/c", 65, true)], true, 30);
        assert_eq!(cmds(&v), [(true, "/c".into())]);
        let c = send(&mut rv, &v, 30);
        assert!(rv.on_reply(&c[0], Some(200), 30));
        assert!(rv.update(&[ev("/a", 65, false)], true, 40).is_empty());
        let v = rv.update(&[ev("/a", 65, false)], true, 50);
        assert_eq!(cmds(&v), [(false, "/a".into())]);
        let w = send(&mut rv, &v, 50);
        assert_eq!(
            rv.prefixes().map(|n| n.to_string()).collect::<Vec<_>>(),
            ["/c"]
        );
        // An answer to nothing in flight is ignored; the withdrawal's success forgets /a.
        assert!(!rv.on_reply(&a[0], Some(200), 60));
        assert!(rv.on_reply(&w[0], Some(200), 60));
        // Refresh an hour after /c's successful advertisement.
        assert!(rv.update(&[], true, 30 + REFRESH_MS - 1).is_empty());
        let v = rv.update(&[], true, 30 + REFRESH_MS);
        assert_eq!(cmds(&v), [(true, "/c".into())]);
        // Unavailable: a withdrawal is not sent, and no refresh either.
        assert!(rv.update(&[], false, 3 * REFRESH_MS).is_empty());
        assert!(rv
            .update(&[ev("/c", 65, false)], false, 3 * REFRESH_MS)
            .is_empty());
        assert_eq!(rv.prefixes().count(), 0);
        assert_eq!(rv.counters().succeeded, 3);
    }

    #[test]
    fn a_refused_or_unanswered_command_is_retried_with_a_doubling_delay() {
        let mut rv = Readvertise::default();
        let v = rv.update(&[ev("/a", 65, true)], true, 0);
        let n = send(&mut rv, &v, 0);
        // Unanswered: failed at its lifetime's end, retried 100 s later (50 s doubled).
        assert!(rv.update(&[], true, COMMAND_LIFETIME_MS - 1).is_empty());
        assert!(rv.update(&[], true, COMMAND_LIFETIME_MS).is_empty());
        assert_eq!(rv.counters().timed_out, 1);
        let t1 = COMMAND_LIFETIME_MS + 2 * RETRY_DELAY_MIN_MS;
        assert!(rv.update(&[], true, t1 - 1).is_empty());
        let v = rv.update(&[], true, t1);
        assert_eq!(cmds(&v), [(true, "/a".into())]);
        // The first command's late answer is ignored.
        assert!(!rv.on_reply(&n[0], Some(200), t1));
        let n = send(&mut rv, &v, t1);
        // Refused: retried after 200 s.
        assert!(rv.on_reply(&n[0], Some(504), t1 + 5));
        let t2 = t1 + 5 + 4 * RETRY_DELAY_MIN_MS;
        assert!(rv.update(&[], true, t2 - 1).is_empty());
        let v = rv.update(&[], true, t2);
        let n = send(&mut rv, &v, t2);
        // No ControlResponse is a failure too; the delay stops at an hour.
        assert!(rv.on_reply(&n[0], None, t2));
        let mut t = t2;
        for _ in 0..10 {
            t += RETRY_DELAY_MAX_MS;
            let v = rv.update(&[], true, t);
            assert_eq!(v.len(), 1, "a retry at most an hour later");
            let n = send(&mut rv, &v, t);
            assert!(rv.on_reply(&n[0], Some(500), t));
        }
        // Success: the next one is the hourly refresh, and the delay starts again at 50 s.
        t += RETRY_DELAY_MAX_MS;
        let v = rv.update(&[], true, t);
        let n = send(&mut rv, &v, t);
        assert!(rv.on_reply(&n[0], Some(200), t));
        let v = rv.update(&[], true, t + REFRESH_MS);
        let n = send(&mut rv, &v, t + REFRESH_MS);
        assert!(rv.on_reply(&n[0], Some(503), t + REFRESH_MS));
        let v = rv.update(&[], true, t + REFRESH_MS + 2 * RETRY_DELAY_MIN_MS);
        assert_eq!(cmds(&v), [(true, "/a".into())]);
        let c = rv.counters();
        assert_eq!((c.refused, c.timed_out, c.succeeded), (13, 1, 1));
        assert_eq!(c.sent, 15);
    }

    #[test]
    fn withdrawals_are_retried_and_the_destination_appearing_advertises_everything() {
        let mut rv = Readvertise::with_retry_delay(1_000);
        let v = rv.update(&[ev("/a", 65, true), ev("/b", 65, true)], true, 0);
        assert_eq!(cmds(&v), [(true, "/a".into()), (true, "/b".into())]);
        let n = send(&mut rv, &v, 0);
        assert!(rv.on_reply(&n[0], Some(200), 1) && rv.on_reply(&n[1], Some(200), 1));
        // /b's withdrawal is refused, retried after 2 s.
        let v = rv.update(&[ev("/b", 65, false)], true, 10);
        let n = send(&mut rv, &v, 10);
        assert!(rv.on_reply(&n[0], Some(404), 10));
        let v = rv.update(&[], true, 2_010);
        assert_eq!(cmds(&v), [(false, "/b".into())]);
        send(&mut rv, &v, 2_010);
        // NLSR goes: the withdrawal is forgotten, no retry or refresh of /a.
        assert!(rv.update(&[], false, 2_020).is_empty());
        assert!(rv.update(&[], false, 2 * REFRESH_MS).is_empty());
        // NLSR comes back: /a is advertised at once; an unanswered one is retried after 2 s.
        let t = 2 * REFRESH_MS + 1;
        let v = rv.update(&[], true, t);
        assert_eq!(cmds(&v), [(true, "/a".into())]);
        send(&mut rv, &v, t);
        let t = t + COMMAND_LIFETIME_MS;
        assert!(rv.update(&[], true, t).is_empty());
        assert_eq!(
            cmds(&rv.update(&[], true, t + 2_000)),
            [(true, "/a".into())]
        );
    }

    #[test]
    fn command_interests_are_signed_rib_commands() {
        let mut rv = Readvertise::default();
        let c = NlsrCommand {
            register: true,
            prefix: Name::from_uri("/ndn/grp").unwrap(),
        };
        let a = rv.interest(&c, 0, 1_700_000_000_000);
        let b = rv.interest(&c, 0, 1_700_000_000_000);
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
