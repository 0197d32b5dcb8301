//! Certificate chains for `localhop_security`, as ndn-cxx's `Validator` with NFD's
//! `CertificateFetcherDirectFetch` walks them: a command signed by a key whose certificate is
//! no trust anchor waits while the certificate its KeyLocator names is fetched from the face the
//! command came from (an Interest for the KeyLocator name, CanBePrefix, as ndn-cxx's
//! `CertificateRequest`), then the certificate that one's KeyLocator names, and so on until a
//! trust anchor (or a certificate verified before) signed the last one. Then the chain is
//! verified from the anchor down, the command's signature last.
//!
//! Each certificate fetched must be within its ValidityPeriod, pass the rules `for data`
//! ([`super::policy`]), and not appear twice in the chain. Bounds:
//!
//! - at most [`MAX_DEPTH`] certificates fetched per command (ndn-cxx's default is 25; the NDN
//!   testbed's chains are 2 or 3 long — root, site, user, perhaps an operator — and every
//!   level holds a pending slot for one more round trip, so 5 leaves room and no more);
//! - at most [`MAX_PENDING`] commands waiting at once (more are refused, counted as
//!   `pending_full`);
//! - at most [`MAX_CACHED`] verified certificates kept, each until its NotAfter or
//!   [`CACHE_LIFETIME_MS`] (ndn-cxx's `CertificateCache`: an hour), the oldest first out;
//! - a fetch waits [`FETCH_LIFETIME_MS`] and is sent again at most [`FETCH_RETRIES`] times
//!   after a timeout or a Nack (after a Nack, 500 ms first, doubling: ndn-cxx's
//!   `CertificateRequest`).
//!
//! Nothing here blocks: [`Authorizations::check_localhop`] answers at once (accept, refuse, or
//! pending), the Interests to send and the commands decided are taken by the manager
//! ([`Authorizations::take_fetches`], [`Authorizations::take_decided`]), and Data, Nacks and
//! time come in through [`Authorizations::on_certificate`], [`Authorizations::on_nack`] and
//! [`Authorizations::tick_chains`].

use std::collections::VecDeque;
use std::sync::Arc;

use engine::table::pit_cs::FaceId;
use wire::data::{signature_type, KeyLocatorView};
use wire::signed::{SignedError, SignedForm, SignedInterestView};
use wire::{DataView, Interest, InterestView, Limits, Name};

use super::policy::{command_name, For, Policy};
use super::{Authorizations, Certificate, Grant, Verdict, DIGEST_SHA256_KEY, RIB};

/// Certificates fetched per command at most.
pub const MAX_DEPTH: usize = 5;

/// Commands waiting for certificates at most.
pub const MAX_PENDING: usize = 32;

/// Verified certificates kept at most.
pub const MAX_CACHED: usize = 256;

/// How long a verified certificate is kept at most (ndn-cxx's `CertificateCache`).
pub const CACHE_LIFETIME_MS: u64 = 3_600_000;

/// How long a certificate fetch waits (the Interest's lifetime, ndn-cxx's default).
pub const FETCH_LIFETIME_MS: u64 = 4_000;

/// Fetches sent again after a timeout or a Nack at most (ndn-cxx's `CertificateRequest`).
pub const FETCH_RETRIES: u32 = 3;

/// The first wait after a Nack before sending again, doubling each time.
pub const NACK_WAIT_MS: u64 = 500;

/// The NDNLPv2 PIT token on the certificate fetches management sends, which the face's peer
/// echoes on the Data or Nack so that the router hands them to management (four bytes: no
/// worker's token is that long).
pub const FETCH_TOKEN: [u8; 4] = *b"CsMg";

/// Where a command came from: its face and the PIT token to echo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The face.
    pub face: FaceId,
    /// The command's PIT token, if any.
    pub token: Option<Vec<u8>>,
}

/// A command decided after waiting: the manager runs it or answers 403.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// Where it came from.
    pub origin: Origin,
    /// The command Interest (network-layer bytes).
    pub command: Vec<u8>,
    /// Accepted (else 403).
    pub accepted: bool,
}

/// A certificate fetch to send: an Interest on a face, with [`FETCH_TOKEN`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// The face the command came from.
    pub face: FaceId,
    /// The Interest.
    pub interest: Vec<u8>,
}

/// A certificate fetched along a chain, with what verifies it.
#[derive(Debug, Clone)]
struct Fetched {
    cert: Certificate,
    /// Its KeyLocator.
    issuer: Name,
    signed: Vec<u8>,
    sig: Vec<u8>,
}

/// A command waiting for its chain.
#[derive(Debug, Clone)]
struct Pending {
    origin: Origin,
    command: Vec<u8>,
    /// The command's KeyLocator and signing time (its replay record).
    key: Name,
    time_ms: u64,
    /// What the command's signature covers, and the signature.
    signed: Vec<u8>,
    sig: Vec<u8>,
    /// Fetched so far: the first signed the command, each the one before.
    chain: Vec<Fetched>,
    /// The name being fetched.
    fetching: Name,
    /// When the fetch was sent; when to send it again after a Nack.
    sent_ms: u64,
    resend_at_ms: Option<u64>,
    retries_left: u32,
    nack_wait_ms: u64,
}

/// A verified certificate kept.
#[derive(Debug, Clone)]
struct Cached {
    cert: Arc<Certificate>,
    until_ms: u64,
}

/// The chains' state: commands waiting, verified certificates, and the manager's queues.
#[derive(Debug, Clone, Default)]
pub(crate) struct Chains {
    pending: VecDeque<Pending>,
    cache: VecDeque<Cached>,
    fetches: Vec<Fetch>,
    decided: Vec<Decided>,
}

/// Why a chain failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// A certificate unreadable, expired, refused by the rules, or seen twice.
    BadCertificate,
    /// A signature along the chain does not verify.
    BadSignature,
    /// No anchor within [`MAX_DEPTH`].
    Depth,
    /// A certificate could not be fetched.
    Unreachable,
}

impl Authorizations {
    /// The localhop validator for NFD's `localhop_security` with rules: `policy`'s rules, its
    /// trust anchors being `anchors` (read from its `trust-anchor` entries), certificate
    /// chains fetched from the command's face. A `type any` anchor accepts any signer (the
    /// command-Interest rules still applying, the rules not).
    pub fn localhop_with(policy: Policy, anchors: Vec<Certificate>) -> Self {
        let any = policy.any();
        let mut a = Authorizations::localhop((!any).then_some(anchors));
        if !any {
            a.policy = Some(Arc::new(policy));
        }
        a
    }

    /// Judges a `/localhop/nfd/rib` command (`wire`: its network-layer bytes) from `origin`:
    /// as [`Authorizations::check`], except that under a policy with rules a signer whose
    /// certificate is no trust anchor (nor verified before) makes the command wait
    /// ([`Verdict::Pending`]) while its chain is fetched.
    pub fn check_localhop(
        &mut self,
        interest: &InterestView<'_>,
        wire: &[u8],
        origin: Origin,
        wall_ms: u64,
        now_ms: u64,
    ) -> Verdict {
        let Some(policy) = self.policy.clone() else {
            return self.check("rib", interest, wall_ms, now_ms);
        };
        let Grant::Anchors(anchors) = self.grants[RIB].clone() else {
            return self.check("rib", interest, wall_ms, now_ms);
        };
        let (s, key) = match self.command_checks(RIB, interest, wall_ms, now_ms) {
            Ok(x) => x,
            Err(_) => return Verdict::Reject,
        };
        let full = interest.name().to_name();
        let judged = command_name(&full, s.form == SignedForm::V03);
        let ok = judged.is_some_and(|n| {
            policy
                .check(For::Interest, &n, s.info.signature_type, &key)
                .is_ok()
        });
        if !ok {
            self.refused.policy += 1;
            return Verdict::Reject;
        }
        let signed = [s.signed[0], s.signed[1]].concat();
        let Some(sig) = s.value else {
            self.refused.bad_signature += 1;
            return Verdict::Reject;
        };
        if s.info.signature_type == signature_type::DIGEST_SHA256 {
            // ndn-cxx's validator takes a DigestSha256 signature the rules allowed (`sig-type
            // sha256`) as it is: the digest is checked, no certificate is looked for.
            if wire::sha256(&[&signed]) != sig {
                self.refused.bad_signature += 1;
                return Verdict::Reject;
            }
            self.record(RIB, key, s.time_ms, now_ms);
            return Verdict::Accept;
        }
        let known = anchors
            .iter()
            .find(|c| c.designated_by(&key))
            .cloned()
            .or_else(|| self.cached(&key, wall_ms, now_ms));
        if let Some(cert) = known {
            if !cert.verifies(&[&signed], sig) {
                self.refused.bad_signature += 1;
                return Verdict::Reject;
            }
            self.record(RIB, key, s.time_ms, now_ms);
            return Verdict::Accept;
        }
        if self.chains.pending.len() >= MAX_PENDING {
            self.refused.pending_full += 1;
            return Verdict::Reject;
        }
        let p = Pending {
            origin,
            command: wire.to_vec(),
            key: key.clone(),
            time_ms: s.time_ms,
            signed,
            sig: sig.to_vec(),
            chain: Vec::new(),
            fetching: key,
            sent_ms: now_ms,
            resend_at_ms: None,
            retries_left: FETCH_RETRIES,
            nack_wait_ms: NACK_WAIT_MS,
        };
        self.send_fetch(&p);
        self.chains.pending.push_back(p);
        Verdict::Pending
    }

    /// The command-Interest rules for module `m` (signing time, grace period, replay): the
    /// signed Interest and its KeyLocator, or the verdict (counted).
    pub(super) fn command_checks<'a>(
        &mut self,
        m: usize,
        interest: &InterestView<'a>,
        wall_ms: u64,
        now_ms: u64,
    ) -> Result<(SignedInterestView<'a>, Name), Verdict> {
        let r = &mut self.refused;
        let s = match SignedInterestView::of(interest) {
            Ok(s) => s,
            Err(SignedError::NoTime) => {
                r.no_time += 1;
                return Err(Verdict::Reject);
            }
            Err(SignedError::Malformed) => {
                r.malformed += 1;
                return Err(Verdict::Drop);
            }
        };
        let key = if s.info.signature_type == signature_type::DIGEST_SHA256 {
            Name::from_uri(DIGEST_SHA256_KEY).unwrap_or_default()
        } else if let Some(KeyLocatorView::Name(n)) = s.info.key_locator {
            n.to_name()
        } else {
            r.malformed += 1;
            return Err(Verdict::Drop);
        };
        if s.time_ms.abs_diff(wall_ms) > super::GRACE_MS {
            r.stale += 1;
            return Err(Verdict::Reject);
        }
        if let Some(v) = self.replay_verdict(m, &key, s.time_ms, now_ms) {
            return Err(v);
        }
        Ok((s, key))
    }

    /// A refusal (counted) if `key` signed for module `m` at `time_ms` is a replay or comes
    /// before the last accepted.
    pub(super) fn replay_verdict(
        &mut self,
        m: usize,
        key: &Name,
        time_ms: u64,
        now_ms: u64,
    ) -> Option<Verdict> {
        self.forget_expired(now_ms);
        let last = self.records.iter().find(|x| x.module == m && x.key == *key);
        match last.map(|x| time_ms.cmp(&x.time_ms)) {
            Some(std::cmp::Ordering::Equal) => {
                self.refused.replay += 1;
                Some(Verdict::Reject)
            }
            Some(std::cmp::Ordering::Less) => {
                self.refused.reordered += 1;
                Some(Verdict::Reject)
            }
            _ => None,
        }
    }

    /// A verified certificate kept that `kl` designates, still valid.
    fn cached(&mut self, kl: &Name, wall_ms: u64, now_ms: u64) -> Option<Arc<Certificate>> {
        self.chains.cache.retain(|c| c.until_ms > now_ms);
        self.chains
            .cache
            .iter()
            .find(|c| c.cert.designated_by(kl) && c.cert.valid_at(wall_ms))
            .map(|c| c.cert.clone())
    }

    fn cache(&mut self, cert: Certificate, wall_ms: u64, now_ms: u64) {
        if self.chains.cache.iter().any(|c| c.cert.name == cert.name) {
            return;
        }
        let left = cert
            .validity_ms
            .map_or(0, |(_, until)| until.saturating_sub(wall_ms));
        if self.chains.cache.len() >= MAX_CACHED {
            self.chains.cache.pop_front();
            self.refused.cache_evicted += 1;
        }
        self.chains.cache.push_back(Cached {
            cert: Arc::new(cert),
            until_ms: now_ms + left.min(CACHE_LIFETIME_MS),
        });
    }

    /// How many verified certificates are kept.
    pub fn cached_certificates(&self) -> usize {
        self.chains.cache.len()
    }

    /// How many commands wait for their chains.
    pub fn pending(&self) -> usize {
        self.chains.pending.len()
    }

    fn send_fetch(&mut self, p: &Pending) {
        use ring::rand::SecureRandom;
        let mut nonce = [0u8; 4];
        let _ = ring::rand::SystemRandom::new().fill(&mut nonce);
        let mut i = Interest::new(p.fetching.clone(), nonce);
        i.can_be_prefix = true;
        i.lifetime_ms = Some(FETCH_LIFETIME_MS);
        self.chains.fetches.push(Fetch {
            face: p.origin.face,
            interest: i.to_wire(),
        });
    }

    /// The certificate fetches to send (each on its face, with [`FETCH_TOKEN`]).
    pub fn take_fetches(&mut self) -> Vec<Fetch> {
        std::mem::take(&mut self.chains.fetches)
    }

    /// The commands decided since last asked.
    pub fn take_decided(&mut self) -> Vec<Decided> {
        std::mem::take(&mut self.chains.decided)
    }

    /// Every waiting command refused (the validator is being replaced): they are decided.
    pub fn abandon(&mut self) {
        while let Some(p) = self.chains.pending.pop_front() {
            self.fail(p, Failure::Unreachable);
        }
    }

    fn fail(&mut self, p: Pending, why: Failure) {
        let r = &mut self.refused;
        match why {
            Failure::BadCertificate => r.bad_certificate += 1,
            Failure::BadSignature => r.bad_signature += 1,
            Failure::Depth => r.chain_too_long += 1,
            Failure::Unreachable => r.certificate_unreachable += 1,
        }
        self.chains.decided.push(Decided {
            origin: p.origin,
            command: p.command,
            accepted: false,
        });
    }

    /// A Data that came back on `face` to a certificate fetch (`bytes`: the network-layer
    /// Data), at `wall_ms` and `now_ms`: every command from that face waiting for it goes on
    /// (or is decided). Answers whether any was. (A Data from another face answers nothing: the
    /// fetch went to the command's face only.)
    pub fn on_certificate(
        &mut self,
        face: FaceId,
        bytes: &[u8],
        wall_ms: u64,
        now_ms: u64,
    ) -> bool {
        let Ok(d) = DataView::decode(bytes, &Limits::default()) else {
            return false;
        };
        let name = d.name().to_name();
        let (mine, rest): (VecDeque<Pending>, VecDeque<Pending>) =
            std::mem::take(&mut self.chains.pending)
                .into_iter()
                .partition(|p| p.origin.face == face && p.fetching.is_prefix_of(&name));
        self.chains.pending = rest;
        if mine.is_empty() {
            return false;
        }
        let fetched = Certificate::decode(bytes).ok().and_then(|cert| {
            let info = d.signature_info();
            let Some(KeyLocatorView::Name(issuer)) = info.key_locator else {
                return None;
            };
            Some((
                Fetched {
                    cert,
                    issuer: issuer.to_name(),
                    signed: d.signed_portion().to_vec(),
                    sig: d.signature_value().to_vec(),
                },
                info.signature_type,
            ))
        });
        for p in mine {
            match &fetched {
                Some((f, sig_type)) => self.next_link(p, f.clone(), *sig_type, wall_ms, now_ms),
                None => self.fail(p, Failure::BadCertificate),
            }
        }
        true
    }

    /// `p` goes on with the certificate `f` fetched for it.
    fn next_link(&mut self, mut p: Pending, f: Fetched, sig_type: u64, wall_ms: u64, now_ms: u64) {
        let policy = self.policy.clone();
        let allowed = policy.is_some_and(|pol| {
            pol.check(For::Data, &f.cert.name, sig_type, &f.issuer)
                .is_ok()
        });
        let seen = p.chain.iter().any(|c| c.cert.name == f.cert.name);
        if !allowed || seen || !f.cert.valid_at(wall_ms) {
            return self.fail(p, Failure::BadCertificate);
        }
        let issuer = f.issuer.clone();
        p.chain.push(f);
        let anchors = match &self.grants[RIB] {
            Grant::Anchors(a) => a.clone(),
            _ => Vec::new(),
        };
        let top = anchors
            .iter()
            .find(|c| c.designated_by(&issuer))
            .cloned()
            .or_else(|| self.cached(&issuer, wall_ms, now_ms));
        match top {
            Some(top) => self.verify_chain(p, &top, wall_ms, now_ms),
            // A certificate of the chain names one already in it (a self-signed certificate
            // that is no anchor, or a loop): ndn-cxx's LOOP_DETECTED.
            None if p.chain.iter().any(|c| c.cert.designated_by(&issuer)) => {
                self.fail(p, Failure::BadCertificate)
            }
            None if p.chain.len() >= MAX_DEPTH => self.fail(p, Failure::Depth),
            None => {
                p.fetching = issuer;
                p.sent_ms = now_ms;
                p.retries_left = FETCH_RETRIES;
                p.nack_wait_ms = NACK_WAIT_MS;
                p.resend_at_ms = None;
                self.send_fetch(&p);
                self.chains.pending.push_back(p);
            }
        }
    }

    /// The chain under `top` (a trust anchor or a verified certificate), from the top down,
    /// then the command.
    fn verify_chain(&mut self, p: Pending, top: &Certificate, wall_ms: u64, now_ms: u64) {
        let mut signer = top;
        for f in p.chain.iter().rev() {
            if !signer.verifies(&[&f.signed], &f.sig) {
                return self.fail(p, Failure::BadSignature);
            }
            signer = &f.cert;
        }
        if !signer.verifies(&[&p.signed], &p.sig) {
            return self.fail(p, Failure::BadSignature);
        }
        for f in &p.chain {
            self.cache(f.cert.clone(), wall_ms, now_ms);
        }
        // Another command of that key may have been accepted meanwhile.
        let accepted = self
            .replay_verdict(RIB, &p.key, p.time_ms, now_ms)
            .is_none();
        if accepted {
            self.record(RIB, p.key.clone(), p.time_ms, now_ms);
        }
        self.chains.decided.push(Decided {
            origin: p.origin,
            command: p.command,
            accepted,
        });
    }

    /// A Nack came back on `face` to the fetch of `name` (the Interest's name): the commands
    /// from that face waiting for it try again later, or are refused once out of retries.
    /// Answers whether any waited.
    pub fn on_nack(&mut self, face: FaceId, name: &Name, now_ms: u64) -> bool {
        let mut any = false;
        let mut out = Vec::new();
        for mut p in std::mem::take(&mut self.chains.pending) {
            if p.origin.face != face || p.fetching != *name || p.resend_at_ms.is_some() {
                self.chains.pending.push_back(p);
                continue;
            }
            any = true;
            if p.retries_left == 0 {
                out.push(p);
                continue;
            }
            p.retries_left -= 1;
            p.resend_at_ms = Some(now_ms + p.nack_wait_ms);
            p.nack_wait_ms = p.nack_wait_ms.saturating_mul(2);
            self.chains.pending.push_back(p);
        }
        for p in out {
            self.fail(p, Failure::Unreachable);
        }
        any
    }

    /// Fetches timed out are sent again (or their commands refused), and those waiting after a
    /// Nack are sent when due.
    pub fn tick_chains(&mut self, now_ms: u64) {
        let mut out = Vec::new();
        for mut p in std::mem::take(&mut self.chains.pending) {
            let due = match p.resend_at_ms {
                Some(at) => at <= now_ms,
                None => now_ms.saturating_sub(p.sent_ms) >= FETCH_LIFETIME_MS,
            };
            if !due {
                self.chains.pending.push_back(p);
                continue;
            }
            if p.resend_at_ms.is_none() {
                if p.retries_left == 0 {
                    out.push(p);
                    continue;
                }
                p.retries_left -= 1;
            }
            p.resend_at_ms = None;
            p.sent_ms = now_ms;
            self.send_fetch(&p);
            self.chains.pending.push_back(p);
        }
        for p in out {
            self.fail(p, Failure::Unreachable);
        }
    }
}
