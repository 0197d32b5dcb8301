//! The RIB's commands through the manager: `rib/announce`, `/localhop` registration from a
//! remote face, readvertising to NLSR, and `rib/list` with the inherited routes in the FIB.

use wire::nfd::{ControlParameters, FibEntry, ForwarderStatus, RibEntry, ROUTE_FLAG_CAPTURE};
use wire::{tt, DataView, InterestView, Limits};

use super::*;
use crate::fake::*;
use crate::rib::announce::iso_ms;
use crate::test_support::{announce_interest, cp_component, pa_data, v03_interest};

/// The ControlResponse of the last answer sent to `face`.
fn last_response(m: &Manager<Fake>) -> ControlResponse {
    let (_, _, data) = last_sent(m);
    let dv = DataView::decode(&data, &Limits::default()).unwrap();
    ControlResponse::decode(dv.content().unwrap()).unwrap()
}

fn pa_content(exp: u64, validity: Option<(&str, &str)>) -> Vec<u8> {
    let mut c = Vec::new();
    wire::tlv::write_nni_tlv(&mut c, tt::EXPIRATION_PERIOD, exp);
    if let Some((a, b)) = validity {
        let mut v = Vec::new();
        wire::tlv::write_tlv(&mut v, 0xFE, a.as_bytes());
        wire::tlv::write_tlv(&mut v, 0xFF, b.as_bytes());
        wire::tlv::write_tlv(&mut c, tt::VALIDITY_PERIOD, &v);
    }
    c
}

#[test]
fn announce_adds_a_prefixann_route() {
    let mut m = manager(Fake::default());
    let pa = pa_data("/ndn/grp", pa_content(60_000, None), 5);
    let i = announce_interest("/localhost/nfd/rib/announce", pa, true);
    m.on_interest(1, true, &i);
    let r = last_response(&m);
    assert_eq!(code(&r), (200, "Success"));
    let p = params(&r);
    assert_eq!(p.name, Some(name("/ndn/grp")));
    assert_eq!(
        (p.face_id, p.origin, p.cost, p.flags, p.expiration_period),
        (Some(1), Some(129), Some(2048), Some(1), Some(60_000))
    );
    let route = &m.rib().routes(&name("/ndn/grp"))[0];
    assert_eq!((route.face, route.origin, route.cost), (1, 129, 2048));
    assert!(route.expires_ms.is_some());
    assert_eq!(m.rib().next_hops(&name("/ndn/grp")), &[(1, 2048)]);
    // A validity period that ended: answered, no route.
    let old = Some(("20000101T000000", "20000102T000000"));
    let pa = pa_data("/old", pa_content(60_000, old), 5);
    m.on_interest(
        1,
        true,
        &announce_interest("/localhost/nfd/rib/announce", pa, true),
    );
    let r = last_response(&m);
    assert_eq!((code(&r).0, params(&r).expiration_period), (200, Some(0)));
    assert!(m.rib().routes(&name("/old")).is_empty());
    // One that covers now: cut at its end.
    let now = wall_ms();
    assert!(now > iso_ms(b"20200101T000000").unwrap());
    let open = Some(("20200101T000000", "99991231T000000"));
    let pa = pa_data("/open", pa_content(5_000, open), 5);
    m.on_interest(
        1,
        true,
        &announce_interest("/localhost/nfd/rib/announce", pa, true),
    );
    assert_eq!(params(&last_response(&m)).expiration_period, Some(5_000));
    // Not an announcement: 400; unsigned: 403; from a non-local face: 403.
    let blob = pa_data("/x", pa_content(1, None), 0);
    m.on_interest(
        1,
        true,
        &announce_interest("/localhost/nfd/rib/announce", blob, true),
    );
    assert_eq!(code(&last_response(&m)).0, 400);
    let pa = pa_data("/y", pa_content(1, None), 5);
    let unsigned = announce_interest("/localhost/nfd/rib/announce", pa.clone(), false);
    m.on_interest(1, true, &unsigned);
    assert_eq!(code(&last_response(&m)).0, 403);
    m.on_interest(
        2,
        false,
        &announce_interest("/localhop/nfd/rib/announce", pa, true),
    );
    assert_eq!(code(&last_response(&m)).0, 403);
    assert!(m.rib().routes(&name("/y")).is_empty());
}

#[test]
fn localhop_registration_from_remote_faces_when_allowed() {
    let p = ControlParameters {
        name: Some(name("/remote")),
        ..ControlParameters::default()
    };
    let register = v03_interest("/localhop/nfd/rib/register", cp_component(&p));
    // Off by default (NFD without localhop_security).
    let mut m = manager(Fake::default());
    m.on_interest(2, false, &register);
    assert_eq!(code(&last_response(&m)).0, 403);
    assert!(m.rib().routes(&name("/remote")).is_empty());
    let opts = RibOptions {
        localhop: true,
        ..RibOptions::default()
    };
    let mut m = manager_with(Fake::default(), opts);
    m.on_interest(2, false, &register);
    let r = last_response(&m);
    assert_eq!((code(&r).0, params(&r).face_id), (200, Some(2)));
    assert_eq!(m.rib().next_hops(&name("/remote")), &[(2, 0)]);
    // Other modules stay local, and so does /localhost.
    let create = v03_interest("/localhop/nfd/faces/create", cp_component(&p));
    m.on_interest(2, false, &create);
    assert_eq!(code(&last_response(&m)).0, 403);
    let local = v03_interest("/localhost/nfd/rib/register", cp_component(&p));
    m.on_interest(2, false, &local);
    assert_eq!(code(&last_response(&m)).0, 403);
    let unregister = v03_interest("/localhop/nfd/rib/unregister", cp_component(&p));
    m.on_interest(2, false, &unregister);
    assert_eq!(code(&last_response(&m)).0, 200);
    assert!(m.rib().routes(&name("/remote")).is_empty());
    // Trust anchor any still refuses a replay (403, counted).
    m.on_interest(2, false, &unregister);
    assert_eq!(code(&last_response(&m)).0, 403);
    assert_eq!(m.traffic().refused_commands.replay, 1);
}

#[test]
fn localhop_registration_verified_with_the_trust_anchors() {
    use crate::auth::tests::signer;
    let (host, other) = (signer("/host"), signer("/other"));
    let opts = RibOptions {
        localhop: true,
        ..RibOptions::default()
    };
    let mut m = manager_with(Fake::default(), opts);
    m.set_localhop_security(Authorizations::localhop(Some(vec![host.cert.clone()])));
    let p = ControlParameters {
        name: Some(name("/host")),
        ..ControlParameters::default()
    };
    let command = |s: &crate::auth::tests::Signer, verb: &str, kl: &Name| {
        let n = name(&format!("/localhop/nfd/rib/{verb}")).with(cp_component(&p));
        s.v03_named(n, crate::test_support::signing_time_ms(), kl)
    };
    m.on_interest(2, false, &command(&other, "register", &host.key_name()));
    assert_eq!(code(&last_response(&m)).0, 403);
    m.on_interest(3, false, &command(&other, "register", &other.key_name()));
    assert_eq!(code(&last_response(&m)).0, 403);
    assert!(m.rib().routes(&name("/host")).is_empty());
    let r = m.traffic().refused_commands;
    assert_eq!((r.bad_signature, r.unknown_key), (1, 1));
    m.on_interest(2, false, &command(&host, "register", &host.key_name()));
    assert_eq!(code(&last_response(&m)).0, 200);
    assert_eq!(m.rib().next_hops(&name("/host")), &[(2, 0)]);
    // The authorizations (`/localhost`) are not the localhop trust anchors.
    m.set_authorizations(Authorizations::default());
    assert_eq!(m.traffic().refused_commands.bad_signature, 1);
}

#[test]
fn localhop_registration_waits_for_its_chain_fetched_from_its_face() {
    use crate::auth::chain_tests::hierarchy_over;
    use crate::auth::policy::Policy;
    use crate::auth::FETCH_TOKEN;
    use wire::lp::LpPacket;
    let wall = crate::test_support::signing_time_ms();
    let (root, site, user) = hierarchy_over((wall - 86_400_000, wall + 86_400_000));
    let opts = RibOptions {
        localhop: true,
        ..RibOptions::default()
    };
    let mut m = manager_with(Fake::default(), opts);
    m.set_localhop_security(Authorizations::localhop_with(
        Policy::nfd_sample(Vec::new()),
        vec![root.cert.clone()],
    ));
    let p = ControlParameters {
        name: Some(name("/ndn/site/alice/app")),
        ..ControlParameters::default()
    };
    let n = name("/localhop/nfd/rib/register").with(cp_component(&p));
    let cmd = user.key.v03_named(n, wall, &user.key_name());
    let mut lp = Vec::new();
    LpPacket {
        pit_token: Some(vec![9, 9]),
        fragment: Some(cmd),
        ..LpPacket::default()
    }
    .encode(&mut lp);
    m.on_interest(2, false, &lp);
    // No answer yet: an Interest for the signer's certificate, back out the command's face.
    let fetch = |m: &Manager<Fake>| {
        let (to, token, bytes) = last_sent(m);
        assert_eq!((to, token.as_deref()), (2, Some(&FETCH_TOKEN[..])));
        let i = InterestView::decode(&bytes, &Limits::default()).unwrap();
        assert!(i.can_be_prefix());
        i.name().to_name()
    };
    assert_eq!(fetch(&m), user.key_name());
    let reply = |m: &mut Manager<Fake>, face: FaceId, token: &[u8], cert: &[u8]| {
        let mut lp = Vec::new();
        LpPacket {
            pit_token: Some(token.to_vec()),
            fragment: Some(cert.to_vec()),
            ..LpPacket::default()
        }
        .encode(&mut lp);
        m.on_interest(face, false, &lp);
    };
    // The certificate from another face, or without the token, answers nothing.
    let sent = m.forwarder().sent.borrow().len();
    reply(&mut m, 5, &FETCH_TOKEN, &user.cert_wire);
    reply(&mut m, 2, &[1, 2], &user.cert_wire);
    assert_eq!(m.forwarder().sent.borrow().len(), sent);
    reply(&mut m, 2, &FETCH_TOKEN, &user.cert_wire);
    assert_eq!(fetch(&m), site.key_name());
    assert!(m.rib().routes(&name("/ndn/site/alice/app")).is_empty());
    reply(&mut m, 2, &FETCH_TOKEN, &site.cert_wire);
    // Verified: the command runs and is answered with its own PIT token.
    let (to, token, _) = last_sent(&m);
    assert_eq!((to, token), (2, Some(vec![9, 9])));
    assert_eq!(code(&last_response(&m)).0, 200);
    assert_eq!(m.rib().next_hops(&name("/ndn/site/alice/app")), &[(2, 0)]);
    // A command of a signer whose chain does not reach the anchor: 403 once it is known.
    let stranger = crate::auth::chain_tests::issue(
        "/ndn/site/mallory",
        None,
        (wall - 86_400_000, wall + 86_400_000),
        None,
    );
    let p = ControlParameters {
        name: Some(name("/ndn/site/mallory/app")),
        ..ControlParameters::default()
    };
    let n = name("/localhop/nfd/rib/register").with(cp_component(&p));
    m.on_interest(
        3,
        false,
        &stranger.key.v03_named(n, wall, &stranger.key_name()),
    );
    let (to, _, _) = last_sent(&m);
    assert_eq!(to, 3);
    reply(&mut m, 3, &FETCH_TOKEN, &stranger.cert_wire);
    assert_eq!(code(&last_response(&m)).0, 403);
    assert!(m.rib().routes(&name("/ndn/site/mallory/app")).is_empty());
    assert_eq!(m.traffic().refused_commands.bad_certificate, 1);
}

/// Sends a command from local face `from` whose answer comes with NLSR commands: answers
/// its ControlResponse.
fn command_sending(
    m: &mut Manager<Fake>,
    from: FaceId,
    what: &str,
    p: ControlParameters,
) -> ControlResponse {
    let interest = v03_interest(&format!("/localhost/nfd/{what}"), cp_component(&p));
    m.on_interest(from, true, &interest);
    last_response(m)
}

/// The commands under `prefix` (`/localhost/nlsr/rib`, `/localhop/nfd/rib`) the manager sent,
/// as (face, verb, ControlParameters, the Interest's bytes).
pub(super) fn sent_commands(
    m: &Manager<Fake>,
    prefix: &str,
) -> Vec<(FaceId, String, ControlParameters, Vec<u8>)> {
    m.forwarder()
        .sent
        .borrow()
        .iter()
        .filter_map(|(face, _, bytes)| {
            let i = InterestView::decode(bytes, &Limits::default()).ok()?;
            let n = i.name().to_name();
            if !name(prefix).is_prefix_of(&n) {
                return None;
            }
            let p = ControlParameters::decode(&n.components[4].value).ok()?;
            let verb = String::from_utf8(n.components[3].value.clone()).ok()?;
            Some((*face, verb, p, bytes.clone()))
        })
        .collect()
}

/// The NLSR commands the manager sent, as (face, verb, prefix).
fn nlsr_commands(m: &Manager<Fake>) -> Vec<(FaceId, String, String)> {
    sent_commands(m, "/localhost/nlsr/rib")
        .into_iter()
        .filter_map(|(face, verb, p, _)| Some((face, verb, p.name?.to_string())))
        .collect()
}

#[test]
fn client_routes_are_readvertised_to_nlsr() {
    let opts = RibOptions {
        readvertise_nlsr: true,
        ..RibOptions::default()
    };
    let mut m = manager_with(Fake::default(), opts);
    // NLSR is on local face 3.
    m.forwarder().faces.borrow_mut().push(face(3, true));
    let reg = |prefix: &str, origin: u64| ControlParameters {
        name: Some(name(prefix)),
        origin: Some(origin),
        ..ControlParameters::default()
    };
    // Before NLSR registers /localhost/nlsr, nothing goes out.
    command(&mut m, 1, "rib/register", reg("/app", 65));
    assert!(nlsr_commands(&m).is_empty());
    // NLSR (origin app) registers its prefix: /app is advertised to it.
    command_sending(&mut m, 3, "rib/register", reg("/localhost/nlsr", 0));
    let reg_app = (3, "register".to_string(), "/app".to_string());
    assert_eq!(nlsr_commands(&m), std::slice::from_ref(&reg_app));
    // Another client route, and a route of another origin: nothing more.
    command(&mut m, 1, "rib/register", reg("/app2", 0));
    assert_eq!(nlsr_commands(&m).len(), 1);
    command_sending(&mut m, 1, "rib/register", reg("/grp", 65));
    // The app's face goes: its client routes are withdrawn.
    m.face_down(1);
    let mut got = nlsr_commands(&m);
    got.sort();
    let mut want = vec![
        reg_app,
        (3, "register".to_string(), "/grp".to_string()),
        (3, "unregister".to_string(), "/app".to_string()),
        (3, "unregister".to_string(), "/grp".to_string()),
    ];
    want.sort();
    assert_eq!(got, want);
    assert_eq!(m.readvertise().map(|r| r.sent()), Some(4));
    // Off by default.
    let mut m = manager(Fake::default());
    command(&mut m, 1, "rib/register", reg("/localhost/nlsr", 0));
    command(&mut m, 1, "rib/register", reg("/app", 65));
    assert!(nlsr_commands(&m).is_empty() && m.readvertise().is_none());
}

#[test]
fn registrations_below_an_uplink_keep_it() {
    let mut m = manager(Fake::default());
    m.add_static_route(&name("/ndn"), 2, 10).unwrap();
    let app = ControlParameters {
        name: Some(name("/ndn/grp")),
        ..ControlParameters::default()
    };
    command(&mut m, 1, "rib/register", app);
    let mut hops = m.rib().next_hops(&name("/ndn/grp")).to_vec();
    hops.sort();
    assert_eq!(hops, [(1, 0), (2, 10)]);
    // A capture hides the uplink; rib/list shows only the registered routes.
    let cap = ControlParameters {
        name: Some(name("/ndn/grp")),
        flags: Some(ROUTE_FLAG_CAPTURE),
        ..ControlParameters::default()
    };
    command(&mut m, 1, "rib/register", cap);
    assert_eq!(m.rib().next_hops(&name("/ndn/grp")), &[(1, 0)]);
    let listed =
        wire::nfd::decode_dataset(&dataset(&mut m, "rib/list"), RibEntry::from_element).unwrap();
    let names: Vec<String> = listed.iter().map(|e| e.name.to_string()).collect();
    assert_eq!(names, ["/ndn", "/ndn/grp", "/localhost/nfd"]);
    assert_eq!(listed[1].routes.len(), 1);
    assert_eq!(listed[1].routes[0].flags, ROUTE_FLAG_CAPTURE);
}

#[test]
fn nlsr_answers_reach_the_readvertisement_they_answer() {
    let opts = RibOptions {
        readvertise_nlsr: true,
        readvertise_retry_ms: Some(1_000),
        ..RibOptions::default()
    };
    let mut m = manager_with(Fake::default(), opts);
    m.forwarder().faces.borrow_mut().push(face(3, true));
    let reg = |prefix: &str, origin: u64| ControlParameters {
        name: Some(name(prefix)),
        origin: Some(origin),
        ..ControlParameters::default()
    };
    command_sending(&mut m, 3, "rib/register", reg("/localhost/nlsr", 0));
    command_sending(&mut m, 1, "rib/register", reg("/app", 65));
    command_sending(&mut m, 1, "rib/register", reg("/grp", 65));
    // The commands' names, as NLSR sees them.
    let sent: Vec<wire::Name> = m
        .forwarder()
        .sent
        .borrow()
        .iter()
        .filter_map(|(_, _, b)| InterestView::decode(b, &Limits::default()).ok())
        .map(|i| i.name().to_name())
        .filter(|n| name("/localhost/nlsr/rib/register").is_prefix_of(n))
        .collect();
    assert_eq!(sent.len(), 2);
    // NLSR accepts /app and refuses /grp: one success, one refusal (a retry scheduled).
    m.on_interest(
        3,
        true,
        &response_data(&sent[0], &ControlResponse::new(200, "OK")),
    );
    let refused = ControlResponse::new(403, "no");
    m.on_interest(3, true, &response_data(&sent[1], &refused));
    // An answer to nothing awaited, and a Data that is no answer, change nothing.
    m.on_interest(
        3,
        true,
        &response_data(&sent[0], &ControlResponse::new(500, "late")),
    );
    m.on_interest(
        3,
        true,
        &response_data(&name("/localhost/nlsr/rib/register/x"), &refused),
    );
    let c = m.readvertise().unwrap().counters();
    assert_eq!((c.sent, c.succeeded, c.refused, c.timed_out), (2, 1, 1, 0));
}

#[test]
fn rib_list_shows_managements_own_routes_as_nfd_rib_holds_them() {
    let internal = wire::nfd::Route {
        face_id: 1,
        origin: 0,
        cost: 0,
        flags: wire::nfd::ROUTE_FLAG_CHILD_INHERIT,
        expiration_period: None,
    };
    let list = |m: &mut Manager<Fake>| {
        wire::nfd::decode_dataset(&dataset(m, "rib/list"), RibEntry::from_element).unwrap()
    };
    // A fresh router: /localhost/nfd to the internal face, origin app, ChildInherit.
    let mut m = manager(Fake::default());
    let fresh = list(&mut m);
    assert_eq!(fresh.len(), 1);
    assert_eq!(fresh[0].name, name("/localhost/nfd"));
    assert_eq!(fresh[0].routes, [internal]);
    // A route registered on it is listed after the internal one; it reaches no FIB.
    let p = ControlParameters {
        name: Some(name("/localhost/nfd")),
        cost: Some(7),
        ..ControlParameters::default()
    };
    command(&mut m, 1, "rib/register", p);
    let merged = list(&mut m);
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].routes.len(), 2);
    assert_eq!(merged[0].routes[0], internal);
    assert_eq!(
        (merged[0].routes[1].face_id, merged[0].routes[1].cost),
        (1, 7)
    );
    assert_eq!(m.rib().next_hops(&name("/localhost/nfd")), &[(1, 7)]);
    // With /localhop commands served, /localhop/nfd too.
    let opts = RibOptions {
        localhop: true,
        ..RibOptions::default()
    };
    let mut m = manager_with(Fake::default(), opts);
    let names: Vec<String> = list(&mut m).iter().map(|e| e.name.to_string()).collect();
    assert_eq!(names, ["/localhop/nfd", "/localhost/nfd"]);
}

#[test]
fn fib_list_shows_managements_own_next_hops_as_nfd_fib_holds_them() {
    let fib = |m: &mut Manager<Fake>| -> Vec<(String, Vec<(u64, u64)>)> {
        let list =
            wire::nfd::decode_dataset(&dataset(m, "fib/list"), FibEntry::from_element).unwrap();
        list.into_iter()
            .map(|e| {
                let hops = e.next_hops.iter().map(|h| (h.face_id, h.cost)).collect();
                (e.name.to_string(), hops)
            })
            .collect()
    };
    let fib_count = |m: &mut Manager<Fake>| {
        ForwarderStatus::decode(&dataset(m, "status/general"))
            .unwrap()
            .n_fib_entries
    };
    let register = |m: &mut Manager<Fake>, prefix: &str, face: u64, cost: u64, flags: u64| {
        let p = ControlParameters {
            name: Some(name(prefix)),
            face_id: Some(face),
            cost: Some(cost),
            flags: Some(flags),
            ..ControlParameters::default()
        };
        assert_eq!(code(&command(m, 300, "rib/register", p)).0, 200);
    };
    let mut m = manager(Fake::default());
    m.forwarder()
        .faces
        .replace(vec![face(300, true), face(301, true)]);
    // A fresh NFD: /localhost/nfd (its start-up) and /localhost/nfd/rib (its RIB service).
    let own = |n: &str| (n.to_string(), vec![(1, 0)]);
    assert_eq!(
        fib(&mut m),
        [own("/localhost/nfd"), own("/localhost/nfd/rib")]
    );
    assert_eq!(fib_count(&mut m), 2);
    // Below /localhost/nfd, an entry inherits the internal face (ChildInherit, cost 0), listed
    // cheapest first; elsewhere nothing is inherited from it.
    register(&mut m, "/localhost/nfd/cmp", 300, 10, 1);
    register(&mut m, "/other", 300, 10, 1);
    register(&mut m, "/localhost/nfd/capt", 301, 0, ROUTE_FLAG_CAPTURE);
    register(&mut m, "/localhost/nfd/capt/below", 300, 0, 1);
    assert_eq!(
        fib(&mut m),
        [
            ("/other".into(), vec![(300, 10)]),
            own("/localhost/nfd"),
            ("/localhost/nfd/cmp".into(), vec![(1, 0), (300, 10)]),
            ("/localhost/nfd/rib".into(), vec![(1, 0)]),
            ("/localhost/nfd/capt".into(), vec![(301, 0)]),
            ("/localhost/nfd/capt/below".into(), vec![(300, 0)]),
        ]
    );
    assert_eq!(fib_count(&mut m), 6);
    // A route on /localhost/nfd itself joins the internal face.
    register(&mut m, "/localhost/nfd", 301, 5, 0);
    assert_eq!(
        fib(&mut m)[1],
        ("/localhost/nfd".into(), vec![(1, 0), (301, 5)])
    );
    assert_eq!(fib_count(&mut m), 6);
    // With /localhop commands served, /localhop/nfd/rib too (NFD's FIB has no /localhop/nfd).
    let opts = RibOptions {
        localhop: true,
        ..RibOptions::default()
    };
    let mut m = manager_with(Fake::default(), opts);
    let names: Vec<String> = fib(&mut m).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["/localhop/nfd/rib", "/localhost/nfd", "/localhost/nfd/rib"]
    );
}
