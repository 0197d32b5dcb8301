//! The faces NFD 24.07 reserves, as `faces/list` and `faces/query` list them: its internal face
//! (FaceId 1, `internal://`, management behind it), the content store's (254,
//! `contentstore://`) and the null face (255, `null://`). Cascade has no such faces (its
//! management sits behind none, its CS answers inside the workers); they are listed so that
//! `nfdc face list` and `face show 1` show what they show against NFD. FaceId 1 carries
//! management's own traffic, as NFD counts its internal face's: the Interests management took
//! go out to it, the Data it made come in from it (bytes are not counted: 0).

use wire::nfd::{FacePersistency, FaceScope, FaceStatus, LinkType, FACE_FLAG_LOCAL_FIELDS_ENABLED};

use super::content::INTERNAL_FACE_ID;
use crate::manager::Traffic;

/// NFD's content store face.
pub const CONTENT_STORE_FACE_ID: u64 = 254;

/// NFD's null face.
pub const NULL_FACE_ID: u64 = 255;

/// NFD's MTU for a face without a limit (`MAX_NDN_PACKET_SIZE`).
const UNLIMITED_MTU: u64 = 8800;

/// NFD's GenericLinkService defaults, which its internal face reports.
const BASE_MARKING_INTERVAL_NS: u64 = 100_000_000;
const DEFAULT_THRESHOLD_BYTES: u64 = 65_536;

/// The three reserved faces, by FaceId.
pub(crate) fn reserved_faces(traffic: &Traffic) -> [FaceStatus; 3] {
    let reserved = |face_id: u64, uri: &str| FaceStatus {
        face_id,
        uri: uri.into(),
        local_uri: uri.into(),
        expiration_period: None,
        face_scope: FaceScope::Local,
        face_persistency: FacePersistency::Permanent,
        link_type: LinkType::PointToPoint,
        base_congestion_marking_interval: None,
        default_congestion_threshold: None,
        mtu: Some(UNLIMITED_MTU),
        n_in_interests: 0,
        n_in_data: 0,
        n_in_nacks: 0,
        n_out_interests: 0,
        n_out_data: 0,
        n_out_nacks: 0,
        n_in_bytes: 0,
        n_out_bytes: 0,
        flags: 0,
    };
    let internal = FaceStatus {
        base_congestion_marking_interval: Some(BASE_MARKING_INTERVAL_NS),
        default_congestion_threshold: Some(DEFAULT_THRESHOLD_BYTES),
        n_out_interests: traffic.interests,
        n_in_data: traffic.data,
        flags: FACE_FLAG_LOCAL_FIELDS_ENABLED,
        ..reserved(INTERNAL_FACE_ID, "internal://")
    };
    [
        internal,
        reserved(CONTENT_STORE_FACE_ID, "contentstore://"),
        reserved(NULL_FACE_ID, "null://"),
    ]
}
