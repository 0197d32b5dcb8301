//! One worker thread: its tier simulator, the chunk bytes of its L1 slots and its L2, driven
//! through the warm-up and the measured window.

use std::collections::VecDeque;
use std::path::Path;
use std::time::Instant;

use engine::table::mem::{arena, FixedArena};
use store::emulated::fill_chunk;
use store::io::IoBackend;
use store::{
    Admit, BatchRead, ChunkName, EmuDelay, EmuMemory, EmulatedL2, EmulatedL2Config, L2Config,
    L2Error, L2File, ReadStart, Replacement,
};

use super::args::{DelayArg, HcsBenchArgs, MemoryArg, ReplacementArg};
use super::point::Point;
use super::runner::worker_of;
use super::{CHUNKS_PER_CONTENT, CHUNK_BYTES};
use crate::tier_sim::{TierSim, TierSimConfig};

/// Request-iteration times in 1 µs buckets up to [`STALL_BUCKETS`] µs (beyond: the last
/// bucket), with the exact maximum.
struct StallHist {
    buckets: Vec<u64>,
    max_ns: u64,
    n: u64,
}

/// Buckets of [`StallHist`] (1 µs each).
const STALL_BUCKETS: usize = 16_384;

impl StallHist {
    fn new() -> Self {
        StallHist {
            buckets: vec![0; STALL_BUCKETS],
            max_ns: 0,
            n: 0,
        }
    }

    #[inline]
    fn record(&mut self, ns: u64) {
        self.buckets[((ns / 1000) as usize).min(STALL_BUCKETS - 1)] += 1;
        self.max_ns = self.max_ns.max(ns);
        self.n += 1;
    }

    /// The upper edge (ns) of the bucket holding quantile `q`, capped at the maximum.
    fn quantile_ns(&self, q: f64) -> u64 {
        let want = (q * self.n as f64).ceil() as u64;
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= want.max(1) {
                return ((i as u64 + 1) * 1000).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

/// CPU time of the calling thread, s.
fn thread_cpu_s() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: plain syscall writing into a local timespec.
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
    }
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// The name TLV value `/hcs/<content>/seg=<chunk>` (17 bytes).
fn chunk_name(content: u32, chunk: u32) -> [u8; 17] {
    let mut n = [0u8; 17];
    n[..5].copy_from_slice(&[8, 3, b'h', b'c', b's']);
    n[5..7].copy_from_slice(&[8, 4]);
    n[7..11].copy_from_slice(&content.to_be_bytes());
    n[11..13].copy_from_slice(&[0x32, 4]);
    n[13..17].copy_from_slice(&chunk.to_be_bytes());
    n
}

/// (content, chunk) back from a name made by [`chunk_name`].
fn parse_name(n: &[u8]) -> Option<(u32, u32)> {
    if n.len() != 17 {
        return None;
    }
    Some((
        u32::from_be_bytes(n[7..11].try_into().ok()?),
        u32::from_be_bytes(n[13..17].try_into().ok()?),
    ))
}

fn position(content: u32, chunk: u32) -> u64 {
    u64::from(content) * u64::from(CHUNKS_PER_CONTENT) + u64::from(chunk)
}

enum L2 {
    File(Box<L2File>),
    Emu(Box<EmulatedL2>),
}

/// One worker's HCS: the L1 logic, the chunk bytes of its L1 slots, and its L2.
struct Worker {
    hcs: TierSim,
    slab: FixedArena<u8>,
    /// `(content << 32) | chunk` whose bytes are in each L1 slot (`u64::MAX`: none).
    slot_key: Vec<u64>,
    out: Vec<u8>,
    sink: u64,
    point: Point,
}

impl Worker {
    /// A worker with an empty L1 of `l1` chunks.
    fn new(args: &HcsBenchArgs, l1: usize) -> Self {
        Worker {
            hcs: TierSim::new(TierSimConfig {
                l1_chunks: l1,
                batch: args.batch,
                chunks_per_content: CHUNKS_PER_CONTENT,
                replacement: match args.replacement {
                    ReplacementArg::Fifo => Replacement::Fifo,
                    ReplacementArg::Lru => Replacement::Lru,
                },
                prefetch_ahead: args.ahead(),
            }),
            // Its own mapping on huge pages (2 MB each, where the kernel grants them): serving
            // and filling land on random slots of |L1| × 8 KB, which on 4 KB pages miss the TLB
            // on nearly every chunk. Written before timing: the warm-up runs the L1 logic only,
            // so the measured window would otherwise take the slab's first-touch page faults.
            slab: arena(l1 * CHUNK_BYTES, |_| 0u8),
            slot_key: vec![u64::MAX; l1],
            out: vec![0u8; CHUNK_BYTES],
            sink: 0,
            point: Point::default(),
        }
    }

    /// The warm-up: the L1 logic only (no L2 I/O); the slots count as loaded.
    fn warm_up(&mut self, reqs: &[(u32, u32)]) {
        for &(c, k) in reqs {
            let o = self.hcs.request(c, k);
            for (s, e) in [o.miss_batch, o.ahead_batch].into_iter().flatten() {
                for chunk in s..e {
                    if let Some(slot) = self.hcs.l1_slot(c, chunk) {
                        self.slot_key[slot as usize] = (u64::from(c) << 32) | u64::from(chunk);
                    }
                }
            }
        }
    }

    fn serve(&mut self, content: u32, chunk: u32) {
        let Some(slot) = self.hcs.l1_slot(content, chunk) else {
            return;
        };
        let key = (u64::from(content) << 32) | u64::from(chunk);
        if self.slot_key[slot as usize] == key {
            let at = slot as usize * CHUNK_BYTES;
            self.out.copy_from_slice(&self.slab[at..at + CHUNK_BYTES]);
            self.sink = self.sink.wrapping_add(u64::from(self.out[CHUNK_BYTES - 1]));
        } else {
            self.point.pending_hits += 1;
        }
    }

    /// Copies a chunk read from L2 into its L1 slot, if it is still in L1.
    fn fill(
        hcs: &TierSim,
        slab: &mut [u8],
        slot_key: &mut [u64],
        content: u32,
        chunk: u32,
        bytes: &[u8],
    ) {
        if let Some(slot) = hcs.l1_slot(content, chunk) {
            let at = slot as usize * CHUNK_BYTES;
            let n = bytes.len().min(CHUNK_BYTES);
            slab[at..at + n].copy_from_slice(&bytes[..n]);
            slot_key[slot as usize] = (u64::from(content) << 32) | u64::from(chunk);
        }
    }
}

/// Runs one worker's share of an |L1| point: opens its L2, warms its L1 up and measures its
/// window; returns its point and the I/O engine's name.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_worker(
    args: &HcsBenchArgs,
    index: usize,
    catalogue: u32,
    dir: &Path,
    l1: usize,
    reqs: &[(u32, u32)],
    warm: usize,
    direct: bool,
    backend: IoBackend,
) -> Result<(Point, String), String> {
    let mut l2 = open_l2(args, index, catalogue, dir, direct, backend)?;
    let backend_name = match &l2 {
        L2::File(f) => format!("{:?}", f.backend()).to_lowercase(),
        L2::Emu(_) => "emulated".into(),
    };
    let mut wk = Worker::new(args, l1);
    wk.warm_up(&reqs[..warm]);
    let before = *wk.hcs.counters();
    let l2_before = match &l2 {
        L2::File(f) => *f.counters(),
        L2::Emu(_) => Default::default(),
    };
    let window = measure_window(
        &mut wk,
        &mut l2,
        &reqs[warm..],
        usize::from(args.queue_depth),
    );
    let k = wk.hcs.counters().since(&before);
    let mut p = Point {
        requests: k.requests,
        l1_hits: k.l1_hits,
        pending_hits: wk.point.pending_hits,
        prefetch_used: k.prefetch_used,
        prefetch_evicted_unused: k.prefetch_evicted_unused,
        l2_batch_reads: k.l2_batch_reads,
        l2_misses: wk.point.l2_misses,
        elapsed_s: window.elapsed_s,
        iter_max_ns: window.stalls.max_ns,
        iter_p999_ns: window.stalls.quantile_ns(0.999),
        blocked_s: window.blocked.as_secs_f64(),
        cpu_s: window.cpu_s,
        in_flight_sum: wk.point.in_flight_sum,
        queue_samples: wk.point.queue_samples,
        queue_full: wk.point.queue_full,
        backlog_sum: window.backlog_sum,
        l2_gave_up: wk.point.l2_gave_up,
        ..Point::default()
    };
    match l2 {
        L2::File(f) => {
            let c = *f.counters();
            p.l2_bytes = c.bytes_read - l2_before.bytes_read;
            p.checksum_failures = c.checksum_failures - l2_before.checksum_failures;
            f.close().map_err(|e| e.to_string())?;
        }
        L2::Emu(e) => p.l2_bytes = e.bytes_read(),
    }
    std::hint::black_box(wk.sink);
    Ok((p, backend_name))
}

/// Worker `index`'s L2: the emulated one (`--emulated`) or its preloaded file.
fn open_l2(
    args: &HcsBenchArgs,
    index: usize,
    catalogue: u32,
    dir: &Path,
    direct: bool,
    backend: IoBackend,
) -> Result<L2, String> {
    Ok(if args.emulated {
        L2::Emu(Box::new(EmulatedL2::new(EmulatedL2Config {
            capacity_chunks: u64::from(catalogue) * u64::from(CHUNKS_PER_CONTENT),
            chunk_bytes: CHUNK_BYTES as u32,
            throughput_gbps: args.tau_gbps,
            memory: match args.memory {
                MemoryArg::Static => EmuMemory::Static,
                MemoryArg::Dynamic => EmuMemory::Dynamic,
            },
            delay: match args.delay {
                DelayArg::Busy => EmuDelay::Busy,
                DelayArg::Sleep => EmuDelay::Sleep,
            },
        })?))
    } else {
        L2::File(Box::new(open_preloaded(
            args, index, catalogue, dir, direct, backend,
        )?))
    })
}

/// What the measured window took, beside the counters.
struct Window {
    /// Batch reads waiting in the backlog, summed over the requests.
    backlog_sum: u64,
    /// Request-iteration times (waits on a full backlog excluded).
    stalls: StallHist,
    /// Time spent waiting on a full backlog.
    blocked: std::time::Duration,
    elapsed_s: f64,
    /// CPU time of this thread.
    cpu_s: f64,
}

/// The measured window: every request with real L2 reads (at most `qd` in flight, then a
/// backlog of as many), until every read it asked for has completed.
fn measure_window(wk: &mut Worker, l2: &mut L2, reqs: &[(u32, u32)], qd: usize) -> Window {
    // Batch reads the full queue could not take yet, oldest first; at most one queue's worth.
    let backlog_cap = qd;
    let mut backlog: VecDeque<(u32, u32)> = VecDeque::with_capacity(backlog_cap);
    let mut backlog_sum = 0u64;
    let mut stalls = StallHist::new();
    let mut blocked = std::time::Duration::ZERO;
    let cpu0 = thread_cpu_s();
    let start = Instant::now();
    for &(c, k) in reqs {
        let t_iter = Instant::now();
        let mut waited = std::time::Duration::ZERO;
        if let L2::File(f) = &*l2 {
            let n = f.in_flight();
            wk.point.in_flight_sum += n as u64;
            wk.point.queue_samples += 1;
            wk.point.queue_full += u64::from(n >= qd);
        }
        let o = wk.hcs.request(c, k);
        if o.l1_hit {
            wk.serve(c, k);
        }
        for (s, e) in [o.miss_batch, o.ahead_batch].into_iter().flatten() {
            match &mut *l2 {
                L2::Emu(emu) => {
                    let Worker {
                        hcs,
                        slab,
                        slot_key,
                        ..
                    } = &mut *wk;
                    emu.read_batch(position(c, s), e - s, |i, bytes| {
                        Worker::fill(hcs, slab, slot_key, c, s + i, bytes)
                    });
                }
                L2::File(f) => {
                    // Behind reads already waiting, or the queue is full: wait in the
                    // backlog (a full backlog waits for a completion first).
                    if backlog.len() == backlog_cap {
                        let tw = Instant::now();
                        wait_and_submit(wk, f, &mut backlog);
                        waited += tw.elapsed();
                    }
                    backlog.push_back((c, s));
                    submit_backlog(f, &mut backlog, &mut wk.point);
                }
            }
        }
        if !o.l1_hit {
            wk.serve(c, k);
        }
        if let L2::File(f) = &mut *l2 {
            let Worker {
                hcs,
                slab,
                slot_key,
                ..
            } = &mut *wk;
            f.poll(|b| fill_batch(hcs, slab, slot_key, b));
            submit_backlog(f, &mut backlog, &mut wk.point);
            backlog_sum += backlog.len() as u64;
        }
        stalls.record(t_iter.elapsed().saturating_sub(waited).as_nanos() as u64);
        blocked += waited;
    }
    if let L2::File(f) = &mut *l2 {
        // The window ends when every read it asked for has been submitted and completed.
        while !backlog.is_empty() {
            wait_and_submit(wk, f, &mut backlog);
        }
        f.flush();
    }
    let elapsed_s = start.elapsed().as_secs_f64();
    let cpu_s = thread_cpu_s() - cpu0;
    Window {
        backlog_sum,
        stalls,
        blocked,
        elapsed_s,
        cpu_s,
    }
}

/// Copies every chunk of a completed batch read into its L1 slot.
fn fill_batch(hcs: &TierSim, slab: &mut [u8], slot_key: &mut [u64], b: &BatchRead<'_>) {
    for ch in b.chunks() {
        if let Some((c, k)) = parse_name(ch.name) {
            Worker::fill(hcs, slab, slot_key, c, k, ch.payload);
        }
    }
}

/// Waits for one L2 completion (its chunks go to their L1 slots), then submits what the
/// backlog can; with nothing in flight to wait for, the oldest backlog read is given up.
fn wait_and_submit(wk: &mut Worker, f: &mut L2File, backlog: &mut VecDeque<(u32, u32)>) {
    let Worker {
        hcs,
        slab,
        slot_key,
        point,
        ..
    } = wk;
    if !f.wait_one(|b| fill_batch(hcs, slab, slot_key, b)) {
        backlog.pop_front();
        point.l2_gave_up += 1;
    }
    submit_backlog(f, backlog, point);
}

/// Submits the backlog's batch reads, oldest first, while the L2 queue takes them (a full
/// queue is seen before any name is built).
fn submit_backlog(f: &mut L2File, backlog: &mut VecDeque<(u32, u32)>, point: &mut Point) {
    let qd = f.config().queue_depth;
    while let Some(&(c, s)) = backlog.front() {
        if f.in_flight() >= qd {
            return;
        }
        let name = chunk_name(c, s);
        let chunk = ChunkName::parse(&name).expect("valid name");
        match f.read(&chunk) {
            ReadStart::Pending { .. } => {}
            ReadStart::Miss => point.l2_misses += 1,
            ReadStart::Busy => return,
        }
        backlog.pop_front();
    }
}

/// Opens worker `index`'s L2 file and writes every chunk it owns that is not there yet.
fn open_preloaded(
    args: &HcsBenchArgs,
    index: usize,
    catalogue: u32,
    dir: &Path,
    direct: bool,
    backend: IoBackend,
) -> Result<L2File, String> {
    let b = args.batch;
    let batches_per_content = CHUNKS_PER_CONTENT.div_ceil(b);
    let owned: Vec<(u32, u32)> = (0..catalogue)
        .flat_map(|c| (0..batches_per_content).map(move |k| (c, k * b)))
        .filter(|&(c, s)| worker_of(args.mapping, args.workers(), b, c, s) == index)
        .collect();
    let config = L2Config {
        direct,
        backend,
        queue_depth: usize::from(args.queue_depth),
        io_threads: usize::from(args.queue_depth),
        batch: b,
        ..L2Config::new(
            dir.join(format!("hcs-worker-{index}.l2")),
            (owned.len() as u32).max(1),
        )
    };
    let mut l2 = match L2File::open(&config) {
        Ok(l2) => l2,
        Err(L2Error::Config(_) | L2Error::Layout(_)) => {
            // A file from another geometry (our own name in our directory): start over.
            let _ = std::fs::remove_file(&config.path);
            let _ = std::fs::remove_file(config.index_path());
            L2File::open(&config).map_err(|e| e.to_string())?
        }
        Err(e) => return Err(e.to_string()),
    };
    let want: u64 = owned
        .iter()
        .map(|&(_, s)| u64::from(b.min(CHUNKS_PER_CONTENT - s)))
        .sum();
    if l2.stored_chunks() < want {
        let mut payload = vec![0u8; CHUNK_BYTES];
        for &(c, s) in &owned {
            for k in s..(s + b).min(CHUNKS_PER_CONTENT) {
                let name = chunk_name(c, k);
                let chunk = ChunkName::parse(&name).expect("valid name");
                fill_chunk(&mut payload, position(c, k));
                loop {
                    match l2.admit(&chunk, &payload) {
                        Admit::Busy => {
                            l2.wait_one(|_| {});
                        }
                        Admit::Writing | Admit::Present => break,
                        other => return Err(format!("preloading L2: {other:?}")),
                    }
                }
            }
        }
        l2.flush();
    }
    Ok(l2)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_round_trip_and_split_at_the_segment() {
        let n = chunk_name(7, 1234);
        assert_eq!(parse_name(&n), Some((7, 1234)));
        let c = ChunkName::parse(&n).unwrap();
        assert_eq!(c.segment, 1234);
        assert_eq!(c.prefix.len(), 11);
        assert_eq!(parse_name(&[0; 5]), None);
    }
}
