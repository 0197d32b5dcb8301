//! Names and name components: a zero-copy [`NameView`] for the forwarding path, an owned [`Name`]
//! for building packets, the NDN URI form in both directions, and canonical ordering.
//!
//! URI form (as ndn-cxx and python-ndn print it): components separated by `/`; generic components
//! percent-encoded except for the unreserved characters `A-Z a-z 0-9 - . _ ~`; a value made only
//! of periods (including the empty value) is written with three extra periods (`...` is the empty
//! component, `....` is `.`); `sha256digest=` and `params-sha256=` with lowercase hex; `seg=`,
//! `off=`, `v=`, `t=`, `seq=` for the naming-convention types whose value is a NonNegativeInteger;
//! `N=` for any other type N in 1..=65535.

use core::cmp::Ordering;
use core::fmt;

use crate::error::{Error, ErrorKind, Result};
use crate::tlv::{self, read_nni, write_nni, Element, Reader};
use crate::{tt, Limits};

/// Length in bytes of the value of a SHA-256 digest component.
pub const DIGEST_LEN: usize = 32;

/// Checks one name component element: type in 1..=65535, digest components exactly 32 bytes.
#[inline]
fn check_component(e: &Element<'_>) -> Result<u16> {
    if e.typ > 0xFFFF {
        return Err(Error::new(ErrorKind::BadComponentType(e.typ), e.offset));
    }
    if (e.typ == tt::IMPLICIT_SHA256_DIGEST || e.typ == tt::PARAMETERS_SHA256_DIGEST)
        && e.value.len() != DIGEST_LEN
    {
        return Err(Error::new(ErrorKind::BadLength { typ: e.typ }, e.offset));
    }
    Ok(e.typ as u16)
}

/// A name component borrowed from a packet. Equality, hashing and order look at the type and
/// value only (not at `wire`, which is empty for views of owned components).
#[derive(Debug, Clone, Copy)]
pub struct ComponentView<'a> {
    /// Component type (1..=65535); 8 is a generic component.
    pub typ: u16,
    /// Component value.
    pub value: &'a [u8],
    /// The whole component TLV.
    pub wire: &'a [u8],
}

impl<'a> ComponentView<'a> {
    /// The value as a NonNegativeInteger, if it is one (segment, version, ...).
    pub fn as_number(&self) -> Option<u64> {
        read_nni(self.value, 0).ok()
    }

    /// Owned copy.
    pub fn to_component(&self) -> Component {
        Component {
            typ: self.typ,
            value: self.value.to_vec(),
        }
    }
}

impl PartialEq for ComponentView<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.typ == other.typ && self.value == other.value
    }
}

impl Eq for ComponentView<'_> {}

impl core::hash::Hash for ComponentView<'_> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.typ.hash(state);
        self.value.hash(state);
    }
}

impl PartialOrd for ComponentView<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ComponentView<'_> {
    /// Canonical order: by type, then by value length, then by value bytes.
    fn cmp(&self, other: &Self) -> Ordering {
        canonical_cmp(self.typ, self.value, other.typ, other.value)
    }
}

fn canonical_cmp(ta: u16, va: &[u8], tb: u16, vb: &[u8]) -> Ordering {
    ta.cmp(&tb)
        .then(va.len().cmp(&vb.len()))
        .then_with(|| va.cmp(vb))
}

impl fmt::Display for ComponentView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_component_uri(f, self.typ, self.value)
    }
}

/// A validated name borrowed from a packet. Parsing it allocates nothing.
#[derive(Debug, Clone, Copy)]
pub struct NameView<'a> {
    wire: &'a [u8],
    value: &'a [u8],
    /// Absolute offset of `value` (names sit in packets, which are under 4 GiB).
    value_offset: u32,
    len: u32,
    params_digests: u32,
    /// Offset of the last component in `value` (0 for the empty name).
    last_start: u32,
}

impl<'a> NameView<'a> {
    /// Validates a Name element: every component well-formed, within `limits`.
    pub fn from_element(e: Element<'a>, limits: &Limits) -> Result<Self> {
        let e = e.expect(tt::NAME)?;
        if e.value.len() > limits.max_name_bytes {
            return Err(Error::new(ErrorKind::NameTooLong, e.offset));
        }
        let mut r = e.reader();
        let mut len = 0usize;
        let mut params_digests = 0u32;
        let mut last_start = 0;
        while let Some(c) = r.next_element() {
            let c = c?;
            if u32::from(check_component(&c)?) == tt::PARAMETERS_SHA256_DIGEST {
                params_digests += 1;
            }
            len += 1;
            if len > limits.max_name_components {
                return Err(Error::new(ErrorKind::TooManyComponents, c.offset));
            }
            last_start = c.offset - e.value_offset;
        }
        let value_offset =
            u32::try_from(e.value_offset).map_err(|_| Error::new(ErrorKind::Oversize, e.offset))?;
        Ok(NameView {
            wire: e.wire,
            value: e.value,
            value_offset,
            len: len as u32,
            params_digests,
            // A name is shorter than any packet, which is far below 4 GB.
            last_start: last_start as u32,
        })
    }

    /// A view of a Name element that was validated earlier (components are counted, not checked).
    pub(crate) fn from_validated(e: Element<'a>) -> Self {
        let mut r = Reader::new(e.value);
        let mut len = 0;
        let mut params_digests = 0;
        let mut last_start = 0;
        while let Some(Ok(c)) = r.next_element() {
            len += 1;
            params_digests += u32::from(c.typ == tt::PARAMETERS_SHA256_DIGEST);
            last_start = c.offset;
        }
        NameView {
            wire: e.wire,
            value: e.value,
            value_offset: u32::try_from(e.value_offset).unwrap_or(u32::MAX),
            len,
            params_digests,
            last_start: last_start as u32,
        }
    }

    /// Decodes a Name TLV that fills `buf` exactly.
    pub fn decode(buf: &'a [u8], limits: &Limits) -> Result<Self> {
        let mut r = Reader::new(buf);
        let e = r.read()?;
        if !r.is_empty() {
            return Err(Error::new(ErrorKind::TrailingBytes, r.offset()));
        }
        Self::from_element(e, limits)
    }

    /// Number of components.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True for the empty name `/`.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of ParametersSha256Digest components (counted during validation).
    #[inline]
    pub fn params_digest_count(&self) -> usize {
        self.params_digests as usize
    }

    /// The whole Name TLV.
    #[inline]
    pub fn wire(&self) -> &'a [u8] {
        self.wire
    }

    /// The Name TLV-VALUE: the components back to back.
    #[inline]
    pub fn value(&self) -> &'a [u8] {
        self.value
    }

    /// Absolute offset of the first component.
    #[inline]
    pub fn value_offset(&self) -> usize {
        self.value_offset as usize
    }

    /// Iterates over the components, with no allocation.
    #[inline]
    pub fn components(&self) -> Components<'a> {
        Components {
            reader: Reader::new(self.value),
        }
    }

    /// The `i`-th component.
    pub fn get(&self, i: usize) -> Option<ComponentView<'a>> {
        self.components().nth(i)
    }

    /// The last component (found in O(1): validation recorded where it starts).
    #[inline]
    pub fn last(&self) -> Option<ComponentView<'a>> {
        if self.len == 0 {
            return None;
        }
        let tail = self.value.get(self.last_start as usize..)?;
        Components {
            reader: Reader::new(tail),
        }
        .next()
    }

    /// Owned copy.
    pub fn to_name(&self) -> Name {
        Name {
            components: self.components().map(|c| c.to_component()).collect(),
        }
    }

    /// Is this name a prefix of (or equal to) `other`?
    pub fn is_prefix_of(&self, other: &NameView<'_>) -> bool {
        other.value.starts_with(self.value)
    }
}

impl PartialEq for NameView<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for NameView<'_> {}

impl PartialOrd for NameView<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NameView<'_> {
    /// Canonical order: component by component; a proper prefix sorts first.
    fn cmp(&self, other: &Self) -> Ordering {
        self.components().cmp(other.components())
    }
}

impl fmt::Display for NameView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_name_uri(f, self.components().map(|c| (c.typ, c.value)))
    }
}

/// Iterator over the components of a validated name.
#[derive(Debug, Clone)]
pub struct Components<'a> {
    reader: Reader<'a>,
}

impl<'a> Iterator for Components<'a> {
    type Item = ComponentView<'a>;

    #[inline]
    fn next(&mut self) -> Option<ComponentView<'a>> {
        // The name was validated when the view was made, so a failure cannot happen; stopping
        // is the safe answer if it ever did.
        let e = self.reader.next_element()?.ok()?;
        Some(ComponentView {
            typ: e.typ as u16,
            value: e.value,
            wire: e.wire,
        })
    }
}

/// An owned name component.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Component {
    /// Component type (1..=65535); 8 is a generic component.
    pub typ: u16,
    /// Component value.
    pub value: Vec<u8>,
}

impl Component {
    /// A generic component.
    pub fn generic(value: impl Into<Vec<u8>>) -> Self {
        Component {
            typ: tt::GENERIC_COMPONENT as u16,
            value: value.into(),
        }
    }

    /// A component of type `typ` whose value is the NonNegativeInteger `n`.
    pub fn number(typ: u16, n: u64) -> Self {
        let mut value = Vec::with_capacity(8);
        write_nni(&mut value, n);
        Component { typ, value }
    }

    /// A Segment component (`seg=n`).
    pub fn segment(n: u64) -> Self {
        Self::number(tt::SEGMENT as u16, n)
    }

    /// A Version component (`v=n`).
    pub fn version(n: u64) -> Self {
        Self::number(tt::VERSION as u16, n)
    }

    /// An ImplicitSha256Digest component.
    pub fn implicit_digest(digest: [u8; DIGEST_LEN]) -> Self {
        Component {
            typ: tt::IMPLICIT_SHA256_DIGEST as u16,
            value: digest.to_vec(),
        }
    }

    /// A ParametersSha256Digest component.
    pub fn parameters_digest(digest: [u8; DIGEST_LEN]) -> Self {
        Component {
            typ: tt::PARAMETERS_SHA256_DIGEST as u16,
            value: digest.to_vec(),
        }
    }

    /// Borrowed view (without wire bytes: `wire` is empty).
    pub fn as_view(&self) -> ComponentView<'_> {
        ComponentView {
            typ: self.typ,
            value: &self.value,
            wire: &[],
        }
    }

    /// The value as a NonNegativeInteger, if it is one.
    pub fn as_number(&self) -> Option<u64> {
        read_nni(&self.value, 0).ok()
    }

    /// Appends the component TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        tlv::write_tlv(out, u32::from(self.typ), &self.value);
    }

    /// Parses one component in URI form.
    pub fn from_uri(s: &str) -> core::result::Result<Self, UriError> {
        parse_component_uri(s)
    }
}

impl PartialOrd for Component {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Component {
    fn cmp(&self, other: &Self) -> Ordering {
        canonical_cmp(self.typ, &self.value, other.typ, &other.value)
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_component_uri(f, self.typ, &self.value)
    }
}

/// An owned name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Name {
    /// The components, first to last.
    pub components: Vec<Component>,
}

impl Name {
    /// The empty name `/`.
    pub fn new() -> Self {
        Name::default()
    }

    /// Parses the NDN URI form (an optional `ndn:` scheme, then `/`-separated components).
    pub fn from_uri(s: &str) -> core::result::Result<Self, UriError> {
        let mut rest = s.trim();
        if let Some(r) = rest.strip_prefix("ndn:") {
            rest = r;
        }
        if let Some(r) = rest.strip_prefix("//") {
            // ndn://authority/... : the authority is ignored, as in ndn-cxx.
            rest = r.find('/').map_or("", |i| &r[i..]);
        }
        let rest = rest.strip_prefix('/').unwrap_or(rest);
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let mut components = Vec::new();
        if !rest.is_empty() {
            for part in rest.split('/') {
                components.push(parse_component_uri(part)?);
            }
        }
        Ok(Name { components })
    }

    /// Decodes a Name TLV that fills `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        Ok(NameView::decode(buf, &Limits::default())?.to_name())
    }

    /// Appends a component and returns the name (builder style).
    pub fn with(mut self, c: Component) -> Self {
        self.components.push(c);
        self
    }

    /// Appends a generic component whose value is `s`.
    pub fn with_str(self, s: &str) -> Self {
        self.with(Component::generic(s.as_bytes()))
    }

    /// Appends a component.
    pub fn push(&mut self, c: Component) {
        self.components.push(c);
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.components.len()
    }

    /// True for the empty name.
    pub fn is_empty(&self) -> bool {
        self.components.is_empty()
    }

    /// The first `n` components.
    pub fn prefix(&self, n: usize) -> Name {
        Name {
            components: self.components[..n.min(self.len())].to_vec(),
        }
    }

    /// Is this name a prefix of (or equal to) `other`?
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        other.components.starts_with(&self.components)
    }

    /// Length of the TLV-VALUE (the components back to back).
    pub fn value_len(&self) -> usize {
        self.components
            .iter()
            .map(|c| {
                tlv::var_number_len(u64::from(c.typ))
                    + tlv::var_number_len(c.value.len() as u64)
                    + c.value.len()
            })
            .sum()
    }

    /// Appends the Name TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        tlv::write_var_number(out, u64::from(tt::NAME));
        tlv::write_var_number(out, self.value_len() as u64);
        for c in &self.components {
            c.encode(out);
        }
    }

    /// The Name TLV as a new buffer.
    pub fn to_wire(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Self) -> Ordering {
        self.components.cmp(&other.components)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_name_uri(f, self.components.iter().map(|c| (c.typ, &c.value[..])))
    }
}

impl core::str::FromStr for Name {
    type Err = UriError;
    fn from_str(s: &str) -> core::result::Result<Self, UriError> {
        Name::from_uri(s)
    }
}

/// Why an NDN URI could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriError(pub String);

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed NDN URI: {}", self.0)
    }
}

impl std::error::Error for UriError {}

fn write_name_uri<'a>(
    f: &mut fmt::Formatter<'_>,
    comps: impl Iterator<Item = (u16, &'a [u8])>,
) -> fmt::Result {
    let mut any = false;
    for (typ, value) in comps {
        f.write_str("/")?;
        write_component_uri(f, typ, value)?;
        any = true;
    }
    if !any {
        f.write_str("/")?;
    }
    Ok(())
}

fn number_keyword(typ: u16) -> Option<&'static str> {
    match u32::from(typ) {
        tt::SEGMENT => Some("seg"),
        tt::BYTE_OFFSET => Some("off"),
        tt::VERSION => Some("v"),
        tt::TIMESTAMP => Some("t"),
        tt::SEQUENCE_NUM => Some("seq"),
        _ => None,
    }
}

fn keyword_number(kw: &str) -> Option<u16> {
    let t = match kw {
        "seg" => tt::SEGMENT,
        "off" => tt::BYTE_OFFSET,
        "v" => tt::VERSION,
        "t" => tt::TIMESTAMP,
        "seq" => tt::SEQUENCE_NUM,
        _ => return None,
    };
    Some(t as u16)
}

fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))
}

fn write_component_uri(f: &mut fmt::Formatter<'_>, typ: u16, value: &[u8]) -> fmt::Result {
    let t = u32::from(typ);
    if t == tt::IMPLICIT_SHA256_DIGEST && value.len() == DIGEST_LEN {
        f.write_str("sha256digest=")?;
        return write_hex(f, value);
    }
    if t == tt::PARAMETERS_SHA256_DIGEST && value.len() == DIGEST_LEN {
        f.write_str("params-sha256=")?;
        return write_hex(f, value);
    }
    if let Some(kw) = number_keyword(typ) {
        // Only the shortest encoding prints as a number: `seg=97` must parse back to the same
        // bytes, so a value such as 00 61 keeps the `50=%00a` form.
        if let Ok(n) = read_nni(value, 0) {
            if tlv::nni_len(n) == value.len() {
                return write!(f, "{kw}={n}");
            }
        }
    }
    if t != tt::GENERIC_COMPONENT {
        write!(f, "{t}=")?;
    }
    if value.iter().all(|&b| b == b'.') {
        f.write_str("...")?;
    }
    for &b in value {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            write!(f, "{}", b as char)?;
        } else {
            write!(f, "%{b:02X}")?;
        }
    }
    Ok(())
}

fn uri_err(what: &str, s: &str) -> UriError {
    UriError(format!("{what} in component {s:?}"))
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn unescape(s: &str) -> core::result::Result<Vec<u8>, UriError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| uri_err("bad percent-escape", s))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn parse_component_uri(s: &str) -> core::result::Result<Component, UriError> {
    let (typ, text) = match s.find('=') {
        Some(eq) => {
            let (head, tail) = (&s[..eq], &s[eq + 1..]);
            match head {
                "sha256digest" | "params-sha256" => {
                    let v = parse_hex(tail)
                        .filter(|v| v.len() == DIGEST_LEN)
                        .ok_or_else(|| uri_err("digest is not 64 hex digits", s))?;
                    let t = if head == "sha256digest" {
                        tt::IMPLICIT_SHA256_DIGEST
                    } else {
                        tt::PARAMETERS_SHA256_DIGEST
                    };
                    return Ok(Component {
                        typ: t as u16,
                        value: v,
                    });
                }
                _ => {
                    if let Some(t) = keyword_number(head) {
                        let n: u64 = tail.parse().map_err(|_| uri_err("bad number", s))?;
                        return Ok(Component::number(t, n));
                    }
                    if head.is_empty() || !head.bytes().all(|c| c.is_ascii_digit()) {
                        return Err(uri_err("unknown component type", s));
                    }
                    let t: u32 = head.parse().map_err(|_| uri_err("bad type number", s))?;
                    if !(1..=0xFFFF).contains(&t) {
                        return Err(uri_err("type outside 1..65535", s));
                    }
                    (t as u16, tail)
                }
            }
        }
        None => (tt::GENERIC_COMPONENT as u16, s),
    };
    if text.is_empty() {
        return Err(uri_err("empty component (write ... for an empty value)", s));
    }
    let value = if text.bytes().all(|b| b == b'.') {
        if text.len() < 3 {
            return Err(uri_err(". and .. are not components", s));
        }
        text.as_bytes()[3..].to_vec()
    } else {
        unescape(text)?
    };
    if (u32::from(typ) == tt::IMPLICIT_SHA256_DIGEST
        || u32::from(typ) == tt::PARAMETERS_SHA256_DIGEST)
        && value.len() != DIGEST_LEN
    {
        return Err(uri_err("digest component must be 32 bytes", s));
    }
    Ok(Component { typ, value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(n: &Name) -> String {
        n.to_string()
    }

    #[test]
    fn uri_round_trips_and_escapes() {
        let cases = [
            ("/", "/"),
            ("/a/b/c", "/a/b/c"),
            ("ndn:/a/b", "/a/b"),
            ("/hello%20world/~x", "/hello%20world/~x"),
            ("/%00%ff", "/%00%FF"),
            ("/.../..../.....", "/.../..../....."),
            (
                "/seg=3/v=1000/off=0/t=5/seq=7",
                "/seg=3/v=1000/off=0/t=5/seq=7",
            ),
            ("/32=foo/8=bar/9=...", "/32=foo/bar/9=..."),
            ("/a/", "/a"),
        ];
        for (input, expect) in cases {
            let n = Name::from_uri(input).unwrap();
            assert_eq!(uri(&n), expect, "{input}");
            assert_eq!(Name::from_uri(expect).unwrap(), n);
        }
        let d = "sha256digest=".to_string() + &"ab".repeat(32);
        let n = Name::from_uri(&format!("/x/{d}")).unwrap();
        assert_eq!(n.components[1].typ, 1);
        assert_eq!(uri(&n), format!("/x/{d}"));
        let p = "params-sha256=".to_string() + &"0f".repeat(32);
        assert_eq!(
            uri(&Name::from_uri(&format!("/{p}")).unwrap()),
            format!("/{p}")
        );
    }

    #[test]
    fn uri_rejects_bad_input() {
        for bad in [
            "/a//b",
            "/./x",
            "/..",
            "/%zz",
            "/%4",
            "/seg=x",
            "/seg=-1",
            "/0=a",
            "/65536=a",
            "/foo=bar",
            "/sha256digest=abcd",
            "/1=short",
        ] {
            assert!(Name::from_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn typed_number_with_non_nni_value_uses_type_form() {
        let n = Name::new().with(Component {
            typ: 50,
            value: vec![1, 2, 3],
        });
        assert_eq!(n.to_string(), "/50=%01%02%03");
    }

    #[test]
    fn wire_encoding_vectors() {
        // /a/seg=0x0102 : Name(7) len 8 { 08 01 61, 32 02 01 02 }
        let n = Name::from_uri("/a/seg=258").unwrap();
        assert_eq!(
            n.to_wire(),
            [0x07, 0x07, 0x08, 0x01, 0x61, 0x32, 0x02, 0x01, 0x02]
        );
        let w = n.to_wire();
        let v = NameView::decode(&w, &Limits::default()).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v.get(1).unwrap().as_number(), Some(258));
        assert_eq!(v.to_name(), n);
        assert_eq!(v.to_string(), "/a/seg=258");
    }

    #[test]
    fn view_rejects_bad_components() {
        let l = Limits::default();
        // component type 0
        assert!(NameView::decode(&[0x07, 0x02, 0x00, 0x00], &l).is_err());
        // type 65536
        let e = NameView::decode(&[0x07, 0x06, 0xFE, 0x00, 0x01, 0x00, 0x00, 0x00], &l);
        assert_eq!(e.unwrap_err().kind, ErrorKind::BadComponentType(65536));
        // implicit digest of 2 bytes
        let e = NameView::decode(&[0x07, 0x04, 0x01, 0x02, 0xAA, 0xBB], &l).unwrap_err();
        assert_eq!(e, Error::new(ErrorKind::BadLength { typ: 1 }, 2));
        // too many components
        let small = Limits {
            max_name_components: 2,
            ..Limits::default()
        };
        let w = Name::from_uri("/a/b/c").unwrap().to_wire();
        assert_eq!(
            NameView::decode(&w, &small).unwrap_err().kind,
            ErrorKind::TooManyComponents
        );
        let short = Limits {
            max_name_bytes: 5,
            ..Limits::default()
        };
        assert_eq!(
            NameView::decode(&w, &short).unwrap_err().kind,
            ErrorKind::NameTooLong
        );
    }

    #[test]
    fn canonical_order() {
        let mut names: Vec<Name> = ["/b", "/a/b", "/a", "/aa", "/seg=1", "/", "/%00"]
            .iter()
            .map(|s| Name::from_uri(s).unwrap())
            .collect();
        names.sort();
        let s: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        // type 8 < type 50; shorter value first; then bytes; prefixes first
        assert_eq!(s, ["/", "/%00", "/a", "/a/b", "/b", "/aa", "/seg=1"]);
        let wires: Vec<Vec<u8>> = names.iter().map(|n| n.to_wire()).collect();
        let views: Vec<NameView<'_>> = wires
            .iter()
            .map(|w| NameView::decode(w, &Limits::default()).unwrap())
            .collect();
        assert!(views.windows(2).all(|w| w[0] < w[1]));
    }
}
