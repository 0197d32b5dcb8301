//! # wire — the NDN wire format
//!
//! This crate owns the bytes: TLV encoding, names, Interest and Data (NDN packet format v0.3),
//! NDNLPv2 link packets (fragments, Nacks, PIT tokens, congestion marks, ...) and the TLVs of NFD's
//! management protocol. It depends on no other workspace crate and does no I/O.
//!
//! Two layers, in the manner of smoltcp's `wire` module:
//! - **Views** ([`NameView`], [`InterestView`], [`DataView`], [`LpPacketView`], [`PacketView`])
//!   validate a buffer once and then read fields straight out of it. Making a view never
//!   allocates and never panics, whatever the input; errors say what is wrong and at which byte.
//!   This is what the forwarding path uses, and the forwarder sends the original bytes onwards.
//! - **Owned types** ([`Name`], [`Interest`], [`Data`], [`LpPacket`], the [`nfd`] structures)
//!   build packets and are produced from views with `to_owned`-style methods.
//!
//! Evolvability follows the packet format: an unrecognized or out-of-order element of critical
//! type (0..=31, or odd) makes the packet invalid; a non-critical one is skipped. NDNLPv2 header
//! fields follow their own rule (see [`lp`]).
//!
//! What this crate must not do: open sockets or files, keep global state, or know about tables.

/// The accessors every decoded packet view has: its TLV as received, and where it starts in the
/// decoded buffer.
macro_rules! view_position {
    ($what:literal) => {
        #[doc = concat!("The whole ", $what, " TLV, as received.")]
        #[inline]
        pub fn wire(&self) -> &'a [u8] {
            self.wire
        }

        #[doc = concat!("Absolute offset of the ", $what, " in the decoded buffer.")]
        #[inline]
        pub fn offset(&self) -> usize {
            self.offset
        }
    };
}

/// An owned packet's whole-buffer codec: `to_wire` through its `encode`, `decode` through its
/// view (`$view::decode`, then `$to_owned`) with the default limits.
macro_rules! owned_codec {
    ($what:literal, $view:ident, $to_owned:ident) => {
        #[doc = concat!("The encoded ", $what, " as a new buffer.")]
        pub fn to_wire(&self) -> Vec<u8> {
            let mut out = Vec::new();
            self.encode(&mut out);
            out
        }

        #[doc = concat!("Decodes a ", $what, " that fills `buf`.")]
        pub fn decode(buf: &[u8]) -> Result<Self> {
            Ok($view::decode(buf, &Limits::default())?.$to_owned())
        }
    };
}

pub mod data;
pub mod error;
pub mod interest;
pub mod lp;
pub mod name;
pub mod nfd;
pub mod packet;
pub mod signed;
pub mod tlv;
pub mod tt;

pub use data::{Data, DataView, KeyLocator, MetaInfo, SignatureInfo};
pub use error::{Error, ErrorKind, Result};
pub use interest::{Interest, InterestView};
pub use lp::{LpPacket, LpPacketView, NackReason};

pub use name::{Component, ComponentView, Name, NameView};
pub use packet::{Packet, PacketView};

/// Limits applied while decoding; every decoder takes one so the attacker cannot pick the cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest packet accepted (whole outer TLV), in bytes. NDN stream faces use 8800.
    pub max_packet_bytes: usize,
    /// Most components a name may have.
    pub max_name_components: usize,
    /// Longest name TLV-VALUE accepted, in bytes.
    pub max_name_bytes: usize,
    /// Check an Interest's ParametersSha256DigestComponent against its parameters (one SHA-256
    /// over the parameters per Interest that carries them).
    pub verify_parameters_digest: bool,
}

/// Largest packet a view decodes whatever the limits say (4 GiB − 1): views record positions
/// inside a packet in 32 bits.
pub const MAX_VIEW_BYTES: usize = u32::MAX as usize;

/// `e` as a packet of type `typ` that a view can hold: of that type, and no larger than the
/// limits and [`MAX_VIEW_BYTES`] allow.
#[inline]
pub(crate) fn packet_element<'a>(
    e: tlv::Element<'a>,
    typ: u32,
    limits: &Limits,
) -> Result<tlv::Element<'a>> {
    let e = e.expect(typ)?;
    if e.wire.len() > limits.max_packet_bytes.min(MAX_VIEW_BYTES) {
        return Err(Error::new(ErrorKind::Oversize, e.offset));
    }
    Ok(e)
}

impl Limits {
    /// No limit at all: for reading again an element that was validated under real limits.
    pub(crate) const NONE: Limits = Limits {
        max_packet_bytes: usize::MAX,
        max_name_components: usize::MAX,
        max_name_bytes: usize::MAX,
        verify_parameters_digest: false,
    };
}

/// Largest packet on NDN stream faces (ndn-cxx and NFD drop larger ones).
pub const MAX_NDN_PACKET_BYTES: usize = 8800;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_packet_bytes: MAX_NDN_PACKET_BYTES,
            max_name_components: 128,
            max_name_bytes: MAX_NDN_PACKET_BYTES,
            verify_parameters_digest: true,
        }
    }
}

/// Fills `buf` from the operating system's random source, for Interest nonces, hash keys and
/// the like. Falls back to a clock-seeded xorshift if that fails, which it does not on Linux.
pub fn fill_random(buf: &mut [u8]) {
    use ring::rand::SecureRandom;
    if ring::rand::SystemRandom::new().fill(buf).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let mut x = t ^ u64::from(std::process::id()).rotate_left(32) ^ 0x9E37_79B9_7F4A_7C15;
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
    }
}

/// SHA-256 of `parts` concatenated.
pub fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for p in parts {
        ctx.update(p);
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(ctx.finish().as_ref());
    out
}
