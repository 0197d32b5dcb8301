//! The FIB the RIB derives, case by case as NFD's `FibUpdater` tests describe them
//! (`fib-updates-new-namespace`, `-new-face`, `-update-face`, `-erase-face`): each test builds a
//! RIB, makes one change, and checks the whole FIB against what NFD's updates leave in it.

use super::*;
use engine::hash::HashKey;

const CI: u64 = ROUTE_FLAG_CHILD_INHERIT;
const CAP: u64 = ROUTE_FLAG_CAPTURE;

fn rib() -> Rib {
    Rib::new(Arc::new(Fib::new(HashKey::from_bytes([9; 16]), 1024, 4)))
}

fn name(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

fn insert(rib: &mut Rib, uri: &str, face: FaceId, origin: u64, cost: u64, flags: u64) {
    let r = Route {
        face,
        origin,
        cost,
        flags,
        expires_ms: None,
    };
    rib.add(&name(uri), r).unwrap();
}

/// A RIB with these routes (prefix, face, origin, cost, flags), added in order.
fn build(routes: &[(&str, FaceId, u64, u64, u64)]) -> Rib {
    let mut r = rib();
    for &(uri, face, origin, cost, flags) in routes {
        insert(&mut r, uri, face, origin, cost, flags);
    }
    r
}

/// The whole FIB as "prefix face cost" lines, sorted.
fn fib(rib: &Rib) -> Vec<String> {
    let mut v: Vec<String> = rib
        .fib()
        .entries()
        .into_iter()
        .flat_map(|(n, hops)| {
            hops.into_iter()
                .map(move |h| format!("{n} {} {}", h.face, h.cost))
        })
        .collect();
    v.sort();
    v
}

fn lines(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn new_namespace_inherits_from_ancestors_unless_it_captures() {
    // No flags: the new prefix gets its route and the ancestors' ChildInherit routes.
    let r = build(&[
        ("/a", 2, 0, 70, CI),
        ("/a", 3, 0, 30, CI),
        ("/a/b", 1, 0, 10, 0),
    ]);
    assert_eq!(
        fib(&r),
        lines(&["/a 2 70", "/a 3 30", "/a/b 1 10", "/a/b 2 70", "/a/b 3 30"])
    );
    // Both flags: the children get this route, and lose what came from above.
    let mut r = build(&[("/", 2, 0, 70, CI), ("/a/b", 3, 0, 30, 0)]);
    assert_eq!(fib(&r), lines(&["/ 2 70", "/a/b 2 70", "/a/b 3 30"]));
    insert(&mut r, "/a", 1, 0, 10, CI | CAP);
    assert_eq!(
        fib(&r),
        lines(&["/ 2 70", "/a 1 10", "/a/b 1 10", "/a/b 3 30"])
    );
}

#[test]
fn new_namespace_with_child_inherit_reaches_children_but_not_captured_ones() {
    let r = build(&[
        ("/", 1, 0, 50, CI),
        ("/a/b", 2, 0, 10, 0),
        ("/a/c", 3, 0, 10, CAP),
        ("/a", 1, 0, 10, CI),
    ]);
    // /a's route on face 1 (cost 10) replaces /'s for /a/b; /a/c captures.
    assert_eq!(
        fib(&r),
        lines(&["/ 1 50", "/a 1 10", "/a/b 1 10", "/a/b 2 10", "/a/c 3 10"])
    );
    // A capture without ChildInherit: its children lose the ancestors' routes.
    let r = build(&[
        ("/", 1, 0, 50, CI),
        ("/a/b", 2, 0, 10, 0),
        ("/a", 3, 0, 10, CAP),
    ]);
    assert_eq!(fib(&r), lines(&["/ 1 50", "/a 3 10", "/a/b 2 10"]));
}

#[test]
fn new_face_and_lower_cost_routes() {
    let mut r = build(&[("/", 1, 0, 50, CI), ("/a", 2, 0, 10, 0)]);
    // A cheaper route of another origin on the same face: / and /a take the new cost.
    insert(&mut r, "/", 1, 128, 25, CI);
    assert_eq!(fib(&r), lines(&["/ 1 25", "/a 1 25", "/a 2 10"]));
    // A dearer one changes nothing.
    insert(&mut r, "/", 1, 129, 75, CI);
    assert_eq!(fib(&r), lines(&["/ 1 25", "/a 1 25", "/a 2 10"]));
    // Without ChildInherit, a dearer route of the same face changes nothing either.
    let r = build(&[("/", 1, 0, 50, 0), ("/", 1, 128, 75, 0)]);
    assert_eq!(fib(&r), lines(&["/ 1 50"]));
    // A route without ChildInherit on a prefix is not passed down; a ChildInherit one is.
    let mut r = build(&[
        ("/", 1, 0, 50, CI),
        ("/a", 2, 0, 10, CI),
        ("/a/b", 3, 0, 10, 0),
        ("/a/c", 4, 0, 10, CAP),
        ("/a", 5, 128, 50, 0),
    ]);
    let before = lines(&[
        "/ 1 50",
        "/a 1 50",
        "/a 2 10",
        "/a 5 50",
        "/a/b 1 50",
        "/a/b 2 10",
        "/a/b 3 10",
        "/a/c 4 10",
    ]);
    assert_eq!(fib(&r), before);
    insert(&mut r, "/a", 4, 128, 5, CI);
    let mut after = before.clone();
    after.extend(["/a 4 5".to_string(), "/a/b 4 5".to_string()]);
    after.sort();
    assert_eq!(fib(&r), after);
}

#[test]
fn updated_routes_change_cost_and_flags_below() {
    let base = |r: &mut Rib| {
        insert(r, "/", 1, 0, 50, CI);
        insert(r, "/a", 2, 0, 100, CI);
        insert(r, "/a/b", 3, 0, 10, 0);
        insert(r, "/a/c", 4, 0, 10, CAP);
    };
    let mut r = rib();
    base(&mut r);
    insert(&mut r, "/a", 2, 0, 300, CI);
    assert_eq!(
        fib(&r),
        lines(&[
            "/ 1 50",
            "/a 1 50",
            "/a 2 300",
            "/a/b 1 50",
            "/a/b 2 300",
            "/a/b 3 10",
            "/a/c 4 10"
        ])
    );
    // ChildInherit turned off: /a/b loses face 2.
    insert(&mut r, "/a", 2, 0, 300, 0);
    assert_eq!(
        fib(&r),
        lines(&[
            "/ 1 50",
            "/a 1 50",
            "/a 2 300",
            "/a/b 1 50",
            "/a/b 3 10",
            "/a/c 4 10"
        ])
    );
    // Turned off on a face an ancestor also passes down: the ancestor's route comes back.
    let mut r = build(&[
        ("/", 1, 0, 50, CI),
        ("/a", 1, 0, 100, CI),
        ("/a/b", 2, 0, 10, 0),
    ]);
    assert!(fib(&r).contains(&"/a/b 1 100".to_string()));
    insert(&mut r, "/a", 1, 0, 100, 0);
    assert_eq!(
        fib(&r),
        lines(&["/ 1 50", "/a 1 100", "/a/b 1 50", "/a/b 2 10"])
    );
}

#[test]
fn capture_turned_on_and_off() {
    let mut r = build(&[
        ("/", 1, 0, 50, CI),
        ("/a", 2, 0, 10, 0),
        ("/a/b", 3, 0, 10, 0),
    ]);
    let open = lines(&["/ 1 50", "/a 1 50", "/a 2 10", "/a/b 1 50", "/a/b 3 10"]);
    assert_eq!(fib(&r), open);
    insert(&mut r, "/a", 2, 0, 10, CAP);
    assert_eq!(fib(&r), lines(&["/ 1 50", "/a 2 10", "/a/b 3 10"]));
    insert(&mut r, "/a", 2, 0, 10, 0);
    assert_eq!(fib(&r), open);
}

#[test]
fn erased_routes_uncover_what_they_hid() {
    // A capture erased: the ancestors' routes come back to the prefix and below.
    let mut r = build(&[
        ("/", 1, 0, 5, CI),
        ("/a", 2, 0, 10, 0),
        ("/a/b", 3, 0, 10, 0),
        ("/a", 1, 128, 50, CI | CAP),
    ]);
    assert_eq!(
        fib(&r),
        lines(&["/ 1 5", "/a 1 50", "/a 2 10", "/a/b 1 50", "/a/b 3 10"])
    );
    r.remove(&name("/a"), 1, 128);
    assert_eq!(
        fib(&r),
        lines(&["/ 1 5", "/a 1 5", "/a 2 10", "/a/b 1 5", "/a/b 3 10"])
    );
    // Under a capture that stays, an erased ChildInherit route takes its face away below.
    let mut r = build(&[
        ("/", 1, 0, 5, CI),
        ("/a", 2, 0, 10, CAP),
        ("/a/b", 3, 0, 10, 0),
        ("/a", 1, 128, 50, CI),
    ]);
    assert_eq!(
        fib(&r),
        lines(&["/ 1 5", "/a 1 50", "/a 2 10", "/a/b 1 50", "/a/b 3 10"])
    );
    r.remove(&name("/a"), 1, 128);
    assert_eq!(fib(&r), lines(&["/ 1 5", "/a 2 10", "/a/b 3 10"]));
    // The cheaper of two routes of a face erased: the other's cost.
    let mut r = build(&[("/a", 5, 0, 10, 0), ("/a", 5, 255, 5, 0)]);
    r.remove(&name("/a"), 5, 255);
    assert_eq!(fib(&r), lines(&["/a 5 10"]));
    // The last route of a prefix erased: its entry goes, inherited next hops too.
    r.remove(&name("/a"), 5, 0);
    assert!(fib(&r).is_empty());
    let mut r = build(&[("/a", 5, 0, 10, CI), ("/a/b", 3, 0, 5, 0)]);
    r.remove(&name("/a/b"), 3, 0);
    assert_eq!(fib(&r), lines(&["/a 5 10"]));
    assert!(r.next_hops(&name("/a/b")).is_empty());
}

#[test]
fn a_destroyed_face_leaves_every_entry_it_reached() {
    let mut r = build(&[
        ("/ndn", 7, STATIC_ORIGIN, 10, CI),
        ("/ndn/grp", 8, 0, 0, CI),
        ("/ndn/grp/chat", 9, 0, 0, 0),
        ("/other", 7, 0, 3, 0),
    ]);
    assert_eq!(
        fib(&r),
        lines(&[
            "/ndn 7 10",
            "/ndn/grp 7 10",
            "/ndn/grp 8 0",
            "/ndn/grp/chat 7 10",
            "/ndn/grp/chat 8 0",
            "/ndn/grp/chat 9 0",
            "/other 7 3"
        ])
    );
    r.face_down(7);
    assert_eq!(
        fib(&r),
        lines(&["/ndn/grp 8 0", "/ndn/grp/chat 8 0", "/ndn/grp/chat 9 0"])
    );
    assert!(r.routes(&name("/ndn")).is_empty());
    // Expiry updates the descendants the same way.
    let mut r = rib();
    let up = Route {
        face: 7,
        origin: 0,
        cost: 1,
        flags: CI,
        expires_ms: Some(100),
    };
    r.add(&name("/ndn"), up).unwrap();
    insert(&mut r, "/ndn/grp", 8, 0, 0, 0);
    assert_eq!(
        fib(&r),
        lines(&["/ndn 7 1", "/ndn/grp 7 1", "/ndn/grp 8 0"])
    );
    r.expire(100);
    assert_eq!(fib(&r), lines(&["/ndn/grp 8 0"]));
}

#[test]
fn fib_next_hops_are_not_inherited_and_do_not_inherit() {
    let r = build(&[
        ("/ndn", 7, 0, 10, CI),
        ("/ndn/x", 3, FIB_ORIGIN, 1, 0),
        ("/ndn/y", 4, 0, 1, 0),
    ]);
    assert_eq!(
        fib(&r),
        lines(&["/ndn 7 10", "/ndn/x 3 1", "/ndn/y 4 1", "/ndn/y 7 10"])
    );
}

#[test]
fn route_events_note_added_and_removed_routes() {
    let mut r = build(&[("/a", 1, 65, 0, 0)]);
    assert!(r.take_events().is_empty(), "not tracked yet");
    r.track_events();
    insert(&mut r, "/a", 2, 65, 0, 0);
    insert(&mut r, "/a", 2, 65, 5, 0); // replaced: no event
    insert(&mut r, "/b", 2, FIB_ORIGIN, 5, 0); // fib/add-nexthop: no event
    r.face_down(2);
    let ev: Vec<(String, u64, bool)> = r
        .take_events()
        .into_iter()
        .map(|e| (e.name.to_string(), e.origin, e.added))
        .collect();
    assert_eq!(ev, [("/a".into(), 65, true), ("/a".into(), 65, false)]);
    assert_eq!(r.events_dropped(), 0);
    let lookup = r.lookup(&name("/a/b/c"));
    assert_eq!(lookup, [(1, 0)]);
    assert!(r.has_rib_entry_above(&name("/a/b")));
    assert!(!r.has_rib_entry_above(&name("/b")));
}
