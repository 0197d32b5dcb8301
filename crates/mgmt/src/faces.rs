//! The faces manager: `faces/create`, `faces/update`, `faces/destroy`.
//!
//! The faces themselves are the forwarder's: every command goes through the [`Forwarder`]. A
//! face is listed by the `faces/list` dataset ([`crate::dataset`]). Status codes follow NFD:
//! 400 malformed parameters or URI, 406 an unsupported scheme or local fields on a non-local
//! face, 409 a face to that remote exists (with it) or a refused update, 404 no such face to
//! update, 504 creation failed.

use engine::table::pit_cs::FaceId;
use face::FaceDesc;
use wire::nfd::{
    ControlParameters, ControlResponse, FacePersistency, FaceScope, LinkType,
    FACE_FLAG_LOCAL_FIELDS_ENABLED,
};

use crate::forwarder::{CreateFaceError, Forwarder, UpdateFaceError};

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

fn create(forwarder: &impl Forwarder, p: &ControlParameters) -> ControlResponse {
    let Some(uri) = p.uri.clone() else {
        return crate::malformed();
    };
    let persistency = p.face_persistency.unwrap_or_default();
    let wants_local_fields = p.mask.unwrap_or(0) & FACE_FLAG_LOCAL_FIELDS_ENABLED != 0
        && p.flags.unwrap_or(0) & FACE_FLAG_LOCAL_FIELDS_ENABLED != 0;
    let r = forwarder.create_face(&uri, persistency, p.mtu.map(|m| m as usize));
    match r {
        Ok(mut d) => {
            if wants_local_fields {
                if !d.local {
                    return ControlResponse::new(
                        406,
                        "Local fields can only be enabled on faces with local scope",
                    );
                }
                if let Ok(nd) = forwarder.update_face(d.id, None, Some(true)) {
                    d = nd;
                }
            }
            crate::ok(face_params(&d))
        }
        Err(CreateFaceError::UnsupportedScheme(_)) => {
            ControlResponse::new(406, "Unsupported protocol")
        }
        Err(CreateFaceError::BadUri(_)) => ControlResponse::new(400, "Malformed URI"),
        Err(CreateFaceError::Exists(d)) => {
            ControlResponse::with_parameters(409, "Face already exists", face_params(&d))
        }
        Err(CreateFaceError::Failed(e)) => {
            ControlResponse::new(504, format!("Face creation failed: {e}"))
        }
    }
}

fn destroy(forwarder: &impl Forwarder, p: &ControlParameters) -> ControlResponse {
    let Some(id) = p.face_id.and_then(|x| FaceId::try_from(x).ok()) else {
        return crate::malformed();
    };
    forwarder.destroy_face(id);
    crate::ok(ControlParameters {
        face_id: Some(u64::from(id)),
        ..ControlParameters::default()
    })
}

fn update(forwarder: &impl Forwarder, from: FaceId, p: &ControlParameters) -> ControlResponse {
    let Some(id) = face_or_self(from, p.face_id) else {
        return crate::malformed();
    };
    let mask = p.mask.unwrap_or(0);
    let flags = p.flags.unwrap_or(0);
    if p.flags.is_some() != p.mask.is_some() {
        return crate::malformed();
    }
    let local_fields = (mask & FACE_FLAG_LOCAL_FIELDS_ENABLED != 0)
        .then_some(flags & FACE_FLAG_LOCAL_FIELDS_ENABLED != 0);
    match forwarder.update_face(id, p.face_persistency, local_fields) {
        Ok(d) => crate::ok(face_params(&d)),
        Err(UpdateFaceError::Refused(text)) => ControlResponse::new(409, &text),
        Err(UpdateFaceError::NotFound) => ControlResponse::new(404, "Face not found"),
    }
}

/// The ControlParameters describing a face in a faces command's answer.
fn face_params(d: &FaceDesc) -> ControlParameters {
    ControlParameters {
        face_id: Some(u64::from(d.id)),
        uri: Some(d.uri.clone()),
        local_uri: Some(d.local_uri.clone()),
        face_persistency: Some(d.persistency),
        mtu: d.mtu,
        flags: Some(local_fields_flag(d)),
        ..ControlParameters::default()
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

/// A face's properties (every Cascade face is point-to-point).
pub(crate) fn properties(d: &FaceDesc) -> Properties {
    Properties {
        face_id: u64::from(d.id),
        uri: d.uri.clone(),
        local_uri: d.local_uri.clone(),
        face_scope: if d.local {
            FaceScope::Local
        } else {
            FaceScope::NonLocal
        },
        face_persistency: d.persistency,
        link_type: LinkType::PointToPoint,
        flags: local_fields_flag(d),
    }
}

/// A face's flags as NFD reports them: LocalFieldsEnabled or none.
pub(crate) fn local_fields_flag(d: &FaceDesc) -> u64 {
    if d.local_fields {
        FACE_FLAG_LOCAL_FIELDS_ENABLED
    } else {
        0
    }
}
