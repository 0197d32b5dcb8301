use super::*;
use crate::l2::{Admit, L2Config, ReadStart};

/// The name TLV value of /t/c=<content>/seg=<segment>.
fn name(content: u32, segment: u64) -> Vec<u8> {
    let mut v = vec![8, 1, b't', 8, 4];
    v.extend_from_slice(&content.to_be_bytes());
    v.push(0x32);
    v.push(8);
    v.extend_from_slice(&segment.to_be_bytes());
    v
}

fn payload(content: u32, segment: u64) -> Vec<u8> {
    (0..300u32)
        .map(|i| (i as u64 * 13 + u64::from(content) * 7 + segment) as u8)
        .collect()
}

fn disk(seed: u64, faults: DiskFaults) -> SimDisk {
    SimDisk::new(seed, faults, Arc::new(AtomicU64::new(5)))
}

fn open(d: &SimDisk, extents: u32) -> L2File {
    L2File::open(&L2Config {
        slot_bytes: 512,
        batch: 2,
        queue_depth: 4,
        disk: Some(d.clone()),
        ..L2Config::new("sim", extents)
    })
    .unwrap()
}

/// Offers chunks (0..contents) × (0..segments), stepping the disk when the queue is full;
/// then steps until everything completed.
fn fill(l2: &mut L2File, d: &SimDisk, contents: u32, segments: u64) {
    for c in 0..contents {
        for s in 0..segments {
            let n = name(c, s);
            let chunk = ChunkName::parse(&n).unwrap();
            while l2.admit(&chunk, &payload(c, s)) == Admit::Busy {
                d.step();
                l2.poll(|_| {});
            }
        }
    }
    settle(l2, d);
}

fn settle(l2: &mut L2File, d: &SimDisk) {
    for _ in 0..1000 {
        if l2.in_flight() == 0 {
            return;
        }
        d.step();
        l2.poll(|_| {});
    }
    panic!("the disk never completed");
}

/// Every name the store holds reads back as what was written, or as a miss.
fn never_wrong(l2: &L2File, d: &SimDisk, contents: u32, segments: u64) -> (u64, u64) {
    let (mut served, mut missed) = (0, 0);
    for c in 0..contents {
        for s in 0..segments {
            let n = name(c, s);
            match read_back(l2, d, &ChunkName::parse(&n).unwrap()) {
                ReadBack::NotHeld => {}
                ReadBack::Miss => missed += 1,
                ReadBack::Served(p) => {
                    assert_eq!(p, payload(c, s), "chunk ({c}, {s}) read back wrong");
                    served += 1;
                }
            }
        }
    }
    (served, missed)
}

#[test]
fn operations_complete_only_when_the_disk_is_stepped() {
    let d = disk(1, DiskFaults::NONE);
    let mut l2 = open(&d, 4);
    let n = name(0, 1);
    let chunk = ChunkName::parse(&n).unwrap();
    assert_eq!(l2.admit(&chunk, &payload(0, 1)), Admit::Writing);
    assert_eq!(l2.poll(|_| {}), 0, "nothing completes without a step");
    assert!(!l2.contains(&chunk) && d.queued() == 1);
    assert_eq!(d.step(), 1);
    assert_eq!(l2.poll(|_| {}), 1);
    assert!(l2.contains(&chunk) && d.queued() == 0);
    let ReadStart::Pending { ticket, .. } = l2.read(&chunk) else {
        panic!("held, so pending");
    };
    assert_eq!(l2.poll(|_| {}), 0);
    d.step();
    let mut got = Vec::new();
    l2.poll(|b| {
        assert_eq!(b.ticket, ticket);
        assert_eq!(
            b.now_ms(),
            SIM_EPOCH_MS + 5,
            "the store reads the simulated clock"
        );
        got.extend(b.chunks().map(|c| c.payload.to_vec()));
    });
    assert_eq!(got, vec![payload(0, 1)]);
}

#[test]
fn a_clean_restart_loads_the_index_and_a_crash_rebuilds_it() {
    let d = disk(2, DiskFaults::NONE);
    let mut l2 = open(&d, 8);
    fill(&mut l2, &d, 3, 4);
    let held = l2.stored_chunks();
    assert_eq!(held, 12);
    l2.reopen(true).unwrap();
    assert!(l2.counters().loaded_index_file && !d.has_index());
    assert_eq!(l2.counters().recovered_chunks, held);
    l2.reopen(false).unwrap();
    assert!(
        !l2.counters().loaded_index_file,
        "no index after a crash: a scan"
    );
    assert_eq!(l2.counters().recovered_chunks, held);
    assert_eq!(never_wrong(&l2, &d, 3, 4), (12, 0));
}

#[test]
fn writes_pending_at_a_crash_are_lost_torn_or_whole_and_never_read_back_wrong() {
    let mut crashed = DiskCounts::default();
    for seed in 0..20 {
        let d = disk(seed, DiskFaults::NONE);
        let mut l2 = open(&d, 8);
        fill(&mut l2, &d, 2, 4);
        // Another batch of writes, then the crash before they complete.
        for s in 0..2 {
            let n = name(7, s);
            let _ = l2.admit(&ChunkName::parse(&n).unwrap(), &payload(7, s));
        }
        d.crash();
        assert_eq!(d.queued(), 2, "the crashed store sees its operations fail");
        l2.poll(|_| {});
        assert!(l2.fault().is_some(), "a crashed store is off");
        l2.reopen(false).unwrap();
        assert!(l2.fault().is_none(), "a reopened store is on");
        let (served, _) = never_wrong(&l2, &d, 8, 4);
        assert!(
            served >= 8,
            "seed {seed}: the completed writes survive ({served})"
        );
        crashed.add(&d.counts());
    }
    assert_eq!(crashed.crashes, 20);
    assert!(
        crashed.crash_lost > 0 && crashed.crash_torn > 0,
        "{crashed:?}"
    );
}

#[test]
fn torn_lost_and_flipped_slots_are_misses_never_wrong_data() {
    let faults = DiskFaults {
        torn_write_pm: 300,
        lost_write_pm: 300,
        bit_flip_pm: 500,
        reorder: true,
        max_delay_steps: 3,
        ..DiskFaults::NONE
    };
    let d = disk(3, faults);
    let mut l2 = open(&d, 16);
    fill(&mut l2, &d, 8, 4);
    for _ in 0..200 {
        d.step(); // more bit flips
    }
    let c = d.counts();
    assert!(c.torn_writes > 0 && c.lost_writes > 0 && c.bit_flips > 0 && c.reordered > 0);
    let (served, missed) = never_wrong(&l2, &d, 8, 4);
    assert!(served > 0 && missed > 0, "({served}, {missed})");
    // After a crash and a rebuild, what the scan keeps still reads back right.
    l2.reopen(false).unwrap();
    never_wrong(&l2, &d, 8, 4);
}

#[test]
fn a_read_or_write_error_turns_the_store_off() {
    for (faults, write) in [
        (
            DiskFaults {
                read_error_pm: 1000,
                ..DiskFaults::NONE
            },
            false,
        ),
        (
            DiskFaults {
                write_error_pm: 1000,
                ..DiskFaults::NONE
            },
            true,
        ),
    ] {
        let d = disk(4, faults);
        let mut l2 = open(&d, 4);
        let n = name(0, 0);
        let chunk = ChunkName::parse(&n).unwrap();
        l2.admit(&chunk, &payload(0, 0));
        settle(&mut l2, &d);
        if !write {
            assert!(matches!(l2.read(&chunk), ReadStart::Pending { .. }));
            settle(&mut l2, &d);
        }
        let f = l2.fault().expect("off");
        assert_eq!(f.write, write);
        assert_eq!(l2.read(&chunk), ReadStart::Miss);
        assert_eq!(l2.admit(&chunk, &payload(0, 0)), Admit::Off);
    }
}

#[test]
fn one_seed_one_disk() {
    let run = |seed| {
        let faults = DiskFaults {
            torn_write_pm: 200,
            write_error_pm: 0,
            reorder: true,
            max_delay_steps: 4,
            ..DiskFaults::NONE
        };
        let d = disk(seed, faults);
        let mut l2 = open(&d, 8);
        fill(&mut l2, &d, 4, 4);
        (d.counts(), l2.stored_chunks(), l2.superblock().file_id)
    };
    assert_eq!(run(9), run(9));
    assert_ne!(run(9).2, run(10).2);
}

#[test]
fn a_planted_slot_passes_every_check_of_the_store() {
    let d = disk(5, DiskFaults::NONE);
    let mut l2 = open(&d, 4);
    fill(&mut l2, &d, 1, 2);
    let n = name(0, 1);
    let chunk = ChunkName::parse(&n).unwrap();
    assert!(plant(&l2, &d, &chunk, b"other bytes"));
    assert_eq!(
        read_back(&l2, &d, &chunk),
        ReadBack::Served(b"other bytes".to_vec())
    );
    let absent = name(3, 0);
    assert!(!plant(&l2, &d, &ChunkName::parse(&absent).unwrap(), b"x"));
}

/// A Data packet named `name(c, s)` (the tier checks that a slot's Data carries its name).
fn data(c: u32, s: u64) -> (Vec<u8>, Vec<u8>) {
    let n = name(c, s);
    let mut tlv = vec![7, n.len() as u8];
    tlv.extend_from_slice(&n);
    let d = wire::Data::new(wire::Name::decode(&tlv).unwrap(), payload(c, s));
    (n, d.to_wire())
}

fn config(d: &SimDisk, extents: u32) -> L2Config {
    L2Config {
        slot_bytes: 512,
        batch: 2,
        queue_depth: 4,
        disk: Some(d.clone()),
        ..L2Config::new("sim", extents)
    }
}

/// A prefix filter and its link (the engine's key).
fn prefix_filter() -> (Arc<crate::CountingBloom>, crate::FilterLink) {
    let f = Arc::new(crate::CountingBloom::with_fp_rate(64, 0.01).unwrap());
    let key = engine::hash::HashKey::fixed(1, 2);
    (f.clone(), crate::FilterLink { filter: f, key })
}

/// The prefix filter's counters for the name prefix `/t` and `/t/c=<c>`: all zero if it
/// holds neither.
fn prefix_counts(f: &crate::CountingBloom, c: u32) -> Vec<u8> {
    let key = engine::hash::HashKey::fixed(1, 2);
    let short = name(c, 0)[..3].to_vec();
    let long = name(c, 0)[..9].to_vec();
    [short, long]
        .iter()
        .flat_map(|p| f.counts(engine::hash::value_hash(key, p).max(1)))
        .collect()
}

#[test]
fn a_reopen_completes_the_lookups_waiting_for_its_reads_as_misses() {
    for clean in [false, true] {
        let d = disk(6, DiskFaults::NONE);
        let mut t = crate::L2Tier::new(open(&d, 8), 64);
        let (n, chunk) = data(0, 0);
        assert_eq!(t.admit(&n, &chunk), Admit::Writing);
        while t.l2().in_flight() > 0 {
            d.step();
            t.poll(|_| {});
        }
        assert!(t.lookup(7, &n), "held: pending");
        assert_eq!(t.waiting(), 1);
        if !clean {
            d.crash();
        }
        t.l2_mut().reopen(clean).unwrap();
        assert_eq!(t.l2().orphaned_reads(), 1);
        // The next poll completes the lookup without data: the engine asks upstream.
        let mut got = Vec::new();
        t.poll(|c| got.push((c.full_hash, c.data.is_some())));
        assert_eq!(got, vec![(Some(7), false)], "clean: {clean}");
        assert_eq!((t.waiting(), t.l2().orphaned_reads()), (0, 0));
        // The reopened store serves the chunk to the next lookup.
        assert!(t.lookup(8, &n));
        let mut served = Vec::new();
        while t.waiting() > 0 {
            d.step();
            t.poll(|c| served.push((c.full_hash, c.data.map(<[u8]>::to_vec))));
        }
        assert_eq!(served, vec![(Some(8), Some(chunk))]);
    }
}

#[test]
fn a_store_that_fails_to_open_leaves_none_of_its_prefixes_in_the_filter() {
    let d = disk(7, DiskFaults::NONE);
    let (f, link) = prefix_filter();
    let mut l2 = L2File::open_with_filters(&config(&d, 8), None, Some(link)).unwrap();
    fill(&mut l2, &d, 3, 2);
    assert!(prefix_counts(&f, 0).iter().all(|&c| c > 0));
    // The index file loads; the prefix scan reads two extents (linking their prefixes),
    // then a read fails.
    d.fail_open_read_after(2);
    assert!(l2.reopen(true).is_err());
    assert!(l2.fault().is_some(), "a store that cannot open is off");
    for c in 0..3 {
        assert_eq!(prefix_counts(&f, c), vec![0; prefix_counts(&f, c).len()]);
    }
    assert_eq!(f.stats().underflows, 0);
}

#[test]
fn a_store_reopened_after_a_fault_keeps_its_filters() {
    let d = disk(8, DiskFaults::NONE);
    let (f, link) = prefix_filter();
    let cs = Arc::new(crate::CountingBloom::with_fp_rate(64, 0.01).unwrap());
    let cs_link = crate::FilterLink {
        filter: cs.clone(),
        key: link.key,
    };
    let mut l2 = L2File::open_with_filters(&config(&d, 8), Some(cs_link), Some(link)).unwrap();
    fill(&mut l2, &d, 2, 2);
    let n = name(1, 1);
    let hash = engine::hash::value_hash(engine::hash::HashKey::fixed(1, 2), &n);
    assert!(cs.may_contain(hash));
    // A read fails: the store is off, its names and prefixes out of the filters.
    d.crash();
    assert!(matches!(
        l2.read(&ChunkName::parse(&n).unwrap()),
        ReadStart::Pending { .. }
    ));
    d.step();
    l2.poll(|_| {});
    assert!(l2.fault().is_some());
    assert!(prefix_counts(&f, 1).iter().all(|&c| c == 0));
    // Reopened: the names and prefixes it finds are back in the same filters.
    l2.reopen(false).unwrap();
    assert!(cs.may_contain(hash));
    assert!(prefix_counts(&f, 1).iter().all(|&c| c > 0));
    assert!(matches!(l2.read_prefix(&n[..9]), ReadStart::Pending { .. }));
    assert_eq!((cs.stats().underflows, f.stats().underflows), (0, 0));
}

#[test]
fn the_prefix_scan_finds_an_extent_past_its_damaged_first_slot() {
    let d = disk(9, DiskFaults::NONE);
    let (f, link) = prefix_filter();
    let cfg = config(&d, 4);
    let mut l2 = L2File::open_with_filters(&cfg, None, Some(link.clone())).unwrap();
    fill(&mut l2, &d, 1, 2);
    let (e, slot) = l2
        .held_slot(&ChunkName::parse(&name(0, 0)).unwrap())
        .unwrap();
    let at = l2.superblock().slot_offset(e, slot);
    l2.close().unwrap();
    assert!(prefix_counts(&f, 0).iter().all(|&c| c > 0));
    // Slot 0's header damaged: the index file still says both chunks are held.
    d.poke(at + 3, 0xff);
    let f2 = Arc::new(crate::CountingBloom::with_fp_rate(64, 0.01).unwrap());
    let link2 = crate::FilterLink {
        filter: f2.clone(),
        key: link.key,
    };
    let mut l2 = L2File::open_with_filters(&cfg, None, Some(link2)).unwrap();
    assert!(l2.counters().loaded_index_file);
    assert!(prefix_counts(&f2, 0).iter().all(|&c| c > 0));
    let got = l2.read_prefix(&name(0, 0)[..9]);
    assert!(matches!(got, ReadStart::Pending { .. }), "{got:?}");
}

#[test]
fn faults_on_the_open_path_open_the_store_or_turn_it_off_never_wrong_data() {
    let faults = DiskFaults {
        open_error_pm: 300,
        ..DiskFaults::NONE
    };
    let (mut opened, mut failed) = (0, 0);
    let mut counts = DiskCounts::default();
    for seed in 0..20 {
        let d = disk(seed, faults);
        let mut l2 = open(&d, 8);
        d.arm_open_faults();
        fill(&mut l2, &d, 4, 2);
        for round in 0..8 {
            let clean = (seed + round) % 2 == 0;
            if !clean {
                d.crash();
            }
            match l2.reopen(clean) {
                Ok(()) => {
                    opened += 1;
                    fill(&mut l2, &d, 4, 2);
                }
                Err(_) => {
                    failed += 1;
                    assert!(l2.fault().is_some(), "seed {seed}: failed to open, not off");
                }
            }
            never_wrong(&l2, &d, 4, 2);
        }
        counts.add(&d.counts());
    }
    assert!(opened > 0 && failed > 0, "({opened}, {failed})");
    assert!(counts.open_errors > 0 && counts.open_lost > 0, "{counts:?}");
    assert!(counts.truncated + counts.torn_superblocks > 0, "{counts:?}");
}

/// Content 0's chunk 0 written and settled, alone in its batch's extent: its slot's offset.
fn one_chunk(l2: &mut L2File, d: &SimDisk) -> u64 {
    let n0 = name(0, 0);
    assert_eq!(
        l2.admit(&ChunkName::parse(&n0).unwrap(), &payload(0, 0)),
        Admit::Writing
    );
    settle(l2, d);
    let (e, slot) = l2.held_slot(&ChunkName::parse(&n0).unwrap()).unwrap();
    l2.superblock().slot_offset(e, slot)
}

/// The batch's next chunk gets an extent linked under its prefixes: in the filter `f` and
/// found by a prefix lookup.
fn next_chunk_reachable_by_prefix(l2: &mut L2File, d: &SimDisk, f: &crate::CountingBloom) {
    let n1 = name(0, 1);
    assert_eq!(
        l2.admit(&ChunkName::parse(&n1).unwrap(), &payload(0, 1)),
        Admit::Writing
    );
    settle(l2, d);
    assert!(prefix_counts(f, 0).iter().all(|&c| c > 0));
    assert!(matches!(
        l2.read_prefix(&n1[..9]),
        ReadStart::Pending { .. }
    ));
}

#[test]
fn an_extent_the_prefix_scan_cannot_read_leaves_the_index() {
    let d = disk(10, DiskFaults::NONE);
    let (_, link) = prefix_filter();
    let cfg = config(&d, 4);
    let mut l2 = L2File::open_with_filters(&cfg, None, Some(link)).unwrap();
    let at = one_chunk(&mut l2, &d);
    l2.close().unwrap();
    d.poke(at + 3, 0xff);
    let (f, link) = prefix_filter();
    let mut l2 = L2File::open_with_filters(&cfg, None, Some(link)).unwrap();
    assert!(l2.counters().loaded_index_file);
    assert_eq!(
        l2.stored_chunks(),
        0,
        "its only slot is unreadable: the extent left"
    );
    next_chunk_reachable_by_prefix(&mut l2, &d, &f);
}

#[test]
fn an_extent_left_with_no_chunk_at_a_clean_stop_leaves_the_index() {
    let d = disk(11, DiskFaults::NONE);
    let (_, link) = prefix_filter();
    let cfg = config(&d, 4);
    let mut l2 = L2File::open_with_filters(&cfg, None, Some(link)).unwrap();
    // Content 0's only chunk, damaged on the disk: its read fails the checksum and drops the
    // slot, leaving the extent in use with no chunk present.
    let at = one_chunk(&mut l2, &d);
    d.poke(at + 3, 0xff);
    let n0 = name(0, 0);
    assert!(matches!(
        l2.read(&ChunkName::parse(&n0).unwrap()),
        ReadStart::Pending { .. }
    ));
    let mut chunks = None;
    while chunks.is_none() {
        d.step();
        l2.poll(|b| chunks = Some(b.chunks().count()));
    }
    assert_eq!(chunks, Some(0));
    assert_eq!(l2.counters().checksum_failures, 1);
    assert_eq!(l2.stored_chunks(), 0);
    // A clean stop saves the index with that extent; the next open's prefix scan has no chunk
    // to read a name from: the extent leaves the index instead of staying in use unlinked.
    l2.close().unwrap();
    let (f, link) = prefix_filter();
    let mut l2 = L2File::open_with_filters(&cfg, None, Some(link)).unwrap();
    assert!(l2.counters().loaded_index_file);
    next_chunk_reachable_by_prefix(&mut l2, &d, &f);
}
