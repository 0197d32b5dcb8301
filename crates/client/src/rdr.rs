//! Realtime Data Retrieval (RDR): version discovery through a metadata packet, as ndn-cxx's
//! `MetadataObject` defines it and ndnputchunks / ndncatchunks use it.
//!
//! A consumer expresses `<prefix>/32=metadata` with CanBePrefix and MustBeFresh. The producer
//! answers with a Data named `<prefix>/32=metadata/v=<version>/seg=0`, ContentType BLOB, a short
//! FreshnessPeriod ([`METADATA_FRESHNESS_MS`], ndn-cxx's default) so that caches do not keep
//! answering with an old version, and as content the versioned name of the object
//! (`<prefix>/v=<version>`) encoded as a Name TLV.

use wire::{data::content_type, tt, Component, Data, Interest, MetaInfo, NackReason, Name};

use crate::error::{Error, Result};
use crate::face::{Face, Outcome};

/// The FreshnessPeriod of a metadata Data, in milliseconds (ndn-cxx's `MetadataObject`
/// default).
pub const METADATA_FRESHNESS_MS: u64 = 10;

/// The keyword component `32=metadata`.
pub fn metadata_component() -> Component {
    Component {
        typ: tt::KEYWORD as u16,
        value: b"metadata".to_vec(),
    }
}

/// `<prefix>/32=metadata`.
pub fn metadata_name(prefix: &Name) -> Name {
    prefix.clone().with(metadata_component())
}

/// Is `interest` a metadata discovery Interest for `prefix` (named `<prefix>/32=metadata`)?
pub fn is_metadata_interest(interest: &Interest, prefix: &Name) -> bool {
    interest.name.len() == prefix.len() + 1
        && prefix.is_prefix_of(&interest.name)
        && interest.name.components.last() == Some(&metadata_component())
}

/// The encoded metadata Data for `prefix` pointing at `versioned` (signed DigestSha256); its
/// own version is `metadata_version`.
pub fn metadata_data(prefix: &Name, versioned: &Name, metadata_version: u64) -> Vec<u8> {
    let name = metadata_name(prefix)
        .with(Component::version(metadata_version))
        .with(Component::segment(0));
    let mut d = Data::new(name, versioned.to_wire());
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::BLOB),
        freshness_ms: Some(METADATA_FRESHNESS_MS),
        final_block_id: None,
    });
    d.sign_digest_sha256();
    d.to_wire()
}

/// The versioned name a metadata Data's `content` carries, if it is a Name under `prefix`
/// ending with a version component.
pub fn parse_metadata(prefix: &Name, content: &[u8]) -> Option<Name> {
    let n = Name::decode(content).ok()?;
    let versioned = n
        .components
        .last()
        .is_some_and(|c| u32::from(c.typ) == tt::VERSION);
    (versioned && n.len() > prefix.len() && prefix.is_prefix_of(&n)).then_some(n)
}

/// Asks for the metadata of `prefix` (once more after a Duplicate or Congestion Nack). Returns
/// the versioned name, or `None` when no usable answer came (timeout, a Nack, an answer that is
/// not metadata): the caller then falls back to another discovery, which a content store may
/// still answer when the producer is gone.
///
/// An application-level Nack (a Data of ContentType NACK) is the producer's own answer that
/// there is nothing to discover: an error ([`Error::Protocol`]), as ndncatchunks' discovery
/// fails on a metadata packet whose ContentType is not BLOB (ndn-cxx's `MetadataObject`).
pub fn discover(face: &mut Face, prefix: &Name, lifetime_ms: u64) -> Result<Option<Name>> {
    let mut i = Interest::new(metadata_name(prefix), [0; 4]);
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.lifetime_ms = Some(lifetime_ms);
    for _ in 0..2 {
        i.nonce = Some(crate::random_nonce());
        match face.express(&i)? {
            Outcome::Data(d) if d.is_application_nack() => {
                return Err(Error::Protocol(format!(
                    "invalid metadata packet {}: ContentType NACK (an application Nack)",
                    d.name
                )))
            }
            Outcome::Data(d) => return Ok(parse_metadata(prefix, d.content())),
            Outcome::Nack(n)
                if matches!(
                    n.reason,
                    Some(NackReason::Duplicate) | Some(NackReason::Congestion)
                ) => {}
            Outcome::Nack(_) | Outcome::Timeout => return Ok(None),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{DataView, Limits};

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    #[test]
    fn metadata_packet_shape() {
        let w = metadata_data(&name("/p"), &name("/p/v=7"), 9);
        let d = DataView::decode(&w, &Limits::default()).unwrap();
        assert_eq!(d.name().to_string(), "/p/32=metadata/v=9/seg=0");
        assert_eq!(d.freshness_ms(), Some(METADATA_FRESHNESS_MS));
        assert!(d.verify_digest_sha256());
        let versioned = parse_metadata(&name("/p"), d.content().unwrap()).unwrap();
        assert_eq!(versioned, name("/p/v=7"));
        // Content that is not a versioned name under the prefix is refused.
        assert_eq!(parse_metadata(&name("/q"), d.content().unwrap()), None);
        assert_eq!(parse_metadata(&name("/p"), &name("/p/x").to_wire()), None);
        assert_eq!(parse_metadata(&name("/p"), b"junk"), None);
    }

    #[test]
    fn which_interests_are_metadata() {
        let ask = |uri: &str| is_metadata_interest(&Interest::new(name(uri), [0; 4]), &name("/p"));
        assert!(ask("/p/32=metadata"));
        assert!(!ask("/p/metadata"));
        assert!(!ask("/q/32=metadata"));
        assert!(!ask("/p/32=metadata/v=1"));
        assert!(!ask("/p"));
    }
}
