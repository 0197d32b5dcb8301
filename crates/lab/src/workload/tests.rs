use std::collections::HashSet;

use wire::Name;

use super::fib::apportion;
use super::vocab::TLDS;
use super::*;

fn share(hist: &[usize], lo: usize, hi: usize, total: usize) -> f64 {
    let n: usize = hist
        .iter()
        .enumerate()
        .filter(|(d, _)| (lo..=hi).contains(d))
        .map(|(_, c)| c)
        .sum();
    n as f64 / total as f64
}

#[test]
fn rng_is_deterministic_and_in_range() {
    let a: Vec<u64> = {
        let mut r = Rng::new(42);
        (0..100).map(|_| r.next_u64()).collect()
    };
    let b: Vec<u64> = {
        let mut r = Rng::new(42);
        (0..100).map(|_| r.next_u64()).collect()
    };
    let c: Vec<u64> = {
        let mut r = Rng::new(43);
        (0..100).map(|_| r.next_u64()).collect()
    };
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut r = Rng::new(0);
    let mut counts = [0usize; 10];
    for _ in 0..100_000 {
        let x = r.below(10);
        counts[x as usize] += 1;
        let f = r.f64();
        assert!((0.0..1.0).contains(&f));
        let k = r.range(3, 5);
        assert!((3..=5).contains(&k));
    }
    for c in counts {
        assert!((9_500..10_500).contains(&c), "{counts:?}");
    }
    let mut v: Vec<u32> = (0..100).collect();
    r.shuffle(&mut v);
    let mut sorted = v.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    assert_ne!(v, sorted);
}

#[test]
fn discrete_and_zipf_follow_their_weights() {
    let d = Discrete::new(&[1.0, 0.0, 3.0]);
    assert!((d.mean() - 1.5).abs() < 1e-12);
    let mut r = Rng::new(7);
    let mut counts = [0usize; 3];
    for _ in 0..40_000 {
        counts[d.sample(&mut r)] += 1;
    }
    assert_eq!(counts[1], 0);
    assert!((9_300..10_700).contains(&counts[0]), "{counts:?}");
    let z = Zipf::new(1000, 1.0);
    let mut counts = vec![0usize; 1000];
    for _ in 0..50_000 {
        counts[z.sample(&mut r)] += 1;
    }
    // P(rank 0) = 1/H(1000) ≈ 0.1336; rank 1 about half of that.
    assert!((6_200..7_200).contains(&counts[0]), "{}", counts[0]);
    assert!(counts[0] > counts[1] && counts[1] > counts[9]);
}

#[test]
fn stats_and_reference_helpers() {
    let n = |s: &str| Name::from_uri(s).unwrap();
    let names = vec![n("/com/cisco/ndn"), n("/com/cisco/ndn"), n("/a")];
    let s = stats(&names);
    assert_eq!(s.count, 3);
    assert_eq!(s.distinct, 2);
    assert_eq!(url_chars(&names[0]), 14); // "/com/cisco/ndn"
    assert!((s.mean_components - 7.0 / 3.0).abs() < 1e-12);
    assert!((s.mean_chars - 30.0 / 3.0).abs() < 1e-12);
    assert_eq!(stats(&[]).count, 0);
    assert_eq!(depth_histogram(&names), vec![0, 1, 0, 2]);

    let fib = vec![
        n("/com/a"),
        n("/com/a/b/c"),
        n("/com/d/e/f"),
        n("/com/d/e/g"),
    ];
    // Depth-3 virtual entries: /com/a/b and /com/d/e (once).
    assert_eq!(virtual_entries_needed(&fib, 3), 2);
    assert_eq!(virtual_entries_needed(&fib, 2), 1); // /com/d
    assert_eq!(virtual_entries_needed(&fib, 4), 0);
    let lpm = NaiveLpm::new(&fib);
    assert_eq!(lpm.longest_match(&n("/com/a/b/x")), Some(2));
    assert_eq!(lpm.longest_match(&n("/com/a/b/c/d")), Some(4));
    assert_eq!(lpm.longest_match(&n("/com/d/e")), None);
    assert!(lpm.contains(&n("/com/d/e/g").components));

    assert_eq!(apportion(10, &[0.5, 0.0, 0.5]), vec![5, 0, 5]);
    assert_eq!(apportion(7, &[1.0, 1.0, 1.0]).iter().sum::<usize>(), 7);
}

#[test]
fn ircache_names_match_table3() {
    let names = ircache_like_names(0x5EED, 100_000);
    let s = stats(&names);
    assert!((s.mean_components - 6.66).abs() <= 0.15, "{s:?}");
    assert!((s.mean_chars - 58.4).abs() <= 2.0, "{s:?}");
    assert!(s.distinct >= 95_000, "{s:?}");
    let tlds: HashSet<&[u8]> = TLDS.iter().map(|t| t.0.as_bytes()).collect();
    let mut queries = 0;
    for n in &names {
        assert!(n.len() >= 2, "{n}");
        assert!(tlds.contains(n.components[0].value.as_slice()), "{n}");
        for (i, c) in n.components.iter().enumerate() {
            assert_eq!(c.typ, 8);
            assert!(!c.value.is_empty());
            if c.value.starts_with(b"?") {
                assert_eq!(i + 1, n.len(), "query is the last component: {n}");
                assert!(c.value.contains(&b'='));
                queries += 1;
            }
        }
    }
    assert!((20_000..32_000).contains(&queries), "{queries}");
    let multi = names
        .iter()
        .filter_map(|n| n.components.last())
        .filter(|c| c.value.contains(&b'&'))
        .count();
    assert!(multi > 10_000, "{multi}");
    // Sites are Zipf-popular: prefixes are shared.
    let sites: HashSet<Name> = names.iter().map(|n| n.prefix(2)).collect();
    assert!(sites.len() < 20_000, "{}", sites.len());
}

#[test]
fn generators_are_deterministic() {
    assert_eq!(ircache_like_names(3, 2000), ircache_like_names(3, 2000));
    assert_ne!(ircache_like_names(3, 2000), ircache_like_names(4, 2000));
    let fib = synthetic_fib(3, 2000);
    assert_eq!(fib, synthetic_fib(3, 2000));
    assert_ne!(fib, synthetic_fib(4, 2000));
    assert_eq!(
        interests_for_fib(5, &fib, 2000),
        interests_for_fib(5, &fib, 2000)
    );
    assert_ne!(
        interests_for_fib(5, &fib, 2000),
        interests_for_fib(6, &fib, 2000)
    );
    assert_eq!(
        garbage_token_names(1, 50, 30),
        garbage_token_names(1, 50, 30)
    );
    assert_ne!(
        garbage_token_names(1, 50, 30),
        garbage_token_names(2, 50, 30)
    );
    assert_eq!(
        shared_long_prefix_names(1, 50, 20),
        shared_long_prefix_names(1, 50, 20)
    );
    assert_ne!(
        shared_long_prefix_names(1, 50, 20),
        shared_long_prefix_names(2, 50, 20)
    );
    assert_eq!(random_binary_names(1, 50), random_binary_names(1, 50));
    assert_ne!(random_binary_names(1, 50), random_binary_names(2, 50));
    // A longer run starts with the shorter one (names do not depend on the count)...
    assert_eq!(
        ircache_like_names(3, 3000)[..2000],
        ircache_like_names(3, 2000)[..]
    );
}

#[test]
fn fib_follows_table5() {
    let fib = synthetic_fib(0xF1B, 100_000);
    let s = stats(&fib);
    assert_eq!(s.count, 100_000);
    assert_eq!(s.distinct, 100_000, "FIB prefixes are distinct");
    assert!((s.mean_components - 4.26).abs() <= 0.1, "{s:?}");
    let h = depth_histogram(&fib);
    let total = fib.len();
    let buckets = [
        (0, 2, 0.018),
        (3, 3, 0.285),
        (4, 4, 0.369),
        (5, 5, 0.191),
        (6, 6, 0.069),
        (7, 7, 0.033),
        (8, usize::MAX, 0.034),
    ];
    for (lo, hi, want) in buckets {
        let got = share(&h, lo, hi, total);
        assert!(
            (got - want).abs() <= 0.01,
            "depth {lo}..={hi}: {got} vs {want}"
        );
    }
    // Realistic hierarchy: deep prefixes mostly have their parent in the FIB.
    let lpm = NaiveLpm::new(&fib);
    let deep: Vec<&Name> = fib.iter().filter(|n| n.len() >= 5).collect();
    let with_parent = deep
        .iter()
        .filter(|n| lpm.contains(&n.components[..n.len() - 1]))
        .count();
    assert!(
        with_parent * 10 >= deep.len() * 6,
        "{with_parent}/{}",
        deep.len()
    );
    // 2-stage FIB expansion stays small (So et al.: 6.4% at M = 4).
    for m in 3..=8 {
        let e = virtual_entries_needed(&fib, m) as f64 / total as f64;
        assert!(e < 0.10, "expansion at M={m}: {e}");
        if m == 4 {
            assert!(e > 0.01, "expansion at M=4 suspiciously small: {e}");
        }
    }
    // The most-likely heuristic of So et al. picks M = 4 for this FIB.
    let most_likely = (0..h.len()).max_by_key(|&d| h[d]).unwrap();
    assert_eq!(most_likely, 4);
}

#[test]
fn fib_small_counts() {
    assert!(synthetic_fib(1, 0).is_empty());
    for count in [1, 2, 7, 50] {
        let fib = synthetic_fib(1, count);
        assert_eq!(fib.len(), count);
        assert_eq!(stats(&fib).distinct, count);
    }
}

#[test]
fn interests_mostly_match_the_fib() {
    let fib = synthetic_fib(11, 50_000);
    let interests = interests_for_fib(12, &fib, 50_000);
    let s = stats(&interests);
    assert_eq!(s.count, 50_000);
    assert!((s.mean_components - 6.66).abs() <= 0.15, "{s:?}");
    assert!(s.distinct >= 47_500, "{s:?}");
    let lpm = NaiveLpm::new(&fib);
    let mut matched = 0;
    let mut distance = 0;
    for n in &interests {
        if let Some(k) = lpm.longest_match(n) {
            matched += 1;
            assert!(k < n.len(), "Interests extend their prefix: {n}");
            distance += n.len() - k;
        }
    }
    let ratio = matched as f64 / interests.len() as f64;
    assert!((ratio - 0.9).abs() <= 0.01, "match ratio {ratio}");
    // The seed reports a mean distance of 2.40 components between Interest and FIB name.
    let d = distance as f64 / matched as f64;
    assert!((2.0..2.8).contains(&d), "mean distance {d}");

    let all_miss = interests_for_fib(1, &[], 100);
    assert_eq!(all_miss.len(), 100);
    let all_hit = interests_for_fib_with(
        1,
        &fib,
        1000,
        &InterestConfig {
            match_ratio: 1.0,
            ..InterestConfig::default()
        },
    );
    assert!(all_hit.iter().all(|n| lpm.longest_match(n).is_some()));
}

#[test]
fn interests_miss_even_under_tld_routes() {
    // A FIB that routes every TLD: the non-matching names must still miss.
    let fib: Vec<Name> = TLDS.iter().map(|t| Name::new().with_str(t.0)).collect();
    let interests = interests_for_fib(2, &fib, 1000);
    let lpm = NaiveLpm::new(&fib);
    let misses = interests
        .iter()
        .filter(|n| lpm.longest_match(n).is_none())
        .count();
    assert_eq!(misses, 100);
}

#[test]
fn attack_shapes() {
    let fib = synthetic_fib(1, 10_000);
    let lpm = NaiveLpm::new(&fib);

    let garbage = garbage_token_names(1, 1000, 32);
    assert_eq!(garbage.len(), 1000);
    assert_eq!(stats(&garbage).distinct, 1000);
    for n in &garbage {
        assert_eq!(n.len(), 32);
        assert!(n
            .components
            .iter()
            .all(|c| (4..=12).contains(&c.value.len())
                && c.value.iter().all(u8::is_ascii_alphanumeric)));
        assert_eq!(lpm.longest_match(n), None);
    }

    let shared = shared_long_prefix_names(1, 1000, 40);
    assert_eq!(stats(&shared).distinct, 1000);
    let prefix = shared[0].prefix(40);
    for n in &shared {
        assert_eq!(n.len(), 41);
        assert!(prefix.is_prefix_of(n));
    }

    let binary = random_binary_names(1, 1000);
    let mut bytes = 0usize;
    let mut unprintable = 0usize;
    for n in &binary {
        assert!((1..=16).contains(&n.len()));
        for c in &n.components {
            assert!(c.value.len() <= 40);
            bytes += c.value.len();
            unprintable += c
                .value
                .iter()
                .filter(|b| !(0x20..0x7f).contains(*b))
                .count();
        }
        // Legal names: they survive an encode/decode round trip.
        assert_eq!(&Name::decode(&n.to_wire()).unwrap(), n);
    }
    assert!(unprintable * 2 > bytes, "{unprintable}/{bytes}");
}
