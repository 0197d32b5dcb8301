//! Any packet a face can carry: a bare Interest or Data, or an NDNLPv2 LpPacket.
//!
//! [`PacketView::decode`] is the one entry point for bytes from a face; [`frame_len`] finds where
//! the next element ends in a stream (Unix and TCP faces carry elements back to back).

use crate::error::{Error, ErrorKind, Result};
use crate::tlv::{read_var_number, Element, Reader};
use crate::{tt, Data, DataView, Interest, InterestView, Limits, LpPacket, LpPacketView};

/// Reads the single element that must fill `buf`, checking the size limit first.
pub(crate) fn outer_element<'a>(
    buf: &'a [u8],
    base: usize,
    limits: &Limits,
) -> Result<Element<'a>> {
    let mut r = Reader::with_offset(buf, base);
    let e = r.read()?;
    if e.wire.len() > limits.max_packet_bytes {
        return Err(Error::new(ErrorKind::Oversize, e.offset));
    }
    if !r.is_empty() {
        return Err(Error::new(ErrorKind::TrailingBytes, r.offset()));
    }
    Ok(e)
}

/// Finds the length of the first TLV element in a stream buffer.
///
/// `Ok(Some(n))`: the first `n` bytes are one whole element. `Ok(None)`: more bytes are needed.
/// `Err`: the stream is malformed (bad VAR-NUMBER, TYPE 0) or announces an element larger than
/// `max_bytes`, so the connection cannot be resynchronised.
pub fn frame_len(buf: &[u8], max_bytes: usize) -> Result<Option<usize>> {
    let need_more = |e: Error| match e.kind {
        ErrorKind::Truncated => Ok(None),
        _ => Err(e),
    };
    let (typ, tn) = match read_var_number(buf, 0) {
        Ok(x) => x,
        Err(e) => return need_more(e),
    };
    if typ == 0 || typ > u64::from(u32::MAX) {
        return Err(Error::new(ErrorKind::InvalidType(typ), 0));
    }
    let (len, ln) = match read_var_number(&buf[tn..], tn) {
        Ok(x) => x,
        Err(e) => return need_more(e),
    };
    let total = match len.checked_add((tn + ln) as u64) {
        Some(t) if t <= max_bytes as u64 => t as usize,
        _ => return Err(Error::new(ErrorKind::Oversize, 0)),
    };
    Ok((buf.len() >= total).then_some(total))
}

/// A decoded packet from a face.
///
/// The LpPacket variant is much the largest (its many optional header fields); boxing it would
/// allocate per packet. The forwarding pipeline decodes bare Interests and Data into their own
/// small views instead of this enum.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy)]
pub enum PacketView<'a> {
    /// A bare Interest.
    Interest(InterestView<'a>),
    /// A bare Data.
    Data(DataView<'a>),
    /// An NDNLPv2 LpPacket (its fragment may hold an Interest, Data or a piece of one).
    Lp(LpPacketView<'a>),
}

impl<'a> PacketView<'a> {
    /// Decodes one packet that fills `buf` exactly.
    pub fn decode(buf: &'a [u8], limits: &Limits) -> Result<Self> {
        Self::decode_at(buf, 0, limits)
    }

    /// As [`Self::decode`], with `buf[0]` at absolute offset `base` (for error offsets).
    pub fn decode_at(buf: &'a [u8], base: usize, limits: &Limits) -> Result<Self> {
        let e = outer_element(buf, base, limits)?;
        match e.typ {
            tt::LP_PACKET => Ok(PacketView::Lp(LpPacketView::from_element(e)?)),
            _ => Self::from_network_element(e, limits),
        }
    }

    /// Decodes an Interest or Data (not an LpPacket): the content of an LpPacket fragment.
    pub fn decode_network(buf: &'a [u8], base: usize, limits: &Limits) -> Result<Self> {
        Self::from_network_element(outer_element(buf, base, limits)?, limits)
    }

    fn from_network_element(e: Element<'a>, limits: &Limits) -> Result<Self> {
        match e.typ {
            tt::INTEREST => Ok(PacketView::Interest(InterestView::from_element(e, limits)?)),
            tt::DATA => Ok(PacketView::Data(DataView::from_element(e, limits)?)),
            t => Err(Error::new(ErrorKind::NotAPacket(t), e.offset)),
        }
    }

    /// The packet's TLV-TYPE without validating anything else.
    pub fn peek_type(buf: &[u8]) -> Result<u32> {
        let (t, _) = read_var_number(buf, 0)?;
        match t {
            0 => Err(Error::new(ErrorKind::InvalidType(0), 0)),
            t if t > u64::from(u32::MAX) => Err(Error::new(ErrorKind::InvalidType(t), 0)),
            t => Ok(t as u32),
        }
    }

    /// Owned copy.
    pub fn to_packet(&self) -> Packet {
        match self {
            PacketView::Interest(i) => Packet::Interest(i.to_interest()),
            PacketView::Data(d) => Packet::Data(d.to_data()),
            PacketView::Lp(l) => Packet::Lp(l.to_lp_packet()),
        }
    }
}

/// An owned packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet {
    /// Interest.
    Interest(Interest),
    /// Data.
    Data(Data),
    /// LpPacket.
    Lp(LpPacket),
}

impl Packet {
    /// Appends the encoded packet.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Packet::Interest(i) => i.encode(out),
            Packet::Data(d) => d.encode(out),
            Packet::Lp(l) => l.encode(out),
        }
    }

    /// The encoded packet as a new buffer.
    pub fn to_wire(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Name;

    #[test]
    fn frame_len_on_streams() {
        let i = Interest::new(Name::from_uri("/a/b").unwrap(), [9; 4]).to_wire();
        assert_eq!(frame_len(&i, 8800).unwrap(), Some(i.len()));
        assert_eq!(frame_len(&i[..3], 8800).unwrap(), None);
        assert_eq!(frame_len(&[], 8800).unwrap(), None);
        assert_eq!(frame_len(&[0x05, 0xFD], 8800).unwrap(), None);
        assert_eq!(
            frame_len(&[0x05, 0xFD, 0x30, 0x00], 8800).unwrap_err().kind,
            ErrorKind::Oversize
        );
        assert!(frame_len(&[0x00, 0x01], 8800).is_err());
        assert!(frame_len(&[0x05, 0xFD, 0x00, 0x01], 8800).is_err());
    }

    #[test]
    fn bare_and_lp_packets() {
        let i = Interest::new(Name::from_uri("/a").unwrap(), [1; 4]).to_wire();
        assert!(matches!(
            PacketView::decode(&i, &Limits::default()).unwrap(),
            PacketView::Interest(_)
        ));
        let lp = LpPacket {
            fragment: Some(i.clone()),
            ..LpPacket::default()
        }
        .to_wire();
        let PacketView::Lp(v) = PacketView::decode(&lp, &Limits::default()).unwrap() else {
            panic!("not lp")
        };
        assert!(matches!(
            v.network_packet(&Limits::default()).unwrap().unwrap(),
            PacketView::Interest(_)
        ));
        // A Name is not a packet; an LpPacket inside a fragment is not accepted.
        let n = Name::from_uri("/a").unwrap().to_wire();
        let e = PacketView::decode(&n, &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotAPacket(7));
        let nested = LpPacket {
            fragment: Some(lp.clone()),
            ..LpPacket::default()
        }
        .to_wire();
        let PacketView::Lp(v) = PacketView::decode(&nested, &Limits::default()).unwrap() else {
            panic!()
        };
        let e = v.network_packet(&Limits::default()).unwrap().unwrap_err();
        assert_eq!(e, Error::new(ErrorKind::NotAPacket(100), 4));
        assert_eq!(PacketView::peek_type(&lp).unwrap(), 100);
    }
}
