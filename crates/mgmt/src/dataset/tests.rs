use super::*;
use crate::FRESHNESS_MS;
use wire::{DataView, Limits};

fn check_segments(content: &[u8], max: usize, expect_count: usize) {
    let ds = Name::from_uri("/localhost/nfd/faces/list").unwrap();
    let segs = dataset_segments(&ds, 42, content, max);
    assert_eq!(segs.len(), expect_count);
    let last = Component::segment(expect_count as u64 - 1);
    let mut all = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let dv = DataView::decode(s, &Limits::default()).unwrap();
        let expect = ds
            .clone()
            .with(Component::version(42))
            .with(Component::segment(i as u64));
        assert_eq!(dv.name().to_name(), expect);
        assert_eq!(
            dv.final_block_id().map(|c| c.to_component()),
            Some(last.clone())
        );
        assert_eq!(dv.freshness_ms(), Some(FRESHNESS_MS));
        assert!(dv.verify_digest_sha256());
        let c = dv.content().unwrap();
        assert!(c.len() <= max);
        all.extend_from_slice(c);
    }
    assert_eq!(all, content);
}

#[test]
fn dataset_segmentation() {
    check_segments(&[], DEFAULT_MAX_SEGMENT_BYTES, 1);
    let big: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
    check_segments(&big[..100], DEFAULT_MAX_SEGMENT_BYTES, 1);
    check_segments(&big[..8000], DEFAULT_MAX_SEGMENT_BYTES, 1);
    check_segments(&big[..8001], DEFAULT_MAX_SEGMENT_BYTES, 2);
    check_segments(&big, DEFAULT_MAX_SEGMENT_BYTES, 3);
    check_segments(&big[..10], 3, 4);
}

#[test]
fn versions_are_kept_a_while_and_at_most_so_many() {
    let bare = Name::from_uri("/localhost/nfd/fib/list").unwrap();
    let seg = |v: u64, s: u64| {
        bare.clone()
            .with(Component::version(v))
            .with(Component::segment(s))
    };
    let mut kept = Versions::default();
    let big = vec![7u8; DEFAULT_MAX_SEGMENT_BYTES + 1];
    let first = kept.answer(&bare, 0, || (10, big.clone())).unwrap();
    assert_eq!(
        first,
        dataset_segments(&bare, 10, &big, DEFAULT_MAX_SEGMENT_BYTES)[0]
    );
    let never = || -> (u64, Vec<u8>) { panic!("no new version for a versioned name") };
    assert_eq!(kept.answer(&seg(10, 0).prefix(5), 10, never), Some(first));
    assert!(kept
        .answer(&seg(10, 1), DATASET_TTL_MS - 1, never)
        .is_some());
    assert!(kept.answer(&seg(10, 2), 0, never).is_none());
    assert!(kept.answer(&seg(11, 0), 0, never).is_none());
    // Any other name is a new version under it (faces/query's filter is a fifth component).
    let query = bare.clone().with(Component::generic(vec![0x96, 0]));
    let q = kept.answer(&query, 0, || (12, vec![1])).unwrap();
    let q = DataView::decode(&q, &Limits::default())
        .unwrap()
        .name()
        .to_name();
    assert_eq!(
        q,
        query
            .clone()
            .with(Component::version(12))
            .with(Component::segment(0))
    );
    assert!(kept.answer(&q, 1, never).is_some());
    assert!(kept.answer(&seg(10, 0), DATASET_TTL_MS, never).is_none());
    // The oldest of more than DATASET_CACHE versions goes.
    for v in 0..=DATASET_CACHE as u64 {
        kept.answer(&bare, 0, || (v, Vec::new()));
    }
    assert!(kept.answer(&seg(0, 0), 0, never).is_none());
    assert!(kept.answer(&seg(1, 0), 0, never).is_some());
}
