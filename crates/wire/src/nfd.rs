//! The NFD management protocol's TLV records (ndn-cxx's `ndn::nfd` namespace): ControlParameters,
//! ControlResponse and the status dataset entries (ForwarderStatus, FaceStatus, FibEntry, RibEntry,
//! CsInfo, StrategyChoice).
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
//! [`ErrorKind::Missing`] at the offset of the enclosing element. Error offsets are absolute
//! within the buffer given to `decode`.
//!
//! Uri and LocalUri must be UTF-8 ([`ErrorKind::BadUri`] otherwise); free text (StatusText,
//! NfdVersion) is decoded lossily. Names are decoded under [`Limits::default`].

use crate::error::{Error, ErrorKind, Result};
use crate::name::{Name, NameView};
use crate::tlv::{write_nested, write_nni_tlv, write_tlv, Element, OrderCheck, Reader};
use crate::{tt, Limits};

/// TLV-TYPEs used here that `tt` does not name (the same numbers mean different fields in
/// different containers).
mod t {
    // Dataset entries and their repeated children.
    pub const ENTRY: u32 = 0x80;
    pub const NEXT_HOP_RECORD: u32 = 0x81;
    pub const ROUTE: u32 = 0x81;
    // FaceStatus
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

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

macro_rules! nni_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$vmeta:meta])* $variant:ident = $value:expr,)+ }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A value this version does not know, kept as is. Never holds a known value when
            /// produced by [`From<u64>`].
            Other(u64),
        }

        impl From<u64> for $name {
            fn from(v: u64) -> Self {
                match v {
                    $($value => $name::$variant,)+
                    other => $name::Other(other),
                }
            }
        }

        impl From<$name> for u64 {
            fn from(v: $name) -> u64 {
                match v {
                    $($name::$variant => $value,)+
                    $name::Other(other) => other,
                }
            }
        }
    };
}

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

// ---------------------------------------------------------------------------------------------
// Decoding helpers
// ---------------------------------------------------------------------------------------------

/// Reads the single element of type `typ` that fills `buf`, then decodes it with `f`.
fn decode_outer<'a, T>(
    buf: &'a [u8],
    typ: u32,
    f: impl FnOnce(Element<'a>) -> Result<T>,
) -> Result<T> {
    let mut r = Reader::new(buf);
    let e = r.read()?.expect(typ)?;
    if !r.is_empty() {
        return Err(Error::new(ErrorKind::TrailingBytes, r.offset()));
    }
    f(e)
}

/// Walks the elements of `r` under `order`, handing each accepted one to `f`.
fn for_each_field<'a>(
    mut r: Reader<'a>,
    order: &'static [u32],
    repeatable: &'static [u32],
    mut f: impl FnMut(Element<'a>) -> Result<()>,
) -> Result<()> {
    let mut check = OrderCheck::new(order, repeatable);
    while let Some(e) = r.next_element() {
        let e = e?;
        if check.accept(&e)?.is_some() {
            f(e)?;
        }
    }
    Ok(())
}

/// The NonNegativeInteger fields of a container whose recognized elements are exactly `order`,
/// by position in `order` (`None` where absent).
fn nni_fields<const N: usize>(e: &Element<'_>, order: &'static [u32]) -> Result<[Option<u64>; N]> {
    let mut v = [None; N];
    for_each_field(e.reader(), order, &[], |f| {
        if let Some(i) = order.iter().position(|&x| x == f.typ) {
            v[i] = Some(f.nni()?);
        }
        Ok(())
    })?;
    Ok(v)
}

/// The next element of `r`, which must be of type `typ` (the container starts at `offset`).
fn next_required<'a>(r: &mut Reader<'a>, typ: u32, offset: usize) -> Result<Element<'a>> {
    match r.next_element() {
        Some(e) => e?.expect(typ),
        None => Err(Error::new(ErrorKind::Missing(typ), offset)),
    }
}

/// The value of a required field, or [`ErrorKind::Missing`] at `offset`.
fn required<T>(v: Option<T>, typ: u32, offset: usize) -> Result<T> {
    v.ok_or(Error::new(ErrorKind::Missing(typ), offset))
}

fn decode_name(e: Element<'_>) -> Result<Name> {
    Ok(NameView::from_element(e, &Limits::default())?.to_name())
}

/// A URI string: must be UTF-8.
fn decode_uri(e: Element<'_>) -> Result<String> {
    String::from_utf8(e.value.to_vec()).map_err(|_| Error::new(ErrorKind::BadUri, e.value_offset))
}

/// Free text: invalid UTF-8 is replaced, not rejected.
fn decode_text(e: Element<'_>) -> String {
    String::from_utf8_lossy(e.value).into_owned()
}

/// Strategy(0x6b){Name}: the strategy's name.
fn decode_strategy(e: Element<'_>) -> Result<Name> {
    let mut name = None;
    for_each_field(e.reader(), &[tt::NAME], &[], |f| {
        name = Some(decode_name(f)?);
        Ok(())
    })?;
    required(name, tt::NAME, e.offset)
}

fn encode_strategy(out: &mut Vec<u8>, name: &Name) {
    write_nested(out, tt::STRATEGY, |o| name.encode(o));
}

fn opt_nni(out: &mut Vec<u8>, typ: u32, v: Option<u64>) {
    if let Some(v) = v {
        write_nni_tlv(out, typ, v);
    }
}

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

// ---------------------------------------------------------------------------------------------
// ControlParameters
// ---------------------------------------------------------------------------------------------

/// ControlParameters (0x68): the arguments of a management command, and the body of its
/// response. Every field is optional; which ones a command needs is up to the command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlParameters {
    /// Name (7): a prefix.
    pub name: Option<Name>,
    /// FaceId (0x69).
    pub face_id: Option<u64>,
    /// Uri (0x72): a remote face URI.
    pub uri: Option<String>,
    /// LocalUri (0x81): a local face URI.
    pub local_uri: Option<String>,
    /// Origin (0x6f): the route origin.
    pub origin: Option<u64>,
    /// Cost (0x6a).
    pub cost: Option<u64>,
    /// Capacity (0x83): content store capacity, in packets.
    pub capacity: Option<u64>,
    /// Count (0x84).
    pub count: Option<u64>,
    /// BaseCongestionMarkingInterval (0x87), in nanoseconds.
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold (0x88), in bytes.
    pub default_congestion_threshold: Option<u64>,
    /// Mtu (0x89), in bytes.
    pub mtu: Option<u64>,
    /// Flags (0x6c).
    pub flags: Option<u64>,
    /// Mask (0x70): which bits of `flags` the command sets.
    pub mask: Option<u64>,
    /// Strategy (0x6b){Name}: the strategy's name.
    pub strategy: Option<Name>,
    /// ExpirationPeriod (0x6d), in milliseconds.
    pub expiration_period: Option<u64>,
    /// FacePersistency (0x85).
    pub face_persistency: Option<FacePersistency>,
}

impl ControlParameters {
    const ORDER: &'static [u32] = &[
        tt::NAME,
        tt::FACE_ID,
        tt::URI,
        tt::LOCAL_URI,
        tt::ORIGIN,
        tt::COST,
        tt::CAPACITY,
        tt::COUNT,
        tt::BASE_CONGESTION_MARKING_INTERVAL,
        tt::DEFAULT_CONGESTION_THRESHOLD,
        tt::MTU,
        tt::FLAGS,
        tt::MASK,
        tt::STRATEGY,
        tt::EXPIRATION_PERIOD,
        tt::FACE_PERSISTENCY,
    ];

    /// Appends the ControlParameters TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, tt::CONTROL_PARAMETERS, |o| {
            if let Some(n) = &self.name {
                n.encode(o);
            }
            opt_nni(o, tt::FACE_ID, self.face_id);
            if let Some(s) = &self.uri {
                write_tlv(o, tt::URI, s.as_bytes());
            }
            if let Some(s) = &self.local_uri {
                write_tlv(o, tt::LOCAL_URI, s.as_bytes());
            }
            opt_nni(o, tt::ORIGIN, self.origin);
            opt_nni(o, tt::COST, self.cost);
            opt_nni(o, tt::CAPACITY, self.capacity);
            opt_nni(o, tt::COUNT, self.count);
            opt_nni(
                o,
                tt::BASE_CONGESTION_MARKING_INTERVAL,
                self.base_congestion_marking_interval,
            );
            opt_nni(
                o,
                tt::DEFAULT_CONGESTION_THRESHOLD,
                self.default_congestion_threshold,
            );
            opt_nni(o, tt::MTU, self.mtu);
            opt_nni(o, tt::FLAGS, self.flags);
            opt_nni(o, tt::MASK, self.mask);
            if let Some(s) = &self.strategy {
                encode_strategy(o, s);
            }
            opt_nni(o, tt::EXPIRATION_PERIOD, self.expiration_period);
            opt_nni(
                o,
                tt::FACE_PERSISTENCY,
                self.face_persistency.map(u64::from),
            );
        });
    }

    /// Decodes a ControlParameters TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, tt::CONTROL_PARAMETERS, Self::from_element)
    }

    /// Decodes an already delimited ControlParameters element.
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(tt::CONTROL_PARAMETERS)?;
        let mut p = ControlParameters::default();
        for_each_field(e.reader(), Self::ORDER, &[], |f| {
            match f.typ {
                tt::NAME => p.name = Some(decode_name(f)?),
                tt::FACE_ID => p.face_id = Some(f.nni()?),
                tt::URI => p.uri = Some(decode_uri(f)?),
                tt::LOCAL_URI => p.local_uri = Some(decode_uri(f)?),
                tt::ORIGIN => p.origin = Some(f.nni()?),
                tt::COST => p.cost = Some(f.nni()?),
                tt::CAPACITY => p.capacity = Some(f.nni()?),
                tt::COUNT => p.count = Some(f.nni()?),
                tt::BASE_CONGESTION_MARKING_INTERVAL => {
                    p.base_congestion_marking_interval = Some(f.nni()?)
                }
                tt::DEFAULT_CONGESTION_THRESHOLD => p.default_congestion_threshold = Some(f.nni()?),
                tt::MTU => p.mtu = Some(f.nni()?),
                tt::FLAGS => p.flags = Some(f.nni()?),
                tt::MASK => p.mask = Some(f.nni()?),
                tt::STRATEGY => p.strategy = Some(decode_strategy(f)?),
                tt::EXPIRATION_PERIOD => p.expiration_period = Some(f.nni()?),
                tt::FACE_PERSISTENCY => p.face_persistency = Some(f.nni()?.into()),
                _ => {}
            }
            Ok(())
        })?;
        Ok(p)
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
// ForwarderStatus
// ---------------------------------------------------------------------------------------------

/// ForwarderStatus (the GeneralStatus dataset): forwarder-wide counters. Not wrapped in an
/// outer TLV: its elements are the dataset content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwarderStatus {
    /// NfdVersion (0x80).
    pub nfd_version: String,
    /// StartTimestamp (0x81), milliseconds since the Unix epoch.
    pub start_timestamp: u64,
    /// CurrentTimestamp (0x82), milliseconds since the Unix epoch.
    pub current_timestamp: u64,
    /// NNameTreeEntries (0x83).
    pub n_name_tree_entries: u64,
    /// NFibEntries (0x84).
    pub n_fib_entries: u64,
    /// NPitEntries (0x85).
    pub n_pit_entries: u64,
    /// NMeasurementsEntries (0x86).
    pub n_measurements_entries: u64,
    /// NCsEntries (0x87).
    pub n_cs_entries: u64,
    /// NInInterests (0x90).
    pub n_in_interests: u64,
    /// NInData (0x91).
    pub n_in_data: u64,
    /// NInNacks (0x97).
    pub n_in_nacks: u64,
    /// NOutInterests (0x92).
    pub n_out_interests: u64,
    /// NOutData (0x93).
    pub n_out_data: u64,
    /// NOutNacks (0x98).
    pub n_out_nacks: u64,
    /// NSatisfiedInterests (0x99).
    pub n_satisfied_interests: u64,
    /// NUnsatisfiedInterests (0x9a).
    pub n_unsatisfied_interests: u64,
}

impl ForwarderStatus {
    const ORDER: &'static [u32] = &[
        t::NFD_VERSION,
        t::START_TIMESTAMP,
        t::CURRENT_TIMESTAMP,
        t::N_NAME_TREE_ENTRIES,
        t::N_FIB_ENTRIES,
        t::N_PIT_ENTRIES,
        t::N_MEASUREMENTS_ENTRIES,
        t::N_CS_ENTRIES,
        t::N_IN_INTERESTS,
        t::N_IN_DATA,
        t::N_IN_NACKS,
        t::N_OUT_INTERESTS,
        t::N_OUT_DATA,
        t::N_OUT_NACKS,
        t::N_SATISFIED_INTERESTS,
        t::N_UNSATISFIED_INTERESTS,
    ];

    fn counters(&self) -> [u64; 15] {
        [
            self.start_timestamp,
            self.current_timestamp,
            self.n_name_tree_entries,
            self.n_fib_entries,
            self.n_pit_entries,
            self.n_measurements_entries,
            self.n_cs_entries,
            self.n_in_interests,
            self.n_in_data,
            self.n_in_nacks,
            self.n_out_interests,
            self.n_out_data,
            self.n_out_nacks,
            self.n_satisfied_interests,
            self.n_unsatisfied_interests,
        ]
    }

    fn counters_mut(&mut self) -> [&mut u64; 15] {
        [
            &mut self.start_timestamp,
            &mut self.current_timestamp,
            &mut self.n_name_tree_entries,
            &mut self.n_fib_entries,
            &mut self.n_pit_entries,
            &mut self.n_measurements_entries,
            &mut self.n_cs_entries,
            &mut self.n_in_interests,
            &mut self.n_in_data,
            &mut self.n_in_nacks,
            &mut self.n_out_interests,
            &mut self.n_out_data,
            &mut self.n_out_nacks,
            &mut self.n_satisfied_interests,
            &mut self.n_unsatisfied_interests,
        ]
    }

    /// Appends the status elements (no outer TLV: this is the dataset content).
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_tlv(out, t::NFD_VERSION, self.nfd_version.as_bytes());
        for (&typ, v) in Self::ORDER[1..].iter().zip(self.counters()) {
            write_nni_tlv(out, typ, v);
        }
    }

    /// Decodes the dataset content `content` (all of it). Every field is required.
    pub fn decode(content: &[u8]) -> Result<Self> {
        let mut version = None;
        let mut values: [Option<u64>; 15] = [None; 15];
        for_each_field(Reader::new(content), Self::ORDER, &[], |f| {
            match Self::ORDER.iter().position(|&x| x == f.typ) {
                Some(i @ 1..) => values[i - 1] = Some(f.nni()?),
                _ => version = Some(decode_text(f)),
            }
            Ok(())
        })?;
        let mut s = ForwarderStatus {
            nfd_version: required(version, t::NFD_VERSION, 0)?,
            ..Default::default()
        };
        let fields = s
            .counters_mut()
            .into_iter()
            .zip(values)
            .zip(&Self::ORDER[1..]);
        for ((slot, v), &typ) in fields {
            *slot = required(v, typ, 0)?;
        }
        Ok(s)
    }
}

// ---------------------------------------------------------------------------------------------
// FaceStatus
// ---------------------------------------------------------------------------------------------

/// FaceStatus (0x80): one entry of the faces/list dataset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceStatus {
    /// FaceId (0x69).
    pub face_id: u64,
    /// Uri (0x72): the remote URI.
    pub uri: String,
    /// LocalUri (0x81).
    pub local_uri: String,
    /// ExpirationPeriod (0x6d), in milliseconds, for faces that expire.
    pub expiration_period: Option<u64>,
    /// FaceScope (0x84).
    pub face_scope: FaceScope,
    /// FacePersistency (0x85).
    pub face_persistency: FacePersistency,
    /// LinkType (0x86).
    pub link_type: LinkType,
    /// BaseCongestionMarkingInterval (0x87), in nanoseconds.
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold (0x88), in bytes.
    pub default_congestion_threshold: Option<u64>,
    /// Mtu (0x89), in bytes.
    pub mtu: Option<u64>,
    /// NInInterests (0x90).
    pub n_in_interests: u64,
    /// NInData (0x91).
    pub n_in_data: u64,
    /// NInNacks (0x97).
    pub n_in_nacks: u64,
    /// NOutInterests (0x92).
    pub n_out_interests: u64,
    /// NOutData (0x93).
    pub n_out_data: u64,
    /// NOutNacks (0x98).
    pub n_out_nacks: u64,
    /// NInBytes (0x94).
    pub n_in_bytes: u64,
    /// NOutBytes (0x95).
    pub n_out_bytes: u64,
    /// Flags (0x6c): `FACE_FLAG_*` bits.
    pub flags: u64,
}

impl FaceStatus {
    const ORDER: &'static [u32] = &[
        tt::FACE_ID,
        tt::URI,
        tt::LOCAL_URI,
        tt::EXPIRATION_PERIOD,
        t::FACE_SCOPE,
        tt::FACE_PERSISTENCY,
        t::LINK_TYPE,
        tt::BASE_CONGESTION_MARKING_INTERVAL,
        tt::DEFAULT_CONGESTION_THRESHOLD,
        tt::MTU,
        t::N_IN_INTERESTS,
        t::N_IN_DATA,
        t::N_IN_NACKS,
        t::N_OUT_INTERESTS,
        t::N_OUT_DATA,
        t::N_OUT_NACKS,
        t::N_IN_BYTES,
        t::N_OUT_BYTES,
        tt::FLAGS,
    ];

    /// Appends the FaceStatus TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, t::ENTRY, |o| {
            write_nni_tlv(o, tt::FACE_ID, self.face_id);
            write_tlv(o, tt::URI, self.uri.as_bytes());
            write_tlv(o, tt::LOCAL_URI, self.local_uri.as_bytes());
            opt_nni(o, tt::EXPIRATION_PERIOD, self.expiration_period);
            write_nni_tlv(o, t::FACE_SCOPE, self.face_scope.into());
            write_nni_tlv(o, tt::FACE_PERSISTENCY, self.face_persistency.into());
            write_nni_tlv(o, t::LINK_TYPE, self.link_type.into());
            opt_nni(
                o,
                tt::BASE_CONGESTION_MARKING_INTERVAL,
                self.base_congestion_marking_interval,
            );
            opt_nni(
                o,
                tt::DEFAULT_CONGESTION_THRESHOLD,
                self.default_congestion_threshold,
            );
            opt_nni(o, tt::MTU, self.mtu);
            write_nni_tlv(o, t::N_IN_INTERESTS, self.n_in_interests);
            write_nni_tlv(o, t::N_IN_DATA, self.n_in_data);
            write_nni_tlv(o, t::N_IN_NACKS, self.n_in_nacks);
            write_nni_tlv(o, t::N_OUT_INTERESTS, self.n_out_interests);
            write_nni_tlv(o, t::N_OUT_DATA, self.n_out_data);
            write_nni_tlv(o, t::N_OUT_NACKS, self.n_out_nacks);
            write_nni_tlv(o, t::N_IN_BYTES, self.n_in_bytes);
            write_nni_tlv(o, t::N_OUT_BYTES, self.n_out_bytes);
            write_nni_tlv(o, tt::FLAGS, self.flags);
        });
    }

    /// Decodes a FaceStatus TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, t::ENTRY, Self::from_element)
    }

    /// Decodes an already delimited FaceStatus element (a dataset entry).
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(t::ENTRY)?;
        let mut s = FaceStatus::default();
        let (mut face_id, mut uri, mut local_uri) = (None, None, None);
        let (mut scope, mut persistency, mut link_type) = (None, None, None);
        let mut counters: [Option<u64>; 9] = [None; 9];
        for_each_field(e.reader(), Self::ORDER, &[], |f| {
            match f.typ {
                tt::FACE_ID => face_id = Some(f.nni()?),
                tt::URI => uri = Some(decode_uri(f)?),
                tt::LOCAL_URI => local_uri = Some(decode_uri(f)?),
                tt::EXPIRATION_PERIOD => s.expiration_period = Some(f.nni()?),
                t::FACE_SCOPE => scope = Some(f.nni()?.into()),
                tt::FACE_PERSISTENCY => persistency = Some(f.nni()?.into()),
                t::LINK_TYPE => link_type = Some(f.nni()?.into()),
                tt::BASE_CONGESTION_MARKING_INTERVAL => {
                    s.base_congestion_marking_interval = Some(f.nni()?)
                }
                tt::DEFAULT_CONGESTION_THRESHOLD => s.default_congestion_threshold = Some(f.nni()?),
                tt::MTU => s.mtu = Some(f.nni()?),
                typ => {
                    // The nine required counters, N_IN_INTERESTS..FLAGS, are the tail of ORDER.
                    if let Some(i) = Self::ORDER[10..].iter().position(|&x| x == typ) {
                        counters[i] = Some(f.nni()?);
                    }
                }
            }
            Ok(())
        })?;
        let at = e.offset;
        s.face_id = required(face_id, tt::FACE_ID, at)?;
        s.uri = required(uri, tt::URI, at)?;
        s.local_uri = required(local_uri, tt::LOCAL_URI, at)?;
        s.face_scope = required(scope, t::FACE_SCOPE, at)?;
        s.face_persistency = required(persistency, tt::FACE_PERSISTENCY, at)?;
        s.link_type = required(link_type, t::LINK_TYPE, at)?;
        let slots = [
            &mut s.n_in_interests,
            &mut s.n_in_data,
            &mut s.n_in_nacks,
            &mut s.n_out_interests,
            &mut s.n_out_data,
            &mut s.n_out_nacks,
            &mut s.n_in_bytes,
            &mut s.n_out_bytes,
            &mut s.flags,
        ];
        for ((slot, v), &typ) in slots.into_iter().zip(counters).zip(&Self::ORDER[10..]) {
            *slot = required(v, typ, at)?;
        }
        Ok(s)
    }
}

// ---------------------------------------------------------------------------------------------
// FibEntry
// ---------------------------------------------------------------------------------------------

/// NextHopRecord (0x81) inside a [`FibEntry`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NextHopRecord {
    /// FaceId (0x69).
    pub face_id: u64,
    /// Cost (0x6a).
    pub cost: u64,
}

impl NextHopRecord {
    /// Appends the NextHopRecord TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, t::NEXT_HOP_RECORD, |o| {
            write_nni_tlv(o, tt::FACE_ID, self.face_id);
            write_nni_tlv(o, tt::COST, self.cost);
        });
    }

    /// Decodes a NextHopRecord TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, t::NEXT_HOP_RECORD, Self::from_element)
    }

    /// Decodes an already delimited NextHopRecord element.
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(t::NEXT_HOP_RECORD)?;
        let (mut face_id, mut cost) = (None, None);
        for_each_field(e.reader(), &[tt::FACE_ID, tt::COST], &[], |f| {
            match f.typ {
                tt::FACE_ID => face_id = Some(f.nni()?),
                _ => cost = Some(f.nni()?),
            }
            Ok(())
        })?;
        Ok(NextHopRecord {
            face_id: required(face_id, tt::FACE_ID, e.offset)?,
            cost: required(cost, tt::COST, e.offset)?,
        })
    }
}

/// FibEntry (0x80): one entry of the fib/list dataset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FibEntry {
    /// Name (7): the prefix.
    pub name: Name,
    /// NextHopRecord (0x81), zero or more.
    pub next_hops: Vec<NextHopRecord>,
}

impl FibEntry {
    /// Appends the FibEntry TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, t::ENTRY, |o| {
            self.name.encode(o);
            for nh in &self.next_hops {
                nh.encode(o);
            }
        });
    }

    /// Decodes a FibEntry TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, t::ENTRY, Self::from_element)
    }

    /// Decodes an already delimited FibEntry element (a dataset entry).
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(t::ENTRY)?;
        let mut name = None;
        let mut next_hops = Vec::new();
        for_each_field(
            e.reader(),
            &[tt::NAME, t::NEXT_HOP_RECORD],
            &[t::NEXT_HOP_RECORD],
            |f| {
                match f.typ {
                    tt::NAME => name = Some(decode_name(f)?),
                    _ => next_hops.push(NextHopRecord::from_element(f)?),
                }
                Ok(())
            },
        )?;
        Ok(FibEntry {
            name: required(name, tt::NAME, e.offset)?,
            next_hops,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// RibEntry
// ---------------------------------------------------------------------------------------------

/// Route (0x81) inside a [`RibEntry`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Route {
    /// FaceId (0x69).
    pub face_id: u64,
    /// Origin (0x6f): who installed the route (0 app, 64 autoreg, 128 NLSR, 255 static, ...).
    pub origin: u64,
    /// Cost (0x6a).
    pub cost: u64,
    /// Flags (0x6c): `ROUTE_FLAG_*` bits.
    pub flags: u64,
    /// ExpirationPeriod (0x6d), in milliseconds; `None` for a route that does not expire.
    pub expiration_period: Option<u64>,
}

impl Route {
    const ORDER: &'static [u32] = &[
        tt::FACE_ID,
        tt::ORIGIN,
        tt::COST,
        tt::FLAGS,
        tt::EXPIRATION_PERIOD,
    ];

    /// Appends the Route TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, t::ROUTE, |o| {
            write_nni_tlv(o, tt::FACE_ID, self.face_id);
            write_nni_tlv(o, tt::ORIGIN, self.origin);
            write_nni_tlv(o, tt::COST, self.cost);
            write_nni_tlv(o, tt::FLAGS, self.flags);
            opt_nni(o, tt::EXPIRATION_PERIOD, self.expiration_period);
        });
    }

    /// Decodes a Route TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, t::ROUTE, Self::from_element)
    }

    /// Decodes an already delimited Route element.
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(t::ROUTE)?;
        let v: [Option<u64>; 5] = nni_fields(&e, Self::ORDER)?;
        let at = e.offset;
        Ok(Route {
            face_id: required(v[0], tt::FACE_ID, at)?,
            origin: required(v[1], tt::ORIGIN, at)?,
            cost: required(v[2], tt::COST, at)?,
            flags: required(v[3], tt::FLAGS, at)?,
            expiration_period: v[4],
        })
    }
}

/// RibEntry (0x80): one entry of the rib/list dataset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RibEntry {
    /// Name (7): the prefix.
    pub name: Name,
    /// Route (0x81), zero or more.
    pub routes: Vec<Route>,
}

impl RibEntry {
    /// Appends the RibEntry TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, t::ENTRY, |o| {
            self.name.encode(o);
            for r in &self.routes {
                r.encode(o);
            }
        });
    }

    /// Decodes a RibEntry TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, t::ENTRY, Self::from_element)
    }

    /// Decodes an already delimited RibEntry element (a dataset entry).
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(t::ENTRY)?;
        let mut name = None;
        let mut routes = Vec::new();
        for_each_field(e.reader(), &[tt::NAME, t::ROUTE], &[t::ROUTE], |f| {
            match f.typ {
                tt::NAME => name = Some(decode_name(f)?),
                _ => routes.push(Route::from_element(f)?),
            }
            Ok(())
        })?;
        Ok(RibEntry {
            name: required(name, tt::NAME, e.offset)?,
            routes,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// CsInfo
// ---------------------------------------------------------------------------------------------

/// CsInfo (0x80): the cs/info dataset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CsInfo {
    /// Capacity (0x83), in packets.
    pub capacity: u64,
    /// Flags (0x6c): `CS_FLAG_*` bits.
    pub flags: u64,
    /// NCsEntries (0x87).
    pub n_cs_entries: u64,
    /// NHits (0x81).
    pub n_hits: u64,
    /// NMisses (0x82).
    pub n_misses: u64,
}

impl CsInfo {
    const ORDER: &'static [u32] = &[
        tt::CAPACITY,
        tt::FLAGS,
        t::N_CS_ENTRIES,
        t::N_HITS,
        t::N_MISSES,
    ];

    /// Appends the CsInfo TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, t::ENTRY, |o| {
            write_nni_tlv(o, tt::CAPACITY, self.capacity);
            write_nni_tlv(o, tt::FLAGS, self.flags);
            write_nni_tlv(o, t::N_CS_ENTRIES, self.n_cs_entries);
            write_nni_tlv(o, t::N_HITS, self.n_hits);
            write_nni_tlv(o, t::N_MISSES, self.n_misses);
        });
    }

    /// Decodes a CsInfo TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, t::ENTRY, Self::from_element)
    }

    /// Decodes an already delimited CsInfo element.
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(t::ENTRY)?;
        let v: [Option<u64>; 5] = nni_fields(&e, Self::ORDER)?;
        let req = |i: usize| required(v[i], Self::ORDER[i], e.offset);
        Ok(CsInfo {
            capacity: req(0)?,
            flags: req(1)?,
            n_cs_entries: req(2)?,
            n_hits: req(3)?,
            n_misses: req(4)?,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// StrategyChoice
// ---------------------------------------------------------------------------------------------

/// StrategyChoice (0x80): one entry of the strategy-choice/list dataset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrategyChoice {
    /// Name (7): the namespace.
    pub name: Name,
    /// Strategy (0x6b){Name}: the strategy's name.
    pub strategy: Name,
}

impl StrategyChoice {
    /// Appends the StrategyChoice TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_nested(out, t::ENTRY, |o| {
            self.name.encode(o);
            encode_strategy(o, &self.strategy);
        });
    }

    /// Decodes a StrategyChoice TLV that fills `buf` exactly.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        decode_outer(buf, t::ENTRY, Self::from_element)
    }

    /// Decodes an already delimited StrategyChoice element (a dataset entry).
    pub fn from_element(e: Element<'_>) -> Result<Self> {
        let e = e.expect(t::ENTRY)?;
        let (mut name, mut strategy) = (None, None);
        for_each_field(e.reader(), &[tt::NAME, tt::STRATEGY], &[], |f| {
            match f.typ {
                tt::NAME => name = Some(decode_name(f)?),
                _ => strategy = Some(decode_strategy(f)?),
            }
            Ok(())
        })?;
        Ok(StrategyChoice {
            name: required(name, tt::NAME, e.offset)?,
            strategy: required(strategy, tt::STRATEGY, e.offset)?,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use ErrorKind as K;

    fn name(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        f(&mut out);
        out
    }

    fn sample_face() -> FaceStatus {
        FaceStatus {
            face_id: 300,
            uri: "udp4://192.0.2.1:6363".into(),
            local_uri: "udp4://192.0.2.2:6363".into(),
            expiration_period: Some(10_000),
            face_scope: FaceScope::NonLocal,
            face_persistency: FacePersistency::OnDemand,
            link_type: LinkType::MultiAccess,
            base_congestion_marking_interval: Some(100_000_000),
            default_congestion_threshold: Some(65_536),
            mtu: Some(8800),
            n_in_interests: 1,
            n_in_data: 2,
            n_in_nacks: 3,
            n_out_interests: 4,
            n_out_data: 5,
            n_out_nacks: 6,
            n_in_bytes: 1 << 33,
            n_out_bytes: 8,
            flags: FACE_FLAG_LOCAL_FIELDS_ENABLED | FACE_FLAG_CONGESTION_MARKING_ENABLED,
        }
    }

    fn full_params() -> ControlParameters {
        ControlParameters {
            name: Some(name("/a/b")),
            face_id: Some(1),
            uri: Some("tcp4://192.0.2.1:6363".into()),
            local_uri: Some("tcp4://0.0.0.0:6363".into()),
            origin: Some(255),
            cost: Some(10),
            capacity: Some(65_536),
            count: Some(3),
            base_congestion_marking_interval: Some(100_000_000),
            default_congestion_threshold: Some(1 << 16),
            mtu: Some(1400),
            flags: Some(ROUTE_FLAG_CHILD_INHERIT),
            mask: Some(ROUTE_FLAG_CHILD_INHERIT | ROUTE_FLAG_CAPTURE),
            strategy: Some(name("/localhost/nfd/strategy/best-route")),
            expiration_period: Some(3_600_000),
            face_persistency: Some(FacePersistency::Permanent),
        }
    }

    // ---- byte-exact vectors ---------------------------------------------------------------

    #[test]
    fn control_parameters_vector() {
        let p = ControlParameters {
            name: Some(name("/a")),
            face_id: Some(1),
            cost: Some(10),
            flags: Some(1),
            ..Default::default()
        };
        let wire = [
            0x68, 0x0E, //
            0x07, 0x03, 0x08, 0x01, b'a', // Name /a
            0x69, 0x01, 0x01, // FaceId 1
            0x6A, 0x01, 0x0A, // Cost 10
            0x6C, 0x01, 0x01, // Flags 1
        ];
        assert_eq!(enc(|o| p.encode(o)), wire);
        assert_eq!(ControlParameters::decode(&wire).unwrap(), p);
    }

    #[test]
    fn control_parameters_full_order_vector() {
        let p = ControlParameters {
            name: Some(name("/a")),
            face_id: Some(1),
            uri: Some("u".into()),
            local_uri: Some("l".into()),
            origin: Some(2),
            cost: Some(3),
            capacity: Some(4),
            count: Some(5),
            base_congestion_marking_interval: Some(6),
            default_congestion_threshold: Some(7),
            mtu: Some(8),
            flags: Some(9),
            mask: Some(10),
            strategy: Some(name("/s")),
            expiration_period: Some(11),
            face_persistency: Some(FacePersistency::OnDemand),
        };
        let wire = [
            0x68, 0x36, //
            0x07, 0x03, 0x08, 0x01, b'a', //
            0x69, 0x01, 0x01, //
            0x72, 0x01, b'u', //
            0x81, 0x01, b'l', //
            0x6F, 0x01, 0x02, //
            0x6A, 0x01, 0x03, //
            0x83, 0x01, 0x04, //
            0x84, 0x01, 0x05, //
            0x87, 0x01, 0x06, //
            0x88, 0x01, 0x07, //
            0x89, 0x01, 0x08, //
            0x6C, 0x01, 0x09, //
            0x70, 0x01, 0x0A, //
            0x6B, 0x05, 0x07, 0x03, 0x08, 0x01, b's', //
            0x6D, 0x01, 0x0B, //
            0x85, 0x01, 0x01, //
        ];
        assert_eq!(enc(|o| p.encode(o)), wire);
        assert_eq!(ControlParameters::decode(&wire).unwrap(), p);
    }

    #[test]
    fn empty_control_parameters_vector() {
        let p = ControlParameters::default();
        assert_eq!(enc(|o| p.encode(o)), [0x68, 0x00]);
        assert_eq!(ControlParameters::decode(&[0x68, 0x00]).unwrap(), p);
    }

    #[test]
    fn control_response_vector() {
        let r = ControlResponse::with_parameters(
            200,
            "OK",
            ControlParameters {
                face_id: Some(1),
                ..Default::default()
            },
        );
        let wire = [
            0x65, 0x0C, //
            0x66, 0x01, 0xC8, // StatusCode 200
            0x67, 0x02, b'O', b'K', // StatusText
            0x68, 0x03, 0x69, 0x01, 0x01, // ControlParameters{FaceId 1}
        ];
        assert_eq!(enc(|o| r.encode(o)), wire);
        let d = ControlResponse::decode(&wire).unwrap();
        assert_eq!(d.parameters().unwrap().face_id, Some(1));
        assert_eq!(d, r);
    }

    #[test]
    fn control_response_without_and_with_raw_body() {
        let r = ControlResponse::new(404, "Not Found");
        let wire = enc(|o| r.encode(o));
        assert_eq!(
            wire,
            [
                0x65, 0x0F, 0x66, 0x02, 0x01, 0x94, 0x67, 0x09, b'N', b'o', b't', b' ', b'F', b'o',
                b'u', b'n', b'd'
            ]
        );
        assert_eq!(ControlResponse::decode(&wire).unwrap(), r);

        // A body that is not ControlParameters is kept as is.
        let raw = vec![0x80, 0x02, 0x69, 0x00, 0x80, 0x00];
        let r = ControlResponse {
            body: Some(ControlResponseBody::Raw(raw)),
            ..ControlResponse::new(200, "OK")
        };
        let wire = enc(|o| r.encode(o));
        let d = ControlResponse::decode(&wire).unwrap();
        assert_eq!(d.parameters(), None);
        assert_eq!(d, r);
    }

    #[test]
    fn control_response_requires_code_then_text() {
        // text before code
        let wire = [0x65, 0x05, 0x67, 0x00, 0x66, 0x01, 0x00];
        assert_eq!(
            ControlResponse::decode(&wire).unwrap_err(),
            Error::new(
                K::UnexpectedType {
                    expected: tt::STATUS_CODE,
                    found: tt::STATUS_TEXT
                },
                2
            )
        );
        // text missing
        let wire = [0x65, 0x03, 0x66, 0x01, 0x00];
        assert_eq!(
            ControlResponse::decode(&wire).unwrap_err(),
            Error::new(K::Missing(tt::STATUS_TEXT), 0)
        );
        // a malformed body is still an error
        let wire = [0x65, 0x07, 0x66, 0x01, 0x00, 0x67, 0x00, 0x68, 0x05];
        assert_eq!(
            ControlResponse::decode(&wire).unwrap_err().kind,
            K::LengthExceedsBuffer
        );
        // so is a ControlParameters body with an unknown critical element (absolute offset)
        let wire = [
            0x65, 0x09, 0x66, 0x01, 0x00, 0x67, 0x00, 0x68, 0x02, 0x0F, 0x00,
        ];
        assert_eq!(
            ControlResponse::decode(&wire).unwrap_err(),
            Error::new(K::UnknownCritical(0x0F), 9)
        );
    }

    #[test]
    fn forwarder_status_vector() {
        let s = ForwarderStatus {
            nfd_version: "0.7".into(),
            start_timestamp: 1,
            current_timestamp: 2,
            n_name_tree_entries: 3,
            n_fib_entries: 4,
            n_pit_entries: 5,
            n_measurements_entries: 6,
            n_cs_entries: 7,
            n_in_interests: 8,
            n_in_data: 9,
            n_in_nacks: 10,
            n_out_interests: 11,
            n_out_data: 12,
            n_out_nacks: 13,
            n_satisfied_interests: 14,
            n_unsatisfied_interests: 15,
        };
        let wire = [
            0x80, 0x03, b'0', b'.', b'7', //
            0x81, 0x01, 0x01, //
            0x82, 0x01, 0x02, //
            0x83, 0x01, 0x03, //
            0x84, 0x01, 0x04, //
            0x85, 0x01, 0x05, //
            0x86, 0x01, 0x06, //
            0x87, 0x01, 0x07, //
            0x90, 0x01, 0x08, //
            0x91, 0x01, 0x09, //
            0x97, 0x01, 0x0A, //
            0x92, 0x01, 0x0B, //
            0x93, 0x01, 0x0C, //
            0x98, 0x01, 0x0D, //
            0x99, 0x01, 0x0E, //
            0x9A, 0x01, 0x0F, //
        ];
        assert_eq!(enc(|o| s.encode(o)), wire);
        assert_eq!(ForwarderStatus::decode(&wire).unwrap(), s);
        // every field is required
        assert_eq!(
            ForwarderStatus::decode(&wire[..wire.len() - 3]).unwrap_err(),
            Error::new(K::Missing(0x9A), 0)
        );
    }

    #[test]
    fn face_status_vector() {
        let s = sample_face();
        let wire = [
            0x80, 0x71, //
            0x69, 0x02, 0x01, 0x2C, // FaceId 300
            0x72, 0x15, b'u', b'd', b'p', b'4', b':', b'/', b'/', b'1', b'9', b'2', b'.', b'0',
            b'.', b'2', b'.', b'1', b':', b'6', b'3', b'6', b'3', // Uri
            0x81, 0x15, b'u', b'd', b'p', b'4', b':', b'/', b'/', b'1', b'9', b'2', b'.', b'0',
            b'.', b'2', b'.', b'2', b':', b'6', b'3', b'6', b'3', // LocalUri
            0x6D, 0x02, 0x27, 0x10, // ExpirationPeriod 10000
            0x84, 0x01, 0x00, // FaceScope non-local
            0x85, 0x01, 0x01, // FacePersistency on-demand
            0x86, 0x01, 0x01, // LinkType multi-access
            0x87, 0x04, 0x05, 0xF5, 0xE1, 0x00, // BaseCongestionMarkingInterval 1e8
            0x88, 0x04, 0x00, 0x01, 0x00, 0x00, // DefaultCongestionThreshold 65536
            0x89, 0x02, 0x22, 0x60, // Mtu 8800
            0x90, 0x01, 0x01, // NInInterests
            0x91, 0x01, 0x02, // NInData
            0x97, 0x01, 0x03, // NInNacks
            0x92, 0x01, 0x04, // NOutInterests
            0x93, 0x01, 0x05, // NOutData
            0x98, 0x01, 0x06, // NOutNacks
            0x94, 0x08, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, // NInBytes 2^33
            0x95, 0x01, 0x08, // NOutBytes
            0x6C, 0x01, 0x05, // Flags
        ];
        assert_eq!(enc(|o| s.encode(o)), wire);
        assert_eq!(FaceStatus::decode(&wire).unwrap(), s);
    }

    #[test]
    fn fib_entry_vector() {
        let e = FibEntry {
            name: name("/a"),
            next_hops: vec![
                NextHopRecord {
                    face_id: 1,
                    cost: 0,
                },
                NextHopRecord {
                    face_id: 300,
                    cost: 10,
                },
            ],
        };
        let wire = [
            0x80, 0x16, //
            0x07, 0x03, 0x08, 0x01, b'a', //
            0x81, 0x06, 0x69, 0x01, 0x01, 0x6A, 0x01, 0x00, //
            0x81, 0x07, 0x69, 0x02, 0x01, 0x2C, 0x6A, 0x01, 0x0A, //
        ];
        assert_eq!(enc(|o| e.encode(o)), wire);
        assert_eq!(FibEntry::decode(&wire).unwrap(), e);
    }

    #[test]
    fn rib_entry_vector() {
        let e = RibEntry {
            name: name("/a"),
            routes: vec![
                Route {
                    face_id: 1,
                    origin: 0,
                    cost: 10,
                    flags: ROUTE_FLAG_CHILD_INHERIT,
                    expiration_period: Some(3600),
                },
                Route {
                    face_id: 2,
                    origin: 255,
                    cost: 0,
                    flags: 0,
                    expiration_period: None,
                },
            ],
        };
        let wire = [
            0x80, 0x25, //
            0x07, 0x03, 0x08, 0x01, b'a', //
            0x81, 0x10, 0x69, 0x01, 0x01, 0x6F, 0x01, 0x00, 0x6A, 0x01, 0x0A, 0x6C, 0x01, 0x01,
            0x6D, 0x02, 0x0E, 0x10, //
            0x81, 0x0C, 0x69, 0x01, 0x02, 0x6F, 0x01, 0xFF, 0x6A, 0x01, 0x00, 0x6C, 0x01, 0x00,
        ];
        assert_eq!(enc(|o| e.encode(o)), wire);
        assert_eq!(RibEntry::decode(&wire).unwrap(), e);
    }

    #[test]
    fn cs_info_vector() {
        let c = CsInfo {
            capacity: 65_536,
            flags: CS_FLAG_ENABLE_ADMIT | CS_FLAG_ENABLE_SERVE,
            n_cs_entries: 5,
            n_hits: 256,
            n_misses: 0,
        };
        let wire = [
            0x80, 0x13, //
            0x83, 0x04, 0x00, 0x01, 0x00, 0x00, // Capacity
            0x6C, 0x01, 0x03, // Flags
            0x87, 0x01, 0x05, // NCsEntries
            0x81, 0x02, 0x01, 0x00, // NHits
            0x82, 0x01, 0x00, // NMisses
        ];
        assert_eq!(enc(|o| c.encode(o)), wire);
        assert_eq!(CsInfo::decode(&wire).unwrap(), c);
    }

    #[test]
    fn strategy_choice_vector() {
        let s = StrategyChoice {
            name: name("/a"),
            strategy: name("/b"),
        };
        let wire = [
            0x80, 0x0C, //
            0x07, 0x03, 0x08, 0x01, b'a', //
            0x6B, 0x05, 0x07, 0x03, 0x08, 0x01, b'b',
        ];
        assert_eq!(enc(|o| s.encode(o)), wire);
        assert_eq!(StrategyChoice::decode(&wire).unwrap(), s);
    }

    // ---- round trips ----------------------------------------------------------------------

    fn round_trip<T: PartialEq + core::fmt::Debug>(
        v: &T,
        encode: impl Fn(&T, &mut Vec<u8>),
        decode: impl Fn(&[u8]) -> Result<T>,
    ) {
        let wire = enc(|o| encode(v, o));
        let back = decode(&wire).unwrap();
        assert_eq!(&back, v);
        assert_eq!(enc(|o| encode(&back, o)), wire);
    }

    #[test]
    fn round_trips() {
        round_trip(
            &full_params(),
            ControlParameters::encode,
            ControlParameters::decode,
        );
        round_trip(
            &ControlResponse::with_parameters(200, "OK", full_params()),
            ControlResponse::encode,
            ControlResponse::decode,
        );
        round_trip(
            &ControlResponse::new(u64::from(u32::MAX), ""),
            ControlResponse::encode,
            ControlResponse::decode,
        );
        round_trip(
            &ForwarderStatus {
                nfd_version: "22.12".into(),
                start_timestamp: 1_700_000_000_000,
                current_timestamp: 1_700_000_123_456,
                n_in_interests: u64::MAX,
                ..Default::default()
            },
            ForwarderStatus::encode,
            ForwarderStatus::decode,
        );
        round_trip(&sample_face(), FaceStatus::encode, FaceStatus::decode);
        round_trip(
            &FaceStatus::default(),
            FaceStatus::encode,
            FaceStatus::decode,
        );
        round_trip(
            &FaceStatus {
                face_scope: FaceScope::Other(7),
                face_persistency: FacePersistency::Other(9),
                link_type: LinkType::Other(1 << 40),
                expiration_period: None,
                base_congestion_marking_interval: None,
                default_congestion_threshold: None,
                mtu: None,
                ..sample_face()
            },
            FaceStatus::encode,
            FaceStatus::decode,
        );
        round_trip(
            &NextHopRecord {
                face_id: 7,
                cost: 65_535,
            },
            NextHopRecord::encode,
            NextHopRecord::decode,
        );
        round_trip(&FibEntry::default(), FibEntry::encode, FibEntry::decode);
        round_trip(
            &Route {
                face_id: 9,
                origin: 128,
                cost: 1,
                flags: ROUTE_FLAG_CAPTURE,
                expiration_period: Some(1),
            },
            Route::encode,
            Route::decode,
        );
        round_trip(
            &RibEntry {
                name: name("/x/y/z"),
                routes: vec![Route::default(); 3],
            },
            RibEntry::encode,
            RibEntry::decode,
        );
        round_trip(&CsInfo::default(), CsInfo::encode, CsInfo::decode);
        round_trip(
            &StrategyChoice {
                name: Name::new(),
                strategy: name("/localhost/nfd/strategy/multicast/v=4"),
            },
            StrategyChoice::encode,
            StrategyChoice::decode,
        );
    }

    #[test]
    fn enums_keep_unknown_values() {
        assert_eq!(FaceScope::from(1), FaceScope::Local);
        assert_eq!(FacePersistency::from(2), FacePersistency::Permanent);
        assert_eq!(LinkType::from(2), LinkType::AdHoc);
        assert_eq!(LinkType::from(3), LinkType::Other(3));
        assert_eq!(u64::from(FaceScope::Other(42)), 42);
        assert_eq!(u64::from(FacePersistency::OnDemand), 1);
        assert_eq!(FaceScope::default(), FaceScope::NonLocal);
    }

    // ---- datasets -------------------------------------------------------------------------

    #[test]
    fn datasets_decode_back_to_back() {
        let faces = vec![
            sample_face(),
            FaceStatus {
                face_id: 301,
                ..sample_face()
            },
        ];
        let content = enc(|o| faces.iter().for_each(|f| f.encode(o)));
        assert_eq!(
            decode_dataset(&content, FaceStatus::from_element).unwrap(),
            faces
        );
        assert_eq!(decode_dataset(&[], FibEntry::from_element).unwrap(), vec![]);

        let choices = vec![
            StrategyChoice {
                name: Name::new(),
                strategy: name("/best-route"),
            },
            StrategyChoice {
                name: name("/a"),
                strategy: name("/multicast"),
            },
        ];
        let mut content = enc(|o| choices.iter().for_each(|c| c.encode(o)));
        assert_eq!(
            decode_dataset(&content, StrategyChoice::from_element).unwrap(),
            choices
        );
        // An error in the second entry carries its offset within the whole content.
        let second = enc(|o| choices[0].encode(o)).len();
        content[second] = 0x81;
        assert_eq!(
            decode_dataset(&content, StrategyChoice::from_element).unwrap_err(),
            Error::new(
                K::UnexpectedType {
                    expected: 0x80,
                    found: 0x81
                },
                second
            )
        );
        // A truncated last entry is an error, not a silently shorter dataset.
        assert_eq!(
            decode_dataset(&content[..content.len() - 1], StrategyChoice::from_element)
                .unwrap_err()
                .kind,
            K::LengthExceedsBuffer
        );
    }

    // ---- evolvability and errors ----------------------------------------------------------

    #[test]
    fn unknown_critical_element_is_rejected() {
        // ControlParameters{FaceId 1, 0x0F (critical, unknown)}
        let wire = [0x68, 0x05, 0x69, 0x01, 0x01, 0x0F, 0x00];
        assert_eq!(
            ControlParameters::decode(&wire).unwrap_err(),
            Error::new(K::UnknownCritical(0x0F), 5)
        );
        // odd and above 31 is critical too; nested inside a Route inside a RibEntry
        let wire = [
            0x80, 0x0F, 0x07, 0x00, 0x81, 0x0B, 0x69, 0x01, 0x01, 0x6F, 0x01, 0x00, 0x6A, 0x01,
            0x00, 0xC1, 0x00,
        ];
        assert_eq!(
            RibEntry::decode(&wire).unwrap_err(),
            Error::new(K::UnknownCritical(0xC1), 15)
        );
    }

    #[test]
    fn unknown_non_critical_element_is_skipped() {
        // ControlParameters{FaceId 1, 0xF0 (non-critical, unknown), Cost 10}
        let wire = [
            0x68, 0x09, 0x69, 0x01, 0x01, 0xF0, 0x01, 0xAA, 0x6A, 0x01, 0x0A,
        ];
        let p = ControlParameters::decode(&wire).unwrap();
        assert_eq!(
            p,
            ControlParameters {
                face_id: Some(1),
                cost: Some(10),
                ..Default::default()
            }
        );
        // also in a dataset entry
        // (type 0x0100, written FD 01 00, is even and above 31)
        let wire = [
            0x80, 0x0A, 0xFD, 0x01, 0x00, 0x00, 0x07, 0x00, 0x6B, 0x02, 0x07, 0x00,
        ];
        assert_eq!(
            StrategyChoice::decode(&wire).unwrap(),
            StrategyChoice::default()
        );
    }

    #[test]
    fn out_of_order_critical_element_is_rejected() {
        // Cost before FaceId: FaceId (0x69, odd) is critical
        let wire = [0x68, 0x06, 0x6A, 0x01, 0x0A, 0x69, 0x01, 0x01];
        assert_eq!(
            ControlParameters::decode(&wire).unwrap_err(),
            Error::new(K::OutOfOrder(tt::FACE_ID), 5)
        );
        // Name after FaceId
        let wire = [0x68, 0x05, 0x69, 0x01, 0x01, 0x07, 0x00];
        assert_eq!(
            ControlParameters::decode(&wire).unwrap_err(),
            Error::new(K::OutOfOrder(tt::NAME), 5)
        );
        // a repeated critical field
        let wire = [0x68, 0x06, 0x69, 0x01, 0x01, 0x69, 0x01, 0x02];
        assert_eq!(
            ControlParameters::decode(&wire).unwrap_err().kind,
            K::OutOfOrder(tt::FACE_ID)
        );
        // an out-of-order non-critical field is skipped: Flags (0x6c) after Mask (0x70)
        let wire = [0x68, 0x06, 0x70, 0x01, 0x01, 0x6C, 0x01, 0x01];
        assert_eq!(
            ControlParameters::decode(&wire).unwrap(),
            ControlParameters {
                mask: Some(1),
                ..Default::default()
            }
        );
        // Name after a NextHopRecord in a FibEntry
        let wire = [
            0x80, 0x0A, 0x81, 0x06, 0x69, 0x01, 0x01, 0x6A, 0x01, 0x00, 0x07, 0x00,
        ];
        assert_eq!(
            FibEntry::decode(&wire).unwrap_err(),
            Error::new(K::OutOfOrder(tt::NAME), 10)
        );
    }

    #[test]
    fn required_fields_and_framing() {
        // NextHopRecord without Cost
        let wire = [0x80, 0x07, 0x07, 0x00, 0x81, 0x03, 0x69, 0x01, 0x01];
        assert_eq!(
            FibEntry::decode(&wire).unwrap_err(),
            Error::new(K::Missing(tt::COST), 4)
        );
        // FibEntry without Name
        assert_eq!(
            FibEntry::decode(&[0x80, 0x00]).unwrap_err(),
            Error::new(K::Missing(tt::NAME), 0)
        );
        // StrategyChoice with an empty Strategy
        let wire = [0x80, 0x04, 0x07, 0x00, 0x6B, 0x00];
        assert_eq!(
            StrategyChoice::decode(&wire).unwrap_err(),
            Error::new(K::Missing(tt::NAME), 4)
        );
        // FaceStatus missing its Flags
        let full = enc(|o| sample_face().encode(o));
        let mut cut = full[..full.len() - 3].to_vec();
        cut[1] -= 3;
        assert_eq!(
            FaceStatus::decode(&cut).unwrap_err(),
            Error::new(K::Missing(tt::FLAGS), 0)
        );
        // CsInfo missing NMisses
        let wire = [
            0x80, 0x0C, 0x83, 0x01, 0x00, 0x6C, 0x01, 0x00, 0x87, 0x01, 0x00, 0x81, 0x01, 0x00,
        ];
        assert_eq!(
            CsInfo::decode(&wire).unwrap_err(),
            Error::new(K::Missing(t::N_MISSES), 0)
        );
        // wrong outer type, trailing bytes, bad NonNegativeInteger
        assert_eq!(
            CsInfo::decode(&[0x68, 0x00]).unwrap_err().kind,
            K::UnexpectedType {
                expected: 0x80,
                found: 0x68
            }
        );
        assert_eq!(
            ControlParameters::decode(&[0x68, 0x00, 0x00]).unwrap_err(),
            Error::new(K::TrailingBytes, 2)
        );
        assert_eq!(
            ControlParameters::decode(&[0x68, 0x05, 0x69, 0x03, 0x00, 0x00, 0x01]).unwrap_err(),
            Error::new(K::BadNonNegativeInteger, 4)
        );
        // a Uri that is not UTF-8
        assert_eq!(
            ControlParameters::decode(&[0x68, 0x03, 0x72, 0x01, 0xFF]).unwrap_err(),
            Error::new(K::BadUri, 4)
        );
    }

    #[test]
    fn hostile_input_never_panics() {
        // Every prefix and every single-byte corruption of valid encodings decodes or errors.
        let samples = [
            enc(|o| full_params().encode(o)),
            enc(|o| ControlResponse::with_parameters(200, "OK", full_params()).encode(o)),
            enc(|o| sample_face().encode(o)),
            enc(|o| ForwarderStatus::default().encode(o)),
            enc(|o| {
                RibEntry {
                    name: name("/a"),
                    routes: vec![Route::default(); 2],
                }
                .encode(o)
            }),
        ];
        for wire in &samples {
            for cut in 0..wire.len() {
                let w = &wire[..cut];
                let _ = ControlParameters::decode(w);
                let _ = ControlResponse::decode(w);
                let _ = FaceStatus::decode(w);
                let _ = ForwarderStatus::decode(w);
                let _ = RibEntry::decode(w);
            }
            for i in 0..wire.len() {
                for b in [0x00, 0x01, 0x7F, 0x80, 0xFD, 0xFF] {
                    let mut w = wire.clone();
                    w[i] = b;
                    let _ = ControlParameters::decode(&w);
                    let _ = ControlResponse::decode(&w);
                    let _ = FaceStatus::decode(&w);
                    let _ = ForwarderStatus::decode(&w);
                    let _ = RibEntry::decode(&w);
                    let _ = decode_dataset(&w, FibEntry::from_element);
                }
            }
        }
    }
}
