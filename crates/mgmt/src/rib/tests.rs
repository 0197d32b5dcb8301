use super::*;
use engine::hash::{HashKey, MAX_PREFIX_STATES};
use engine::table::fib::MAX_NEXTHOPS;
use wire::nfd::ROUTE_FLAG_CAPTURE;

fn rib() -> Rib {
    Rib::new(Arc::new(Fib::new(HashKey::from_bytes([7; 16]), 1024, 4)))
}

fn name(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

fn route(face: FaceId, origin: u64, cost: u64) -> Route {
    Route {
        face,
        origin,
        cost,
        flags: ROUTE_FLAG_CHILD_INHERIT,
        expires_ms: None,
    }
}

/// The FIB's next hops of exactly `n`, (face, cost) cheapest first.
fn fib_hops(rib: &Rib, n: &str) -> Vec<(FaceId, u32)> {
    let n = name(n);
    rib.fib()
        .entries()
        .into_iter()
        .find(|(e, _)| *e == n)
        .map(|(_, hops)| hops.iter().map(|h| (h.face, h.cost)).collect())
        .unwrap_or_default()
}

#[test]
fn register_installs_and_unregister_removes() {
    let mut rib = rib();
    let a = name("/a");
    rib.add(&a, route(2, 0, 10)).unwrap();
    rib.add(&a, route(3, 0, 5)).unwrap();
    assert_eq!(fib_hops(&rib, "/a"), vec![(3, 5), (2, 10)]);
    assert_eq!(rib.next_hops(&a), &[(2, 10), (3, 5)]);
    // Registering again replaces the route of that face and origin.
    rib.add(&a, route(2, 0, 1)).unwrap();
    assert_eq!(rib.routes(&a).len(), 2);
    assert_eq!(fib_hops(&rib, "/a"), vec![(2, 1), (3, 5)]);
    rib.remove(&a, 2, 0);
    assert_eq!(fib_hops(&rib, "/a"), vec![(3, 5)]);
    // Removing what is not there changes nothing.
    rib.remove(&a, 3, 7);
    rib.remove(&name("/nothing"), 3, 0);
    assert_eq!(fib_hops(&rib, "/a"), vec![(3, 5)]);
    rib.remove(&a, 3, 0);
    assert!(rib.routes(&a).is_empty());
    assert!(rib.next_hops(&a).is_empty());
    assert!(rib.fib().entries().is_empty());
    assert_eq!(rib.iter().count(), 0);
}

#[test]
fn origins_are_separate_routes_and_the_cheapest_per_face_wins() {
    let mut rib = rib();
    let a = name("/a");
    rib.add(&a, route(2, 0, 10)).unwrap();
    rib.add(&a, route(2, STATIC_ORIGIN, 4)).unwrap();
    rib.add(&a, route(2, FIB_ORIGIN, 7)).unwrap();
    assert_eq!(rib.routes(&a).len(), 3);
    assert_eq!(fib_hops(&rib, "/a"), vec![(2, 4)]);
    rib.remove(&a, 2, STATIC_ORIGIN);
    assert_eq!(fib_hops(&rib, "/a"), vec![(2, 7)]);
    rib.remove(&a, 2, FIB_ORIGIN);
    assert_eq!(fib_hops(&rib, "/a"), vec![(2, 10)]);
    // A cost beyond u32 is the FIB's largest.
    rib.add(&a, route(2, 0, u64::MAX)).unwrap();
    assert_eq!(fib_hops(&rib, "/a"), vec![(2, u32::MAX)]);
}

#[test]
fn flags_are_listed_and_expanded() {
    let mut rib = rib();
    let mut capture = route(2, 0, 1);
    capture.flags = ROUTE_FLAG_CHILD_INHERIT | ROUTE_FLAG_CAPTURE;
    rib.add(&name("/a"), capture.clone()).unwrap();
    rib.add(&name("/a/b"), route(3, 0, 1)).unwrap();
    // /a/b inherits /a's ChildInherit route; /a's Capture only stops what is above /a.
    assert_eq!(fib_hops(&rib, "/a"), vec![(2, 1)]);
    assert_eq!(fib_hops(&rib, "/a/b"), vec![(2, 1), (3, 1)]);
    assert_eq!(rib.routes(&name("/a")), &[capture]);
    let names: Vec<String> = rib.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(names, ["/a", "/a/b"]);
}

#[test]
fn routes_expire() {
    let mut rib = rib();
    let a = name("/a");
    let mut soon = route(2, 0, 1);
    soon.expires_ms = Some(1_000);
    let mut later = route(3, 0, 2);
    later.expires_ms = Some(2_000);
    rib.add(&a, soon).unwrap();
    rib.add(&a, later).unwrap();
    rib.add(&a, route(4, 0, 3)).unwrap();
    rib.expire(999);
    assert_eq!(rib.routes(&a).len(), 3);
    rib.expire(1_000);
    assert_eq!(fib_hops(&rib, "/a"), vec![(3, 2), (4, 3)]);
    rib.expire(5_000);
    assert_eq!(fib_hops(&rib, "/a"), vec![(4, 3)]);
    assert_eq!(rib.routes(&a).len(), 1);
}

#[test]
fn face_down_removes_its_routes_and_next_hops() {
    let mut rib = rib();
    rib.add(&name("/a"), route(2, 0, 1)).unwrap();
    rib.add(&name("/a"), route(3, 0, 2)).unwrap();
    rib.add(&name("/b"), route(2, STATIC_ORIGIN, 1)).unwrap();
    rib.add(&name("/c"), route(3, 0, 1)).unwrap();
    // A next hop the RIB did not install goes too.
    rib.fib().add_nexthop(&name("/d"), 2, 9).unwrap();
    rib.face_down(2);
    assert_eq!(fib_hops(&rib, "/a"), vec![(3, 2)]);
    assert!(rib.routes(&name("/b")).is_empty());
    assert!(fib_hops(&rib, "/b").is_empty());
    assert!(fib_hops(&rib, "/d").is_empty());
    assert_eq!(fib_hops(&rib, "/c"), vec![(3, 1)]);
    let names: Vec<String> = rib.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(names, ["/a", "/c"]);
}

#[test]
fn refusals() {
    let mut rib = rib();
    let long = Name::from_uri(&"/x".repeat(MAX_PREFIX_STATES + 1)).unwrap();
    let e = rib.add(&long, route(2, 0, 1)).unwrap_err();
    assert_eq!(e, RibError::PrefixTooLong);
    assert_eq!(
        (e.response().status_code, e.response().status_text),
        (414, "Route prefix cannot exceed 32 components".to_string())
    );
    assert!(rib.routes(&long).is_empty());
    // More faces than a FIB entry holds: the route is kept, the FIB keeps what fits.
    let a = name("/a");
    for face in 0..MAX_NEXTHOPS as FaceId {
        rib.add(&a, route(face + 1, 0, 1)).unwrap();
    }
    let e = rib.add(&a, route(100, 0, 1)).unwrap_err();
    assert_eq!(e, RibError::Fib(FibError::TooManyNextHops));
    assert_eq!(e.to_string(), "FIB update failed: TooManyNextHops");
    assert_eq!(e.response().status_code, 500);
    assert_eq!(rib.routes(&a).len(), MAX_NEXTHOPS + 1);
    assert_eq!(fib_hops(&rib, "/a").len(), MAX_NEXTHOPS);
    assert_eq!(rib.next_hops(&a).len(), MAX_NEXTHOPS);
}
