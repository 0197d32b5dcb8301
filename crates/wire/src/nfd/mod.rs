//! The NFD management protocol's TLV records (ndn-cxx's `ndn::nfd` namespace): ControlParameters,
//! ControlResponse, the status dataset entries (ForwarderStatus, FaceStatus, ChannelStatus,
//! FibEntry, RibEntry, CsInfo, StrategyChoice), the `faces/query` filter (FaceQueryFilter) and the
//! `faces/events` notification (FaceEventNotification).
//!
//! All structures are owned. Each has `encode`, which appends its TLV in exactly the order NFD and
//! ndn-cxx use, and `decode`, which takes a buffer holding exactly one complete outer TLV (except
//! [`ForwarderStatus`], which is not wrapped: its `decode` takes the dataset content itself).
//! `from_element` decodes an already delimited element, and [`decode_dataset`] splits a status
//! dataset into its back-to-back entries.
//!
//! Decoding applies the evolvability rules inside every container: elements must appear in the
//! listed order; an unrecognized or out-of-order element of critical type is an error, a
//! non-critical one is skipped. Many management TLV-TYPEs are even and at least 32, hence
//! non-critical. Fields that are not `Option`s are required (as in ndn-cxx); their absence is
//! [`ErrorKind::Missing`](crate::ErrorKind::Missing) at the offset of the enclosing element. Error offsets are absolute
//! within the buffer given to `decode`.
//!
//! Uri and LocalUri must be UTF-8 ([`BadUri`](crate::ErrorKind::BadUri) otherwise); free text (StatusText,
//! NfdVersion) is decoded lossily. Names are decoded under
//! [`Limits::default`](crate::Limits::default).
//!
//! Each record is stated once, as a table of its fields (TLV-TYPE, value kind, required,
//! optional or repeated), from which `codec` generates the struct and both directions of its
//! codec; only ControlResponse, whose fields are positional and whose body is free-form, has a
//! decoder of its own.

mod codec;
mod records;
#[cfg(test)]
mod tests;

pub use records::{
    ChannelStatus, ControlParameters, ControlResponse, ControlResponseBody, CsInfo, FaceEventKind,
    FaceEventNotification, FacePersistency, FaceQueryFilter, FaceScope, FaceStatus, FibEntry,
    ForwarderStatus, LinkType, NextHopRecord, RibEntry, Route, StrategyChoice,
};

use crate::error::Result;
use crate::tlv::{Element, Reader};

/// TLV-TYPEs used here that [`tt`](crate::tt) does not name (the same numbers mean different
/// fields in different containers).
mod t {
    // Dataset entries and their repeated children.
    pub const ENTRY: u32 = 0x80;
    pub const NEXT_HOP_RECORD: u32 = 0x81;
    pub const ROUTE: u32 = 0x81;
    // FaceStatus, ChannelStatus, FaceQueryFilter, FaceEventNotification
    pub const CHANNEL_STATUS: u32 = 0x82;
    pub const URI_SCHEME: u32 = 0x83;
    pub const FACE_QUERY_FILTER: u32 = 0x96;
    pub const FACE_EVENT_NOTIFICATION: u32 = 0xC0;
    pub const FACE_EVENT_KIND: u32 = 0xC1;
    pub const FACE_SCOPE: u32 = 0x84;
    pub const LINK_TYPE: u32 = 0x86;
    pub const N_IN_INTERESTS: u32 = 0x90;
    pub const N_IN_DATA: u32 = 0x91;
    pub const N_OUT_INTERESTS: u32 = 0x92;
    pub const N_OUT_DATA: u32 = 0x93;
    pub const N_IN_BYTES: u32 = 0x94;
    pub const N_OUT_BYTES: u32 = 0x95;
    pub const N_IN_NACKS: u32 = 0x97;
    pub const N_OUT_NACKS: u32 = 0x98;
    // ForwarderStatus
    pub const NFD_VERSION: u32 = 0x80;
    pub const START_TIMESTAMP: u32 = 0x81;
    pub const CURRENT_TIMESTAMP: u32 = 0x82;
    pub const N_NAME_TREE_ENTRIES: u32 = 0x83;
    pub const N_FIB_ENTRIES: u32 = 0x84;
    pub const N_PIT_ENTRIES: u32 = 0x85;
    pub const N_MEASUREMENTS_ENTRIES: u32 = 0x86;
    pub const N_CS_ENTRIES: u32 = 0x87;
    pub const N_SATISFIED_INTERESTS: u32 = 0x99;
    pub const N_UNSATISFIED_INTERESTS: u32 = 0x9A;
    // CsInfo
    pub const N_HITS: u32 = 0x81;
    pub const N_MISSES: u32 = 0x82;
}

/// Face flag bit: NDNLPv2 local fields (IncomingFaceId, NextHopFaceId, ...) are enabled.
pub const FACE_FLAG_LOCAL_FIELDS_ENABLED: u64 = 1;
/// Face flag bit: NDNLPv2 reliability is enabled.
pub const FACE_FLAG_LP_RELIABILITY_ENABLED: u64 = 2;
/// Face flag bit: congestion marking is enabled.
pub const FACE_FLAG_CONGESTION_MARKING_ENABLED: u64 = 4;
/// Route flag bit: the route also applies to longer names (CHILD_INHERIT).
pub const ROUTE_FLAG_CHILD_INHERIT: u64 = 1;
/// Route flag bit: routes of shorter prefixes are not inherited below this one (CAPTURE).
pub const ROUTE_FLAG_CAPTURE: u64 = 2;
/// CsInfo flag bit: the content store admits Data.
pub const CS_FLAG_ENABLE_ADMIT: u64 = 1;
/// CsInfo flag bit: the content store answers Interests.
pub const CS_FLAG_ENABLE_SERVE: u64 = 2;

/// Decodes a status dataset: entries back to back, each an element handed to `f`.
///
/// Typical use: `decode_dataset(content, FaceStatus::from_element)`. An empty content is an
/// empty dataset. Error offsets are relative to the start of `content`.
pub fn decode_dataset<'a, T>(
    content: &'a [u8],
    mut f: impl FnMut(Element<'a>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut r = Reader::new(content);
    let mut out = Vec::new();
    while let Some(e) = r.next_element() {
        out.push(f(e?)?);
    }
    Ok(out)
}
