//! The emulation from start to end: network, placement, throttles, one run per case, report.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

use super::catalogue::Catalogue;
use super::consumer::{self, Trace};
use super::net::{enter_namespace, udp_rcvbuf_errors, Net, NetChoice, UDP_MTU};
use super::node::{RouterConf, RouterProc, StoreConf};
use super::place::{self, Producer};
use super::report::{self, RouterCounters, Row};
use super::scenario::Scenario;
use super::throttle::Throttle;
use super::{Case, Cc, EmulateArgs, RunSpec};

/// What the names of the namespaces, groups and working directory start with (then the
/// emulator's process id).
const TAG: &str = "cascade-emu-";

/// The working directory: removed when dropped, unless kept.
struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl WorkDir {
    fn new(arg: Option<&Path>, keep: bool, tag: &str) -> Result<WorkDir, String> {
        let path = arg.map_or_else(|| std::env::temp_dir().join(tag), Path::to_path_buf);
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let path = path.canonicalize().map_err(|e| e.to_string())?;
        Ok(WorkDir { path, keep })
    }
}

/// Removes the working directories under the temporary directory that an emulator that no
/// longer runs left behind (it was killed outright).
fn remove_stale_workdirs() {
    let tmp = std::env::temp_dir();
    let Ok(list) = std::fs::read_dir(&tmp) else {
        return;
    };
    for e in list.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name.strip_prefix(TAG).and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("cascade emulate: kept {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// What every run shares.
struct Env<'a> {
    bin: PathBuf,
    work: &'a Path,
    s: &'a Scenario,
    net: &'a Net,
    throttles: &'a [Option<Throttle>],
    cat: Catalogue,
    trace: Trace,
    stop: &'a AtomicBool,
}

/// The scenario with the command line's overrides, and the runs asked for; an error here is
/// a usage error.
pub(super) fn prepare(args: &EmulateArgs) -> Result<(Scenario, Vec<RunSpec>), String> {
    let mut s = Scenario::load(&args.scenario)?;
    s.consumer.requests = args.requests.unwrap_or(s.consumer.requests);
    s.consumer.rate_pps = args.rate.unwrap_or(s.consumer.rate_pps);
    s.validate()
        .map_err(|e| format!("scenario {}: {e}", s.name))?;
    let runs = args.runs(&s.router.thresholds, s.router.threshold)?;
    if cfg!(not(feature = "plot")) && args.plot.is_some() {
        return Err("--plot: this build has no plotting (the `plot` feature)".into());
    }
    Ok((s, runs))
}

/// `cascade emulate` with a prepared scenario and runs.
pub(super) fn run(
    args: &EmulateArgs,
    (s, runs): (Scenario, Vec<RunSpec>),
    stop: &AtomicBool,
) -> Result<(), String> {
    let bin = std::env::current_exe().map_err(|e| format!("the cascade binary: {e}"))?;
    super::net::remove_stale(TAG);
    super::throttle::remove_stale(TAG);
    remove_stale_workdirs();
    let tag = format!("{TAG}{}", std::process::id());
    let work = WorkDir::new(args.workdir.as_deref(), args.keep, &tag)?;
    let choice = match (args.loopback, args.namespaces) {
        (true, _) => NetChoice::Loopback,
        (_, true) => NetChoice::Namespaces,
        _ => NetChoice::Auto,
    };
    let net = Net::setup(&s, choice, &tag)?;
    eprintln!("cascade emulate: scenario {}: {}", s.name, net.note);
    let throttles = throttles(&s, &work.path, &tag);
    let bar = progress_bar(args.json);
    place_all(&bin, &work.path, &s, &throttles, stop, &bar)?;
    let cat = Catalogue::new(&s.content);
    let c = &s.consumer;
    let env = Env {
        bin,
        work: &work.path,
        s: &s,
        net: &net,
        throttles: &throttles,
        trace: Trace::draw(cat.chunks(), c.requests, c.seed, c.rate_pps, c.lifetime_ms),
        cat,
        stop,
    };
    bar.set_length(runs.len() as u64 * c.requests);
    bar.set_position(0);
    if !args.json {
        bar.suspend(|| println!("{}", report::header()));
    }
    let mut rows = Vec::with_capacity(runs.len());
    for (k, &(case, cc, th)) in runs.iter().enumerate() {
        bar.set_message(format!("case {case}, cc {cc}, threshold {th}"));
        let base = k as u64 * c.requests;
        let row = one(&env, case, cc, th, &|n| bar.set_position(base + n))?;
        let text = if args.json {
            row.json().to_string()
        } else {
            report::line(&row)
        };
        bar.suspend(|| println!("{text}"));
        rows.push(row);
    }
    bar.finish_and_clear();
    if !args.json {
        for cmp in [report::comparison(&rows), report::cc_comparison(&rows)]
            .into_iter()
            .flatten()
        {
            println!("{cmp}");
        }
    }
    #[cfg(feature = "plot")]
    if let Some(path) = &args.plot {
        super::plot::plot(path, &s.name, &rows, args.sweep.is_some())?;
    }
    Ok(())
}

fn progress_bar(json: bool) -> ProgressBar {
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("{msg:32} [{bar:30}] {pos}/{len} ({elapsed})") {
        bar.set_style(style.progress_chars("=> "));
    }
    if json {
        // The bar is on stderr, the JSON lines on stdout: both can show.
        bar.set_message("emulate");
    }
    bar
}

/// A throttle for every node the scenario slows down (none where cgroups are not available:
/// said on stderr).
fn throttles(s: &Scenario, work: &Path, tag: &str) -> Vec<Option<Throttle>> {
    s.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if n.read_iops == 0 || s.held_chunks(i) == 0 {
                return None;
            }
            match Throttle::create(&format!("{tag}-{}", n.name), work, n.read_iops) {
                Ok(t) => {
                    eprintln!(
                        "cascade emulate: {}'s store reads at most {} times a second (blkio throttle, O_DIRECT)",
                        n.name, n.read_iops
                    );
                    Some(t)
                }
                Err(e) => {
                    eprintln!(
                        "cascade emulate: {}'s store is not slowed down (read_iops ignored): {e}",
                        n.name
                    );
                    None
                }
            }
        })
        .collect()
}

/// Places every node's share of the catalogue.
fn place_all(
    bin: &Path,
    work: &Path,
    s: &Scenario,
    throttles: &[Option<Throttle>],
    stop: &AtomicBool,
    bar: &ProgressBar,
) -> Result<(), String> {
    let total: u64 = (0..s.nodes.len()).map(|i| s.held_chunks(i)).sum();
    bar.set_length(total);
    let mut base = 0;
    for (i, n) in s.nodes.iter().enumerate() {
        let held = s.held_chunks(i);
        if held == 0 {
            continue;
        }
        bar.set_message(format!("placing {} chunks on {}", held, n.name));
        let direct = throttles[i].is_some();
        place::place(bin, work, s, i, direct, stop, &|k| {
            bar.set_position(base + k.min(held))
        })?;
        base += held;
    }
    Ok(())
}

/// Starts the chain's routers for one run, the far end first so that each knows its
/// upstream's address; returns them from the consumer's neighbour on.
fn start_chain(
    env: &Env<'_>,
    case: Case,
    cc: Cc,
    threshold: usize,
) -> Result<Vec<RouterProc>, String> {
    let s = env.s;
    let n = s.nodes.len();
    let mut routers: Vec<RouterProc> = Vec::with_capacity(n);
    for i in (0..n).rev() {
        let node = &s.nodes[i];
        let upstream = match (i + 1 < n, env.net.namespaces()) {
            (false, _) => None,
            (true, true) => Some(format!("udp4://{}", Net::node_addr(i + 1))),
            (true, false) => {
                let up = routers.last().and_then(|r| r.udp);
                Some(format!(
                    "udp4://{}",
                    up.ok_or("a router did not report its UDP address")?
                ))
            }
        };
        let held = s.held_chunks(i);
        let dir = env.work.join(&node.name);
        let sock = dir.join("run.sock");
        let conf = RouterConf {
            sock: &sock,
            udp: if env.net.namespaces() {
                format!("0.0.0.0:{}", super::net::NS_PORT)
            } else {
                "127.0.0.1:0".into()
            },
            udp_mtu: UDP_MTU,
            upstream,
            prefix: &s.content.prefix,
            settings: &s.router,
            store: (held > 0).then(|| StoreConf {
                dir: place::l2_dir(env.work, &node.name),
                capacity: place::l2_capacity(held, s.router.workers),
                direct: env.throttles[i].is_some(),
                placing: false,
            }),
            case,
            threshold,
            cc,
        };
        let file = format!("run-{case}-{cc}-{threshold}");
        let r = RouterProc::start(
            &env.bin,
            env.net.node_ns(i),
            &node.name,
            &conf,
            (&dir, &file),
            env.stop,
        )?;
        if let Some(t) = &env.throttles[i] {
            t.add(r.pid())?;
        }
        routers.push(r);
    }
    routers.reverse();
    Ok(routers)
}

/// One run: starts the routers, drives the trace, reads the counters, stops the routers.
fn one(
    env: &Env<'_>,
    case: Case,
    cc: Cc,
    threshold: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Row, String> {
    let s = env.s;
    let n = s.nodes.len();
    let mut routers = start_chain(env, case, cc, threshold)?;
    let producer = match s.content.producer_in_run {
        true => Some(Producer::start(&routers[n - 1].sock, &env.cat)?),
        false => None,
    };
    // The kernel's UDP drop counters of each namespace (they last as long as the namespace).
    let drops = |i: Option<usize>| -> Option<u64> {
        match i {
            Some(i) => env.net.node_ns(i).and_then(udp_rcvbuf_errors),
            None => env.net.consumer_ns().and_then(udp_rcvbuf_errors),
        }
    };
    let drops_before: Vec<Option<u64>> = (0..n).map(|i| drops(Some(i))).collect();
    let consumer_drops_before = drops(None);
    let (bind, peer): (SocketAddr, SocketAddr) = if env.net.namespaces() {
        (([0, 0, 0, 0], 0).into(), Net::node_addr(0))
    } else {
        let p = routers[0]
            .udp
            .ok_or("the first router did not report its UDP address")?;
        (([127, 0, 0, 1], 0).into(), p)
    };
    let run_trace = consumer::Trace {
        aimd: cc.aimd().then(consumer::consumer_aimd),
        ..env.trace.clone()
    };
    let trace = std::thread::scope(|sc| {
        let t = sc.spawn(|| {
            if let Some(ns) = env.net.consumer_ns() {
                enter_namespace(ns)?;
            }
            let mut sock = consumer::socket(bind).map_err(|e| format!("consumer socket: {e}"))?;
            consumer::run_trace(&mut sock, peer, &env.cat, &run_trace, env.stop, progress)
                .map_err(|e| format!("consumer: {e}"))
        });
        t.join()
            .unwrap_or_else(|_| Err("the consumer panicked".into()))
    })?;
    if env.stop.load(Ordering::Relaxed) {
        return Err("interrupted".into());
    }
    let mut counters = routers
        .iter()
        .map(|r| RouterCounters::read(&r.name, &r.sock))
        .collect::<Result<Vec<_>, _>>()?;
    let since = |before: Option<u64>, after: Option<u64>| Some(after?.saturating_sub(before?));
    for (i, c) in counters.iter_mut().enumerate() {
        c.udp_drops = since(drops_before[i], drops(Some(i)));
    }
    let consumer_udp_drops = since(consumer_drops_before, drops(None));
    drop(producer);
    let mut stopped = Ok(());
    for r in &mut routers {
        let e = r.stop();
        if stopped.is_ok() {
            stopped = e;
        }
    }
    stopped?;
    Ok(Row {
        case,
        cc,
        threshold,
        trace,
        routers: counters,
        namespaces: env.net.namespaces(),
        consumer_udp_drops,
        throttled: s
            .nodes
            .iter()
            .enumerate()
            .all(|(i, n)| n.read_iops == 0 || s.held_chunks(i) == 0 || env.throttles[i].is_some()),
    })
}
