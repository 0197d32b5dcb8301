//! TLV primitives: VAR-NUMBER, NonNegativeInteger, a bounds-checked element reader and an encoder.
//!
//! Every read checks its length against the buffer, so a [`Reader`] never panics on hostile input.
//! Offsets in errors are absolute: a reader created for a nested element carries the byte offset
//! of that element's value within the outermost buffer.

use crate::error::{Error, ErrorKind, Result};

/// Largest TLV-TYPE the packet format allows (types are 1..=2^32-1).
pub const MAX_TYPE: u64 = u32::MAX as u64;

/// Is `typ` critical under the NDN evolvability rules (0..=31, or odd)?
///
/// An unrecognized critical element makes the enclosing packet invalid; an unrecognized
/// non-critical element is skipped.
#[inline]
pub const fn is_critical(typ: u32) -> bool {
    typ <= 31 || typ & 1 == 1
}

/// Decodes one VAR-NUMBER at the start of `buf`.
///
/// Returns the value and the number of bytes it occupied. Non-minimal encodings (a 3-byte form for
/// a value below 253, and so on) are rejected, as the packet format requires. `offset` is the
/// absolute position of `buf[0]`, used in errors.
#[inline]
pub fn read_var_number(buf: &[u8], offset: usize) -> Result<(u64, usize)> {
    let first = *buf
        .first()
        .ok_or(Error::new(ErrorKind::Truncated, offset))?;
    let (width, min) = match first {
        0..=252 => return Ok((u64::from(first), 1)),
        253 => (2usize, 253u64),
        254 => (4, 0x1_0000),
        255 => (8, 0x1_0000_0000),
    };
    let bytes = buf
        .get(1..1 + width)
        .ok_or(Error::new(ErrorKind::Truncated, offset))?;
    let value = bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    if value < min {
        return Err(Error::new(ErrorKind::NonMinimalVarNumber, offset));
    }
    Ok((value, 1 + width))
}

/// Number of bytes [`write_var_number`] uses for `value`.
#[inline]
pub const fn var_number_len(value: u64) -> usize {
    if value < 253 {
        1
    } else if value <= 0xFFFF {
        3
    } else if value <= 0xFFFF_FFFF {
        5
    } else {
        9
    }
}

/// Appends the minimal VAR-NUMBER encoding of `value`.
#[inline]
pub fn write_var_number(out: &mut Vec<u8>, value: u64) {
    if value < 253 {
        out.push(value as u8);
    } else if value <= 0xFFFF {
        out.push(253);
        out.extend_from_slice(&(value as u16).to_be_bytes());
    } else if value <= 0xFFFF_FFFF {
        out.push(254);
        out.extend_from_slice(&(value as u32).to_be_bytes());
    } else {
        out.push(255);
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Decodes a NonNegativeInteger value (exactly 1, 2, 4 or 8 bytes, big-endian).
#[inline]
pub fn read_nni(value: &[u8], offset: usize) -> Result<u64> {
    match value.len() {
        1 | 2 | 4 | 8 => Ok(read_be(value)),
        _ => Err(Error::new(ErrorKind::BadNonNegativeInteger, offset)),
    }
}

/// Big-endian unsigned integer of up to 8 bytes (the caller checks the width).
#[inline]
pub fn read_be(value: &[u8]) -> u64 {
    value.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Number of bytes the shortest NonNegativeInteger encoding of `value` takes.
#[inline]
pub const fn nni_len(value: u64) -> usize {
    if value <= 0xFF {
        1
    } else if value <= 0xFFFF {
        2
    } else if value <= 0xFFFF_FFFF {
        4
    } else {
        8
    }
}

/// Appends the shortest NonNegativeInteger encoding of `value` (no TLV header).
#[inline]
pub fn write_nni(out: &mut Vec<u8>, value: u64) {
    match nni_len(value) {
        1 => out.push(value as u8),
        2 => out.extend_from_slice(&(value as u16).to_be_bytes()),
        4 => out.extend_from_slice(&(value as u32).to_be_bytes()),
        _ => out.extend_from_slice(&value.to_be_bytes()),
    }
}

/// One TLV element borrowed from a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element<'a> {
    /// TLV-TYPE (never 0).
    pub typ: u32,
    /// TLV-VALUE.
    pub value: &'a [u8],
    /// The whole element: TYPE, LENGTH and VALUE.
    pub wire: &'a [u8],
    /// Absolute offset of the element's first byte.
    pub offset: usize,
    /// Absolute offset of the first byte of the value.
    pub value_offset: usize,
}

impl<'a> Element<'a> {
    /// A reader over this element's value, for its sub-elements.
    #[inline]
    pub fn reader(&self) -> Reader<'a> {
        Reader::with_offset(self.value, self.value_offset)
    }

    /// The value as a NonNegativeInteger.
    #[inline]
    pub fn nni(&self) -> Result<u64> {
        read_nni(self.value, self.value_offset)
    }

    /// Requires the element to be of type `typ`.
    #[inline]
    pub fn expect(self, typ: u32) -> Result<Self> {
        if self.typ == typ {
            Ok(self)
        } else {
            Err(Error::new(
                ErrorKind::UnexpectedType {
                    expected: typ,
                    found: self.typ,
                },
                self.offset,
            ))
        }
    }

    /// Requires an empty value (flags such as CanBePrefix).
    #[inline]
    pub fn expect_empty(&self) -> Result<()> {
        if self.value.is_empty() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::BadLength { typ: self.typ },
                self.offset,
            ))
        }
    }
}

/// Where a validated sub-element sits in its packet: byte positions relative to the packet's
/// first byte (8 bytes, against an [`Element`]'s 56), so that the packet views stay small enough
/// to be moved in registers rather than by a `memcpy` call. `end == 0` means absent (a
/// sub-element never ends at the packet's first byte).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// No element.
    pub(crate) const NONE: Span = Span { start: 0, end: 0 };

    /// The span of `e`, a sub-element of the packet whose first byte is at absolute offset
    /// `base`. The packet decoders reject packets of 4 GiB or more, so the positions fit.
    #[inline]
    pub(crate) fn of(e: &Element<'_>, base: usize) -> Span {
        let start = e.offset - base;
        Span {
            start: start as u32,
            end: (start + e.wire.len()) as u32,
        }
    }

    /// Whether an element is there.
    #[inline]
    pub(crate) fn is_some(self) -> bool {
        self.end != 0
    }

    /// Position of the element's first byte in the packet.
    #[inline]
    pub(crate) fn start(self) -> usize {
        self.start as usize
    }

    /// Position just past the element in the packet.
    #[inline]
    pub(crate) fn end(self) -> usize {
        self.end as usize
    }

    /// The element again, read from the packet's `wire` (whose first byte is at absolute
    /// offset `base`); `None` when absent.
    #[inline]
    pub(crate) fn element(self, wire: &[u8], base: usize) -> Option<Element<'_>> {
        if !self.is_some() {
            return None;
        }
        let bytes = wire.get(self.start()..self.end())?;
        Reader::with_offset(bytes, base + self.start()).read().ok()
    }
}

/// Reads TLV elements back to back from a buffer, checking every length.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte is at absolute offset 0.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Self::with_offset(buf, 0)
    }

    /// A reader over `buf`, whose first byte is at absolute offset `base`.
    #[inline]
    pub fn with_offset(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    /// True when every byte has been consumed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Absolute offset of the next byte to read.
    #[inline]
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// The bytes not read yet.
    #[inline]
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos.min(self.buf.len())..]
    }

    /// Reads the next element's TYPE and LENGTH without consuming anything; `None` at the end.
    pub fn peek_type(&self) -> Result<Option<u32>> {
        if self.is_empty() {
            return Ok(None);
        }
        let (typ, _) = self.read_type_at(self.pos)?;
        Ok(Some(typ))
    }

    fn read_type_at(&self, pos: usize) -> Result<(u32, usize)> {
        let offset = self.base + pos;
        let (typ, n) = read_var_number(&self.buf[pos..], offset)?;
        if typ == 0 || typ > MAX_TYPE {
            return Err(Error::new(ErrorKind::InvalidType(typ), offset));
        }
        Ok((typ as u32, n))
    }

    /// Reads the next element. Fails on a truncated or malformed TYPE/LENGTH, or a LENGTH that
    /// runs past the end of the buffer.
    #[inline(always)]
    pub fn read(&mut self) -> Result<Element<'a>> {
        let start = self.pos;
        // Fast path: one-byte TYPE and LENGTH (almost every element of a packet).
        if let (Some(&t), Some(&l)) = (self.buf.get(start), self.buf.get(start + 1)) {
            if t != 0 && t < 253 && l < 253 {
                let end = start + 2 + usize::from(l);
                if end <= self.buf.len() {
                    self.pos = end;
                    return Ok(Element {
                        typ: u32::from(t),
                        value: &self.buf[start + 2..end],
                        wire: &self.buf[start..end],
                        offset: self.base + start,
                        value_offset: self.base + start + 2,
                    });
                }
            }
        }
        self.read_slow(start)
    }

    #[cold]
    #[inline(never)]
    fn read_slow(&mut self, start: usize) -> Result<Element<'a>> {
        if start >= self.buf.len() {
            return Err(Error::new(ErrorKind::Truncated, self.base + start));
        }
        let (typ, tn) = self.read_type_at(start)?;
        let len_pos = start + tn;
        let (len, ln) = read_var_number(&self.buf[len_pos..], self.base + len_pos)?;
        let value_start = len_pos + ln;
        let avail = (self.buf.len() - value_start) as u64;
        if len > avail {
            return Err(Error::new(
                ErrorKind::LengthExceedsBuffer,
                self.base + start,
            ));
        }
        let end = value_start + len as usize;
        self.pos = end;
        Ok(Element {
            typ,
            value: &self.buf[value_start..end],
            wire: &self.buf[start..end],
            offset: self.base + start,
            value_offset: self.base + value_start,
        })
    }

    /// Reads the next element, if any.
    #[inline]
    pub fn next_element(&mut self) -> Option<Result<Element<'a>>> {
        if self.is_empty() {
            None
        } else {
            Some(self.read())
        }
    }
}

/// Checks the order of sub-elements inside a container, applying the evolvability rules.
///
/// `order` lists the recognized TLV-TYPEs in the order the format requires. For each element,
/// [`OrderCheck::accept`] answers `Some(index)` (process it), `None` (skip it: an unrecognized or
/// out-of-order non-critical element), or an error (an unrecognized or out-of-order critical
/// element). A recognized element may appear at most once unless listed in `repeatable`.
#[derive(Debug)]
pub struct OrderCheck {
    order: &'static [u32],
    repeatable: &'static [u32],
    next: usize,
}

impl OrderCheck {
    /// A checker for a container whose recognized elements are `order`, in that order.
    pub const fn new(order: &'static [u32], repeatable: &'static [u32]) -> Self {
        OrderCheck {
            order,
            repeatable,
            next: 0,
        }
    }

    /// Classifies one element; see the type's documentation. The accepting path is inlined
    /// into the decoders' loops: out of line, the reference to the element made the compiler
    /// spill every element to the stack and reload it with wider loads than it stored (a
    /// store-forwarding stall per element). Skipping and rejecting are out of line.
    #[inline(always)]
    pub fn accept(&mut self, e: &Element<'_>) -> Result<Option<usize>> {
        match self.order.iter().position(|&t| t == e.typ) {
            Some(i) if i >= self.next => {
                self.next = if self.repeatable.contains(&e.typ) {
                    i
                } else {
                    i + 1
                };
                Ok(Some(i))
            }
            found => Self::skip_or_reject(found.is_some(), e.typ, e.offset),
        }
    }

    /// An element out of order (`known`) or not recognized: skipped if non-critical.
    #[cold]
    #[inline(never)]
    fn skip_or_reject(known: bool, typ: u32, offset: usize) -> Result<Option<usize>> {
        if !is_critical(typ) {
            Ok(None)
        } else if known {
            Err(Error::new(ErrorKind::OutOfOrder(typ), offset))
        } else {
            Err(Error::new(ErrorKind::UnknownCritical(typ), offset))
        }
    }
}

/// Appends a TLV whose value is `value`.
#[inline]
pub fn write_tlv(out: &mut Vec<u8>, typ: u32, value: &[u8]) {
    write_var_number(out, u64::from(typ));
    write_var_number(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// Appends a TLV whose value is the shortest NonNegativeInteger encoding of `value`.
#[inline]
pub fn write_nni_tlv(out: &mut Vec<u8>, typ: u32, value: u64) {
    write_var_number(out, u64::from(typ));
    write_var_number(out, nni_len(value) as u64);
    write_nni(out, value);
}

/// Appends a TLV whose value is written by `f`, computing the LENGTH afterwards.
///
/// The value is written in place and the header inserted in front of it, so nested builders
/// need no intermediate buffers.
pub fn write_nested(out: &mut Vec<u8>, typ: u32, f: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    f(out);
    let len = out.len() - start;
    let mut header = Vec::with_capacity(18);
    write_var_number(&mut header, u64::from(typ));
    write_var_number(&mut header, len as u64);
    out.splice(start..start, header);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_number_vectors() {
        let cases: &[(u64, &[u8])] = &[
            (0, &[0x00]),
            (252, &[0xFC]),
            (253, &[0xFD, 0x00, 0xFD]),
            (0xFFFF, &[0xFD, 0xFF, 0xFF]),
            (0x1_0000, &[0xFE, 0x00, 0x01, 0x00, 0x00]),
            (0xFFFF_FFFF, &[0xFE, 0xFF, 0xFF, 0xFF, 0xFF]),
            (
                0x1_0000_0000,
                &[0xFF, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00],
            ),
        ];
        for &(v, bytes) in cases {
            let mut out = Vec::new();
            write_var_number(&mut out, v);
            assert_eq!(out, bytes, "encode {v}");
            assert_eq!(var_number_len(v), bytes.len());
            assert_eq!(read_var_number(bytes, 0).unwrap(), (v, bytes.len()));
        }
    }

    #[test]
    fn var_number_rejects_non_minimal_and_truncated() {
        for bad in [
            &[0xFD, 0x00, 0xFC][..],
            &[0xFE, 0x00, 0x00, 0xFF, 0xFF],
            &[0xFF, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF],
        ] {
            assert_eq!(
                read_var_number(bad, 7).unwrap_err(),
                Error::new(ErrorKind::NonMinimalVarNumber, 7)
            );
        }
        for bad in [&[][..], &[0xFD, 0x01], &[0xFE, 1, 2, 3], &[0xFF, 1]] {
            assert_eq!(
                read_var_number(bad, 0).unwrap_err().kind,
                ErrorKind::Truncated
            );
        }
    }

    #[test]
    fn nni_widths() {
        for (v, n) in [(0u64, 1), (255, 1), (256, 2), (65536, 4), (1 << 32, 8)] {
            let mut out = Vec::new();
            write_nni(&mut out, v);
            assert_eq!(out.len(), n);
            assert_eq!(read_nni(&out, 0).unwrap(), v);
        }
        assert_eq!(
            read_nni(&[1, 2, 3], 5).unwrap_err().kind,
            ErrorKind::BadNonNegativeInteger
        );
        assert_eq!(read_nni(&[], 5).unwrap_err().offset, 5);
    }

    #[test]
    fn reader_checks_lengths_and_type_zero() {
        let mut r = Reader::new(&[0x07, 0x03, 0x08, 0x01]);
        assert_eq!(r.read().unwrap_err().kind, ErrorKind::LengthExceedsBuffer);
        let mut r = Reader::new(&[0x00, 0x00]);
        assert_eq!(r.read().unwrap_err().kind, ErrorKind::InvalidType(0));
        let mut r = Reader::new(&[0xFF, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
        assert!(matches!(
            r.read().unwrap_err().kind,
            ErrorKind::InvalidType(_)
        ));
        let mut r = Reader::with_offset(&[0x08, 0x01, 0x41, 0x08], 10);
        let e = r.read().unwrap();
        assert_eq!(
            (e.typ, e.value, e.offset, e.value_offset),
            (8, &b"A"[..], 10, 12)
        );
        assert_eq!(r.read().unwrap_err(), Error::new(ErrorKind::Truncated, 14));
    }

    #[test]
    fn nested_writer_matches_flat() {
        let mut a = Vec::new();
        write_nested(&mut a, 7, |o| {
            write_tlv(o, 8, &[b'x'; 300]);
        });
        let mut inner = Vec::new();
        write_tlv(&mut inner, 8, &[b'x'; 300]);
        let mut b = Vec::new();
        write_tlv(&mut b, 7, &inner);
        assert_eq!(a, b);
    }

    #[test]
    fn order_check_applies_evolvability() {
        let mk = |typ| Element {
            typ,
            value: &[],
            wire: &[],
            offset: 3,
            value_offset: 3,
        };
        let mut c = OrderCheck::new(&[7, 33, 18], &[]);
        assert_eq!(c.accept(&mk(7)).unwrap(), Some(0));
        assert_eq!(c.accept(&mk(18)).unwrap(), Some(2));
        // recognized but out of order: critical -> error
        assert_eq!(
            c.accept(&mk(33)).unwrap_err().kind,
            ErrorKind::OutOfOrder(33)
        );
        // unknown non-critical skipped, unknown critical rejected
        assert_eq!(c.accept(&mk(40)).unwrap(), None);
        assert_eq!(
            c.accept(&mk(41)).unwrap_err().kind,
            ErrorKind::UnknownCritical(41)
        );
        assert_eq!(
            c.accept(&mk(20)).unwrap_err().kind,
            ErrorKind::UnknownCritical(20)
        );
        // a repeated non-repeatable element is out of order
        assert_eq!(
            c.accept(&mk(18)).unwrap_err().kind,
            ErrorKind::OutOfOrder(18)
        );
    }
}
