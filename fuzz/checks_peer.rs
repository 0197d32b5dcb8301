//! Invariants checked on every fuzz input of the parsers a peer reaches beyond the `wire`
//! decoders, shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the
//! stable-toolchain corpus replay (`crates/router/tests/fuzz_corpus.rs`), which both include
//! this file with `#[path]`:
//!
//! - `stream`: the stream faces' framer ([`face::stream::StreamFramer`]) fed in pieces;
//! - `reassembly`: NDNLPv2 reassembly ([`face::Reassembler`]) of a sequence of pieces, two
//!   reassemblers on one shared budget;
//! - `dispatch`: the I/O thread's classifier ([`router::dispatch::Dispatcher`]);
//! - `command`: management command parsing ([`mgmt::command::parse_command`]);
//! - `l2`: the L2 file's superblock, slot and chunk-name parsers ([`store::layout`]);
//! - `l2file`: an L2 file and its index, corrupted, opened (index load or rebuild) and read.
//!
//! Every `check_*` function accepts arbitrary bytes and panics, naming the broken invariant,
//! when the code under test misbehaves.

#![allow(dead_code)] // each fuzz target uses one check

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use engine::hash::{full_name_hash, HashKey};
use face::stream::StreamFramer;
use face::{Reassembler, ReassemblyBudget};
use mgmt::command::{parse_command, response_data};
use router::dispatch::{is_management, Dispatcher, Route, WorkerMapping};
use router::pool::PktKind;
use store::l2::{Admit, L2Config, L2File, ReadStart};
use store::layout::{ChunkName, SlotHeader, Superblock, SUPERBLOCK_BYTES};
use store::sim::{DiskFaults, SimDisk};
use store::IoBackend;
use wire::nfd::{ControlParameters, ControlResponse};
use wire::tlv::{write_nni_tlv, write_tlv};
use wire::{tt, DataView, InterestView, Limits, LpPacketView, NameView, PacketView};

/// The fuzz targets (and `fuzz/corpus/<target>` directories) whose check is here.
pub const TARGETS: &[&str] = &[
    "stream",
    "reassembly",
    "dispatch",
    "command",
    "l2",
    "l2file",
];

/// Runs the check of `target` on `data`. Returns false if `target` is unknown.
pub fn check(target: &str, data: &[u8]) -> bool {
    match target {
        "stream" => check_stream(data),
        "reassembly" => check_reassembly(data),
        "dispatch" => check_dispatch(data),
        "command" => check_command(data),
        "l2" => check_l2(data),
        "l2file" => assert_eq!(
            check_l2file_on(data, L2Medium::Sim),
            check_l2file_on(data, L2Medium::File),
            "a store on the simulated disk and one on a file disagree on the same bytes"
        ),
        _ => return false,
    }
    true
}

/// The limits the router decodes with (it does not check parameter digests on the fast path).
fn router_limits() -> Limits {
    Limits {
        verify_parameters_digest: false,
        ..Limits::default()
    }
}

/// Splits `data` into a header of `n` bytes (zero-padded) and the rest.
fn header<const N: usize>(data: &[u8]) -> ([u8; N], &[u8]) {
    let mut h = [0u8; N];
    let k = data.len().min(N);
    h[..k].copy_from_slice(&data[..k]);
    (h, &data[k..])
}

// ---------------------------------------------------------------------------------------------
// stream
// ---------------------------------------------------------------------------------------------

/// `stream`: a [`StreamFramer`] fed the input in pieces of varying sizes hands out exactly
/// the elements that framing the whole input at once gives, in order, then fails where that
/// fails (at the same stream offset, and stays failed) or keeps the incomplete tail buffered.
pub fn check_stream(data: &[u8]) {
    let ([m, c, s], stream) = header::<3>(data);
    let max = [64, 300, 1500, wire::MAX_NDN_PACKET_BYTES][usize::from(m % 4)];
    let chunk = 1 + usize::from(c % 64);
    // The reference: frame_len over the whole stream.
    let mut want: Vec<&[u8]> = Vec::new();
    let mut at = 0;
    let mut want_err = false;
    loop {
        match wire::packet::frame_len(&stream[at..], max) {
            Ok(Some(n)) => {
                want.push(&stream[at..at + n]);
                at += n;
            }
            Ok(None) => break,
            Err(_) => {
                want_err = true;
                break;
            }
        }
    }
    let mut f = StreamFramer::new(max, chunk);
    let mut got: Vec<Vec<u8>> = Vec::new();
    let mut fed = 0;
    let mut rng = u32::from(s) | 1;
    let mut failed = None;
    while failed.is_none() {
        loop {
            match f.next_packet() {
                Ok(Some(p)) => {
                    assert!(p.len() <= max, "packet of {} > max {max}", p.len());
                    got.push(p.to_vec());
                }
                Ok(None) => break,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if failed.is_some() || fed == stream.len() {
            break;
        }
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        let piece = 1 + (rng as usize) % (2 * chunk + 8);
        let end = (fed + piece).min(stream.len());
        let took = f.push_bytes(&stream[fed..end]);
        assert!(
            took > 0,
            "a drained framer took no bytes ({} buffered)",
            f.buffered()
        );
        fed += took;
    }
    assert_eq!(
        got.len(),
        want.len(),
        "packet count (max {max}, chunk {chunk})"
    );
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.as_slice(), *w, "packet {i} differs");
    }
    let consumed: usize = want.iter().map(|p| p.len()).sum();
    let counters = f.counters();
    assert_eq!(counters.packets, want.len() as u64, "counters.packets");
    assert_eq!(counters.bytes, consumed as u64, "counters.bytes");
    match failed {
        Some(e) => {
            assert!(
                want_err,
                "the framer failed ({e}) where framing at once did not"
            );
            let offset = match e {
                face::stream::FramingError::Oversize { stream_offset, .. }
                | face::stream::FramingError::BadHeader { stream_offset, .. } => stream_offset,
            };
            assert_eq!(offset, consumed as u64, "error offset");
            assert_eq!(f.next_packet(), Err(e), "a failed framer must stay failed");
            assert_eq!(f.push_bytes(b"\x05\x00"), 0, "a failed framer takes bytes");
            assert_eq!(f.error(), Some(e));
        }
        None => {
            // An error may need bytes that were never fed (a header cut short); everything was
            // fed, so framing at once saw what the framer saw.
            assert!(!want_err, "framing at once failed, the framer did not");
            assert_eq!(f.buffered(), stream.len() - consumed, "incomplete tail");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// reassembly
// ---------------------------------------------------------------------------------------------

/// One piece of a fragmented packet, written as the fuzz input describes it: the content of
/// piece `index` is `len` bytes of value `index`, so a correct reassembly is non-decreasing.
fn structured_piece(out: &mut Vec<u8>, base: u64, index: u64, count: u64, len: usize) {
    let mut inner = Vec::with_capacity(len + 32);
    write_nni_tlv(&mut inner, tt::LP_SEQUENCE, base * 64 + index);
    write_nni_tlv(&mut inner, tt::LP_FRAG_INDEX, index);
    write_nni_tlv(&mut inner, tt::LP_FRAG_COUNT, count);
    write_tlv(&mut inner, tt::LP_FRAGMENT, &vec![index as u8; len]);
    out.clear();
    write_tlv(out, tt::LP_PACKET, &inner);
}

/// `reassembly`: two [`Reassembler`]s on one [`ReassemblyBudget`] take a sequence of pieces
/// (built from the input, or raw LpPackets from it), time passing and expiries. At every step
/// the budget's count is what the two hold, within its limit; a reassembler holds at most its
/// capacity; a packet out is at most `max_packet_bytes`, and one built from described pieces is
/// their concatenation in order. In the end, an expiry frees everything.
pub fn check_reassembly(data: &[u8]) {
    let ([b, c, m], mut ops) = header::<3>(data);
    let limit = 4096 * (1 + usize::from(b % 16));
    let capacity = 1 + usize::from(c % 8);
    let max = if m % 2 == 0 {
        2000
    } else {
        wire::MAX_NDN_PACKET_BYTES
    };
    let budget = ReassemblyBudget::new(limit);
    let mut rs = [
        Reassembler::with_budget(capacity, 500, max, budget.clone()),
        Reassembler::with_budget(capacity, 500, max, budget.clone()),
    ];
    let limits = Limits::default();
    let mut now = 0u64;
    let mut pkt = Vec::new();
    while let Some((&op, rest)) = ops.split_first() {
        ops = rest;
        let r = &mut rs[usize::from(op & 1)];
        match (op >> 1) & 3 {
            0 => {
                let ([x, base, index, count, len], rest) = header::<5>(ops);
                ops = rest;
                let (index, count) = (u64::from(index % 16), u64::from(count % 16) + 1);
                structured_piece(
                    &mut pkt,
                    u64::from(base),
                    index,
                    count,
                    usize::from(len) * 8,
                );
                // The decoder refuses FragIndex >= FragCount before the reassembler sees it.
                let Ok(lp) = LpPacketView::decode(&pkt, &limits) else {
                    continue;
                };
                let remote = u64::from(x % 4);
                if let Ok(Some(whole)) = r.receive(remote, &lp, now) {
                    let p = &whole.packet;
                    assert!(p.len() <= max, "reassembled {} > max {max}", p.len());
                    assert!(
                        p.windows(2).all(|w| w[0] <= w[1])
                            && p.iter().all(|&x| u64::from(x) < count),
                        "pieces joined out of order or mixed with another packet's"
                    );
                }
            }
            1 => {
                let ([len], rest) = header::<1>(ops);
                let take = usize::from(len).min(rest.len());
                let (raw, rest) = rest.split_at(take);
                ops = rest;
                if let Ok(lp) = LpPacketView::decode(raw, &limits) {
                    if let Ok(Some(whole)) = r.receive(4, &lp, now) {
                        assert!(whole.packet.len() <= max, "reassembled > max");
                        if let Cow::Borrowed(p) = whole.packet {
                            assert_eq!(Some(p), lp.fragment(), "a whole packet is its fragment");
                        }
                    }
                }
            }
            2 => {
                let ([dt], rest) = header::<1>(ops);
                ops = rest;
                now += u64::from(dt) * 8;
            }
            _ => {
                r.expire(now);
            }
        }
        let held: usize = rs.iter().map(Reassembler::held_bytes).sum();
        assert_eq!(
            budget.used(),
            held,
            "the budget's count is not what the reassemblers hold"
        );
        assert!(budget.used() <= budget.limit(), "over the budget");
        for r in &rs {
            assert!(r.in_flight() <= r.capacity(), "more partials than capacity");
        }
    }
    for r in &mut rs {
        r.expire(now + 500);
        assert_eq!(
            (r.in_flight(), r.held_bytes()),
            (0, 0),
            "an expiry left something"
        );
    }
    assert_eq!(budget.used(), 0, "memory not given back to the budget");
}

// ---------------------------------------------------------------------------------------------
// dispatch
// ---------------------------------------------------------------------------------------------

const KEY: HashKey = HashKey::fixed(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);

/// `dispatch`: for several worker counts and mappings, the classifier's routes are in range,
/// its entry points agree, its hash is the engine's full-name hash, and a packet the full
/// decoder accepts goes where its type and name say: management for `/localhost/nfd` and
/// `/localhop/nfd` Interests, the name's owner for the rest, reassembly for fragments; never
/// "malformed".
pub fn check_dispatch(data: &[u8]) {
    let limits = router_limits();
    let decoded = PacketView::decode(data, &limits).ok();
    for workers in [1, 2, 5] {
        for mapping in [
            WorkerMapping::Content,
            WorkerMapping::Batch { batch: 10 },
            WorkerMapping::Name,
        ] {
            let d = Dispatcher::new(KEY, workers, mapping, limits);
            let (route, kind, hash) = d.classify_hashed(data);
            assert_eq!(
                d.classify(data),
                (route, kind),
                "classify vs classify_hashed"
            );
            assert_eq!(d.route(data), route, "route vs classify");
            match route {
                Route::Worker(w) => assert!(w < workers, "worker {w} of {workers}"),
                // A Data to every worker, or an IDLE packet's NB-CC signal (kind Other).
                Route::AllWorkers { owner } => {
                    assert!(
                        workers > 1
                            && owner < workers
                            && matches!(kind, PktKind::Data | PktKind::Other),
                        "{route:?}"
                    );
                }
                _ => assert!(hash.is_none(), "a hash for {route:?}"),
            }
            // Only an IDLE packet's signal goes to workers without a name to hash.
            if matches!(route, Route::Worker(_) | Route::AllWorkers { .. }) {
                assert_eq!(hash.is_some(), kind != PktKind::Other, "hash of {route:?}");
            }
            if let Some(p) = &decoded {
                expect_route(&d, p, (route, kind, hash));
            }
        }
    }
}

/// Where a decoded packet must go.
fn expect_route(d: &Dispatcher, p: &PacketView<'_>, got: (Route, PktKind, Option<u64>)) {
    let (route, kind, hash) = got;
    let network = |name: NameView<'_>, is_interest: bool, nack: bool| {
        if is_interest && !nack && is_management(&name) {
            let localhost = name.get(0).is_some_and(|c| c.value == b"localhost");
            return (Route::Mgmt { localhost }, PktKind::Interest);
        }
        let owner = d.owner(&name);
        let kind = match (is_interest, nack) {
            (true, true) => PktKind::Nack,
            (true, false) => PktKind::Interest,
            _ => PktKind::Data,
        };
        if kind == PktKind::Data && d.workers() > 1 {
            (Route::AllWorkers { owner }, kind)
        } else {
            (Route::Worker(owner), kind)
        }
    };
    let check_net = |inner: &PacketView<'_>, nack: bool, token: bool| {
        let (name, is_interest) = match inner {
            PacketView::Interest(i) => (i.name(), true),
            PacketView::Data(x) => (x.name(), false),
            PacketView::Lp(_) => unreachable!("an LpPacket inside an LpPacket"),
        };
        if nack && !is_interest {
            // A Nack carrying a Data is not forwarded.
            assert_eq!(route, Route::Malformed, "a Nack of a Data");
            return;
        }
        let want = network(name, is_interest, nack);
        if token && want.1 != PktKind::Interest {
            // Our PIT tokens pick the worker; others fall back to the name.
            assert_eq!(kind, want.1, "kind");
        } else {
            assert_eq!((route, kind), want, "route of {name}");
        }
        if !matches!(route, Route::Mgmt { .. }) {
            assert_eq!(hash, Some(full_name_hash(KEY, &name)), "hash of {name}");
        }
    };
    match p {
        PacketView::Lp(lp) => {
            if lp.frag_count.is_some_and(|c| c > 1) {
                assert_eq!(route, Route::Reassemble, "a fragment");
            } else if lp.fragment().is_none() && lp.nbcc.is_some() {
                // An NB-CC signal alone: for every worker's engine.
                let want = if d.workers() > 1 {
                    Route::AllWorkers { owner: 0 }
                } else {
                    Route::Worker(0)
                };
                assert_eq!((route, kind), (want, PktKind::Other), "an IDLE signal");
            } else if lp.fragment().is_none() {
                assert_eq!(route, Route::Idle, "an IDLE packet");
            } else if let Some(Ok(inner)) = lp.network_packet(d.limits()) {
                check_net(&inner, lp.nack.is_some(), lp.pit_token.is_some());
            }
        }
        net => check_net(net, false, false),
    }
}

// ---------------------------------------------------------------------------------------------
// command
// ---------------------------------------------------------------------------------------------

/// `command`: a command Interest parses only from a local face; what parses has the module,
/// verb and ControlParameters its name carries, and its parameters survive re-encoding; every
/// refusal is a 400 or a 403 (403 for any non-local command under a management prefix); the
/// answer Data carries the response under the Interest's name.
pub fn check_command(data: &[u8]) {
    let limits = router_limits();
    let Ok(i) = InterestView::decode(data, &limits) else {
        return;
    };
    let name = i.name();
    let comps: Vec<_> = name.components().collect();
    let text = |k: usize| {
        comps
            .get(k)
            .filter(|c| u32::from(c.typ) == tt::GENERIC_COMPONENT)
            .and_then(|c| std::str::from_utf8(c.value).ok())
    };
    let scoped = matches!(text(0), Some("localhost" | "localhop"));
    for local in [false, true] {
        let resp = match parse_command(&i, local) {
            Ok(cmd) => {
                assert!(local, "a command parsed from a non-local face");
                assert!(
                    scoped && text(1) == Some("nfd"),
                    "parsed outside /localhost/nfd: {name}"
                );
                assert_eq!(Some(cmd.module.as_str()), text(2), "module");
                assert_eq!(Some(cmd.verb.as_str()), text(3), "verb");
                assert!(!cmd.module.is_empty() && !cmd.verb.is_empty());
                let cp = ControlParameters::decode(comps[4].value).expect("component 4 decodes");
                assert_eq!(cp, cmd.params, "parameters differ from component 4");
                let mut w = Vec::new();
                cmd.params.encode(&mut w);
                assert_eq!(
                    ControlParameters::decode(&w).as_ref(),
                    Ok(&cmd.params),
                    "ControlParameters round trip"
                );
                mgmt::command::ok(cmd.params)
            }
            Err(r) => {
                assert!(
                    matches!(r.status_code, 400 | 403),
                    "status {}",
                    r.status_code
                );
                if !local && scoped {
                    assert_eq!(r.status_code, 403, "a non-local command must get 403");
                }
                r
            }
        };
        let answer = response_data(&name.to_name(), &resp);
        let d = DataView::decode(&answer, &Limits::default()).expect("the answer decodes");
        assert_eq!(d.name().wire(), name.wire(), "the answer's name");
        let got = ControlResponse::decode(d.content().unwrap_or(&[])).expect("content decodes");
        assert_eq!(got, resp, "the answer's ControlResponse");
    }
}

// ---------------------------------------------------------------------------------------------
// l2
// ---------------------------------------------------------------------------------------------

/// `l2`: the L2 file's parsers on arbitrary bytes. A superblock that decodes is valid and
/// re-encodes to one that decodes the same; a slot that reads back is rewritten to one that
/// reads the same; a chunk name splits into a prefix of the name and the segment its last
/// component carries, agreeing with the wire crate's name decoder.
pub fn check_l2(data: &[u8]) {
    if let Ok(sb) = Superblock::decode(data) {
        sb.validate().expect("a decoded superblock is valid");
        let mut block = vec![0u8; SUPERBLOCK_BYTES as usize];
        sb.encode(&mut block);
        assert_eq!(Superblock::decode(&block), Ok(sb), "superblock round trip");
    }
    if let Ok((h, name, payload)) = SlotHeader::read(data) {
        assert_eq!(usize::from(h.name_len), name.len());
        assert_eq!(h.payload_len as usize, payload.len());
        let mut slot = vec![0u8; 64 + name.len() + payload.len()];
        h.write(&mut slot, name, payload);
        assert_eq!(
            SlotHeader::read(&slot),
            Ok((h, name, payload)),
            "slot round trip"
        );
    }
    check_chunk_name(data);
}

fn check_chunk_name(name: &[u8]) {
    let parsed = ChunkName::parse(name);
    if let Some(c) = parsed {
        assert_eq!(c.name, name);
        assert!(name.starts_with(c.prefix), "the prefix is not a prefix");
        if c.prefix.len() == name.len() {
            assert_eq!(c.segment, 0, "no segment component, segment {}", c.segment);
        }
    }
    let mut wire = Vec::new();
    write_tlv(&mut wire, tt::NAME, name);
    let unlimited = Limits {
        max_name_components: usize::MAX,
        max_name_bytes: usize::MAX,
        ..Limits::default()
    };
    let Ok(v) = NameView::decode(&wire, &unlimited) else {
        return;
    };
    match v.last() {
        Some(last) if u32::from(last.typ) == tt::SEGMENT => {
            // A segment component whose value is not a NonNegativeInteger: no chunk name.
            if let Some(n) = last.as_number() {
                let c = parsed.expect("a segmented name the wire crate decodes does not parse");
                assert_eq!(c.segment, n, "segment number");
                assert_eq!(
                    c.prefix.len() + last.wire.len(),
                    name.len(),
                    "prefix length"
                );
            }
        }
        _ => {
            let c = parsed.expect("a name the wire crate decodes does not parse as a chunk name");
            assert_eq!((c.prefix, c.segment), (name, 0), "a name without a segment");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// l2file
// ---------------------------------------------------------------------------------------------

const L2_BATCH: u32 = 4;
const L2_EXTENTS: u32 = 4;
const L2_SLOT_BYTES: u32 = 1024;

/// A chunk written to the template file: (name TLV value, the Data packet).
type Chunk = (Vec<u8>, Vec<u8>);

/// The template: an L2 file and its index, as a clean close left them, and every chunk ever
/// written to it (3 contents × 6 segments in 4 extents of 4: batches were evicted, so stale
/// slots of other batches remain on disk).
struct Template {
    data: Vec<u8>,
    index: Vec<u8>,
    written: Vec<Chunk>,
}

const L2_DIR_PREFIX: &str = "cascade-fuzz-l2-";

/// What the `l2file` check stands its store on. The store's open path (superblock, file
/// length, index load, rebuild scan) and its reads are the same code on both; the simulated
/// disk spares each execution a file system and the I/O threads' start and stop, so the fuzz
/// target runs on it, and the corpus replay runs every input on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Medium {
    /// A [`SimDisk`] holding the damaged bytes (no fault of its own).
    Sim,
    /// Real files (in `/dev/shm` when there is one), read through the I/O thread pool.
    File,
}

fn l2_base() -> PathBuf {
    if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    }
}

/// This process's directory (a fuzzer exits without cleaning up: see [`remove_stale_dirs`]).
fn l2_dir() -> PathBuf {
    l2_base().join(format!("{L2_DIR_PREFIX}{}", std::process::id()))
}

/// Removes the directories of processes that are gone (once per process: the first input
/// on files scans the directory, the others do not).
fn remove_stale_dirs() {
    static SCANNED: std::sync::Once = std::sync::Once::new();
    SCANNED.call_once(remove_stale_dirs_now);
}

fn remove_stale_dirs_now() {
    let Ok(dir) = std::fs::read_dir(l2_base()) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(L2_DIR_PREFIX)) else {
            continue;
        };
        if !std::path::Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The store's configuration on `medium`: a new simulated disk, or the file in [`l2_dir`].
fn l2_config(medium: L2Medium) -> L2Config {
    let disk = match medium {
        L2Medium::Sim => Some(SimDisk::new(0, DiskFaults::NONE, Arc::default())),
        L2Medium::File => None,
    };
    L2Config {
        slot_bytes: L2_SLOT_BYTES,
        batch: L2_BATCH,
        queue_depth: 2,
        io_threads: 1,
        backend: IoBackend::Threads,
        disk,
        ..L2Config::new(l2_dir().join("l2"), L2_EXTENTS)
    }
}

fn chunk(content: u8, segment: u64) -> Chunk {
    let name = wire::Name::from_uri(&format!("/fz/c{content}"))
        .expect("name")
        .with(wire::Component::segment(segment));
    let mut d = wire::Data::new(name.clone(), vec![content ^ segment as u8; 100]);
    d.sign_digest_sha256();
    let mut value = Vec::new();
    for c in &name.components {
        c.encode(&mut value);
    }
    (value, d.to_wire())
}

/// The template, written once per process by a store on a simulated disk and closed (the
/// bytes are the ones a store on a file writes: the layout does not depend on the medium).
fn template() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| {
        let cfg = l2_config(L2Medium::Sim);
        let disk = cfg.disk.clone().expect("a simulated disk");
        let mut l2 = L2File::open(&cfg).expect("create the template L2 file");
        let mut written = Vec::new();
        for content in 0..3u8 {
            for segment in 0..6u64 {
                let (name, payload) = chunk(content, segment);
                let c = ChunkName::parse(&name).expect("chunk name");
                loop {
                    match l2.admit(&c, &payload) {
                        Admit::Busy => assert!(l2.wait_one(|_| {})),
                        Admit::Writing | Admit::Present => break,
                        other => panic!("template write refused: {other:?}"),
                    }
                }
                written.push((name, payload));
            }
        }
        l2.close().expect("close the template");
        let (data, index) = disk.files();
        Template {
            data,
            index: index.expect("a clean close writes the index"),
            written,
        }
    })
}

/// Stands the damaged `file` and `index` (`None`: no index file) on `medium` and opens a store
/// on them.
fn open_damaged(
    medium: L2Medium,
    file: Vec<u8>,
    index: Option<Vec<u8>>,
) -> Result<L2File, store::l2::L2Error> {
    let cfg = l2_config(medium);
    match &cfg.disk {
        Some(disk) => disk.load(file, index),
        None => {
            remove_stale_dirs();
            std::fs::create_dir_all(l2_dir()).expect("l2 fuzz dir");
            std::fs::write(&cfg.path, &file).expect("write the L2 file");
            match index {
                Some(index) => std::fs::write(cfg.index_path(), index).expect("write the index"),
                None => {
                    let _ = std::fs::remove_file(cfg.index_path());
                }
            }
        }
    }
    L2File::open(&cfg)
}

/// `l2file`: the template L2 file and its index, damaged as the input says (bit flips by
/// offset, a slot copied over another, a truncation, an index replaced or removed), are
/// opened (loading the index or rebuilding it from the slots) and every chunk ever written is
/// read. Whatever the damage: opening does not panic, and every chunk handed out is one that
/// was written, whole, in its own slot, and the one asked for is under the name asked for.
/// On a simulated disk (the fuzz target's); [`check_l2file_on`] chooses.
pub fn check_l2file(data: &[u8]) {
    check_l2file_on(data, L2Medium::Sim);
}

/// [`check_l2file`] on `medium`; returns how many chunks the store held at open and which
/// of the chunks asked for it served (`None`: it did not open).
pub fn check_l2file_on(data: &[u8], medium: L2Medium) -> Option<(u64, Vec<usize>)> {
    let t = template();
    let ([flags, trunc, from, to], mut rest) = header::<4>(data);
    let (mut file, mut index) = (t.data.clone(), t.index.clone());
    let slots = (L2_EXTENTS * L2_BATCH) as usize;
    let slot_at = |k: usize| {
        let (e, s) = (
            (k / L2_BATCH as usize) as u32,
            (k % L2_BATCH as usize) as u32,
        );
        let extent = (u64::from(L2_SLOT_BYTES) * u64::from(L2_BATCH)).div_ceil(4096) * 4096;
        (SUPERBLOCK_BYTES + u64::from(e) * extent + u64::from(s) * u64::from(L2_SLOT_BYTES))
            as usize
    };
    if flags & 8 != 0 {
        let (a, b) = (
            slot_at(usize::from(from) % slots),
            slot_at(usize::from(to) % slots),
        );
        let copy = file[a..a + L2_SLOT_BYTES as usize].to_vec();
        file[b..b + L2_SLOT_BYTES as usize].copy_from_slice(&copy);
    }
    if flags & 4 != 0 {
        // The rest of the input is the index file.
        index = rest.to_vec();
        rest = &[];
    }
    let target_index = flags & 16 != 0;
    for p in rest.chunks_exact(3) {
        let buf = if target_index { &mut index } else { &mut file };
        if buf.is_empty() {
            break;
        }
        let at = usize::from(u16::from_be_bytes([p[0], p[1]])) % buf.len();
        buf[at] ^= p[2].max(1);
    }
    if flags & 2 != 0 {
        file.truncate(file.len() * usize::from(trunc) / 256);
    }
    let index = (flags & 1 == 0).then_some(index);
    let Ok(mut l2) = open_damaged(medium, file, index) else {
        return None; // a damaged superblock: the worker runs without L2
    };
    l2.set_payload_check(store::tier::data_name_matches);
    assert!(
        l2.stored_chunks() <= u64::from(L2_EXTENTS * L2_BATCH),
        "more chunks than slots"
    );
    let held = l2.stored_chunks();
    let mut served = Vec::new();
    let written: HashSet<(&[u8], &[u8])> = t
        .written
        .iter()
        .map(|(n, p)| (n.as_slice(), p.as_slice()))
        .collect();
    for (k, (name, _)) in t.written.iter().enumerate() {
        let c = ChunkName::parse(name).expect("chunk name");
        let ReadStart::Pending { ticket, slot, .. } = l2.read(&c) else {
            continue;
        };
        let mut done = false;
        while !done {
            let progressed = l2.wait_one(|b| {
                if b.ticket != ticket {
                    return;
                }
                done = true;
                for got in b.chunks() {
                    assert!(
                        written.contains(&(got.name, got.payload)),
                        "a chunk that was never written (slot {})",
                        got.slot
                    );
                    assert_eq!(
                        u64::from(got.slot),
                        got.segment % u64::from(L2_BATCH),
                        "slot"
                    );
                    if got.slot == slot {
                        assert_eq!(
                            got.name,
                            name.as_slice(),
                            "another name in the slot asked for"
                        );
                        served.push(k);
                    }
                }
            });
            assert!(progressed || done, "a read never completed");
        }
    }
    drop(l2);
    Some((held, served))
}

/// Removes the directory the `l2file` check writes its files in.
pub fn cleanup() {
    let _ = std::fs::remove_dir_all(l2_dir());
}
