//! Commands signed with keys made here (ECDSA P-256, `ring`), judged as NFD judges them.

use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use wire::data::{content_type, signature_type};
use wire::SignatureInfo;
use wire::{tt, Component, Data, Interest, InterestView, KeyLocator, Limits, MetaInfo, Name};

use super::*;

const NOW: u64 = 1_800_000_000_000;

/// A key made here and its self-signed certificate.
pub(crate) struct Signer {
    pub(crate) key: EcdsaKeyPair,
    pub(crate) cert: Certificate,
}

/// A new P-256 key of `identity`.
pub(crate) fn signer(identity: &str) -> Signer {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
    let key =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let name = Name::from_uri(&format!("{identity}/KEY/k1/self/v=1")).unwrap();
    let mut d = Data::new(name, p256_spki(key.public_key().as_ref()));
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_ms: Some(3_600_000),
        final_block_id: None,
    });
    d.sign_digest_sha256();
    let cert = Certificate::decode(&d.to_wire()).unwrap();
    Signer { key, cert }
}

impl Signer {
    pub(crate) fn key_name(&self) -> Name {
        self.cert.key_name()
    }

    pub(crate) fn sign(&self, parts: &[&[u8]]) -> Vec<u8> {
        let sig = self
            .key
            .sign(&SystemRandom::new(), &parts.concat())
            .unwrap();
        sig.as_ref().to_vec()
    }

    /// A v0.3 signed command for `module`, signed at `time_ms`, its KeyLocator `kl`.
    pub(crate) fn v03(&self, module: &str, time_ms: u64, kl: &Name) -> Vec<u8> {
        let name = Name::from_uri(&format!("/localhost/nfd/{module}/x"))
            .unwrap()
            .with(Component::generic(vec![0x68, 0]));
        self.v03_named(name, time_ms, kl)
    }

    /// A v0.3 signed Interest named `name` (then its ParametersSha256Digest).
    pub(crate) fn v03_named(&self, name: Name, time_ms: u64, kl: &Name) -> Vec<u8> {
        let info = SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(kl.clone())),
            nonce: Some(vec![1; 8]),
            time_ms: Some(time_ms),
            ..SignatureInfo::default()
        };
        let mut signed = Vec::new();
        for c in &name.components {
            c.encode(&mut signed);
        }
        wire::tlv::write_tlv(&mut signed, tt::APPLICATION_PARAMETERS, &[]);
        info.encode(&mut signed, tt::INTEREST_SIGNATURE_INFO);
        let mut i = Interest::new(name, [4; 4]);
        i.app_params = Some(Vec::new());
        i.signature_value = Some(self.sign(&[&signed]));
        i.signature_info = Some(info);
        i.to_wire()
    }

    /// The same command in the old form (timestamp, nonce, SignatureInfo, SignatureValue).
    fn old(&self, module: &str, time_ms: u64) -> Vec<u8> {
        let info = SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(self.key_name())),
            ..SignatureInfo::default()
        };
        let mut info_tlv = Vec::new();
        info.encode(&mut info_tlv, tt::SIGNATURE_INFO);
        let name = Name::from_uri(&format!("/localhost/nfd/{module}/x"))
            .unwrap()
            .with(Component::generic(vec![0x68, 0]))
            .with(Component::number(tt::GENERIC_COMPONENT as u16, time_ms))
            .with(Component::generic(vec![2; 8]))
            .with(Component::generic(info_tlv));
        let mut signed = Vec::new();
        for c in &name.components {
            c.encode(&mut signed);
        }
        let mut value = Vec::new();
        wire::tlv::write_tlv(&mut value, tt::SIGNATURE_VALUE, &self.sign(&[&signed]));
        Interest::new(name.with(Component::generic(value)), [5; 4]).to_wire()
    }
}

/// `v03` with a bit of its signature flipped (its name's digest computed again).
fn corrupt(v03: &[u8]) -> Vec<u8> {
    let mut i = InterestView::decode(v03, &Limits::default())
        .unwrap()
        .to_interest();
    let sig = i.signature_value.as_mut().unwrap();
    let n = sig.len();
    sig[n - 1] ^= 1;
    i.to_wire()
}

fn judge(a: &mut Authorizations, module: &str, bytes: &[u8], wall_ms: u64) -> Verdict {
    let i = InterestView::decode(bytes, &Limits::default()).unwrap();
    a.check(module, &i, wall_ms, 0)
}

fn granted(s: &Signer, modules: &[&str]) -> Authorizations {
    Authorizations::new(vec![Authorize {
        cert: Some(s.cert.clone()),
        privileges: modules.iter().map(|m| m.to_string()).collect(),
    }])
    .unwrap()
}

fn unsigned(module: &str) -> Vec<u8> {
    let name = Name::from_uri(&format!("/localhost/nfd/{module}/x"))
        .unwrap()
        .with(Component::generic(vec![0x68, 0]));
    Interest::new(name, [1; 4]).to_wire()
}

#[test]
fn the_default_accepts_anything_as_certfile_any() {
    let mut a = Authorizations::default();
    let op = signer("/op");
    assert_eq!(judge(&mut a, "fib", &unsigned("fib"), NOW), Verdict::Accept);
    let stale = op.v03("faces", NOW - 10 * GRACE_MS, &op.key_name());
    assert_eq!(judge(&mut a, "faces", &stale, NOW), Verdict::Accept);
    assert_eq!(
        judge(&mut a, "faces", &stale, NOW),
        Verdict::Accept,
        "no replay check"
    );
    assert_eq!(a.refused(), Refused::default());
    assert!(a.is_open("cs"));
}

#[test]
fn a_valid_command_passes_and_its_replay_does_not() {
    let op = signer("/op");
    let mut a = granted(&op, &["fib"]);
    let cmd = op.v03("fib", NOW, &op.key_name());
    assert_eq!(judge(&mut a, "fib", &cmd, NOW), Verdict::Accept);
    assert_eq!(judge(&mut a, "fib", &cmd, NOW), Verdict::Reject);
    assert_eq!(a.refused().replay, 1);
    let earlier = op.v03("fib", NOW - 1, &op.key_name());
    assert_eq!(judge(&mut a, "fib", &earlier, NOW), Verdict::Reject);
    assert_eq!(a.refused().reordered, 1);
    let later = op.v03("fib", NOW + 1, &op.cert.name);
    assert_eq!(
        judge(&mut a, "fib", &later, NOW),
        Verdict::Accept,
        "the certificate's name designates it too"
    );
    assert_eq!(
        a.records(),
        2,
        "one per KeyLocator name, as ndn-cxx keys them"
    );
}

#[test]
fn the_old_form_is_verified_too() {
    let op = signer("/op");
    let mut a = granted(&op, &["strategy-choice"]);
    let cmd = op.old("strategy-choice", NOW);
    assert_eq!(judge(&mut a, "strategy-choice", &cmd, NOW), Verdict::Accept);
    assert_eq!(judge(&mut a, "strategy-choice", &cmd, NOW), Verdict::Reject);
    let mut bad = op.old("strategy-choice", NOW + 5);
    // The SignatureValue component's last byte (the Interest ends with its 6-byte Nonce).
    let n = bad.len();
    bad[n - 7] ^= 1;
    assert_eq!(judge(&mut a, "strategy-choice", &bad, NOW), Verdict::Reject);
    assert_eq!(a.refused().bad_signature, 1);
}

#[test]
fn a_bad_signature_or_another_key_is_refused() {
    let (op, other) = (signer("/op"), signer("/other"));
    let mut a = granted(&op, &["faces", "cs"]);
    let bad = corrupt(&op.v03("faces", NOW, &op.key_name()));
    assert_eq!(judge(&mut a, "faces", &bad, NOW), Verdict::Reject);
    assert_eq!(a.refused().bad_signature, 1);
    // Signed by another key, claiming the granted one.
    let forged = other.v03("faces", NOW + 1, &op.key_name());
    assert_eq!(judge(&mut a, "faces", &forged, NOW), Verdict::Reject);
    assert_eq!(a.refused().bad_signature, 2);
    // Signed by another key, naming it.
    let foreign = other.v03("cs", NOW, &other.key_name());
    assert_eq!(judge(&mut a, "cs", &foreign, NOW), Verdict::Reject);
    assert_eq!(a.refused().unknown_key, 1);
    // Nothing was recorded: the granted key's command at the same time still passes.
    let good = op.v03("faces", NOW, &op.key_name());
    assert_eq!(judge(&mut a, "faces", &good, NOW), Verdict::Accept);
    // A module granted to nobody.
    let fib = op.v03("fib", NOW + 2, &op.key_name());
    assert_eq!(judge(&mut a, "fib", &fib, NOW), Verdict::Reject);
    assert_eq!(a.refused().unknown_key, 2);
}

#[test]
fn a_stale_or_future_time_is_refused() {
    let op = signer("/op");
    let mut a = granted(&op, &["fib"]);
    for t in [NOW - GRACE_MS - 1, NOW + GRACE_MS + 1] {
        let cmd = op.v03("fib", t, &op.key_name());
        assert_eq!(judge(&mut a, "fib", &cmd, NOW), Verdict::Reject);
    }
    assert_eq!(a.refused().stale, 2);
    let edge = op.v03("fib", NOW - GRACE_MS, &op.key_name());
    assert_eq!(judge(&mut a, "fib", &edge, NOW), Verdict::Accept);
}

#[test]
fn unsigned_or_malformed_commands() {
    let op = signer("/op");
    let mut a = granted(&op, &["fib", "rib"]);
    assert_eq!(judge(&mut a, "fib", &unsigned("fib"), NOW), Verdict::Reject);
    assert_eq!(a.refused().no_time, 1);
    // A KeyLocator that is a digest: dropped without an answer, except by the RIB.
    let mut i = InterestView::decode(&op.v03("fib", NOW, &op.key_name()), &Limits::default())
        .unwrap()
        .to_interest();
    let info = i.signature_info.as_mut().unwrap();
    info.key_locator = Some(KeyLocator::KeyDigest(vec![1; 32]));
    let digest_kl = i.to_wire();
    assert_eq!(judge(&mut a, "fib", &digest_kl, NOW), Verdict::Drop);
    assert_eq!(judge(&mut a, "rib", &digest_kl, NOW), Verdict::Reject);
    assert_eq!(a.refused().malformed, 2);
    // DigestSha256 stands for a key no certificate is.
    i.signature_info = Some(SignatureInfo {
        signature_type: signature_type::DIGEST_SHA256,
        time_ms: Some(NOW),
        ..SignatureInfo::default()
    });
    assert_eq!(judge(&mut a, "fib", &i.to_wire(), NOW), Verdict::Reject);
    assert_eq!(a.refused().unknown_key, 1);
}

#[test]
fn rib_stays_open_unless_an_entry_names_it() {
    let op = signer("/op");
    let mut a = granted(&op, &["fib"]);
    assert!(a.is_open("rib") && !a.is_open("fib"));
    assert_eq!(judge(&mut a, "rib", &unsigned("rib"), NOW), Verdict::Accept);
    let mut b = granted(&op, &["rib"]);
    assert!(!b.is_open("rib"));
    assert_eq!(judge(&mut b, "rib", &unsigned("rib"), NOW), Verdict::Reject);
    let any = Authorize {
        cert: None,
        privileges: vec!["faces".into()],
    };
    let c = Authorizations::new(vec![any]).unwrap();
    assert!(c.is_open("faces") && !c.is_open("fib") && c.is_open("rib"));
    let e = Authorizations::new(vec![Authorize {
        cert: None,
        privileges: vec!["fibs".into()],
    }])
    .unwrap_err();
    assert!(e.contains("\"fibs\"") && e.contains("authorize[0]"), "{e}");
}

#[test]
fn times_are_kept_per_module() {
    let op = signer("/op");
    let mut a = granted(&op, &["fib", "faces"]);
    let fib = op.v03("fib", NOW, &op.key_name());
    let faces = op.v03("faces", NOW, &op.key_name());
    assert_eq!(judge(&mut a, "fib", &fib, NOW), Verdict::Accept);
    assert_eq!(judge(&mut a, "faces", &faces, NOW), Verdict::Accept);
}

#[test]
fn records_are_bounded_and_expire() {
    let mut a = Authorizations::default();
    for k in 0..MAX_RECORDS + 3 {
        let key = Name::from_uri(&format!("/k{k}")).unwrap();
        a.record(0, key, 1, k as u64);
    }
    assert_eq!(a.records(), MAX_RECORDS);
    assert_eq!(a.refused().records_evicted, 3);
    assert!(!a
        .records
        .iter()
        .any(|r| r.key == Name::from_uri("/k0").unwrap()));
    let late = (MAX_RECORDS + 3) as u64;
    a.record(1, Name::from_uri("/k0").unwrap(), 1, late);
    assert_eq!(
        a.records(),
        MAX_RECORDS + 1,
        "each module has its own bound"
    );
    a.forget_expired(RECORD_LIFETIME_MS + 5);
    // Left: module 0's keys refreshed at 3..MAX_RECORDS+3, and module 1's; those refreshed
    // at 3, 4 and 5 are an hour old.
    assert_eq!(a.records(), MAX_RECORDS + 1 - 3);
}

#[test]
fn certificates_that_are_not() {
    let op = signer("/op");
    let spki = p256_spki(op.key.public_key().as_ref());
    let mut d = Data::new(Name::from_uri("/op/k1/self/v=1").unwrap(), spki.clone());
    d.sign_digest_sha256();
    let e = Certificate::decode(&d.to_wire()).unwrap_err();
    assert!(e.contains("no certificate name"), "{e}");
    let mut d = Data::new(Name::from_uri("/op/KEY/k1/self/v=1").unwrap(), spki);
    d.sign_digest_sha256();
    let e = Certificate::decode(&d.to_wire()).unwrap_err();
    assert!(e.contains("ContentType"), "{e}");
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_ms: None,
        final_block_id: None,
    });
    d.content = Some(vec![0x30, 0x03, 0x02, 0x01, 0x00]);
    d.sign_digest_sha256();
    let e = Certificate::decode(&d.to_wire()).unwrap_err();
    assert!(e.contains("SubjectPublicKeyInfo"), "{e}");
    assert!(Certificate::decode(b"\x06\x00").is_err());
}

#[test]
fn every_one_bit_change_of_a_certificate_decodes_or_fails_without_panic() {
    let op = signer("/op");
    let mut d = Data::new(
        op.cert.name.clone(),
        p256_spki(op.key.public_key().as_ref()),
    );
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_ms: None,
        final_block_id: None,
    });
    d.sign_digest_sha256();
    let wire = d.to_wire();
    let mut decoded = 0;
    for i in 0..wire.len() * 8 {
        let mut w = wire.clone();
        w[i / 8] ^= 1 << (i % 8);
        decoded += usize::from(Certificate::decode(&w).is_ok());
    }
    assert!(decoded > 0 && decoded < wire.len() * 8);
}

#[test]
fn localhop_with_trust_anchor_any_checks_times_but_no_signature() {
    let (op, other) = (signer("/op"), signer("/other"));
    let mut a = Authorizations::localhop(None);
    assert!(!a.is_open("rib"));
    // Any key, even a bad signature: accepted (the policy bypasses the signature).
    let bad = corrupt(&other.v03("rib", NOW, &op.key_name()));
    assert_eq!(judge(&mut a, "rib", &bad, NOW), Verdict::Accept);
    // The command-Interest rules still hold: replay, stale, unsigned, all answered 403.
    assert_eq!(judge(&mut a, "rib", &bad, NOW), Verdict::Reject);
    let stale = op.v03("rib", NOW - GRACE_MS - 1, &op.key_name());
    assert_eq!(judge(&mut a, "rib", &stale, NOW), Verdict::Reject);
    assert_eq!(judge(&mut a, "rib", &unsigned("rib"), NOW), Verdict::Reject);
    let r = a.refused();
    assert_eq!((r.replay, r.stale, r.no_time), (1, 1, 1));
    // Only the RIB is served under /localhop.
    let fib = op.v03("fib", NOW + 5, &op.key_name());
    assert_eq!(judge(&mut a, "fib", &fib, NOW), Verdict::Reject);
}

#[test]
fn localhop_with_trust_anchors_verifies_signatures() {
    let (host, other) = (signer("/host"), signer("/other"));
    let mut a = Authorizations::localhop(Some(vec![host.cert.clone()]));
    let good = host.v03("rib", NOW, &host.key_name());
    assert_eq!(judge(&mut a, "rib", &good, NOW), Verdict::Accept);
    let bad = corrupt(&host.v03("rib", NOW + 1, &host.key_name()));
    assert_eq!(judge(&mut a, "rib", &bad, NOW), Verdict::Reject);
    let forged = other.v03("rib", NOW + 2, &host.key_name());
    assert_eq!(judge(&mut a, "rib", &forged, NOW), Verdict::Reject);
    let foreign = other.v03("rib", NOW, &other.key_name());
    assert_eq!(judge(&mut a, "rib", &foreign, NOW), Verdict::Reject);
    let r = a.refused();
    assert_eq!((r.bad_signature, r.unknown_key), (2, 1));
    let later = host.v03("rib", NOW + 3, &host.cert.name);
    assert_eq!(judge(&mut a, "rib", &later, NOW), Verdict::Accept);
}
