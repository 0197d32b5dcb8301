use super::*;
use crate::hash::{name_hash, PrefixHashes};
use crate::table::index::{LinePlan, Touch};
use proptest::prelude::*;
use std::collections::BTreeMap;
use wire::{Component, Limits, NameView};

const KEY: HashKey = HashKey::fixed(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);

fn n(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

/// LPM of `name` by one of the two algorithms: (matched prefix and next hops, probes).
fn lpm(fib: &Fib, name: &Name, two_stage: bool) -> (Option<(Name, Vec<NextHop>)>, u64) {
    let w = name.to_wire();
    let v = NameView::decode(&w, &Limits::default()).unwrap();
    let h = PrefixHashes::new(KEY, &v);
    let guard = epoch::pin();
    let mut st = LpmStats::default();
    // A plan resumes the lookup with at least one new line per pass until it reaches the
    // end or its line budget (a bucket and an entry's two lines per probe).
    let mut plan = LinePlan::default();
    fib.prefetch(&v, &h, &mut plan);
    let mut planned = None;
    let mut cursor = FibCursor::default();
    for _ in 0..crate::table::index::PLAN_LINES {
        if let Some(a) = fib.plan(&v, &h, &guard, &mut plan, &mut cursor) {
            assert!(planned.is_none(), "a plan answers once");
            planned = Some(a);
        }
    }
    assert!(plan.complete || plan.is_full(), "plan of {name} stuck");
    // The pass that completes a plan answers it.
    assert_eq!(planned.is_some(), plan.complete, "plan of {name}");
    if let Some((answer, probes)) = planned {
        // The plan's answer is the real lookup's.
        let mut direct = LpmStats::default();
        let want = fib.lookup(&v, &h, &guard, &mut direct);
        assert_eq!(
            answer.map(|e| e as *const FibEntry),
            want.map(|e| e as *const FibEntry),
            "plan of {name} answered differently"
        );
        assert_eq!(probes, direct.probes, "plan of {name} counted other probes");
    }
    if plan.complete {
        // The plan requested every line the real lookup reads.
        struct Audit<'a>(&'a LinePlan, usize);
        impl Touch for Audit<'_> {
            fn touch(&mut self, line: *const u8) -> bool {
                self.1 += usize::from(!self.0.contains(line));
                true
            }
        }
        let mut audit = Audit(&plan, 0);
        let real = fib.two_stage(&v, &h, &guard, &mut FibCursor::default(), &mut audit);
        assert!(real.is_ok());
        assert_eq!(audit.1, 0, "lines of {name}'s lookup left out of its plan");
    }
    let e = if two_stage {
        fib.lookup(&v, &h, &guard, &mut st)
    } else {
        fib.lookup_longest_first(&v, &h, &guard, &mut st)
    };
    assert_eq!(st.lookups, 1);
    let e = e.map(|e| {
        assert!(!e.is_virtual);
        // The matched prefix is the name's first `depth` components.
        let p = name.prefix(usize::from(e.depth));
        assert_eq!(e.hash, name_hash(KEY, &p));
        assert_eq!(e.value(), &value_of(&p)[..]);
        (p, e.nexthops().to_vec())
    });
    (e, st.probes)
}

fn matched(fib: &Fib, uri: &str, two_stage: bool) -> (Option<Name>, u64) {
    let (e, p) = lpm(fib, &n(uri), two_stage);
    (e.map(|(name, _)| name), p)
}

/// A published entry, copied out with its name.
struct Dumped {
    name: Name,
    hash: u64,
    value: Vec<u8>,
    depth: u8,
    md: u8,
    is_virtual: bool,
    nexthops: Vec<NextHop>,
}

/// Every published entry (under the writer lock).
fn dump(fib: &Fib) -> Vec<Dumped> {
    let w = fib.lock();
    w.names
        .iter()
        .enumerate()
        .filter_map(|(slot, name)| {
            let name = name.as_ref()?;
            let e = fib.published(&w, slot as u32).unwrap();
            Some(Dumped {
                name: name.name(),
                hash: e.hash,
                value: e.value().to_vec(),
                depth: e.depth,
                md: e.md,
                is_virtual: e.is_virtual,
                nexthops: e.nexthops().to_vec(),
            })
        })
        .collect()
}

/// The invariants of the virtual entries at M, checked on the table itself.
fn check_invariants(fib: &Fib) {
    let m = fib.m();
    let dumped = dump(fib);
    let all: Vec<&Dumped> = dumped.iter().collect();
    let real: Vec<&Dumped> = all.iter().copied().filter(|e| !e.is_virtual).collect();
    assert_eq!(fib.real_len(), real.len());
    assert_eq!(fib.virtual_len(), all.len() - real.len());
    assert_eq!(fib.index.len(), all.len());
    for e in &all {
        // Every published entry is reachable through the index.
        let w = fib.lock();
        let found = fib.find_exact(&w, e.hash, &e.value).expect("indexed");
        assert_eq!(fib.published(&w, found.slot).unwrap().hash, e.hash);
        drop(w);
        assert_eq!(usize::from(e.depth), e.name.len());
        assert_eq!(e.value, value_of(&e.name));
        assert_eq!(e.hash, name_hash(KEY, &e.name));
        assert_eq!(e.is_virtual, e.nexthops.is_empty());
        assert!(e.nexthops.windows(2).all(|p| p[0].cost <= p[1].cost));
        if e.is_virtual {
            // Every virtual entry has at least one real prefix below it.
            assert!(
                real.iter()
                    .any(|r| r.name.len() > e.name.len() && e.name.is_prefix_of(&r.name)),
                "orphan virtual entry {}",
                e.name
            );
        }
        if usize::from(e.depth) == m {
            let md = real
                .iter()
                .filter(|r| e.name.is_prefix_of(&r.name))
                .map(|r| r.name.len())
                .max()
                .unwrap();
            assert_eq!(usize::from(e.md), md, "md of {}", e.name);
        }
    }
    // Every real prefix deeper than M has an entry at depth M whose md covers it.
    for r in &real {
        if r.name.len() > m {
            let p = r.name.prefix(m);
            let e = all.iter().find(|e| e.name == p).expect("entry at depth M");
            assert!(usize::from(e.md) >= r.name.len());
        }
    }
}

fn paper_fib() -> Fib {
    let fib = Fib::new(KEY, 64, 3);
    fib.add_nexthop(&n("/a"), 1, 10).unwrap();
    fib.add_nexthop(&n("/a/b/d"), 2, 10).unwrap();
    fib.add_nexthop(&n("/a/b/c/d"), 3, 10).unwrap();
    fib
}

#[test]
fn paper_example_algorithm_1() {
    let fib = paper_fib();
    check_invariants(&fib);
    assert_eq!((fib.real_len(), fib.virtual_len(), fib.len()), (3, 1, 4));
    {
        let w = fib.lock();
        let h = name_hash(KEY, &n("/a/b/c"));
        let v = fib.find_exact(&w, h, &value_of(&n("/a/b/c"))).unwrap();
        assert!(v.is_virtual);
        assert_eq!(v.md, 4);
    }
    // So et al. §2.3: 2, 3 and 1 probes (instead of 3, 6 and 3 starting at n).
    assert_eq!(
        matched(&fib, "/a/b/c/d/e/f", true),
        (Some(n("/a/b/c/d")), 2)
    );
    assert_eq!(matched(&fib, "/a/c/d/e/f/g", true), (Some(n("/a")), 3));
    assert_eq!(matched(&fib, "/a/b/d/e/f/g", true), (Some(n("/a/b/d")), 1));
    // The one penalised case of Table 2: /a/b/c/d costs 2 probes against 1.
    assert_eq!(matched(&fib, "/a/b/c/d", true), (Some(n("/a/b/c/d")), 2));
    assert_eq!(matched(&fib, "/a/b/c/d", false), (Some(n("/a/b/c/d")), 1));
    // Our baseline starts at min(n, deepest prefix = 4), not at n.
    assert_eq!(
        matched(&fib, "/a/b/c/d/e/f", false),
        (Some(n("/a/b/c/d")), 1)
    );
    assert_eq!(matched(&fib, "/a/c/d/e/f/g", false), (Some(n("/a")), 4));
    assert_eq!(matched(&fib, "/a/b/d/e/f/g", false), (Some(n("/a/b/d")), 2));
    // Stage 2 falls back below M through the virtual /a/b/c.
    assert_eq!(matched(&fib, "/a/b/c/x/y", true), (Some(n("/a")), 4));
    assert_eq!(matched(&fib, "/a/b", true), (Some(n("/a")), 2));
    assert_eq!(matched(&fib, "/b/c/d/e", true), (None, 3));
}

/// What the planning passes of `uri`'s lookup answer: (depth of the match, probes), or
/// `None` when no pass answered.
fn plan_answer(fib: &Fib, uri: &str) -> Option<(Option<u8>, u64)> {
    let w = n(uri).to_wire();
    let v = NameView::decode(&w, &Limits::default()).unwrap();
    let h = PrefixHashes::new(KEY, &v);
    let guard = epoch::pin();
    let mut plan = LinePlan::default();
    fib.prefetch(&v, &h, &mut plan);
    let mut cursor = FibCursor::default();
    let mut answers = (0..crate::table::index::PLAN_LINES)
        .filter_map(|_| fib.plan(&v, &h, &guard, &mut plan, &mut cursor));
    let first = answers
        .next()
        .map(|(e, probes)| (e.map(|e| e.depth), probes));
    assert!(answers.next().is_none(), "a plan answers once");
    assert!(plan.complete);
    first
}

#[test]
fn the_pass_that_completes_a_plan_answers_the_lookup() {
    let fib = paper_fib();
    // The answer comes from the probe of the last pass: stage 2, stage 1 below M, the
    // fall-back below M through a virtual entry, and no route at all.
    assert_eq!(plan_answer(&fib, "/a/b/c/d/e/f"), Some((Some(4), 2)));
    assert_eq!(plan_answer(&fib, "/a/c/d/e/f/g"), Some((Some(1), 3)));
    assert_eq!(plan_answer(&fib, "/a/b/c/x/y"), Some((Some(1), 4)));
    assert_eq!(plan_answer(&fib, "/a/b/d/e/f/g"), Some((Some(3), 1)));
    assert_eq!(plan_answer(&fib, "/b/c/d/e"), Some((None, 3)));
}

#[test]
fn nexthops_update_remove_and_virtual_cleanup() {
    let fib = paper_fib();
    fib.add_nexthop(&n("/a"), 5, 1).unwrap();
    fib.add_nexthop(&n("/a"), 1, 20).unwrap();
    let (e, _) = lpm(&fib, &n("/a/x"), true);
    assert_eq!(
        e.unwrap().1,
        vec![NextHop { face: 5, cost: 1 }, NextHop { face: 1, cost: 20 }]
    );
    assert!(!fib.remove_nexthop(&n("/a"), 9));
    assert!(!fib.remove_nexthop(&n("/a/b/c"), 3)); // virtual: no next hops
    assert!(fib.remove_nexthop(&n("/a/b/c/d"), 3));
    check_invariants(&fib);
    assert_eq!((fib.real_len(), fib.virtual_len()), (2, 0));
    assert_eq!(matched(&fib, "/a/b/c/d/e", true), (Some(n("/a")), 3));
    // A real entry at M keeps its md while deeper prefixes come and go.
    fib.add_nexthop(&n("/a/b/d/e/f"), 4, 0).unwrap();
    check_invariants(&fib);
    assert_eq!(
        matched(&fib, "/a/b/d/e/f/g", true),
        (Some(n("/a/b/d/e/f")), 2)
    );
    assert_eq!(matched(&fib, "/a/b/d/e/x", true), (Some(n("/a/b/d")), 3));
    assert_eq!(fib.remove_face(4), 1);
    assert_eq!(fib.remove_face(5), 1);
    check_invariants(&fib);
    assert_eq!(
        fib.entries(),
        vec![
            (n("/a"), vec![NextHop { face: 1, cost: 20 }]),
            (n("/a/b/d"), vec![NextHop { face: 2, cost: 10 }]),
        ]
    );
}

#[test]
fn default_route_and_depth_limit() {
    let fib = Fib::new(KEY, 16, 2);
    assert_eq!(matched(&fib, "/x/y/z", true), (None, 2));
    fib.add_nexthop(&Name::new(), 7, 0).unwrap();
    assert_eq!(matched(&fib, "/x/y/z", true), (Some(Name::new()), 3));
    assert_eq!(matched(&fib, "/x/y/z", false), (Some(Name::new()), 1));
    assert_eq!(matched(&fib, "/", true), (Some(Name::new()), 1));
    let mut deep = Name::new();
    for i in 0..=MAX_PREFIX_STATES {
        deep.push(Component::generic(format!("{i}").into_bytes()));
    }
    assert_eq!(
        fib.add_nexthop(&deep, 1, 1),
        Err(FibError::TooDeep { depth: 33 })
    );
    fib.add_nexthop(&deep.prefix(MAX_PREFIX_STATES), 1, 1)
        .unwrap();
    check_invariants(&fib);
    assert_eq!(
        matched(&fib, &deep.to_string(), true).0,
        Some(deep.prefix(32))
    );
    assert!(fib.remove_nexthop(&Name::new(), 7));
    assert_eq!(matched(&fib, "/x/y/z", true), (None, 2));
}

#[test]
fn capacity_is_enforced_without_partial_updates() {
    let fib = Fib::new(KEY, 3, 1);
    fib.add_nexthop(&n("/a/b"), 1, 0).unwrap(); // /a/b and virtual /a
    fib.add_nexthop(&n("/a/c"), 1, 0).unwrap();
    assert_eq!(fib.add_nexthop(&n("/b/c"), 1, 0), Err(FibError::Full)); // needs 2
    check_invariants(&fib);
    assert_eq!(fib.len(), 3);
    fib.add_nexthop(&n("/a"), 1, 0).unwrap(); // the virtual /a turns real
    assert_eq!(fib.set_m(2), Ok(())); // no new entry needed at depth 2
    check_invariants(&fib);
    assert!(fib.remove_nexthop(&n("/a"), 1));
    assert_eq!(fib.len(), 2);
}

#[test]
fn garbage_tokens_cost_at_most_m_probes() {
    let fib = Fib::new(KEY, 256, 3);
    for uri in [
        "/com",
        "/com/example",
        "/com/example/www",
        "/org/ndn/x/y/z/w",
    ] {
        fib.add_nexthop(&n(uri), 1, 0).unwrap();
    }
    let mut garbage = n("/com/example");
    for i in 0..38 {
        garbage.push(Component::generic(format!("junk{i}").into_bytes()));
    }
    assert_eq!(garbage.len(), 40);
    let (e, p2) = lpm(&fib, &garbage, true);
    assert_eq!(e.unwrap().0, n("/com/example"));
    assert_eq!(p2, 2); // /com/example/junk0 misses, /com/example hits
    let (_, p1) = lpm(&fib, &garbage, false);
    assert_eq!(p1, 5); // from depth 6 (deepest prefix) down to 2
    let mut nomatch = Name::new();
    for i in 0..40 {
        nomatch.push(Component::generic(format!("g{i}").into_bytes()));
    }
    assert_eq!(lpm(&fib, &nomatch, true), (None, 3));
    assert_eq!(lpm(&fib, &nomatch, false), (None, 6));
    // The most-likely heuristic over this FIB's depths (1, 2, 3, 6) picks the first maximum.
    assert_eq!(fib.most_likely_m(), 1);
}

#[test]
fn most_likely_m_follows_table_5() {
    // Table 5's per-depth distribution (in permille, depth 1 lumped into 3): M = 4.
    let fib = Fib::new(KEY, 2048, 8);
    let dist = [
        (2, 18),
        (3, 285),
        (4, 369),
        (5, 191),
        (6, 69),
        (7, 33),
        (8, 34),
    ];
    let mut added = 0;
    for (depth, count) in dist {
        for i in 0..count {
            let mut name = Name::new();
            name.push(Component::generic(format!("r{}", i % 7).into_bytes()));
            for d in 1..depth {
                name.push(Component::generic(format!("c{d}-{depth}-{i}").into_bytes()));
            }
            fib.add_nexthop(&name, 1, 0).unwrap();
            added += 1;
        }
    }
    assert_eq!(fib.real_len(), added);
    assert_eq!(fib.most_likely_m(), 4);
    fib.set_m(fib.most_likely_m()).unwrap();
    assert_eq!(fib.m(), 4);
    check_invariants(&fib);
    // Each name below depth 4 has its own depth-4 prefix here: one virtual entry each.
    assert_eq!(fib.virtual_len(), 191 + 69 + 33 + 34);
    assert!(fib.expansion_pct() > 30.0);
    fib.set_m(8).unwrap();
    check_invariants(&fib);
    assert_eq!(fib.virtual_len(), 0);
    assert_eq!(fib.expansion_pct(), 0.0);
}

#[test]
fn set_m_while_pinned_keeps_old_virtual_entries() {
    let fib = paper_fib();
    let guard = epoch::pin();
    fib.set_m(2).unwrap(); // no grace period can pass: old M's virtual /a/b/c stays
    assert_eq!(fib.m(), 2);
    assert_eq!(fib.virtual_len(), 2); // /a/b/c (old M) and /a/b (new M)
    drop(guard);
    fib.add_nexthop(&n("/a/b/c/d/e"), 1, 0).unwrap();
    check_invariants(&fib);
    assert_eq!(
        matched(&fib, "/a/b/c/d/e/f", true),
        (Some(n("/a/b/c/d/e")), 2)
    );
    fib.set_m(2).unwrap(); // now the old depth is retired
    check_invariants(&fib);
    assert_eq!(fib.virtual_len(), 1); // only /a/b is left
    assert_eq!(matched(&fib, "/a/b/c/x", true), (Some(n("/a")), 4));
}

#[derive(Debug, Clone)]
enum Op {
    Add(Name, u32, u32),
    Remove(Name, u32),
    RemoveFace(u32),
    SetM(usize),
}

fn name_strategy(max: usize) -> impl Strategy<Value = Name> {
    proptest::collection::vec(proptest::sample::select(vec!["a", "b", "c"]), 0..=max).prop_map(
        |cs| {
            let mut name = Name::new();
            for c in cs {
                name.push(Component::generic(c.as_bytes()));
            }
            name
        },
    )
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (name_strategy(6), 0..4u32, 0..5u32).prop_map(|(n, f, c)| Op::Add(n, f, c)),
        3 => (name_strategy(6), 0..4u32).prop_map(|(n, f)| Op::Remove(n, f)),
        1 => (0..4u32).prop_map(Op::RemoveFace),
        1 => (1..=6usize).prop_map(Op::SetM),
    ]
}

fn reference_lpm(r: &BTreeMap<Name, Vec<NextHop>>, name: &Name) -> Option<(Name, Vec<NextHop>)> {
    (0..=name.len()).rev().find_map(|k| {
        let p = name.prefix(k);
        r.get(&p).map(|nh| (p, nh.clone()))
    })
}

proptest! {
    #[test]
    fn agrees_with_reference_model(
        m0 in 1..=5usize,
        ops in proptest::collection::vec(op_strategy(), 1..40),
        interests in proptest::collection::vec(name_strategy(9), 1..24),
    ) {
        let fib = Fib::new(KEY, 512, m0);
        let mut reference: BTreeMap<Name, Vec<NextHop>> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Add(name, face, cost) => {
                    fib.add_nexthop(&name, face, cost).unwrap();
                    let nh = reference.entry(name).or_default();
                    match nh.iter_mut().find(|x| x.face == face) {
                        Some(x) => x.cost = cost,
                        None => nh.push(NextHop { face, cost }),
                    }
                    nh.sort_by_key(|x| (x.cost, x.face));
                }
                Op::Remove(name, face) => {
                    let had = reference.get(&name).is_some_and(|v| v.iter().any(|x| x.face == face));
                    prop_assert_eq!(fib.remove_nexthop(&name, face), had);
                    if let Some(v) = reference.get_mut(&name) {
                        v.retain(|x| x.face != face);
                        if v.is_empty() {
                            reference.remove(&name);
                        }
                    }
                }
                Op::RemoveFace(face) => {
                    let had = reference.values().filter(|v| v.iter().any(|x| x.face == face)).count();
                    prop_assert_eq!(fib.remove_face(face), had);
                    for v in reference.values_mut() {
                        v.retain(|x| x.face != face);
                    }
                    reference.retain(|_, v| !v.is_empty());
                }
                Op::SetM(m) => {
                    fib.set_m(m).unwrap();
                    prop_assert_eq!(fib.m(), m);
                }
            }
            check_invariants(&fib);
            let listed: Vec<(Name, Vec<NextHop>)> =
                reference.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            prop_assert_eq!(fib.entries(), listed);
            for i in &interests {
                let want = reference_lpm(&reference, i);
                let (two, p2) = lpm(&fib, i, true);
                let (one, _) = lpm(&fib, i, false);
                prop_assert_eq!(&two, &want, "2-stage, interest {}", i);
                prop_assert_eq!(&one, &want, "longest-first, interest {}", i);
                // Bounded by the FIB: at most max(M, deepest md) probes, plus `/`.
                let bound = fib.m().max(reference.keys().map(Name::len).max().unwrap_or(0)) + 1;
                prop_assert!(p2 as usize <= bound + 1);
            }
        }
    }
}

/// A 60-character component: prefixes with it do not fit inline.
fn long(i: usize) -> String {
    format!("long-component-{i}-{}", "x".repeat(40))
}

/// Next hops of a flapping route: face 7 at cost 0 always, and any of faces 100..106 at cost
/// 3 × face, sorted, without duplicates.
fn valid_flapping_hops(nh: &[NextHop]) -> bool {
    nh.first() == Some(&NextHop { face: 7, cost: 0 })
        && nh[1..]
            .iter()
            .all(|h| (100..106).contains(&h.face) && h.cost == 3 * h.face)
        && nh
            .windows(2)
            .all(|p| (p[0].cost, p[0].face) < (p[1].cost, p[1].face))
}

#[test]
fn readers_never_lose_routes_or_see_half_written_entries_during_churn() {
    use std::sync::atomic::AtomicBool;
    let fib = Arc::new(Fib::new(KEY, 4096, 3));
    // (interest, expected LPM, flapping): stable routes at depths 2 and 4, never touched by
    // the writer, and flapping routes whose next hops the writer keeps changing.
    let mut cases: Vec<(Name, Name, bool)> = Vec::new();
    for i in 0..16 {
        let s = n(&format!("/s/{i}"));
        fib.add_nexthop(&s, 1, 0).unwrap();
        cases.push((n(&format!("/s/{i}/x/r/w")), s.clone(), false));
        cases.push((n(&format!("/s/{i}/q")), s.clone(), false));
        if i % 2 == 0 {
            let deep = n(&format!("/s/{i}/q/r"));
            fib.add_nexthop(&deep, 2, 0).unwrap();
            cases.push((n(&format!("/s/{i}/q/r/w/v/u")), deep.clone(), false));
            cases.push((deep.clone(), deep, false));
        } else {
            cases.push((n(&format!("/s/{i}/q/r/w/v/u")), s.clone(), false));
        }
    }
    // Flapping routes at depths 2 and 4 (around M), half of them longer than INLINE_PREFIX:
    // inline while they have up to 6 next hops, a heap copy with 7.
    let flapping: Vec<Name> = (0..8)
        .map(|i| match i % 4 {
            0 => n(&format!("/f/{i}")),
            1 => n(&format!("/f/{}", long(i))),
            2 => n(&format!("/f/{i}/g/h")),
            _ => n(&format!("/f/{i}/g/{}", long(i))),
        })
        .collect();
    for f in &flapping {
        assert_eq!(
            f.value_len() > INLINE_PREFIX,
            f.to_string().contains("long")
        );
        fib.add_nexthop(f, 7, 0).unwrap();
        cases.push((
            f.clone().with(Component::generic(&b"x"[..])),
            f.clone(),
            true,
        ));
    }
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let fib = Arc::clone(&fib);
            let done = Arc::clone(&done);
            let prepared: Vec<(Vec<u8>, Name, bool)> = cases
                .iter()
                .map(|(i, e, f)| (i.to_wire(), e.clone(), *f))
                .collect();
            std::thread::spawn(move || {
                let mut batches = 0u64;
                let mut st = LpmStats::default();
                while !done.load(Ordering::Acquire) || batches < 50 {
                    let guard = epoch::pin();
                    // Entries found in this batch, with a copy of what they held.
                    let mut seen = Vec::new();
                    for (w, want, flaps) in &prepared {
                        let v = NameView::decode(w, &Limits::default()).unwrap();
                        let h = PrefixHashes::new(KEY, &v);
                        let mut plan = LinePlan::default();
                        fib.prefetch(&v, &h, &mut plan);
                        fib.plan(&v, &h, &guard, &mut plan, &mut FibCursor::default());
                        for two_stage in [true, false] {
                            let e = if two_stage {
                                fib.lookup(&v, &h, &guard, &mut st)
                            } else {
                                fib.lookup_longest_first(&v, &h, &guard, &mut st)
                            };
                            let e = e.unwrap_or_else(|| {
                                panic!("lost {want} (2-stage: {two_stage}, M={})", fib.m())
                            });
                            assert_eq!(e.value(), &value_of(want)[..], "wrong match");
                            assert_eq!(e.hash, name_hash(KEY, want));
                            assert_eq!(usize::from(e.depth), want.len());
                            assert!(!e.is_virtual);
                            if *flaps {
                                assert!(valid_flapping_hops(e.nexthops()), "{e:?}");
                            } else {
                                assert_eq!(e.nexthops().len(), 1);
                            }
                            let copy = (e.value().to_vec(), e.nexthops().to_vec(), e.md, e.depth);
                            seen.push((e, copy));
                        }
                    }
                    // Nothing a reader holds changes while it is pinned (no slot reuse).
                    std::thread::yield_now();
                    for (e, (value, nh, md, depth)) in &seen {
                        assert_eq!((e.value(), e.nexthops()), (&value[..], &nh[..]));
                        assert_eq!((e.md, e.depth), (*md, *depth));
                    }
                    drop(guard);
                    batches += 1;
                    std::thread::yield_now();
                }
                batches
            })
        })
        .collect();
    // Churn: prefixes that share M-prefixes with the stable ones (changing md and virtual
    // entries under them) without ever being a longer match for the readers' names, and
    // next-hop changes on the flapping routes.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..3000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = (x % 16) as usize;
        let uri = match (x >> 8) % 4 {
            0 => format!("/s/{i}/z"),
            1 => format!("/s/{i}/q/z/k/j"),
            2 => format!("/s/{i}/x/y/z/k/j"),
            _ => format!("/t/{i}/a/b/c"),
        };
        let name = n(&uri);
        if (x >> 20) % 2 == 0 {
            fib.add_nexthop(&name, 3, round).unwrap();
        } else {
            fib.remove_nexthop(&name, 3);
        }
        let f = &flapping[(x >> 24) as usize % flapping.len()];
        let face = 100 + (x >> 32) as u32 % 6;
        if (x >> 40) % 2 == 0 {
            fib.add_nexthop(f, face, 3 * face).unwrap();
        } else {
            fib.remove_nexthop(f, face);
        }
        if round % 100 == 0 {
            fib.set_m(1 + (round as usize / 100) % 5).unwrap();
        }
    }
    done.store(true, Ordering::Release);
    for r in readers {
        let batches = r.join().expect("reader panicked");
        assert!(batches >= 50);
    }
    check_invariants(&fib);
}

#[test]
fn long_prefixes_and_the_next_hop_limit() {
    let fib = Fib::new(KEY, 64, 2);
    // Values of 56 (inline whatever the next hops), 104 (inline beside one next hop,
    // running into the entry's second line) and 105 bytes (a heap copy even with one): one
    // component of 54, 102 or 103 bytes; and three long components (a heap copy).
    let at = n(&format!("/{}", "y".repeat(54)));
    let fits = n(&format!("/{}", "y".repeat(102)));
    let over = n(&format!("/{}", "y".repeat(103)));
    let deep = n(&format!("/{}/{}/{}", long(1), long(2), long(3)));
    assert_eq!(
        (at.value_len(), fits.value_len(), over.value_len()),
        (INLINE_PREFIX, 104, 105)
    );
    let all = [&at, &fits, &over, &deep];
    for (i, p) in all.into_iter().enumerate() {
        fib.add_nexthop(p, i as u32 + 1, 0).unwrap();
    }
    check_invariants(&fib);
    // Where each prefix is kept, and the match and next hops read back from there.
    let stored_inline = |p: &Name| {
        let w = p.to_wire();
        let v = NameView::decode(&w, &Limits::default()).unwrap();
        let h = PrefixHashes::new(KEY, &v);
        let guard = epoch::pin();
        let e = fib
            .lookup(&v, &h, &guard, &mut LpmStats::default())
            .unwrap();
        assert_eq!(e.value(), &value_of(p)[..]);
        e.heap_lines().is_none()
    };
    assert_eq!(all.map(stored_inline), [true, true, false, false]);
    for (i, p) in all.into_iter().enumerate() {
        let (e, _) = lpm(&fib, &p.clone().with(Component::generic(&b"z"[..])), true);
        assert_eq!(
            e,
            Some((
                p.clone(),
                vec![NextHop {
                    face: i as u32 + 1,
                    cost: 0
                }]
            ))
        );
    }
    // A second next hop leaves no room for 104 bytes beside it: the new entry keeps the
    // prefix on the heap, and the entry after the hop goes again holds it inline.
    fib.add_nexthop(&fits, 9, 5).unwrap();
    assert!(!stored_inline(&fits));
    let hops = vec![NextHop { face: 2, cost: 0 }, NextHop { face: 9, cost: 5 }];
    assert_eq!(lpm(&fib, &fits, true).0, Some((fits.clone(), hops)));
    assert_eq!(fib.remove_face(9), 1);
    assert!(stored_inline(&fits));
    check_invariants(&fib);
    // A prefix of the long one is a different entry.
    assert_eq!(lpm(&fib, &deep.prefix(2), true).0, None);
    // At most MAX_NEXTHOPS next hops; updating one of them is still fine.
    for face in 2..=MAX_NEXTHOPS as u32 {
        fib.add_nexthop(&deep, face + 10, face).unwrap();
    }
    assert_eq!(
        fib.add_nexthop(&deep, 99, 0),
        Err(FibError::TooManyNextHops)
    );
    fib.add_nexthop(&deep, 4, 50).unwrap();
    let (e, _) = lpm(&fib, &deep, true);
    let hops = e.unwrap().1;
    assert_eq!(hops.len(), MAX_NEXTHOPS);
    assert_eq!(hops.last(), Some(&NextHop { face: 4, cost: 50 }));
    assert_eq!(fib.remove_face(4), 1);
    check_invariants(&fib);
    assert_eq!(fib.entries().len(), 4);
}

#[test]
fn retired_slots_are_recycled_after_a_grace_period() {
    // 4 entries, 256 spare slots: thousands of updates only work if slots come back.
    let fib = Fib::new(KEY, 4, 1);
    let p = n("/a/b");
    for round in 0..3000u32 {
        fib.add_nexthop(&p, 1, round).unwrap();
        if round % 3 == 0 {
            assert!(fib.remove_nexthop(&p, 1));
        }
    }
    check_invariants(&fib);
    assert_eq!(fib.len(), 2);
    assert!(fib.lock().fresh as usize <= fib.arena.len());
    // While this thread is pinned nothing comes back: updates fail once the spare slots are
    // used up, and work again after unpinning.
    let guard = epoch::pin();
    let err = (0..1000u32).find_map(|c| fib.add_nexthop(&p, 1, c).err());
    assert_eq!(err, Some(FibError::Full));
    check_invariants(&fib);
    drop(guard);
    fib.add_nexthop(&p, 1, 7).unwrap();
    assert_eq!(fib.entries(), vec![(p, vec![NextHop { face: 1, cost: 7 }])]);
}
