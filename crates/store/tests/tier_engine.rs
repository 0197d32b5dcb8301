//! The L2 tier plugged into a real forwarding engine: an Interest whose Data is only in L2 is
//! parked (pending), the batch read completes through [`L2Tier::poll`], and each completion
//! feeds `Engine::complete_pending_aged` with its age (and the rest of the batch
//! `Engine::insert_cs_aged`), as the router does. A
//! corrupt slot completes without data, so the engine forwards the Interest upstream instead
//! of serving wrong bytes.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use engine::fw::pipeline::{Engine, EngineConfig, SendKind};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId, PitCsConfig};
use store::layout::SlotHeader;
use store::{Admit, ChunkName, L2Config, L2File, L2Tier, SharedL2Tier, TierCompletion};
use wire::{Data, DataView, Interest, Limits, Name};

const KEY: HashKey = HashKey::fixed(0x1234, 0x5678);
const DOWNSTREAM: FaceId = 1;
const UPSTREAM: FaceId = 2;

/// A small L2 (8 batches of 4 slots) in `dir` behind a tier handle.
fn tier_in(dir: &std::path::Path) -> (L2Config, SharedL2Tier) {
    let cfg = L2Config {
        slot_bytes: 1024,
        batch: 4,
        queue_depth: 4,
        ..L2Config::new(dir.join("l2"), 8)
    };
    let tier = SharedL2Tier::new(L2Tier::new(L2File::open(&cfg).unwrap(), 256));
    (cfg, tier)
}

/// An engine routing /v upstream, with `tier` as its slower CS tier.
fn engine_with(tier: &SharedL2Tier) -> Engine {
    let (mut e, fib) = engine();
    fib.add_nexthop(&Name::from_uri("/v").unwrap(), UPSTREAM, 1)
        .unwrap();
    e.set_slow_tier(Box::new(tier.clone()));
    e
}

fn engine() -> (Engine, Arc<Fib>) {
    let config = EngineConfig {
        pit_cs: PitCsConfig {
            pit_capacity: 256,
            cs_capacity: 256,
            cs_policy: CsPolicy::Lru,
            max_in_records: 8,
            max_out_records: 8,
        },
        dead_nonce_capacity: 256,
        ..EngineConfig::default()
    };
    let fib = Arc::new(Fib::new(KEY, 256, 2));
    (Engine::new(KEY, fib.clone(), config), fib)
}

fn data_wire(uri: &str) -> Vec<u8> {
    let mut d = Data::new(Name::from_uri(uri).unwrap(), uri.as_bytes().to_vec());
    d.sign_digest_sha256();
    d.to_wire()
}

fn name_value(uri: &str) -> Vec<u8> {
    Name::from_uri(uri).unwrap().to_wire()[2..].to_vec()
}

fn interest(uri: &str, nonce: u32) -> Vec<u8> {
    Interest {
        lifetime_ms: Some(4000),
        ..Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes())
    }
    .to_wire()
}

/// (face, kind, bytes) of every action of one `process` call.
fn process(e: &mut Engine, now: u64, face: FaceId, pkt: &[u8]) -> Vec<(FaceId, SendKind, Vec<u8>)> {
    let inputs = [(face, pkt)];
    let out = e.process(now, &inputs);
    out.actions
        .iter()
        .map(|a| (a.face, a.kind, out.bytes(a, &inputs).to_vec()))
        .collect()
}

/// Waits for the tier's next batch and feeds every completion to the engine; returns the
/// actions and the number of completions that had no waiting Interest (prefetch for L1).
fn complete(
    e: &mut Engine,
    tier: &SharedL2Tier,
    now: u64,
) -> (Vec<(FaceId, SendKind, Vec<u8>)>, usize) {
    let mut sent = Vec::new();
    let mut prefetched = 0;
    let unix_now = store::l2::unix_ms();
    let mut handle = |c: TierCompletion<'_>| match c.full_hash {
        Some(h) => {
            let age = c.age_ms(unix_now);
            let out = e.complete_pending_aged(now, h, c.name_value, c.data, age);
            for a in out.actions {
                sent.push((a.face, a.kind, out.bytes(a, &[]).to_vec()));
            }
        }
        None => {
            let d = c.data.expect("prefetched chunks carry data");
            assert!(e.insert_cs_aged(now, d, c.age_ms(unix_now)));
            prefetched += 1;
        }
    };
    assert!(tier.lock().wait(&mut handle), "nothing in flight");
    (sent, prefetched)
}

#[test]
fn l2_hit_parks_the_interest_and_completion_serves_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let (_, tier) = tier_in(dir.path());
    // Segments 0..4 of /v/x in L2 (one batch).
    for s in 0..4 {
        let uri = format!("/v/x/seg={s}");
        assert_eq!(
            tier.admit(&name_value(&uri), &data_wire(&uri)),
            Admit::Writing
        );
    }
    tier.lock().l2_mut().flush();

    let mut e = engine_with(&tier);

    // L1 (engine CS) miss, L2 hit: pending, nothing sent upstream.
    assert!(process(&mut e, 1000, DOWNSTREAM, &interest("/v/x/seg=1", 1)).is_empty());
    assert_eq!(tier.lock().counters().pending, 1);
    let (sent, prefetched) = complete(&mut e, &tier, 1001);
    assert_eq!(sent.len(), 1);
    let (face, kind, bytes) = &sent[0];
    assert_eq!((*face, *kind), (DOWNSTREAM, SendKind::Data));
    assert_eq!(bytes, &data_wire("/v/x/seg=1"));
    let view = DataView::decode(bytes, &Limits::default()).unwrap();
    assert_eq!(view.content(), Some(&b"/v/x/seg=1"[..]));
    // The other three chunks of the batch come back for L1: the next segment is an L1 hit,
    // answered at once without asking L2.
    assert_eq!(prefetched, 3);
    assert_eq!(e.table().pit_len(), 0);
    let sent = process(&mut e, 1002, DOWNSTREAM, &interest("/v/x/seg=2", 3));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].0, sent[0].1), (DOWNSTREAM, SendKind::Data));
    assert_eq!(sent[0].2, data_wire("/v/x/seg=2"));
    assert_eq!(tier.lock().counters().lookups, 1, "L1 hit: no L2 lookup");

    // Not in L2: a plain miss, forwarded upstream at once.
    let sent = process(&mut e, 1003, DOWNSTREAM, &interest("/v/y/seg=0", 2));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].0, sent[0].1), (UPSTREAM, SendKind::Interest));
}

#[test]
fn corrupt_l2_slot_is_forwarded_upstream_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, tier) = tier_in(dir.path());
    for s in 0..2 {
        let uri = format!("/v/z/seg={s}");
        assert_eq!(
            tier.admit(&name_value(&uri), &data_wire(&uri)),
            Admit::Writing
        );
    }
    tier.lock().l2_mut().flush();
    // Damage segment 1's payload on disk (first extent, slot 1).
    let sb = *tier.lock().l2().superblock();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&cfg.path)
        .unwrap();
    f.write_at(b"EVIL", sb.slot_offset(0, 1) + 100).unwrap();
    drop(f);

    let mut e = engine_with(&tier);
    assert!(process(&mut e, 1000, DOWNSTREAM, &interest("/v/z/seg=1", 7)).is_empty());
    let (sent, prefetched) = complete(&mut e, &tier, 1001);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!((sent[0].0, sent[0].1), (UPSTREAM, SendKind::Interest));
    assert_eq!(prefetched, 1, "segment 0 still verifies");
    let t = tier.lock();
    assert_eq!(t.l2().counters().checksum_failures, 1);
    assert_eq!((t.counters().served, t.counters().failed), (0, 1));
}

/// Two batches of `/v/p` (segments 0..8) in a fresh L2, behind an engine; prefetch-ahead as
/// given.
fn two_batches(dir: &std::path::Path, ahead: bool) -> (SharedL2Tier, Engine) {
    let cfg = L2Config {
        slot_bytes: 1024,
        batch: 4,
        queue_depth: 4,
        ..L2Config::new(dir.join("l2"), 8)
    };
    let tier = L2Tier::new(L2File::open(&cfg).unwrap(), 256).with_prefetch_ahead(ahead);
    let tier = SharedL2Tier::new(tier);
    for s in 0..8 {
        let uri = format!("/v/p/seg={s}");
        loop {
            match tier.admit(&name_value(&uri), &data_wire(&uri)) {
                Admit::Writing => break,
                Admit::Busy => tier.lock().l2_mut().flush(), // the queue is full: drain it
                other => panic!("admit {uri}: {other:?}"),
            }
        }
    }
    tier.lock().l2_mut().flush();
    let e = engine_with(&tier);
    (tier, e)
}

#[test]
fn a_cs_hit_on_the_penultimate_chunk_reads_the_next_batch_into_the_cs() {
    let dir = tempfile::tempdir().unwrap();
    let (tier, mut e) = two_batches(dir.path(), true);
    // Segment 0 misses L1 and hits L2: batch 0 comes into the CS.
    assert!(process(&mut e, 1000, DOWNSTREAM, &interest("/v/p/seg=0", 1)).is_empty());
    let (sent, prefetched) = complete(&mut e, &tier, 1001);
    assert_eq!((sent.len(), prefetched), (1, 3));
    // Segment 1 is a CS hit and not the penultimate chunk: nothing is read.
    assert_eq!(
        process(&mut e, 1002, DOWNSTREAM, &interest("/v/p/seg=1", 2)).len(),
        1
    );
    assert_eq!(tier.lock().l2().in_flight(), 0);
    // Segment 2 (the penultimate of B = 4) is a CS hit that reads batch 1 with nobody waiting.
    let sent = process(&mut e, 1003, DOWNSTREAM, &interest("/v/p/seg=2", 3));
    assert_eq!(sent[0].2, data_wire("/v/p/seg=2"));
    assert_eq!(tier.lock().counters().ahead_reads, 1);
    let (sent, prefetched) = complete(&mut e, &tier, 1004);
    assert_eq!((sent.len(), prefetched), (0, 4));
    // Batch 1 is served from the CS without asking L2 again.
    for (s, nonce) in (4..8).zip(10..) {
        let sent = process(
            &mut e,
            1005,
            DOWNSTREAM,
            &interest(&format!("/v/p/seg={s}"), nonce),
        );
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].1, SendKind::Data);
        assert_eq!(sent[0].2, data_wire(&format!("/v/p/seg={s}")));
    }
    assert_eq!(tier.lock().counters().lookups, 1);
    // Segment 6 named batch 2, which L2 does not hold: no read. Another hit on segment 2
    // names batch 1 again, which the CS holds: no read either.
    assert_eq!(
        process(&mut e, 1006, DOWNSTREAM, &interest("/v/p/seg=2", 20)).len(),
        1
    );
    let c = *tier.lock().counters();
    assert_eq!((c.ahead_offered, c.ahead_reads), (3, 1));
    assert_eq!(tier.lock().l2().in_flight(), 0);
    assert_eq!(e.counters().out_interests, 0);
}

#[test]
fn without_prefetch_ahead_the_next_batch_waits_for_its_own_miss() {
    let dir = tempfile::tempdir().unwrap();
    let (tier, mut e) = two_batches(dir.path(), false);
    assert!(process(&mut e, 1000, DOWNSTREAM, &interest("/v/p/seg=0", 1)).is_empty());
    complete(&mut e, &tier, 1001);
    assert_eq!(
        process(&mut e, 1002, DOWNSTREAM, &interest("/v/p/seg=2", 2)).len(),
        1
    );
    assert_eq!(tier.lock().l2().in_flight(), 0);
    assert_eq!(tier.lock().counters().ahead_offered, 0);
    // Segment 4 misses L1 and goes to L2.
    assert!(process(&mut e, 1003, DOWNSTREAM, &interest("/v/p/seg=4", 3)).is_empty());
    assert_eq!(tier.lock().counters().lookups, 2);
}

/// Writes a slot with the crate's own layout functions: a valid header (batch key, segment,
/// CRC32C) naming `header_uri`, around the Data `payload`, without a write time (as slots were
/// written before they carried one).
fn craft_slot(cfg: &L2Config, l2: &L2File, extent: u32, header_uri: &str, payload: &[u8]) {
    craft_slot_at(cfg, l2, extent, header_uri, payload, None);
}

/// [`craft_slot`], with the write time `stored_at_ms` (ms since the Unix epoch) if given.
fn craft_slot_at(
    cfg: &L2Config,
    l2: &L2File,
    extent: u32,
    header_uri: &str,
    payload: &[u8],
    stored_at_ms: Option<u64>,
) {
    let name = name_value(header_uri);
    let chunk = ChunkName::parse(&name).unwrap();
    let sb = *l2.superblock();
    let header = SlotHeader {
        batch_key: l2.batch_key(chunk.prefix, chunk.segment),
        segment: chunk.segment,
        seq: 1000 + u64::from(extent),
        name_len: name.len() as u16,
        payload_len: payload.len() as u32,
    };
    let mut slot = vec![0u8; sb.slot_bytes as usize];
    match stored_at_ms {
        Some(t) => header.write_stamped(&mut slot, &name, payload, t),
        None => header.write(&mut slot, &name, payload),
    }
    let slot_no = (chunk.segment % u64::from(sb.batch)) as u32;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&cfg.path)
        .unwrap();
    f.write_at(&slot, sb.slot_offset(extent, slot_no)).unwrap();
}

#[test]
fn a_slot_whose_data_carries_another_name_is_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, tier) = tier_in(dir.path());
    drop(tier);
    // A file whose slots verify (checksum, batch key, position) but two of which hold a Data
    // named otherwise than their header says. No index file: the next open scans.
    let l2 = L2File::open(&cfg).unwrap();
    craft_slot(&cfg, &l2, 0, "/v/m/seg=0", &data_wire("/v/m/seg=0"));
    craft_slot(&cfg, &l2, 0, "/v/m/seg=2", &data_wire("/v/evil/seg=2"));
    craft_slot(&cfg, &l2, 1, "/v/n/seg=1", &data_wire("/v/evil/seg=1"));
    drop(l2);
    let tier = SharedL2Tier::new(L2Tier::new(L2File::open(&cfg).unwrap(), 256));
    assert_eq!(
        tier.lock().l2().stored_chunks(),
        3,
        "the scan accepts the slots"
    );
    let mut e = engine_with(&tier);

    // The batch of /v/m: segment 0 is served, segment 2 is not put into the RAM CS.
    assert!(process(&mut e, 1000, DOWNSTREAM, &interest("/v/m/seg=0", 1)).is_empty());
    let (sent, prefetched) = complete(&mut e, &tier, 1001);
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].0, sent[0].2.clone()),
        (DOWNSTREAM, data_wire("/v/m/seg=0"))
    );
    assert_eq!(
        prefetched, 0,
        "the mismatched chunk never reaches the RAM CS"
    );
    assert!(!tier
        .lock()
        .l2()
        .contains(&ChunkName::parse(&name_value("/v/m/seg=2")).unwrap()));
    let sent = process(&mut e, 1002, DOWNSTREAM, &interest("/v/m/seg=2", 2));
    assert_eq!(sent.len(), 1, "dropped from the index: a plain miss");
    assert_eq!((sent[0].0, sent[0].1), (UPSTREAM, SendKind::Interest));

    // A waiting Interest whose slot holds another Data goes upstream.
    assert!(process(&mut e, 1003, DOWNSTREAM, &interest("/v/n/seg=1", 3)).is_empty());
    let (sent, prefetched) = complete(&mut e, &tier, 1004);
    assert_eq!((sent.len(), prefetched), (1, 0), "{sent:?}");
    assert_eq!((sent[0].0, sent[0].1), (UPSTREAM, SendKind::Interest));
    let t = tier.lock();
    assert_eq!(t.l2().counters().name_mismatches, 2);
    assert_eq!(t.l2().counters().checksum_failures, 0);
    assert_eq!((t.counters().served, t.counters().failed), (1, 1));
    assert_eq!(t.l2().stored_chunks(), 1);
}

/// A Data named `uri`, fresh for an hour after it arrives.
fn data_fresh(uri: &str) -> Vec<u8> {
    let mut d = Data::new(Name::from_uri(uri).unwrap(), uri.as_bytes().to_vec());
    d.meta_info = Some(wire::data::MetaInfo {
        freshness_ms: Some(3_600_000),
        ..Default::default()
    });
    d.sign_digest_sha256();
    d.to_wire()
}

fn interest_mbf(uri: &str, nonce: u32) -> Vec<u8> {
    Interest {
        lifetime_ms: Some(4000),
        must_be_fresh: true,
        ..Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes())
    }
    .to_wire()
}

/// The kinds of what the engine sent for an Interest of `uri` that L2 answers.
fn ask(e: &mut Engine, tier: &SharedL2Tier, now: u64, pkt: &[u8]) -> Vec<(FaceId, SendKind)> {
    assert!(process(e, now, DOWNSTREAM, pkt).is_empty(), "parked on L2");
    let (sent, prefetched) = complete(e, tier, now + 1);
    assert_eq!(prefetched, 0, "a one-chunk batch");
    sent.iter().map(|(f, k, _)| (*f, *k)).collect()
}

#[test]
fn must_be_fresh_interests_are_served_from_l2_only_by_fresh_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, tier) = tier_in(dir.path());
    // Fresh for an hour, written now.
    let uri = "/v/new/seg=0";
    assert_eq!(
        tier.admit(&name_value(uri), &data_fresh(uri)),
        Admit::Writing
    );
    tier.lock().l2_mut().flush();
    drop(tier);
    // Fresh for an hour too, but written in 1970; and one written before slots carried a
    // write time (0: unknown). No index file: the next open scans.
    let l2 = L2File::open(&cfg).unwrap();
    let old = data_fresh("/v/old/seg=0");
    craft_slot_at(&cfg, &l2, 5, "/v/old/seg=0", &old, Some(1_000));
    craft_slot(
        &cfg,
        &l2,
        6,
        "/v/untimed/seg=0",
        &data_fresh("/v/untimed/seg=0"),
    );
    drop(l2);
    let data = [(DOWNSTREAM, SendKind::Data)];
    let upstream = [(UPSTREAM, SendKind::Interest)];
    for reopen in ["scan", "index file"] {
        let tier = SharedL2Tier::new(L2Tier::new(L2File::open(&cfg).unwrap(), 256));
        assert_eq!(tier.lock().l2().stored_chunks(), 3, "{reopen}");
        assert_eq!(
            tier.lock().l2().counters().loaded_index_file,
            reopen == "index file"
        );
        let mut e = engine_with(&tier);
        assert_eq!(ask(&mut e, &tier, 1000, &interest_mbf(uri, 1)), data);
        // Stale, or of unknown age: MustBeFresh goes upstream, and the RAM CS does not get
        // the chunk...
        for (i, u) in ["/v/old/seg=0", "/v/untimed/seg=0"].iter().enumerate() {
            let n = 10 + i as u32;
            assert_eq!(
                ask(&mut e, &tier, 1000, &interest_mbf(u, n)),
                upstream,
                "{u}"
            );
        }
        assert_eq!(tier.lock().counters().stale, 2);
        // ...while an Interest without MustBeFresh takes it from L2.
        for (i, u) in ["/v/old/seg=0", "/v/untimed/seg=0"].iter().enumerate() {
            let n = 20 + i as u32;
            assert_eq!(ask(&mut e, &tier, 1000, &interest(u, n)), data, "{u}");
        }
        // The RAM CS now holds them, as stale as they were in L2 (their FreshnessPeriod counts
        // from the write, not from the read): once the first MustBeFresh Interests' PIT entries
        // have expired, MustBeFresh asks L2 again and goes upstream...
        for (i, u) in ["/v/old/seg=0", "/v/untimed/seg=0"].iter().enumerate() {
            let n = 30 + i as u32;
            assert_eq!(
                ask(&mut e, &tier, 10_000, &interest_mbf(u, n)),
                upstream,
                "{u}"
            );
        }
        // ...while the fresh chunk is answered from the RAM CS.
        let sent = process(&mut e, 10_000, DOWNSTREAM, &interest_mbf(uri, 40));
        assert_eq!((sent[0].0, sent[0].1), (DOWNSTREAM, SendKind::Data));
        assert_eq!(tier.lock().counters().stale, 4);
        drop(e);
        // A clean stop writes the index file; the write times stay in the slots.
        let tier = tier.into_inner().expect("the last handle");
        tier.close().unwrap();
    }
}
