//! Certificate chains (anchor -> site -> user) made here with `ring`, fetched and verified as
//! ndn-cxx's validator with a direct fetcher does.

use ring::signature::KeyPair;
use wire::data::{content_type, signature_type};
use wire::{Component, Data, InterestView, KeyLocator, Limits, MetaInfo, Name, SignatureInfo};

use super::chain::{FETCH_LIFETIME_MS, FETCH_RETRIES, MAX_DEPTH, MAX_PENDING, NACK_WAIT_MS};
use super::policy::{AnchorSpec, Policy};
use super::tests::{signer, Signer};
use super::*;

const NOW: u64 = 1_800_000_000_000;
const DAY_MS: u64 = 86_400_000;

/// A key and the certificate issued to it (wire and decoded).
pub(crate) struct Party {
    pub(crate) key: Signer,
    pub(crate) cert_wire: Vec<u8>,
    pub(crate) cert: Certificate,
}

impl Party {
    pub(crate) fn key_name(&self) -> Name {
        self.cert.key_name()
    }
}

/// The ValidityPeriod value for `from_ms..until_ms`.
fn validity(from_ms: u64, until_ms: u64) -> Vec<u8> {
    let mut v = Vec::new();
    wire::tlv::write_tlv(&mut v, 0xFE, ms_iso(from_ms).as_bytes());
    wire::tlv::write_tlv(&mut v, 0xFF, ms_iso(until_ms).as_bytes());
    v
}

/// A certificate for `identity`'s new key, issued (signed) by `issuer` (itself when `None`),
/// valid over `valid`, its KeyLocator `kl` (the issuer's key name when `None`).
pub(crate) fn issue(
    identity: &str,
    issuer: Option<&Party>,
    valid: (u64, u64),
    kl: Option<Name>,
) -> Party {
    let key = signer(identity);
    let issuer_id = issuer.map_or("self".to_string(), |i| {
        i.key_name().components[0].to_string()
    });
    let name = Name::from_uri(&format!("{identity}/KEY/k1/{issuer_id}/v=1")).unwrap();
    let key_name = name.prefix(name.len() - 2);
    let mut d = Data::new(name, p256_spki(key.key.public_key().as_ref()));
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_ms: Some(3_600_000),
        final_block_id: None,
    });
    let kl = kl.unwrap_or_else(|| issuer.map_or(key_name, Party::key_name));
    d.signature_info = SignatureInfo {
        signature_type: signature_type::SHA256_WITH_ECDSA,
        key_locator: Some(KeyLocator::Name(kl)),
        validity_period: Some(validity(valid.0, valid.1)),
        ..SignatureInfo::default()
    };
    let w = d.to_wire();
    let signed = wire::DataView::decode(&w, &Limits::default())
        .unwrap()
        .signed_portion()
        .to_vec();
    d.signature_value = match issuer {
        Some(i) => i.key.sign(&[&signed]),
        None => key.sign(&[&signed]),
    };
    let cert_wire = d.to_wire();
    let cert = Certificate::decode(&cert_wire).unwrap();
    Party {
        key,
        cert_wire,
        cert,
    }
}

fn year() -> (u64, u64) {
    (NOW - DAY_MS, NOW + 365 * DAY_MS)
}

/// A `/localhop/nfd/rib/register` command signed by `p` at `time_ms`, its KeyLocator `kl`.
fn command(p: &Party, time_ms: u64, kl: &Name) -> Vec<u8> {
    let name = Name::from_uri("/localhop/nfd/rib/register")
        .unwrap()
        .with(Component::generic(vec![0x68, 0]));
    p.key.v03_named(name, time_ms, kl)
}

fn validator(anchors: &[&Party]) -> Authorizations {
    Authorizations::localhop_with(
        Policy::nfd_sample(Vec::new()),
        anchors.iter().map(|p| p.cert.clone()).collect(),
    )
}

fn origin() -> Origin {
    Origin {
        face: 300,
        token: Some(vec![7]),
    }
}

fn judge(a: &mut Authorizations, bytes: &[u8], now_ms: u64) -> Verdict {
    let i = InterestView::decode(bytes, &Limits::default()).unwrap();
    a.check_localhop(&i, bytes, origin(), NOW, now_ms)
}

/// The names the fetches ask for (each CanBePrefix, on the command's face).
fn fetched_names(a: &mut Authorizations) -> Vec<Name> {
    a.take_fetches()
        .into_iter()
        .map(|f| {
            assert_eq!(f.face, 300);
            let i = InterestView::decode(&f.interest, &Limits::default()).unwrap();
            assert!(i.can_be_prefix());
            i.name().to_name()
        })
        .collect()
}

/// anchor -> site -> user.
fn hierarchy() -> (Party, Party, Party) {
    hierarchy_over(year())
}

/// anchor (`/ndn`) -> site (`/ndn/site`) -> user (`/ndn/site/alice`), every certificate valid
/// over `valid`.
pub(crate) fn hierarchy_over(valid: (u64, u64)) -> (Party, Party, Party) {
    let root = issue("/ndn", None, valid, None);
    let site = issue("/ndn/site", Some(&root), valid, None);
    let user = issue("/ndn/site/alice", Some(&site), valid, None);
    (root, site, user)
}

#[test]
fn a_chain_is_fetched_from_the_face_verified_up_to_the_anchor_and_cached() {
    let (root, site, user) = hierarchy();
    let mut a = validator(&[&root]);
    let cmd = command(&user, NOW, &user.cert.name);
    assert_eq!(judge(&mut a, &cmd, 0), Verdict::Pending);
    assert_eq!(a.pending(), 1);
    assert_eq!(fetched_names(&mut a), std::slice::from_ref(&user.cert.name));
    assert!(a.take_decided().is_empty());
    // The user's certificate names the site's key, which is no anchor: fetched next.
    assert!(a.on_certificate(300, &user.cert_wire, NOW, 10));
    assert_eq!(fetched_names(&mut a), [site.key_name()]);
    assert!(a.take_decided().is_empty());
    // A Data nobody waits for changes nothing, nor the awaited one from another face.
    assert!(!a.on_certificate(300, &root.cert_wire, NOW, 15));
    assert!(!a.on_certificate(301, &site.cert_wire, NOW, 15));
    assert!(!a.on_nack(301, &site.key_name(), 15));
    assert!(a.on_certificate(300, &site.cert_wire, NOW, 20));
    let decided = a.take_decided();
    assert_eq!(decided.len(), 1);
    assert!(decided[0].accepted);
    assert_eq!(decided[0].command, cmd);
    assert_eq!(decided[0].origin, origin());
    assert_eq!(a.pending(), 0);
    assert_eq!(a.cached_certificates(), 2);
    assert_eq!(a.records(), 1);
    // The same command again is a replay; a later one is accepted at once from the cache.
    assert_eq!(judge(&mut a, &cmd, 30), Verdict::Reject);
    assert_eq!(a.refused().replay, 1);
    let later = command(&user, NOW + 1, &user.key_name());
    assert_eq!(judge(&mut a, &later, 40), Verdict::Accept);
    assert!(a.take_fetches().is_empty());
    // Another user of the same site: only its own certificate is fetched.
    let bob = issue("/ndn/site/bob", Some(&site), year(), None);
    assert_eq!(
        judge(&mut a, &command(&bob, NOW, &bob.key_name()), 50),
        Verdict::Pending
    );
    assert_eq!(fetched_names(&mut a), [bob.key_name()]);
    a.on_certificate(300, &bob.cert_wire, NOW, 60);
    assert!(a.take_decided()[0].accepted);
    assert!(
        a.take_fetches().is_empty(),
        "the site's certificate was cached"
    );
}

#[test]
fn a_signer_the_anchor_signed_directly_needs_no_fetch() {
    let (root, site, _) = hierarchy();
    let mut a = validator(&[&site]);
    let _ = root;
    let site_cmd = command(&site, NOW, &site.key_name());
    assert_eq!(judge(&mut a, &site_cmd, 0), Verdict::Accept);
}

#[test]
fn expired_certificates_break_the_chain() {
    let root = issue("/ndn", None, year(), None);
    let site = issue(
        "/ndn/site",
        Some(&root),
        (NOW - 10 * DAY_MS, NOW - DAY_MS),
        None,
    );
    let user = issue("/ndn/site/alice", Some(&site), year(), None);
    let mut a = validator(&[&root]);
    assert_eq!(
        judge(&mut a, &command(&user, NOW, &user.key_name()), 0),
        Verdict::Pending
    );
    a.on_certificate(300, &user.cert_wire, NOW, 1);
    a.on_certificate(300, &site.cert_wire, NOW, 2);
    let d = a.take_decided();
    assert!(!d[0].accepted);
    assert_eq!(a.refused().bad_certificate, 1);
    assert_eq!(a.cached_certificates(), 0);
    // Not yet valid counts the same.
    let early = issue(
        "/ndn/site/eve",
        Some(&root),
        (NOW + DAY_MS, NOW + 2 * DAY_MS),
        None,
    );
    let mut a = validator(&[&root]);
    judge(&mut a, &command(&early, NOW, &early.key_name()), 0);
    a.on_certificate(300, &early.cert_wire, NOW, 1);
    assert!(!a.take_decided()[0].accepted);
}

#[test]
fn forged_signatures_are_refused_anywhere_in_the_chain() {
    let (root, site, user) = hierarchy();
    // A certificate claiming the site issued it, signed by another key.
    let mallory = issue("/ndn/site", Some(&root), year(), None);
    let forged = issue(
        "/ndn/site/alice",
        Some(&mallory),
        year(),
        Some(site.key_name()),
    );
    let mut a = validator(&[&root]);
    judge(&mut a, &command(&forged, NOW, &forged.key_name()), 0);
    a.on_certificate(300, &forged.cert_wire, NOW, 1);
    a.on_certificate(300, &site.cert_wire, NOW, 2);
    assert!(!a.take_decided()[0].accepted);
    assert_eq!(a.refused().bad_signature, 1);
    // A command whose own signature is not the user's.
    let mut a = validator(&[&root]);
    let bad = command(&forged, NOW, &user.key_name());
    judge(&mut a, &bad, 0);
    a.on_certificate(300, &user.cert_wire, NOW, 1);
    a.on_certificate(300, &site.cert_wire, NOW, 2);
    assert!(!a.take_decided()[0].accepted);
    assert_eq!(a.refused().bad_signature, 1);
    assert_eq!(a.records(), 0);
}

#[test]
fn a_chain_that_reaches_no_anchor_stops_at_the_depth_bound() {
    let root = issue("/ndn", None, year(), None);
    // A self-made hierarchy under an identity the anchor never signed, deeper than the bound.
    let mut parties = vec![issue("/x", None, year(), None)];
    for i in 0..MAX_DEPTH + 1 {
        let id = format!(
            "{}/l{i}",
            parties[i].cert.name.prefix(parties[i].cert.name.len() - 4)
        );
        let next = issue(&id, Some(&parties[i]), year(), None);
        parties.push(next);
    }
    let user = parties.last().unwrap();
    let mut a = validator(&[&root]);
    assert_eq!(
        judge(&mut a, &command(user, NOW, &user.key_name()), 0),
        Verdict::Pending
    );
    let mut fetches = 0;
    for _ in 0..parties.len() {
        let names = fetched_names(&mut a);
        if names.is_empty() {
            break;
        }
        fetches += 1;
        let p = parties
            .iter()
            .find(|p| p.cert.designated_by(&names[0]))
            .unwrap();
        a.on_certificate(300, &p.cert_wire, NOW, 1);
    }
    assert_eq!(fetches, MAX_DEPTH);
    assert!(!a.take_decided()[0].accepted);
    assert_eq!(a.refused().chain_too_long, 1);
    // A short chain ending in a self-signed certificate that is no anchor: its KeyLocator
    // names itself, which the chain holds already (a loop): refused without fetching again.
    let stranger = issue("/ndn/stranger", None, year(), None);
    judge(&mut a, &command(&stranger, NOW, &stranger.key_name()), 2);
    assert_eq!(fetched_names(&mut a), [stranger.key_name()]);
    a.on_certificate(300, &stranger.cert_wire, NOW, 3);
    assert!(a.take_fetches().is_empty());
    assert!(!a.take_decided()[0].accepted);
    assert_eq!(a.refused().bad_certificate, 1);
}

#[test]
fn the_rules_judge_the_command_and_each_certificate() {
    let (root, _, _) = hierarchy();
    // A site certificate for an identity outside the issuer's: the hierarchical rule refuses.
    let other = issue("/other", Some(&root), year(), None);
    let user = issue("/other/alice", Some(&other), year(), None);
    let mut a = validator(&[&root]);
    judge(&mut a, &command(&user, NOW, &user.key_name()), 0);
    a.on_certificate(300, &user.cert_wire, NOW, 1);
    a.on_certificate(300, &other.cert_wire, NOW, 2);
    assert!(!a.take_decided()[0].accepted);
    assert_eq!(a.refused().bad_certificate, 1);
    // A KeyLocator that names no key: no rule passes it, nothing is fetched.
    let mut a = validator(&[&root]);
    let cmd = command(&user, NOW, &Name::from_uri("/other/alice").unwrap());
    assert_eq!(judge(&mut a, &cmd, 0), Verdict::Reject);
    assert_eq!(a.refused().policy, 1);
    assert!(a.take_fetches().is_empty());
    // `trust-anchor { type any }`: no rule, no signature checked.
    let any = Policy::nfd_sample(vec![AnchorSpec::Any]);
    let mut a = Authorizations::localhop_with(any, Vec::new());
    assert_eq!(judge(&mut a, &cmd, 0), Verdict::Accept);
}

#[test]
fn waiting_commands_are_bounded_and_fetches_retried_then_given_up() {
    let (root, _, user) = hierarchy();
    let mut a = validator(&[&root]);
    for t in 0..MAX_PENDING as u64 {
        let c = command(&user, NOW + t, &user.key_name());
        assert_eq!(judge(&mut a, &c, 0), Verdict::Pending);
    }
    let c = command(&user, NOW + 1000, &user.key_name());
    assert_eq!(judge(&mut a, &c, 0), Verdict::Reject);
    assert_eq!(a.refused().pending_full, 1);
    a.take_fetches();
    // Unanswered: sent again after each lifetime, FETCH_RETRIES times, then refused.
    let mut now = 0;
    for _ in 0..FETCH_RETRIES {
        now += FETCH_LIFETIME_MS - 1;
        a.tick_chains(now);
        assert!(a.take_fetches().is_empty(), "not before the lifetime");
        now += 1;
        a.tick_chains(now);
        assert_eq!(a.take_fetches().len(), MAX_PENDING);
    }
    now += FETCH_LIFETIME_MS;
    a.tick_chains(now);
    assert_eq!(a.take_decided().len(), MAX_PENDING);
    assert_eq!(a.refused().certificate_unreachable, MAX_PENDING as u64);
    assert_eq!(a.pending(), 0);
    // A Nack: sent again after 500 ms, then 1 s, ...; out of retries, refused.
    judge(&mut a, &command(&user, NOW + 2000, &user.key_name()), now);
    a.take_fetches();
    let mut wait = NACK_WAIT_MS;
    for _ in 0..FETCH_RETRIES {
        assert!(a.on_nack(300, &user.key_name(), now));
        a.tick_chains(now + wait - 1);
        assert!(a.take_fetches().is_empty());
        now += wait;
        a.tick_chains(now);
        assert_eq!(a.take_fetches().len(), 1);
        wait *= 2;
    }
    assert!(a.on_nack(300, &user.key_name(), now));
    assert!(!a.take_decided()[0].accepted);
    // Replacing the validator refuses what waits.
    judge(&mut a, &command(&user, NOW + 3000, &user.key_name()), now);
    a.abandon();
    assert!(!a.take_decided()[0].accepted);
}

#[test]
fn validity_periods_read_as_ndn_cxx_writes_them() {
    assert_eq!(iso_ms(b"19700101T000000"), Some(0));
    assert_eq!(iso_ms(b"20260101T000001"), Some(1_767_225_601_000));
    assert_eq!(ms_iso(1_767_225_601_000), "20260101T000001");
    assert_eq!(iso_ms(ms_iso(NOW).as_bytes()), Some(NOW));
    for bad in [
        &b"2026010T000000"[..],
        b"20261301T000000",
        b"20260101X000000",
        b"",
    ] {
        assert_eq!(iso_ms(bad), None);
    }
    let (root, _, _) = hierarchy();
    assert!(root.cert.valid_at(NOW));
    assert!(!root.cert.valid_at(NOW + 366 * DAY_MS));
}

#[test]
fn a_digest_signature_the_rules_allow_is_checked_without_a_certificate() {
    let text = r#"rule { id digest
                        for interest
                        checker { type customized
                                  sig-type sha256 } }
                  rule { id ecdsa
                         for interest
                         filter { type name
                                  regex ^<localhop><nfd><rib><register><>{1,3}$ }
                         checker { type customized
                                   sig-type ecdsa-sha256
                                   key-locator { type name
                                                 regex ^<>*<KEY><>{1,3}$ } } }"#;
    let (root, _, _) = hierarchy();
    let mut a = Authorizations::localhop_with(Policy::parse(text).unwrap(), vec![root.cert]);
    let digest = |time_ms: u64, corrupt: bool| {
        let name = Name::from_uri("/localhop/nfd/rib/register")
            .unwrap()
            .with(Component::generic(vec![0x68, 0]));
        let mut i = wire::Interest::new(name, [1; 4]);
        let info = SignatureInfo {
            signature_type: signature_type::DIGEST_SHA256,
            nonce: Some(vec![3; 8]),
            time_ms: Some(time_ms),
            ..SignatureInfo::default()
        };
        crate::keychain::digest_sign_interest(&mut i, info);
        if corrupt {
            i.signature_value.as_mut().unwrap()[0] ^= 1;
        }
        i.to_wire()
    };
    assert_eq!(judge(&mut a, &digest(NOW, true), 0), Verdict::Reject);
    assert_eq!(a.refused().bad_signature, 1);
    assert_eq!(judge(&mut a, &digest(NOW, false), 0), Verdict::Accept);
    assert!(a.take_fetches().is_empty());
    // Under the ECDSA rule alone, a digest is refused by the rules.
    let text = text.replacen("rule { id digest", "rule { id digest-off\n for data", 1);
    let text = text.replacen(
        "for data\n                        for interest",
        "for data",
        1,
    );
    let mut a = Authorizations::localhop_with(Policy::parse(&text).unwrap(), Vec::new());
    assert_eq!(judge(&mut a, &digest(NOW, false), 0), Verdict::Reject);
    assert_eq!(a.refused().policy, 1);
}
