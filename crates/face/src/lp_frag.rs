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
//! to make room), at most `max_packet_bytes` per packet, and a partial that receives no new piece
//! for `timeout_ms` is dropped (NFD restarts its reassembly timer on every piece too).
//!
//! Time is always passed in, in milliseconds on any monotonic clock.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use wire::lp::{Nack, MAX_PIT_TOKEN_LEN};
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

// ---------------------------------------------------------------------------------------------
// Reassembler
// ---------------------------------------------------------------------------------------------

/// A whole network packet out of the [`Reassembler`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassembled<'a> {
    /// The network packet's bytes: borrowed from the LpPacket when it was not fragmented.
    pub packet: Cow<'a, [u8]>,
    /// Link headers (of the FragIndex 0 piece).
    pub headers: LpHeaders,
}

impl Reassembled<'_> {
    /// A copy that owns its bytes.
    pub fn into_owned(self) -> Reassembled<'static> {
        Reassembled {
            packet: Cow::Owned(self.packet.into_owned()),
            headers: self.headers,
        }
    }
}

/// Why a received LpPacket was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReassemblyError {
    /// FragIndex >= FragCount (FragCount defaults to 1 when absent).
    FragIndexOutOfRange {
        /// FragIndex.
        index: u64,
        /// FragCount.
        count: u64,
    },
    /// FragCount above [`MAX_FRAGMENTS`].
    TooManyFragments {
        /// FragCount.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// A piece's FragCount differs from that of earlier pieces of the same packet. The piece is
    /// dropped; the partial packet is kept.
    InconsistentFragCount {
        /// FragCount of the first piece received.
        expected: u64,
        /// FragCount of this piece.
        got: u64,
    },
    /// A piece of a fragmented packet without Sequence.
    MissingSequence,
    /// A piece of a fragmented packet without Fragment.
    MissingFragment,
    /// The packet would exceed `max_packet_bytes`; what had arrived of it is dropped.
    Oversize {
        /// Bytes it would have had so far.
        bytes: usize,
        /// The limit.
        max: usize,
    },
}

impl ReassemblyError {
    /// Is this a malformed piece (everything but [`ReassemblyError::Oversize`])?
    #[inline]
    pub fn is_malformed(&self) -> bool {
        !matches!(self, ReassemblyError::Oversize { .. })
    }
}

impl fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReassemblyError::FragIndexOutOfRange { index, count } => {
                write!(f, "FragIndex {index} not below FragCount {count}")
            }
            ReassemblyError::TooManyFragments { count, max } => {
                write!(f, "FragCount {count} above the limit of {max}")
            }
            ReassemblyError::InconsistentFragCount { expected, got } => {
                write!(f, "FragCount {got} differs from earlier pieces' {expected}")
            }
            ReassemblyError::MissingSequence => f.write_str("fragment without Sequence"),
            ReassemblyError::MissingFragment => f.write_str("fragmented LpPacket without Fragment"),
            ReassemblyError::Oversize { bytes, max } => {
                write!(f, "reassembled packet of {bytes} bytes exceeds {max}")
            }
        }
    }
}

impl std::error::Error for ReassemblyError {}

/// What a [`Reassembler`] has done since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReassemblyCounters {
    /// Packets joined from two or more pieces.
    pub reassembled: u64,
    /// Partial packets dropped because no piece came for `timeout_ms`.
    pub timeouts: u64,
    /// Partial packets dropped to make room for a new one.
    pub dropped_full: u64,
    /// Packets dropped for exceeding `max_packet_bytes`.
    pub dropped_oversize: u64,
    /// Pieces received twice (ignored).
    pub duplicates: u64,
    /// Malformed pieces (see [`ReassemblyError::is_malformed`]).
    pub malformed: u64,
}

const NIL: u32 = u32::MAX;
const MAX_PIECES: usize = MAX_FRAGMENTS as usize;

/// One packet being reassembled. Pieces are appended to `buf` in arrival order; `pieces[i]` says
/// where piece `i` is.
struct Partial {
    remote: u64,
    base: u64,
    count: u64,
    /// Bit `i` set: piece `i` is in.
    received: u64,
    nreceived: u64,
    /// Every piece so far arrived in index order, so `buf` is already the packet's prefix.
    in_order: bool,
    headers: LpHeaders,
    last_ms: u64,
    pieces: [(u32, u32); MAX_PIECES],
    buf: Vec<u8>,
    /// Neighbours in the activity list (least recently active first).
    prev: u32,
    next: u32,
}

impl Partial {
    fn empty() -> Self {
        Partial {
            remote: 0,
            base: 0,
            count: 0,
            received: 0,
            nreceived: 0,
            in_order: true,
            headers: LpHeaders::default(),
            last_ms: 0,
            pieces: [(0, 0); MAX_PIECES],
            buf: Vec::new(),
            prev: NIL,
            next: NIL,
        }
    }
}

/// Joins NDNLPv2 fragments back into network packets, with bounded memory.
///
/// Memory held: at most `capacity` partial packets of at most `max_packet_bytes` each, plus a
/// fixed ~600 bytes of bookkeeping per partial. Every operation does work bounded by the size of
/// the piece (a completed packet is copied once when its pieces arrived out of order) plus the
/// number of partials that have timed out.
pub struct Reassembler {
    capacity: usize,
    timeout_ms: u64,
    max_packet_bytes: usize,
    slots: Vec<Partial>,
    free: Vec<u32>,
    index: HashMap<(u64, u64), u32>,
    /// Least recently active partial.
    head: u32,
    /// Most recently active partial.
    tail: u32,
    counters: ReassemblyCounters,
}

impl fmt::Debug for Reassembler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reassembler")
            .field("capacity", &self.capacity)
            .field("timeout_ms", &self.timeout_ms)
            .field("max_packet_bytes", &self.max_packet_bytes)
            .field("in_flight", &self.in_flight())
            .field("counters", &self.counters)
            .finish()
    }
}

impl Default for Reassembler {
    /// [`DEFAULT_REASSEMBLY_CAPACITY`] partials, NFD's 500 ms timeout, 8800-byte packets.
    fn default() -> Self {
        Reassembler::new(
            DEFAULT_REASSEMBLY_CAPACITY,
            DEFAULT_REASSEMBLY_TIMEOUT_MS,
            wire::MAX_NDN_PACKET_BYTES,
        )
    }
}

impl Reassembler {
    /// At most `capacity` (at least 1) partial packets in flight, each dropped after `timeout_ms`
    /// without a new piece, each at most `max_packet_bytes` once joined.
    pub fn new(capacity: usize, timeout_ms: u64, max_packet_bytes: usize) -> Self {
        let capacity = capacity.clamp(1, (NIL - 1) as usize);
        Reassembler {
            capacity,
            timeout_ms,
            max_packet_bytes: max_packet_bytes.min(u32::MAX as usize),
            slots: Vec::new(),
            free: Vec::new(),
            index: HashMap::with_capacity(capacity.min(4096)),
            head: NIL,
            tail: NIL,
            counters: ReassemblyCounters::default(),
        }
    }

    /// Most partial packets held at once.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Reassembly timeout in milliseconds.
    #[inline]
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms
    }

    /// Largest reassembled packet.
    #[inline]
    pub fn max_packet_bytes(&self) -> usize {
        self.max_packet_bytes
    }

    /// Partial packets held now.
    #[inline]
    pub fn in_flight(&self) -> usize {
        self.index.len()
    }

    /// The counters.
    #[inline]
    pub fn counters(&self) -> ReassemblyCounters {
        self.counters
    }

    /// Takes one LpPacket from the sender `remote` (any stable key for it, such as a hash of its
    /// socket address) at time `now_ms`.
    ///
    /// `Ok(Some)`: a whole network packet (at once for an unfragmented LpPacket, borrowing its
    /// bytes). `Ok(None)`: a piece was stored, or was a duplicate, or the LpPacket carried no
    /// fragment at all (an IDLE packet). `Err`: the piece was dropped, and counted. Partials that
    /// have timed out by `now_ms` are dropped first.
    pub fn receive<'a>(
        &mut self,
        remote: u64,
        lp: &LpPacketView<'a>,
        now_ms: u64,
    ) -> Result<Option<Reassembled<'a>>, ReassemblyError> {
        self.expire(now_ms);
        let index = lp.frag_index.unwrap_or(0);
        let count = lp.frag_count.unwrap_or(1);
        if index >= count {
            return self.malformed(ReassemblyError::FragIndexOutOfRange { index, count });
        }
        let Some(frag) = lp.fragment() else {
            if count > 1 {
                return self.malformed(ReassemblyError::MissingFragment);
            }
            return Ok(None);
        };
        let max = self.max_packet_bytes;
        if count == 1 {
            if frag.len() > max {
                self.counters.dropped_oversize += 1;
                let bytes = frag.len();
                return Err(ReassemblyError::Oversize { bytes, max });
            }
            return Ok(Some(Reassembled {
                packet: Cow::Borrowed(frag),
                headers: LpHeaders::from_view(lp),
            }));
        }
        if count > MAX_FRAGMENTS {
            let max = MAX_FRAGMENTS;
            return self.malformed(ReassemblyError::TooManyFragments { count, max });
        }
        let Some(sequence) = lp.sequence else {
            return self.malformed(ReassemblyError::MissingSequence);
        };
        let key = (remote, sequence.wrapping_sub(index));
        let existing = self.index.get(&key).copied();
        if frag.len() > max {
            if let Some(slot) = existing {
                self.remove(slot);
            }
            self.counters.dropped_oversize += 1;
            let bytes = frag.len();
            return Err(ReassemblyError::Oversize { bytes, max });
        }
        let slot = match existing {
            Some(slot) => slot,
            None => self.allocate(key, count, frag.len(), now_ms),
        };
        let p = &mut self.slots[slot as usize];
        if p.count != count {
            let expected = p.count;
            return self.malformed(ReassemblyError::InconsistentFragCount {
                expected,
                got: count,
            });
        }
        let bit = 1u64 << index;
        if p.received & bit != 0 {
            self.counters.duplicates += 1;
            return Ok(None);
        }
        let bytes = p.buf.len() + frag.len();
        if bytes > max {
            self.remove(slot);
            self.counters.dropped_oversize += 1;
            return Err(ReassemblyError::Oversize { bytes, max });
        }
        p.pieces[index as usize] = (p.buf.len() as u32, frag.len() as u32);
        p.buf.extend_from_slice(frag);
        p.in_order &= index == p.nreceived;
        p.received |= bit;
        p.nreceived += 1;
        if index == 0 {
            p.headers = LpHeaders::from_view(lp);
        }
        p.last_ms = now_ms;
        if p.nreceived < count {
            self.unlink(slot);
            self.push_back(slot);
            return Ok(None);
        }
        let packet = if p.in_order {
            std::mem::take(&mut p.buf)
        } else {
            let mut out = Vec::with_capacity(p.buf.len());
            for &(off, len) in &p.pieces[..count as usize] {
                let (off, len) = (off as usize, len as usize);
                out.extend_from_slice(&p.buf[off..off + len]);
            }
            out
        };
        let headers = p.headers;
        self.remove(slot);
        self.counters.reassembled += 1;
        Ok(Some(Reassembled {
            packet: Cow::Owned(packet),
            headers,
        }))
    }

    /// Drops the partial packets that have had no new piece for `timeout_ms` or more by `now_ms`.
    /// Returns how many.
    pub fn expire(&mut self, now_ms: u64) -> usize {
        let mut n = 0;
        while self.head != NIL {
            let p = &self.slots[self.head as usize];
            if now_ms.saturating_sub(p.last_ms) < self.timeout_ms {
                break;
            }
            self.remove(self.head);
            n += 1;
        }
        self.counters.timeouts += n as u64;
        n
    }

    /// Drops every partial packet (counted nowhere), e.g. when the face closes.
    pub fn clear(&mut self) {
        while self.head != NIL {
            self.remove(self.head);
        }
    }

    fn malformed<T>(&mut self, e: ReassemblyError) -> Result<T, ReassemblyError> {
        self.counters.malformed += 1;
        Err(e)
    }

    /// A fresh partial for `key`, making room first if needed.
    fn allocate(&mut self, key: (u64, u64), count: u64, piece_len: usize, now_ms: u64) -> u32 {
        if self.index.len() >= self.capacity {
            self.remove(self.head);
            self.counters.dropped_full += 1;
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Partial::empty());
                (self.slots.len() - 1) as u32
            }
        };
        let p = &mut self.slots[slot as usize];
        (p.remote, p.base) = key;
        p.count = count;
        p.received = 0;
        p.nreceived = 0;
        p.in_order = true;
        p.headers = LpHeaders::default();
        p.last_ms = now_ms;
        p.buf.clear();
        // Pieces are about the same size: one reservation usually covers the packet.
        let estimate = (count as usize).saturating_mul(piece_len);
        p.buf.reserve(estimate.min(self.max_packet_bytes));
        self.index.insert(key, slot);
        self.push_back(slot);
        slot
    }

    fn remove(&mut self, slot: u32) {
        self.unlink(slot);
        let p = &mut self.slots[slot as usize];
        p.buf.clear();
        let key = (p.remote, p.base);
        self.index.remove(&key);
        self.free.push(slot);
    }

    fn unlink(&mut self, slot: u32) {
        let (prev, next) = {
            let p = &self.slots[slot as usize];
            (p.prev, p.next)
        };
        match prev {
            NIL => self.head = next,
            x => self.slots[x as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            x => self.slots[x as usize].prev = prev,
        }
        let p = &mut self.slots[slot as usize];
        p.prev = NIL;
        p.next = NIL;
    }

    fn push_back(&mut self, slot: u32) {
        let tail = self.tail;
        {
            let p = &mut self.slots[slot as usize];
            p.prev = tail;
            p.next = NIL;
        }
        match tail {
            NIL => self.head = slot,
            t => self.slots[t as usize].next = slot,
        }
        self.tail = slot;
    }
}

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

    #[test]
    fn activity_order_decides_eviction_and_expiry() {
        let mut f = Fragmenter::new(100, 0).unwrap().with_bare(false);
        let mut r = Reassembler::new(2, 50, 8800);
        let mut a = vec![];
        let mut b = vec![];
        let mut c = vec![];
        let h = LpHeaders::default();
        f.fragment(&[1; 300], &h, &mut a).unwrap();
        f.fragment(&[2; 300], &h, &mut b).unwrap();
        f.fragment(&[3; 300], &h, &mut c).unwrap();
        fn dec(d: &[u8]) -> LpPacketView<'_> {
            LpPacketView::decode(d, &Limits::default()).unwrap()
        }
        assert!(r.receive(1, &dec(&a[0]), 0).unwrap().is_none());
        assert!(r.receive(1, &dec(&b[0]), 1).unwrap().is_none());
        // Touch `a`: `b` becomes the least recently active and is evicted for `c`.
        assert!(r.receive(1, &dec(&a[1]), 2).unwrap().is_none());
        assert!(r.receive(1, &dec(&c[0]), 3).unwrap().is_none());
        assert_eq!(r.counters().dropped_full, 1);
        assert_eq!(r.in_flight(), 2);
        for d in &a[2..] {
            r.receive(1, &dec(d), 4).unwrap();
        }
        assert_eq!(r.counters().reassembled, 1);
        // `c` was last touched at 3: still alive at 52, gone at 53.
        assert_eq!(r.expire(52), 0);
        assert_eq!(r.expire(53), 1);
        assert_eq!(r.in_flight(), 0);
        assert_eq!(r.counters().timeouts, 1);
        // Slots are reused.
        assert!(r.receive(1, &dec(&b[1]), 60).unwrap().is_none());
        assert_eq!(r.slots.len(), 2);
        r.clear();
        assert_eq!(r.in_flight(), 0);
        assert_eq!((r.head, r.tail), (NIL, NIL));
    }
}
