use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

/// SplitMix64: stand-in full-name hashes (uniform 64-bit values, as keyed SipHash gives).
fn hashes(seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed;
    std::iter::repeat_with(move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        fmix64(s)
    })
}

#[test]
fn the_false_positive_rate_at_capacity_is_the_target() {
    for (capacity, target) in [(100_000u64, 0.01), (50_000, 0.001), (20_000, 0.05)] {
        let f = CountingBloom::with_fp_rate(capacity, target).unwrap();
        let g = f.geometry();
        assert!(g.fp_rate(capacity) <= target);
        // The fewest lines: one fewer misses the target.
        let fewer = Geometry {
            lines: g.lines - 1,
            k: g.k,
        };
        assert!(fewer.fp_rate(capacity) > target, "{g:?}");
        let mut it = hashes(capacity);
        for h in it.by_ref().take(capacity as usize) {
            f.insert(h);
        }
        let queries = (2000.0 / target) as usize;
        let fp = it.take(queries).filter(|&h| f.may_contain(h)).count();
        let rate = fp as f64 / queries as f64;
        // 2,000 expected false positives: a standard deviation of 2.2 %; the floor is 20 %.
        eprintln!(
            "capacity {capacity}, target {target}: measured {rate:.5} ({g:?}, {} bytes)",
            g.bytes()
        );
        assert!(
            (rate - target).abs() <= 0.2 * target,
            "capacity {capacity}, target {target}: measured {rate} with {g:?}"
        );
    }
}

#[test]
fn sizing_by_memory_picks_the_best_k_and_refuses_too_little() {
    let small = Geometry::for_bytes(10_000, 16 * 1024).unwrap();
    let large = Geometry::for_bytes(10_000, 128 * 1024 + 63).unwrap();
    assert_eq!((small.lines, large.lines), (256, 2048));
    assert!(large.fp_rate(10_000) < small.fp_rate(10_000));
    for k in 1..=MAX_K {
        let other = Geometry { k, ..large };
        assert!(other.fp_rate(10_000) >= large.fp_rate(10_000) - 1e-15);
    }
    assert_eq!(
        Geometry::for_bytes(10_000, 8 * 1024),
        Err(BloomError::TooSmall { bytes: 8 * 1024 })
    );
    assert_eq!(
        Geometry::for_fp_rate(0, 0.01),
        Err(BloomError::ZeroCapacity)
    );
    assert!(Geometry::for_fp_rate(10, 1.0).is_err());
    assert!(Geometry::for_fp_rate(10, f64::NAN).is_err());
    let tight = Geometry::for_fp_rate(1000, 1e-9).unwrap();
    assert!(tight.fp_rate(1000) <= 1e-9 && tight.k > 8);
}

#[test]
fn a_saturated_counter_sticks_and_nothing_underflows() {
    let f = CountingBloom::new(Geometry { lines: 4, k: 3 }, 10);
    let h = 0x1234_5678_9abc_def0;
    for _ in 0..20 {
        f.insert(h);
    }
    assert!(f.counts(h).iter().all(|&c| c == 15));
    assert!(f.stats().saturated >= 1);
    for _ in 0..40 {
        f.remove(h);
    }
    assert!(f.may_contain(h), "saturated counters never go down");
    // A name never inserted: its counters stay at 0, the underflow is counted.
    let g = CountingBloom::new(Geometry { lines: 4, k: 3 }, 10);
    g.remove(h);
    assert_eq!(g.counts(h), vec![0, 0, 0]);
    assert_eq!(g.stats().underflows, 3);
    assert!(!g.may_contain(h));
    g.insert(h);
    g.remove(h);
    assert!(!g.may_contain(h), "in and out again");
    assert_eq!((g.stats().inserts, g.stats().removes), (1, 2));
}

#[test]
fn the_engine_handle_is_the_same_filter() {
    let f = Arc::new(CountingBloom::new(Geometry { lines: 16, k: 4 }, 100));
    let mut h: Box<dyn CsFilter> = Box::new(BloomHandle(f.clone()));
    h.insert(7);
    assert!(f.may_contain(7) && h.may_hold(7));
    f.remove(7);
    assert!(!h.may_hold(7));
    h.prefetch(9);
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u8),
    Remove(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u8>().prop_map(Op::Insert),
        2 => any::<u8>().prop_map(Op::Remove),
    ]
}

proptest! {
    /// Against a reference multiset: a member is never reported absent (even in a filter
    /// small enough for counters to collide and saturate), a removed name's counts go back,
    /// and with removals only of members no counter ever underflows.
    #[test]
    fn no_false_negatives_against_a_reference_multiset(
        ops in proptest::collection::vec(op(), 1..600),
        lines in 1u64..6,
        k in 1u32..=MAX_K,
    ) {
        let f = CountingBloom::new(Geometry { lines, k }, 100);
        let names: Vec<u64> = hashes(lines * 31 + u64::from(k)).take(256).collect();
        let mut reference: HashMap<u8, u32> = HashMap::new();
        for op in ops {
            match op {
                Op::Insert(n) => {
                    f.insert(names[n as usize]);
                    *reference.entry(n).or_default() += 1;
                }
                Op::Remove(n) => {
                    // Only what is in: the CS and L2 remove only names they hold.
                    if let Some(c) = reference.get_mut(&n).filter(|c| **c > 0) {
                        f.remove(names[n as usize]);
                        *c -= 1;
                    }
                }
            }
            for (&n, &c) in &reference {
                if c > 0 {
                    prop_assert!(f.may_contain(names[n as usize]), "member {n} reported absent");
                }
            }
        }
        prop_assert_eq!(f.stats().underflows, 0);
        // Every name out again: the filter is empty, unless a counter saturated (and stuck).
        for (&n, &c) in &reference {
            for _ in 0..c {
                f.remove(names[n as usize]);
            }
        }
        prop_assert_eq!(f.stats().underflows, 0);
        if f.stats().saturated == 0 {
            prop_assert!(names.iter().all(|&h| !f.may_contain(h)));
        }
    }
}
