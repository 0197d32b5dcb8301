//! The packets the simulated faces send, and what a face makes of a packet it receives.

use face::link::encode_link;
use face::lp_frag::{LpHeaders, PitToken};
use wire::data::signature_type;
use wire::lp::{Nack, NackReason};
use wire::nfd::ControlParameters;
use wire::tlv::write_tlv;
use wire::{tt, Component, Data, DataView, Interest, InterestView, Limits, MetaInfo, Name};

use super::rng::Rng;

/// Producer prefixes `/p0` .. (every content name is under one).
pub const PREFIXES: usize = 3;

/// Contents per prefix, and segments per content: a small space, so that Interests meet in
/// the PIT and the CS.
const OBJECTS: u64 = 6;
const SEGMENTS: u64 = 4;

/// FreshnessPeriod of the producers' Data.
pub const FRESHNESS_MS: u64 = 2_000;

/// Producer prefix `k`.
pub fn prefix(k: usize) -> Name {
    Name::new().with_str(&format!("p{k}"))
}

/// A content name: a segment of an object under a producer prefix (or, one time in eight,
/// a content under a prefix nobody serves); `object_only`: the object's name, for a
/// CanBePrefix Interest.
pub fn content_name(rng: &mut Rng, object_only: bool) -> Name {
    let base = if rng.chance(12) {
        Name::new().with_str("nowhere")
    } else {
        prefix(rng.index(PREFIXES))
    };
    let obj = base.with_str(&format!("o{}", rng.below(OBJECTS)));
    if object_only {
        obj
    } else {
        obj.with(Component::segment(rng.below(SEGMENTS)))
    }
}

/// Every content name a producer may be asked for (every segment of every object under every
/// producer prefix).
pub fn all_chunk_names() -> Vec<Name> {
    let mut out = Vec::new();
    for k in 0..PREFIXES {
        for o in 0..OBJECTS {
            for s in 0..SEGMENTS {
                out.push(
                    prefix(k)
                        .with_str(&format!("o{o}"))
                        .with(Component::segment(s)),
                );
            }
        }
    }
    out
}

/// The one Data a producer ever makes for `name`: the content is derived from the name, the
/// signature is DigestSha256. The checker compares what a consumer gets with it.
pub fn canonical_data(name: &Name) -> Vec<u8> {
    let wire = name.to_wire();
    let h = super::fnv(super::FNV_OFFSET, &wire);
    let mut content = Vec::with_capacity(32);
    for i in 0..4u64 {
        content.extend_from_slice(&(h ^ i).to_le_bytes());
    }
    let mut d = Data::new(name.clone(), content);
    d.meta_info = Some(MetaInfo {
        freshness_ms: Some(FRESHNESS_MS),
        ..MetaInfo::default()
    });
    d.sign_digest_sha256();
    let mut out = Vec::new();
    d.encode(&mut out);
    out
}

/// A link-layer packet: `packet` with these headers (bare if there are none).
pub fn link(headers: &LpHeaders, packet: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(packet.len() + 32);
    encode_link(&mut out, headers, packet, usize::MAX);
    out
}

/// `packet` with PIT token `token`, if any.
pub fn with_token(token: Option<&[u8]>, packet: &[u8]) -> Vec<u8> {
    let headers = LpHeaders {
        pit_token: token.and_then(PitToken::new),
        ..LpHeaders::default()
    };
    link(&headers, packet)
}

/// A Nack of `interest` (network-layer bytes).
pub fn nack(interest: &[u8]) -> Vec<u8> {
    let headers = LpHeaders {
        nack: Some(Nack {
            reason: Some(NackReason::NoRoute),
        }),
        ..LpHeaders::default()
    };
    link(&headers, interest)
}

/// A management command Interest (`/localhost/nfd/<module>/<verb>/<params>`), signed in the
/// older form that management accepts (timestamp, nonce, SignatureInfo, SignatureValue).
pub fn command(rng: &mut Rng, module: &str, verb: &str, params: &ControlParameters) -> Interest {
    let mut cp = Vec::new();
    params.encode(&mut cp);
    let mut sig_info = Vec::new();
    wire::SignatureInfo {
        signature_type: signature_type::DIGEST_SHA256,
        ..wire::SignatureInfo::default()
    }
    .encode(&mut sig_info, tt::SIGNATURE_INFO);
    let mut sig_value = Vec::new();
    write_tlv(&mut sig_value, tt::SIGNATURE_VALUE, &[0u8; 32]);
    let name = Name::new()
        .with_str("localhost")
        .with_str("nfd")
        .with_str(module)
        .with_str(verb)
        .with(Component::generic(cp))
        .with(Component::number(
            tt::GENERIC_COMPONENT as u16,
            rng.next_u64(),
        ))
        .with(Component::generic(rng.nonce().to_vec()))
        .with(Component::generic(sig_info))
        .with(Component::generic(sig_value));
    Interest::new(name, rng.nonce())
}

/// What a face received, decoded.
#[derive(Debug)]
pub enum Received<'a> {
    /// An Interest (its network-layer bytes) and the PIT token on it.
    Interest {
        /// The Interest.
        interest: InterestView<'a>,
        /// Its PIT token.
        token: Option<&'a [u8]>,
    },
    /// A Data and the PIT token on it.
    Data {
        /// The Data.
        data: DataView<'a>,
        /// Its PIT token.
        token: Option<&'a [u8]>,
    },
    /// A Nack of an Interest.
    Nack(InterestView<'a>),
    /// An IDLE packet (no network packet).
    Idle,
}

/// Decodes a link-layer packet the router sent; an error names what was wrong (the router
/// must send only packets that decode).
pub fn decode<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Received<'a>, String> {
    let (packet, token, is_nack) = if bytes.first() == Some(&(tt::LP_PACKET as u8)) {
        let lp = wire::LpPacketView::decode(bytes, limits).map_err(|e| format!("LpPacket: {e}"))?;
        if lp.frag_count.is_some_and(|c| c > 1) {
            return Err("a fragment (the simulated faces do not fragment)".into());
        }
        match lp.fragment() {
            Some(f) => (f, lp.pit_token, lp.nack.is_some()),
            None => return Ok(Received::Idle),
        }
    } else {
        (bytes, None, false)
    };
    match packet.first().map(|&b| u32::from(b)) {
        Some(tt::INTEREST) => {
            let interest =
                InterestView::decode(packet, limits).map_err(|e| format!("Interest: {e}"))?;
            Ok(if is_nack {
                Received::Nack(interest)
            } else {
                Received::Interest { interest, token }
            })
        }
        Some(tt::DATA) if !is_nack => {
            let data = DataView::decode(packet, limits).map_err(|e| format!("Data: {e}"))?;
            Ok(Received::Data { data, token })
        }
        _ => Err(format!("not an Interest, Data or Nack: {bytes:02x?}")),
    }
}
