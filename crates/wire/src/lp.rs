//! NDNLPv2 link packets: [`LpPacketView`] and the owned [`LpPacket`].
//!
//! An LpPacket is a list of header fields followed by an optional Fragment (none: an IDLE packet,
//! carrying only acknowledgements). Header fields may come in any order, each at most once except
//! Ack; the Fragment comes last. An unrecognized header field is ignored only if its type is in
//! 800..=959 with the two low bits 00; any other unrecognized field makes the packet invalid.
//! A bare Interest or Data is accepted wherever an LpPacket is (see [`crate::PacketView`]).
//!
//! One field is Cascade's own: NB-CC's congestion signal ([`NbccSignal`], TLV-TYPE
//! [`tt::LP_NBCC`] = 952), which a forwarder that does not know it ignores by the rule above.

use crate::error::{Error, ErrorKind, Result};
use crate::packet::{outer_element, PacketView};
use crate::tlv::{self, Element};
use crate::{tt, Limits};

/// Largest PitToken accepted, in bytes.
pub const MAX_PIT_TOKEN_LEN: usize = 32;

/// CachePolicyType value meaning "do not cache".
pub const CACHE_POLICY_NO_CACHE: u64 = 1;

/// Why an Interest was Nacked. Unknown codes are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NackReason {
    /// The upstream is congested (50).
    Congestion,
    /// Duplicate Nonce (100).
    Duplicate,
    /// No route (150).
    NoRoute,
    /// Any other code. [`NackReason::from_code`] never produces `Other` for 50, 100 or 150.
    Other(u64),
}

impl NackReason {
    /// From its code.
    pub fn from_code(c: u64) -> Self {
        match c {
            50 => NackReason::Congestion,
            100 => NackReason::Duplicate,
            150 => NackReason::NoRoute,
            c => NackReason::Other(c),
        }
    }

    /// Its code.
    pub fn code(self) -> u64 {
        match self {
            NackReason::Congestion => 50,
            NackReason::Duplicate => 100,
            NackReason::NoRoute => 150,
            NackReason::Other(c) => c,
        }
    }

    /// NFD's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            NackReason::Congestion => "Congestion",
            NackReason::Duplicate => "Duplicate",
            NackReason::NoRoute => "NoRoute",
            NackReason::Other(_) => "Unknown",
        }
    }
}

/// A Nack header: present, with or without a reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Nack {
    /// NackReason, if the element is present.
    pub reason: Option<NackReason>,
}

/// NB-CC's hop-by-hop congestion signal (Pan et al., "NB-Cache: Non-Blocking In-Network
/// Caching for High-Performance Content Routers"): a router whose storage queue is past its
/// threshold tells its downstream neighbours not to send it bypassed Interests (Nack-α), and
/// tells them again when it is not (Nack-β).
///
/// Carried as the NDNLPv2 header field [`tt::LP_NBCC`] (952 = 0x03B8), a NonNegativeInteger:
/// 1 for Nack-α, 0 for Nack-β. 952 is in 800..=959 with its two low bits 00, the range a
/// receiver that does not recognize a field must ignore (NFD, ndn-cxx and NDN-DPDK do), and no
/// NDNLPv2 field uses it. Like every header field it precedes the Fragment in increasing
/// TLV-TYPE order (after PrefixAnnouncement, 848). A value other than 0 or 1, or one that is not
/// a NonNegativeInteger, is ignored as the field of a later version would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NbccSignal {
    /// Nack-α: the sender's storage queue is past its threshold; do not bypass to it.
    Alpha,
    /// Nack-β: the sender's queue is below its threshold again.
    Beta,
}

impl NbccSignal {
    /// The field's value.
    pub fn code(self) -> u64 {
        match self {
            NbccSignal::Alpha => 1,
            NbccSignal::Beta => 0,
        }
    }

    /// From the field's value; `None` for a value this version does not know.
    pub fn from_code(c: u64) -> Option<Self> {
        match c {
            1 => Some(NbccSignal::Alpha),
            0 => Some(NbccSignal::Beta),
            _ => None,
        }
    }

    /// An IDLE LpPacket (no Fragment) carrying only this signal, appended to `out`: for a sender
    /// with no packet to carry it on.
    pub fn encode_idle(self, out: &mut Vec<u8>) {
        tlv::write_nested(out, tt::LP_PACKET, |o| {
            tlv::write_nni_tlv(o, tt::LP_NBCC, self.code())
        });
    }
}

/// Whether a receiver that does not recognize header field `typ` may ignore it (NDNLPv2: a
/// TLV-TYPE in 800..=959 whose two low bits are 00); any other unknown field invalidates the
/// packet.
pub fn is_ignorable(typ: u32) -> bool {
    (800..=959).contains(&typ) && typ & 0x03 == 0
}

/// Fixed-width unsigned integer (Sequence, TxSequence, Ack): 1..=8 bytes big-endian.
fn fixed_width(e: &Element<'_>) -> Result<u64> {
    if e.value.is_empty() || e.value.len() > 8 {
        return Err(Error::new(ErrorKind::BadLength { typ: e.typ }, e.offset));
    }
    Ok(tlv::read_be(e.value))
}

/// A validated LpPacket borrowed from a buffer.
#[derive(Debug, Clone, Copy)]
pub struct LpPacketView<'a> {
    wire: &'a [u8],
    offset: usize,
    value: Element<'a>,
    /// Sequence (fragmentation).
    pub sequence: Option<u64>,
    /// FragIndex.
    pub frag_index: Option<u64>,
    /// FragCount.
    pub frag_count: Option<u64>,
    /// HopCount (ndnSIM).
    pub hop_count: Option<u64>,
    /// PitToken (1..=32 bytes).
    pub pit_token: Option<&'a [u8]>,
    /// Nack header.
    pub nack: Option<Nack>,
    /// NextHopFaceId.
    pub next_hop_face_id: Option<u64>,
    /// IncomingFaceId.
    pub incoming_face_id: Option<u64>,
    /// CachePolicyType inside CachePolicy.
    pub cache_policy: Option<u64>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// TxSequence.
    pub tx_sequence: Option<u64>,
    /// NonDiscovery.
    pub non_discovery: bool,
    /// PrefixAnnouncement value, opaque.
    pub prefix_announcement: Option<&'a [u8]>,
    /// NB-CC's signal (Cascade's field 952; `None` also for a value this version does not know).
    pub nbcc: Option<NbccSignal>,
    fragment: Option<Element<'a>>,
}

impl<'a> LpPacketView<'a> {
    /// Decodes an LpPacket that fills `buf` exactly.
    pub fn decode(buf: &'a [u8], limits: &Limits) -> Result<Self> {
        Self::from_element(outer_element(buf, 0, limits)?)
    }

    /// Decodes an LpPacket from an already delimited element.
    pub fn from_element(e: Element<'a>) -> Result<Self> {
        let e = e.expect(tt::LP_PACKET)?;
        let mut v = LpPacketView {
            wire: e.wire,
            offset: e.offset,
            value: e,
            sequence: None,
            frag_index: None,
            frag_count: None,
            hop_count: None,
            pit_token: None,
            nack: None,
            next_hop_face_id: None,
            incoming_face_id: None,
            cache_policy: None,
            congestion_mark: None,
            tx_sequence: None,
            non_discovery: false,
            prefix_announcement: None,
            nbcc: None,
            fragment: None,
        };
        let mut seen: u32 = 0; // one bit per non-repeatable field
        let mut r = e.reader();
        while let Some(x) = r.next_element() {
            let x = x?;
            if v.fragment.is_some() {
                // Nothing may follow the Fragment.
                return Err(Error::new(ErrorKind::OutOfOrder(x.typ), x.offset));
            }
            let bit = match x.typ {
                tt::LP_FRAGMENT => 0,
                tt::LP_SEQUENCE => 1,
                tt::LP_FRAG_INDEX => 2,
                tt::LP_FRAG_COUNT => 3,
                tt::LP_HOP_COUNT => 4,
                tt::LP_PIT_TOKEN => 5,
                tt::LP_NACK => 6,
                tt::LP_NEXT_HOP_FACE_ID => 7,
                tt::LP_INCOMING_FACE_ID => 8,
                tt::LP_CACHE_POLICY => 9,
                tt::LP_CONGESTION_MARK => 10,
                tt::LP_TX_SEQUENCE => 11,
                tt::LP_NON_DISCOVERY => 12,
                tt::LP_PREFIX_ANNOUNCEMENT => 13,
                tt::LP_NBCC => 14,
                tt::LP_ACK => 31,
                t if is_ignorable(t) => continue,
                t => return Err(Error::new(ErrorKind::UnknownCritical(t), x.offset)),
            };
            if bit != 31 {
                if seen & (1 << bit) != 0 {
                    return Err(Error::new(ErrorKind::OutOfOrder(x.typ), x.offset));
                }
                seen |= 1 << bit;
            }
            match x.typ {
                tt::LP_FRAGMENT => v.fragment = Some(x),
                tt::LP_SEQUENCE => v.sequence = Some(fixed_width(&x)?),
                tt::LP_FRAG_INDEX => v.frag_index = Some(x.nni()?),
                tt::LP_FRAG_COUNT => v.frag_count = Some(x.nni()?),
                tt::LP_HOP_COUNT => v.hop_count = Some(x.nni()?),
                tt::LP_PIT_TOKEN => {
                    if x.value.is_empty() || x.value.len() > MAX_PIT_TOKEN_LEN {
                        return Err(Error::new(ErrorKind::BadLength { typ: x.typ }, x.offset));
                    }
                    v.pit_token = Some(x.value);
                }
                tt::LP_NACK => {
                    let mut n = x.reader();
                    let mut reason = None;
                    while let Some(y) = n.next_element() {
                        let y = y?;
                        match y.typ {
                            tt::LP_NACK_REASON if reason.is_none() => {
                                reason = Some(NackReason::from_code(y.nni()?));
                            }
                            t if tlv::is_critical(t) => {
                                return Err(Error::new(ErrorKind::UnknownCritical(t), y.offset))
                            }
                            _ => {}
                        }
                    }
                    v.nack = Some(Nack { reason });
                }
                tt::LP_NEXT_HOP_FACE_ID => v.next_hop_face_id = Some(x.nni()?),
                tt::LP_INCOMING_FACE_ID => v.incoming_face_id = Some(x.nni()?),
                tt::LP_CACHE_POLICY => {
                    let mut c = x.reader();
                    let t = c.read()?.expect(tt::LP_CACHE_POLICY_TYPE)?;
                    v.cache_policy = Some(t.nni()?);
                    if !c.is_empty() {
                        return Err(Error::new(ErrorKind::TrailingBytes, c.offset()));
                    }
                }
                tt::LP_CONGESTION_MARK => v.congestion_mark = Some(x.nni()?),
                tt::LP_TX_SEQUENCE => v.tx_sequence = Some(fixed_width(&x)?),
                tt::LP_NON_DISCOVERY => {
                    x.expect_empty()?;
                    v.non_discovery = true;
                }
                tt::LP_PREFIX_ANNOUNCEMENT => v.prefix_announcement = Some(x.value),
                // An ignorable field: a value this version cannot read is ignored, not refused.
                tt::LP_NBCC => v.nbcc = x.nni().ok().and_then(NbccSignal::from_code),
                _ => {
                    fixed_width(&x)?; // Ack
                }
            }
        }
        if v.frag_count == Some(0) {
            let typ = tt::LP_FRAG_COUNT;
            return Err(Error::new(ErrorKind::BadLength { typ }, e.offset));
        }
        if matches!((v.frag_index, v.frag_count), (Some(i), Some(c)) if i >= c) {
            let typ = tt::LP_FRAG_INDEX;
            return Err(Error::new(ErrorKind::BadLength { typ }, e.offset));
        }
        Ok(v)
    }

    view_position!("LpPacket");

    /// Fragment bytes (a whole network packet, or a piece of one), if any.
    #[inline]
    pub fn fragment(&self) -> Option<&'a [u8]> {
        self.fragment.map(|f| f.value)
    }

    /// Absolute offset of the fragment bytes.
    #[inline]
    pub fn fragment_offset(&self) -> Option<usize> {
        self.fragment.map(|f| f.value_offset)
    }

    /// Is the fragment a piece of a larger packet (FragCount > 1)?
    #[inline]
    pub fn is_fragmented(&self) -> bool {
        self.frag_count.is_some_and(|c| c > 1)
    }

    /// The acknowledged sequence numbers.
    pub fn acks(&self) -> impl Iterator<Item = u64> + 'a {
        let mut r = self.value.reader();
        core::iter::from_fn(move || loop {
            let e = r.next_element()?.ok()?;
            if e.typ == tt::LP_ACK {
                return fixed_width(&e).ok();
            }
        })
    }

    /// Decodes the fragment as an Interest or Data, when it is a whole packet.
    ///
    /// `None` if there is no fragment or it is a piece of a fragmented packet.
    pub fn network_packet(&self, limits: &Limits) -> Option<Result<PacketView<'a>>> {
        let f = self.fragment?;
        if self.is_fragmented() {
            return None;
        }
        Some(PacketView::decode_network(f.value, f.value_offset, limits))
    }

    /// Owned copy.
    pub fn to_lp_packet(&self) -> LpPacket {
        LpPacket {
            sequence: self.sequence,
            frag_index: self.frag_index,
            frag_count: self.frag_count,
            hop_count: self.hop_count,
            pit_token: self.pit_token.map(<[u8]>::to_vec),
            nack: self.nack,
            next_hop_face_id: self.next_hop_face_id,
            incoming_face_id: self.incoming_face_id,
            cache_policy: self.cache_policy,
            congestion_mark: self.congestion_mark,
            acks: self.acks().collect(),
            tx_sequence: self.tx_sequence,
            non_discovery: self.non_discovery,
            prefix_announcement: self.prefix_announcement.map(<[u8]>::to_vec),
            nbcc: self.nbcc,
            fragment: self.fragment().map(<[u8]>::to_vec),
        }
    }
}

/// An owned LpPacket. Fields are encoded in increasing TLV-TYPE order, Fragment last.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LpPacket {
    /// Sequence (encoded as 8 bytes).
    pub sequence: Option<u64>,
    /// FragIndex.
    pub frag_index: Option<u64>,
    /// FragCount.
    pub frag_count: Option<u64>,
    /// HopCount.
    pub hop_count: Option<u64>,
    /// PitToken.
    pub pit_token: Option<Vec<u8>>,
    /// Nack.
    pub nack: Option<Nack>,
    /// NextHopFaceId.
    pub next_hop_face_id: Option<u64>,
    /// IncomingFaceId.
    pub incoming_face_id: Option<u64>,
    /// CachePolicyType.
    pub cache_policy: Option<u64>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// Acks (each encoded as 8 bytes).
    pub acks: Vec<u64>,
    /// TxSequence (encoded as 8 bytes).
    pub tx_sequence: Option<u64>,
    /// NonDiscovery.
    pub non_discovery: bool,
    /// PrefixAnnouncement value.
    pub prefix_announcement: Option<Vec<u8>>,
    /// NB-CC's signal (Cascade's field 952).
    pub nbcc: Option<NbccSignal>,
    /// Fragment.
    pub fragment: Option<Vec<u8>>,
}

impl LpPacket {
    /// A Nack of `interest` (its encoded bytes) with `reason`.
    pub fn nack(interest: Vec<u8>, reason: NackReason) -> Self {
        LpPacket {
            nack: Some(Nack {
                reason: Some(reason),
            }),
            fragment: Some(interest),
            ..LpPacket::default()
        }
    }

    /// Appends the LpPacket TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        use tlv::{write_nni_tlv as nni, write_tlv};
        tlv::write_nested(out, tt::LP_PACKET, |o| {
            if let Some(s) = self.sequence {
                write_tlv(o, tt::LP_SEQUENCE, &s.to_be_bytes());
            }
            if let Some(x) = self.frag_index {
                nni(o, tt::LP_FRAG_INDEX, x);
            }
            if let Some(x) = self.frag_count {
                nni(o, tt::LP_FRAG_COUNT, x);
            }
            if let Some(x) = self.hop_count {
                nni(o, tt::LP_HOP_COUNT, x);
            }
            if let Some(t) = &self.pit_token {
                write_tlv(o, tt::LP_PIT_TOKEN, t);
            }
            if let Some(n) = self.nack {
                tlv::write_nested(o, tt::LP_NACK, |o| {
                    if let Some(r) = n.reason {
                        nni(o, tt::LP_NACK_REASON, r.code());
                    }
                });
            }
            if let Some(x) = self.incoming_face_id {
                nni(o, tt::LP_INCOMING_FACE_ID, x);
            }
            if let Some(x) = self.next_hop_face_id {
                nni(o, tt::LP_NEXT_HOP_FACE_ID, x);
            }
            if let Some(x) = self.cache_policy {
                tlv::write_nested(o, tt::LP_CACHE_POLICY, |o| {
                    nni(o, tt::LP_CACHE_POLICY_TYPE, x)
                });
            }
            if let Some(x) = self.congestion_mark {
                nni(o, tt::LP_CONGESTION_MARK, x);
            }
            for a in &self.acks {
                write_tlv(o, tt::LP_ACK, &a.to_be_bytes());
            }
            if let Some(s) = self.tx_sequence {
                write_tlv(o, tt::LP_TX_SEQUENCE, &s.to_be_bytes());
            }
            if self.non_discovery {
                write_tlv(o, tt::LP_NON_DISCOVERY, &[]);
            }
            if let Some(p) = &self.prefix_announcement {
                write_tlv(o, tt::LP_PREFIX_ANNOUNCEMENT, p);
            }
            if let Some(x) = self.nbcc {
                nni(o, tt::LP_NBCC, x.code());
            }
            if let Some(f) = &self.fragment {
                write_tlv(o, tt::LP_FRAGMENT, f);
            }
        });
    }

    owned_codec!("LpPacket", LpPacketView, to_lp_packet);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind as K;
    use crate::{Interest, Name};

    fn dec(b: &[u8]) -> Result<LpPacketView<'_>> {
        LpPacketView::decode(b, &Limits::default())
    }

    #[test]
    fn nack_vector() {
        let i = Interest::new(Name::from_uri("/a").unwrap(), [1, 2, 3, 4]).to_wire();
        let lp = LpPacket::nack(i.clone(), NackReason::NoRoute);
        let mut expect = vec![
            0x64, 0x18, 0xFD, 0x03, 0x20, 0x05, 0xFD, 0x03, 0x21, 0x01, 150,
        ];
        expect.extend_from_slice(&[0x50, 0x0D]);
        expect.extend_from_slice(&i);
        assert_eq!(lp.to_wire(), expect);
        let v = dec(&expect).unwrap();
        assert_eq!(v.nack.unwrap().reason, Some(NackReason::NoRoute));
        assert_eq!(v.fragment(), Some(&i[..]));
        assert_eq!(v.fragment_offset(), Some(13));
        match v.network_packet(&Limits::default()).unwrap().unwrap() {
            PacketView::Interest(iv) => {
                assert_eq!(iv.name().to_string(), "/a");
                assert_eq!(iv.offset(), 13);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(v.to_lp_packet(), lp);
    }

    #[test]
    fn all_fields_round_trip_and_bytes() {
        let lp = LpPacket {
            sequence: Some(0x0102),
            frag_index: Some(0),
            frag_count: Some(2),
            pit_token: Some(vec![0xA0, 0xA1]),
            incoming_face_id: Some(300),
            next_hop_face_id: Some(5),
            cache_policy: Some(CACHE_POLICY_NO_CACHE),
            congestion_mark: Some(1),
            acks: vec![7, 8],
            tx_sequence: Some(9),
            non_discovery: true,
            prefix_announcement: Some(vec![0x06, 0x00]),
            fragment: Some(vec![0xDE, 0xAD]),
            ..LpPacket::default()
        };
        let w = lp.to_wire();
        let v = dec(&w).unwrap();
        assert_eq!(v.to_lp_packet(), lp);
        assert!(v.is_fragmented());
        assert!(v.network_packet(&Limits::default()).is_none());
        // Sequence is 8 bytes fixed-width right after the LpPacket header.
        assert_eq!(&w[2..12], &[0x51, 0x08, 0, 0, 0, 0, 0, 0, 0x01, 0x02]);
        // CachePolicy{CachePolicyType=1}
        let cp = [0xFD, 0x03, 0x34, 0x05, 0xFD, 0x03, 0x35, 0x01, 0x01];
        assert!(w.windows(cp.len()).any(|x| x == cp));
    }

    #[test]
    fn unknown_reason_kept_and_empty_nack() {
        let w = LpPacket::nack(vec![], NackReason::Other(77)).to_wire();
        assert_eq!(
            &w[..],
            &[0x64, 0x0B, 0xFD, 0x03, 0x20, 0x05, 0xFD, 0x03, 0x21, 0x01, 77, 0x50, 0x00][..]
        );
        let v = dec(&w).unwrap();
        assert_eq!(v.nack.unwrap().reason, Some(NackReason::Other(77)));
        let v = dec(&[0x64, 0x04, 0xFD, 0x03, 0x20, 0x00]).unwrap();
        assert_eq!(v.nack.unwrap().reason, None);
    }

    #[test]
    fn unknown_header_rule() {
        // 800..959 with low bits 00: ignored; 801 (low bits 01) and 960: dropped; 100 < 800: dropped.
        let mk = |t: u16| {
            let mut v = vec![0x64, 0x04, 0xFD];
            v.extend_from_slice(&t.to_be_bytes());
            v.push(0);
            v
        };
        assert!(dec(&mk(804)).is_ok());
        assert!(dec(&mk(956)).is_ok());
        assert_eq!(dec(&mk(805)).unwrap_err().kind, K::UnknownCritical(805));
        assert_eq!(dec(&mk(960)).unwrap_err().kind, K::UnknownCritical(960));
        assert_eq!(dec(&mk(300)).unwrap_err().kind, K::UnknownCritical(300));
    }

    /// NB-CC's field: both signals round-trip, on a packet and on an IDLE LpPacket, whose
    /// bytes are fixed.
    #[test]
    fn nbcc_field_round_trips() {
        let data = crate::Data::new(Name::from_uri("/a").unwrap(), b"x".to_vec()).to_wire();
        for sig in [NbccSignal::Alpha, NbccSignal::Beta] {
            let lp = LpPacket {
                pit_token: Some(vec![1, 2, 3]),
                congestion_mark: Some(1),
                nbcc: Some(sig),
                fragment: Some(data.clone()),
                ..LpPacket::default()
            };
            let w = lp.to_wire();
            let v = dec(&w).unwrap();
            assert_eq!(v.nbcc, Some(sig));
            assert_eq!(v.to_lp_packet(), lp);
            let mut idle = Vec::new();
            sig.encode_idle(&mut idle);
            assert_eq!(idle, [0x64, 0x05, 0xFD, 0x03, 0xB8, 0x01, sig.code() as u8]);
            let v = dec(&idle).unwrap();
            assert_eq!((v.nbcc, v.fragment()), (Some(sig), None));
            assert_eq!(
                idle,
                LpPacket {
                    nbcc: Some(sig),
                    ..LpPacket::default()
                }
                .to_wire()
            );
        }
    }

    /// What lets a forwarder that does not know the field (NFD, ndn-cxx, NDN-DPDK) take the
    /// packet anyway: its TLV-TYPE is in the ignorable range and no NDNLPv2 field has it, and
    /// it is encoded in increasing TLV-TYPE order among the header fields (ndn-cxx refuses a
    /// packet whose fields are out of order).
    #[test]
    fn nbcc_field_is_ignorable_unassigned_and_in_order() {
        assert!(is_ignorable(tt::LP_NBCC));
        let assigned = [
            tt::LP_FRAGMENT,
            tt::LP_SEQUENCE,
            tt::LP_FRAG_INDEX,
            tt::LP_FRAG_COUNT,
            tt::LP_HOP_COUNT,
            tt::LP_PIT_TOKEN,
            tt::LP_NACK,
            tt::LP_NACK_REASON,
            tt::LP_INCOMING_FACE_ID,
            tt::LP_NEXT_HOP_FACE_ID,
            tt::LP_CACHE_POLICY,
            tt::LP_CACHE_POLICY_TYPE,
            tt::LP_CONGESTION_MARK,
            tt::LP_ACK,
            tt::LP_TX_SEQUENCE,
            tt::LP_NON_DISCOVERY,
            tt::LP_PREFIX_ANNOUNCEMENT,
        ];
        assert!(!assigned.contains(&tt::LP_NBCC));
        // A receiver that knows only the assigned fields: every other field must be ignorable
        // and the header fields must come in increasing order, the Fragment last.
        let lp = LpPacket {
            pit_token: Some(vec![9]),
            nack: Some(Nack { reason: None }),
            cache_policy: Some(CACHE_POLICY_NO_CACHE),
            congestion_mark: Some(1),
            tx_sequence: Some(3),
            prefix_announcement: Some(vec![0x06, 0x00]),
            nbcc: Some(NbccSignal::Alpha),
            fragment: Some(vec![0x05, 0x00]),
            ..LpPacket::default()
        };
        let w = lp.to_wire();
        let outer = tlv::Reader::new(&w).read().unwrap();
        let mut r = outer.reader();
        let mut types = Vec::new();
        while let Some(e) = r.next_element() {
            let t = e.unwrap().typ;
            assert!(assigned.contains(&t) || is_ignorable(t), "{t}");
            types.push(t);
        }
        assert_eq!(types.last(), Some(&tt::LP_FRAGMENT));
        let headers = &types[..types.len() - 1];
        assert!(headers.windows(2).all(|p| p[0] < p[1]), "{headers:?}");
        assert!(headers.contains(&tt::LP_NBCC));
    }

    #[test]
    fn an_nbcc_value_this_version_does_not_know_is_ignored() {
        // Value 7, a 3-byte value (not a NonNegativeInteger), an empty value: the packet is
        // taken, without a signal. Repeated, the field is refused like any other.
        for value in [&[7u8][..], &[0, 0, 1], &[]] {
            let mut b = vec![
                0x64,
                4 + value.len() as u8,
                0xFD,
                0x03,
                0xB8,
                value.len() as u8,
            ];
            b.extend_from_slice(value);
            let v = dec(&b).unwrap();
            assert_eq!(v.nbcc, None, "{value:?}");
        }
        let b = [
            0x64, 0x0A, 0xFD, 0x03, 0xB8, 0x01, 0x01, 0xFD, 0x03, 0xB8, 0x01, 0x00,
        ];
        assert_eq!(dec(&b).unwrap_err().kind, K::OutOfOrder(tt::LP_NBCC));
    }

    #[test]
    fn rejections() {
        // header after fragment
        let b = [0x64, 0x07, 0x50, 0x01, 0xAA, 0x53, 0x01, 0x01, 0x00];
        let mut b = b[..8].to_vec();
        b[1] = 6;
        assert_eq!(dec(&b).unwrap_err().kind, K::OutOfOrder(0x53));
        // repeated non-repeatable field
        let b = [0x64, 0x06, 0x53, 0x01, 0x02, 0x53, 0x01, 0x02];
        assert_eq!(dec(&b).unwrap_err(), Error::new(K::OutOfOrder(0x53), 5));
        // PitToken too long
        let mut b = vec![0x64, 35, 0x62, 33];
        b.extend_from_slice(&[0; 33]);
        assert_eq!(dec(&b).unwrap_err().kind, K::BadLength { typ: 0x62 });
        // FragIndex >= FragCount
        let b = [0x64, 0x06, 0x52, 0x01, 0x02, 0x53, 0x01, 0x02];
        assert!(dec(&b).is_err());
        // Sequence of 9 bytes
        let mut b = vec![0x64, 11, 0x51, 9];
        b.extend_from_slice(&[0; 9]);
        assert_eq!(dec(&b).unwrap_err().kind, K::BadLength { typ: 0x51 });
    }
}
