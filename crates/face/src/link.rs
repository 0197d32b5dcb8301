//! The NDNLPv2 link layer of one whole network packet: how a packet and its link headers
//! ([`LpHeaders`]) become the bytes a face sends, and how those bytes split back into the two.
//!
//! A packet without headers goes out bare, as ndn-cxx and NFD send it; a packet with headers
//! goes out as one LpPacket: the header fields in increasing TLV-TYPE order, then the Fragment.
//! Fragmentation fields (Sequence, FragIndex, FragCount) are the [`crate::lp_frag`] module's
//! business: [`encode_link`] never writes them.

use wire::tlv::{var_number_len, write_var_number, Reader};
use wire::tt;

use crate::lp_frag::LpHeaders;

/// Size of a TLV of type `typ` whose value is `value_len` bytes.
#[inline]
pub(crate) fn tlv_len(typ: u32, value_len: usize) -> usize {
    var_number_len(u64::from(typ)) + var_number_len(value_len as u64) + value_len
}

/// Bytes [`encode_link`] writes for a `packet_len`-byte packet with `headers`.
#[inline]
pub fn link_len(headers: &LpHeaders, packet_len: usize) -> usize {
    if headers.is_empty() {
        return packet_len;
    }
    let inner = headers.encoded_len() + tlv_len(tt::LP_FRAGMENT, packet_len);
    tlv_len(tt::LP_PACKET, inner)
}

/// Writes `packet` with `headers` into `buf`: bare when there are no headers, else an LpPacket.
/// Returns false (leaving `buf` empty) when it would not fit in `room` bytes.
#[inline]
pub fn encode_link(buf: &mut Vec<u8>, headers: &LpHeaders, packet: &[u8], room: usize) -> bool {
    buf.clear();
    if headers.is_empty() {
        if packet.len() > room {
            return false;
        }
        buf.extend_from_slice(packet);
        return true;
    }
    let frag = tlv_len(tt::LP_FRAGMENT, packet.len());
    let inner = headers.encoded_len() + frag;
    let total = tlv_len(tt::LP_PACKET, inner);
    if total > room {
        return false;
    }
    write_var_number(buf, u64::from(tt::LP_PACKET));
    write_var_number(buf, inner as u64);
    headers.encode(buf);
    write_var_number(buf, u64::from(tt::LP_FRAGMENT));
    write_var_number(buf, packet.len() as u64);
    buf.extend_from_slice(packet);
    debug_assert_eq!(buf.len(), total);
    true
}

/// A CongestionMark field of value 1, as NFD's GenericLinkService adds it.
const MARK_FIELD: [u8; 5] = [0xFD, 0x03, 0x40, 0x01, 0x01];

/// Appends to `out` the link-layer packet `bytes` with an NDNLPv2 CongestionMark of 1 (a bare
/// packet becomes an LpPacket; a mark it carries already is replaced), its header fields kept
/// in increasing TLV-TYPE order as ndn-cxx requires. Returns the bytes appended, or `None`
/// (nothing appended) for an IDLE or malformed LpPacket, which the caller sends as it is.
/// Allocates nothing beyond what `out` grows by.
pub fn append_marked(out: &mut Vec<u8>, bytes: &[u8]) -> Option<usize> {
    let Split::Parts(p) = split_link(bytes) else {
        return None;
    };
    let fields = p.header_fields;
    // The mark goes before the first field of a larger type; a mark already there is skipped.
    let (mut cut, mut resume) = (fields.len(), fields.len());
    let mut r = Reader::new(fields);
    while !r.is_empty() {
        let at = r.offset();
        let e = r.read().ok()?;
        if e.typ >= tt::LP_CONGESTION_MARK {
            cut = at;
            resume = if e.typ == tt::LP_CONGESTION_MARK {
                r.offset()
            } else {
                at
            };
            break;
        }
    }
    let inner =
        cut + MARK_FIELD.len() + (fields.len() - resume) + tlv_len(tt::LP_FRAGMENT, p.packet.len());
    let start = out.len();
    write_var_number(out, u64::from(tt::LP_PACKET));
    write_var_number(out, inner as u64);
    out.extend_from_slice(&fields[..cut]);
    out.extend_from_slice(&MARK_FIELD);
    out.extend_from_slice(&fields[resume..]);
    write_var_number(out, u64::from(tt::LP_FRAGMENT));
    write_var_number(out, p.packet.len() as u64);
    out.extend_from_slice(p.packet);
    debug_assert_eq!(out.len() - start, tlv_len(tt::LP_PACKET, inner));
    Some(out.len() - start)
}

/// Bytes [`append_marked`] would append for `bytes` at most (the mark's field plus a longer
/// LpPacket header).
pub const MARK_OVERHEAD: usize = MARK_FIELD.len() + 2 * 8;

/// A link-layer packet split into its encoded header fields and its network packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkParts<'a> {
    /// The LpPacket's fields before the Fragment, as encoded (empty for a bare packet).
    pub header_fields: &'a [u8],
    /// The network packet (the Fragment's value, or the whole bare packet).
    pub packet: &'a [u8],
}

/// What [`split_link`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split<'a> {
    /// A bare packet, or an LpPacket whose last field is a Fragment.
    Parts(LinkParts<'a>),
    /// A well-formed LpPacket without a Fragment (IDLE): nothing to send.
    Idle,
    /// Bytes that start like an LpPacket but are not one (bad TLV, trailing bytes, a field
    /// after the Fragment).
    Malformed,
}

/// Splits bytes [`encode_link`] wrote back into the header fields and the network packet,
/// without decoding the fields (the inverse of [`encode_link`], for a fragmenter that sends the
/// same header fields again).
pub fn split_link(bytes: &[u8]) -> Split<'_> {
    if bytes.first() != Some(&(tt::LP_PACKET as u8)) {
        return Split::Parts(LinkParts {
            header_fields: &[],
            packet: bytes,
        });
    }
    let mut outer = Reader::new(bytes);
    let lp = match outer.read() {
        Ok(lp) if outer.is_empty() && lp.typ == tt::LP_PACKET => lp,
        _ => return Split::Malformed,
    };
    let mut fields = lp.reader();
    let start = fields.offset();
    while !fields.is_empty() {
        let Ok(e) = fields.read() else {
            return Split::Malformed;
        };
        if e.typ == tt::LP_FRAGMENT {
            if !fields.is_empty() {
                return Split::Malformed;
            }
            return Split::Parts(LinkParts {
                header_fields: &lp.value[..e.offset - start],
                packet: e.value,
            });
        }
    }
    Split::Idle
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lp_frag::PitToken;
    use wire::lp::{Nack, NackReason};

    const PKT: [u8; 4] = [5, 2, 7, 0];

    fn pit_and_nack() -> LpHeaders {
        LpHeaders {
            pit_token: PitToken::new(&[1, 2, 3]),
            nack: Some(Nack {
                reason: Some(NackReason::NoRoute),
            }),
            ..LpHeaders::default()
        }
    }

    #[test]
    fn bare_when_no_headers_else_lp_packet() {
        let mut buf = Vec::with_capacity(64);
        assert!(encode_link(&mut buf, &LpHeaders::default(), &PKT, 64));
        assert_eq!(buf, PKT);
        let h = pit_and_nack();
        assert!(encode_link(&mut buf, &h, &PKT, 64));
        let lp = wire::LpPacketView::decode(&buf, &wire::Limits::default()).unwrap();
        assert_eq!(lp.pit_token, Some(&[1u8, 2, 3][..]));
        assert_eq!(lp.fragment(), Some(&PKT[..]));
        assert_eq!(lp.nack.unwrap().reason, Some(NackReason::NoRoute));
        // Too large for the room: refused, nothing written.
        assert!(!encode_link(&mut buf, &h, &PKT, 10));
        assert!(buf.is_empty());
        assert!(!encode_link(&mut buf, &LpHeaders::default(), &[0; 65], 64));
    }

    #[test]
    fn encoding_is_pinned() {
        let mut buf = Vec::new();
        assert!(encode_link(
            &mut buf,
            &LpHeaders::default(),
            &PKT,
            usize::MAX
        ));
        assert_eq!(buf, PKT);
        assert!(encode_link(&mut buf, &pit_and_nack(), &PKT, usize::MAX));
        #[rustfmt::skip]
        let expect = [
            0x64, 0x14,                                     // LpPacket
            0x62, 0x03, 1, 2, 3,                            // PitToken
            0xFD, 0x03, 0x20, 0x05, 0xFD, 0x03, 0x21, 0x01, 150, // Nack(NoRoute)
            0x50, 0x04, 5, 2, 7, 0,                         // Fragment
        ];
        assert_eq!(buf, expect);
        let reference = wire::LpPacket {
            pit_token: Some(vec![1, 2, 3]),
            nack: pit_and_nack().nack,
            fragment: Some(PKT.to_vec()),
            ..wire::LpPacket::default()
        };
        assert_eq!(buf, reference.to_wire());
        assert_eq!(link_len(&pit_and_nack(), PKT.len()), expect.len());
        assert_eq!(link_len(&LpHeaders::default(), PKT.len()), PKT.len());
        // Long lengths take 3-byte VAR-NUMBERs.
        let big = vec![6u8; 300];
        let h = LpHeaders {
            congestion_mark: Some(1),
            ..LpHeaders::default()
        };
        assert!(encode_link(&mut buf, &h, &big, usize::MAX));
        assert_eq!(
            &buf[..11],
            &[0x64, 0xFD, 0x01, 0x35, 0xFD, 0x03, 0x40, 0x01, 1, 0x50, 0xFD]
        );
        assert_eq!(&buf[11..13], &[0x01, 0x2C]);
        assert_eq!(&buf[13..], &big[..]);
        assert_eq!(link_len(&h, big.len()), buf.len());
    }

    /// A mark is added in TLV-TYPE order, replaces one already there, turns a bare packet into
    /// an LpPacket, and is read back by the wire decoder; IDLE and malformed input are refused.
    #[test]
    fn marked_packets_decode_with_the_mark() {
        let mut out = vec![9u8];
        let n = append_marked(&mut out, &PKT).unwrap();
        assert_eq!(out[0], 9);
        let lp = wire::LpPacketView::decode(&out[1..], &wire::Limits::default()).unwrap();
        assert_eq!(n, out.len() - 1);
        assert_eq!(lp.congestion_mark, Some(1));
        assert_eq!(lp.fragment(), Some(&PKT[..]));
        let mut buf = Vec::new();
        for cm in [None, Some(7)] {
            let h = LpHeaders {
                congestion_mark: cm,
                ..pit_and_nack()
            };
            assert!(encode_link(&mut buf, &h, &PKT, usize::MAX));
            let mut out = Vec::new();
            append_marked(&mut out, &buf).unwrap();
            let want = LpHeaders {
                congestion_mark: Some(1),
                ..pit_and_nack()
            };
            let mut expect = Vec::new();
            assert!(encode_link(&mut expect, &want, &PKT, usize::MAX));
            assert_eq!(out, expect);
            assert!(out.len() <= buf.len() + MARK_OVERHEAD);
        }
        let mut out = Vec::new();
        assert_eq!(append_marked(&mut out, &[0x64, 0x03, 0x62, 0x01, 1]), None);
        assert_eq!(append_marked(&mut out, &[0x64, 0x05, 0x62, 0x01]), None);
        assert!(out.is_empty());
    }

    #[test]
    fn split_inverts_encode() {
        let mut buf = Vec::new();
        for h in [LpHeaders::default(), pit_and_nack()] {
            assert!(encode_link(&mut buf, &h, &PKT, usize::MAX));
            let Split::Parts(p) = split_link(&buf) else {
                panic!("{buf:?}")
            };
            assert_eq!(p.packet, PKT);
            let mut fields = Vec::new();
            h.encode(&mut fields);
            assert_eq!(p.header_fields, &fields[..]);
        }
        assert_eq!(split_link(&[0x64, 0x03, 0x62, 0x01, 1]), Split::Idle);
        assert_eq!(split_link(&[0x64, 0x05, 0x62, 0x01]), Split::Malformed);
        assert_eq!(split_link(&[0x64, 0x00, 0x00]), Split::Malformed);
        // Nothing may follow the Fragment.
        let after = [0x64, 0x05, 0x50, 0x01, 9, 0x62, 0x00];
        assert_eq!(split_link(&after), Split::Malformed);
    }
}
