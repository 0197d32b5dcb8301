//! Interest packets: [`InterestView`] (zero-copy, validated) and the owned [`Interest`] builder.
//!
//! Element order (packet format v0.3): Name, CanBePrefix?, MustBeFresh?, ForwardingHint?, Nonce?,
//! InterestLifetime?, HopLimit?, then ApplicationParameters? InterestSignatureInfo?
//! InterestSignatureValue?. With ApplicationParameters, the name carries exactly one
//! ParametersSha256DigestComponent equal to the SHA-256 of everything from ApplicationParameters to
//! the end of the Interest; without them, it carries none.

use crate::data::{SignatureInfo, SignatureInfoView};
use crate::error::{Error, ErrorKind, Result};
use crate::name::{Component, Name, NameView};
use crate::packet::outer_element;
use crate::tlv::{self, Element, OrderCheck, Span};
use crate::{packet_element, sha256, tt, Limits};

/// Default InterestLifetime when the element is absent, in milliseconds.
pub const DEFAULT_LIFETIME_MS: u64 = 4000;

const ORDER: &[u32] = &[
    tt::NAME,
    tt::CAN_BE_PREFIX,
    tt::MUST_BE_FRESH,
    tt::FORWARDING_HINT,
    tt::NONCE,
    tt::INTEREST_LIFETIME,
    tt::HOP_LIMIT,
    tt::APPLICATION_PARAMETERS,
    tt::INTEREST_SIGNATURE_INFO,
    tt::INTEREST_SIGNATURE_VALUE,
];

/// A validated Interest borrowed from a buffer.
#[derive(Debug, Clone, Copy)]
pub struct InterestView<'a> {
    wire: &'a [u8],
    offset: usize,
    name: NameView<'a>,
    /// InterestLifetime, valid when `has_lifetime`.
    lifetime_ms: u64,
    nonce: Option<[u8; 4]>,
    hop_limit: Option<u8>,
    has_lifetime: bool,
    can_be_prefix: bool,
    must_be_fresh: bool,
    hop_limit_offset: u32,
    // The rarer elements, validated here and read again when asked for: the view stays at
    // 128 bytes (it was 384), which the forwarding pipeline moves for every packet.
    forwarding_hint: Span,
    app_params: Span,
    signature_info: Span,
    signature_value: Span,
}

// The forwarding pipeline moves a view per packet: at 128 bytes or less the compiler moves it
// with a few vector stores instead of a `memcpy` call (measured: docs/experiments).
const _: () = assert!(core::mem::size_of::<InterestView<'static>>() <= 128);

impl<'a> InterestView<'a> {
    /// Decodes an Interest that fills `buf` exactly.
    pub fn decode(buf: &'a [u8], limits: &Limits) -> Result<Self> {
        Self::from_element(outer_element(buf, 0, limits)?, limits)
    }

    /// Decodes an Interest from an already delimited element (for example an LpPacket fragment).
    pub fn from_element(e: Element<'a>, limits: &Limits) -> Result<Self> {
        let e = packet_element(e, tt::INTEREST, limits)?;
        let mut r = e.reader();
        let first = if r.is_empty() {
            return Err(Error::new(ErrorKind::Missing(tt::NAME), e.value_offset));
        } else {
            r.read()?
        };
        if first.typ != tt::NAME {
            return Err(Error::new(ErrorKind::Missing(tt::NAME), first.offset));
        }
        let name = NameView::from_element(first, limits)?;
        if name.is_empty() {
            return Err(Error::new(ErrorKind::EmptyName, first.offset));
        }
        let mut v = InterestView {
            wire: e.wire,
            offset: e.offset,
            name,
            lifetime_ms: 0,
            nonce: None,
            hop_limit: None,
            has_lifetime: false,
            can_be_prefix: false,
            must_be_fresh: false,
            hop_limit_offset: 0,
            forwarding_hint: Span::NONE,
            app_params: Span::NONE,
            signature_info: Span::NONE,
            signature_value: Span::NONE,
        };
        let mut order = OrderCheck::new(ORDER, &[]);
        order.accept(&first)?;
        while let Some(el) = r.next_element() {
            let el = el?;
            if order.accept(&el)?.is_none() {
                continue;
            }
            match el.typ {
                tt::CAN_BE_PREFIX => {
                    el.expect_empty()?;
                    v.can_be_prefix = true;
                }
                tt::MUST_BE_FRESH => {
                    el.expect_empty()?;
                    v.must_be_fresh = true;
                }
                tt::FORWARDING_HINT => {
                    check_forwarding_hint(&el, limits)?;
                    v.forwarding_hint = Span::of(&el, e.offset);
                }
                tt::NONCE => {
                    let n: [u8; 4] = el
                        .value
                        .try_into()
                        .map_err(|_| Error::new(ErrorKind::BadLength { typ: el.typ }, el.offset))?;
                    v.nonce = Some(n);
                }
                tt::INTEREST_LIFETIME => {
                    v.lifetime_ms = el.nni()?;
                    v.has_lifetime = true;
                }
                tt::HOP_LIMIT => {
                    let &[h] = el.value else {
                        return Err(Error::new(ErrorKind::BadLength { typ: el.typ }, el.offset));
                    };
                    v.hop_limit = Some(h);
                    v.hop_limit_offset = (el.value_offset - e.offset) as u32;
                }
                tt::APPLICATION_PARAMETERS => v.app_params = Span::of(&el, e.offset),
                tt::INTEREST_SIGNATURE_INFO => {
                    SignatureInfoView::from_element(el, limits)?;
                    v.signature_info = Span::of(&el, e.offset);
                }
                tt::INTEREST_SIGNATURE_VALUE => v.signature_value = Span::of(&el, e.offset),
                _ => {}
            }
        }
        if v.signature_info.is_some() != v.signature_value.is_some()
            || (v.signature_info.is_some() && !v.app_params.is_some())
        {
            return Err(Error::new(ErrorKind::BadSignatureElements, e.offset));
        }
        v.check_parameters_digest(&e, limits)?;
        Ok(v)
    }

    fn check_parameters_digest(&self, e: &Element<'a>, limits: &Limits) -> Result<()> {
        let count = self.name.params_digest_count();
        if count == 0 && !self.app_params.is_some() {
            return Ok(()); // the common case: no parameters, no digest, no second pass
        }
        let found = self
            .name
            .components()
            .find(|c| u32::from(c.typ) == tt::PARAMETERS_SHA256_DIGEST)
            .map(|c| c.value);
        let name_offset = self.name.value_offset();
        let params = self.app_params.is_some().then_some(self.app_params);
        match (params, found) {
            (None, None) => Ok(()),
            (None, Some(_)) | (Some(_), None) => {
                Err(Error::new(ErrorKind::BadParametersDigest, name_offset))
            }
            (Some(p), Some(digest)) => {
                if count != 1 {
                    return Err(Error::new(ErrorKind::BadParametersDigest, name_offset));
                }
                if limits.verify_parameters_digest && sha256(&[&e.wire[p.start()..]]) != digest {
                    return Err(Error::new(ErrorKind::BadParametersDigest, name_offset));
                }
                Ok(())
            }
        }
    }

    view_position!("Interest");

    /// The name.
    #[inline]
    pub fn name(&self) -> NameView<'a> {
        self.name
    }

    /// CanBePrefix.
    #[inline]
    pub fn can_be_prefix(&self) -> bool {
        self.can_be_prefix
    }

    /// MustBeFresh.
    #[inline]
    pub fn must_be_fresh(&self) -> bool {
        self.must_be_fresh
    }

    /// The Nonce, if present.
    #[inline]
    pub fn nonce(&self) -> Option<[u8; 4]> {
        self.nonce
    }

    /// InterestLifetime as carried, if present.
    #[inline]
    pub fn lifetime_ms(&self) -> Option<u64> {
        self.has_lifetime.then_some(self.lifetime_ms)
    }

    /// InterestLifetime, or the 4 s default.
    #[inline]
    pub fn effective_lifetime_ms(&self) -> u64 {
        if self.has_lifetime {
            self.lifetime_ms
        } else {
            DEFAULT_LIFETIME_MS
        }
    }

    /// HopLimit, if present.
    #[inline]
    pub fn hop_limit(&self) -> Option<u8> {
        self.hop_limit
    }

    /// Offset of the HopLimit value byte within [`Self::wire`], so that a forwarder can copy the
    /// packet and decrement it in place.
    #[inline]
    pub fn hop_limit_value_offset(&self) -> Option<usize> {
        self.hop_limit.map(|_| self.hop_limit_offset as usize)
    }

    /// ApplicationParameters value, if present.
    #[inline]
    pub fn app_params(&self) -> Option<&'a [u8]> {
        self.element(self.app_params).map(|e| e.value)
    }

    /// A sub-element recorded by its span.
    #[inline]
    fn element(&self, span: Span) -> Option<Element<'a>> {
        span.element(self.wire, self.offset)
    }

    /// InterestSignatureInfo, if present.
    #[inline]
    pub fn signature_info(&self) -> Option<SignatureInfoView<'a>> {
        // Validated under the caller's limits when the Interest was decoded: cannot fail.
        let e = self.element(self.signature_info)?;
        SignatureInfoView::from_element(e, &Limits::NONE).ok()
    }

    /// The signed Interest's parameters as signed (packet format v0.3): the bytes from the
    /// start of ApplicationParameters to the end of InterestSignatureInfo; `None` unless both
    /// are present.
    pub fn signed_parameters(&self) -> Option<&'a [u8]> {
        let (a, s) = (self.app_params, self.signature_info);
        (a.is_some() && s.is_some())
            .then(|| self.wire.get(a.start()..s.end()))
            .flatten()
    }

    /// InterestSignatureValue, if present.
    #[inline]
    pub fn signature_value(&self) -> Option<&'a [u8]> {
        self.element(self.signature_value).map(|e| e.value)
    }

    /// The names in the ForwardingHint (v0.3 Name list, or the legacy Delegation form).
    pub fn forwarding_hint(&self) -> impl Iterator<Item = NameView<'a>> + 'a {
        let reader = self.element(self.forwarding_hint).map(|e| e.reader());
        reader.into_iter().flat_map(|mut r| {
            core::iter::from_fn(move || loop {
                let e = r.next_element()?.ok()?;
                match e.typ {
                    tt::NAME => return Some(NameView::from_validated(e)),
                    tt::DELEGATION => {
                        let mut d = e.reader();
                        while let Some(Ok(x)) = d.next_element() {
                            if x.typ == tt::NAME {
                                return Some(NameView::from_validated(x));
                            }
                        }
                    }
                    _ => {}
                }
            })
        })
    }

    /// Owned copy of the recognized elements. Unknown non-critical elements are not kept; if
    /// one sat among the parameters, encoding the copy gives a different
    /// ParametersSha256DigestComponent (the encoder computes it over what it writes). A forwarder
    /// forwards [`Self::wire`] instead.
    pub fn to_interest(&self) -> Interest {
        Interest {
            name: self.name.to_name(),
            can_be_prefix: self.can_be_prefix,
            must_be_fresh: self.must_be_fresh,
            forwarding_hint: self.forwarding_hint().map(|n| n.to_name()).collect(),
            nonce: self.nonce,
            lifetime_ms: self.lifetime_ms(),
            hop_limit: self.hop_limit,
            app_params: self.app_params().map(<[u8]>::to_vec),
            signature_info: self.signature_info().map(|s| s.to_signature_info()),
            signature_value: self.signature_value().map(<[u8]>::to_vec),
        }
    }
}

fn check_forwarding_hint(e: &Element<'_>, limits: &Limits) -> Result<()> {
    let mut r = e.reader();
    let mut any = false;
    while let Some(x) = r.next_element() {
        let x = x?;
        match x.typ {
            tt::NAME => {
                NameView::from_element(x, limits)?;
                any = true;
            }
            tt::DELEGATION => {
                let mut d = x.reader();
                let pref = d.read()?.expect(tt::PREFERENCE)?;
                pref.nni()?;
                NameView::from_element(d.read()?, limits)?;
                if !d.is_empty() {
                    return Err(Error::new(ErrorKind::TrailingBytes, d.offset()));
                }
                any = true;
            }
            t if tlv::is_critical(t) => {
                return Err(Error::new(ErrorKind::UnknownCritical(t), x.offset))
            }
            _ => {}
        }
    }
    if any {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::Missing(tt::NAME), e.value_offset))
    }
}

/// An owned Interest, for building packets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interest {
    /// Name (at least one component).
    pub name: Name,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// ForwardingHint names (empty: no ForwardingHint).
    pub forwarding_hint: Vec<Name>,
    /// Nonce.
    pub nonce: Option<[u8; 4]>,
    /// InterestLifetime in milliseconds (absent means 4000).
    pub lifetime_ms: Option<u64>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// ApplicationParameters. When present, [`Interest::encode`] writes the matching
    /// ParametersSha256DigestComponent into the name.
    pub app_params: Option<Vec<u8>>,
    /// InterestSignatureInfo (needs `app_params`).
    pub signature_info: Option<SignatureInfo>,
    /// InterestSignatureValue.
    pub signature_value: Option<Vec<u8>>,
}

impl Interest {
    /// An Interest for `name` with a nonce and default fields.
    pub fn new(name: Name, nonce: [u8; 4]) -> Self {
        Interest {
            name,
            nonce: Some(nonce),
            ..Interest::default()
        }
    }

    /// Encodes the Interest TLV. With ApplicationParameters, the name's
    /// ParametersSha256DigestComponent is computed (replacing the single existing one, or appended
    /// at the end).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut tail = Vec::new();
        if let Some(p) = &self.app_params {
            tlv::write_tlv(&mut tail, tt::APPLICATION_PARAMETERS, p);
            if let Some(si) = &self.signature_info {
                si.encode(&mut tail, tt::INTEREST_SIGNATURE_INFO);
            }
            if let Some(sv) = &self.signature_value {
                tlv::write_tlv(&mut tail, tt::INTEREST_SIGNATURE_VALUE, sv);
            }
        }
        let name = self.name_for_encoding(&tail);
        tlv::write_nested(out, tt::INTEREST, |o| {
            name.encode(o);
            if self.can_be_prefix {
                tlv::write_tlv(o, tt::CAN_BE_PREFIX, &[]);
            }
            if self.must_be_fresh {
                tlv::write_tlv(o, tt::MUST_BE_FRESH, &[]);
            }
            if !self.forwarding_hint.is_empty() {
                tlv::write_nested(o, tt::FORWARDING_HINT, |o| {
                    for n in &self.forwarding_hint {
                        n.encode(o);
                    }
                });
            }
            if let Some(n) = self.nonce {
                tlv::write_tlv(o, tt::NONCE, &n);
            }
            if let Some(l) = self.lifetime_ms {
                tlv::write_nni_tlv(o, tt::INTEREST_LIFETIME, l);
            }
            if let Some(h) = self.hop_limit {
                tlv::write_tlv(o, tt::HOP_LIMIT, &[h]);
            }
            o.extend_from_slice(&tail);
        });
    }

    fn name_for_encoding(&self, tail: &[u8]) -> std::borrow::Cow<'_, Name> {
        let is_pd = |c: &Component| u32::from(c.typ) == tt::PARAMETERS_SHA256_DIGEST;
        if self.app_params.is_none() {
            return std::borrow::Cow::Borrowed(&self.name);
        }
        let digest = Component::parameters_digest(sha256(&[tail]));
        let mut name = self.name.clone();
        match name.components.iter().filter(|c| is_pd(c)).count() {
            1 => {
                if let Some(c) = name.components.iter_mut().find(|c| is_pd(c)) {
                    *c = digest;
                }
            }
            _ => {
                name.components.retain(|c| !is_pd(c));
                name.push(digest);
            }
        }
        std::borrow::Cow::Owned(name)
    }

    owned_codec!("Interest", InterestView, to_interest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind as K;

    fn dec(b: &[u8]) -> Result<InterestView<'_>> {
        InterestView::decode(b, &Limits::default())
    }

    #[test]
    fn minimal_interest_vector() {
        // Interest { Name /a, Nonce 01020304 }
        let b = [
            0x05, 0x0B, 0x07, 0x03, 0x08, 0x01, 0x61, 0x0A, 0x04, 1, 2, 3, 4,
        ];
        let v = dec(&b).unwrap();
        assert_eq!(v.name().to_string(), "/a");
        assert_eq!(v.nonce(), Some([1, 2, 3, 4]));
        assert_eq!(v.effective_lifetime_ms(), 4000);
        assert!(!v.can_be_prefix() && !v.must_be_fresh());
        assert_eq!(
            Interest::new(Name::from_uri("/a").unwrap(), [1, 2, 3, 4]).to_wire(),
            b
        );
    }

    #[test]
    fn full_interest_vector() {
        let i = Interest {
            name: Name::from_uri("/a/b").unwrap(),
            can_be_prefix: true,
            must_be_fresh: true,
            forwarding_hint: vec![Name::from_uri("/h").unwrap()],
            nonce: Some([0xde, 0xad, 0xbe, 0xef]),
            lifetime_ms: Some(1000),
            hop_limit: Some(7),
            ..Interest::default()
        };
        let expect: &[u8] = &[
            0x05, 0x20, // Interest
            0x07, 0x06, 0x08, 0x01, b'a', 0x08, 0x01, b'b', // Name
            0x21, 0x00, // CanBePrefix
            0x12, 0x00, // MustBeFresh
            0x1E, 0x05, 0x07, 0x03, 0x08, 0x01, b'h', // ForwardingHint
            0x0A, 0x04, 0xde, 0xad, 0xbe, 0xef, // Nonce
            0x0C, 0x02, 0x03, 0xE8, // InterestLifetime 1000
            0x22, 0x01, 0x07, // HopLimit
        ];
        assert_eq!(i.to_wire(), expect);
        let v = dec(expect).unwrap();
        assert_eq!(v.to_interest(), i);
        assert_eq!(v.lifetime_ms(), Some(1000));
        assert_eq!(v.hop_limit_value_offset(), Some(expect.len() - 1));
        let hints: Vec<String> = v.forwarding_hint().map(|n| n.to_string()).collect();
        assert_eq!(hints, ["/h"]);
    }

    #[test]
    fn parameters_digest_computed_and_checked() {
        let i = Interest {
            name: Name::from_uri("/p").unwrap(),
            nonce: Some([0; 4]),
            app_params: Some(b"hi".to_vec()),
            ..Interest::default()
        };
        let w = i.to_wire();
        let v = dec(&w).unwrap();
        let d = sha256(&[&[0x24, 0x02, b'h', b'i']]);
        assert_eq!(v.name().get(1).unwrap().value, d);
        assert_eq!(v.app_params(), Some(&b"hi"[..]));
        // Re-encoding the decoded Interest reproduces the bytes exactly.
        assert_eq!(v.to_interest().to_wire(), w);
        // Corrupt one parameter byte: the digest no longer matches.
        let mut bad = w.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert_eq!(dec(&bad).unwrap_err().kind, K::BadParametersDigest);
        // A params-sha256 component without parameters is an error.
        let n = Name::from_uri(&format!("/p/params-sha256={}", "00".repeat(32))).unwrap();
        let w = Interest::new(n, [0; 4]).to_wire();
        assert_eq!(dec(&w).unwrap_err().kind, K::BadParametersDigest);
        // Parameters without the component: error.
        let mut raw = Vec::new();
        tlv::write_nested(&mut raw, tt::INTEREST, |o| {
            Name::from_uri("/p").unwrap().encode(o);
            tlv::write_tlv(o, tt::APPLICATION_PARAMETERS, b"x");
        });
        assert_eq!(dec(&raw).unwrap_err().kind, K::BadParametersDigest);
    }

    #[test]
    fn rejections() {
        // zero-component name
        assert_eq!(
            dec(&[0x05, 0x02, 0x07, 0x00]).unwrap_err(),
            Error::new(K::EmptyName, 2)
        );
        // missing name
        assert_eq!(dec(&[0x05, 0x00]).unwrap_err().kind, K::Missing(tt::NAME));
        // nonce of 3 bytes
        let b = [
            0x05, 0x0A, 0x07, 0x03, 0x08, 0x01, 0x61, 0x0A, 0x03, 1, 2, 3,
        ];
        assert_eq!(
            dec(&b).unwrap_err(),
            Error::new(K::BadLength { typ: 10 }, 7)
        );
        // hop limit of 2 bytes
        let b = [0x05, 0x09, 0x07, 0x03, 0x08, 0x01, 0x61, 0x22, 0x02, 1, 2];
        assert_eq!(dec(&b).unwrap_err().kind, K::BadLength { typ: 0x22 });
        // out of order: Nonce before MustBeFresh
        let b = [
            0x05, 0x0B, 0x07, 0x03, 0x08, 0x01, 0x61, 0x0A, 0x04, 1, 2, 3, 4, 0x12, 0x00,
        ];
        let b = &b[..];
        let mut fixed = b.to_vec();
        fixed[1] = (b.len() - 2) as u8;
        assert_eq!(
            dec(&fixed).unwrap_err(),
            Error::new(K::OutOfOrder(0x12), 13)
        );
        // unknown critical (type 0x0F) vs unknown non-critical (type 0x40)
        let mk = |t: u8| vec![0x05, 0x07, 0x07, 0x03, 0x08, 0x01, 0x61, t, 0x00];
        assert_eq!(dec(&mk(0x0F)).unwrap_err().kind, K::UnknownCritical(0x0F));
        assert_eq!(dec(&mk(0x41)).unwrap_err().kind, K::UnknownCritical(0x41));
        assert!(dec(&mk(0x40)).is_ok());
        // CanBePrefix with a value
        let b = [0x05, 0x08, 0x07, 0x03, 0x08, 0x01, 0x61, 0x21, 0x01, 0];
        assert_eq!(dec(&b).unwrap_err().kind, K::BadLength { typ: 0x21 });
        // truncated
        assert_eq!(
            dec(&[0x05, 0x09, 0x07]).unwrap_err().kind,
            K::LengthExceedsBuffer
        );
        // trailing bytes after the Interest
        let b = [0x05, 0x05, 0x07, 0x03, 0x08, 0x01, 0x61, 0x00];
        assert_eq!(dec(&b).unwrap_err(), Error::new(K::TrailingBytes, 7));
        // oversize
        let small = Limits {
            max_packet_bytes: 8,
            ..Limits::default()
        };
        let b = [0x05, 0x07, 0x07, 0x05, 0x08, 0x03, 0x61, 0x62, 0x63];
        assert_eq!(
            InterestView::decode(&b, &small).unwrap_err().kind,
            K::Oversize
        );
        // signature without parameters
        let mut raw = Vec::new();
        tlv::write_nested(&mut raw, tt::INTEREST, |o| {
            Name::from_uri("/p").unwrap().encode(o);
            tlv::write_nested(o, tt::INTEREST_SIGNATURE_INFO, |o| {
                tlv::write_nni_tlv(o, tt::SIGNATURE_TYPE, 0)
            });
            tlv::write_tlv(o, tt::INTEREST_SIGNATURE_VALUE, &[0; 32]);
        });
        assert_eq!(dec(&raw).unwrap_err().kind, K::BadSignatureElements);
    }

    #[test]
    fn legacy_delegation_forwarding_hint() {
        let mut raw = Vec::new();
        tlv::write_nested(&mut raw, tt::INTEREST, |o| {
            Name::from_uri("/x").unwrap().encode(o);
            tlv::write_nested(o, tt::FORWARDING_HINT, |o| {
                tlv::write_nested(o, tt::DELEGATION, |o| {
                    tlv::write_nni_tlv(o, tt::PREFERENCE, 10);
                    Name::from_uri("/isp").unwrap().encode(o);
                })
            });
        });
        let v = dec(&raw).unwrap();
        let hints: Vec<String> = v.forwarding_hint().map(|n| n.to_string()).collect();
        assert_eq!(hints, ["/isp"]);
    }
}
