//! Who may send which control command: NFD's `authorizations` section and its
//! `CommandAuthenticator`, with ndn-cxx's command-Interest rules.
//!
//! Each module (`faces`, `fib`, `cs`, `strategy-choice`, and Cascade's `rib`) is granted to
//! signers by `authorize` entries ([`Authorize`]): `certfile any`, or one certificate (a trust
//! anchor, [`Certificate`]). What a command must pass, as NFD 24.07 checks it:
//!
//! - a module granted to `any` accepts every command, signed or not (ndn-cxx's
//!   `ValidationPolicyAcceptAll`: no signature, time or replay check at all);
//! - otherwise the command Interest must carry a signing time (SignatureTime in a v0.3 signed
//!   Interest, the timestamp component in the old form), else 403; a readable SignatureInfo with
//!   a KeyLocator that is a Name (a DigestSha256 signature stands for the key
//!   `/localhost/identity/digest-sha256`), else no answer at all (NFD does not spend a signature
//!   on a clearly malformed command); a time within [`GRACE_MS`] of the router's clock and
//!   later than the last command accepted from that key for that module, else 403 (an exact
//!   replay has the same time: refused); a certificate granted the module whose name the
//!   KeyLocator is a prefix of, and a signature that key verifies, else 403;
//! - a module no entry names is granted to nobody: every command fails (403, or no answer when
//!   malformed), except `rib`, which NFD authorizes in its `rib` section instead
//!   (`localhost_security`, whose default trusts any signer): left out of every entry, `rib`
//!   accepts everything; named in an entry, it is checked as the others, and every failure is
//!   answered 403 as NFD's RIB manager answers.
//!
//! The last time accepted per key and module is kept as ndn-cxx keeps it: at most
//! [`MAX_RECORDS`] keys (the least recently refreshed goes first, counted), each forgotten
//! [`RECORD_LIFETIME_MS`] after its last refresh, recorded only once the command is accepted.
//! Refused commands are counted by reason ([`Refused`]).

pub mod chain;
#[cfg(test)]
pub(crate) mod chain_tests;
mod key;
pub mod policy;
pub mod regex;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::VecDeque;
use std::sync::Arc;

pub use chain::{Decided, Fetch, Origin, FETCH_TOKEN};
pub(crate) use key::{der, read_spki, Alg};
pub use key::{iso_ms, ms_iso, p256_spki, Certificate};
use wire::{InterestView, Name};

/// How far a command's signing time may be from the router's clock, either way (ndn-cxx's
/// `gracePeriod`: 2 minutes).
pub const GRACE_MS: u64 = 120_000;

/// How many signers' last times are kept per module (ndn-cxx's `maxRecords`).
pub const MAX_RECORDS: usize = 1000;

/// How long a signer's last time is kept after it was last refreshed (ndn-cxx's
/// `recordLifetime`: 1 hour).
pub const RECORD_LIFETIME_MS: u64 = 3_600_000;

/// The modules an `authorize` entry may grant, as NFD's managers declare them (and `rib`).
pub const MODULES: [&str; 5] = ["faces", "fib", "cs", "strategy-choice", "rib"];

/// Index of `rib` in [`MODULES`].
const RIB: usize = 4;

/// The key a DigestSha256 signature stands for (ndn-cxx's `getDigestSha256Identity`).
const DIGEST_SHA256_KEY: &str = "/localhost/identity/digest-sha256";

/// One `authorize` entry: a signer and the modules granted to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorize {
    /// The signer's certificate; `None` for `certfile any`.
    pub cert: Option<Certificate>,
    /// The modules granted (names from [`MODULES`]).
    pub privileges: Vec<String>,
}

/// What to do with a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Go on with it.
    Accept,
    /// Answer 403 "authorization rejected".
    Reject,
    /// Drop it without an answer (its signature is malformed).
    Drop,
    /// Wait: its signer's certificate chain is being fetched ([`chain`]); the decision comes
    /// later ([`Authorizations::take_decided`]).
    Pending,
}

/// Commands refused, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refused {
    /// No signing time (SignatureTime, or the old form's timestamp component).
    pub no_time: u64,
    /// SignatureInfo unreadable, or no KeyLocator name (dropped without an answer).
    pub malformed: u64,
    /// Signing time outside the grace period.
    pub stale: u64,
    /// Signing time equal to the last accepted from that key (a replay).
    pub replay: u64,
    /// Signing time before the last accepted from that key.
    pub reordered: u64,
    /// No certificate granted the module matches the KeyLocator.
    pub unknown_key: u64,
    /// The signature does not verify with the certificate's key.
    pub bad_signature: u64,
    /// Signers' last times forgotten to make room ([`MAX_RECORDS`]).
    pub records_evicted: u64,
    /// No rule is for the command, or its checkers refuse it ([`policy`]).
    pub policy: u64,
    /// Too many commands waiting for their chains ([`chain::MAX_PENDING`]).
    pub pending_full: u64,
    /// A certificate fetched unreadable, expired, refused by the rules or seen twice.
    pub bad_certificate: u64,
    /// No trust anchor within [`chain::MAX_DEPTH`] certificates.
    pub chain_too_long: u64,
    /// A certificate not fetched (timeouts or Nacks past the retries).
    pub certificate_unreachable: u64,
    /// Verified certificates forgotten to make room ([`chain::MAX_CACHED`]).
    pub cache_evicted: u64,
}

impl Refused {
    /// The counts of `self` and `r` added, reason by reason.
    pub fn plus(self, r: Refused) -> Refused {
        Refused {
            no_time: self.no_time + r.no_time,
            malformed: self.malformed + r.malformed,
            stale: self.stale + r.stale,
            replay: self.replay + r.replay,
            reordered: self.reordered + r.reordered,
            unknown_key: self.unknown_key + r.unknown_key,
            bad_signature: self.bad_signature + r.bad_signature,
            records_evicted: self.records_evicted + r.records_evicted,
            policy: self.policy + r.policy,
            pending_full: self.pending_full + r.pending_full,
            bad_certificate: self.bad_certificate + r.bad_certificate,
            chain_too_long: self.chain_too_long + r.chain_too_long,
            certificate_unreachable: self.certificate_unreachable + r.certificate_unreachable,
            cache_evicted: self.cache_evicted + r.cache_evicted,
        }
    }

    /// The reasons and their counts, named as the metrics label them.
    pub fn by_reason(&self) -> [(&'static str, u64); 12] {
        [
            ("no_time", self.no_time),
            ("malformed", self.malformed),
            ("stale", self.stale),
            ("replay", self.replay),
            ("reordered", self.reordered),
            ("unknown_key", self.unknown_key),
            ("bad_signature", self.bad_signature),
            ("policy", self.policy),
            ("pending_full", self.pending_full),
            ("bad_certificate", self.bad_certificate),
            ("chain_too_long", self.chain_too_long),
            ("certificate_unreachable", self.certificate_unreachable),
        ]
    }

    /// What the authorizations forgot to stay within their bounds, named as the metrics label
    /// it: signers' last times and verified certificates. These are no refusals (a forgotten
    /// signer or certificate is checked again when it next comes).
    pub fn evictions(&self) -> [(&'static str, u64); 2] {
        [
            ("signer_records", self.records_evicted),
            ("certificates", self.cache_evicted),
        ]
    }
}

/// One module's grant.
#[derive(Debug, Clone)]
enum Grant {
    /// `certfile any`.
    Any,
    /// Any signer, the command-Interest rules still applying (a validator whose trust anchor
    /// is `type any`: ndn-cxx's command-Interest policy around a policy that bypasses the
    /// signature).
    AnySigner,
    /// These certificates (none: nobody).
    Anchors(Vec<Arc<Certificate>>),
}

/// A signer's last accepted time for one module.
#[derive(Debug, Clone)]
struct Record {
    module: usize,
    key: Name,
    time_ms: u64,
    refreshed_ms: u64,
}

/// The authorizations in force and the command-Interest state.
#[derive(Debug, Clone)]
pub struct Authorizations {
    grants: [Grant; MODULES.len()],
    /// Oldest refresh first; at most [`MAX_RECORDS`] per module.
    records: VecDeque<Record>,
    refused: Refused,
    /// `localhop_security`'s rules, when it has some ([`Authorizations::localhop_with`]).
    policy: Option<Arc<policy::Policy>>,
    /// Certificate chains being fetched, and those verified.
    chains: chain::Chains,
}

impl Default for Authorizations {
    /// NFD's default: `certfile any` for every module.
    fn default() -> Self {
        Authorizations {
            grants: std::array::from_fn(|_| Grant::Any),
            records: VecDeque::new(),
            refused: Refused::default(),
            policy: None,
            chains: chain::Chains::default(),
        }
    }
}

impl Authorizations {
    /// The authorizations `entries` grant; the error names an unknown module. No entry: the
    /// default (everything to `any`).
    pub fn new(entries: Vec<Authorize>) -> Result<Self, String> {
        if entries.is_empty() {
            return Ok(Self::default());
        }
        let mut grants: [Grant; MODULES.len()] =
            std::array::from_fn(|_| Grant::Anchors(Vec::new()));
        grants[RIB] = Grant::Any;
        let mut rib_named = false;
        for (i, e) in entries.into_iter().enumerate() {
            let cert = e.cert.map(Arc::new);
            for p in &e.privileges {
                let m = MODULES.iter().position(|m| m == p).ok_or_else(|| {
                    format!("unknown module {p:?} under authorize[{i}] (one of {MODULES:?})")
                })?;
                if m == RIB && !rib_named {
                    rib_named = true;
                    grants[RIB] = Grant::Anchors(Vec::new());
                }
                match (&mut grants[m], &cert) {
                    (g, None) => *g = Grant::Any,
                    (Grant::Anchors(a), Some(c)) => a.push(c.clone()),
                    (Grant::Any | Grant::AnySigner, Some(_)) => {}
                }
            }
        }
        Ok(Authorizations {
            grants,
            ..Self::default()
        })
    }

    /// NFD's `localhop_security` for the `rib` module (`/localhop/nfd/rib/...` from
    /// neighbours), as NFD's RIB manager validates them with ndn-cxx's `ValidatorConfig`: the
    /// command-Interest rules (signing time, grace period, replay) always; then the signature,
    /// with the key of a trust anchor the KeyLocator designates (`anchors`), or none at all
    /// (`None`: `trust-anchor { type any }`). Every refusal is answered 403. Certificates the
    /// trust anchors did not sign themselves are not fetched: the KeyLocator must name a trust
    /// anchor.
    pub fn localhop(anchors: Option<Vec<Certificate>>) -> Self {
        let mut a = Authorizations {
            grants: std::array::from_fn(|_| Grant::Anchors(Vec::new())),
            ..Self::default()
        };
        a.grants[RIB] = match anchors {
            None => Grant::AnySigner,
            Some(c) => Grant::Anchors(c.into_iter().map(Arc::new).collect()),
        };
        a
    }

    /// Commands refused so far, by reason.
    pub fn refused(&self) -> Refused {
        self.refused
    }

    /// Adds `r` to the counts of refusals (those of the authorizations this replaces).
    pub fn add_refused(&mut self, r: Refused) {
        self.refused = self.refused.plus(r);
    }

    /// Whether `module` accepts any command unchecked (`certfile any`; a module granted to any
    /// signer under [`Authorizations::localhop`] is not open: its commands' times are checked).
    pub fn is_open(&self, module: &str) -> bool {
        MODULES
            .iter()
            .position(|m| *m == module)
            .is_none_or(|m| matches!(self.grants[m], Grant::Any))
    }

    /// Judges a command for `module` (`interest`: the command Interest), at `wall_ms`
    /// (milliseconds since the Unix epoch) and `now_ms` (a monotonic clock, for the records'
    /// lifetime). A module not in [`MODULES`] is not judged here (NFD has no such command).
    pub fn check(
        &mut self,
        module: &str,
        interest: &InterestView<'_>,
        wall_ms: u64,
        now_ms: u64,
    ) -> Verdict {
        let Some(m) = MODULES.iter().position(|x| *x == module) else {
            return Verdict::Accept;
        };
        let anchors = match &self.grants[m] {
            Grant::Any => return Verdict::Accept,
            Grant::AnySigner => None,
            Grant::Anchors(a) => Some(a.clone()),
        };
        let verdict = self.check_signed(m, anchors.as_deref(), interest, wall_ms, now_ms);
        // NFD's RIB manager answers every refusal.
        if m == RIB && verdict == Verdict::Drop {
            return Verdict::Reject;
        }
        verdict
    }

    /// The command-Interest rules, then the signature, for module `m` (`anchors`: `None` for
    /// any signer, the signature unchecked).
    fn check_signed(
        &mut self,
        m: usize,
        anchors: Option<&[Arc<Certificate>]>,
        interest: &InterestView<'_>,
        wall_ms: u64,
        now_ms: u64,
    ) -> Verdict {
        let (s, key) = match self.command_checks(m, interest, wall_ms, now_ms) {
            Ok(x) => x,
            Err(v) => return v,
        };
        if let Some(anchors) = anchors {
            let Some(cert) = anchors.iter().find(|c| c.designated_by(&key)) else {
                self.refused.unknown_key += 1;
                return Verdict::Reject;
            };
            if !s.value.is_some_and(|v| cert.verifies(&s.signed, v)) {
                self.refused.bad_signature += 1;
                return Verdict::Reject;
            }
        }
        self.record(m, key, s.time_ms, now_ms);
        Verdict::Accept
    }

    /// Forgets the records not refreshed for [`RECORD_LIFETIME_MS`].
    fn forget_expired(&mut self, now_ms: u64) {
        while self
            .records
            .front()
            .is_some_and(|x| now_ms.saturating_sub(x.refreshed_ms) >= RECORD_LIFETIME_MS)
        {
            self.records.pop_front();
        }
    }

    /// Records `time_ms` as `key`'s last for module `m`, as the most recently refreshed; the
    /// module's least recently refreshed record goes if it would hold more than
    /// [`MAX_RECORDS`].
    fn record(&mut self, m: usize, key: Name, time_ms: u64, now_ms: u64) {
        self.records.retain(|x| !(x.module == m && x.key == key));
        if self.records.iter().filter(|x| x.module == m).count() >= MAX_RECORDS {
            if let Some(oldest) = self.records.iter().position(|x| x.module == m) {
                self.records.remove(oldest);
                self.refused.records_evicted += 1;
            }
        }
        self.records.push_back(Record {
            module: m,
            key,
            time_ms,
            refreshed_ms: now_ms,
        });
        debug_assert!(self.records.len() <= MAX_RECORDS * MODULES.len());
    }

    /// How many signers' last times are kept (all modules).
    pub fn records(&self) -> usize {
        self.records.len()
    }
}
