//! `cascade bench attack`: a hostile neighbour against a real `cascade run`, while a legitimate
//! consumer fetches through it.
//!
//! Each attack runs on a router of its own (a `cascade run` child, so that its resident size
//! is its own; UDP on 127.0.0.1, a Unix socket in a temporary directory), in this order:
//!
//! 1. the producer (`/bench`) and a sink that never answers (`/sink`) connect over Unix and
//!    register; the router's idle resident size is read;
//! 2. the legitimate consumer starts (UDP from 127.0.0.1 by default: an on-demand face, in the
//!    quota the attackers compete for), with at most `--window` Interests outstanding and at
//!    most `--legit-rate` per second, and a probe opens a new face (a new UDP address, then a
//!    new Unix connection) four times a second;
//! 3. after a second of warm-up, the baseline: `--duration` seconds without attack;
//! 4. the attack: `--duration` seconds at most `--rate` packets per second from 127/8
//!    sources of its own (see [`Attack`]); at its end, still under attack, `status/general` and
//!    `faces/list` are asked over a new Unix face (their latency shows whether management
//!    still answers local apps);
//! 5. the attack stops; a little later the face table's bound counters (which the router logs
//!    at most once a second) are read, and the router is stopped.
//!
//! The router's resident size (`VmRSS`) is sampled every 50 ms. The floors, from the router's
//! hardening requirements: the consumer keeps at least 90 % of its baseline throughput, and the
//! resident size stays under 1.5 × the idle size plus the configured tables' budget (the CS
//! full of the largest packets, the PIT full, the reassembly budget, the packet buffers not
//! touched at start-up). The router has no configured memory budget of its own; what is
//! checked is that bound. The suite reports what it measures and does not tune the router.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) mod child;
mod flood;
mod legit;
mod report;

use child::RouterChild;
pub use flood::Attack;
pub use legit::LegitFace;
use legit::{Apps, LegitOptions, Traffic};
use report::{Row, TableBudget};

/// Arguments of `cascade bench attack`.
#[derive(clap::Args, Debug)]
pub struct AttackBenchArgs {
    /// Seconds of the baseline and of each attack.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Attacks to run, by letter or name, comma-separated: a faces, b pit, c reassembly,
    /// d mgmt, e garbage, f reflection; or `all`.
    #[arg(long, default_value = "all")]
    attacks: String,
    /// Attack packets per second (the attack sends at most this many times the duration).
    #[arg(long, default_value_t = 50_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    rate: u64,
    /// The legitimate consumer's face.
    #[arg(long, value_enum, default_value_t = LegitFace::Udp)]
    legit_face: LegitFace,
    /// Interests the legitimate consumer keeps outstanding at most.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    window: u64,
    /// Interests per second the legitimate consumer sends at most (0: as fast as its window
    /// allows).
    #[arg(long, default_value_t = 2000.0)]
    legit_rate: f64,
    /// Content bytes of the producer's Data.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(0..=8000))]
    payload: u64,
    /// Forwarding workers of the router (default: the router's default).
    #[arg(long)]
    workers: Option<usize>,
    /// A configuration file for the router (its listeners are replaced).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The `cascade` binary to run the router with (default: this one).
    #[arg(long)]
    cascade: Option<PathBuf>,
    /// Print one JSON object per attack, one per line.
    #[arg(long)]
    json: bool,
}

/// Runs `cascade bench attack`.
pub fn run(args: &AttackBenchArgs) -> Result<(), String> {
    if !(args.duration > 0.0 && args.duration <= 3600.0) {
        return Err(format!(
            "--duration {}: must be in (0, 3600] seconds",
            args.duration
        ));
    }
    if !(args.legit_rate >= 0.0 && args.legit_rate.is_finite()) {
        return Err(format!("--legit-rate {}: must be >= 0", args.legit_rate));
    }
    let attacks = parse_attacks(&args.attacks)?;
    let exe = match &args.cascade {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?,
    };
    let budget = table_budget(&router_config(args)?);
    raise_fd_limit();
    let mut rows = Vec::with_capacity(attacks.len());
    for a in attacks {
        eprintln!("cascade bench attack: ({}) {}", a.letter(), a.describe());
        let row = run_one(args, a, &exe, &budget)?;
        if args.json {
            println!("{}", row.json());
        }
        rows.push(row);
    }
    if !args.json {
        report::print_text(&rows);
    }
    Ok(())
}

fn parse_attacks(s: &str) -> Result<Vec<Attack>, String> {
    if s == "all" {
        return Ok(Attack::ALL.to_vec());
    }
    let mut out = Vec::new();
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let a = Attack::parse(w).map_err(|e| format!("--attacks: {e}"))?;
        if !out.contains(&a) {
            out.push(a);
        }
    }
    if out.is_empty() {
        return Err("--attacks: no attack named".into());
    }
    Ok(out)
}

/// The router's configuration as the child will see it (the file, if any, and `--workers`).
fn router_config(args: &AttackBenchArgs) -> Result<router::Config, String> {
    let mut cfg = match &args.config {
        None => router::Config::default(),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            router::Config::from_toml(&text).map_err(|e| format!("{}: {e}", p.display()))?
        }
    };
    cfg.apply(&router::Overrides {
        workers: args.workers,
        ..router::Overrides::default()
    });
    cfg.validate()?;
    Ok(cfg)
}

/// The bytes the configured tables may take beyond what the idle router holds: the CS full of
/// packets of the largest size, the PIT full (an entry and a name entry per Interest), the
/// NDNLPv2 reassembly budget, and the packet buffers not touched at start-up. The management
/// queue and the stream faces' send queues have no entry: the first has no bound, and the
/// attacks use no stream face.
fn table_budget(cfg: &router::Config) -> TableBudget {
    use engine::table::pit_cs::{NameEntry, PitEntry};
    let pkt = cfg.limits.max_packet_bytes as u64;
    let pit_entry = (std::mem::size_of::<PitEntry>() + std::mem::size_of::<NameEntry>()) as u64;
    let untouched = cfg
        .workers
        .buffers
        .saturating_sub(cfg.workers.prefault_buffers) as u64;
    TableBudget {
        parts: vec![
            ("cs", cfg.cs.capacity as u64 * pkt),
            ("pit", cfg.pit.capacity as u64 * pit_entry),
            ("reassembly", cfg.faces.reassembly_budget_bytes as u64),
            ("buffers", untouched * pkt),
        ],
    }
}

/// Raises this process's soft limit of open files to its hard limit (the attacks open up to
/// 4,096 sockets).
fn raise_fd_limit() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with a valid pointer to a rlimit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// Resident sizes sampled over one phase.
#[derive(Default)]
struct RssTrace {
    samples: Vec<(f64, u64)>,
}

impl RssTrace {
    fn peak(&self) -> u64 {
        self.samples.iter().map(|s| s.1).max().unwrap_or(0)
    }

    /// MiB/s over the last 40 % of the phase (least squares).
    fn growth_at_end_mib_s(&self) -> f64 {
        let end = self.samples.last().map_or(0.0, |s| s.0);
        let tail: Vec<(f64, f64)> = self
            .samples
            .iter()
            .filter(|s| s.0 >= end * 0.6)
            .map(|s| (s.0, s.1 as f64 / 1024.0))
            .collect();
        if tail.len() < 2 {
            return 0.0;
        }
        let n = tail.len() as f64;
        let (mx, my) = (
            tail.iter().map(|p| p.0).sum::<f64>() / n,
            tail.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let sxx: f64 = tail.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let sxy: f64 = tail.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        if sxx > 0.0 {
            sxy / sxx
        } else {
            0.0
        }
    }
}

/// Waits `d`, sampling the router's resident size every 50 ms.
fn sample_for(router: &RouterChild, d: Duration) -> RssTrace {
    let t0 = Instant::now();
    let mut t = RssTrace::default();
    loop {
        let e = t0.elapsed();
        t.samples.push((e.as_secs_f64(), router.rss_kib()));
        if e >= d {
            return t;
        }
        std::thread::sleep((d - e).min(Duration::from_millis(50)));
    }
}

/// Fetches every name the reflection attack will ask for, so that the CS holds them.
fn prime_cs(router: &RouterChild) -> Result<(), String> {
    let mut f = client::Face::connect(&client::TransportUri::Unix(router.unix.clone()))
        .map_err(|e| e.to_string())?;
    let base = wire::Name::from_uri(legit::PRODUCER_PREFIX)
        .map_err(|e| e.to_string())?
        .with_str(legit::BIG);
    for n in 0..flood::REFLECT_NAMES {
        let i = wire::Interest::new(
            base.clone().with(legit::seq_component(n)),
            client::random_nonce(),
        );
        f.fetch(&i).map_err(|e| format!("priming the CS: {e}"))?;
    }
    Ok(())
}

/// Runs one attack against a router of its own and returns what it measured.
fn run_one(
    args: &AttackBenchArgs,
    attack: Attack,
    exe: &Path,
    budget: &TableBudget,
) -> Result<Row, String> {
    let mut router = RouterChild::start(exe, args.config.as_deref(), args.workers, attack.name())?;
    let apps = Apps::start(&router, args.payload as usize)?;
    std::thread::sleep(Duration::from_millis(300));
    let idle_rss_kib = router.rss_kib();
    if attack == Attack::Reflection {
        prime_cs(&router)?;
    }
    // The attacker's sockets are bound before either measured phase.
    let socks =
        flood::bind_sources(attack).map_err(|e| format!("attack {}: {e}", attack.name()))?;
    let run = u64::from(std::process::id()) << 32 | u64::from(attack.octet());
    let opts = LegitOptions {
        face: args.legit_face,
        window: args.window as usize,
        rate: (args.legit_rate > 0.0).then_some(args.legit_rate),
        lifetime_ms: 1000,
    };
    let traffic = Traffic::start(&router, opts, run)?;
    let phase = Duration::from_secs_f64(args.duration);
    sample_for(&router, Duration::from_secs(1));
    let s0 = traffic.counters.snapshot();
    let base_rss = sample_for(&router, phase);
    let s1 = traffic.counters.snapshot();
    let status0 = router.status(Duration::from_secs(2)).ok();
    let bounds0 = router.bounds();
    let cpu0 = router.cpu_s();

    let stop = Arc::new(AtomicBool::new(false));
    let (stop2, to, rate) = (Arc::clone(&stop), router.udp, args.rate);
    let max_packets = (args.rate as f64 * args.duration).ceil() as u64;
    let attacker = std::thread::Builder::new()
        .name(format!("attack-{}", attack.name()))
        .spawn(move || flood::run(attack, &socks, to, rate, max_packets, &stop2))
        .map_err(|e| e.to_string())?;
    let t_attack = Instant::now();
    let attack_rss = sample_for(&router, phase);
    let s2 = traffic.counters.snapshot();
    let cpu = (router.cpu_s() - cpu0) / t_attack.elapsed().as_secs_f64();
    // Still under attack (unless it sent its bound already): does management answer?
    let status = router.status(Duration::from_secs(2));
    let faces = router.faces(Duration::from_secs(2)).ok();
    stop.store(true, Relaxed);
    let flood = attacker
        .join()
        .map_err(|_| "the attack thread panicked".to_string())?;
    // The router logs its bound counters at most once a second.
    std::thread::sleep(Duration::from_millis(1200));
    let bounds1 = router.bounds();
    let legit = traffic.stop();
    let apps = apps.stop();
    let router_alive = router.alive();
    let router_warnings = router.warnings();
    let tail = router.log_tail();
    router.stop();
    if router_alive {
        legit?;
        apps?;
    } else {
        eprintln!(
            "cascade bench attack: the router died under attack {}: {tail}",
            attack.name()
        );
    }
    let octet = format!("127.{}.", attack.octet());
    let attacker_faces = faces.as_ref().map(|f| {
        f.iter()
            .filter(|s| s.uri.contains(&octet))
            .fold((0u64, 0u64, 0u64), |a, s| {
                (a.0 + 1, a.1 + s.n_in_bytes, a.2 + s.n_out_bytes)
            })
    });
    let mut row = Row {
        attack: Some(attack),
        flood,
        baseline: s1 - s0,
        attacked: s2 - s1,
        seconds: args.duration,
        idle_rss_kib,
        baseline_peak_rss_kib: base_rss.peak(),
        attack_peak_rss_kib: attack_rss.peak(),
        rss_growth_mib_s: attack_rss.growth_at_end_mib_s(),
        baseline_rss_growth_mib_s: base_rss.growth_at_end_mib_s(),
        budget: budget.clone(),
        router_cpu_cores: cpu,
        router_alive,
        router_warnings,
        faces: faces
            .as_ref()
            .zip(attacker_faces)
            .map(|(f, a)| (f.len() as u64, a.0)),
        attacker_face_bytes: attacker_faces.map(|a| (a.1, a.2)),
        ..Row::default()
    };
    match status {
        Ok((s, took)) => {
            row.mgmt_status_ms = Some(took.as_secs_f64() * 1e3);
            row.pit_entries = Some(s.n_pit_entries);
            row.out_nacks = status0.map(|(s0, _)| s.n_out_nacks.saturating_sub(s0.n_out_nacks));
        }
        Err(e) => row.mgmt_error = Some(e),
    }
    row.bounds = bounds1
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "reassembly_bytes"))
        .filter_map(|(k, v)| {
            let d = v.saturating_sub(bounds0.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect();
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attack_lists_parse_and_keep_their_order() {
        assert_eq!(parse_attacks("all").unwrap(), Attack::ALL.to_vec());
        assert_eq!(
            parse_attacks("f,a,pit,a").unwrap(),
            vec![Attack::Reflection, Attack::Faces, Attack::Pit]
        );
        assert!(parse_attacks("a,z").is_err());
        assert!(parse_attacks(",").is_err());
    }

    #[test]
    fn the_table_budget_grows_with_the_configured_tables() {
        let mut cfg = router::Config::default();
        let b0 = table_budget(&cfg);
        assert_eq!(b0.parts.len(), 4);
        assert_eq!(b0.parts[0], ("cs", 65_536 * 8800));
        cfg.cs.capacity *= 2;
        cfg.pit.capacity *= 2;
        let b1 = table_budget(&cfg);
        assert!(b1.total() > b0.total());
        assert_eq!(b1.parts[2].1, cfg.faces.reassembly_budget_bytes as u64);
    }

    #[test]
    fn rss_growth_is_the_slope_of_the_last_samples() {
        let t = RssTrace {
            samples: (0..=10)
                .map(|i| (f64::from(i), 1024 * (100 + 2 * i as u64)))
                .collect(),
        };
        assert!((t.growth_at_end_mib_s() - 2.0).abs() < 1e-9);
        assert_eq!(t.peak(), 1024 * 120);
        assert_eq!(RssTrace::default().growth_at_end_mib_s(), 0.0);
    }
}
