//! Prefix propagation to a hub: an end host's manager registers its identities' prefixes at a
//! hub's manager over `/localhop/nfd/rib`, signed, and the hub verifies them.

use std::sync::Arc;

use wire::nfd::ControlParameters;

use super::*;
use crate::auth::Authorizations;
use crate::fake::*;
use crate::keychain::tests::test_signer;
use crate::rib::readvertise::{HostToGateway, PROPAGATE_COST, PROPAGATE_REFRESH_MS};
use crate::test_support::{cp_component, v03_interest};

/// The propagation commands the manager sent: (face, verb, ControlParameters, bytes).
fn propagated(m: &Manager<Fake>) -> Vec<(FaceId, String, ControlParameters, Vec<u8>)> {
    super::rib_tests::sent_commands(m, "/localhop/nfd/rib")
}

/// Sends a command from local face `from` (its answer may come with propagation commands).
fn send(m: &mut Manager<Fake>, from: FaceId, what: &str, p: ControlParameters) {
    let i = v03_interest(&format!("/localhost/nfd/{what}"), cp_component(&p));
    m.on_interest(from, true, &i);
}

fn reg(prefix: &str, face: u64) -> ControlParameters {
    ControlParameters {
        name: Some(name(prefix)),
        face_id: Some(face),
        ..ControlParameters::default()
    }
}

#[test]
fn identities_prefixes_are_registered_at_the_hub_and_verified_there() {
    let (signer, cert) = test_signer("/a");
    let (other, _) = test_signer("/x/nrd");
    let policy = HostToGateway {
        identities: vec![
            (name("/a"), Arc::new(signer)),
            (
                HostToGateway::identity_prefix(&name("/x/nrd")),
                Arc::new(other),
            ),
        ],
        cost: PROPAGATE_COST,
    };
    let mut host = manager(Fake::default());
    for f in [5, 7] {
        host.forwarder().faces.borrow_mut().push(face(f, f == 5));
    }
    host.set_propagation(Readvertise::host_to_gateway(
        policy,
        10_000,
        PROPAGATE_REFRESH_MS,
        50_000,
    ));
    // An app's route under /a, one no identity covers, one under /localhost: nothing goes out
    // before a route toward /localhop/nfd exists.
    send(&mut host, 5, "rib/register", reg("/a/b", 0));
    send(&mut host, 5, "rib/register", reg("/zzz", 0));
    send(&mut host, 5, "rib/register", reg("/localhost/q", 0));
    send(&mut host, 1, "rib/register", reg("/b", 7));
    assert!(propagated(&host).is_empty());
    // The hub is on face 7: /a is registered there, by /a's key, with cost 15 and origin 65.
    send(&mut host, 1, "rib/register", reg("/localhop/nfd", 7));
    let sent = propagated(&host);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (to, verb, p, bytes) = &sent[0];
    assert_eq!((*to, verb.as_str()), (7, "register"));
    assert_eq!(
        (p.name.clone(), p.cost, p.origin),
        (Some(name("/a")), Some(15), Some(65))
    );
    // A second route under /a, and one under /x (identity /x/nrd): only /x is new.
    send(&mut host, 5, "rib/register", reg("/a/c", 0));
    send(&mut host, 5, "rib/register", reg("/x/y", 0));
    let sent = propagated(&host);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].2.name, Some(name("/x")));
    // The hub, trusting /a's certificate only: /a registered toward the host's face (4).
    let opts = RibOptions {
        localhop: true,
        ..RibOptions::default()
    };
    let mut hub = manager_with(Fake::default(), opts);
    hub.forwarder().faces.borrow_mut().push(face(4, false));
    hub.set_localhop_security(Authorizations::localhop(Some(vec![cert])));
    hub.on_interest(4, false, bytes);
    assert_eq!(hub.rib().next_hops(&name("/a")), &[(4, 15)]);
    hub.on_interest(4, false, &sent[1].3);
    assert!(hub.rib().routes(&name("/x")).is_empty());
    assert_eq!(hub.traffic().refused_commands.unknown_key, 1);
    // The hub's answer reaches the host's propagation: a success, refreshed 25 s later.
    let (_, _, answer) = last_sent(&hub);
    let (_, _, first) = &hub.forwarder().sent.borrow()[0].clone();
    host.on_interest(7, false, first);
    host.on_interest(7, false, &answer);
    let c = host.propagation().unwrap().counters();
    assert_eq!((c.sent, c.succeeded, c.refused), (2, 1, 1));
    // The last route under /a goes: /a is withdrawn.
    send(&mut host, 5, "rib/unregister", reg("/a/b", 0));
    assert_eq!(propagated(&host).len(), 2);
    send(&mut host, 5, "rib/unregister", reg("/a/c", 0));
    let sent = propagated(&host);
    assert_eq!(sent.len(), 3);
    assert_eq!(
        (sent[2].1.as_str(), sent[2].2.name.clone()),
        ("unregister", Some(name("/a")))
    );
}
