//! Readvertising to NLSR, as NFD's `readvertise_nlsr` does (its `Readvertise` with the
//! client-to-NLSR policy and the NFD-RIB destination at `/localhost/nlsr`), and prefix
//! propagation to a hub, as NFD's `auto_prefix_propagate` does (the same `Readvertise` with
//! the host-to-gateway policy and the NFD-RIB destination at `/localhop/nfd`,
//! [`Readvertise::host_to_gateway`]).
//!
//! Propagation differs in these points (NFD 24.07's host-to-gateway policy):
//! - the prefix advertised for a route is the shortest identity of the key chain that is a
//!   prefix of the route's name (an identity ending in `nrd` stands for its name without it),
//!   of any origin; routes under `/localhost` and of `/localhop/nfd` itself are not; a route no
//!   identity covers is not propagated;
//! - the command is `/localhop/nfd/rib/register` (or `unregister`) with Name, Cost (15 by
//!   default) and Origin client (65), signed by that identity's default key
//!   ([`crate::keychain`]), sent to the next hops of `/localhop/nfd/rib`;
//! - it is refreshed every 25 s by default (NFD's `refresh_interval`), its answer awaited for
//!   10 s (`timeout`);
//! - the destination is available while the RIB has a route of a prefix of `/localhop/nfd`
//!   (as NFD's NFD-RIB destination: a default route `/` makes it so too).
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
//!   schedule). As NFD's `randomizeTimer`, every refresh and retry delay is moved by a
//!   uniform jitter of -5 to +5 ms ([`Jitter`], injectable for tests).
//! - Destination: available while the RIB has a route of a prefix of `/localhost/nlsr` (NLSR
//!   registered it). When it becomes available, every prefix counted is advertised; when it
//!   goes, retries and refreshes stop, the prefixes waiting for a withdrawal are forgotten,
//!   and while it is away nothing is sent.
//!
//! The commands are v0.3 signed Interests (to NLSR DigestSha256, which NLSR's validator must
//! accept; to a hub by the identity's key) sent to the next hops of `/localhost/nlsr` (what `/localhost`'s
//! multicast strategy does with the Interest NFD's RIB service sends). NLSR's answer Data,
//! named as the command, reaches management through the I/O loop (a Data under
//! `/localhost/nlsr/rib/register` or `unregister` from a local face goes to management, not
//! to the workers); its signature is not verified.

use std::collections::BTreeMap;
use std::sync::Arc;

use wire::data::signature_type;
use wire::nfd::ControlParameters;
use wire::{Component, Interest, InterestView, Limits, Name, SignatureInfo};

use super::{RouteEvent, CLIENT_ORIGIN};
use crate::keychain::{digest_sign_interest, Signer};

/// The prefix a hub serves its neighbours' RIB commands under.
pub const LOCALHOP_PREFIX: &str = "/localhop/nfd";

/// The cost of a propagated route at the hub (NFD's `PROPAGATE_DEFAULT_COST`).
pub const PROPAGATE_COST: u64 = 15;

/// How long a propagation command's answer is awaited (NFD's `PROPAGATE_DEFAULT_TIMEOUT`).
pub const PROPAGATE_TIMEOUT_MS: u64 = 10_000;

/// How often a propagated prefix is registered again (NFD's host-to-gateway policy's
/// default `refresh_interval`: 25 s).
pub const PROPAGATE_REFRESH_MS: u64 = 25_000;

/// An identity name's last component that stands for no part of the prefix (NFD's `nrd`).
const IGNORED_COMPONENT: &[u8] = b"nrd";

/// The host-to-gateway policy: the key chain's identities and the commands' cost.
#[derive(Debug, Clone)]
pub struct HostToGateway {
    /// Each identity's prefix (its name, a last `nrd` left out) and its default key.
    pub identities: Vec<(Name, Arc<Signer>)>,
    /// The Cost of the routes registered at the hub.
    pub cost: u64,
}

impl HostToGateway {
    /// The prefix a route of `name` propagates: the shortest identity prefix of `name`.
    fn prefix_of(&self, name: &Name) -> Option<&(Name, Arc<Signer>)> {
        let localhost = Name::from_uri("/localhost").expect("a valid name");
        let localhop = Name::from_uri(LOCALHOP_PREFIX).expect("a valid name");
        if localhost.is_prefix_of(name) || *name == localhop {
            return None;
        }
        self.identities
            .iter()
            .filter(|(p, _)| p.is_prefix_of(name))
            .min_by_key(|(p, _)| p.len())
    }

    /// An identity's prefix: its name, a last `nrd` component left out.
    pub fn identity_prefix(identity: &Name) -> Name {
        match identity.components.last() {
            Some(c) if c.value == IGNORED_COMPONENT && c.typ == 8 => {
                identity.prefix(identity.len() - 1)
            }
            _ => identity.clone(),
        }
    }
}

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
    /// after it, moved by `jitter_ms`.
    fn failed(&mut self, now_ms: u64, jitter_ms: i64) {
        self.in_flight = None;
        self.retry_delay_ms = self
            .retry_delay_ms
            .saturating_mul(2)
            .min(RETRY_DELAY_MAX_MS);
        self.next_at_ms = Some(now_ms + self.retry_delay_ms.saturating_add_signed(jitter_ms));
    }
}

/// The largest jitter, either way, added to a refresh or retry delay (NFD's
/// `randomizeTimer`: a uniform integer of -5 to 5 ms).
pub const JITTER_MAX_MS: i64 = 5;

/// The random source of the delays' jitter: a state and a draw from it, clamped to
/// ±[`JITTER_MAX_MS`]. [`Jitter::random`] in service; tests inject their own draw.
#[derive(Debug, Clone, Copy)]
pub struct Jitter {
    state: u64,
    draw: fn(&mut u64) -> i64,
}

impl Jitter {
    /// Uniform jitter from a seed drawn from the system's random source.
    pub fn random() -> Self {
        use ring::rand::SecureRandom;
        let mut seed = [0u8; 8];
        // Without a system random source, the jitter is still uniform, from seed 0.
        let _ = ring::rand::SystemRandom::new().fill(&mut seed);
        Jitter::seeded(u64::from_le_bytes(seed))
    }

    /// Uniform jitter of -5 to 5 ms from `seed` (the same seed, the same sequence).
    pub fn seeded(seed: u64) -> Self {
        Jitter {
            state: seed,
            draw: |s| {
                *s = s.wrapping_add(1);
                (splitmix(*s) % (2 * JITTER_MAX_MS as u64 + 1)) as i64 - JITTER_MAX_MS
            },
        }
    }

    /// Jitter from `draw`, called with a state that starts at 0 (tests: a fixed value).
    pub fn from_fn(draw: fn(&mut u64) -> i64) -> Self {
        Jitter { state: 0, draw }
    }

    /// The next jitter, in milliseconds.
    pub fn next_ms(&mut self) -> i64 {
        (self.draw)(&mut self.state).clamp(-JITTER_MAX_MS, JITTER_MAX_MS)
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
    /// `None`: to NLSR; else propagation to a hub.
    gateway: Option<HostToGateway>,
    refresh_ms: u64,
    lifetime_ms: u64,
    rrs: BTreeMap<Name, Readvertised>,
    available: bool,
    retry_min_ms: u64,
    counters: ReadvertiseCounters,
    seq: u64,
    jitter: Jitter,
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
            gateway: None,
            refresh_ms: REFRESH_MS,
            lifetime_ms: COMMAND_LIFETIME_MS,
            rrs: BTreeMap::new(),
            available: false,
            retry_min_ms: retry_min_ms.clamp(1, RETRY_DELAY_MAX_MS),
            counters: ReadvertiseCounters::default(),
            seq: 0,
            jitter: Jitter::random(),
        }
    }

    /// The same, its delays' jitter drawn from `jitter` (tests: a fixed one).
    pub fn with_jitter(self, jitter: Jitter) -> Self {
        Readvertise { jitter, ..self }
    }

    /// Propagation to a hub with `policy`, each command awaited `timeout_ms`, each prefix
    /// registered again every `refresh_ms` (at least 1 ms each), the first retry delay
    /// `retry_min_ms` (NFD: [`RETRY_DELAY_MIN_MS`]).
    pub fn host_to_gateway(
        policy: HostToGateway,
        timeout_ms: u64,
        refresh_ms: u64,
        retry_min_ms: u64,
    ) -> Self {
        Readvertise {
            nlsr: Name::from_uri(LOCALHOP_PREFIX).expect("a valid name"),
            gateway: Some(policy),
            refresh_ms: refresh_ms.max(1),
            lifetime_ms: timeout_ms.max(1),
            ..Readvertise::with_retry_delay(retry_min_ms)
        }
    }

    /// The destination's prefix (`/localhost/nlsr`, or `/localhop/nfd` for propagation).
    pub fn destination(&self) -> &Name {
        &self.nlsr
    }

    /// The prefix a route event counts toward, if any.
    fn target(&self, e: &RouteEvent) -> Option<Name> {
        match &self.gateway {
            None => (e.origin == CLIENT_ORIGIN).then(|| e.name.clone()),
            Some(g) => g.prefix_of(&e.name).map(|(p, _)| p.clone()),
        }
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
        let targets: Vec<(bool, Name)> = events
            .iter()
            .filter_map(|e| Some((e.added, self.target(e)?)))
            .collect();
        for (added, target) in targets {
            if added {
                let rr = self.rrs.entry(target).or_insert(Readvertised {
                    routes: 0,
                    next_at_ms: None,
                    retry_delay_ms: min,
                    in_flight: None,
                });
                rr.routes += 1;
                if rr.routes == 1 {
                    rr.due_now(now_ms, min);
                }
            } else if let Some(rr) = self.rrs.get_mut(&target) {
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
                rr.failed(now_ms, self.jitter.next_ms());
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
                    let at = now_ms + self.refresh_ms;
                    rr.next_at_ms = Some(at.saturating_add_signed(self.jitter.next_ms()));
                } else {
                    let prefix = prefix.clone();
                    self.rrs.remove(&prefix);
                }
            }
            _ => {
                self.counters.refused += 1;
                rr.failed(now_ms, self.jitter.next_ms());
            }
        }
        true
    }

    /// The signed command Interest for `c` (`wall_ms`: the SignatureTime), counted as sent
    /// and awaiting its answer until `now_ms` + the command lifetime ([`COMMAND_LIFETIME_MS`],
    /// or the propagation timeout). To NLSR: signed DigestSha256, ControlParameters the Name;
    /// to a hub: signed by the prefix's identity, with Cost and Origin client too.
    pub fn interest(&mut self, c: &NlsrCommand, now_ms: u64, wall_ms: u64) -> Vec<u8> {
        self.counters.sent += 1;
        self.seq += 1;
        let mut params = ControlParameters {
            name: Some(c.prefix.clone()),
            ..ControlParameters::default()
        };
        let signer = self.gateway.as_ref().map(|g| {
            // `rib/unregister` takes no Cost (ndn-cxx's command definition).
            params.cost = c.register.then_some(g.cost);
            params.origin = Some(CLIENT_ORIGIN);
            g.identities
                .iter()
                .find(|(p, _)| *p == c.prefix)
                .map(|(_, s)| s.clone())
        });
        let mut cp = Vec::new();
        params.encode(&mut cp);
        let verb = if c.register { "register" } else { "unregister" };
        let name = self
            .nlsr
            .clone()
            .with_str("rib")
            .with_str(verb)
            .with(Component::generic(cp));
        let mix = splitmix(wall_ms ^ self.seq.rotate_left(32));
        let nonce = (mix >> 32) as u32;
        let mut i = Interest::new(name, nonce.to_be_bytes());
        i.lifetime_ms = Some(self.lifetime_ms);
        let mut sig_info = SignatureInfo {
            signature_type: signature_type::DIGEST_SHA256,
            ..SignatureInfo::default()
        };
        if let Some(Some(s)) = &signer {
            sig_info = s.signature_info();
        }
        sig_info.nonce = Some(mix.to_be_bytes().to_vec());
        sig_info.time_ms = Some(wall_ms);
        match signer.flatten() {
            Some(s) if s.sign_interest(&mut i, sig_info.clone()).is_ok() => {}
            _ => digest_sign_interest(&mut i, sig_info),
        }
        let wire = i.to_wire();
        // The answer is named as the Interest, its parameters digest included.
        let full = InterestView::decode(&wire, &Limits::default()).map(|v| v.name().to_name());
        if let (Some(rr), Ok(name)) = (self.rrs.get_mut(&c.prefix), full) {
            rr.in_flight = Some(InFlight {
                name,
                register: c.register,
                deadline_ms: now_ms + self.lifetime_ms,
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

    fn no_jitter() -> Jitter {
        Jitter::from_fn(|_| 0)
    }

    #[test]
    fn refreshes_and_retries_move_by_the_injected_jitter_within_5_ms() {
        for (draw, j) in [(Jitter::from_fn(|_| 5), 5), (Jitter::from_fn(|_| -9), -5)] {
            let mut rv = Readvertise::with_retry_delay(1_000).with_jitter(draw);
            let v = rv.update(&[ev("/a", 65, true)], true, 0);
            let n = send(&mut rv, &v, 0);
            // Refused: retried 2 s later, moved by the jitter (a draw past 5 ms is clamped).
            assert!(rv.on_reply(&n[0], Some(500), 0));
            let t = (2_000 + j) as u64;
            assert!(rv.update(&[], true, t - 1).is_empty());
            let v = rv.update(&[], true, t);
            assert_eq!(cmds(&v), [(true, "/a".into())]);
            // Accepted: refreshed an hour later, moved by the jitter.
            let n = send(&mut rv, &v, t);
            assert!(rv.on_reply(&n[0], Some(200), t));
            let r = (t + REFRESH_MS).saturating_add_signed(j);
            assert!(rv.update(&[], true, r - 1).is_empty());
            assert_eq!(rv.update(&[], true, r).len(), 1);
        }
    }

    #[test]
    fn seeded_jitter_is_uniform_over_minus_5_to_5_ms_and_repeatable() {
        let mut a = Jitter::seeded(7);
        let mut b = Jitter::seeded(7);
        let mut seen = [0u32; 11];
        for _ in 0..11_000 {
            let j = a.next_ms();
            assert_eq!(j, b.next_ms());
            seen[(j + JITTER_MAX_MS) as usize] += 1;
        }
        // Every value drawn, none more than twice as often as another.
        let (lo, hi) = (seen.iter().min().unwrap(), seen.iter().max().unwrap());
        assert!(*lo > 0 && *hi < 2 * *lo, "{seen:?}");
        // Another seed, another sequence.
        let mut c = Jitter::seeded(8);
        let (x, y): (Vec<i64>, Vec<i64>) = (0..32).map(|_| (a.next_ms(), c.next_ms())).unzip();
        assert_ne!(x, y);
    }

    #[test]
    fn client_routes_are_advertised_once_and_withdrawn_with_the_last() {
        let mut rv = Readvertise::default().with_jitter(no_jitter());
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
        let mut rv = Readvertise::default().with_jitter(no_jitter());
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
        let mut rv = Readvertise::with_retry_delay(1_000).with_jitter(no_jitter());
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
