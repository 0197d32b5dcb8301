//! The records, each stated once as a field table (see [`record!`]), and ControlResponse,
//! whose positional fields and free-form body need a decoder of their own.

use super::codec::{decode_outer, decode_text, next_required, nni_enum, record};
use super::t;
use crate::error::Result;
use crate::name::Name;
use crate::tlv::{write_nested, write_nni_tlv, write_tlv, Element};
use crate::tt;

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

nni_enum! {
    /// FaceScope: may the face carry local-only traffic (`/localhost`)?
    FaceScope {
        /// 0: the face leads off this host.
        #[default]
        NonLocal = 0,
        /// 1: the face connects a local application.
        Local = 1,
    }
}

nni_enum! {
    /// FacePersistency: when the face goes away.
    FacePersistency {
        /// 0: kept until it fails.
        #[default]
        Persistent = 0,
        /// 1: created on demand, closed when idle.
        OnDemand = 1,
        /// 2: kept even across failures.
        Permanent = 2,
    }
}

nni_enum! {
    /// LinkType of a face.
    LinkType {
        /// 0: one peer.
        #[default]
        PointToPoint = 0,
        /// 1: a multicast or broadcast medium.
        MultiAccess = 1,
        /// 2: an ad hoc wireless medium.
        AdHoc = 2,
    }
}

nni_enum! {
    /// FaceEventKind: what happened to a face (a `faces/events` notification).
    FaceEventKind {
        /// 1: the face was created.
        #[default]
        Created = 1,
        /// 2: the face was destroyed.
        Destroyed = 2,
        /// 3: the face came up.
        Up = 3,
        /// 4: the face went down.
        Down = 4,
    }
}

// ---------------------------------------------------------------------------------------------
// ControlParameters
// ---------------------------------------------------------------------------------------------

record! {
    /// ControlParameters (0x68): the arguments of a management command, and the body of its
    /// response. Every field is optional; which ones a command needs is up to the command.
    /// Encoded in the order of NFD's protocol page (which python-ndn requires), read in any
    /// order (as ndn-cxx reads them: it writes the congestion fields and Mtu last).
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct ControlParameters in tt::CONTROL_PARAMETERS, any_order true {
        /// Name (7): a prefix.
        name: Option<Name> = opt NameTlv(tt::NAME),
        /// FaceId (0x69).
        face_id: Option<u64> = opt Nni(tt::FACE_ID),
        /// Uri (0x72): a remote face URI.
        uri: Option<String> = opt Uri(tt::URI),
        /// LocalUri (0x81): a local face URI.
        local_uri: Option<String> = opt Uri(tt::LOCAL_URI),
        /// Origin (0x6f): the route origin.
        origin: Option<u64> = opt Nni(tt::ORIGIN),
        /// Cost (0x6a).
        cost: Option<u64> = opt Nni(tt::COST),
        /// Capacity (0x83): content store capacity, in packets.
        capacity: Option<u64> = opt Nni(tt::CAPACITY),
        /// Count (0x84).
        count: Option<u64> = opt Nni(tt::COUNT),
        /// BaseCongestionMarkingInterval (0x87), in nanoseconds.
        base_congestion_marking_interval: Option<u64> =
            opt Nni(tt::BASE_CONGESTION_MARKING_INTERVAL),
        /// DefaultCongestionThreshold (0x88), in bytes.
        default_congestion_threshold: Option<u64> = opt Nni(tt::DEFAULT_CONGESTION_THRESHOLD),
        /// Mtu (0x89), in bytes.
        mtu: Option<u64> = opt Nni(tt::MTU),
        /// Flags (0x6c).
        flags: Option<u64> = opt Nni(tt::FLAGS),
        /// Mask (0x70): which bits of `flags` the command sets.
        mask: Option<u64> = opt Nni(tt::MASK),
        /// Strategy (0x6b){Name}: the strategy's name.
        strategy: Option<Name> = opt Strategy(tt::STRATEGY),
        /// ExpirationPeriod (0x6d), in milliseconds.
        expiration_period: Option<u64> = opt Nni(tt::EXPIRATION_PERIOD),
        /// FacePersistency (0x85).
        face_persistency: Option<FacePersistency> = opt Nni(tt::FACE_PERSISTENCY),
    }
}

// ---------------------------------------------------------------------------------------------
// ControlResponse
// ---------------------------------------------------------------------------------------------

/// The body of a [`ControlResponse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlResponseBody {
    /// The usual body: the parameters as the command took effect (boxed: it is large).
    Parameters(Box<ControlParameters>),
    /// Anything else, kept as the raw TLV element(s) that followed StatusText. Encoded verbatim,
    /// so it must consist of whole TLV elements.
    Raw(Vec<u8>),
}

/// ControlResponse (0x65): the reply to a management command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlResponse {
    /// StatusCode (0x66), HTTP-like: 200 success, 400 bad parameters, 404 not found, ...
    pub status_code: u64,
    /// StatusText (0x67).
    pub status_text: String,
    /// The optional body after StatusText.
    pub body: Option<ControlResponseBody>,
}

impl ControlResponse {
    /// A response without body.
    pub fn new(status_code: u64, status_text: impl Into<String>) -> Self {
        ControlResponse {
            status_code,
            status_text: status_text.into(),
            body: None,
        }
    }

    /// A response whose body is `params`.
    pub fn with_parameters(
        status_code: u64,
        status_text: impl Into<String>,
        params: ControlParameters,
    ) -> Self {
        ControlResponse {
            body: Some(ControlResponseBody::Parameters(Box::new(params))),
            ..Self::new(status_code, status_text)
        }
    }

    /// The body, if it is ControlParameters.
    pub fn parameters(&self) -> Option<&ControlParameters> {
        match &self.body {
            Some(ControlResponseBody::Parameters(p)) => Some(p.as_ref()),
            _ => None,
        }
    }

    /// Appends the ControlResponse TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, tt::CONTROL_RESPONSE, |o| {
            write_nni_tlv(o, tt::STATUS_CODE, self.status_code);
            write_tlv(o, tt::STATUS_TEXT, self.status_text.as_bytes());
            match &self.body {
                Some(ControlResponseBody::Parameters(p)) => p.encode(o),
                Some(ControlResponseBody::Raw(raw)) => o.extend_from_slice(raw),
                None => {}
            }
        });
    }

    /// Decodes a ControlResponse TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, tt::CONTROL_RESPONSE, Self::from_element)
    }

    /// Decodes an already delimited ControlResponse element.
    ///
    /// StatusCode and StatusText must come first, in that order. What follows is the body: a
    /// single ControlParameters element is decoded as such, anything else is kept raw (but must
    /// still be well-formed TLV).
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(tt::CONTROL_RESPONSE)?;
        let mut r = e.reader();
        let status_code = next_required(&mut r, tt::STATUS_CODE, e.offset)?.nni()?;
        let status_text = decode_text(next_required(&mut r, tt::STATUS_TEXT, e.offset)?);
        let rest = r.remaining();
        let body = if rest.is_empty() {
            None
        } else {
            let mut body = r.clone();
            let first = body.read()?;
            while let Some(more) = body.next_element() {
                more?;
            }
            if first.typ == tt::CONTROL_PARAMETERS && first.wire.len() == rest.len() {
                Some(ControlResponseBody::Parameters(Box::new(
                    ControlParameters::from_element(first)?,
                )))
            } else {
                Some(ControlResponseBody::Raw(rest.to_vec()))
            }
        };
        Ok(ControlResponse {
            status_code,
            status_text,
            body,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Status dataset entries
// ---------------------------------------------------------------------------------------------

record! {
    /// ForwarderStatus (the GeneralStatus dataset): forwarder-wide counters. Not wrapped in an
    /// outer TLV: its elements are the dataset content. Every field is required.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct ForwarderStatus {
        /// NfdVersion (0x80).
        nfd_version: String = req Text(t::NFD_VERSION),
        /// StartTimestamp (0x81), milliseconds since the Unix epoch.
        start_timestamp: u64 = req Nni(t::START_TIMESTAMP),
        /// CurrentTimestamp (0x82), milliseconds since the Unix epoch.
        current_timestamp: u64 = req Nni(t::CURRENT_TIMESTAMP),
        /// NNameTreeEntries (0x83).
        n_name_tree_entries: u64 = req Nni(t::N_NAME_TREE_ENTRIES),
        /// NFibEntries (0x84).
        n_fib_entries: u64 = req Nni(t::N_FIB_ENTRIES),
        /// NPitEntries (0x85).
        n_pit_entries: u64 = req Nni(t::N_PIT_ENTRIES),
        /// NMeasurementsEntries (0x86).
        n_measurements_entries: u64 = req Nni(t::N_MEASUREMENTS_ENTRIES),
        /// NCsEntries (0x87).
        n_cs_entries: u64 = req Nni(t::N_CS_ENTRIES),
        /// NInInterests (0x90).
        n_in_interests: u64 = req Nni(t::N_IN_INTERESTS),
        /// NInData (0x91).
        n_in_data: u64 = req Nni(t::N_IN_DATA),
        /// NInNacks (0x97).
        n_in_nacks: u64 = req Nni(t::N_IN_NACKS),
        /// NOutInterests (0x92).
        n_out_interests: u64 = req Nni(t::N_OUT_INTERESTS),
        /// NOutData (0x93).
        n_out_data: u64 = req Nni(t::N_OUT_DATA),
        /// NOutNacks (0x98).
        n_out_nacks: u64 = req Nni(t::N_OUT_NACKS),
        /// NSatisfiedInterests (0x99).
        n_satisfied_interests: u64 = req Nni(t::N_SATISFIED_INTERESTS),
        /// NUnsatisfiedInterests (0x9a).
        n_unsatisfied_interests: u64 = req Nni(t::N_UNSATISFIED_INTERESTS),
    }
}

record! {
    /// CsInfo (0x80): the cs/info dataset.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
    pub struct CsInfo in t::ENTRY {
        /// Capacity (0x83), in packets.
        capacity: u64 = req Nni(tt::CAPACITY),
        /// Flags (0x6c): `CS_FLAG_*` bits.
        flags: u64 = req Nni(tt::FLAGS),
        /// NCsEntries (0x87).
        n_cs_entries: u64 = req Nni(t::N_CS_ENTRIES),
        /// NHits (0x81).
        n_hits: u64 = req Nni(t::N_HITS),
        /// NMisses (0x82).
        n_misses: u64 = req Nni(t::N_MISSES),
    }
}

record! {
    /// FaceStatus (0x80): one entry of the faces/list dataset.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct FaceStatus in t::ENTRY {
        /// FaceId (0x69).
        face_id: u64 = req Nni(tt::FACE_ID),
        /// Uri (0x72): the remote URI.
        uri: String = req Uri(tt::URI),
        /// LocalUri (0x81).
        local_uri: String = req Uri(tt::LOCAL_URI),
        /// ExpirationPeriod (0x6d), in milliseconds, for faces that expire.
        expiration_period: Option<u64> = opt Nni(tt::EXPIRATION_PERIOD),
        /// FaceScope (0x84).
        face_scope: FaceScope = req Nni(t::FACE_SCOPE),
        /// FacePersistency (0x85).
        face_persistency: FacePersistency = req Nni(tt::FACE_PERSISTENCY),
        /// LinkType (0x86).
        link_type: LinkType = req Nni(t::LINK_TYPE),
        /// BaseCongestionMarkingInterval (0x87), in nanoseconds.
        base_congestion_marking_interval: Option<u64> =
            opt Nni(tt::BASE_CONGESTION_MARKING_INTERVAL),
        /// DefaultCongestionThreshold (0x88), in bytes.
        default_congestion_threshold: Option<u64> = opt Nni(tt::DEFAULT_CONGESTION_THRESHOLD),
        /// Mtu (0x89), in bytes.
        mtu: Option<u64> = opt Nni(tt::MTU),
        /// NInInterests (0x90).
        n_in_interests: u64 = req Nni(t::N_IN_INTERESTS),
        /// NInData (0x91).
        n_in_data: u64 = req Nni(t::N_IN_DATA),
        /// NInNacks (0x97).
        n_in_nacks: u64 = req Nni(t::N_IN_NACKS),
        /// NOutInterests (0x92).
        n_out_interests: u64 = req Nni(t::N_OUT_INTERESTS),
        /// NOutData (0x93).
        n_out_data: u64 = req Nni(t::N_OUT_DATA),
        /// NOutNacks (0x98).
        n_out_nacks: u64 = req Nni(t::N_OUT_NACKS),
        /// NInBytes (0x94).
        n_in_bytes: u64 = req Nni(t::N_IN_BYTES),
        /// NOutBytes (0x95).
        n_out_bytes: u64 = req Nni(t::N_OUT_BYTES),
        /// Flags (0x6c): `FACE_FLAG_*` bits.
        flags: u64 = req Nni(tt::FLAGS),
    }
}

record! {
    /// FibEntry (0x80): one entry of the fib/list dataset.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct FibEntry in t::ENTRY {
        /// Name (7): the prefix.
        name: Name = req NameTlv(tt::NAME),
        /// NextHopRecord (0x81), zero or more.
        next_hops: Vec<NextHopRecord> = many Nested(t::NEXT_HOP_RECORD),
    }
}

record! {
    /// RibEntry (0x80): one entry of the rib/list dataset.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct RibEntry in t::ENTRY {
        /// Name (7): the prefix.
        name: Name = req NameTlv(tt::NAME),
        /// Route (0x81), zero or more.
        routes: Vec<Route> = many Nested(t::ROUTE),
    }
}

record! {
    /// NextHopRecord (0x81) inside a [`FibEntry`].
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
    pub struct NextHopRecord in t::NEXT_HOP_RECORD {
        /// FaceId (0x69).
        face_id: u64 = req Nni(tt::FACE_ID),
        /// Cost (0x6a).
        cost: u64 = req Nni(tt::COST),
    }
}

record! {
    /// Route (0x81) inside a [`RibEntry`].
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
    pub struct Route in t::ROUTE {
        /// FaceId (0x69).
        face_id: u64 = req Nni(tt::FACE_ID),
        /// Origin (0x6f): who installed the route (0 app, 64 autoreg, 128 NLSR, 255 static, ...).
        origin: u64 = req Nni(tt::ORIGIN),
        /// Cost (0x6a).
        cost: u64 = req Nni(tt::COST),
        /// Flags (0x6c): `ROUTE_FLAG_*` bits.
        flags: u64 = req Nni(tt::FLAGS),
        /// ExpirationPeriod (0x6d), in milliseconds; `None` for a route that does not expire.
        expiration_period: Option<u64> = opt Nni(tt::EXPIRATION_PERIOD),
    }
}

record! {
    /// StrategyChoice (0x80): one entry of the strategy-choice/list dataset.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct StrategyChoice in t::ENTRY {
        /// Name (7): the namespace.
        name: Name = req NameTlv(tt::NAME),
        /// Strategy (0x6b){Name}: the strategy's name.
        strategy: Name = req Strategy(tt::STRATEGY),
    }
}

record! {
    /// ChannelStatus (0x82): one entry of the faces/channels dataset, a listening channel.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct ChannelStatus in t::CHANNEL_STATUS {
        /// LocalUri (0x81): the channel's local URI.
        local_uri: String = req Uri(tt::LOCAL_URI),
    }
}

record! {
    /// FaceQueryFilter (0x96): which faces a faces/query dataset lists. Every field is optional;
    /// a face matches when it matches every field present (UriScheme: the scheme of its remote
    /// or of its local URI).
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct FaceQueryFilter in t::FACE_QUERY_FILTER {
        /// FaceId (0x69).
        face_id: Option<u64> = opt Nni(tt::FACE_ID),
        /// UriScheme (0x83): `udp4`, `tcp6`, `unix`, ...
        uri_scheme: Option<String> = opt Uri(t::URI_SCHEME),
        /// Uri (0x72): the remote URI.
        uri: Option<String> = opt Uri(tt::URI),
        /// LocalUri (0x81).
        local_uri: Option<String> = opt Uri(tt::LOCAL_URI),
        /// FaceScope (0x84).
        face_scope: Option<FaceScope> = opt Nni(t::FACE_SCOPE),
        /// FacePersistency (0x85).
        face_persistency: Option<FacePersistency> = opt Nni(tt::FACE_PERSISTENCY),
        /// LinkType (0x86).
        link_type: Option<LinkType> = opt Nni(t::LINK_TYPE),
    }
}

record! {
    /// FaceEventNotification (0xC0): the content of one `faces/events` notification.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct FaceEventNotification in t::FACE_EVENT_NOTIFICATION {
        /// FaceEventKind (0xC1).
        kind: FaceEventKind = req Nni(t::FACE_EVENT_KIND),
        /// FaceId (0x69).
        face_id: u64 = req Nni(tt::FACE_ID),
        /// Uri (0x72): the remote URI.
        uri: String = req Uri(tt::URI),
        /// LocalUri (0x81).
        local_uri: String = req Uri(tt::LOCAL_URI),
        /// FaceScope (0x84).
        face_scope: FaceScope = req Nni(t::FACE_SCOPE),
        /// FacePersistency (0x85).
        face_persistency: FacePersistency = req Nni(tt::FACE_PERSISTENCY),
        /// LinkType (0x86).
        link_type: LinkType = req Nni(t::LINK_TYPE),
        /// Flags (0x6c): `FACE_FLAG_*` bits.
        flags: u64 = req Nni(tt::FLAGS),
    }
}
