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
