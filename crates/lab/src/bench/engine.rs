//! `cascade bench engine`: the forwarding engine in-process on one thread, as in §4 of So,
//! Narayanan and Oran, "Named Data Networking on a Router: Fast and DoS-resistant Forwarding
//! with Hash Tables" (ANCS 2013).
//!
//! Workload: a synthetic FIB whose prefix depths follow the paper's Table 5, Interests shaped
//! like its IRCache-derived names (Table 3) that extend FIB prefixes, and the matching Data. The
//! Interest phase is CS/PIT miss + PIT insert + FIB LPM for every packet; the Data phase is PIT
//! hit + CS insert with replacement (the CS is full). Cycles are TSC ticks per packet.

use std::sync::Arc;
use std::time::Instant;

use crate::workload;
use engine::fw::pipeline::{Engine, EngineConfig, LpmAlgorithm, MAX_BATCH};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::mem::{arena, FixedArena};
use engine::table::pit_cs::{CsPolicy, PitCsConfig};
use router::dispatch::{Dispatcher, WorkerMapping};
use serde_json::{json, Value};
use wire::{tt, Data, DataView, Interest, InterestView, Limits, MetaInfo, Name};

/// Options of `cascade bench engine`.
#[derive(clap::Args, Debug, Clone)]
pub struct EngineBenchArgs {
    /// FIB entries (accepts 1M, 4M, 16M, 250k, or a plain number). Default 16M, 1M with --quick.
    #[arg(long, value_parser = parse_count)]
    pub fib: Option<usize>,
    /// PIT capacity (entries); the Interest phase fills it.
    #[arg(long, value_parser = parse_count, default_value = "1M")]
    pub pit: usize,
    /// Interests per measured run (default: the PIT capacity, 200k with --quick).
    #[arg(long, value_parser = parse_count)]
    pub packets: Option<usize>,
    /// Smaller and fewer runs: finishes in under a minute.
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Instead of the report: after the warm-up, N rounds of the normal Interests and Data
    /// (2-stage, prefetch on) and N rounds of the attack, each a steady state with the tables
    /// warm; prints the median cycles per packet of each. For A/B comparisons of builds and
    /// for attaching a profiler (`perf record`) to one phase.
    #[arg(long, value_name = "N")]
    pub steady: Option<usize>,
    /// The engine hashes every name itself. By default, as in the router (and in the figures of
    /// So et al.), the I/O thread's dispatcher computes each packet's full-name hash when it
    /// picks the worker and hands it over with the packet; the benchmark runs that dispatcher
    /// code before the timed runs and reports its cost per packet separately.
    #[arg(long)]
    pub no_precomputed_hash: bool,
}

/// Parses counts like `16M`, `250k`, `1000`.
pub fn parse_count(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'M' | 'm')) => (&t[..i], 1_000_000f64),
        Some((i, 'K' | 'k')) => (&t[..i], 1_000f64),
        Some((i, 'G' | 'g')) => (&t[..i], 1_000_000_000f64),
        _ => (t, 1f64),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("not a count: {s:?} (examples: 16M, 250k, 1000)"))?;
    if !(v.is_finite() && v >= 1.0) {
        return Err(format!("count must be at least 1: {s:?}"));
    }
    Ok((v * mult) as usize)
}

/// TSC ticks (cycles at the nominal frequency).
#[inline]
fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions on x86-64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Measured TSC frequency, in GHz.
fn tsc_ghz() -> f64 {
    let (t0, c0) = (Instant::now(), tsc());
    std::thread::sleep(std::time::Duration::from_millis(200));
    let (dt, dc) = (t0.elapsed().as_secs_f64(), tsc() - c0);
    dc as f64 / dt / 1e9
}

/// A benchmark's packets, laid out as a router's receive buffers are: each packet at the start
/// of a cache line of one arena on huge pages (a pool of packet buffers; not one heap block per
/// packet, whose 4 KB pages would add a TLB miss to every packet the engine reads).
struct Packets {
    bytes: FixedArena<u8>,
    /// Start and length of each packet in `bytes`.
    spans: Vec<(usize, usize)>,
    /// The full-name hash of each packet, as the dispatcher computed it (empty: none).
    hashes: Vec<Option<u64>>,
}

impl Packets {
    fn new(wires: impl Iterator<Item = Vec<u8>>) -> Self {
        let wires: Vec<Vec<u8>> = wires.collect();
        let total: usize = wires.iter().map(|w| w.len().next_multiple_of(64)).sum();
        let mut bytes = arena(total, |_| 0u8);
        let mut spans = Vec::with_capacity(wires.len());
        let mut at = 0;
        for w in &wires {
            bytes[at..at + w.len()].copy_from_slice(w);
            spans.push((at, w.len()));
            at += w.len().next_multiple_of(64);
        }
        Packets {
            bytes,
            spans,
            hashes: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.spans.len()
    }

    /// Runs the router's dispatcher over every packet, as its I/O thread would, keeping the
    /// full-name hashes it computes; returns its TSC cycles per packet.
    fn dispatch(&mut self, d: &Dispatcher) -> f64 {
        let mut hashes = Vec::with_capacity(self.len());
        let c0 = tsc();
        for &(at, len) in &self.spans {
            hashes.push(d.classify_hashed(&self.bytes[at..at + len]).2);
        }
        let cycles = tsc() - c0;
        self.hashes = hashes;
        cycles as f64 / self.len().max(1) as f64
    }

    /// The wire decoder alone (what the engine's parse pass runs per packet, without hashing or
    /// prefetching): TSC cycles per packet over [`DECODE_PASSES`] passes of the first
    /// [`DECODE_PACKETS`] packets, so in cache after the first pass.
    fn decode_cycles(&self, limits: &Limits) -> f64 {
        let n = self.len().min(DECODE_PACKETS);
        let mut sink = 0usize;
        let c0 = tsc();
        for _ in 0..DECODE_PASSES {
            for &(at, len) in &self.spans[..n] {
                let b = std::hint::black_box(&self.bytes[at..at + len]);
                sink += match b.first().map(|&t| u32::from(t)) {
                    Some(tt::INTEREST) => {
                        InterestView::decode(b, limits).map_or(0, |v| v.name().len())
                    }
                    _ => DataView::decode(b, limits).map_or(0, |v| v.name().len()),
                };
            }
        }
        let cycles = tsc() - c0;
        std::hint::black_box(sink);
        cycles as f64 / (DECODE_PASSES * n).max(1) as f64
    }
}

/// Packets [`Packets::decode_cycles`] decodes in each pass.
const DECODE_PACKETS: usize = 1024;
/// Passes of [`Packets::decode_cycles`].
const DECODE_PASSES: usize = 200;

fn encode_interests(names: &[Name], seed: u64) -> Packets {
    let mut rng = workload::Rng::new(seed);
    Packets::new(names.iter().map(|n| {
        let nonce = (rng.next_u64() as u32).to_be_bytes();
        Interest {
            lifetime_ms: Some(60_000),
            ..Interest::new(n.clone(), nonce)
        }
        .to_wire()
    }))
}

fn encode_data(names: &[Name]) -> Packets {
    Packets::new(names.iter().map(|n| {
        let mut d = Data::new(n.clone(), vec![0x5A; 100]);
        d.meta_info = Some(MetaInfo {
            freshness_ms: Some(10_000),
            ..MetaInfo::default()
        });
        d.sign_digest_sha256();
        d.to_wire()
    }))
}

#[derive(Debug, Default, Clone, Copy)]
struct Run {
    packets: u64,
    cycles: u64,
    seconds: f64,
    probes: u64,
    lookups: u64,
}

impl Run {
    fn mpps(&self) -> f64 {
        self.packets as f64 / self.seconds / 1e6
    }
    fn cycles_per_packet(&self) -> f64 {
        self.cycles as f64 / self.packets as f64
    }
    fn probes_per_interest(&self) -> f64 {
        self.probes as f64 / self.lookups.max(1) as f64
    }
}

/// Pushes `pkts` through the engine in batches from face `face`; the time is fixed at `now_ms`.
fn drive(e: &mut Engine, pkts: &Packets, face: u32, now_ms: u64) -> Run {
    let before = e.counters().lpm;
    let mut batch: Vec<(u32, &[u8])> = Vec::with_capacity(MAX_BATCH);
    let mut sink = 0usize;
    let t0 = Instant::now();
    let c0 = tsc();
    for (c, chunk) in pkts.spans.chunks(MAX_BATCH).enumerate() {
        batch.clear();
        batch.extend(
            chunk
                .iter()
                .map(|&(at, len)| (face, &pkts.bytes[at..at + len])),
        );
        let first = c * MAX_BATCH;
        let hashes = pkts.hashes.get(first..first + chunk.len()).unwrap_or(&[]);
        sink += e.process_hashed(now_ms, &batch, hashes).actions.len();
    }
    let cycles = tsc() - c0;
    let seconds = t0.elapsed().as_secs_f64();
    std::hint::black_box(sink);
    let after = e.counters().lpm;
    Run {
        packets: pkts.len() as u64,
        cycles,
        seconds,
        probes: after.probes - before.probes,
        lookups: after.lookups - before.lookups,
    }
}

fn clear_cs(e: &mut Engine) {
    e.table_mut().erase_cs(&[], usize::MAX);
}

fn log(quiet: bool, msg: &str) {
    if !quiet {
        eprintln!("[bench] {msg}");
    }
}

/// Runs the engine benchmark and prints its table or JSON.
pub fn run_engine(args: &EngineBenchArgs) -> Result<(), String> {
    let fib_n = args
        .fib
        .unwrap_or(if args.quick { 1_000_000 } else { 16_000_000 });
    let pit_n = args.pit;
    let packets_n = args
        .packets
        .unwrap_or(if args.quick { 200_000 } else { pit_n })
        .min(pit_n);
    let quiet = args.json;
    let ghz = tsc_ghz();
    log(
        quiet,
        &format!("TSC {ghz:.3} GHz; generating a {fib_n}-prefix FIB (Table 5 depths)"),
    );
    let key = HashKey::fixed(0x5EED_0000_0000_0001 ^ args.seed, 0xC0FF_EE00_0000_0002);
    let (prefixes, fib, most_likely) = build_fib(args, key, fib_n, quiet)?;
    let names = workload::interests_for_fib(args.seed ^ 0x1, &prefixes, packets_n);
    drop(prefixes);
    log_names(quiet, &names);
    let mut traffic = Traffic::new(args, &names, packets_n);
    drop(names);
    // The I/O thread's work for these packets, before (and outside) the engine's timed runs.
    let dispatch = (!args.no_precomputed_hash).then(|| traffic.dispatch(key, quiet));
    let decode = traffic.decode(quiet);
    let mut phases = Phases::warm(key, &fib, pit_n, &traffic, quiet);
    if let Some(rounds) = args.steady {
        phases.steady(rounds, args.json, dispatch.is_some(), decode);
        return Ok(());
    }
    log(quiet, "measuring 2-stage with prefetch");
    let (int_run, data_run) = phases.measure(LpmAlgorithm::TwoStage, true);
    log(quiet, "measuring 2-stage without prefetch");
    let (int_off, data_off) = phases.measure(LpmAlgorithm::TwoStage, false);
    let combined =
        |i: &Run, d: &Run| (i.packets + d.packets) as f64 / (i.seconds + d.seconds) / 1e6;
    let lpm = phases.lpm_sweep(&fib, args.quick, most_likely, quiet)?;
    let attack = phases.attack_rounds(&fib, most_likely, quiet)?;
    let saving_pct = 100.0 * (1.0 - lpm.best_probes / lpm.longest_first_probes);
    let out = json!({
        "fib_entries": fib_n,
        "pit_capacity": pit_n,
        "packets_per_run": packets_n,
        "tsc_ghz": round3(ghz),
        "m_most_likely": most_likely,
        "precomputed_hash": dispatch.is_some(),
        "dispatcher": dispatch,
        "decode": decode,
        "interest": {
            "mpps": round3(int_run.mpps()),
            "cycles_per_packet": round1(int_run.cycles_per_packet()),
            "fib_probes_per_interest": round3(int_run.probes_per_interest()),
        },
        "data": {
            "mpps": round3(data_run.mpps()),
            "cycles_per_packet": round1(data_run.cycles_per_packet()),
        },
        "lpm": lpm.rows,
        "lpm_best_saving_pct": round3(saving_pct),
        "prefetch": {
            "on_mpps": round3(combined(&int_run, &data_run)),
            "off_mpps": round3(combined(&int_off, &data_off)),
        },
        "attack": attack.json(most_likely),
    });
    if args.json {
        println!("{out}");
    } else {
        print_table(&out);
    }
    Ok(())
}

/// Generates `fib_n` prefixes (Table 5 depths) and builds the FIB at the most likely M;
/// returns the prefixes, the FIB and that M.
fn build_fib(
    args: &EngineBenchArgs,
    key: HashKey,
    fib_n: usize,
    quiet: bool,
) -> Result<(Vec<Name>, Arc<Fib>, usize), String> {
    let t = Instant::now();
    let prefixes = workload::synthetic_fib(args.seed, fib_n);
    let generated_s = t.elapsed().as_secs_f64();
    let mut depth_hist = [0usize; 64];
    for p in &prefixes {
        depth_hist[p.len().min(63)] += 1;
    }
    let most_likely = (1..64)
        .max_by_key(|&d| (depth_hist[d], usize::MAX - d))
        .unwrap_or(4);
    let fib = Arc::new(Fib::new(key, fib_n + fib_n / 4 + 1024, most_likely));
    let mut rng = workload::Rng::new(args.seed ^ 0xFACE);
    for p in &prefixes {
        let face = 100 + rng.below(8) as u32;
        fib.add_nexthop(p, face, rng.below(100) as u32)
            .map_err(|e| format!("FIB insert failed: {e:?}"))?;
    }
    log(
        quiet,
        &format!(
            "FIB built in {:.1} s ({generated_s:.1} s generating the prefixes, {:.1} s inserting them): {} entries ({} virtual) at M={}",
            t.elapsed().as_secs_f64(),
            t.elapsed().as_secs_f64() - generated_s,
            fib.len(),
            fib.virtual_len(),
            fib.m()
        ),
    );
    Ok((prefixes, fib, most_likely))
}

/// Logs the Interest names' mean size and how many are longer than a PIT entry holds inline.
fn log_names(quiet: bool, names: &[Name]) {
    let count = names.len().max(1) as f64;
    let components = names.iter().map(|n| n.len()).sum::<usize>() as f64 / count;
    let bytes = names.iter().map(|n| n.value_len()).sum::<usize>() as f64 / count;
    let long = names
        .iter()
        .filter(|n| n.value_len() > engine::table::pit_cs::NAME_INLINE)
        .count() as f64;
    log(
        quiet,
        &format!(
            "{} Interest names: {components:.2} components, {bytes:.1} bytes (Name TLV-VALUE) on average, {:.1} % longer than the {} bytes a PIT entry holds inline",
            names.len(),
            100.0 * long / count,
            engine::table::pit_cs::NAME_INLINE
        ),
    );
}

/// The benchmark's packets: the Interests, their Data, and the attack's Interests.
struct Traffic {
    interests: Packets,
    data: Packets,
    attack: Packets,
}

impl Traffic {
    /// Encodes the Interests for `names`, their Data, and the 40-component garbage names of the
    /// attack.
    fn new(args: &EngineBenchArgs, names: &[Name], packets_n: usize) -> Self {
        let interests = encode_interests(names, args.seed ^ 0x2);
        let data = encode_data(names);
        let attack_names =
            workload::garbage_token_names(args.seed ^ 0x3, packets_n.min(100_000), 40);
        let attack = encode_interests(&attack_names, args.seed ^ 0x4);
        Traffic {
            interests,
            data,
            attack,
        }
    }

    /// Runs the router's dispatcher over every packet (the full-name hashes the engine is then
    /// given); returns its cost per packet as JSON.
    fn dispatch(&mut self, key: HashKey, quiet: bool) -> Value {
        let d = Dispatcher::new(key, 1, WorkerMapping::Name, EngineConfig::default().limits);
        let i = self.interests.dispatch(&d);
        let dd = self.data.dispatch(&d);
        let a = self.attack.dispatch(&d);
        log(
            quiet,
            &format!("dispatcher (full-name hash, precomputed for the engine): Interest {i:.0}, Data {dd:.0}, attack {a:.0} cycles/packet"),
        );
        json!({"interest_cycles_per_packet": round1(i), "data_cycles_per_packet": round1(dd), "attack_cycles_per_packet": round1(a)})
    }

    /// The wire decoder's cost alone, in cache, as JSON.
    fn decode(&self, quiet: bool) -> Value {
        let limits = EngineConfig::default().limits;
        let decode = (
            self.interests.decode_cycles(&limits),
            self.data.decode_cycles(&limits),
        );
        log(
            quiet,
            &format!(
                "packet decode alone, in cache: Interest {:.0}, Data {:.0} cycles/packet",
                decode.0, decode.1
            ),
        );
        json!({"interest_cycles_per_packet": round1(decode.0), "data_cycles_per_packet": round1(decode.1)})
    }
}

/// The face Interests arrive on.
const DOWNSTREAM: u32 = 1;
/// The face Data arrives on: a FIB next hop's side.
const UPSTREAM: u32 = 100;

/// The engine under measurement, its traffic and its clock.
struct Phases<'a> {
    e: Engine,
    traffic: &'a Traffic,
    now: u64,
}

/// The LPM rows of the report.
struct LpmSweep {
    rows: Vec<Value>,
    longest_first_probes: f64,
    best_probes: f64,
}

/// The attack's rounds.
struct Attack {
    /// All attack runs summed.
    run: Run,
    /// Attack throughput over normal Interest throughput, per round.
    round_ratios: Vec<f64>,
    /// The median of `round_ratios`.
    relative: f64,
}

impl Attack {
    fn json(&self, m: usize) -> Value {
        json!({
            "components": 40,
            "probes_per_interest": round3(self.run.probes_per_interest()),
            "m": m,
            "relative_throughput": round3(self.relative),
            "cycles_per_packet": round1(self.run.cycles_per_packet()),
            "rounds": ATTACK_ROUNDS,
            "round_ratios": self.round_ratios,
        })
    }
}

impl<'a> Phases<'a> {
    /// An engine over `fib` with a PIT of `pit_n` entries, after a warm-up run that touches
    /// every page and gives every entry its buffers.
    fn warm(key: HashKey, fib: &Arc<Fib>, pit_n: usize, traffic: &'a Traffic, quiet: bool) -> Self {
        let config = EngineConfig {
            pit_cs: PitCsConfig {
                pit_capacity: pit_n,
                cs_capacity: 65_536,
                cs_policy: CsPolicy::Lru,
                ..PitCsConfig::default()
            },
            ..EngineConfig::default()
        };
        let mut e = Engine::new(key, Arc::clone(fib), config);
        log(quiet, "warm-up run");
        drive(&mut e, &traffic.interests, DOWNSTREAM, 1);
        drive(&mut e, &traffic.data, UPSTREAM, 2);
        clear_cs(&mut e);
        Phases {
            e,
            traffic,
            now: 10,
        }
    }

    /// One Interest run and one Data run with `lpm` and prefetching on or off; the CS is
    /// emptied after.
    fn measure(&mut self, lpm: LpmAlgorithm, prefetch: bool) -> (Run, Run) {
        let e = &mut self.e;
        e.set_lpm(lpm);
        e.set_prefetch(prefetch);
        self.now += 1;
        let i = drive(e, &self.traffic.interests, DOWNSTREAM, self.now);
        self.now += 1;
        let d = drive(e, &self.traffic.data, UPSTREAM, self.now);
        clear_cs(e);
        (i, d)
    }

    /// One attack run; the attack's PIT entries then expire (their lifetime is 60 s).
    fn attack(&mut self) -> Run {
        self.now += 1;
        let a = drive(&mut self.e, &self.traffic.attack, DOWNSTREAM, self.now);
        self.now += 120_000;
        self.e.advance(self.now);
        a
    }

    /// `--steady`: `rounds` rounds of the normal Interests and Data (2-stage, prefetch on),
    /// then as many of the attack; prints the median cycles per packet of each.
    fn steady(&mut self, rounds: usize, as_json: bool, precomputed: bool, decode: Value) {
        let rounds = rounds.max(1);
        let (mut int_c, mut data_c, mut att_c) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let (i, d) = self.measure(LpmAlgorithm::TwoStage, true);
            int_c.push(i.cycles_per_packet());
            data_c.push(d.cycles_per_packet());
        }
        for _ in 0..rounds {
            att_c.push(self.attack().cycles_per_packet());
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            round1(v[v.len() / 2])
        };
        let out = json!({
            "rounds": rounds,
            "precomputed_hash": precomputed,
            "decode": decode,
            "interest_cycles_per_packet": median(&mut int_c),
            "data_cycles_per_packet": median(&mut data_c),
            "attack_cycles_per_packet": median(&mut att_c),
        });
        if as_json {
            println!("{out}");
        } else {
            println!(
                "steady state, median of {rounds} rounds (cycles/packet{}): Interest {}, Data {}, attack {}",
                if precomputed { ", full-name hash precomputed" } else { ", engine hashes" },
                out["interest_cycles_per_packet"], out["data_cycles_per_packet"], out["attack_cycles_per_packet"]
            );
        }
    }

    /// Longest-first, then 2-stage at each M (3 to 8, 3 to 6 with `quick`): FIB probes per
    /// Interest, FIB expansion and throughput.
    fn lpm_sweep(
        &mut self,
        fib: &Fib,
        quick: bool,
        most_likely: usize,
        quiet: bool,
    ) -> Result<LpmSweep, String> {
        let mut rows: Vec<Value> = Vec::new();
        log(quiet, "measuring longest-first");
        let (lf, _) = self.measure(LpmAlgorithm::LongestFirst, true);
        rows.push(json!({
            "algorithm": "longest-first", "m": Value::Null,
            "probes_per_interest": round3(lf.probes_per_interest()),
            "fib_expansion_pct": 0.0, "mpps": round3(lf.mpps()),
        }));
        let ms: Vec<usize> = if quick {
            vec![3, 4, 5, 6]
        } else {
            (3..=8).collect()
        };
        let mut best = (f64::MAX, most_likely);
        for &m in &ms {
            fib.set_m(m)
                .map_err(|e| format!("set_m({m}) failed: {e:?}"))?;
            log(quiet, &format!("measuring 2-stage M={m}"));
            let (r, _) = self.measure(LpmAlgorithm::TwoStage, true);
            if r.probes_per_interest() < best.0 {
                best = (r.probes_per_interest(), m);
            }
            rows.push(json!({
                "algorithm": "2-stage", "m": m,
                "probes_per_interest": round3(r.probes_per_interest()),
                "fib_expansion_pct": round3(fib.expansion_pct()), "mpps": round3(r.mpps()),
            }));
        }
        Ok(LpmSweep {
            rows,
            longest_first_probes: lf.probes_per_interest(),
            best_probes: best.0,
        })
    }

    /// The garbage-token attack (long names) under the most-likely M: [`ATTACK_ROUNDS`] rounds of
    /// a normal Interest run and an attack run back to back.
    fn attack_rounds(
        &mut self,
        fib: &Fib,
        most_likely: usize,
        quiet: bool,
    ) -> Result<Attack, String> {
        fib.set_m(most_likely)
            .map_err(|e| format!("set_m failed: {e:?}"))?;
        self.e.set_lpm(LpmAlgorithm::TwoStage);
        self.e.set_prefetch(true);
        // The ratio of each round, and the median of those, so that a disturbance of one run
        // (the other core is shared) does not decide the figure.
        log(
            quiet,
            &format!("measuring the garbage-token attack ({ATTACK_ROUNDS} rounds)"),
        );
        let mut ratios = Vec::with_capacity(ATTACK_ROUNDS);
        let mut att = Run::default();
        for _ in 0..ATTACK_ROUNDS {
            let (normal, _) = self.measure(LpmAlgorithm::TwoStage, true);
            let a = self.attack();
            ratios.push(a.mpps() / normal.mpps());
            att.packets += a.packets;
            att.cycles += a.cycles;
            att.seconds += a.seconds;
            att.probes += a.probes;
            att.lookups += a.lookups;
        }
        let round_ratios: Vec<f64> = ratios.iter().map(|&r| round3(r)).collect();
        ratios.sort_by(f64::total_cmp);
        Ok(Attack {
            run: att,
            round_ratios,
            relative: ratios[ratios.len() / 2],
        })
    }
}

/// Rounds of (normal Interests, attack) whose median ratio is the attack's relative throughput.
const ATTACK_ROUNDS: usize = 5;

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A JSON number or string as display text ("-" when absent).
fn txt(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

fn print_table(v: &Value) {
    println!(
        "cascade bench engine: FIB {} entries, PIT {}, {} packets per run, TSC {} GHz, one thread",
        v["fib_entries"], v["pit_capacity"], v["packets_per_run"], v["tsc_ghz"]
    );
    match v["dispatcher"].as_object() {
        Some(d) => println!(
            "full-name hashes precomputed by the dispatcher (I/O thread, not in the engine's figures): Interest {}, Data {}, attack {} cycles/packet",
            txt(&d["interest_cycles_per_packet"]),
            txt(&d["data_cycles_per_packet"]),
            txt(&d["attack_cycles_per_packet"])
        ),
        None => println!("the engine hashes every name itself (--no-precomputed-hash)"),
    }
    println!(
        "packet decode alone, in cache (part of the engine's figures): Interest {}, Data {} cycles/packet",
        txt(&v["decode"]["interest_cycles_per_packet"]),
        txt(&v["decode"]["data_cycles_per_packet"])
    );
    println!();
    println!(
        "{:<10} {:>8} {:>12} {:>12}",
        "packet", "Mpps", "cycles/pkt", "FIB probes"
    );
    let i = &v["interest"];
    let d = &v["data"];
    println!(
        "{:<10} {:>8} {:>12} {:>12}",
        "Interest",
        txt(&i["mpps"]),
        txt(&i["cycles_per_packet"]),
        txt(&i["fib_probes_per_interest"])
    );
    println!(
        "{:<10} {:>8} {:>12} {:>12}",
        "Data",
        txt(&d["mpps"]),
        txt(&d["cycles_per_packet"]),
        "-"
    );
    println!();
    println!(
        "{:<14} {:>3} {:>16} {:>15} {:>8}",
        "LPM", "M", "probes/Interest", "FIB expansion %", "Mpps"
    );
    for r in v["lpm"].as_array().into_iter().flatten() {
        println!(
            "{:<14} {:>3} {:>16} {:>15} {:>8}",
            txt(&r["algorithm"]),
            txt(&r["m"]),
            txt(&r["probes_per_interest"]),
            txt(&r["fib_expansion_pct"]),
            txt(&r["mpps"])
        );
    }
    println!(
        "best 2-stage saving of FIB probes vs longest-first: {}%",
        txt(&v["lpm_best_saving_pct"])
    );
    println!();
    println!(
        "prefetch: on {} Mpps, off {} Mpps (Interest + Data)",
        txt(&v["prefetch"]["on_mpps"]),
        txt(&v["prefetch"]["off_mpps"])
    );
    println!(
        "attack (40-component garbage names, M={}): {} probes/Interest, {} cycles/Interest, throughput {}x normal (median of the rounds {})",
        txt(&v["attack"]["m"]),
        txt(&v["attack"]["probes_per_interest"]),
        txt(&v["attack"]["cycles_per_packet"]),
        txt(&v["attack"]["relative_throughput"]),
        v["attack"]["round_ratios"]
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse() {
        assert_eq!(parse_count("16M"), Ok(16_000_000));
        assert_eq!(parse_count("250k"), Ok(250_000));
        assert_eq!(parse_count("1000"), Ok(1000));
        assert_eq!(parse_count("1.5M"), Ok(1_500_000));
        assert!(parse_count("x").is_err());
        assert!(parse_count("0").is_err());
        assert!(parse_count("-3M").is_err());
    }
}
