//! Trust anchors: NDN certificates (version 2) and the public keys they carry, and signature
//! verification with them (`ring`).
//!
//! A certificate is a Data named `/<identity>/KEY/<key-id>/<issuer-id>/<version>`, of
//! ContentType KEY, whose Content is the key as an X.509 SubjectPublicKeyInfo (DER), as ndn-cxx's
//! `Certificate` requires. The keys verified: ECDSA on P-256 or P-384 with SHA-256 (signature
//! in ASN.1 DER, as ndn-cxx writes it) and RSA PKCS#1 v1.5 with SHA-256 (2048 to 8192 bits).

use ring::signature::{self, UnparsedPublicKey, VerificationAlgorithm};
use wire::data::content_type;
use wire::{DataView, Limits, Name};

/// The algorithm identifiers read from a SubjectPublicKeyInfo (DER, tag and length included).
const OID_EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const OID_P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];
const OID_RSA: &[u8] = &[
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
];

/// A trust anchor: a certificate's name and the key it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate {
    /// The certificate's name (`/<identity>/KEY/<key-id>/<issuer-id>/<version>`).
    pub name: Name,
    alg: Alg,
    /// The key as `ring` reads it: the EC point, or the RSAPublicKey (DER).
    key: Vec<u8>,
    /// Its ValidityPeriod (NotBefore, NotAfter) in milliseconds since the Unix epoch; `None`
    /// when it has none (ndn-cxx then takes it as never valid, for a certificate that is not a
    /// trust anchor).
    pub validity_ms: Option<(u64, u64)>,
}

/// A public key's algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alg {
    /// ECDSA on P-256.
    EcdsaP256,
    /// ECDSA on P-384.
    EcdsaP384,
    /// RSA.
    Rsa,
}

impl Certificate {
    /// Decodes a certificate (the Data TLV); the error says what is wrong with it.
    pub fn decode(bytes: &[u8]) -> Result<Certificate, String> {
        let d = DataView::decode(bytes, &Limits::default())
            .map_err(|e| format!("not an NDN certificate (a Data packet): {e}"))?;
        let name = d.name().to_name();
        let n = name.components.len();
        let key_at = n.checked_sub(4).map(|i| &name.components[i]);
        if !key_at.is_some_and(|c| c.value == b"KEY" && c.typ == 8) {
            return Err(format!(
                "{name} is no certificate name (/<identity>/KEY/<key-id>/<issuer>/<version>)"
            ));
        }
        if d.content_type() != Some(content_type::KEY) {
            return Err("the certificate's ContentType is not KEY".into());
        }
        let spki = d
            .content()
            .filter(|c| !c.is_empty())
            .ok_or("no public key")?;
        let (alg, key) = read_spki(spki).ok_or_else(|| {
            "the public key is no ECDSA P-256/P-384 or RSA SubjectPublicKeyInfo".to_string()
        })?;
        let validity_ms = d.signature_info().validity_period.and_then(read_validity);
        Ok(Certificate {
            name,
            alg,
            key: key.to_vec(),
            validity_ms,
        })
    }

    /// Whether `wall_ms` (milliseconds since the Unix epoch) is within its ValidityPeriod
    /// (ndn-cxx's `Certificate::isValid`: none is never valid).
    pub fn valid_at(&self, wall_ms: u64) -> bool {
        self.validity_ms
            .is_some_and(|(from, until)| from <= wall_ms && wall_ms <= until)
    }

    /// The certificate's key name (its name without issuer and version).
    pub fn key_name(&self) -> Name {
        let n = self.name.components.len();
        Name {
            components: self.name.components[..n - 2].to_vec(),
        }
    }

    /// Whether a KeyLocator naming `key` designates this certificate (`key` is a prefix of the
    /// certificate's name: the key name or the certificate name itself, as ndn-cxx finds a
    /// trust anchor).
    pub fn designated_by(&self, key: &Name) -> bool {
        let (k, c) = (&key.components, &self.name.components);
        k.len() <= c.len() && c[..k.len()] == k[..]
    }

    /// Whether `sig` is this key's signature over the concatenation of `signed`.
    pub fn verifies(&self, signed: &[&[u8]], sig: &[u8]) -> bool {
        let alg: &dyn VerificationAlgorithm = match self.alg {
            Alg::EcdsaP256 => &signature::ECDSA_P256_SHA256_ASN1,
            Alg::EcdsaP384 => &signature::ECDSA_P384_SHA256_ASN1,
            Alg::Rsa => &signature::RSA_PKCS1_2048_8192_SHA256,
        };
        let message = signed.concat();
        UnparsedPublicKey::new(alg, &self.key)
            .verify(&message, sig)
            .is_ok()
    }
}

/// A ValidityPeriod's value: NotBefore (0xFE) and NotAfter (0xFF), each `YYYYMMDDThhmmss` (UTC),
/// as milliseconds since the Unix epoch.
fn read_validity(v: &[u8]) -> Option<(u64, u64)> {
    let mut r = wire::tlv::Reader::new(v);
    let (a, b) = (r.read().ok()?, r.read().ok()?);
    if a.typ != 0xFE || b.typ != 0xFF {
        return None;
    }
    Some((iso_ms(a.value)?, iso_ms(b.value)?))
}

/// `YYYYMMDDThhmmss` (ISO 8601 basic, UTC) as milliseconds since the Unix epoch.
pub fn iso_ms(s: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(s).ok()?;
    if s.len() != 15 || s.as_bytes()[8] != b'T' || !s.is_char_boundary(8) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<u64>().ok();
    let (y, m, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hh, mm, ss) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from the civil date (H. Hinnant's algorithm), from 1970 on.
    let (y, m) = if m <= 2 {
        (y.checked_sub(1)?, m + 9)
    } else {
        (y, m - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000)
}

/// `ms` (since the Unix epoch) as `YYYYMMDDThhmmss`: for tests and for tools that make
/// certificates.
pub fn ms_iso(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// One DER element at the start of `buf`: (tag, value, the rest).
pub(crate) fn der(buf: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = buf.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 3 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |a, &b| a << 8 | b as usize);
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The algorithm and the key bits of a SubjectPublicKeyInfo:
/// `SEQUENCE { SEQUENCE { OID, parameters }, BIT STRING }`.
pub(crate) fn read_spki(spki: &[u8]) -> Option<(Alg, &[u8])> {
    let (0x30, body, []) = der(spki)? else {
        return None;
    };
    let (0x30, alg_id, rest) = der(body)? else {
        return None;
    };
    let (0x03, bits, []) = der(rest)? else {
        return None;
    };
    let (0, key) = bits.split_first()? else {
        return None;
    };
    let alg = if let Some(curve) = alg_id.strip_prefix(OID_EC_PUBLIC_KEY) {
        match curve {
            OID_P256 => Alg::EcdsaP256,
            OID_P384 => Alg::EcdsaP384,
            _ => return None,
        }
    } else if alg_id.starts_with(OID_RSA) {
        Alg::Rsa
    } else {
        return None;
    };
    Some((alg, key))
}

/// The SubjectPublicKeyInfo (DER) of a P-256 public key given as its uncompressed point (what
/// `ring` gives of a key it generated): for tests and for tools that make certificates.
pub fn p256_spki(point: &[u8]) -> Vec<u8> {
    let alg = [OID_EC_PUBLIC_KEY, OID_P256].concat();
    let mut bits = vec![0u8];
    bits.extend_from_slice(point);
    let mut body = der_element(0x30, &alg);
    body.extend(der_element(0x03, &bits));
    der_element(0x30, &body)
}

/// A DER element (lengths below 64 KiB).
fn der_element(tag: u8, value: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match value.len() {
        n @ 0..=0x7f => out.push(n as u8),
        n @ 0x80..=0xff => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(value);
    out
}
