//! A key chain written here as ndn-cxx writes one (PIB tables, TPM files), read and signed with.

use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use rusqlite::params;
use wire::data::content_type;
use wire::{Component, Data, InterestView, Limits, MetaInfo};

use super::*;
use crate::auth::{p256_spki, Authorizations, Certificate, Verdict};

/// A temporary directory removed on drop.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(tag: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("cascade-kc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("tpm")).unwrap();
    Dir(d)
}

const SCHEMA: &str = "
CREATE TABLE tpmInfo(tpm_locator BLOB);
CREATE TABLE identities(id INTEGER PRIMARY KEY, identity BLOB NOT NULL, is_default INTEGER DEFAULT 0);
CREATE TABLE keys(id INTEGER PRIMARY KEY, identity_id INTEGER NOT NULL, key_name BLOB NOT NULL,
  key_bits BLOB NOT NULL, is_default INTEGER DEFAULT 0);
CREATE TABLE certificates(id INTEGER PRIMARY KEY, key_id INTEGER NOT NULL,
  certificate_name BLOB NOT NULL, certificate_data BLOB NOT NULL, is_default INTEGER DEFAULT 0);
";

/// Adds identity `id` with one P-256 key `k` (its private key stored as `sec1` or PKCS#8) and a
/// self-signed certificate; returns the certificate.
fn add_identity(d: &Path, id: &str, k: &str, default: bool, sec1: bool) -> Certificate {
    let db = Connection::open(d.join("pib.db")).unwrap();
    db.execute_batch(SCHEMA).ok();
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let spki = p256_spki(pair.public_key().as_ref());
    let key = Name::from_uri(&format!("{id}/KEY/{k}")).unwrap();
    let cert_name = key.clone().with_str("self").with(Component::version(1));
    let mut data = Data::new(cert_name.clone(), spki.clone());
    data.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_ms: Some(3_600_000),
        final_block_id: None,
    });
    data.sign_digest_sha256();
    let cert = data.to_wire();
    let id_wire = Name::from_uri(id).unwrap().to_wire();
    db.execute(
        "INSERT OR IGNORE INTO identities (identity, is_default) VALUES (?1, ?2)",
        params![id_wire, default as i64],
    )
    .unwrap();
    let id_row: i64 = db
        .query_row(
            "SELECT id FROM identities WHERE identity=?1",
            [&id_wire],
            |r| r.get(0),
        )
        .unwrap();
    db.execute(
        "INSERT INTO keys (identity_id, key_name, key_bits, is_default) VALUES (?1, ?2, ?3, 1)",
        params![id_row, key.to_wire(), spki],
    )
    .unwrap();
    let key_row = db.last_insert_rowid();
    db.execute(
        "INSERT INTO certificates (key_id, certificate_name, certificate_data, is_default) \
         VALUES (?1, ?2, ?3, 1)",
        params![key_row, cert_name.to_wire(), cert],
    )
    .unwrap();
    // PKCS#8 v1 from ring: SEQUENCE { 0, AlgorithmIdentifier, OCTET STRING { ECPrivateKey } }.
    let private = if sec1 {
        let (_, body, _) = der(pkcs8.as_ref()).unwrap();
        let (_, _, rest) = der(body).unwrap();
        let (_, _, rest) = der(rest).unwrap();
        der(rest).unwrap().1.to_vec()
    } else {
        pkcs8.as_ref().to_vec()
    };
    let b64 = BASE64.encode(&private);
    let wrapped: Vec<&str> = (0..b64.len())
        .step_by(64)
        .map(|i| &b64[i..(i + 64).min(b64.len())])
        .collect();
    std::fs::write(d.join("tpm").join(key_file_name(&key)), wrapped.join("\n")).unwrap();
    Certificate::decode(&cert).unwrap()
}

/// A new P-256 key of `identity` (`<identity>/KEY/k`) and its self-signed certificate.
pub(crate) fn test_signer(identity: &str) -> (Signer, Certificate) {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let spki = p256_spki(pair.public_key().as_ref());
    let key_name = name(&format!("{identity}/KEY/k"));
    let mut d = Data::new(
        key_name
            .clone()
            .with_str("self")
            .with(Component::version(1)),
        spki.clone(),
    );
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_ms: None,
        final_block_id: None,
    });
    d.sign_digest_sha256();
    let key = private_key(&spki, pkcs8.as_ref()).unwrap();
    (
        Signer { key_name, key },
        Certificate::decode(&d.to_wire()).unwrap(),
    )
}

fn name(s: &str) -> Name {
    Name::from_uri(s).unwrap()
}

#[test]
fn signing_info_strings() {
    assert_eq!(SigningInfo::parse("").unwrap(), SigningInfo::Digest);
    assert_eq!(
        SigningInfo::parse("id:/localhost/identity/digest-sha256").unwrap(),
        SigningInfo::Digest
    );
    assert_eq!(
        SigningInfo::parse("id:/a").unwrap(),
        SigningInfo::Identity(name("/a"))
    );
    assert_eq!(
        SigningInfo::parse("key:/a/KEY/k").unwrap(),
        SigningInfo::Key(name("/a/KEY/k"))
    );
    assert_eq!(
        SigningInfo::parse("cert:/a/KEY/k/self/v=1").unwrap(),
        SigningInfo::Cert(name("/a/KEY/k/self/v=1"))
    );
    assert!(SigningInfo::parse("/a")
        .unwrap_err()
        .contains("Invalid signing string"));
    assert!(SigningInfo::parse("foo:/a")
        .unwrap_err()
        .contains("scheme: foo"));
}

/// A command signed by `s` now, judged by a hub trusting `anchor`.
fn judged(s: &Signer, anchor: &Certificate) -> Verdict {
    let mut i = Interest::new(name("/localhop/nfd/rib/register").with_str("x"), [1; 4]);
    let mut info = s.signature_info();
    info.nonce = Some(vec![3; 8]);
    info.time_ms = Some(1_800_000_000_000);
    s.sign_interest(&mut i, info).unwrap();
    let w = i.to_wire();
    let v = InterestView::decode(&w, &Limits::default()).unwrap();
    Authorizations::localhop(Some(vec![anchor.clone()])).check("rib", &v, 1_800_000_000_000, 0)
}

#[test]
fn identities_keys_and_signers_as_ndn_cxx_stores_them() {
    let d = dir("read");
    let a = add_identity(&d.0, "/a", "ka", false, true);
    let b = add_identity(&d.0, "/b/c", "kb", true, false);
    let kc = KeyChain::open(&d.0, &d.0.join("tpm")).unwrap();
    assert_eq!(kc.identities().unwrap(), [name("/b/c"), name("/a")]);
    assert_eq!(kc.default_key(&name("/a")).unwrap(), name("/a/KEY/ka"));
    let cert = Certificate::decode(&kc.default_certificate(&name("/a/KEY/ka")).unwrap());
    assert_eq!(cert.unwrap(), a);
    for (info, anchor) in [
        (SigningInfo::Identity(name("/a")), &a),
        (SigningInfo::Key(name("/b/c/KEY/kb")), &b),
        (SigningInfo::Cert(b.name.clone()), &b),
    ] {
        let s = kc.signer(&info).unwrap().unwrap();
        assert_eq!(s.signature_type(), signature_type::SHA256_WITH_ECDSA);
        assert_eq!(s.key_name(), &anchor.key_name());
        assert_eq!(judged(&s, anchor), Verdict::Accept, "{info:?}");
    }
    let sa = kc
        .signer(&SigningInfo::Identity(name("/a")))
        .unwrap()
        .unwrap();
    assert_eq!(
        judged(&sa, &b),
        Verdict::Reject,
        "another identity's anchor"
    );
    assert!(kc.signer(&SigningInfo::Digest).unwrap().is_none());
    let e = kc.signer(&SigningInfo::Identity(name("/z"))).unwrap_err();
    assert!(e.contains("/z"), "{e}");
    // A private key file gone: one line naming the key.
    std::fs::remove_file(d.0.join("tpm").join(key_file_name(&name("/a/KEY/ka")))).unwrap();
    let e = kc.signer(&SigningInfo::Identity(name("/a"))).unwrap_err();
    assert!(e.contains("/a/KEY/ka") && !e.contains('\n'), "{e}");
    assert!(KeyChain::open(&d.0.join("nowhere"), &d.0).is_err());
}

#[test]
fn the_tpm_file_name_is_the_hex_sha256_of_the_key_name() {
    // python-ndn's TpmFile: sha256(Name.encode(key)).hexdigest() + '.privkey'.
    let n = name("/a");
    assert_eq!(n.to_wire(), [7, 3, 8, 1, b'a']);
    let f = key_file_name(&n);
    assert!(f.ends_with(".privkey") && f.len() == 64 + 8, "{f}");
    assert!(f[..64]
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
}
