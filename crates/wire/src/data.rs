//! Data packets: [`DataView`] (zero-copy, validated), the owned [`Data`] builder, MetaInfo,
//! SignatureInfo, KeyLocator, the implicit SHA-256 digest and DigestSha256 signatures.
//!
//! Element order (packet format v0.3): Name, MetaInfo?, Content?, SignatureInfo, SignatureValue.
//! MetaInfo holds ContentType?, FreshnessPeriod?, FinalBlockId?. SignatureInfo holds
//! SignatureType, KeyLocator?, ValidityPeriod?, SignatureNonce?, SignatureTime?, SignatureSeqNum?.

use crate::error::{Error, ErrorKind, Result};
use crate::name::{Component, ComponentView, Name, NameView, DIGEST_LEN};
use crate::packet::outer_element;
use crate::tlv::{self, Element, OrderCheck, Span};
use crate::{packet_element, sha256, tt, Limits};

/// SignatureType values.
pub mod signature_type {
    /// DigestSha256: the SignatureValue is the SHA-256 of the signed portion.
    pub const DIGEST_SHA256: u64 = 0;
    /// SignatureSha256WithRsa.
    pub const SHA256_WITH_RSA: u64 = 1;
    /// SignatureSha256WithEcdsa.
    pub const SHA256_WITH_ECDSA: u64 = 3;
    /// SignatureHmacWithSha256.
    pub const HMAC_WITH_SHA256: u64 = 4;
    /// SignatureEd25519.
    pub const ED25519: u64 = 5;
}

/// ContentType values.
pub mod content_type {
    /// BLOB: payload.
    pub const BLOB: u64 = 0;
    /// LINK: a list of delegations.
    pub const LINK: u64 = 1;
    /// KEY: a public key or certificate.
    pub const KEY: u64 = 2;
    /// NACK: an application-level negative acknowledgement.
    pub const NACK: u64 = 3;
    /// PREFIX_ANN: a prefix announcement.
    pub const PREFIX_ANN: u64 = 5;
}

const DATA_ORDER: &[u32] = &[
    tt::NAME,
    tt::META_INFO,
    tt::CONTENT,
    tt::SIGNATURE_INFO,
    tt::SIGNATURE_VALUE,
];
const META_ORDER: &[u32] = &[tt::CONTENT_TYPE, tt::FRESHNESS_PERIOD, tt::FINAL_BLOCK_ID];
const SIG_ORDER: &[u32] = &[
    tt::SIGNATURE_TYPE,
    tt::KEY_LOCATOR,
    tt::VALIDITY_PERIOD,
    tt::SIGNATURE_NONCE,
    tt::SIGNATURE_TIME,
    tt::SIGNATURE_SEQ_NUM,
];

/// A KeyLocator borrowed from a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLocatorView<'a> {
    /// The key's name.
    Name(NameView<'a>),
    /// The key's digest.
    KeyDigest(&'a [u8]),
}

/// An owned KeyLocator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyLocator {
    /// The key's name.
    Name(Name),
    /// The key's digest.
    KeyDigest(Vec<u8>),
}

/// A SignatureInfo (Data) or InterestSignatureInfo borrowed from a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignatureInfoView<'a> {
    /// SignatureType.
    pub signature_type: u64,
    /// KeyLocator.
    pub key_locator: Option<KeyLocatorView<'a>>,
    /// ValidityPeriod value (NotBefore, NotAfter), kept opaque.
    pub validity_period: Option<&'a [u8]>,
    /// SignatureNonce.
    pub nonce: Option<&'a [u8]>,
    /// SignatureTime (milliseconds since the Unix epoch).
    pub time_ms: Option<u64>,
    /// SignatureSeqNum.
    pub seq_num: Option<u64>,
}

impl<'a> SignatureInfoView<'a> {
    /// Type 0 and nothing else: where a decode starts. No decoded packet's view is this (a
    /// SignatureType is required).
    pub const ABSENT: SignatureInfoView<'static> = SignatureInfoView {
        signature_type: 0,
        key_locator: None,
        validity_period: None,
        nonce: None,
        time_ms: None,
        seq_num: None,
    };

    /// Decodes the value of a SignatureInfo or InterestSignatureInfo element.
    #[inline(always)]
    pub fn from_element(e: Element<'a>, limits: &Limits) -> Result<Self> {
        let mut r = e.reader();
        let mut order = OrderCheck::new(SIG_ORDER, &[]);
        let mut s = SignatureInfoView::ABSENT;
        let mut has_type = false;
        while let Some(x) = r.next_element() {
            let x = x?;
            if order.accept(&x)?.is_none() {
                continue;
            }
            match x.typ {
                tt::SIGNATURE_TYPE => {
                    s.signature_type = x.nni()?;
                    has_type = true;
                }
                tt::KEY_LOCATOR => {
                    let mut k = x.reader();
                    let inner = k.read()?;
                    s.key_locator = Some(match inner.typ {
                        tt::NAME => KeyLocatorView::Name(NameView::from_element(inner, limits)?),
                        tt::KEY_DIGEST => KeyLocatorView::KeyDigest(inner.value),
                        t => return Err(Error::new(ErrorKind::UnknownCritical(t), inner.offset)),
                    });
                    if !k.is_empty() {
                        return Err(Error::new(ErrorKind::TrailingBytes, k.offset()));
                    }
                }
                tt::VALIDITY_PERIOD => s.validity_period = Some(x.value),
                tt::SIGNATURE_NONCE => s.nonce = Some(x.value),
                tt::SIGNATURE_TIME => s.time_ms = Some(x.nni()?),
                tt::SIGNATURE_SEQ_NUM => s.seq_num = Some(x.nni()?),
                _ => {}
            }
            if !has_type {
                return Err(Error::new(ErrorKind::Missing(tt::SIGNATURE_TYPE), x.offset));
            }
        }
        if !has_type {
            return Err(Error::new(
                ErrorKind::Missing(tt::SIGNATURE_TYPE),
                e.value_offset,
            ));
        }
        Ok(s)
    }

    /// Owned copy.
    pub fn to_signature_info(&self) -> SignatureInfo {
        SignatureInfo {
            signature_type: self.signature_type,
            key_locator: self.key_locator.map(|k| match k {
                KeyLocatorView::Name(n) => KeyLocator::Name(n.to_name()),
                KeyLocatorView::KeyDigest(d) => KeyLocator::KeyDigest(d.to_vec()),
            }),
            validity_period: self.validity_period.map(<[u8]>::to_vec),
            nonce: self.nonce.map(<[u8]>::to_vec),
            time_ms: self.time_ms,
            seq_num: self.seq_num,
        }
    }
}

/// An owned SignatureInfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignatureInfo {
    /// SignatureType (see [`signature_type`]).
    pub signature_type: u64,
    /// KeyLocator.
    pub key_locator: Option<KeyLocator>,
    /// ValidityPeriod value, opaque.
    pub validity_period: Option<Vec<u8>>,
    /// SignatureNonce.
    pub nonce: Option<Vec<u8>>,
    /// SignatureTime in milliseconds since the Unix epoch.
    pub time_ms: Option<u64>,
    /// SignatureSeqNum.
    pub seq_num: Option<u64>,
}

impl SignatureInfo {
    /// Appends the element with outer type `typ` (SignatureInfo or InterestSignatureInfo).
    pub fn encode(&self, out: &mut Vec<u8>, typ: u32) {
        tlv::write_nested(out, typ, |o| {
            tlv::write_nni_tlv(o, tt::SIGNATURE_TYPE, self.signature_type);
            match &self.key_locator {
                Some(KeyLocator::Name(n)) => tlv::write_nested(o, tt::KEY_LOCATOR, |o| n.encode(o)),
                Some(KeyLocator::KeyDigest(d)) => {
                    tlv::write_nested(o, tt::KEY_LOCATOR, |o| tlv::write_tlv(o, tt::KEY_DIGEST, d))
                }
                None => {}
            }
            if let Some(v) = &self.validity_period {
                tlv::write_tlv(o, tt::VALIDITY_PERIOD, v);
            }
            if let Some(n) = &self.nonce {
                tlv::write_tlv(o, tt::SIGNATURE_NONCE, n);
            }
            if let Some(t) = self.time_ms {
                tlv::write_nni_tlv(o, tt::SIGNATURE_TIME, t);
            }
            if let Some(s) = self.seq_num {
                tlv::write_nni_tlv(o, tt::SIGNATURE_SEQ_NUM, s);
            }
        });
    }
}

/// Owned MetaInfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaInfo {
    /// ContentType (absent means BLOB).
    pub content_type: Option<u64>,
    /// FreshnessPeriod in milliseconds (absent means 0: never fresh).
    pub freshness_ms: Option<u64>,
    /// FinalBlockId.
    pub final_block_id: Option<Component>,
}

impl MetaInfo {
    fn encode(&self, out: &mut Vec<u8>) {
        tlv::write_nested(out, tt::META_INFO, |o| {
            if let Some(c) = self.content_type {
                tlv::write_nni_tlv(o, tt::CONTENT_TYPE, c);
            }
            if let Some(f) = self.freshness_ms {
                tlv::write_nni_tlv(o, tt::FRESHNESS_PERIOD, f);
            }
            if let Some(c) = &self.final_block_id {
                tlv::write_nested(o, tt::FINAL_BLOCK_ID, |o| c.encode(o));
            }
        });
    }
}

/// A validated Data packet borrowed from a buffer.
#[derive(Debug, Clone, Copy)]
pub struct DataView<'a> {
    wire: &'a [u8],
    offset: usize,
    name: NameView<'a>,
    /// ContentType, valid when `has_content_type`.
    content_type: u64,
    /// FreshnessPeriod, valid when `has_freshness`.
    freshness_ms: u64,
    has_meta_info: bool,
    has_content_type: bool,
    has_freshness: bool,
    /// Where the signed portion starts (the Name) in `wire`; it ends with `signature_info`.
    signed_start: u32,
    // The elements a forwarder seldom reads, validated here and read again when asked for:
    // the view stays at 128 bytes (it was 344), which the forwarding pipeline moves for
    // every packet.
    /// The FinalBlockId's component (not the FinalBlockId element).
    final_block_id: Span,
    content: Span,
    signature_info: Span,
    signature_value: Span,
}

// The forwarding pipeline moves a view per packet: at 128 bytes or less the compiler moves it
// with a few vector stores instead of a `memcpy` call (measured: docs/experiments).
const _: () = assert!(core::mem::size_of::<DataView<'static>>() <= 128);

impl<'a> DataView<'a> {
    /// Decodes a Data packet that fills `buf` exactly.
    pub fn decode(buf: &'a [u8], limits: &Limits) -> Result<Self> {
        Self::from_element(outer_element(buf, 0, limits)?, limits)
    }

    /// Decodes a Data packet from an already delimited element.
    pub fn from_element(e: Element<'a>, limits: &Limits) -> Result<Self> {
        let e = packet_element(e, tt::DATA, limits)?;
        let mut r = e.reader();
        if r.is_empty() {
            return Err(Error::new(ErrorKind::Missing(tt::NAME), e.value_offset));
        }
        let first = r.read()?;
        if first.typ != tt::NAME {
            return Err(Error::new(ErrorKind::Missing(tt::NAME), first.offset));
        }
        let name = NameView::from_element(first, limits)?;
        let mut order = OrderCheck::new(DATA_ORDER, &[]);
        order.accept(&first)?;
        let mut v = DataView {
            wire: e.wire,
            offset: e.offset,
            name,
            content_type: 0,
            freshness_ms: 0,
            has_meta_info: false,
            has_content_type: false,
            has_freshness: false,
            signed_start: (e.value_offset - e.offset) as u32,
            final_block_id: Span::NONE,
            content: Span::NONE,
            signature_info: Span::NONE,
            signature_value: Span::NONE,
        };
        let (mut has_sig_info, mut has_sig_value) = (false, false);
        while let Some(x) = r.next_element() {
            let x = x?;
            if order.accept(&x)?.is_none() {
                continue;
            }
            match x.typ {
                tt::META_INFO => {
                    v.has_meta_info = true;
                    v.decode_meta_info(x, e.offset)?;
                }
                tt::CONTENT => v.content = Span::of(&x, e.offset),
                tt::SIGNATURE_INFO => {
                    SignatureInfoView::from_element(x, limits)?;
                    v.signature_info = Span::of(&x, e.offset);
                    has_sig_info = true;
                }
                tt::SIGNATURE_VALUE => {
                    v.signature_value = Span::of(&x, e.offset);
                    has_sig_value = true;
                }
                _ => {}
            }
        }
        if !has_sig_info {
            return Err(Error::new(ErrorKind::Missing(tt::SIGNATURE_INFO), e.offset));
        }
        if !has_sig_value {
            return Err(Error::new(
                ErrorKind::Missing(tt::SIGNATURE_VALUE),
                e.offset,
            ));
        }
        Ok(v)
    }

    #[inline(always)]
    fn decode_meta_info(&mut self, m: Element<'a>, base: usize) -> Result<()> {
        let mut r = m.reader();
        let mut order = OrderCheck::new(META_ORDER, &[]);
        while let Some(x) = r.next_element() {
            let x = x?;
            if order.accept(&x)?.is_none() {
                continue;
            }
            match x.typ {
                tt::CONTENT_TYPE => {
                    self.content_type = x.nni()?;
                    self.has_content_type = true;
                }
                tt::FRESHNESS_PERIOD => {
                    self.freshness_ms = x.nni()?;
                    self.has_freshness = true;
                }
                tt::FINAL_BLOCK_ID => {
                    let mut c = x.reader();
                    let comp = c.read()?;
                    if comp.typ > 0xFFFF
                        || ((comp.typ == tt::IMPLICIT_SHA256_DIGEST
                            || comp.typ == tt::PARAMETERS_SHA256_DIGEST)
                            && comp.value.len() != DIGEST_LEN)
                    {
                        let kind = if comp.typ > 0xFFFF {
                            ErrorKind::BadComponentType(comp.typ)
                        } else {
                            ErrorKind::BadLength { typ: comp.typ }
                        };
                        return Err(Error::new(kind, comp.offset));
                    }
                    if !c.is_empty() {
                        return Err(Error::new(ErrorKind::TrailingBytes, c.offset()));
                    }
                    self.final_block_id = Span::of(&comp, base);
                }
                _ => {}
            }
        }
        Ok(())
    }

    view_position!("Data");

    /// The name.
    #[inline]
    pub fn name(&self) -> NameView<'a> {
        self.name
    }

    /// ContentType as carried.
    #[inline]
    pub fn content_type(&self) -> Option<u64> {
        self.has_content_type.then_some(self.content_type)
    }

    /// FreshnessPeriod as carried, in milliseconds.
    #[inline]
    pub fn freshness_ms(&self) -> Option<u64> {
        self.has_freshness.then_some(self.freshness_ms)
    }

    /// A sub-element recorded by its span.
    #[inline]
    fn element(&self, span: Span) -> Option<Element<'a>> {
        span.element(self.wire, self.offset)
    }

    /// FinalBlockId.
    #[inline]
    pub fn final_block_id(&self) -> Option<ComponentView<'a>> {
        self.element(self.final_block_id).map(|c| ComponentView {
            typ: c.typ as u16,
            value: c.value,
            wire: c.wire,
        })
    }

    /// Content, if present.
    #[inline]
    pub fn content(&self) -> Option<&'a [u8]> {
        self.element(self.content).map(|e| e.value)
    }

    /// SignatureInfo.
    #[inline]
    pub fn signature_info(&self) -> SignatureInfoView<'a> {
        // Validated under the caller's limits when the Data was decoded: cannot fail.
        self.element(self.signature_info)
            .and_then(|e| SignatureInfoView::from_element(e, &Limits::NONE).ok())
            .unwrap_or(SignatureInfoView::ABSENT)
    }

    /// SignatureValue.
    #[inline]
    pub fn signature_value(&self) -> &'a [u8] {
        self.element(self.signature_value).map_or(&[], |e| e.value)
    }

    /// The signed portion: Name through SignatureInfo.
    #[inline]
    pub fn signed_portion(&self) -> &'a [u8] {
        let start = self.signed_start as usize;
        &self.wire[start..self.signature_info.end().max(start)]
    }

    /// The implicit SHA-256 digest: SHA-256 of the whole Data TLV.
    pub fn implicit_digest(&self) -> [u8; 32] {
        sha256(&[self.wire])
    }

    /// True if this Data is signed DigestSha256 and the digest matches.
    pub fn verify_digest_sha256(&self) -> bool {
        self.signature_info().signature_type == signature_type::DIGEST_SHA256
            && self.signature_value() == sha256(&[self.signed_portion()])
    }

    /// Owned copy.
    pub fn to_data(&self) -> Data {
        Data {
            name: self.name.to_name(),
            meta_info: self.has_meta_info.then(|| MetaInfo {
                content_type: self.content_type(),
                freshness_ms: self.freshness_ms(),
                final_block_id: self.final_block_id().map(|c| c.to_component()),
            }),
            content: self.content().map(<[u8]>::to_vec),
            signature_info: self.signature_info().to_signature_info(),
            signature_value: self.signature_value().to_vec(),
        }
    }
}

/// An owned Data packet, for building packets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Data {
    /// Name.
    pub name: Name,
    /// MetaInfo (None: the element is omitted).
    pub meta_info: Option<MetaInfo>,
    /// Content (None: the element is omitted).
    pub content: Option<Vec<u8>>,
    /// SignatureInfo.
    pub signature_info: SignatureInfo,
    /// SignatureValue.
    pub signature_value: Vec<u8>,
}

impl Data {
    /// A Data packet with `content`, not yet signed.
    pub fn new(name: Name, content: impl Into<Vec<u8>>) -> Self {
        Data {
            name,
            content: Some(content.into()),
            ..Data::default()
        }
    }

    fn encode_signed_portion(&self, out: &mut Vec<u8>) {
        self.name.encode(out);
        if let Some(m) = &self.meta_info {
            m.encode(out);
        }
        if let Some(c) = &self.content {
            tlv::write_tlv(out, tt::CONTENT, c);
        }
        self.signature_info.encode(out, tt::SIGNATURE_INFO);
    }

    /// Signs with DigestSha256: SignatureType 0, no KeyLocator, SignatureValue = SHA-256 of the
    /// signed portion.
    pub fn sign_digest_sha256(&mut self) {
        self.signature_info = SignatureInfo {
            signature_type: signature_type::DIGEST_SHA256,
            ..SignatureInfo::default()
        };
        let mut signed = Vec::new();
        self.encode_signed_portion(&mut signed);
        self.signature_value = sha256(&[&signed]).to_vec();
    }

    /// Appends the Data TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        tlv::write_nested(out, tt::DATA, |o| {
            self.encode_signed_portion(o);
            tlv::write_tlv(o, tt::SIGNATURE_VALUE, &self.signature_value);
        });
    }

    owned_codec!("Data packet", DataView, to_data);

    /// The full name: the name plus the implicit digest component.
    pub fn full_name(&self) -> Name {
        let d = sha256(&[&self.to_wire()]);
        self.name.clone().with(Component::implicit_digest(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind as K;

    fn dec(b: &[u8]) -> Result<DataView<'_>> {
        DataView::decode(b, &Limits::default())
    }

    #[test]
    fn digest_signed_data_vector() {
        let mut d = Data::new(Name::from_uri("/a").unwrap(), b"hi".to_vec());
        d.meta_info = Some(MetaInfo {
            content_type: Some(0),
            freshness_ms: Some(1000),
            final_block_id: Some(Component::segment(3)),
        });
        d.sign_digest_sha256();
        let w = d.to_wire();
        let signed: &[u8] = &[
            0x07, 0x03, 0x08, 0x01, b'a', // Name
            0x14, 0x0C, 0x18, 0x01, 0x00, 0x19, 0x02, 0x03, 0xE8, 0x1A, 0x03, 0x32, 0x01, 0x03,
            0x15, 0x02, b'h', b'i', // Content
            0x16, 0x03, 0x1B, 0x01, 0x00, // SignatureInfo DigestSha256
        ];
        let mut expect = vec![0x06, (signed.len() + 34) as u8];
        expect.extend_from_slice(signed);
        expect.extend_from_slice(&[0x17, 0x20]);
        expect.extend_from_slice(&sha256(&[signed]));
        assert_eq!(w, expect);
        let v = dec(&w).unwrap();
        assert!(v.verify_digest_sha256());
        assert_eq!(v.signed_portion(), signed);
        assert_eq!(v.freshness_ms(), Some(1000));
        assert_eq!(v.content_type(), Some(0));
        assert_eq!(v.final_block_id().unwrap().as_number(), Some(3));
        assert_eq!(v.content(), Some(&b"hi"[..]));
        assert_eq!(v.to_data(), d);
        assert_eq!(v.implicit_digest(), sha256(&[&w]));
        assert_eq!(d.full_name().components[1].value, v.implicit_digest());
        // A flipped content byte breaks the signature but not the decoding.
        let mut bad = w.clone();
        bad[signed.len() - 8] ^= 0x20;
        assert!(!dec(&bad).unwrap().verify_digest_sha256());
    }

    #[test]
    fn signature_info_fields() {
        let si = SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(Name::from_uri("/k/KEY/1").unwrap())),
            validity_period: Some(vec![0xFE, 0x00]),
            nonce: Some(vec![1, 2, 3, 4]),
            time_ms: Some(1_700_000_000_000),
            seq_num: Some(9),
        };
        let mut d = Data::new(Name::from_uri("/x").unwrap(), Vec::new());
        d.signature_info = si.clone();
        d.signature_value = vec![0xAA; 64];
        let v = dec(&d.to_wire()).unwrap().to_data();
        assert_eq!(v.signature_info, si);
        let mut d2 = d.clone();
        d2.signature_info.key_locator = Some(KeyLocator::KeyDigest(vec![7; 32]));
        assert_eq!(dec(&d2.to_wire()).unwrap().to_data(), d2);
    }

    #[test]
    fn rejections() {
        // Missing signature.
        let mut raw = Vec::new();
        tlv::write_nested(&mut raw, tt::DATA, |o| {
            Name::from_uri("/a").unwrap().encode(o)
        });
        assert_eq!(dec(&raw).unwrap_err().kind, K::Missing(tt::SIGNATURE_INFO));
        // Content after SignatureInfo is out of order.
        let mut raw = Vec::new();
        tlv::write_nested(&mut raw, tt::DATA, |o| {
            Name::from_uri("/a").unwrap().encode(o);
            SignatureInfo::default().encode(o, tt::SIGNATURE_INFO);
            tlv::write_tlv(o, tt::CONTENT, b"x");
            tlv::write_tlv(o, tt::SIGNATURE_VALUE, b"");
        });
        assert_eq!(dec(&raw).unwrap_err().kind, K::OutOfOrder(tt::CONTENT));
        // An unknown non-critical element in MetaInfo is skipped; a critical one is not.
        for (t, ok) in [(0x80u8, true), (0x81, false)] {
            let mut raw = Vec::new();
            tlv::write_nested(&mut raw, tt::DATA, |o| {
                Name::from_uri("/a").unwrap().encode(o);
                tlv::write_nested(o, tt::META_INFO, |o| {
                    tlv::write_tlv(o, u32::from(t), b"z");
                });
                SignatureInfo::default().encode(o, tt::SIGNATURE_INFO);
                tlv::write_tlv(o, tt::SIGNATURE_VALUE, b"");
            });
            assert_eq!(dec(&raw).is_ok(), ok, "type {t:#x}");
        }
        // FreshnessPeriod of 3 bytes.
        let mut raw = Vec::new();
        tlv::write_nested(&mut raw, tt::DATA, |o| {
            Name::from_uri("/a").unwrap().encode(o);
            tlv::write_nested(o, tt::META_INFO, |o| {
                tlv::write_tlv(o, tt::FRESHNESS_PERIOD, &[1, 2, 3]);
            });
            SignatureInfo::default().encode(o, tt::SIGNATURE_INFO);
            tlv::write_tlv(o, tt::SIGNATURE_VALUE, b"");
        });
        assert_eq!(dec(&raw).unwrap_err().kind, K::BadNonNegativeInteger);
        // SignatureInfo without SignatureType.
        let mut raw = Vec::new();
        tlv::write_nested(&mut raw, tt::DATA, |o| {
            Name::from_uri("/a").unwrap().encode(o);
            tlv::write_tlv(o, tt::SIGNATURE_INFO, &[]);
            tlv::write_tlv(o, tt::SIGNATURE_VALUE, b"");
        });
        assert_eq!(dec(&raw).unwrap_err().kind, K::Missing(tt::SIGNATURE_TYPE));
    }

    #[test]
    fn empty_data_name_is_allowed() {
        let mut d = Data::new(Name::new(), b"x".to_vec());
        d.sign_digest_sha256();
        assert_eq!(dec(&d.to_wire()).unwrap().name().len(), 0);
    }
}
