//! The text and JSON of `render`, against nfdc's formats computed by hand.

use super::*;
use wire::nfd::NextHopRecord;

fn name(s: &str) -> Name {
    Name::from_uri(s).unwrap()
}

fn rib() -> Vec<RibEntry> {
    vec![RibEntry {
        name: name("/a/b"),
        routes: vec![
            Route {
                face_id: 260,
                origin: 255,
                cost: 10,
                flags: ROUTE_FLAG_CHILD_INHERIT | ROUTE_FLAG_CAPTURE,
                expiration_period: None,
            },
            Route {
                face_id: 261,
                origin: 0,
                cost: 0,
                flags: 0,
                expiration_period: Some(5000),
            },
        ],
    }]
}

#[test]
fn routes_and_fib_as_nfdc() {
    assert_eq!(
        routes(&rib(), |_, _| true, false).unwrap(),
        "prefix=/a/b nexthop=260 origin=static cost=10 flags=child-inherit|capture \
         expires=never\n\
         prefix=/a/b nexthop=261 origin=app cost=0 flags=none expires=5s\n"
    );
    let only = routes(&rib(), |_, r| r.face_id == 261, true).unwrap();
    let j: Value = serde_json::from_str(only.trim()).unwrap();
    assert_eq!(j["routes"][0]["expiration_period_ms"], 5000);
    assert_eq!(j["routes"].as_array().unwrap().len(), 1);
    let none = routes(&rib(), |n, _| *n == name("/a"), false)
        .err()
        .unwrap();
    assert_eq!((none.status, none.message.as_str()), (6, "Route not found"));
    let fib_entries = vec![FibEntry {
        name: name("/"),
        next_hops: vec![
            NextHopRecord {
                face_id: 1,
                cost: 0,
            },
            NextHopRecord {
                face_id: 2,
                cost: 5,
            },
        ],
    }];
    assert_eq!(
        fib(&fib_entries, false),
        "FIB:\n  / nexthops={faceid=1 (cost=0), faceid=2 (cost=5)}\n"
    );
    assert_eq!(route_flags_str(0x6), "capture|0x4");
    assert_eq!(origin_str(128), "nlsr");
    assert_eq!(origin_str(7), "7");
}

#[test]
fn command_results_as_nfdc() {
    let p = ControlParameters {
        name: Some(name("/p")),
        face_id: Some(7),
        origin: Some(255),
        cost: Some(3),
        flags: Some(ROUTE_FLAG_CHILD_INHERIT),
        expiration_period: Some(10_000),
        ..ControlParameters::default()
    };
    assert_eq!(
        route_added(&p, false),
        "route-add-accepted prefix=/p nexthop=7 origin=static cost=3 flags=child-inherit \
         expires=10000ms\n"
    );
    assert_eq!(
        route_removed(&p, false),
        "route-removed prefix=/p nexthop=7 origin=static\n"
    );
    let f = ControlParameters {
        face_id: Some(300),
        uri: Some("udp4://192.0.2.1:6363".into()),
        local_uri: Some("udp4://192.0.2.9:6363".into()),
        face_persistency: Some(FacePersistency::Persistent),
        flags: Some(FACE_FLAG_CONGESTION_MARKING_ENABLED),
        base_congestion_marking_interval: Some(100_000_000),
        mtu: Some(1400),
        ..ControlParameters::default()
    };
    assert_eq!(
        face_params("face-created", &f, false),
        "face-created id=300 local=udp4://192.0.2.9:6363 remote=udp4://192.0.2.1:6363 \
         persistency=persistent reliability=off congestion-marking=on \
         congestion-marking-interval=100ms mtu=1400\n"
    );
    let j: Value = serde_json::from_str(face_params("face-created", &f, true).trim()).unwrap();
    assert_eq!(
        (j["result"].clone(), j["id"].clone()),
        (json!("face-created"), json!(300))
    );
    let cs = ControlParameters {
        capacity: Some(100),
        flags: Some(CS_FLAG_ENABLE_SERVE),
        ..ControlParameters::default()
    };
    assert_eq!(
        cs_config(&cs, false),
        "cs-config-updated capacity=100 admit=off serve=on\n"
    );
    assert_eq!(
        cs_erased(&name("/x"), 4, false),
        "cs-erased prefix=/x count=4\n"
    );
    let s = ControlParameters {
        name: Some(name("/x")),
        strategy: Some(name("/localhost/nfd/strategy/multicast/v=4")),
        ..ControlParameters::default()
    };
    assert_eq!(
        strategy_set(&s, false),
        "strategy-set prefix=/x strategy=/localhost/nfd/strategy/multicast/v=4\n"
    );
    assert_eq!(strategy_unset(&s, false), "strategy-unset prefix=/x\n");
}

#[test]
fn faces_as_nfdc() {
    let f = FaceStatus {
        face_id: 262,
        uri: "udp4://192.0.2.1:6363".into(),
        local_uri: "udp4://192.0.2.9:6363".into(),
        expiration_period: Some(599_500),
        face_scope: FaceScope::NonLocal,
        face_persistency: FacePersistency::OnDemand,
        link_type: LinkType::PointToPoint,
        default_congestion_threshold: Some(65536),
        mtu: Some(8800),
        n_in_interests: 1,
        n_in_data: 2,
        n_in_nacks: 3,
        n_in_bytes: 4,
        n_out_interests: 5,
        n_out_data: 6,
        n_out_nacks: 7,
        n_out_bytes: 8,
        flags: FACE_FLAG_LOCAL_FIELDS_ENABLED | FACE_FLAG_CONGESTION_MARKING_ENABLED,
        ..FaceStatus::default()
    };
    assert_eq!(
        faces(std::slice::from_ref(&f), false),
        "faceid=262 remote=udp4://192.0.2.1:6363 local=udp4://192.0.2.9:6363 expires=599s \
         congestion={default-threshold=65536B} mtu=8800 \
         counters={in={1i 2d 3n 4B} out={5i 6d 7n 8B}} \
         flags={non-local on-demand point-to-point local-fields congestion-marking}\n"
    );
    let show = face_show(&f, false);
    assert!(
        show.starts_with("    faceid=262\n    remote=udp4://192.0.2.1:6363\n"),
        "{show}"
    );
    assert!(
        show.ends_with(
            "\n     flags={non-local on-demand point-to-point local-fields congestion-marking}\n"
        ),
        "{show}"
    );
    let j: Value = serde_json::from_str(faces(&[f], true).trim()).unwrap();
    assert_eq!(j["face_id"], 262);
}

#[test]
fn status_and_strategy_as_nfdc() {
    let s = ForwarderStatus {
        nfd_version: "cascade-0.1.0".into(),
        // 2026-11-24T15:20:30.123Z and 61 s later, on the second.
        start_timestamp: 1_795_533_630_123,
        current_timestamp: 1_795_533_691_000,
        n_pit_entries: 4,
        ..ForwarderStatus::default()
    };
    let t = status(&s, false);
    assert!(
        t.starts_with("General NFD status:\n                version=cascade-0.1.0\n"),
        "{t}"
    );
    assert!(
        t.contains("\n              startTime=20261124T152030.123000\n"),
        "{t}"
    );
    assert!(
        t.contains("\n            currentTime=20261124T152131\n"),
        "{t}"
    );
    assert!(t.contains("\n                 uptime=60 seconds\n"), "{t}");
    assert!(t.ends_with("\n  nUnsatisfiedInterests=0\n"), "{t}");
    assert_eq!(iso_time(951_782_400_000), "20000229T000000");
    assert_eq!(iso_time(0), "19700101T000000");
    let j: Value = serde_json::from_str(status(&s, true).trim()).unwrap();
    assert_eq!(j["n_pit_entries"], 4);
    let sc = StrategyChoice {
        name: name("/"),
        strategy: name("/localhost/nfd/strategy/best-route/v=5"),
    };
    assert_eq!(
        strategies(std::slice::from_ref(&sc), false),
        "prefix=/ strategy=/localhost/nfd/strategy/best-route/v=5\n"
    );
    assert_eq!(
        strategy_show(&sc, false),
        "  prefix=/\nstrategy=/localhost/nfd/strategy/best-route/v=5\n"
    );
    let r = Report {
        general: s,
        channels: vec![ChannelStatus {
            local_uri: "udp4://0.0.0.0:6363".into(),
        }],
        faces: vec![],
        fib: vec![],
        rib: rib(),
        cs: CsInfo::default(),
        strategies: vec![sc],
    };
    let t = report(&r, false);
    assert!(t.contains("Channels:\n  udp4://0.0.0.0:6363\nFaces:\nFIB:\nRIB:\n  /a/b routes={nexthop=260 origin=static cost=10 flags=child-inherit|capture expires=never, nexthop=261 origin=app cost=0 flags=none expires=5s}\nCS information:\n"), "{t}");
    assert!(
        t.ends_with(
            "Strategy choices:\n  prefix=/ strategy=/localhost/nfd/strategy/best-route/v=5\n"
        ),
        "{t}"
    );
    let j: Value = serde_json::from_str(report(&r, true).trim()).unwrap();
    assert_eq!(j["rib"][0]["routes"][1]["face_id"], 261);
    assert_eq!(j["channels"][0]["local"], "udp4://0.0.0.0:6363");
}

#[test]
fn cs_render() {
    let info = CsInfo {
        capacity: 100,
        flags: CS_FLAG_ENABLE_ADMIT,
        n_cs_entries: 3,
        n_hits: 2,
        n_misses: 1,
    };
    let t = cs(&info, &[], None, false);
    assert!(t.contains("admit=on") && t.contains("serve=off"), "{t}");
    assert!(!t.contains("L2"), "{t}");
    let j: Value = serde_json::from_str(cs(&info, &[], None, true).trim()).unwrap();
    assert_eq!(
        (j["serve"].clone(), j["n_hits"].clone()),
        (json!(false), json!(2))
    );
    assert!(j.get("l2").is_none());
    let l2 = CsTierInfo {
        level: 2,
        workers: 2,
        capacity: 1000,
        n_entries: 40,
        n_prefetched: 8,
        n_prefetch_used: 6,
        n_ahead_offered: 5,
        n_ahead_reads: 3,
        n_name_mismatches: 7,
        n_workers_off: 1,
        n_io_errors: 2,
        n_input_held: 11,
        n_deferred: 12,
        n_prefix_lookups: 13,
        n_prefix_pending: 14,
        n_prefix_stale: 15,
        n_prefix_handovers: 16,
        n_prefix_handovers_full: 17,
        n_prefix_missed: 18,
        ..CsTierInfo::default()
    };
    let t = cs(&info, &[l2], None, false);
    assert!(
        t.contains("L2 tier (disk, 2 workers)") && t.contains("nEntries=40"),
        "{t}"
    );
    assert!(t.contains("used=6 (75.0%)"), "{t}");
    assert!(t.contains("readAhead offered=5 reads=3"), "{t}");
    assert!(t.contains("nameMismatches=7"), "{t}");
    assert!(t.contains("workersOff=1 ioErrors=2"), "{t}");
    assert!(t.contains("  inputHeld=11 deferred=12\n"), "{t}");
    assert!(
        t.contains("  prefixLookups=13 pending=14 stale=15 missed=18\n"),
        "{t}"
    );
    assert!(t.contains("  prefixHandovers=16 full=17\n"), "{t}");
    let nb = NbCacheInfo {
        n_queue_bypasses: 9,
        ..NbCacheInfo::default()
    };
    assert!(cs(&info, &[l2], Some(&nb), false).contains("NB-Cache:\n"));
    assert!(!t.contains("NB-Cache"), "{t}");
    let j: Value = serde_json::from_str(cs(&info, &[l2], Some(&nb), true).trim()).unwrap();
    assert_eq!(j["nbcache"]["n_queue_bypasses"], 9);
    assert_eq!(j["l2"]["n_entries"], 40);
    assert_eq!(
        (
            j["l2"]["n_name_mismatches"].clone(),
            j["l2"]["n_workers_off"].clone(),
            j["l2"]["n_io_errors"].clone()
        ),
        (json!(7), json!(1), json!(2))
    );
    assert_eq!(j["l2"]["prefetch_usefulness"], 0.75);
    for (key, v) in [
        ("n_input_held", 11),
        ("n_deferred", 12),
        ("n_prefix_lookups", 13),
        ("n_prefix_pending", 14),
        ("n_prefix_stale", 15),
        ("n_prefix_handovers", 16),
        ("n_prefix_handovers_full", 17),
        ("n_prefix_missed", 18),
    ] {
        assert_eq!(j["l2"][key], v, "{key}");
    }
    assert_eq!(
        (
            j["l2"]["n_ahead_offered"].clone(),
            j["l2"]["n_ahead_reads"].clone()
        ),
        (json!(5), json!(3))
    );
    assert_eq!(
        j["n_entries"], 3,
        "the RAM tier's fields stay where they were"
    );
}
