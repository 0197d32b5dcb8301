//! Writes the seed corpus of the fuzz targets (`fuzz/corpus/<target>/`) from the wire builders,
//! so that the seeds are reproducible:
//!
//! ```text
//! cargo run -p cascade-wire --example gen_fuzz_corpus
//! ```
//!
//! Each target directory is emptied and rewritten: the seeds are generated, not edited by hand.
//! Inputs that crashed a target belong in `fuzz/artifacts-found/<target>/` instead.

use std::fs;
use std::path::Path;

use wire::data::{content_type, signature_type};
use wire::lp::{Nack, NbccSignal, CACHE_POLICY_NO_CACHE};
use wire::nfd::{
    ChannelStatus, ControlParameters, ControlResponse, ControlResponseBody, CsInfo, FaceEventKind,
    FaceEventNotification, FacePersistency, FaceQueryFilter, FaceScope, FaceStatus, FibEntry,
    ForwarderStatus, LinkType, NextHopRecord, RibEntry, Route, StrategyChoice,
    CS_FLAG_ENABLE_ADMIT, CS_FLAG_ENABLE_SERVE, FACE_FLAG_LOCAL_FIELDS_ENABLED,
    ROUTE_FLAG_CHILD_INHERIT,
};
use wire::{tlv, tt};
use wire::{
    Component, Data, Interest, KeyLocator, LpPacket, MetaInfo, NackReason, Name, SignatureInfo,
};

fn name(uri: &str) -> Name {
    Name::from_uri(uri).expect("seed URI")
}

fn interests() -> Vec<(&'static str, Vec<u8>)> {
    let minimal = Interest::new(name("/a"), [1, 2, 3, 4]);
    let flags = Interest {
        name: name("/ndn/edu/ucla/ping/seg=3/v=7"),
        can_be_prefix: true,
        must_be_fresh: true,
        forwarding_hint: vec![name("/isp/a"), name("/isp/b/%00%FF")],
        nonce: Some([0xde, 0xad, 0xbe, 0xef]),
        lifetime_ms: Some(1000),
        hop_limit: Some(32),
        ..Interest::default()
    };
    let params = Interest {
        name: name("/app/cmd"),
        nonce: Some([9, 9, 9, 9]),
        app_params: Some(b"parameters".to_vec()),
        ..Interest::default()
    };
    // Every field: flags, hint, nonce, lifetime, hop limit, parameters and a signature.
    let signed = Interest {
        app_params: Some(vec![0x80, 0x02, 0xAB, 0xCD]),
        signature_info: Some(SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(name("/ndn/KEY/%01%02"))),
            validity_period: None,
            nonce: Some(vec![1, 2, 3, 4, 5, 6, 7, 8]),
            time_ms: Some(1_700_000_000_000),
            seq_num: Some(42),
        }),
        signature_value: Some(vec![0x55; 64]),
        ..flags.clone()
    };
    let typed_name = Interest::new(
        name("/32=foo/seq=5/t=1700000000/off=4096/9=...")
            .with(Component::implicit_digest([0xAB; 32])),
        [0, 0, 0, 0],
    );
    // Legacy ForwardingHint (Delegation with Preference) and an unknown non-critical element.
    let mut legacy = Vec::new();
    tlv::write_nested(&mut legacy, tt::INTEREST, |o| {
        name("/x/y").encode(o);
        tlv::write_tlv(o, 0x40, b"skip me");
        tlv::write_nested(o, tt::FORWARDING_HINT, |o| {
            tlv::write_nested(o, tt::DELEGATION, |o| {
                tlv::write_nni_tlv(o, tt::PREFERENCE, 10);
                name("/isp").encode(o);
            })
        });
        tlv::write_tlv(o, tt::NONCE, &[7, 7, 7, 7]);
        // A 2-byte InterestLifetime written as 4 bytes (non-minimal NonNegativeInteger).
        tlv::write_tlv(o, tt::INTEREST_LIFETIME, &[0, 0, 0x0F, 0xA0]);
    });
    vec![
        ("interest-minimal", minimal.to_wire()),
        ("interest-flags-hint-lifetime-hoplimit", flags.to_wire()),
        ("interest-app-params", params.to_wire()),
        ("interest-every-field-signed", signed.to_wire()),
        ("interest-typed-components", typed_name.to_wire()),
        ("interest-legacy-delegation", legacy),
    ]
}

fn datas() -> Vec<(&'static str, Vec<u8>)> {
    let mut digest = Data::new(name("/ndn/data/v=1/seg=0"), b"hello, world".to_vec());
    digest.meta_info = Some(MetaInfo {
        content_type: Some(content_type::BLOB),
        freshness_ms: Some(10_000),
        final_block_id: Some(Component::segment(0)),
    });
    digest.sign_digest_sha256();

    let mut bare = Data::new(name("/b"), Vec::new());
    bare.sign_digest_sha256();

    let mut no_content = Data {
        name: name("/c/d"),
        meta_info: Some(MetaInfo::default()),
        ..Data::default()
    };
    no_content.sign_digest_sha256();

    let mut empty_name = Data::new(Name::new(), b"x".to_vec());
    empty_name.sign_digest_sha256();

    let mut key_name = Data::new(name("/k/KEY/1/self/v=1"), vec![0x30; 91]);
    key_name.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_ms: Some(3_600_000),
        final_block_id: None,
    });
    key_name.signature_info = SignatureInfo {
        signature_type: signature_type::SHA256_WITH_ECDSA,
        key_locator: Some(KeyLocator::Name(name("/k/KEY/1"))),
        validity_period: Some(vec![
            0xFD, 0x00, 0xFE, 0x0F, b'2', b'0', b'2', b'4', b'0', b'1', b'0', b'1', b'T', b'0',
            b'0', b'0', b'0', b'0', b'0', 0xFD, 0x00, 0xFF, 0x0F, b'2', b'0', b'3', b'4', b'0',
            b'1', b'0', b'1', b'T', b'0', b'0', b'0', b'0', b'0', b'0',
        ]),
        ..SignatureInfo::default()
    };
    key_name.signature_value = vec![0x66; 70];

    let mut key_digest = Data::new(name("/e"), b"nack".to_vec());
    key_digest.meta_info = Some(MetaInfo {
        content_type: Some(content_type::NACK),
        freshness_ms: None,
        final_block_id: Some(Component::generic(b"last".to_vec())),
    });
    key_digest.signature_info = SignatureInfo {
        signature_type: signature_type::HMAC_WITH_SHA256,
        key_locator: Some(KeyLocator::KeyDigest(vec![0x11; 32])),
        ..SignatureInfo::default()
    };
    key_digest.signature_value = vec![0x22; 32];

    vec![
        ("data-digest-sha256-metainfo", digest.to_wire()),
        ("data-digest-sha256-empty-content", bare.to_wire()),
        ("data-digest-sha256-no-content", no_content.to_wire()),
        ("data-digest-sha256-empty-name", empty_name.to_wire()),
        ("data-ecdsa-keylocator-name", key_name.to_wire()),
        ("data-hmac-keylocator-digest", key_digest.to_wire()),
    ]
}

fn lp_packets() -> Vec<(&'static str, Vec<u8>)> {
    let interest = Interest::new(name("/a/b"), [1, 2, 3, 4]).to_wire();
    let mut data = Data::new(name("/a/b"), vec![0x42; 100]);
    data.sign_digest_sha256();
    let data = data.to_wire();
    let half = data.len() / 2;

    let mut out = Vec::new();
    for (label, reason) in [
        ("lp-nack-congestion", NackReason::Congestion),
        ("lp-nack-duplicate", NackReason::Duplicate),
        ("lp-nack-noroute", NackReason::NoRoute),
        ("lp-nack-unknown-reason", NackReason::Other(77)),
    ] {
        out.push((label, LpPacket::nack(interest.clone(), reason).to_wire()));
    }
    out.push((
        "lp-nack-no-reason",
        LpPacket {
            nack: Some(Nack { reason: None }),
            fragment: Some(interest.clone()),
            ..LpPacket::default()
        }
        .to_wire(),
    ));
    for (label, index, piece) in [
        ("lp-fragment-0-of-2", 0, &data[..half]),
        ("lp-fragment-1-of-2", 1, &data[half..]),
    ] {
        let lp = LpPacket {
            sequence: Some(0x1000 + index),
            frag_index: Some(index),
            frag_count: Some(2),
            fragment: Some(piece.to_vec()),
            ..LpPacket::default()
        };
        out.push((label, lp.to_wire()));
    }
    out.push((
        "lp-pit-token-interest",
        LpPacket {
            pit_token: Some(vec![0xA0, 0xA1, 0xA2, 0xA3]),
            fragment: Some(interest.clone()),
            ..LpPacket::default()
        }
        .to_wire(),
    ));
    out.push((
        "lp-pit-token-congestion-mark-data",
        LpPacket {
            pit_token: Some(vec![0xA0, 0xA1, 0xA2, 0xA3]),
            congestion_mark: Some(1),
            fragment: Some(data.clone()),
            ..LpPacket::default()
        }
        .to_wire(),
    ));
    out.push((
        "lp-idle-acks",
        LpPacket {
            acks: vec![1, 2, 0x0102_0304_0506_0708],
            tx_sequence: Some(5),
            ..LpPacket::default()
        }
        .to_wire(),
    ));
    out.push((
        "lp-every-header-field",
        LpPacket {
            sequence: Some(7),
            frag_index: Some(0),
            frag_count: Some(1),
            hop_count: Some(3),
            pit_token: Some(vec![0x01; 32]),
            nack: None,
            next_hop_face_id: Some(260),
            incoming_face_id: Some(300),
            cache_policy: Some(CACHE_POLICY_NO_CACHE),
            congestion_mark: Some(2),
            acks: vec![6],
            tx_sequence: Some(8),
            non_discovery: true,
            prefix_announcement: Some(vec![0x06, 0x00]),
            nbcc: Some(NbccSignal::Alpha),
            fragment: Some(data.clone()),
        }
        .to_wire(),
    ));
    // Header fields as other encoders write them: 1-byte Sequence, an ignorable unknown field.
    let mut raw = Vec::new();
    tlv::write_nested(&mut raw, tt::LP_PACKET, |o| {
        tlv::write_tlv(o, tt::LP_SEQUENCE, &[5]);
        tlv::write_tlv(o, 804, &[0xEE]);
        tlv::write_tlv(o, tt::LP_FRAGMENT, &interest);
    });
    out.push(("lp-short-sequence-ignorable-field", raw));
    out
}

fn names() -> Vec<(&'static str, Vec<u8>)> {
    let long = Name::new().with(Component::generic(vec![b'z'; 300]));
    let big_type = Name::new().with(Component {
        typ: 300,
        value: b"t".to_vec(),
    });
    let digests = name("/d")
        .with(Component::implicit_digest([0x5A; 32]))
        .with(Component::parameters_digest([0xA5; 32]));
    vec![
        ("name-root", Name::new().to_wire()),
        ("name-one", name("/a").to_wire()),
        (
            "name-naming-conventions",
            name("/ndn/seg=3/v=1000/off=0/t=5/seq=7").to_wire(),
        ),
        (
            "name-periods-and-escapes",
            name("/.../..../%00%FF/~x-_.").to_wire(),
        ),
        ("name-typed", name("/32=foo/9=.../65535=%01").to_wire()),
        ("name-digests", digests.to_wire()),
        ("name-long-component", long.to_wire()),
        ("name-type-300", big_type.to_wire()),
    ]
}

fn uris() -> Vec<(&'static str, Vec<u8>)> {
    let hex = "ab".repeat(32);
    [
        ("uri-root", "/".to_string()),
        ("uri-plain", "/a/b/c".to_string()),
        ("uri-scheme", "ndn:/a/b".to_string()),
        ("uri-authority", "ndn://host/a".to_string()),
        ("uri-escapes", "/hello%20world/~x/%00%ff".to_string()),
        ("uri-periods", "/.../..../.....".to_string()),
        (
            "uri-conventions",
            "/seg=3/v=1000/off=0/t=5/seq=7".to_string(),
        ),
        ("uri-typed", "/32=foo/8=bar/9=...".to_string()),
        ("uri-implicit-digest", format!("/x/sha256digest={hex}")),
        ("uri-params-digest", format!("/params-sha256={hex}")),
        ("uri-trailing-slash-space", " /a/ ".to_string()),
        ("uri-utf8", "/caf\u{e9}/\u{1F980}".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.into_bytes()))
    .collect()
}

fn frames() -> Vec<(&'static str, Vec<u8>)> {
    let i = Interest::new(name("/a"), [1, 2, 3, 4]).to_wire();
    let mut d = Data::new(name("/a"), vec![0; 300]);
    d.sign_digest_sha256();
    let d = d.to_wire();
    let lp = LpPacket::nack(i.clone(), NackReason::NoRoute).to_wire();
    let mut stream = i.clone();
    stream.extend_from_slice(&lp);
    vec![
        ("frame-interest", i.clone()),
        ("frame-data-3-byte-length", d.clone()),
        ("frame-lp", lp),
        ("frame-two-packets", stream),
        ("frame-truncated", d[..10].to_vec()),
        ("frame-header-only", vec![0x06, 0xFD, 0x01]),
        ("frame-oversize", vec![0x06, 0xFD, 0x30, 0x00]),
        (
            "frame-5-byte-type",
            vec![0xFE, 0x00, 0x01, 0x00, 0x00, 0x00],
        ),
    ]
}

fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    f(&mut out);
    out
}

/// The FibEntry seed, also the raw body of a ControlResponse seed.
fn sample_fib_entry() -> FibEntry {
    FibEntry {
        name: name("/ndn"),
        next_hops: vec![
            NextHopRecord {
                face_id: 300,
                cost: 10,
            },
            NextHopRecord {
                face_id: 301,
                cost: 20,
            },
        ],
    }
}

/// `mgmt` seeds: management commands and responses, then the status dataset entries.
fn mgmt() -> Vec<(&'static str, Vec<u8>)> {
    let mut seeds = control_seeds();
    seeds.extend(dataset_seeds());
    seeds
}

/// ControlParameters and ControlResponse seeds.
fn control_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let all_params = ControlParameters {
        name: Some(name("/ndn/prefix")),
        face_id: Some(300),
        uri: Some("udp4://192.0.2.1:6363".to_string()),
        local_uri: Some("udp4://192.0.2.2:6363".to_string()),
        origin: Some(255),
        cost: Some(10),
        capacity: Some(65536),
        count: Some(3),
        base_congestion_marking_interval: Some(100_000_000),
        default_congestion_threshold: Some(65536),
        mtu: Some(8800),
        flags: Some(FACE_FLAG_LOCAL_FIELDS_ENABLED),
        mask: Some(FACE_FLAG_LOCAL_FIELDS_ENABLED),
        strategy: Some(name("/localhost/nfd/strategy/best-route/v=5")),
        expiration_period: Some(3_600_000),
        face_persistency: Some(FacePersistency::Permanent),
    };
    let route_params = ControlParameters {
        name: Some(name("/app")),
        face_id: Some(260),
        origin: Some(0),
        cost: Some(0),
        flags: Some(ROUTE_FLAG_CHILD_INHERIT),
        ..ControlParameters::default()
    };
    let mut raw_body = Vec::new();
    sample_fib_entry().encode(&mut raw_body);
    let raw = ControlResponse {
        body: Some(ControlResponseBody::Raw(raw_body)),
        ..ControlResponse::new(200, "OK")
    };
    vec![
        (
            "control-parameters-every-field",
            enc(|o| all_params.encode(o)),
        ),
        ("control-parameters-route", enc(|o| route_params.encode(o))),
        (
            "control-response-parameters",
            enc(|o| ControlResponse::with_parameters(200, "OK", route_params.clone()).encode(o)),
        ),
        (
            "control-response-error",
            enc(|o| ControlResponse::new(404, "Face not found").encode(o)),
        ),
        ("control-response-raw-body", enc(|o| raw.encode(o))),
    ]
}

/// FaceStatus seeds: one entry, and a dataset of two.
fn face_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let face = FaceStatus {
        face_id: 300,
        uri: "tcp4://192.0.2.1:6363".to_string(),
        local_uri: "tcp4://192.0.2.2:50000".to_string(),
        expiration_period: Some(1000),
        face_scope: FaceScope::NonLocal,
        face_persistency: FacePersistency::OnDemand,
        link_type: LinkType::PointToPoint,
        base_congestion_marking_interval: Some(100_000_000),
        default_congestion_threshold: Some(65536),
        mtu: Some(8800),
        n_in_interests: 1,
        n_in_data: 2,
        n_in_nacks: 3,
        n_out_interests: 4,
        n_out_data: 5,
        n_out_nacks: 6,
        n_in_bytes: 70_000,
        n_out_bytes: 80_000_000_000,
        flags: FACE_FLAG_LOCAL_FIELDS_ENABLED,
    };
    let local_face = FaceStatus {
        face_id: 1,
        uri: "internal://".to_string(),
        local_uri: "internal://".to_string(),
        face_scope: FaceScope::Local,
        face_persistency: FacePersistency::Permanent,
        link_type: LinkType::Other(9),
        ..FaceStatus::default()
    };
    let mut faces = enc(|o| face.encode(o));
    local_face.encode(&mut faces);
    let event = FaceEventNotification {
        kind: FaceEventKind::Destroyed,
        face_id: 300,
        uri: face.uri.clone(),
        local_uri: face.local_uri.clone(),
        face_scope: FaceScope::NonLocal,
        face_persistency: FacePersistency::OnDemand,
        link_type: LinkType::PointToPoint,
        flags: FACE_FLAG_LOCAL_FIELDS_ENABLED,
    };
    let filter = FaceQueryFilter {
        face_id: Some(300),
        uri_scheme: Some("tcp4".to_string()),
        uri: Some(face.uri.clone()),
        local_uri: Some(face.local_uri.clone()),
        face_scope: Some(FaceScope::NonLocal),
        face_persistency: Some(FacePersistency::OnDemand),
        link_type: Some(LinkType::PointToPoint),
    };
    let channel = ChannelStatus {
        local_uri: "unix:///run/nfd/nfd.sock".to_string(),
    };
    vec![
        ("face-status", enc(|o| face.encode(o))),
        ("face-status-dataset-two", faces),
        ("face-event-notification", enc(|o| event.encode(o))),
        ("face-query-filter", enc(|o| filter.encode(o))),
        ("channel-status", enc(|o| channel.encode(o))),
    ]
}

/// Status dataset entry seeds.
fn dataset_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let status = ForwarderStatus {
        nfd_version: "0.7.1-cascade".to_string(),
        start_timestamp: 1_700_000_000_000,
        current_timestamp: 1_700_000_360_000,
        n_name_tree_entries: 20,
        n_fib_entries: 5,
        n_pit_entries: 2,
        n_measurements_entries: 1,
        n_cs_entries: 100,
        n_in_interests: 1000,
        n_in_data: 900,
        n_in_nacks: 10,
        n_out_interests: 950,
        n_out_data: 880,
        n_out_nacks: 5,
        n_satisfied_interests: 870,
        n_unsatisfied_interests: 30,
    };
    let fib = sample_fib_entry();
    let route = Route {
        face_id: 300,
        origin: 255,
        cost: 10,
        flags: ROUTE_FLAG_CHILD_INHERIT,
        expiration_period: Some(60_000),
    };
    let rib = RibEntry {
        name: name("/ndn"),
        routes: vec![
            route,
            Route {
                expiration_period: None,
                origin: 128,
                ..route
            },
        ],
    };
    let cs = CsInfo {
        capacity: 65536,
        flags: CS_FLAG_ENABLE_ADMIT | CS_FLAG_ENABLE_SERVE,
        n_cs_entries: 100,
        n_hits: 7,
        n_misses: 3,
    };
    let choice = StrategyChoice {
        name: name("/"),
        strategy: name("/localhost/nfd/strategy/multicast/v=4"),
    };
    let mut seeds = vec![("forwarder-status", enc(|o| status.encode(o)))];
    seeds.extend(face_seeds());
    seeds.extend([
        ("fib-entry", enc(|o| fib.encode(o))),
        ("next-hop-record", enc(|o| fib.next_hops[0].encode(o))),
        ("rib-entry", enc(|o| rib.encode(o))),
        ("route", enc(|o| route.encode(o))),
        ("cs-info", enc(|o| cs.encode(o))),
        ("strategy-choice", enc(|o| choice.encode(o))),
    ]);
    seeds
}

fn write_target(root: &Path, target: &str, seeds: Vec<(&str, Vec<u8>)>) -> usize {
    let dir = root.join(target);
    if dir.exists() {
        fs::remove_dir_all(&dir).expect("clear the seed directory");
    }
    fs::create_dir_all(&dir).expect("create the seed directory");
    let mut total = 0;
    for (label, bytes) in seeds {
        fs::write(dir.join(label), &bytes).expect("write a seed");
        total += bytes.len();
    }
    println!("{}: {total} bytes", dir.display());
    total
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    fs::create_dir_all(&root).expect("create fuzz/corpus");
    let root = root.canonicalize().expect("fuzz/corpus");
    let mut packets = interests();
    packets.extend(datas());
    packets.extend(lp_packets());
    let mut total = write_target(&root, "packet", packets);
    total += write_target(&root, "name", names());
    total += write_target(&root, "uri", uris());
    total += write_target(&root, "frame", frames());
    total += write_target(&root, "mgmt", mgmt());
    println!("seed corpus: {total} bytes");
}
