//! Write times a caller gives (write-back records a chunk's arrival) and CanBePrefix misses
//! completed without data (a router with several workers hands them on).

use super::*;

#[test]
fn a_chunk_admitted_with_its_arrival_time_reads_back_aged_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = tier(dir.path());
    let now = t.l2().now_ms();
    let (old, d_old) = chunk_fresh("/w/seg=0", 10_000);
    let (new, d_new) = chunk_fresh("/w/seg=1", 10_000);
    let (later, d_later) = chunk_fresh("/w/seg=2", 10_000);
    assert_eq!(
        t.admit_arrived(&old, &d_old, Some(now - 60_000)),
        Admit::Writing
    );
    assert_eq!(t.admit(&new, &d_new), Admit::Writing);
    // A time past now is recorded as now.
    let future = Some(now + 3_600_000);
    assert_eq!(t.admit_arrived(&later, &d_later, future), Admit::Writing);
    t.l2_mut().flush();
    let mut at = std::collections::HashMap::new();
    for (h, n) in [(1, &old), (2, &new), (3, &later)] {
        assert!(t.lookup(h, n));
    }
    while t.waiting() > 0 {
        t.wait(|c| {
            if let Some(h) = c.full_hash {
                at.insert(h, c.stored_at_ms);
            }
        });
    }
    let read_at = t.l2().now_ms();
    assert_eq!(at[&1], now - 60_000);
    assert!((now..=read_at).contains(&at[&2]) && (now..=read_at).contains(&at[&3]));
    // Aged from its arrival a minute ago, the first is stale for MustBeFresh (fresh 10 s).
    assert!(t.lookup_fresh(4, &old));
    let mut served = None;
    while t.waiting() > 0 {
        t.wait(|c| {
            if c.full_hash == Some(4) {
                served = Some(c.data.is_some());
            }
        });
    }
    assert_eq!(served, Some(false));
}

#[test]
fn prefix_misses_complete_without_data_when_asked_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = tier(dir.path());
    // Off (the default): a miss answers false at once.
    assert_eq!(prefix_answer(&mut t, "/g", false), None);
    t.set_prefix_miss_completions(true);
    // On: pending, then completed without data, with nothing in flight.
    assert_eq!(prefix_answer(&mut t, "/g", false).as_deref(), Some(""));
    assert_eq!(prefix_answer(&mut t, "/g", true).as_deref(), Some(""));
    assert_eq!((t.counters().prefix_missed, t.waiting()), (2, 0));
    // A hit is unchanged.
    assert_eq!(
        prefix_answer(&mut t, "/f", false).as_deref(),
        Some("/f/seg=0")
    );
    assert_eq!(t.counters().prefix_missed, 2);
    // Bounded: with every prefix wait taken, a miss answers false again.
    let g = value("/g");
    let depth = t.l2().config().queue_depth;
    for _ in 0..depth {
        assert!(t.lookup_prefix(5, &g, false));
    }
    assert!(!t.lookup_prefix(5, &g, false));
    assert_eq!(t.poll(|c| assert!(c.data.is_none())), depth);
    assert_eq!(t.waiting(), 0);
}
