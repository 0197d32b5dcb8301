//! Command dispatch and datasets against a fake forwarder.

use face::{encode_link, FaceCounters, LpHeaders, PitToken};
use wire::nfd::{
    decode_dataset, ChannelStatus, ControlParameters, CsInfo, FaceEventKind, FaceEventNotification,
    FacePersistency, FaceQueryFilter, FaceStatus, ForwarderStatus, RibEntry, StrategyChoice,
};
use wire::{Component, DataView, Interest};

use super::*;
use crate::fake::*;
use crate::forwarder::WorkerStats;
use crate::rib::FIB_ORIGIN;
use crate::test_support::{cp_component, v03_interest};
use crate::CsTierInfo;

#[test]
fn rib_register_and_unregister() {
    let mut m = manager(Fake::default());
    let p = ControlParameters {
        name: Some(name("/a")),
        face_id: Some(2),
        cost: Some(10),
        ..ControlParameters::default()
    };
    let r = command(&mut m, 1, "rib/register", p.clone());
    assert_eq!(code(&r), (200, "Success"));
    let echoed = params(&r);
    assert_eq!(
        (echoed.origin, echoed.cost, echoed.flags, echoed.face_id),
        (Some(0), Some(10), Some(1), Some(2))
    );
    assert_eq!(m.rib().next_hops(&name("/a")), &[(2, 10)]);
    // No FaceId: the face the command came from; an expiration period is kept.
    let mine = ControlParameters {
        name: Some(name("/b")),
        origin: Some(65),
        expiration_period: Some(60_000),
        ..ControlParameters::default()
    };
    let r = command(&mut m, 1, "rib/register", mine);
    assert_eq!(params(&r).expiration_period, Some(60_000));
    let route = &m.rib().routes(&name("/b"))[0];
    assert_eq!((route.face, route.origin), (1, 65));
    assert!(route.expires_ms.is_some_and(|e| e >= 60_000));
    // rib/list lists both, in name order (and management's own route, as NFD).
    let listed = decode_dataset(&dataset(&mut m, "rib/list"), RibEntry::from_element).unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[2].name, name("/localhost/nfd"));
    assert_eq!(listed[0].name, name("/a"));
    assert_eq!(listed[1].routes[0].origin, 65);
    assert!(listed[1].routes[0].expiration_period.unwrap() <= 60_000);
    // Unregistering answers 200 even when there was nothing to remove; it takes no Cost.
    assert_eq!(
        code(&command(&mut m, 1, "rib/unregister", p.clone())),
        (400, "failed in validating parameters")
    );
    let p = ControlParameters { cost: None, ..p };
    let r = command(&mut m, 1, "rib/unregister", p.clone());
    assert_eq!(code(&r), (200, "Success"));
    assert_eq!(params(&r).cost, None);
    assert!(m.rib().routes(&name("/a")).is_empty());
    assert_eq!(code(&command(&mut m, 1, "rib/unregister", p)).0, 200);
    // A face that went down takes its routes.
    m.face_down(1);
    assert!(m.rib().routes(&name("/b")).is_empty());
}

#[test]
fn refused_commands() {
    let mut m = manager(Fake::default());
    let to_face_9 = ControlParameters {
        name: Some(name("/a")),
        face_id: Some(9),
        ..ControlParameters::default()
    };
    // NFD answers a registration to a missing face with 200, and adds nothing.
    let r = command(&mut m, 1, "rib/register", to_face_9.clone());
    assert_eq!(code(&r), (200, "Success"));
    assert!(m.rib().routes(&name("/a")).is_empty());
    let r = command(&mut m, 1, "fib/add-nexthop", to_face_9);
    assert_eq!(code(&r), (410, "Face not found"));
    let nameless = ControlParameters::default();
    assert_eq!(
        code(&command(&mut m, 1, "rib/register", nameless.clone())).0,
        400
    );
    assert_eq!(
        code(&command(&mut m, 1, "cs/erase", nameless.clone())).0,
        400
    );
    assert_eq!(
        code(&command(&mut m, 1, "faces/create", nameless.clone())).0,
        400
    );
    assert_eq!(
        code(&command(&mut m, 1, "faces/destroy", nameless.clone())).0,
        400
    );
    for what in [
        "rib/add-nexthop",
        "fib/register",
        "faces/list-all",
        "nope/verb",
    ] {
        let r = command(&mut m, 1, what, nameless.clone());
        assert_eq!(code(&r), (501, "Unknown command"), "{what}");
    }
    // From a non-local face: 403, and nothing happens.
    let p = ControlParameters {
        name: Some(name("/a")),
        ..ControlParameters::default()
    };
    assert_eq!(code(&command(&mut m, 2, "rib/register", p)).0, 403);
    assert_eq!(m.rib().iter().count(), 0);
    // Too long a prefix.
    let long = ControlParameters {
        name: Some(Name::from_uri(&"/x".repeat(40)).unwrap()),
        ..ControlParameters::default()
    };
    let r = command(&mut m, 1, "rib/register", long);
    assert_eq!(code(&r), (414, "Route prefix cannot exceed 32 components"));
}

#[test]
fn fib_next_hops_are_routes_rib_list_does_not_show() {
    let mut m = manager(Fake::default());
    let p = ControlParameters {
        name: Some(name("/n")),
        face_id: Some(2),
        cost: Some(3),
        ..ControlParameters::default()
    };
    // fib/add-nexthop takes no Flags, ExpirationPeriod or Origin (NFD refuses them).
    let extra = ControlParameters {
        flags: Some(7),
        expiration_period: Some(5),
        ..p.clone()
    };
    let r = command(&mut m, 1, "fib/add-nexthop", extra);
    assert_eq!(code(&r), (400, "failed in validating parameters"));
    let r = command(&mut m, 1, "fib/add-nexthop", p.clone());
    assert_eq!(code(&r), (200, "Success"));
    let echoed = params(&r);
    assert_eq!(
        (
            echoed.origin,
            echoed.flags,
            echoed.expiration_period,
            echoed.cost
        ),
        (None, None, None, Some(3))
    );
    let route = m.rib().routes(&name("/n"))[0].clone();
    assert_eq!(
        (route.origin, route.flags, route.expires_ms),
        (FIB_ORIGIN, 0, None)
    );
    assert_eq!(m.rib().next_hops(&name("/n")), &[(2, 3)]);
    let listed = decode_dataset(&dataset(&mut m, "rib/list"), RibEntry::from_element).unwrap();
    assert!(listed.iter().all(|e| e.name != name("/n")));
    assert!(!dataset(&mut m, "fib/list").is_empty());
    let remove = ControlParameters { cost: None, ..p };
    assert_eq!(
        code(&command(&mut m, 1, "fib/remove-nexthop", remove)).0,
        200
    );
    let fib = decode_dataset(
        &dataset(&mut m, "fib/list"),
        wire::nfd::FibEntry::from_element,
    )
    .unwrap();
    assert!(fib.iter().all(|e| e.name != name("/n")));
}

#[test]
fn strategy_choices() {
    let mut m = manager(Fake::default());
    let set = |prefix: &str, strategy: &str| ControlParameters {
        name: Some(name(prefix)),
        strategy: Some(name(strategy)),
        ..ControlParameters::default()
    };
    let r = command(
        &mut m,
        1,
        "strategy-choice/set",
        set("/m", "/localhost/nfd/strategy/multicast"),
    );
    assert_eq!(code(&r).0, 200);
    let chosen = params(&r).strategy.unwrap();
    assert_eq!(
        chosen,
        name("/localhost/nfd/strategy/multicast").with(Component::version(5))
    );
    let r = command(
        &mut m,
        1,
        "strategy-choice/set",
        set("/m", "/localhost/nfd/strategy/nope"),
    );
    assert_eq!(code(&r), (404, "Strategy not registered"));
    let deep = set(&"/x".repeat(33), "/localhost/nfd/strategy/multicast");
    let r = command(&mut m, 1, "strategy-choice/set", deep);
    assert_eq!(
        code(&r),
        (414, "Prefix has too many components (limit is 32)")
    );
    let unset = |prefix: &str| ControlParameters {
        name: Some(name(prefix)),
        ..ControlParameters::default()
    };
    let r = command(&mut m, 1, "strategy-choice/unset", unset("/"));
    assert_eq!(code(&r), (400, "failed in validating parameters"));
    let listed = decode_dataset(
        &dataset(&mut m, "strategy-choice/list"),
        StrategyChoice::from_element,
    )
    .unwrap();
    let names: Vec<String> = listed.iter().map(|c| c.name.to_string()).collect();
    // NFD's defaults, and /m.
    assert_eq!(
        names,
        ["/", "/m", "/ndn/broadcast", "/localhost", "/localhost/nfd"]
    );
    assert_eq!(listed[0].strategy.len(), 5, "versioned best-route");
    assert_eq!(
        code(&command(&mut m, 1, "strategy-choice/unset", unset("/m"))).0,
        200
    );
    assert_eq!(m.strategies().iter().count(), 4);
    let told = m.forwarder().strategies.borrow().clone();
    // The defaults are told at start (but /'s: the workers start with best-route there).
    assert_eq!(
        told,
        vec![
            (name("/ndn/broadcast"), Some(StrategyKind::Multicast)),
            (name("/localhost"), Some(StrategyKind::Multicast)),
            (name("/localhost/nfd"), Some(StrategyKind::BestRoute)),
            (name("/m"), Some(StrategyKind::Multicast)),
            (name("/m"), None)
        ]
    );
}

#[test]
fn cs_config_and_erase() {
    let mut m = manager(Fake {
        erasable: 300,
        ..Fake::default()
    });
    let r = command(&mut m, 1, "cs/config", ControlParameters::default());
    assert_eq!(
        (params(&r).capacity, params(&r).flags, params(&r).mask),
        (Some(1000), Some(3), None)
    );
    assert!(m.forwarder().cs_configs.borrow().is_empty());
    let cap = |c| ControlParameters {
        capacity: Some(c),
        ..ControlParameters::default()
    };
    assert_eq!(
        params(&command(&mut m, 1, "cs/config", cap(50))).capacity,
        Some(50)
    );
    // Never beyond the capacity the forwarder started with.
    assert_eq!(
        params(&command(&mut m, 1, "cs/config", cap(5000))).capacity,
        Some(1000)
    );
    assert_eq!(
        *m.forwarder().cs_configs.borrow(),
        vec![(50, CsPolicy::Lru), (1000, CsPolicy::Lru)]
    );
    // Admission and serving, each where Mask says so; the workers are told of a change.
    let flags = |flags, mask| ControlParameters {
        flags: Some(flags),
        mask: Some(mask),
        ..ControlParameters::default()
    };
    assert_eq!(
        params(&command(&mut m, 1, "cs/config", flags(0, 1))).flags,
        Some(2)
    );
    assert_eq!(
        params(&command(&mut m, 1, "cs/config", flags(0, 2))).flags,
        Some(0)
    );
    // Flags without Mask change nothing.
    let r = command(&mut m, 1, "cs/config", flags(3, 0));
    assert_eq!(params(&r).flags, Some(0));
    assert_eq!(
        params(&command(&mut m, 1, "cs/config", flags(3, 3))).flags,
        Some(3)
    );
    assert_eq!(
        *m.forwarder().cs_flags.borrow(),
        vec![(false, true), (false, false), (true, true)]
    );
    let erase = |count| ControlParameters {
        name: Some(name("/e")),
        count,
        ..ControlParameters::default()
    };
    // At most ERASE_LIMIT per command; Capacity says the limit stopped it.
    let p = params(&command(&mut m, 1, "cs/erase", erase(Some(5))));
    assert_eq!((p.count, p.capacity), (Some(5), None));
    let p = params(&command(&mut m, 1, "cs/erase", erase(None)));
    assert_eq!((p.count, p.capacity), (Some(256), Some(256)));
    let p = params(&command(&mut m, 1, "cs/erase", erase(Some(256))));
    assert_eq!((p.count, p.capacity), (Some(256), None));
    let asked = m.forwarder().erase_asked.borrow().clone();
    assert_eq!(
        asked,
        vec![(name("/e"), 5), (name("/e"), 256), (name("/e"), 256)]
    );
    let info = CsInfo::decode(&dataset(&mut m, "cs/info")).unwrap();
    assert_eq!((info.capacity, info.flags), (1000, 3));
}

fn worker(pit: usize, cs: usize, l2: Option<CsTierInfo>) -> WorkerStats {
    let mut w = WorkerStats {
        pit_len: pit,
        cs_len: cs,
        cs_hits: 10,
        cs_misses: 1,
        l2,
        ..WorkerStats::default()
    };
    w.counters.in_interests = 100;
    w
}

#[test]
fn datasets_sum_the_workers() {
    let tier = |n, stall| CsTierInfo {
        level: 2,
        workers: 1,
        capacity: 1000,
        n_entries: n,
        batch: 10,
        stall_max_us: stall,
        ..CsTierInfo::default()
    };
    let stats = vec![
        worker(1, 2, Some(tier(5, 40))),
        worker(3, 4, None),
        worker(5, 6, Some(tier(7, 30))),
    ];
    let mut m = manager(Fake {
        stats,
        ..Fake::default()
    });
    let s = ForwarderStatus::decode(&dataset(&mut m, "status/general")).unwrap();
    assert_eq!(
        s.nfd_version,
        format!("cascade-{}", env!("CARGO_PKG_VERSION"))
    );
    // The name tree: the default strategy choices' names (/, /localhost, /localhost/nfd,
    // /ndn, /ndn/broadcast), NFD's /localhost/nfd/rib and the PIT entries.
    assert_eq!(
        (s.n_pit_entries, s.n_cs_entries, s.n_name_tree_entries),
        (9, 12, 15)
    );
    // NFD's /localhost/nfd and /localhost/nfd/rib (management's own).
    assert_eq!((s.n_fib_entries, s.n_measurements_entries), (2, 0));
    assert!(s.start_timestamp <= s.current_timestamp);
    let info = CsInfo::decode(&dataset(&mut m, "cs/info")).unwrap();
    assert_eq!((info.n_cs_entries, info.n_hits, info.n_misses), (12, 30, 3));
    let tiers = CsTierInfo::decode_dataset(&dataset(&mut m, "cs/tiers")).unwrap();
    let want = CsTierInfo {
        workers: 2,
        capacity: 2000,
        n_entries: 12,
        stall_max_us: 40,
        ..tier(0, 0)
    };
    assert_eq!(tiers, vec![want]);
    let faces = decode_dataset(&dataset(&mut m, "faces/list"), FaceStatus::from_element).unwrap();
    let ids: Vec<u64> = faces.iter().map(|f| f.face_id).collect();
    // NFD's reserved faces, then the forwarder's.
    assert_eq!(ids, [1, 254, 255, 1, 2]);
    assert_eq!(faces[4].n_in_interests, 2);
    // No L2 anywhere: an empty cs/tiers.
    let mut m = manager(Fake::default());
    assert!(dataset(&mut m, "cs/tiers").is_empty());
}

#[test]
fn datasets_are_versioned_segmented_and_local_only() {
    let mut m = manager(Fake::default());
    let first = dataset(&mut m, "faces/list");
    let (_, _, data) = last_sent(&m);
    let dv = DataView::decode(&data, &Limits::default()).unwrap();
    let seg0 = dv.name().to_name();
    assert_eq!(seg0.len(), 6);
    // The version's segment 0, by name with and without the segment.
    let sent = m.forwarder().sent.borrow().len();
    for n in [seg0.clone(), seg0.prefix(5)] {
        m.on_interest(1, true, &Interest::new(n, [0; 4]).to_wire());
        let (_, _, again) = last_sent(&m);
        assert_eq!(again, data);
    }
    // Nothing answers: a segment past the end, a non-local face, /localhop, an unknown version.
    let past = seg0.prefix(5).with(Component::segment(1));
    let unknown = seg0
        .prefix(4)
        .with(Component::version(1))
        .with(Component::segment(0));
    let bare = name("/localhost/nfd/faces/list");
    let hop = name("/localhop/nfd/faces/list");
    for (n, local) in [(past, true), (unknown, true), (bare, false), (hop, true)] {
        m.on_interest(1, local, &Interest::new(n, [0; 4]).to_wire());
    }
    assert_eq!(m.forwarder().sent.borrow().len(), sent + 2);
    assert!(!first.is_empty());
}

#[test]
fn the_answer_echoes_the_pit_token() {
    let mut m = manager(Fake::default());
    let interest = v03_interest(
        "/localhost/nfd/cs/config",
        cp_component(&ControlParameters::default()),
    );
    let headers = LpHeaders {
        pit_token: PitToken::new(&[0xAA, 0xBB]),
        ..LpHeaders::default()
    };
    let mut lp = Vec::new();
    assert!(encode_link(&mut lp, &headers, &interest, usize::MAX));
    m.on_interest(1, true, &lp);
    let (to, token, _) = last_sent(&m);
    assert_eq!((to, token), (1, Some(vec![0xAA, 0xBB])));
    // An LpPacket with no fragment, and garbage, are not answered.
    m.on_interest(1, true, &[0x64, 0x00]);
    m.on_interest(1, true, &[0x05, 0x01]);
    assert_eq!(m.forwarder().sent.borrow().len(), 1);
}

/// The FaceEventNotification in a Data sent, and the Data's name.
fn notification(data: &[u8]) -> (Name, FaceEventNotification) {
    let dv = DataView::decode(data, &Limits::default()).unwrap();
    let n = FaceEventNotification::decode(dv.content().unwrap()).unwrap();
    (dv.name().to_name(), n)
}

#[test]
fn face_events_stream_as_a_face_monitor_reads_it() {
    let mut m = manager(Fake::default());
    let events = name(FACE_EVENTS);
    let seq = |n| {
        events
            .clone()
            .with(Component::number(tt::SEQUENCE_NUM as u16, n))
    };
    // The subscriber's first Interest: CanBePrefix and MustBeFresh. Nothing to say yet: no
    // answer at all (an error Data would make it ask again at once).
    let mut first = Interest::new(events.clone(), [1, 1, 1, 1]);
    first.can_be_prefix = true;
    first.must_be_fresh = true;
    m.on_interest(1, true, &first.to_wire());
    assert!(m.forwarder().sent.borrow().is_empty());
    assert_eq!(m.face_events().pending(), 1);
    // A face is created: the notification answers the waiting Interest.
    let mut made = face(3, false);
    made.persistency = FacePersistency::OnDemand;
    m.face_event(FaceEventKind::Created, &made);
    let (to, _, data) = last_sent(&m);
    let (n, event) = notification(&data);
    assert_eq!((to, n), (1, seq(0)));
    assert_eq!(
        event,
        FaceEventNotification {
            kind: FaceEventKind::Created,
            face_id: 3,
            uri: made.uri.clone(),
            local_uri: made.local_uri.clone(),
            face_scope: wire::nfd::FaceScope::NonLocal,
            face_persistency: FacePersistency::OnDemand,
            link_type: wire::nfd::LinkType::PointToPoint,
            // Congestion marking is on by default (NFD's default).
            flags: wire::nfd::FACE_FLAG_CONGESTION_MARKING_ENABLED,
        }
    );
    // The next Interest names seq=1: it waits, and the face's destruction answers it.
    m.on_interest(1, true, &Interest::new(seq(1), [2; 4]).to_wire());
    assert_eq!(m.forwarder().sent.borrow().len(), 1);
    let route = ControlParameters {
        name: Some(name("/r")),
        face_id: Some(3),
        ..ControlParameters::default()
    };
    m.forwarder().faces.borrow_mut().push(made.clone());
    assert_eq!(code(&command(&mut m, 1, "rib/register", route)).0, 200);
    m.face_event(FaceEventKind::Destroyed, &made);
    let (to, _, data) = last_sent(&m);
    let (n, event) = notification(&data);
    assert_eq!((to, n, event.kind), (1, seq(1), FaceEventKind::Destroyed));
    assert!(m.rib().routes(&name("/r")).is_empty(), "its routes went");
    // Asked again by name, a kept notification is answered at once; from a non-local face or
    // under /localhop, nothing is.
    let sent = m.forwarder().sent.borrow().len();
    m.on_interest(1, true, &Interest::new(seq(0), [3; 4]).to_wire());
    assert_eq!(m.forwarder().sent.borrow().len(), sent + 1);
    assert_eq!(notification(&last_sent(&m).2).0, seq(0));
    m.on_interest(2, false, &Interest::new(seq(0), [4; 4]).to_wire());
    let hop = Name::from_uri("/localhop/nfd/faces/events").unwrap();
    m.on_interest(1, true, &Interest::new(hop, [5; 4]).to_wire());
    assert_eq!(m.forwarder().sent.borrow().len(), sent + 1);
    assert_eq!(m.face_events().pending(), 0);
}

/// Sends `faces/query` with this filter from face 1: the Data answering it.
fn query(m: &mut Manager<Fake>, filter: Component) -> Vec<u8> {
    let n = name("/localhost/nfd/faces/query").with(filter);
    m.on_interest(1, true, &Interest::new(n, [7; 4]).to_wire());
    last_sent(m).2
}

fn filter(f: &FaceQueryFilter) -> Component {
    let mut v = Vec::new();
    f.encode(&mut v);
    Component::generic(v)
}

fn queried(m: &mut Manager<Fake>, f: FaceQueryFilter) -> Vec<u64> {
    let d = query(m, filter(&f));
    let d = DataView::decode(&d, &Limits::default()).unwrap();
    let listed = decode_dataset(d.content().unwrap(), FaceStatus::from_element).unwrap();
    listed.iter().map(|s| s.face_id).collect()
}

#[test]
fn faces_query_filters_as_nfd_matches() {
    let mut m = manager(Fake::default());
    m.forwarder().faces.borrow_mut()[1].local_uri = "tcp4://192.0.2.99:6363".into();
    let any = FaceQueryFilter::default;
    // NFD's reserved faces come first (internal, content store, null; the fake's own faces
    // are numbered from 1 too).
    assert_eq!(queried(&mut m, any()), [1, 254, 255, 1, 2]);
    let by_id = FaceQueryFilter {
        face_id: Some(2),
        ..any()
    };
    assert_eq!(queried(&mut m, by_id), [2]);
    let scheme = |s: &str| FaceQueryFilter {
        uri_scheme: Some(s.into()),
        ..any()
    };
    // UriScheme matches the remote's or the local URI's scheme; empty is no filter.
    assert_eq!(queried(&mut m, scheme("udp4")), [1, 2]);
    assert_eq!(queried(&mut m, scheme("tcp4")), [2]);
    assert_eq!(queried(&mut m, scheme("unix")), [] as [u64; 0]);
    assert_eq!(queried(&mut m, scheme("")), [1, 254, 255, 1, 2]);
    assert_eq!(queried(&mut m, scheme("null")), [255]);
    let remote = FaceQueryFilter {
        uri: Some("udp4://192.0.2.1:6363".into()),
        ..any()
    };
    assert_eq!(queried(&mut m, remote), [1]);
    let local = FaceQueryFilter {
        local_uri: Some("udp4://0.0.0.0:6363".into()),
        ..any()
    };
    assert_eq!(queried(&mut m, local), [1]);
    let scope = FaceQueryFilter {
        face_scope: Some(wire::nfd::FaceScope::NonLocal),
        ..any()
    };
    assert_eq!(queried(&mut m, scope), [2]);
    let kept = |p| FaceQueryFilter {
        face_persistency: Some(p),
        link_type: Some(wire::nfd::LinkType::PointToPoint),
        ..any()
    };
    assert_eq!(queried(&mut m, kept(FacePersistency::Persistent)), [1, 2]);
    assert_eq!(
        queried(&mut m, kept(FacePersistency::Permanent)),
        [1, 254, 255]
    );
    assert_eq!(
        queried(&mut m, kept(FacePersistency::OnDemand)),
        [] as [u64; 0]
    );
    let multi = FaceQueryFilter {
        link_type: Some(wire::nfd::LinkType::MultiAccess),
        ..any()
    };
    assert_eq!(queried(&mut m, multi), [] as [u64; 0]);
    // The answer is <query>/v=<version>/seg=0, and its later fetch by version works.
    let d = query(&mut m, filter(&by_id_1()));
    let seg0 = DataView::decode(&d, &Limits::default())
        .unwrap()
        .name()
        .to_name();
    assert_eq!(seg0.len(), 7);
    let before = m.forwarder().sent.borrow().len();
    m.on_interest(1, true, &Interest::new(seg0.clone(), [8; 4]).to_wire());
    assert_eq!(m.forwarder().sent.borrow().len(), before + 1);
    assert_eq!(last_sent(&m).2, d);
}

fn by_id_1() -> FaceQueryFilter {
    FaceQueryFilter {
        face_id: Some(1),
        ..FaceQueryFilter::default()
    }
}

#[test]
fn a_malformed_filter_is_a_nack_data_400() {
    let mut m = manager(Fake::default());
    let bare = name("/localhost/nfd/faces/query");
    m.on_interest(1, true, &Interest::new(bare.clone(), [1; 4]).to_wire());
    let mut answers = vec![last_sent(&m).2];
    answers.push(query(&mut m, Component::generic(vec![1, 2, 3])));
    // A ControlParameters is no FaceQueryFilter either.
    answers.push(query(&mut m, cp_component(&ControlParameters::default())));
    for a in &answers {
        let dv = DataView::decode(a, &Limits::default()).unwrap();
        assert_eq!(dv.content_type(), Some(wire::data::content_type::NACK));
        assert!(bare.is_prefix_of(&dv.name().to_name()));
        let r = ControlResponse::decode(dv.content().unwrap()).unwrap();
        assert_eq!(code(&r), (400, "Malformed filter"));
    }
}

#[test]
fn faces_channels_lists_the_listeners() {
    let mut m = manager(Fake::default());
    let listed = decode_dataset(
        &dataset(&mut m, "faces/channels"),
        ChannelStatus::from_element,
    );
    let uris: Vec<String> = listed.unwrap().into_iter().map(|c| c.local_uri).collect();
    assert_eq!(uris, m.forwarder().channels());
}

#[test]
fn status_general_counts_as_nfd_forwarder_does() {
    let mut w = WorkerStats {
        pit_len: 4,
        cs_hits: 10,
        measurements: 3,
        ..WorkerStats::default()
    };
    w.counters.satisfied = 5;
    // The engine counts every PIT entry that ended unsatisfied (expired, rejected for want of
    // a route, Nacked by every upstream) as NFD's forwarder does; its drop counts are not added.
    w.counters.unsatisfied = 2;
    w.counters.drops[engine::fw::pipeline::DropReason::NoRoute.index()] = 3;
    // Worker counts of packets are not NFD's (a Data goes to every worker): the faces' are used.
    w.counters.in_interests = 1_000;
    w.counters.in_data = 1_000;
    let mut m = manager(Fake {
        stats: vec![w.clone(), w],
        ..Fake::default()
    });
    for f in m.forwarder().faces.borrow_mut().iter_mut() {
        f.counters = FaceCounters {
            in_interests: 10,
            in_data: 20,
            in_nacks: 30,
            out_interests: 40,
            out_data: 50,
            out_nacks: 60,
            ..FaceCounters::default()
        };
    }
    // A face that closed keeps counting.
    let mut gone = face(9, false);
    gone.counters.in_data = 7;
    m.face_event(FaceEventKind::Destroyed, &gone);
    // Management's own traffic: a command answered, a dataset request left unanswered, a
    // notification Interest that waits (and is not counted yet), the status request itself.
    for prefix in ["/a/b", "/a/c"] {
        let p = ControlParameters {
            name: Some(name(prefix)),
            ..ControlParameters::default()
        };
        command(&mut m, 1, "rib/register", p);
    }
    let set = ControlParameters {
        name: Some(name("/m")),
        strategy: Some(name("/localhost/nfd/strategy/multicast")),
        ..ControlParameters::default()
    };
    command(&mut m, 1, "strategy-choice/set", set);
    let stale = name("/localhost/nfd/faces/list").with(Component::version(1));
    m.on_interest(1, true, &Interest::new(stale, [1; 4]).to_wire());
    m.on_interest(1, true, &Interest::new(name(FACE_EVENTS), [2; 4]).to_wire());
    // From a non-local face /localhost never reaches management in NFD: not counted.
    m.on_interest(
        2,
        false,
        &Interest::new(name("/localhost/nfd/faces/list"), [3; 4]).to_wire(),
    );
    let s = ForwarderStatus::decode(&dataset(&mut m, "status/general")).unwrap();
    let counts = (
        s.n_in_interests,
        s.n_in_data,
        s.n_in_nacks,
        s.n_out_interests,
        s.n_out_data,
        s.n_out_nacks,
    );
    // The faces' 2 x 10 ... plus the closed face's 9 Interests and 7 Data; management took 6
    // Interests (3 commands, the stale dataset, the notification Interest, this request) and
    // produced 4 Data (the commands' answers and the closed face's notification; this
    // request's answer comes after).
    assert_eq!(counts, (20 + 9, 40 + 7 + 4, 60, 80 + 6, 100, 120));
    assert_eq!(s.n_satisfied_interests, 2 * (5 + 10) + 3);
    assert_eq!(s.n_unsatisfied_interests, 2 * 2 + 1);
    // Each worker's measurements table, summed (their prefixes not listed).
    assert_eq!(s.n_measurements_entries, 2 * 3);
    // The name tree: /, /a, /a/b, /a/c, /m, the default strategy choices' /localhost,
    // /localhost/nfd, /ndn, /ndn/broadcast, NFD's /localhost/nfd/rib, and the PIT entries' names.
    assert_eq!(s.n_name_tree_entries, 10 + 8);
    // Theirs and NFD's /localhost/nfd and /localhost/nfd/rib.
    assert_eq!(s.n_fib_entries, 2 + 2);
    // The status view reports what the dataset reports; the next request adds its own Interest.
    let v = m.status_view();
    let again = ForwarderStatus::decode(&dataset(&mut m, "status/general")).unwrap();
    let mut expected = v.general.clone();
    expected.n_out_interests += 1;
    expected.current_timestamp = again.current_timestamp;
    assert_eq!(again, expected);
    assert_eq!((v.workers.len(), v.faces.len(), v.fib.len()), (2, 2, 2 + 2));
    assert_eq!(v.cs.n_hits, 20);
    let choices: Vec<String> = v.strategies.iter().map(|c| c.name.to_string()).collect();
    // NFD's default choices beside the one set here, in the dataset's order.
    assert_eq!(
        choices,
        ["/", "/m", "/ndn/broadcast", "/localhost", "/localhost/nfd"]
    );
}

#[test]
fn commands_answer_to_the_authorizations() {
    use crate::auth::{tests::signer, Authorizations, Authorize};
    let mut m = manager(Fake::default());
    let op = signer("/op");
    let granted = Authorize {
        cert: Some(op.cert.clone()),
        privileges: vec!["fib".into()],
    };
    m.set_authorizations(Authorizations::new(vec![granted]).unwrap());
    let p = ControlParameters {
        name: Some(name("/a")),
        face_id: Some(1),
        ..ControlParameters::default()
    };
    // The helper's commands are DigestSha256-signed, a key no certificate is: refused.
    let r = command(&mut m, 1, "fib/add-nexthop", p.clone());
    assert_eq!(code(&r), (403, "authorization rejected"));
    assert_eq!(m.traffic().refused_commands.unknown_key, 1);
    assert!(m.rib().iter().next().is_none());
    // rib, which no entry names, stays open as NFD's `localhost_security` default.
    assert_eq!(code(&command(&mut m, 1, "rib/register", p)).0, 200);
    // Signed by the granted key now: past the authorizations (to an unknown verb).
    let signed = op.v03("fib", wall_ms(), &op.key_name());
    m.on_interest(1, true, &signed);
    let (_, _, data) = last_sent(&m);
    let dv = DataView::decode(&data, &Limits::default()).unwrap();
    let r = ControlResponse::decode(dv.content().unwrap()).unwrap();
    assert_eq!(r.status_code, 501);
    // A KeyLocator that is no name: no answer at all.
    let mut i = InterestView::decode(&signed, &Limits::default())
        .unwrap()
        .to_interest();
    let info = i.signature_info.as_mut().unwrap();
    info.key_locator = Some(wire::KeyLocator::KeyDigest(vec![1; 32]));
    let (sent, unanswered) = (m.forwarder().sent.borrow().len(), m.traffic().unanswered);
    m.on_interest(1, true, &i.to_wire());
    assert_eq!(m.forwarder().sent.borrow().len(), sent);
    assert_eq!(m.traffic().unanswered, unanswered + 1);
    assert_eq!(m.traffic().refused_commands.malformed, 1);
}

#[test]
fn measurements_entries_count_a_prefix_two_workers_measure_once() {
    let w = |keys: &[u64]| WorkerStats {
        measurements: keys.len(),
        measured_prefixes: keys.to_vec(),
        ..WorkerStats::default()
    };
    let entries = crate::dataset::content::measurements_entries;
    // /a (hash 1) measured by both workers, /b (2) and /c (3) by one each.
    assert_eq!(entries(&[w(&[1, 2]), w(&[1, 3])]), 3);
    // A worker that lists nothing counts by its figure.
    let unlisted = WorkerStats {
        measurements: 4,
        ..WorkerStats::default()
    };
    assert_eq!(entries(&[w(&[1]), unlisted]), 5);
    assert_eq!(entries(&[]), 0);
}

#[test]
fn faces_list_shows_nfds_reserved_faces_first() {
    let mut m = manager(Fake::default());
    let _ = dataset(&mut m, "status/general");
    let faces = decode_dataset(&dataset(&mut m, "faces/list"), FaceStatus::from_element).unwrap();
    let shown = |f: &FaceStatus| {
        (
            f.face_id,
            f.uri.clone(),
            f.local_uri.clone(),
            f.face_scope,
            f.face_persistency,
            f.mtu,
            f.base_congestion_marking_interval,
            f.flags,
        )
    };
    let local = wire::nfd::FaceScope::Local;
    let permanent = FacePersistency::Permanent;
    let reserved = |id, uri: &str| {
        (
            id,
            uri.into(),
            uri.into(),
            local,
            permanent,
            Some(8800),
            None,
            0,
        )
    };
    assert_eq!(
        faces[..3].iter().map(shown).collect::<Vec<_>>(),
        [
            (
                1,
                "internal://".into(),
                "internal://".into(),
                local,
                permanent,
                Some(8800),
                Some(100_000_000),
                1
            ),
            reserved(254, "contentstore://"),
            reserved(255, "null://"),
        ]
    );
    // The internal face carries management's traffic: the first request went out to it and
    // its answer came in; this one went out too.
    let internal = &faces[0];
    assert_eq!((internal.n_out_interests, internal.n_in_data), (2, 1));
    assert_eq!((internal.n_in_interests, internal.n_out_data), (0, 0));
}
