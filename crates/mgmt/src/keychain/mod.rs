//! A key chain read the way ndn-cxx and python-ndn store one, and signing with it.
//!
//! - The PIB (`pib-sqlite3`): an SQLite database `pib.db` whose tables `identities`
//!   (`identity`, `is_default`), `keys` (`identity_id`, `key_name`, `key_bits`: the public key
//!   as a SubjectPublicKeyInfo, `is_default`) and `certificates` (`key_id`, `certificate_name`,
//!   `certificate_data`: the certificate's Data, `is_default`) hold names as their TLV
//!   encoding, one default per level.
//! - The TPM (`tpm-file`): a directory of private keys, one file per key, named by the SHA-256
//!   (lowercase hex) of the key name's TLV and `.privkey`, holding the key's DER in base64
//!   (line breaks allowed): PKCS#1 `RSAPrivateKey`, SEC1 `ECPrivateKey` or PKCS#8.
//! - Where they are: `NDN_CLIENT_PIB` / `NDN_CLIENT_TPM` (`pib-sqlite3:<dir>`,
//!   `tpm-file:<dir>`), else the `pib=` / `tpm=` lines of `~/.ndn/client.conf`, else
//!   `/etc/ndn/client.conf`, else `~/.ndn` and `~/.ndn/ndnsec-key-file` (an empty location means
//!   those defaults), as ndn-cxx finds them.
//!
//! Signing ([`KeyChain::signer`]) follows ndn-cxx's `SigningInfo` strings ([`SigningInfo`]):
//! the identity's default key, a key, or a certificate's key; ECDSA (P-256) signs
//! SignatureSha256WithEcdsa (DER), RSA signs SignatureSha256WithRsa (PKCS#1 v1.5); the
//! KeyLocator is the key name, as ndn-cxx writes it.

#[cfg(test)]
pub(crate) mod tests;

use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use wire::data::signature_type;
use wire::{sha256, tlv, tt, Data, DataView, Interest, KeyLocator, Limits, Name, SignatureInfo};

use crate::auth::{der, read_spki, Alg};

/// How to sign, as ndn-cxx's `SigningInfo` string: `""` or `id:/localhost/identity/digest-sha256`
/// for DigestSha256, `id:/name`, `key:/name/KEY/...` or `cert:/name/KEY/.../...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigningInfo {
    /// DigestSha256 (no key).
    Digest,
    /// The default key of this identity.
    Identity(Name),
    /// This key.
    Key(Name),
    /// The key of this certificate.
    Cert(Name),
}

/// The identity DigestSha256 stands for.
pub const DIGEST_SHA256_IDENTITY: &str = "/localhost/identity/digest-sha256";

impl SigningInfo {
    /// Reads a SigningInfo string; the error is ndn-cxx's words for it.
    pub fn parse(s: &str) -> Result<SigningInfo, String> {
        if s.is_empty() {
            return Ok(SigningInfo::Digest);
        }
        let Some((scheme, rest)) = s.split_once(':') else {
            return Err(format!(
                "Invalid signing string cannot represent SigningInfo: {s}"
            ));
        };
        let name = || Name::from_uri(rest).map_err(|e| format!("Invalid name {rest}: {e:?}"));
        match scheme {
            "id" if rest == DIGEST_SHA256_IDENTITY => Ok(SigningInfo::Digest),
            "id" => Ok(SigningInfo::Identity(name()?)),
            "key" => Ok(SigningInfo::Key(name()?)),
            "cert" => Ok(SigningInfo::Cert(name()?)),
            _ => Err(format!("Invalid signing string scheme: {scheme}")),
        }
    }
}

/// A private key and what it signs as.
pub struct Signer {
    key_name: Name,
    key: PrivateKey,
}

enum PrivateKey {
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("key_name", &self.key_name)
            .finish_non_exhaustive()
    }
}

impl Signer {
    /// The key's name (the KeyLocator).
    pub fn key_name(&self) -> &Name {
        &self.key_name
    }

    /// SignatureSha256WithEcdsa or SignatureSha256WithRsa.
    pub fn signature_type(&self) -> u64 {
        match self.key {
            PrivateKey::Ecdsa(_) => signature_type::SHA256_WITH_ECDSA,
            PrivateKey::Rsa(_) => signature_type::SHA256_WITH_RSA,
        }
    }

    /// The signature of the concatenation of `parts`.
    pub fn sign(&self, parts: &[&[u8]]) -> Result<Vec<u8>, String> {
        let rng = SystemRandom::new();
        let msg = parts.concat();
        match &self.key {
            PrivateKey::Ecdsa(k) => k
                .sign(&rng, &msg)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| "ECDSA signing failed".to_string()),
            PrivateKey::Rsa(k) => {
                let mut sig = vec![0; k.public().modulus_len()];
                k.sign(&signature::RSA_PKCS1_SHA256, &rng, &msg, &mut sig)
                    .map_err(|_| "RSA signing failed".to_string())?;
                Ok(sig)
            }
        }
    }

    /// The SignatureInfo this key signs with (KeyLocator: the key name).
    pub fn signature_info(&self) -> SignatureInfo {
        SignatureInfo {
            signature_type: self.signature_type(),
            key_locator: Some(KeyLocator::Name(self.key_name.clone())),
            ..SignatureInfo::default()
        }
    }

    /// Signs `data` with this key (its SignatureInfo replaced: [`Signer::signature_info`]).
    pub fn sign_data(&self, data: &mut Data) -> Result<(), String> {
        data.signature_info = self.signature_info();
        data.signature_value.clear();
        let w = data.to_wire();
        let v = DataView::decode(&w, &Limits::default()).map_err(|e| format!("{e}"))?;
        data.signature_value = self.sign(&[v.signed_portion()])?;
        Ok(())
    }

    /// Signs `interest` in the v0.3 form with `info` (this key's [`Signer::signature_info`]
    /// plus SignatureNonce and SignatureTime, as a command wants them): ApplicationParameters
    /// (empty if none), InterestSignatureInfo, and InterestSignatureValue over the name's
    /// components, then ApplicationParameters and InterestSignatureInfo.
    pub fn sign_interest(
        &self,
        interest: &mut Interest,
        info: SignatureInfo,
    ) -> Result<(), String> {
        let signed = signed_portion(interest, &info);
        interest.signature_value = Some(self.sign(&[&signed])?);
        interest.signature_info = Some(info);
        Ok(())
    }
}

/// Signs `interest` DigestSha256 in the v0.3 form with `info` (SignatureType DigestSha256).
pub fn digest_sign_interest(interest: &mut Interest, info: SignatureInfo) {
    let signed = signed_portion(interest, &info);
    interest.signature_value = Some(sha256(&[&signed]).to_vec());
    interest.signature_info = Some(info);
}

/// The signed portion of a v0.3 signed Interest (ApplicationParameters added, empty, if
/// none): the name's components but its ParametersSha256Digest, ApplicationParameters and
/// InterestSignatureInfo.
fn signed_portion(interest: &mut Interest, info: &SignatureInfo) -> Vec<u8> {
    let app = interest.app_params.get_or_insert_with(Vec::new);
    let mut signed = Vec::new();
    let is_digest = |typ: u16| u32::from(typ) == tt::PARAMETERS_SHA256_DIGEST;
    for c in interest
        .name
        .components
        .iter()
        .filter(|c| !is_digest(c.typ))
    {
        c.encode(&mut signed);
    }
    tlv::write_tlv(&mut signed, tt::APPLICATION_PARAMETERS, app);
    info.encode(&mut signed, tt::INTEREST_SIGNATURE_INFO);
    signed
}

/// An open key chain: the PIB database and the TPM directory.
pub struct KeyChain {
    pib: Connection,
    tpm: PathBuf,
}

impl std::fmt::Debug for KeyChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyChain")
            .field("tpm", &self.tpm)
            .finish_non_exhaustive()
    }
}

/// Where the key chain is: the PIB directory (holding `pib.db`) and the TPM directory.
pub fn locations() -> (PathBuf, PathBuf) {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    let ndn = home.join(".ndn");
    let conf = [
        ndn.join("client.conf"),
        PathBuf::from("/etc/ndn/client.conf"),
    ]
    .into_iter()
    .find_map(|p| std::fs::read_to_string(p).ok())
    .unwrap_or_default();
    let setting = |key: &str| {
        std::env::var(format!("NDN_CLIENT_{}", key.to_uppercase()))
            .ok()
            .or_else(|| {
                conf.lines()
                    .filter_map(|l| l.split_once('='))
                    .find(|(k, _)| k.trim() == key)
                    .map(|(_, v)| v.trim().to_string())
            })
    };
    let at = |key: &str, scheme: &str, default: PathBuf| {
        setting(key)
            .and_then(|v| {
                let loc = v.strip_prefix(scheme).unwrap_or("");
                let loc = loc.strip_prefix(':').unwrap_or(loc);
                (!loc.is_empty()).then(|| PathBuf::from(loc))
            })
            .unwrap_or(default)
    };
    (
        at("pib", "pib-sqlite3", ndn.clone()),
        at("tpm", "tpm-file", ndn.join("ndnsec-key-file")),
    )
}

impl KeyChain {
    /// The user's key chain ([`locations`]).
    pub fn open_default() -> Result<KeyChain, String> {
        let (pib, tpm) = locations();
        KeyChain::open(&pib, &tpm)
    }

    /// The key chain whose PIB is `<pib_dir>/pib.db` and whose TPM is `tpm_dir`, read only.
    pub fn open(pib_dir: &Path, tpm_dir: &Path) -> Result<KeyChain, String> {
        let db = pib_dir.join("pib.db");
        let pib = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("cannot open the PIB {}: {e}", db.display()))?;
        Ok(KeyChain {
            pib,
            tpm: tpm_dir.to_path_buf(),
        })
    }

    fn one<T: rusqlite::types::FromSql>(&self, sql: &str, arg: &[u8]) -> Result<Option<T>, String> {
        let mut st = self.pib.prepare(sql).map_err(|e| format!("PIB: {e}"))?;
        st.query_row([arg], |r| r.get(0))
            .optional()
            .map_err(|e| format!("PIB: {e}"))
    }

    /// The identities, the default one first.
    pub fn identities(&self) -> Result<Vec<Name>, String> {
        let sql = "SELECT identity FROM identities ORDER BY is_default DESC, id";
        let mut st = self.pib.prepare(sql).map_err(|e| format!("PIB: {e}"))?;
        let rows = st
            .query_map([], |r| r.get::<_, Vec<u8>>(0))
            .map_err(|e| format!("PIB: {e}"))?;
        rows.map(|r| {
            let w = r.map_err(|e| format!("PIB: {e}"))?;
            Name::decode(&w).map_err(|e| format!("PIB: bad identity name: {e:?}"))
        })
        .collect()
    }

    /// The default key of `identity`.
    pub fn default_key(&self, identity: &Name) -> Result<Name, String> {
        let sql = "SELECT keys.key_name FROM keys JOIN identities \
                   ON keys.identity_id = identities.id \
                   WHERE identities.identity = ?1 ORDER BY keys.is_default DESC, keys.id LIMIT 1";
        let w: Vec<u8> = self
            .one(sql, &identity.to_wire())?
            .ok_or_else(|| format!("identity {identity} has no key in the PIB"))?;
        Name::decode(&w).map_err(|e| format!("PIB: bad key name: {e:?}"))
    }

    /// The default certificate of `key` (its Data).
    pub fn default_certificate(&self, key: &Name) -> Result<Vec<u8>, String> {
        let sql = "SELECT certificates.certificate_data FROM certificates JOIN keys \
                   ON certificates.key_id = keys.id WHERE keys.key_name = ?1 \
                   ORDER BY certificates.is_default DESC, certificates.id LIMIT 1";
        self.one(sql, &key.to_wire())?
            .ok_or_else(|| format!("key {key} has no certificate in the PIB"))
    }

    /// The signer `info` names (`None` for DigestSha256).
    pub fn signer(&self, info: &SigningInfo) -> Result<Option<Signer>, String> {
        let key = match info {
            SigningInfo::Digest => return Ok(None),
            SigningInfo::Identity(id) => self.default_key(id)?,
            SigningInfo::Key(k) => k.clone(),
            SigningInfo::Cert(c) if c.len() >= 2 => c.prefix(c.len() - 2),
            SigningInfo::Cert(c) => return Err(format!("{c} is no certificate name")),
        };
        let bits: Vec<u8> = self
            .one(
                "SELECT key_bits FROM keys WHERE key_name = ?1",
                &key.to_wire(),
            )?
            .ok_or_else(|| format!("key {key} is not in the PIB"))?;
        let file = self.tpm.join(key_file_name(&key));
        let text = std::fs::read(&file)
            .map_err(|e| format!("private key of {key} ({}): {e}", file.display()))?;
        let text: Vec<u8> = text
            .into_iter()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        let private = BASE64
            .decode(&text)
            .map_err(|e| format!("private key of {key}: not base64 ({e})"))?;
        let key_pair = private_key(&bits, &private).ok_or_else(|| {
            format!("private key of {key}: not an ECDSA or RSA key matching the PIB's")
        })?;
        Ok(Some(Signer {
            key_name: key,
            key: key_pair,
        }))
    }
}

/// Why no signer came of a SigningInfo string ([`load_signer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignerError {
    /// The string is no SigningInfo (a usage error).
    Invalid(String),
    /// The key chain has no such signer, or cannot be read.
    NotFound(String),
}

/// The signer a SigningInfo string names, from the user's key chain ([`locations`]); `None`
/// for DigestSha256 (the key chain is then not opened).
pub fn load_signer(s: &str) -> Result<Option<Signer>, SignerError> {
    let info = SigningInfo::parse(s).map_err(SignerError::Invalid)?;
    if info == SigningInfo::Digest {
        return Ok(None);
    }
    let not_found = |e: String| SignerError::NotFound(format!("cannot sign with {s}: {e}"));
    KeyChain::open_default()
        .and_then(|kc| kc.signer(&info))
        .map_err(not_found)
}

/// The TPM file name of `key`: lowercase hex SHA-256 of the name's TLV, then `.privkey`.
pub fn key_file_name(key: &Name) -> String {
    let digest = sha256(&[&key.to_wire()]);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}.privkey")
}

/// The key pair of `private` (DER) whose public key is the SubjectPublicKeyInfo `spki`.
fn private_key(spki: &[u8], private: &[u8]) -> Option<PrivateKey> {
    let rng = SystemRandom::new();
    let (alg, point) = read_spki(spki)?;
    let ecdsa = match alg {
        Alg::Rsa => {
            return RsaKeyPair::from_der(private)
                .or_else(|_| RsaKeyPair::from_pkcs8(private))
                .ok()
                .map(PrivateKey::Rsa)
        }
        Alg::EcdsaP256 => &signature::ECDSA_P256_SHA256_ASN1_SIGNING,
        // ndn-cxx signs P-384 with SHA-256, which `ring` does not sign with.
        Alg::EcdsaP384 => return None,
    };
    let scalar = ec_scalar(private)?;
    EcdsaKeyPair::from_private_key_and_public_key(ecdsa, scalar, point, &rng)
        .ok()
        .map(PrivateKey::Ecdsa)
}

/// The private scalar of a SEC1 `ECPrivateKey` (`SEQUENCE { INTEGER 1, OCTET STRING, ... }`),
/// or of one inside PKCS#8 (`SEQUENCE { INTEGER 0, SEQUENCE, OCTET STRING { ECPrivateKey } }`).
fn ec_scalar(private: &[u8]) -> Option<&[u8]> {
    let (0x30, body, _) = der(private)? else {
        return None;
    };
    let (0x02, version, rest) = der(body)? else {
        return None;
    };
    match version {
        [1] => match der(rest)? {
            (0x04, scalar, _) => Some(scalar),
            _ => None,
        },
        [0] => {
            let (0x30, _, rest) = der(rest)? else {
                return None;
            };
            let (0x04, inner, _) = der(rest)? else {
                return None;
            };
            ec_scalar(inner)
        }
        _ => None,
    }
}
