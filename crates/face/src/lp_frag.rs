//! NDNLPv2 fragmentation and reassembly for datagram faces, as NFD's `LpFragmenter` and
//! `LpReassembler` do it.
//!
//! **Sending.** [`Fragmenter`] turns one network packet (the bytes of an Interest or Data) plus its
//! link headers ([`LpHeaders`]) into datagrams of at most `mtu` bytes. A packet that fits goes out
//! as one LpPacket without Sequence, FragIndex or FragCount (or bare, when there are no headers and
//! bare output is enabled, as ndn-cxx and NFD do). A packet that does not fit is cut into pieces
//! that fill the MTU exactly as far as the TLV length encodings allow; piece `i` carries
//! Sequence = base + `i` (8 bytes), FragIndex = `i` and FragCount = n, and only the first piece
//! carries the link headers, as in NFD. At most [`MAX_FRAGMENTS`] pieces per packet.
//!
//! **Receiving.** [`Reassembler`] takes decoded LpPackets ([`LpPacketView`]) from many senders.
//! An unfragmented one yields its fragment at once, without copying. Pieces of a fragmented packet
//! are keyed by (sender, Sequence − FragIndex), kept until all FragCount pieces are in (any order;
//! duplicates ignored), then joined; the link headers come from the piece with FragIndex 0.
//! Memory is bounded: at most `capacity` partial packets (the least recently active one is dropped
//! to make room), at most `max_packet_bytes` per packet, nothing reserved ahead of the pieces
//! actually received (a buffer grows with them, whatever FragCount announces), all of it charged
//! to a byte budget that the reassemblers of every face can share ([`ReassemblyBudget`]: a piece
//! that would exceed it is refused, with its packet, and counted); and a partial that receives no
//! new piece for `timeout_ms` is dropped and its memory freed (NFD restarts its reassembly timer on
//! every piece too).
//!
//! Time is always passed in, in milliseconds on any monotonic clock.

use std::fmt;

use wire::lp::{Nack, NbccSignal, MAX_PIT_TOKEN_LEN};
use wire::tlv::{nni_len, write_nni_tlv, write_tlv, write_var_number};
use wire::{tt, LpPacketView};

use crate::link::tlv_len;

/// Most pieces one packet may be cut into, and the largest FragCount the reassembler accepts.
pub const MAX_FRAGMENTS: u64 = 64;

// One bit per piece in a `u64`, and FragIndex / FragCount always fit a 1-byte NonNegativeInteger.
const _: () = assert!(MAX_FRAGMENTS >= 2 && MAX_FRAGMENTS <= 64);

/// NFD's default reassembly timeout, in milliseconds.
pub const DEFAULT_REASSEMBLY_TIMEOUT_MS: u64 = 500;

/// Default number of partial packets a [`Reassembler`] holds at once.
pub const DEFAULT_REASSEMBLY_CAPACITY: usize = 256;

/// Encoded size of a Sequence field: TYPE, LENGTH and 8 value bytes.
const SEQUENCE_TLV_LEN: usize = 10;

/// Encoded size of Sequence + FragIndex + FragCount when FragCount <= [`MAX_FRAGMENTS`].
const FRAG_FIELDS_LEN: usize = SEQUENCE_TLV_LEN + 3 + 3;

// ---------------------------------------------------------------------------------------------
// Link headers
// ---------------------------------------------------------------------------------------------

/// A PitToken (1..=32 bytes) stored inline, so that [`LpHeaders`] is `Copy` and never allocates.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PitToken {
    len: u8,
    bytes: [u8; MAX_PIT_TOKEN_LEN],
}

impl PitToken {
    /// A token of 1..=32 bytes; `None` for an empty or longer one.
    pub fn new(token: &[u8]) -> Option<Self> {
        if token.is_empty() || token.len() > MAX_PIT_TOKEN_LEN {
            return None;
        }
        let mut bytes = [0u8; MAX_PIT_TOKEN_LEN];
        bytes[..token.len()].copy_from_slice(token);
        Some(PitToken {
            len: token.len() as u8,
            bytes,
        })
    }

    /// The token's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Debug for PitToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PitToken(")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// The NDNLPv2 header fields a face carries with a network packet.
///
/// Fragmentation fields (Sequence, FragIndex, FragCount) are the [`Fragmenter`]'s business and
/// reliability fields (Ack, TxSequence) belong to a later link service; NonDiscovery,
/// PrefixAnnouncement and HopCount are not carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct LpHeaders {
    /// PitToken.
    pub pit_token: Option<PitToken>,
    /// Nack (the fragment is then the Nacked Interest).
    pub nack: Option<Nack>,
    /// IncomingFaceId (router to local application).
    pub incoming_face_id: Option<u64>,
    /// NextHopFaceId (local application to router).
    pub next_hop_face_id: Option<u64>,
    /// CachePolicyType inside CachePolicy.
    pub cache_policy: Option<u64>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// NB-CC's Nack-α / Nack-β (Cascade's field 952, which other forwarders ignore).
    pub nbcc: Option<NbccSignal>,
}

impl LpHeaders {
    /// No header field set?
    #[inline]
    pub fn is_empty(&self) -> bool {
        *self == LpHeaders::default()
    }

    /// The header fields of a decoded LpPacket.
    pub fn from_view(lp: &LpPacketView<'_>) -> Self {
        LpHeaders {
            // The decoder already refused tokens outside 1..=32 bytes.
            pit_token: lp.pit_token.and_then(PitToken::new),
            nack: lp.nack,
            incoming_face_id: lp.incoming_face_id,
            next_hop_face_id: lp.next_hop_face_id,
            cache_policy: lp.cache_policy,
            congestion_mark: lp.congestion_mark,
            nbcc: lp.nbcc,
        }
    }

    /// Bytes [`Self::encode`] appends.
    pub fn encoded_len(&self) -> usize {
        let nni_field = |typ: u32, v: u64| tlv_len(typ, nni_len(v));
        let mut n = 0;
        if let Some(t) = &self.pit_token {
            n += tlv_len(tt::LP_PIT_TOKEN, t.as_bytes().len());
        }
        if let Some(nack) = self.nack {
            n += tlv_len(tt::LP_NACK, nack_value_len(nack));
        }
        if let Some(x) = self.incoming_face_id {
            n += nni_field(tt::LP_INCOMING_FACE_ID, x);
        }
        if let Some(x) = self.next_hop_face_id {
            n += nni_field(tt::LP_NEXT_HOP_FACE_ID, x);
        }
        if let Some(x) = self.cache_policy {
            n += tlv_len(tt::LP_CACHE_POLICY, nni_field(tt::LP_CACHE_POLICY_TYPE, x));
        }
        if let Some(x) = self.congestion_mark {
            n += nni_field(tt::LP_CONGESTION_MARK, x);
        }
        if let Some(x) = self.nbcc {
            n += nni_field(tt::LP_NBCC, x.code());
        }
        n
    }

    /// Appends the header fields in increasing TLV-TYPE order, as [`wire::LpPacket::encode`]
    /// does (they belong after FragCount and before the Fragment).
    pub fn encode(&self, out: &mut Vec<u8>) {
        if let Some(t) = &self.pit_token {
            write_tlv(out, tt::LP_PIT_TOKEN, t.as_bytes());
        }
        if let Some(nack) = self.nack {
            write_header(out, tt::LP_NACK, nack_value_len(nack));
            if let Some(r) = nack.reason {
                write_nni_tlv(out, tt::LP_NACK_REASON, r.code());
            }
        }
        if let Some(x) = self.incoming_face_id {
            write_nni_tlv(out, tt::LP_INCOMING_FACE_ID, x);
        }
        if let Some(x) = self.next_hop_face_id {
            write_nni_tlv(out, tt::LP_NEXT_HOP_FACE_ID, x);
        }
        if let Some(x) = self.cache_policy {
            let inner = tlv_len(tt::LP_CACHE_POLICY_TYPE, nni_len(x));
            write_header(out, tt::LP_CACHE_POLICY, inner);
            write_nni_tlv(out, tt::LP_CACHE_POLICY_TYPE, x);
        }
        if let Some(x) = self.congestion_mark {
            write_nni_tlv(out, tt::LP_CONGESTION_MARK, x);
        }
        if let Some(x) = self.nbcc {
            write_nni_tlv(out, tt::LP_NBCC, x.code());
        }
    }
}

#[inline]
fn write_header(out: &mut Vec<u8>, typ: u32, value_len: usize) {
    write_var_number(out, u64::from(typ));
    write_var_number(out, value_len as u64);
}

fn nack_value_len(nack: Nack) -> usize {
    nack.reason
        .map_or(0, |r| tlv_len(tt::LP_NACK_REASON, nni_len(r.code())))
}

/// Size of an LpPacket whose fields before the Fragment take `fields` bytes and whose Fragment
/// carries `payload` bytes.
#[inline]
fn lp_len(fields: usize, payload: usize) -> usize {
    let inner = fields + tlv_len(tt::LP_FRAGMENT, payload);
    tlv_len(tt::LP_PACKET, inner)
}

/// The most Fragment bytes an LpPacket with `fields` bytes of other fields can carry within
/// `mtu` bytes; `None` if not even an empty Fragment fits.
fn max_payload(mtu: usize, fields: usize) -> Option<usize> {
    // LpPacket and Fragment take at least 2 header bytes each, so this is an upper bound, and it
    // overshoots `mtu` by at most 16 bytes (two VAR-NUMBERs of at most 9 bytes instead of 1).
    // Each step down shrinks the packet by at least one byte: at most 16 steps.
    let mut p = mtu.checked_sub(fields.checked_add(4)?)?;
    for _ in 0..=16 {
        if lp_len(fields, p) <= mtu {
            return Some(p);
        }
        p = p.checked_sub(1)?;
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Fragmenter
// ---------------------------------------------------------------------------------------------

/// Why a packet could not be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FragmentError {
    /// The network packet is empty.
    EmptyPacket,
    /// The MTU cannot carry a single payload byte (with these headers, for a first piece).
    MtuTooSmall {
        /// The MTU.
        mtu: usize,
        /// The smallest MTU that would do.
        min: usize,
    },
    /// The packet would need more than [`MAX_FRAGMENTS`] pieces at this MTU.
    TooManyFragments {
        /// Pieces needed.
        needed: u64,
        /// The limit.
        max: u64,
    },
}

impl fmt::Display for FragmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FragmentError::EmptyPacket => f.write_str("empty network packet"),
            FragmentError::MtuTooSmall { mtu, min } => {
                write!(
                    f,
                    "MTU {mtu} too small for NDNLPv2 fragments (need at least {min})"
                )
            }
            FragmentError::TooManyFragments { needed, max } => {
                write!(
                    f,
                    "packet needs {needed} fragments, more than the limit of {max}"
                )
            }
        }
    }
}

impl std::error::Error for FragmentError {}

/// How a packet is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Bare,
    Single,
    Fragmented {
        count: u64,
        first: usize,
        rest: usize,
    },
}

/// Cuts network packets into NDNLPv2 fragments of at most `mtu` bytes.
///
/// One per datagram face. It owns the face's next Sequence number (NFD starts it at a random
/// value; pass one in) and two scratch buffers, so producing fragments allocates nothing once
/// warm when [`Self::fragment_with`] is used.
#[derive(Debug, Clone)]
pub struct Fragmenter {
    mtu: usize,
    next_sequence: u64,
    bare: bool,
    headers: Vec<u8>,
    frame: Vec<u8>,
}

impl Fragmenter {
    /// The smallest MTU that can carry a fragment with one payload byte and no link headers.
    pub const MIN_MTU: usize = 2 + FRAG_FIELDS_LEN + 3;

    /// A fragmenter for `mtu`-byte datagrams whose first Sequence is `first_sequence`.
    ///
    /// Bare output is on: a packet with no link headers that fits goes out as is, as ndn-cxx and
    /// NFD send it. Errors if `mtu` is below [`Self::MIN_MTU`].
    pub fn new(mtu: usize, first_sequence: u64) -> Result<Self, FragmentError> {
        check_mtu(mtu)?;
        Ok(Fragmenter {
            mtu,
            next_sequence: first_sequence,
            bare: true,
            headers: Vec::new(),
            frame: Vec::with_capacity(mtu.min(65_536)),
        })
    }

    /// Sets whether a packet without link headers that fits the MTU goes out bare (`true`) or
    /// wrapped in an LpPacket (`false`).
    pub fn with_bare(mut self, bare: bool) -> Self {
        self.bare = bare;
        self
    }

    /// Does a header-less packet that fits go out bare?
    #[inline]
    pub fn bare(&self) -> bool {
        self.bare
    }

    /// The MTU.
    #[inline]
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Changes the MTU (a face's MTU may change at run time). Errors, leaving it unchanged, if
    /// `mtu` is below [`Self::MIN_MTU`].
    pub fn set_mtu(&mut self, mtu: usize) -> Result<(), FragmentError> {
        check_mtu(mtu)?;
        self.mtu = mtu;
        Ok(())
    }

    /// The Sequence the next fragmented packet's first piece will carry.
    #[inline]
    pub fn next_sequence(&self) -> u64 {
        self.next_sequence
    }

    /// How many datagrams `packet_len` bytes with `headers` would take (without sending them).
    pub fn fragment_count(
        &self,
        packet_len: usize,
        headers: &LpHeaders,
    ) -> Result<u64, FragmentError> {
        Ok(
            match self.plan(packet_len, headers.is_empty(), headers.encoded_len())? {
                Plan::Bare | Plan::Single => 1,
                Plan::Fragmented { count, .. } => count,
            },
        )
    }

    fn plan(&self, len: usize, no_headers: bool, hdr_len: usize) -> Result<Plan, FragmentError> {
        if len == 0 {
            return Err(FragmentError::EmptyPacket);
        }
        if self.bare && no_headers && len <= self.mtu {
            return Ok(Plan::Bare);
        }
        if lp_len(hdr_len, len) <= self.mtu {
            return Ok(Plan::Single);
        }
        let too_small = |fields| FragmentError::MtuTooSmall {
            mtu: self.mtu,
            min: lp_len(fields, 1),
        };
        let first_fields = FRAG_FIELDS_LEN + hdr_len;
        let first = max_payload(self.mtu, first_fields)
            .filter(|&p| p > 0)
            .ok_or_else(|| too_small(first_fields))?;
        let rest = max_payload(self.mtu, FRAG_FIELDS_LEN)
            .filter(|&p| p > 0)
            .ok_or_else(|| too_small(FRAG_FIELDS_LEN))?;
        // The first piece carries more fields than a whole unfragmented LpPacket, which did not
        // fit, so it cannot hold the whole packet.
        debug_assert!(first < len);
        let count = 1 + (len - first).div_ceil(rest) as u64;
        if count > MAX_FRAGMENTS {
            return Err(FragmentError::TooManyFragments {
                needed: count,
                max: MAX_FRAGMENTS,
            });
        }
        Ok(Plan::Fragmented { count, first, rest })
    }

    /// Cuts `packet` (one encoded Interest or Data) and calls `emit` with each datagram in order.
    ///
    /// Returns the number of datagrams. Nothing is emitted and the Sequence is not advanced when
    /// it fails.
    pub fn fragment_with<F: FnMut(&[u8])>(
        &mut self,
        packet: &[u8],
        headers: &LpHeaders,
        emit: F,
    ) -> Result<u64, FragmentError> {
        self.headers.clear();
        headers.encode(&mut self.headers);
        self.fragment_prepared(packet, emit)
    }

    /// As [`Self::fragment_with`], with the link headers already encoded: `header_fields` are
    /// the LpPacket fields [`LpHeaders::encode`] writes (empty for none), such as
    /// [`crate::link::split_link`] finds in a packet [`crate::link::encode_link`] wrote. The
    /// datagrams are the same bytes [`Self::fragment_with`] sends for the decoded headers.
    pub fn fragment_encoded<F: FnMut(&[u8])>(
        &mut self,
        packet: &[u8],
        header_fields: &[u8],
        emit: F,
    ) -> Result<u64, FragmentError> {
        self.headers.clear();
        self.headers.extend_from_slice(header_fields);
        self.fragment_prepared(packet, emit)
    }

    /// Cuts `packet` with the header fields in `self.headers`.
    fn fragment_prepared<F: FnMut(&[u8])>(
        &mut self,
        packet: &[u8],
        mut emit: F,
    ) -> Result<u64, FragmentError> {
        match self.plan(packet.len(), self.headers.is_empty(), self.headers.len())? {
            Plan::Bare => {
                emit(packet);
                Ok(1)
            }
            Plan::Single => {
                write_frame(&mut self.frame, None, &self.headers, packet);
                debug_assert!(self.frame.len() <= self.mtu);
                emit(&self.frame);
                Ok(1)
            }
            Plan::Fragmented { count, first, rest } => {
                let base = self.next_sequence;
                let (mut piece, mut remaining) = packet.split_at(first);
                for index in 0..count {
                    let headers: &[u8] = if index == 0 { &self.headers } else { &[] };
                    let seq = base.wrapping_add(index);
                    write_frame(&mut self.frame, Some((seq, index, count)), headers, piece);
                    debug_assert!(self.frame.len() <= self.mtu);
                    emit(&self.frame);
                    (piece, remaining) = remaining.split_at(rest.min(remaining.len()));
                }
                debug_assert!(piece.is_empty() && remaining.is_empty());
                self.next_sequence = base.wrapping_add(count);
                Ok(count)
            }
        }
    }

    /// As [`Self::fragment_with`], appending each datagram to `out` as a new buffer.
    pub fn fragment(
        &mut self,
        packet: &[u8],
        headers: &LpHeaders,
        out: &mut Vec<Vec<u8>>,
    ) -> Result<u64, FragmentError> {
        self.fragment_with(packet, headers, |d| out.push(d.to_vec()))
    }
}

fn check_mtu(mtu: usize) -> Result<(), FragmentError> {
    if mtu < Fragmenter::MIN_MTU {
        return Err(FragmentError::MtuTooSmall {
            mtu,
            min: Fragmenter::MIN_MTU,
        });
    }
    Ok(())
}

/// Writes one LpPacket into `frame` (cleared first): the optional (Sequence, FragIndex,
/// FragCount), the encoded `headers`, and a Fragment holding `payload`.
fn write_frame(frame: &mut Vec<u8>, frag: Option<(u64, u64, u64)>, headers: &[u8], payload: &[u8]) {
    let frag_len = frag.map_or(0, |(_, i, n)| {
        SEQUENCE_TLV_LEN
            + tlv_len(tt::LP_FRAG_INDEX, nni_len(i))
            + tlv_len(tt::LP_FRAG_COUNT, nni_len(n))
    });
    let inner = frag_len + headers.len() + tlv_len(tt::LP_FRAGMENT, payload.len());
    frame.clear();
    write_header(frame, tt::LP_PACKET, inner);
    if let Some((seq, index, count)) = frag {
        write_tlv(frame, tt::LP_SEQUENCE, &seq.to_be_bytes());
        write_nni_tlv(frame, tt::LP_FRAG_INDEX, index);
        write_nni_tlv(frame, tt::LP_FRAG_COUNT, count);
    }
    frame.extend_from_slice(headers);
    write_tlv(frame, tt::LP_FRAGMENT, payload);
    debug_assert_eq!(frame.len(), tlv_len(tt::LP_PACKET, inner));
}

mod reassembler;

pub use reassembler::{
    Reassembled, Reassembler, ReassemblyBudget, ReassemblyCounters, ReassemblyError, PARTIAL_BYTES,
};

#[cfg(test)]
mod tests {
    use super::*;
    use wire::lp::NackReason;
    use wire::{Limits, LpPacket};

    fn all_headers() -> LpHeaders {
        LpHeaders {
            pit_token: PitToken::new(&[0xA5; 32]),
            nack: Some(Nack {
                reason: Some(NackReason::Other(70_000)),
            }),
            incoming_face_id: Some(u64::MAX),
            next_hop_face_id: Some(300),
            cache_policy: Some(1),
            congestion_mark: Some(1),
            nbcc: Some(NbccSignal::Beta),
        }
    }

    #[test]
    fn headers_encode_like_lp_packet() {
        for h in [
            LpHeaders::default(),
            all_headers(),
            LpHeaders {
                nack: Some(Nack { reason: None }),
                pit_token: PitToken::new(&[1]),
                ..LpHeaders::default()
            },
        ] {
            let mut mine = vec![];
            h.encode(&mut mine);
            assert_eq!(mine.len(), h.encoded_len());
            let lp = LpPacket {
                pit_token: h.pit_token.map(|t| t.as_bytes().to_vec()),
                nack: h.nack,
                incoming_face_id: h.incoming_face_id,
                next_hop_face_id: h.next_hop_face_id,
                cache_policy: h.cache_policy,
                congestion_mark: h.congestion_mark,
                nbcc: h.nbcc,
                ..LpPacket::default()
            };
            let w = lp.to_wire();
            // LpPacket header is 2 bytes here (value < 253).
            assert_eq!(&w[2..], &mine[..]);
            let v = LpPacketView::decode(&w, &Limits::default()).unwrap();
            assert_eq!(LpHeaders::from_view(&v), h);
        }
    }

    #[test]
    fn pit_token_bounds_and_debug() {
        assert!(PitToken::new(&[]).is_none());
        assert!(PitToken::new(&[0; 33]).is_none());
        let t = PitToken::new(&[0xAB, 0x01]).unwrap();
        assert_eq!(t.as_bytes(), &[0xAB, 0x01]);
        assert_eq!(format!("{t:?}"), "PitToken(ab01)");
    }

    #[test]
    fn max_payload_is_exact() {
        for mtu in 1..2000usize {
            for fields in [0usize, 16, 40, 100, 300] {
                match max_payload(mtu, fields) {
                    Some(p) => {
                        assert!(lp_len(fields, p) <= mtu);
                        assert!(lp_len(fields, p + 1) > mtu, "mtu {mtu} fields {fields}");
                    }
                    None => assert!(lp_len(fields, 0) > mtu),
                }
            }
        }
        for mtu in [65_530usize, 65_545, 70_000, 1 << 20] {
            let p = max_payload(mtu, 16).unwrap();
            assert!(lp_len(16, p) <= mtu && lp_len(16, p + 1) > mtu);
        }
    }

    #[test]
    fn min_mtu() {
        assert_eq!(Fragmenter::MIN_MTU, lp_len(FRAG_FIELDS_LEN, 1));
        assert!(Fragmenter::new(Fragmenter::MIN_MTU - 1, 0).is_err());
        let mut f = Fragmenter::new(Fragmenter::MIN_MTU, 0)
            .unwrap()
            .with_bare(false);
        let mut out = vec![];
        assert_eq!(
            f.fragment(&[7; 64], &LpHeaders::default(), &mut out),
            Ok(64)
        );
        assert!(out.iter().all(|d| d.len() == Fragmenter::MIN_MTU));
        assert_eq!(
            f.fragment(&[7; 65], &LpHeaders::default(), &mut out),
            Err(FragmentError::TooManyFragments {
                needed: 65,
                max: 64
            })
        );
        assert_eq!(f.next_sequence(), 64);
        // Headers that leave no room in the first piece.
        let e = f.fragment(&[7; 20], &all_headers(), &mut out).unwrap_err();
        assert!(
            matches!(e, FragmentError::MtuTooSmall { mtu: 21, .. }),
            "{e}"
        );
        assert!(f.set_mtu(20).is_err());
        assert_eq!(f.mtu(), 21);
    }

    #[test]
    fn pieces_fill_the_mtu() {
        let mut f = Fragmenter::new(1500, 0).unwrap();
        let mut out = vec![];
        f.fragment(&[1; 5000], &all_headers(), &mut out).unwrap();
        for d in &out[..out.len() - 1] {
            let v = LpPacketView::decode(d, &Limits::default()).unwrap();
            let fields = d.len() - lp_len(0, v.fragment().unwrap().len());
            assert!(d.len() <= 1500);
            assert!(lp_len(fields, v.fragment().unwrap().len() + 1) > 1500);
        }
    }
}
