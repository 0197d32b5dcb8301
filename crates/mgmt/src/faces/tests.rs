//! `faces/create`, `faces/update`, `faces/destroy` as NFD answers them, against the fake
//! forwarder.

use face::{FaceParams, FaceUpdate, LinkOptions, Refusal, UpdateError};
use wire::nfd::{
    ControlParameters, FacePersistency, FACE_FLAG_CONGESTION_MARKING_ENABLED,
    FACE_FLAG_LOCAL_FIELDS_ENABLED, FACE_FLAG_LP_RELIABILITY_ENABLED,
};

use super::MAX_NDN_PACKET_SIZE;
use crate::fake::*;
use crate::forwarder::CreateFaceError;

fn create(uri: &str) -> ControlParameters {
    ControlParameters {
        uri: Some(uri.into()),
        ..ControlParameters::default()
    }
}

/// What `faces/create` with `p` answers: status code and text.
fn created(p: ControlParameters) -> (u64, String) {
    let mut m = manager(Fake::default());
    let r = command(&mut m, 1, "faces/create", p);
    (r.status_code, r.status_text)
}

#[test]
fn create_answers_the_face_with_every_field() {
    let mut m = manager(Fake::default());
    let mut p = create("udp4://192.0.2.9:6363");
    p.mtu = Some(1200);
    p.mask = Some(FACE_FLAG_LP_RELIABILITY_ENABLED | FACE_FLAG_CONGESTION_MARKING_ENABLED);
    p.flags = Some(FACE_FLAG_LP_RELIABILITY_ENABLED);
    p.base_congestion_marking_interval = Some(5_000_000);
    let r = command(&mut m, 1, "faces/create", p);
    assert_eq!(code(&r), (200, "OK"));
    let made = params(&r);
    let want = ControlParameters {
        face_id: Some(3),
        uri: Some("udp4://192.0.2.9:6363".into()),
        local_uri: Some("udp4://0.0.0.0:6363".into()),
        face_persistency: Some(FacePersistency::Persistent),
        mtu: Some(1200),
        base_congestion_marking_interval: Some(5_000_000),
        default_congestion_threshold: Some(65_536),
        flags: Some(FACE_FLAG_LP_RELIABILITY_ENABLED),
        ..ControlParameters::default()
    };
    assert_eq!(made, want);
    let (_, asked) = m.forwarder().created.borrow()[0].clone();
    assert_eq!(
        asked,
        FaceParams {
            persistency: FacePersistency::Persistent,
            mtu: Some(1200),
            options: LinkOptions {
                lp_reliability: true,
                // Turned off by the mask (on by default).
                congestion_marking: false,
                base_congestion_marking_interval_ns: 5_000_000,
                ..LinkOptions::default()
            },
        }
    );
    // A stream face (no MTU of its own) reports NFD's largest packet as its MTU.
    let mut p = create("tcp4://127.0.0.1:6363");
    p.face_persistency = Some(FacePersistency::Permanent);
    p.mask = Some(FACE_FLAG_LOCAL_FIELDS_ENABLED | FACE_FLAG_CONGESTION_MARKING_ENABLED);
    p.flags = p.mask;
    m.forwarder().create.replace(None);
    let r = command(&mut m, 1, "faces/create", p);
    let made = params(&r);
    assert_eq!(made.mtu, Some(MAX_NDN_PACKET_SIZE));
    assert_eq!(made.face_persistency, Some(FacePersistency::Permanent));
    assert_eq!(
        made.flags,
        Some(FACE_FLAG_LOCAL_FIELDS_ENABLED | FACE_FLAG_CONGESTION_MARKING_ENABLED)
    );
}

#[test]
fn create_refuses_as_nfd_in_its_order() {
    let with = |f: fn(&mut ControlParameters)| {
        let mut p = create("udp4://192.0.2.9:6363");
        f(&mut p);
        created(p)
    };
    let want = |code: u64, text: &str| (code, text.to_string());
    assert_eq!(
        created(create("udp4:192.0.2.9")),
        want(400, "Malformed command")
    );
    assert_eq!(
        created(create("udp://192.0.2.9:6363")),
        want(400, "Non-canonical remote URI")
    );
    assert_eq!(
        with(|p| p.local_uri = Some("nope".into())),
        want(400, "Malformed command")
    );
    assert_eq!(
        with(|p| p.local_uri = Some("udp4://localhost:1".into())),
        want(400, "Non-canonical local URI")
    );
    // NFD's Ethernet factory, in its order; a forwarder without Ethernet faces: 406.
    let ether = |uri: &str, local: Option<&str>, on_demand: bool| {
        let mut p = create(uri);
        p.local_uri = local.map(String::from);
        if on_demand {
            p.face_persistency = Some(FacePersistency::OnDemand);
        }
        created(p)
    };
    let (unicast, dev) = ("ether://[02:00:00:00:00:01]", Some("dev://eth0"));
    assert_eq!(
        ether("ether://[01:00:5e:00:17:aa]", None, false),
        want(
            406,
            "Creation of unicast Ethernet faces requires a LocalUri with dev:// scheme"
        )
    );
    assert_eq!(
        ether(unicast, Some("udp4://192.0.2.1:6363"), false).1,
        "Creation of unicast Ethernet faces requires a LocalUri with dev:// scheme"
    );
    assert_eq!(
        ether(unicast, dev, true),
        want(
            406,
            "Outgoing Ethernet faces do not support on-demand persistency"
        )
    );
    assert_eq!(
        ether("ether://[01:00:5e:00:17:aa]", dev, false),
        want(406, "Cannot create multicast Ethernet faces")
    );
    assert_eq!(
        ether("ether://[02:00:00:00:00:0A]", dev, false),
        want(400, "Non-canonical remote URI")
    );
    assert_eq!(
        ether(unicast, dev, false),
        want(406, "Unsupported protocol")
    );
    assert_eq!(
        with(|p| p.local_uri = Some("udp4://192.0.2.1:6363".into())),
        want(406, "Unicast UDP faces cannot be created with a LocalUri")
    );
    assert_eq!(
        with(|p| p.face_persistency = Some(FacePersistency::OnDemand)),
        want(
            406,
            "Outgoing UDP faces do not support on-demand persistency"
        )
    );
    assert_eq!(
        created(create("udp4://224.0.23.170:56363")),
        want(406, "Cannot create multicast UDP faces")
    );
    let local_fields = |p: &mut ControlParameters| {
        p.mask = Some(FACE_FLAG_LOCAL_FIELDS_ENABLED);
        p.flags = p.mask;
    };
    assert_eq!(
        with(local_fields),
        want(
            406,
            "Local fields can only be enabled on faces with local scope"
        )
    );
    let mut tcp = create("tcp4://192.0.2.9:6363");
    local_fields(&mut tcp);
    assert_eq!(
        created(tcp),
        want(
            406,
            "Local fields can only be enabled on faces with local scope"
        )
    );
    let mut tcp = create("tcp6://[::1]:6363");
    tcp.mtu = Some(1400);
    assert_eq!(
        created(tcp),
        want(406, "TCP faces do not support MTU overrides")
    );
    assert_eq!(
        with(|p| p.mtu = Some(63)),
        want(406, "Override MTU cannot be less than 64")
    );
    // The field check comes first: Flags without Mask, a forbidden field, no Uri.
    assert_eq!(
        with(|p| p.flags = Some(1)),
        want(400, "failed in validating parameters")
    );
    assert_eq!(
        with(|p| p.cost = Some(1)),
        want(400, "failed in validating parameters")
    );
    assert_eq!(
        created(ControlParameters::default()),
        want(400, "failed in validating parameters")
    );
    // Nothing refused by the rules reached the forwarder.
    let mut m = manager(Fake::default());
    command(&mut m, 1, "faces/create", create("udp://192.0.2.9:6363"));
    assert!(m.forwarder().created.borrow().is_empty());
}

#[test]
fn create_reports_an_existing_face_with_409_and_failures_with_504() {
    let mut m = manager(Fake::default());
    let mut existing = face(2, false);
    existing.persistency = FacePersistency::OnDemand;
    m.forwarder()
        .create
        .replace(Some(CreateFaceError::Exists(Box::new(existing.clone()))));
    let r = command(&mut m, 1, "faces/create", create(&existing.uri));
    assert_eq!(code(&r), (409, "Face with remote URI already exists"));
    let p = params(&r);
    assert_eq!(
        (p.face_id, p.uri, p.face_persistency, p.flags),
        (
            Some(2),
            Some(existing.uri.clone()),
            Some(FacePersistency::OnDemand),
            Some(FACE_FLAG_CONGESTION_MARKING_ENABLED)
        )
    );
    for (error, want) in [
        (
            CreateFaceError::Failed("Connection timed out".into()),
            (504, "Connection timed out"),
        ),
        (
            CreateFaceError::UnsupportedScheme("x".into()),
            (406, "Unsupported protocol"),
        ),
        (
            CreateFaceError::BadUri("x".into()),
            (400, "Malformed command"),
        ),
    ] {
        m.forwarder().create.replace(Some(error));
        let r = command(&mut m, 1, "faces/create", create("udp4://192.0.2.9:6363"));
        assert_eq!(code(&r), want);
    }
}

#[test]
fn update_changes_the_face_or_answers_what_it_refused() {
    let mut m = manager(Fake::default());
    let all = FACE_FLAG_LOCAL_FIELDS_ENABLED
        | FACE_FLAG_LP_RELIABILITY_ENABLED
        | FACE_FLAG_CONGESTION_MARKING_ENABLED;
    // No FaceId: the requester's face. Only the bits in the Mask change.
    let p = ControlParameters {
        mask: Some(FACE_FLAG_LOCAL_FIELDS_ENABLED | FACE_FLAG_CONGESTION_MARKING_ENABLED),
        flags: Some(all),
        face_persistency: Some(FacePersistency::Permanent),
        default_congestion_threshold: Some(1000),
        ..ControlParameters::default()
    };
    let r = command(&mut m, 1, "faces/update", p);
    assert_eq!(code(&r), (200, "OK"));
    let (id, asked) = m.forwarder().updated.borrow()[0];
    assert_eq!(id, 1);
    assert_eq!(
        asked,
        FaceUpdate {
            persistency: Some(FacePersistency::Permanent),
            local_fields: Some(true),
            lp_reliability: None,
            congestion_marking: Some(true),
            default_congestion_threshold_bytes: Some(1000),
            ..FaceUpdate::default()
        }
    );
    let answered = params(&r);
    let want = ControlParameters {
        face_id: Some(1),
        face_persistency: Some(FacePersistency::Permanent),
        mtu: Some(1400),
        base_congestion_marking_interval: Some(100_000_000),
        default_congestion_threshold: Some(65_536),
        flags: Some(FACE_FLAG_LOCAL_FIELDS_ENABLED | FACE_FLAG_CONGESTION_MARKING_ENABLED),
        ..ControlParameters::default()
    };
    assert_eq!(answered, want);
    // Refused: 409 with what was refused, as asked.
    m.forwarder()
        .update
        .replace(Some(UpdateError::Refused(Refusal {
            local_fields: true,
            persistency: Some(FacePersistency::Permanent),
            mtu: Some(usize::MAX),
        })));
    let p = ControlParameters {
        face_id: Some(2),
        mask: Some(FACE_FLAG_LOCAL_FIELDS_ENABLED),
        flags: Some(FACE_FLAG_LOCAL_FIELDS_ENABLED),
        face_persistency: Some(FacePersistency::Permanent),
        mtu: Some(u64::MAX),
        ..ControlParameters::default()
    };
    let r = command(&mut m, 1, "faces/update", p);
    assert_eq!(code(&r), (409, "Invalid properties specified"));
    let refused = ControlParameters {
        flags: Some(FACE_FLAG_LOCAL_FIELDS_ENABLED),
        mask: Some(FACE_FLAG_LOCAL_FIELDS_ENABLED),
        face_persistency: Some(FacePersistency::Permanent),
        mtu: Some(u64::MAX),
        ..ControlParameters::default()
    };
    assert_eq!(params(&r), refused);
    // No such face; flags without a mask.
    let ghost = ControlParameters {
        face_id: Some(1 << 40),
        ..ControlParameters::default()
    };
    let r = command(&mut m, 1, "faces/update", ghost);
    assert_eq!(code(&r), (404, "Specified face does not exist"));
    let r = command(
        &mut m,
        1,
        "faces/update",
        ControlParameters {
            face_id: Some(99),
            ..ControlParameters::default()
        },
    );
    assert_eq!(code(&r), (404, "Specified face does not exist"));
    let half = ControlParameters {
        flags: Some(1),
        ..ControlParameters::default()
    };
    assert_eq!(code(&command(&mut m, 1, "faces/update", half)).0, 400);
}

#[test]
fn destroy_answers_200_whether_or_not_the_face_exists() {
    let mut m = manager(Fake::default());
    for id in [2, 99, 1 << 40] {
        let p = ControlParameters {
            face_id: Some(id),
            ..ControlParameters::default()
        };
        let r = command(&mut m, 1, "faces/destroy", p.clone());
        assert_eq!((code(&r), params(&r)), ((200, "OK"), p));
    }
    assert_eq!(*m.forwarder().destroyed.borrow(), vec![2, 99]);
    let zero = ControlParameters {
        face_id: Some(0),
        ..ControlParameters::default()
    };
    assert_eq!(
        code(&command(&mut m, 1, "faces/destroy", zero)),
        (400, "failed in validating parameters")
    );
}

#[test]
fn a_face_to_a_loopback_remote_reports_the_loopback_local_address_as_nfd() {
    let mut d = face(300, false);
    let local = |d: &face::FaceDesc| super::properties(d).local_uri;
    // A remote elsewhere: the listener's wildcard address, as the face knows it.
    assert_eq!(local(&d), "udp4://0.0.0.0:6363");
    d.uri = "udp4://127.0.0.1:7000".into();
    assert_eq!(local(&d), "udp4://127.0.0.1:6363");
    d.uri = "tcp6://[::1]:7000".into();
    d.local_uri = "tcp6://[::]:6363".into();
    assert_eq!(local(&d), "tcp6://[::1]:6363");
    // A bound address stays.
    d.local_uri = "tcp6://[::1]:5000".into();
    assert_eq!(local(&d), "tcp6://[::1]:5000");
    // faces/create answers the same LocalUri.
    d.local_uri = "tcp6://[::]:6363".into();
    assert_eq!(
        super::create_response(&d).local_uri.as_deref(),
        Some("tcp6://[::1]:6363")
    );
}
