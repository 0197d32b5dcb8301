//! The faces manager: `faces/create`, `faces/update`, `faces/destroy`, answered as NFD 24.07's
//! FaceManager and its UDP and TCP factories answer them.
//!
//! The faces themselves are the forwarder's: every command goes through the [`Forwarder`]; the
//! `faces/list`, `faces/query` and `faces/channels` datasets list them ([`crate::dataset`]).
//!
//! `faces/create` (after the field check every command gets, [`crate::validate`]):
//! - 400 "Malformed command" / "Non-canonical remote URI" / "Non-canonical local URI": a URI
//!   that does not parse, or is not canonical as ndn-cxx's `FaceUri` judges it (a client
//!   canonizes first);
//! - 406 "Unsupported protocol": a scheme other than `udp4`, `udp6`, `tcp4`, `tcp6`, `ether`;
//! - 406, as the factories refuse: a LocalUri, on-demand persistency, a multicast UDP remote,
//!   LocalFieldsEnabled on a face that would not be local (UDP, or TCP to a non-loopback
//!   address), an MTU on TCP, an MTU below 64 on UDP;
//! - `ether` (NFD's Ethernet factory): 406 without a `dev://ifname` LocalUri, for on-demand
//!   persistency, a group address, LocalFieldsEnabled, an MTU below 64; 504 "No channels
//!   available to connect" when the interface has no Ethernet channel (`[face_system.ether]
//!   listen`);
//! - 409 "Face with remote URI already exists", with that face's parameters (whatever its
//!   persistency: it is left unchanged);
//! - 504 the connection or the socket failed (the forwarder's text);
//! - 200 with FaceId, Uri, LocalUri, FacePersistency, Mtu, BaseCongestionMarkingInterval,
//!   DefaultCongestionThreshold and Flags.
//!
//! `faces/update` changes the face named (the requester's when FaceId is 0 or absent): 404
//! "Specified face does not exist"; 409 "Invalid properties specified", with the refused
//! fields, when LocalFieldsEnabled is asked of a non-local face, a Unix face is asked another
//! persistency, or an MTU is asked of a stream face (or is below 64), in which case nothing
//! changes; else 200 with the face's parameters as for `faces/create` less the URIs.
//!
//! Of the flags, LocalFieldsEnabled takes effect; LpReliabilityEnabled and
//! CongestionMarkingEnabled, BaseCongestionMarkingInterval and DefaultCongestionThreshold are
//! recorded and reported back (in answers and in FaceStatus) but have no effect yet. NFD turns
//! congestion marking on by default; Cascade, which does not mark, leaves it off unless asked.

mod uri;

#[cfg(test)]
mod tests;

use engine::table::pit_cs::FaceId;
use face::table::MIN_MTU;
use face::{FaceDesc, FaceParams, FaceUpdate, LinkOptions, UpdateError};
use wire::nfd::{
    ControlParameters, ControlResponse, FacePersistency, FaceScope, LinkType,
    FACE_FLAG_CONGESTION_MARKING_ENABLED, FACE_FLAG_LOCAL_FIELDS_ENABLED,
    FACE_FLAG_LP_RELIABILITY_ENABLED,
};

use crate::forwarder::{CreateFaceError, Forwarder};
use uri::Uri;

/// The largest MTU NFD reports (ndn-cxx's `MAX_NDN_PACKET_SIZE`), and the MTU it reports for a
/// stream face, whose MTU is unlimited.
pub const MAX_NDN_PACKET_SIZE: u64 = 8800;

/// The face a command names: its FaceId, or the face the command came from when the FaceId is
/// absent or 0 (as NFD); `None` when the FaceId is no face id at all.
pub(crate) fn face_or_self(from: FaceId, id: Option<u64>) -> Option<FaceId> {
    match id {
        None | Some(0) => Some(from),
        Some(x) => FaceId::try_from(x).ok(),
    }
}

/// `faces/create`, `faces/update`, `faces/destroy` (`from`: the face the command came from).
pub(crate) fn command(
    forwarder: &impl Forwarder,
    from: FaceId,
    verb: &str,
    p: &ControlParameters,
) -> ControlResponse {
    match verb {
        "create" => create(forwarder, p),
        "destroy" => destroy(forwarder, p),
        "update" => update(forwarder, from, p),
        _ => crate::unsupported(),
    }
}

/// Flag bit `bit` of a command: `Some(value)` when its Mask has the bit (ndn-cxx's `hasFlagBit`
/// and `getFlagBit`), `None` when it does not.
fn flag_bit(p: &ControlParameters, bit: u64) -> Option<bool> {
    (p.mask.unwrap_or(0) & bit != 0).then(|| p.flags.unwrap_or(0) & bit != 0)
}

/// The Mtu field as a size (NFD caps it likewise).
fn mtu_of(p: &ControlParameters) -> Option<usize> {
    p.mtu.map(|m| usize::try_from(m).unwrap_or(usize::MAX))
}

fn refuse(code: u64, text: impl Into<String>) -> ControlResponse {
    ControlResponse::new(code, text)
}

fn create(forwarder: &impl Forwarder, p: &ControlParameters) -> ControlResponse {
    let Some(remote) = p.uri.as_deref().and_then(Uri::parse) else {
        return refuse(400, "Malformed command");
    };
    if !remote.is_canonical() {
        return refuse(400, "Non-canonical remote URI");
    }
    if let Some(local) = p.local_uri.as_deref() {
        match Uri::parse(local) {
            None => return refuse(400, "Malformed command"),
            Some(u) if !u.is_canonical() => return refuse(400, "Non-canonical local URI"),
            Some(_) => {}
        }
    }
    let tcp = match remote.scheme {
        "udp4" | "udp6" | "ether" => false,
        "tcp4" | "tcp6" => true,
        _ => return refuse(406, "Unsupported protocol"),
    };
    let defaults = forwarder.link_defaults();
    let params = FaceParams {
        persistency: p.face_persistency.unwrap_or_default(),
        mtu: mtu_of(p),
        options: LinkOptions {
            local_fields: flag_bit(p, FACE_FLAG_LOCAL_FIELDS_ENABLED) == Some(true),
            lp_reliability: flag_bit(p, FACE_FLAG_LP_RELIABILITY_ENABLED) == Some(true),
            congestion_marking: flag_bit(p, FACE_FLAG_CONGESTION_MARKING_ENABLED)
                .unwrap_or(defaults.congestion_marking),
            base_congestion_marking_interval_ns: p
                .base_congestion_marking_interval
                .unwrap_or(defaults.base_congestion_marking_interval_ns),
            default_congestion_threshold_bytes: p
                .default_congestion_threshold
                .unwrap_or(defaults.default_congestion_threshold_bytes),
        },
    };
    if remote.scheme == "ether" {
        return create_ether(forwarder, &remote, p.local_uri.as_deref(), &params);
    }
    if let Some(refused) = factory_refusal(tcp, &remote, p.local_uri.is_some(), &params) {
        return refused;
    }
    let uri = p.uri.as_deref().unwrap_or_default();
    created(forwarder.create_face(uri, &params))
}

/// `faces/create` of a unicast Ethernet face (NFD's Ethernet factory: its refusals in its
/// order, then the channel of the LocalUri's interface).
fn create_ether(
    forwarder: &impl Forwarder,
    remote: &Uri<'_>,
    local: Option<&str>,
    params: &FaceParams,
) -> ControlResponse {
    let dev = local.and_then(Uri::parse).filter(|u| u.scheme == "dev");
    let Some(mac) = face::netif::MacAddr::parse(remote.host()) else {
        return refuse(400, "Non-canonical remote URI");
    };
    let text = if dev.is_none() {
        "Creation of unicast Ethernet faces requires a LocalUri with dev:// scheme".into()
    } else if params.persistency == FacePersistency::OnDemand {
        "Outgoing Ethernet faces do not support on-demand persistency".into()
    } else if mac.is_group() {
        "Cannot create multicast Ethernet faces".into()
    } else if params.options.local_fields {
        "Local fields can only be enabled on faces with local scope".into()
    } else if params.mtu.is_some_and(|m| m < MIN_MTU) {
        format!("Override MTU cannot be less than {MIN_MTU}")
    } else {
        let ifname = dev.map_or("", |d| d.host());
        return created(forwarder.create_ether_face(ifname, mac, params));
    };
    refuse(406, text)
}

/// The answer to a `faces/create` the forwarder carried out.
fn created(r: Result<FaceDesc, CreateFaceError>) -> ControlResponse {
    match r {
        Ok(d) => crate::ok(create_response(&d)),
        Err(CreateFaceError::Exists(d)) => ControlResponse::with_parameters(
            409,
            "Face with remote URI already exists",
            create_response(&d),
        ),
        Err(CreateFaceError::UnsupportedScheme(_)) => refuse(406, "Unsupported protocol"),
        Err(CreateFaceError::BadUri(_)) => refuse(400, "Malformed command"),
        Err(CreateFaceError::Failed(text)) => refuse(504, text),
    }
}

/// What NFD's UDP or TCP factory refuses (406), in the order it checks.
fn factory_refusal(
    tcp: bool,
    remote: &Uri<'_>,
    has_local_uri: bool,
    params: &FaceParams,
) -> Option<ControlResponse> {
    let kind = if tcp { "TCP" } else { "UDP" };
    let ip = remote.socket_addr()?.ip();
    let text = if has_local_uri {
        format!("Unicast {kind} faces cannot be created with a LocalUri")
    } else if params.persistency == FacePersistency::OnDemand {
        format!("Outgoing {kind} faces do not support on-demand persistency")
    } else if !tcp && ip.is_multicast() {
        "Cannot create multicast UDP faces".into()
    } else if params.options.local_fields && !(tcp && ip.is_loopback()) {
        "Local fields can only be enabled on faces with local scope".into()
    } else if tcp && params.mtu.is_some() {
        "TCP faces do not support MTU overrides".into()
    } else if params.mtu.is_some_and(|m| m < MIN_MTU) {
        format!("Override MTU cannot be less than {MIN_MTU}")
    } else {
        return None;
    };
    Some(refuse(406, text))
}

/// `faces/destroy`: closes the face if there is one; 200 either way, echoing the parameters.
fn destroy(forwarder: &impl Forwarder, p: &ControlParameters) -> ControlResponse {
    if let Some(id) = p.face_id.and_then(|x| FaceId::try_from(x).ok()) {
        forwarder.destroy_face(id);
    }
    crate::ok(p.clone())
}

fn update(forwarder: &impl Forwarder, from: FaceId, p: &ControlParameters) -> ControlResponse {
    let not_found = || refuse(404, "Specified face does not exist");
    let Some(id) = face_or_self(from, p.face_id) else {
        return not_found();
    };
    let u = FaceUpdate {
        persistency: p.face_persistency,
        mtu: mtu_of(p),
        local_fields: flag_bit(p, FACE_FLAG_LOCAL_FIELDS_ENABLED),
        lp_reliability: flag_bit(p, FACE_FLAG_LP_RELIABILITY_ENABLED),
        congestion_marking: flag_bit(p, FACE_FLAG_CONGESTION_MARKING_ENABLED),
        base_congestion_marking_interval_ns: p.base_congestion_marking_interval,
        default_congestion_threshold_bytes: p.default_congestion_threshold,
    };
    match forwarder.update_face(id, &u) {
        Ok(d) => crate::ok(update_response(&d)),
        Err(UpdateError::NotFound) => not_found(),
        Err(UpdateError::Refused(r)) => {
            // NFD lists what it refused: LocalFieldsEnabled as Flags and Mask, the persistency
            // and the MTU as asked.
            let local = r.local_fields.then_some(FACE_FLAG_LOCAL_FIELDS_ENABLED);
            let refused = ControlParameters {
                flags: local,
                mask: local,
                face_persistency: r.persistency.and(p.face_persistency),
                mtu: r.mtu.and(p.mtu),
                ..ControlParameters::default()
            };
            ControlResponse::with_parameters(409, "Invalid properties specified", refused)
        }
    }
}

/// The MTU NFD reports for a face: at most [`MAX_NDN_PACKET_SIZE`], which is also a stream
/// face's.
pub(crate) fn reported_mtu(d: &FaceDesc) -> u64 {
    d.mtu
        .map_or(MAX_NDN_PACKET_SIZE, |m| m.min(MAX_NDN_PACKET_SIZE))
}

/// The parameters answering `faces/update` (NFD's makeUpdateFaceResponse).
fn update_response(d: &FaceDesc) -> ControlParameters {
    ControlParameters {
        face_id: Some(u64::from(d.id)),
        face_persistency: Some(d.persistency),
        mtu: Some(reported_mtu(d)),
        base_congestion_marking_interval: Some(d.options.base_congestion_marking_interval_ns),
        default_congestion_threshold: Some(d.options.default_congestion_threshold_bytes),
        flags: Some(flags(&d.options)),
        ..ControlParameters::default()
    }
}

/// The parameters answering `faces/create`, 200 or 409 (NFD's makeCreateFaceResponse).
fn create_response(d: &FaceDesc) -> ControlParameters {
    let p = properties(d);
    ControlParameters {
        uri: Some(p.uri),
        local_uri: Some(p.local_uri),
        ..update_response(d)
    }
}

/// What NFD copies from a face into a FaceStatus and a FaceEventNotification alike.
pub(crate) struct Properties {
    pub face_id: u64,
    pub uri: String,
    pub local_uri: String,
    pub face_scope: FaceScope,
    pub face_persistency: FacePersistency,
    pub link_type: LinkType,
    pub flags: u64,
}

/// A face's properties (a multicast face is multi-access, every other point-to-point).
pub(crate) fn properties(d: &FaceDesc) -> Properties {
    Properties {
        face_id: u64::from(d.id),
        uri: d.uri.clone(),
        local_uri: loopback_local_uri(&d.local_uri, &d.uri).unwrap_or_else(|| d.local_uri.clone()),
        face_scope: if d.local {
            FaceScope::Local
        } else {
            FaceScope::NonLocal
        },
        face_persistency: d.persistency,
        link_type: if d.multi_access() {
            LinkType::MultiAccess
        } else {
            LinkType::PointToPoint
        },
        flags: flags(&d.options),
    }
}

/// The LocalUri NFD reports for a UDP or TCP face to a loopback remote whose socket is bound
/// to the wildcard address (Cascade's listeners are): NFD reports the connected socket's
/// address, `127.0.0.1` (or `::1`) and the listener's port, where Cascade's face knows only
/// `0.0.0.0`. `None` for every other face (a remote elsewhere keeps the wildcard: the source
/// address the kernel picks per packet).
fn loopback_local_uri(local: &str, remote: &str) -> Option<String> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let (scheme, l) = local.split_once("://")?;
    if !matches!(scheme, "udp4" | "udp6" | "tcp4" | "tcp6") {
        return None;
    }
    let l: SocketAddr = l.parse().ok()?;
    let r: SocketAddr = remote.split_once("://")?.1.parse().ok()?;
    if !l.ip().is_unspecified() || !r.ip().is_loopback() {
        return None;
    }
    let ip = if l.is_ipv4() {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        IpAddr::V6(Ipv6Addr::LOCALHOST)
    };
    Some(format!("{scheme}://{}", SocketAddr::new(ip, l.port())))
}

/// A face's flags as NFD reports them: LocalFieldsEnabled, LpReliabilityEnabled,
/// CongestionMarkingEnabled.
pub(crate) fn flags(o: &LinkOptions) -> u64 {
    [
        (o.local_fields, FACE_FLAG_LOCAL_FIELDS_ENABLED),
        (o.lp_reliability, FACE_FLAG_LP_RELIABILITY_ENABLED),
        (o.congestion_marking, FACE_FLAG_CONGESTION_MARKING_ENABLED),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |bits, (_, bit)| bits | bit)
}
