use super::*;

/// The name TLV value of /t/c=<content>/seg=<segment>.
fn name(content: u32, segment: u64) -> Vec<u8> {
    let mut v = vec![8, 1, b't', 8, 4];
    v.extend_from_slice(&content.to_be_bytes());
    v.push(0x32);
    v.push(8);
    v.extend_from_slice(&segment.to_be_bytes());
    v
}

fn key_of(l2: &L2File, content: u32, segment: u64) -> u64 {
    let n = name(content, segment);
    let c = ChunkName::parse(&n).unwrap();
    l2.batch_key(c.prefix, c.segment)
}

fn payload(content: u32, segment: u64) -> Vec<u8> {
    (0..1000u32)
        .map(|i| (i as u64 * 31 + u64::from(content) * 7 + segment) as u8)
        .collect()
}

fn config(dir: &Path, extents: u32) -> L2Config {
    L2Config {
        slot_bytes: 2048,
        batch: 4,
        queue_depth: 4,
        io_threads: 2,
        ..L2Config::new(dir.join("l2"), extents)
    }
}

/// Writes every chunk of `contents × segments`, waiting whenever the queue is full.
fn fill(l2: &mut L2File, contents: u32, segments: u64) {
    for c in 0..contents {
        fill_one(l2, c, segments);
    }
}

/// Writes segments `0..segments` of content `c`.
fn fill_one(l2: &mut L2File, c: u32, segments: u64) {
    for s in 0..segments {
        let n = name(c, s);
        let chunk = ChunkName::parse(&n).unwrap();
        loop {
            match l2.admit(&chunk, &payload(c, s)) {
                Admit::Busy => assert!(l2.wait_one(|_| {})),
                other => break assert_ne!(other, Admit::TooLarge),
            }
        }
    }
    l2.flush();
}

/// Reads chunk (c, s): the verified chunks of its batch, or None on a miss.
/// (segment, name, payload) of a chunk read back.
type Got = (u64, Vec<u8>, Vec<u8>);

fn read(l2: &mut L2File, c: u32, s: u64) -> Option<Vec<Got>> {
    let n = name(c, s);
    match l2.read(&ChunkName::parse(&n).unwrap()) {
        ReadStart::Pending { ticket, .. } => {
            let mut out = None;
            while out.is_none() {
                assert!(l2.wait_one(|b| {
                    assert_eq!(b.ticket, ticket);
                    out = Some(
                        b.chunks()
                            .map(|c| (c.segment, c.name.to_vec(), c.payload.to_vec()))
                            .collect(),
                    );
                }));
            }
            out
        }
        ReadStart::Miss => None,
        ReadStart::Busy => panic!("busy with nothing in flight"),
    }
}

fn servable(l2: &mut L2File, contents: u32, segments: u64) -> u64 {
    let mut ok = 0;
    for c in 0..contents {
        for s in (0..segments).step_by(l2.sb.batch as usize) {
            if let Some(chunks) = read(l2, c, s) {
                for (seg, n, p) in chunks {
                    assert_eq!(n, name(c, seg), "wrong name served");
                    assert_eq!(p, payload(c, seg), "wrong data served");
                    ok += 1;
                }
            }
        }
    }
    ok
}

#[test]
fn batches_round_trip_on_both_backends() {
    for backend in [IoBackend::Threads, IoBackend::Auto] {
        let dir = tempfile::tempdir().unwrap();
        let mut l2 = L2File::open(&L2Config {
            backend,
            ..config(dir.path(), 16)
        })
        .unwrap();
        fill(&mut l2, 3, 10); // 3 batches of 4 + one of 2 per content = 9 extents
        assert_eq!(l2.stored_chunks(), 30);
        let got = read(&mut l2, 1, 5).unwrap();
        let segs: Vec<u64> = got.iter().map(|c| c.0).collect();
        assert_eq!(segs, vec![4, 5, 6, 7], "one read returns the whole batch");
        assert_eq!(servable(&mut l2, 3, 10), 30);
        assert_eq!(read(&mut l2, 3, 0), None);
        assert_eq!(read(&mut l2, 0, 10), None);
        let k = *l2.counters();
        assert_eq!(k.checksum_failures, 0);
        assert_eq!(k.writes_submitted, 30);
        assert!(l2.index_bytes_per_chunk() <= 32.0);
    }
}

#[test]
fn index_costs_at_most_32_bytes_per_chunk_from_batch_3() {
    let dir = tempfile::tempdir().unwrap();
    let per_chunk = |batch| {
        let l2 = L2File::open(&L2Config {
            batch,
            ..config(dir.path(), 4)
        })
        .unwrap();
        let b = l2.index_bytes_per_chunk();
        drop(l2);
        std::fs::remove_file(dir.path().join("l2")).unwrap();
        b
    };
    assert!(per_chunk(3) <= 32.0, "{}", per_chunk(3));
    assert!(per_chunk(10) <= 8.0, "{}", per_chunk(10));
}

#[test]
fn direct_io_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    if !supports_direct(dir.path()) {
        eprintln!("O_DIRECT unsupported here; skipped");
        return;
    }
    let mut l2 = L2File::open(&L2Config {
        direct: true,
        ..config(dir.path(), 8)
    })
    .unwrap();
    fill(&mut l2, 2, 8);
    assert_eq!(servable(&mut l2, 2, 8), 16);
}

#[test]
fn fifo_and_lru_evict_whole_batches_in_their_order() {
    for policy in [Replacement::Fifo, Replacement::Lru] {
        let dir = tempfile::tempdir().unwrap();
        let mut l2 = L2File::open(&L2Config {
            replacement: policy,
            ..config(dir.path(), 3)
        })
        .unwrap();
        fill(&mut l2, 3, 4); // contents 0, 1, 2: one extent each, L2 full
        assert!(read(&mut l2, 0, 0).is_some()); // LRU refreshes content 0
        fill(&mut l2, 4, 4); // content 3 evicts one batch
        assert_eq!(l2.counters().evictions, 1);
        let gone = if policy == Replacement::Fifo { 0 } else { 1 };
        assert_eq!(read(&mut l2, gone, 0), None, "{policy:?}");
        for c in (0..4).filter(|&c| c != gone) {
            assert_eq!(read(&mut l2, c, 2).map(|v| v.len()), Some(4), "{policy:?}");
        }
        assert_eq!(l2.order().len(), 3);
    }
}

#[test]
fn decision_policies() {
    let dir = tempfile::tempdir().unwrap();
    let mut never = L2File::open(&L2Config {
        decision: Decision::Lcp { p: 0.0 },
        ..config(dir.path(), 8)
    })
    .unwrap();
    fill(&mut never, 2, 8);
    assert_eq!(never.stored_chunks(), 0);
    assert_eq!(never.counters().admit_rejected, 16);
    drop(never);

    let dir = tempfile::tempdir().unwrap();
    let mut half = L2File::open(&L2Config {
        decision: Decision::Lcp { p: 0.5 },
        ..config(dir.path(), 400)
    })
    .unwrap();
    fill(&mut half, 100, 4); // 100 batches, one decision each
    let kept = half.stored_chunks();
    assert_eq!(kept % 4, 0, "a decision covers the whole batch");
    assert!(
        (120..=280).contains(&kept),
        "{kept} of 400 chunks admitted at p = 0.5"
    );
    drop(half);

    let dir = tempfile::tempdir().unwrap();
    let mut two = L2File::open(&L2Config {
        decision: Decision::TwoLru { filter_batches: 16 },
        ..config(dir.path(), 8)
    })
    .unwrap();
    fill(&mut two, 1, 4);
    assert_eq!(two.stored_chunks(), 0, "first offer of a batch is filtered");
    // A later offer (after this batch's decision is used up) finds the key in the filter.
    fill(&mut two, 1, 4);
    assert_eq!(two.stored_chunks(), 4);
}

#[test]
fn poll_max_bounds_the_completions_one_call_handles() {
    let dir = tempfile::tempdir().unwrap();
    let mut l2 = L2File::open(&config(dir.path(), 8)).unwrap();
    fill(&mut l2, 1, 12); // 3 batches
    for b in 0..3u64 {
        let n = name(0, b * 4);
        assert!(matches!(
            l2.read(&ChunkName::parse(&n).unwrap()),
            ReadStart::Pending { .. }
        ));
    }
    let mut batches = 0;
    let t0 = std::time::Instant::now();
    while batches < 3 {
        assert!(t0.elapsed() < std::time::Duration::from_secs(10));
        let n = l2.poll_max(1, |b| {
            assert_eq!(b.len(), 4);
            batches += 1;
        });
        assert!(n <= 1);
    }
    assert_eq!(l2.in_flight(), 0);
}

#[test]
fn too_large_and_busy_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let mut l2 = L2File::open(&config(dir.path(), 64)).unwrap();
    let n = name(0, 0);
    let chunk = ChunkName::parse(&n).unwrap();
    assert_eq!(l2.admit(&chunk, &[0u8; 2048]), Admit::TooLarge);
    let mut busy = false;
    for s in 0..64 {
        let n = name(1, s);
        if l2.admit(&ChunkName::parse(&n).unwrap(), b"x") == Admit::Busy {
            busy = true;
            break;
        }
    }
    assert!(busy, "queue depth 4 must refuse the 5th write");
    assert!(l2.in_flight() <= 4);
    l2.flush();
}

#[test]
fn corrupt_bytes_are_never_served_and_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 8);
    let mut l2 = L2File::open(&cfg).unwrap();
    fill(&mut l2, 2, 8);
    // Flip a payload byte of content 1, segment 5 (extent of batch 1 of content 1).
    let sb = *l2.superblock();
    let key = key_of(&l2, 1, 5);
    let e = l2.map[&key];
    let off = sb.slot_offset(e, 1) + SLOT_HEADER_BYTES as u64 + 20 + 100;
    let f = OpenOptions::new().write(true).open(&cfg.path).unwrap();
    f.write_at(&[0x5a], off).unwrap();
    drop(f);
    let got = read(&mut l2, 1, 4).unwrap();
    let segs: Vec<u64> = got.iter().map(|c| c.0).collect();
    assert_eq!(
        segs,
        vec![4, 6, 7],
        "the corrupt slot is dropped, the rest served"
    );
    for (seg, n, p) in &got {
        assert_eq!((n, p), (&name(1, *seg), &payload(1, *seg)));
    }
    assert_eq!(l2.counters().checksum_failures, 1);
    assert!(!l2.contains(&ChunkName::parse(&name(1, 5)).unwrap()));
    assert_eq!(read(&mut l2, 1, 5), None, "dropped from the index");
    assert_eq!(servable(&mut l2, 2, 8), 15);
}

#[test]
fn clean_restart_keeps_everything_and_crash_restart_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 12);
    let mut l2 = L2File::open(&cfg).unwrap();
    fill(&mut l2, 4, 12); // 12 extents, full
    fill(&mut l2, 5, 12); // content 4 evicts 3 extents (FIFO: content 0)
    let before_order = l2.order();
    let stored = l2.stored_chunks();
    assert_eq!(stored, 48);
    l2.close().unwrap();
    assert!(cfg.index_path().exists());

    // Clean restart: index file loaded, order kept, everything servable.
    let mut l2 = L2File::open(&cfg).unwrap();
    assert!(l2.counters().loaded_index_file);
    assert!(!cfg.index_path().exists(), "the index is consumed at open");
    assert_eq!(l2.order(), before_order);
    assert_eq!(l2.counters().recovered_chunks, 48);
    let ok = servable(&mut l2, 5, 12);
    assert!(
        ok as f64 >= 0.95 * stored as f64,
        "{ok} of {stored} servable"
    );
    assert_eq!(ok, 48);

    // Crash (drop without close): no index file, so the next open scans. Corrupt one slot
    // header on disk first: the scan must drop it.
    fill_one(&mut l2, 6, 4); // one more batch (evicts the oldest)
    let sb = *l2.superblock();
    drop(l2);
    assert!(!cfg.index_path().exists());
    let f = OpenOptions::new().write(true).open(&cfg.path).unwrap();
    f.write_at(&[0xff, 0xff], sb.slot_offset(5, 2) + 40)
        .unwrap();
    drop(f);
    let mut l2 = L2File::open(&cfg).unwrap();
    let k = *l2.counters();
    assert!(!k.loaded_index_file);
    assert_eq!(k.rebuild_corrupt, 1);
    assert_eq!(k.recovered_chunks, 47);
    assert_eq!(servable(&mut l2, 7, 12), 47);
    assert_eq!(l2.counters().checksum_failures, 0);
    // The rebuilt FIFO order: content 6's batch is the newest.
    let newest = *l2.order().last().unwrap();
    assert_eq!(newest, key_of(&l2, 6, 0));

    // A damaged index file is ignored (rebuild instead).
    l2.close().unwrap();
    let mut idx = std::fs::read(cfg.index_path()).unwrap();
    idx[30] ^= 1;
    std::fs::write(cfg.index_path(), idx).unwrap();
    let mut l2 = L2File::open(&cfg).unwrap();
    assert!(!l2.counters().loaded_index_file);
    assert_eq!(servable(&mut l2, 7, 12), 47);
}

#[test]
fn geometry_mismatch_and_bad_config_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 8);
    L2File::open(&cfg).unwrap().close().unwrap();
    let e = L2File::open(&L2Config {
        batch: 8,
        ..cfg.clone()
    })
    .unwrap_err();
    assert!(e.to_string().contains("batch=4"), "{e}");
    let e = L2File::open(&L2Config {
        slot_bytes: 1000,
        ..cfg.clone()
    })
    .unwrap_err();
    assert!(e.to_string().contains("slot_bytes"), "{e}");
    let e = L2File::open(&L2Config {
        decision: Decision::Lcp { p: 1.5 },
        ..cfg.clone()
    })
    .unwrap_err();
    assert!(e.to_string().contains("LCP"), "{e}");
    std::fs::write(dir.path().join("junk"), [1u8; 8192]).unwrap();
    let e = L2File::open(&L2Config {
        path: dir.path().join("junk"),
        ..cfg
    })
    .unwrap_err();
    assert!(e.to_string().contains("not a Cascade L2 file"), "{e}");
}

#[test]
fn what_a_crash_while_creating_leaves_is_created_again() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 8);
    let want = L2File::open(&cfg).unwrap().superblock().file_bytes();
    std::fs::remove_file(&cfg.path).unwrap();
    let states: [(&str, Vec<u8>); 4] = [
        ("created, nothing written", vec![]),
        ("shorter than a superblock", vec![0x5a; 1000]),
        ("superblock of zeros", vec![0; SUPERBLOCK_BYTES as usize]),
        ("preallocated, no superblock yet", vec![0; want as usize]),
    ];
    for (state, bytes) in states {
        std::fs::write(&cfg.path, &bytes).unwrap();
        let mut l2 = L2File::open(&cfg).unwrap_or_else(|e| panic!("{state}: {e}"));
        assert_eq!(l2.stored_chunks(), 0, "{state}");
        fill(&mut l2, 2, 8);
        assert_eq!(servable(&mut l2, 2, 8), 16, "{state}");
        l2.close().unwrap();
        assert_eq!(std::fs::metadata(&cfg.path).unwrap().len(), want, "{state}");
        let l2 = L2File::open(&cfg).unwrap();
        assert!(
            l2.counters().loaded_index_file,
            "{state}: a file like any other"
        );
        assert_eq!(l2.stored_chunks(), 16, "{state}");
        drop(l2);
        std::fs::remove_file(&cfg.path).unwrap();
    }
    // Not zeros and not a superblock: someone else's file, refused (not overwritten).
    std::fs::write(&cfg.path, vec![0x5a; 2 * SUPERBLOCK_BYTES as usize]).unwrap();
    let e = L2File::open(&cfg).unwrap_err();
    assert!(e.to_string().contains("not a Cascade L2 file"), "{e}");
}

#[test]
fn a_truncated_file_is_extended_back_and_its_index_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 8);
    // Superblock written, file not preallocated yet.
    let l2 = L2File::open(&cfg).unwrap();
    let sb = *l2.superblock();
    drop(l2);
    let f = OpenOptions::new().write(true).open(&cfg.path).unwrap();
    f.set_len(SUPERBLOCK_BYTES).unwrap();
    drop(f);
    let mut l2 = L2File::open(&cfg).unwrap();
    assert_eq!(*l2.superblock(), sb, "the same file, extended");
    assert_eq!(std::fs::metadata(&cfg.path).unwrap().len(), sb.file_bytes());
    // Contents 0, 1, 2 in extents 0..6, two each; a clean stop writes the index.
    fill(&mut l2, 3, 8);
    assert_eq!(l2.map[&key_of(&l2, 2, 0)], 4);
    l2.close().unwrap();
    assert!(cfg.index_path().exists());
    // Cut in the middle of extent 4: content 2 is gone, the index file names it still.
    let f = OpenOptions::new().write(true).open(&cfg.path).unwrap();
    f.set_len(sb.extent_offset(4) + 100).unwrap();
    drop(f);
    let mut l2 = L2File::open(&cfg).unwrap();
    let k = *l2.counters();
    assert!(!k.loaded_index_file, "the index file is not trusted");
    assert!(!cfg.index_path().exists());
    assert_eq!(k.recovered_chunks, 16);
    assert_eq!(std::fs::metadata(&cfg.path).unwrap().len(), sb.file_bytes());
    assert_eq!(servable(&mut l2, 3, 8), 16);
    assert_eq!(l2.counters().checksum_failures, 0);
    fill_one(&mut l2, 2, 8);
    assert_eq!(
        servable(&mut l2, 3, 8),
        24,
        "the extended part takes chunks again"
    );
}

#[test]
fn a_partial_index_file_is_ignored_and_the_index_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 8);
    let mut l2 = L2File::open(&cfg).unwrap();
    fill(&mut l2, 2, 8);
    l2.close().unwrap();
    let whole = std::fs::read(cfg.index_path()).unwrap();
    for cut in [0, 8, 31, whole.len() / 2, whole.len() - 1] {
        std::fs::write(cfg.index_path(), &whole[..cut]).unwrap();
        let mut l2 = L2File::open(&cfg).unwrap();
        assert!(!l2.counters().loaded_index_file, "cut at {cut}");
        assert_eq!(servable(&mut l2, 2, 8), 16, "cut at {cut}");
        l2.close().unwrap();
    }
    // A crash while it was written leaves only its temporary file, which nothing reads.
    std::fs::rename(cfg.index_path(), cfg.index_path().with_extension("idx.tmp")).unwrap();
    let l2 = L2File::open(&cfg).unwrap();
    assert!(!l2.counters().loaded_index_file);
    assert_eq!(l2.stored_chunks(), 16);
}

#[test]
fn a_failed_read_or_write_turns_the_store_off_for_good() {
    for (kind, errno) in [
        (IoKind::Read, libc::EIO),
        (IoKind::Write, libc::ENOSPC),
        (IoKind::Write, libc::EROFS),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), 8);
        let mut l2 = L2File::open(&cfg).unwrap();
        fill(&mut l2, 1, 8);
        l2.fail_next_io(kind, errno);
        let what = format!("{kind:?} errno {errno}");
        match kind {
            IoKind::Read => assert_eq!(read(&mut l2, 0, 0).map(|v| v.len()), Some(0), "{what}"),
            IoKind::Write => fill_one(&mut l2, 1, 1),
        }
        let fault = l2.fault().unwrap_or_else(|| panic!("{what}: still on"));
        assert_eq!((fault.write, fault.errno), (kind == IoKind::Write, errno));
        assert!(fault.to_string().contains("failed"), "{fault}");
        // Off: nothing read or written any more, and no I/O started.
        let n = name(0, 5);
        assert_eq!(l2.read(&ChunkName::parse(&n).unwrap()), ReadStart::Miss);
        assert!(!l2.contains(&ChunkName::parse(&n).unwrap()));
        let n = name(2, 0);
        assert_eq!(l2.admit(&ChunkName::parse(&n).unwrap(), b"x"), Admit::Off);
        assert_eq!(l2.in_flight(), 0);
        assert_eq!(l2.counters().refused_off, 2, "{what}");
        // Closed like after a crash: no index, the next open scans what is there.
        l2.close().unwrap();
        assert!(!cfg.index_path().exists(), "{what}");
        let mut l2 = L2File::open(&cfg).unwrap();
        assert!(l2.fault().is_none());
        assert_eq!(servable(&mut l2, 1, 8), 8, "{what}");
    }
}

#[test]
fn an_interrupted_operation_is_not_a_fault_and_a_short_read_is() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 8);
    let mut l2 = L2File::open(&cfg).unwrap();
    fill(&mut l2, 1, 8);
    l2.fail_next_io(IoKind::Read, libc::EINTR);
    assert_eq!(read(&mut l2, 0, 0).map(|v| v.len()), Some(0));
    assert!(l2.fault().is_none());
    assert_eq!(l2.counters().read_errors, 1);
    assert_eq!(read(&mut l2, 0, 0).map(|v| v.len()), Some(4));
    // The file shrinks under the store: the next read comes up short.
    let f = OpenOptions::new().write(true).open(&cfg.path).unwrap();
    f.set_len(SUPERBLOCK_BYTES).unwrap();
    drop(f);
    assert_eq!(read(&mut l2, 0, 4).map(|v| v.len()), Some(0));
    let fault = l2.fault().expect("off");
    assert_eq!((fault.write, fault.errno), (false, 0));
    assert!(fault.to_string().contains("short"), "{fault}");
}

// ----------------------------------------------------------- the names kept in the CS filter

const FILTER_KEY: engine::hash::HashKey = engine::hash::HashKey::fixed(3, 5);

fn link() -> FilterLink {
    FilterLink {
        filter: Arc::new(crate::bloom::CountingBloom::new(
            crate::bloom::Geometry { lines: 64, k: 4 },
            1000,
        )),
        key: FILTER_KEY,
    }
}

/// How many of the chunks `contents × segments` the filter says it may hold.
fn in_filter(f: &crate::bloom::CountingBloom, contents: u32, segments: u64) -> usize {
    (0..contents)
        .flat_map(|c| (0..segments).map(move |s| name(c, s)))
        .filter(|n| f.may_contain(engine::hash::value_hash(FILTER_KEY, n)))
        .count()
}

#[test]
fn the_filter_holds_what_the_index_holds_across_writes_evictions_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 4);
    let l = link();
    let f = &l.filter;
    let mut l2 = L2File::open_with_filter(&cfg, Some(l.clone())).unwrap();
    fill(&mut l2, 2, 8); // 4 extents: full
    assert_eq!(in_filter(f, 2, 8), 16);
    assert_eq!(f.stats().inserts, 16);
    // Content 2's first batch evicts content 0's first (FIFO): its names leave the filter.
    fill(&mut l2, 3, 4);
    assert_eq!(l2.counters().evictions, 1);
    assert_eq!((f.stats().inserts, f.stats().removes), (20, 4));
    assert_eq!(in_filter(f, 1, 4), 0);
    // Writes of chunks already stored change nothing.
    fill_one(&mut l2, 2, 4);
    assert_eq!(f.stats().inserts, 20);
    l2.close().unwrap();

    // A clean restart reads the names' hashes back with the index.
    let l = link();
    let l2 = L2File::open_with_filter(&cfg, Some(l.clone())).unwrap();
    assert!(l2.counters().loaded_index_file);
    assert_eq!(l.filter.stats().inserts, 16);
    assert!(in_filter(&l.filter, 3, 8) >= 16);
    // Crash: the scan reads the names from the slot headers.
    drop(l2);
    let l = link();
    let l2 = L2File::open_with_filter(&cfg, Some(l.clone())).unwrap();
    assert!(!l2.counters().loaded_index_file);
    assert_eq!(l.filter.stats().inserts, 16);
    assert_eq!(
        in_filter(&l.filter, 3, 8),
        in_filter(&link_after(&l2), 3, 8)
    );
    l2.close().unwrap();

    // An index written without a filter has no hashes: with one, it is rebuilt by a scan.
    let l2 = L2File::open(&cfg).unwrap();
    assert!(l2.counters().loaded_index_file);
    l2.close().unwrap();
    let l = link();
    let l2 = L2File::open_with_filter(&cfg, Some(l.clone())).unwrap();
    assert!(!l2.counters().loaded_index_file);
    assert_eq!(l.filter.stats().inserts, 16);
    // And an index written with one opens fine without.
    l2.close().unwrap();
    assert!(L2File::open(&cfg).unwrap().counters().loaded_index_file);
}

/// A fresh filter holding exactly the index's chunks (to compare with).
fn link_after(l2: &L2File) -> Arc<crate::bloom::CountingBloom> {
    let l = link();
    for c in 0..3 {
        for s in 0..8 {
            let n = name(c, s);
            if l2.contains(&ChunkName::parse(&n).unwrap()) {
                l.filter.insert(engine::hash::value_hash(FILTER_KEY, &n));
            }
        }
    }
    l.filter
}

#[test]
fn a_corrupt_slot_and_a_storage_fault_take_names_out_of_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 8);
    let l = link();
    let mut l2 = L2File::open_with_filter(&cfg, Some(l.clone())).unwrap();
    fill(&mut l2, 2, 8);
    let sb = *l2.superblock();
    let e = l2.map[&key_of(&l2, 1, 5)];
    let f = OpenOptions::new().write(true).open(&cfg.path).unwrap();
    f.write_at(
        &[0x5a],
        sb.slot_offset(e, 1) + SLOT_HEADER_BYTES as u64 + 120,
    )
    .unwrap();
    drop(f);
    read(&mut l2, 1, 4).unwrap();
    assert_eq!(l.filter.stats().removes, 1);
    let h = engine::hash::value_hash(FILTER_KEY, &name(1, 5));
    assert!(l.filter.counts(h).contains(&0), "out of the filter");
    // A fault: the store serves nothing more, and its names leave the filter at once.
    l2.fail_next_io(IoKind::Read, libc::EIO);
    read(&mut l2, 0, 0);
    assert!(l2.fault().is_some());
    assert_eq!(l.filter.stats().removes, 16);
    assert_eq!(in_filter(&l.filter, 2, 8), 0);
    assert_eq!(l.filter.stats().underflows, 0);
    l2.close().unwrap();
}

/// Whether the prefix filter may hold the prefix of content `c` (`/t/c=<c>`), or `/t` if `None`.
fn holds_prefix(f: &crate::bloom::CountingBloom, c: Option<u32>) -> bool {
    let n = name(c.unwrap_or(0), 0);
    let len = if c.is_some() { n.len() - 10 } else { 3 };
    f.may_contain(engine::hash::value_hash(FILTER_KEY, &n[..len]))
}

#[test]
fn the_prefix_filter_holds_the_prefixes_the_prefix_index_answers_for() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 4);
    let l = link();
    let mut l2 = L2File::open_with_filters(&cfg, None, Some(l.clone())).unwrap();
    fill(&mut l2, 2, 8); // 4 extents: contents 0 and 1, two batches each
    let f = &l.filter;
    assert!(holds_prefix(f, None) && holds_prefix(f, Some(0)) && holds_prefix(f, Some(1)));
    assert!(!holds_prefix(f, Some(2)));
    // The index answers by the same (engine) hashes.
    let n = name(1, 0);
    assert!(matches!(
        l2.read_prefix(&n[..n.len() - 10]),
        ReadStart::Pending { .. }
    ));
    l2.flush();
    // Content 0 is evicted, batch by batch: its prefix leaves the filter with its last batch.
    fill_one(&mut l2, 2, 4);
    assert!(holds_prefix(f, Some(0)));
    fill_one(&mut l2, 3, 4);
    assert_eq!(l2.counters().evictions, 2);
    assert!(!holds_prefix(f, Some(0)));
    assert!(holds_prefix(f, Some(3)) && holds_prefix(f, None));
    l2.close().unwrap();
    // A clean restart (index file, then a read of each extent's first slot) and a crash (the
    // scan) link the same prefixes into a new filter.
    for loaded in [true, false] {
        let l = link();
        let l2 = L2File::open_with_filters(&cfg, None, Some(l.clone())).unwrap();
        assert_eq!(l2.counters().loaded_index_file, loaded);
        let held: Vec<bool> = (0..4).map(|c| holds_prefix(&l.filter, Some(c))).collect();
        assert_eq!(held, [false, true, true, true]);
        assert!(holds_prefix(&l.filter, None));
        if loaded {
            drop(l2); // no index file: the next open scans
        } else {
            // A storage fault: every prefix leaves the filter at once.
            let mut l2 = l2;
            l2.fail_next_io(IoKind::Read, libc::EIO);
            read(&mut l2, 1, 0);
            assert!(l2.fault().is_some());
            assert!((0..4).all(|c| !holds_prefix(&l.filter, Some(c))));
            assert!(!holds_prefix(&l.filter, None));
            assert_eq!(l.filter.stats().underflows, 0);
        }
    }
}

#[test]
fn an_index_whose_last_extent_holds_only_a_late_slot_reopens() {
    // 4 slots of 2,048 bytes: an 8 KiB extent, read one slot at a time after the index loads
    // (a read of the page-rounded buffer from slot 3 would run past the file's end).
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 1);
    let mut l2 = L2File::open(&cfg).unwrap();
    let n = name(0, 3);
    assert_eq!(
        l2.admit(&ChunkName::parse(&n).unwrap(), &payload(0, 3)),
        Admit::Writing
    );
    l2.close().unwrap();
    let l2 = L2File::open(&cfg).unwrap();
    assert!(l2.counters().loaded_index_file);
    assert!(l2.contains(&ChunkName::parse(&n).unwrap()));
}

/// Every offer is counted once with its outcome, whatever the outcome: written, present,
/// rejected by the policy, busy, too large (or a malformed name), refused by a fault.
#[test]
fn every_offer_is_accounted_for_by_exactly_one_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let file = L2File::open(&L2Config {
        decision: Decision::TwoLru { filter_batches: 16 },
        ..config(dir.path(), 64)
    })
    .unwrap();
    let mut t = crate::L2Tier::new(file, 256);
    let check = |t: &crate::L2Tier, offers: u64| {
        let c = t.l2().counters();
        assert_eq!(c.admit_offers, offers, "{c:?}");
        assert_eq!(c.offers_accounted(), offers, "{c:?}");
    };
    let mut offers = 0;
    let n = name(0, 0);
    assert_eq!(t.admit(&n, &[0u8; 2048]), Admit::TooLarge);
    assert_eq!(t.admit(&[0xff, 0x05], b"x"), Admit::TooLarge);
    offers += 2;
    check(&t, offers);
    // The first offer of a batch is filtered (and the decision covers the batch's rest).
    assert_eq!(t.admit(&n, b"x"), Admit::Rejected);
    for s in 1..4 {
        assert_eq!(t.admit(&name(0, s), b"x"), Admit::Rejected);
    }
    offers += 4;
    check(&t, offers);
    assert_eq!(t.admit(&n, b"x"), Admit::Writing);
    assert_eq!(t.admit(&n, b"x"), Admit::Present);
    offers += 2;
    check(&t, offers);
    let mut busy = false;
    for s in 1..64 {
        offers += 1;
        if t.admit(&name(0, s), b"x") == Admit::Busy {
            busy = true;
            break;
        }
    }
    assert!(busy, "queue depth 4 must refuse a write");
    check(&t, offers);
    t.l2_mut().flush();
    t.l2_mut().fail_next_io(IoKind::Read, libc::EIO);
    let chunk = ChunkName::parse(&n).unwrap();
    assert!(matches!(t.l2_mut().read(&chunk), ReadStart::Pending { .. }));
    t.l2_mut().flush();
    assert!(t.l2().fault().is_some());
    assert_eq!(t.admit(&name(0, 61), b"x"), Admit::Off);
    offers += 1;
    check(&t, offers);
    let c = t.l2().counters();
    assert_eq!((c.admit_too_large, c.admit_off), (2, 1), "{c:?}");
    assert!(c.admit_present > 0 && c.admit_rejected > 0 && c.admit_busy > 0);
}

/// A pseudo-random key stream (splitmix64), never 0.
fn keys(seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed;
    std::iter::repeat_with(move || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) | 1
    })
}

#[test]
fn the_two_lru_filter_never_reallocates_however_long_its_keys_churn() {
    let mut f = KeyLru::new(1000);
    let (map_cap, keys_cap) = (f.map.capacity(), f.keys.capacity());
    for key in keys(7).take(200_000) {
        f.check_and_insert(key);
    }
    // Tombstones lower the room the map reports; a new table would raise it.
    assert_eq!(f.map.len(), 1000);
    assert!(
        f.map.capacity() <= map_cap,
        "{} > {map_cap}",
        f.map.capacity()
    );
    assert_eq!(f.keys.capacity(), keys_cap);
}

#[test]
fn prefaulting_a_key_map_leaves_it_empty_with_its_table_and_usable() {
    let n = 5000;
    let mut map = key_map(n);
    let cap = map.capacity();
    prefault_key_map(&mut map);
    assert!(map.is_empty());
    assert_eq!(map.capacity(), cap);
    for (i, key) in keys(17).take(2 * n).enumerate() {
        map.insert(key, i as u32);
    }
    assert_eq!(map.len(), 2 * n);
    assert_eq!(map.capacity(), cap, "2n keys fit the table reserved for n");
    let first = keys(17).next().unwrap();
    assert_eq!(map.get(&first), Some(&0));
}

#[test]
fn the_index_never_reallocates_however_long_its_keys_churn() {
    // The index's churn: at most `n` keys, the oldest replaced by a new one.
    let n = 1000;
    let mut map = key_map(n);
    let cap = map.capacity();
    let mut live = std::collections::VecDeque::with_capacity(n);
    for (i, key) in keys(11).take(200_000).enumerate() {
        if live.len() == n {
            map.remove(&live.pop_front().unwrap());
        }
        map.insert(key, i as u32);
        live.push_back(key);
    }
    assert_eq!(map.len(), n);
    assert!(map.capacity() <= cap, "{} > {cap}", map.capacity());
}

#[test]
fn the_prefix_index_never_reallocates_with_every_extent_under_new_prefixes() {
    // Every extent linked under PREFIX_LEVELS prefixes no other extent shares: the most list
    // heads there can be, again and again.
    let extents = 500u32;
    let mut p = prefixes::Prefixes::new(extents, None);
    let cap = p.heads_capacity();
    let mut k = keys(13);
    for _round in 0..20 {
        for e in 0..extents {
            p.link(e, std::array::from_fn(|_| k.next().unwrap()));
        }
    }
    assert!(p.heads_capacity() <= cap, "{} > {cap}", p.heads_capacity());
}
