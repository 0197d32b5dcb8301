//! The run: setup, the |L1| points over the workers, and the order of the phases.

use std::path::{Path, PathBuf};

use store::io::IoBackend;
use store::l2::supports_direct;

use super::args::{window_for, HcsBenchArgs, IoArg, Mapping, Sweep};
use super::device::{extent_bytes, Device, Scratch, SeqRead, DEVICE_PASSES};
use super::hit_cost::l1_hit_cost_ns;
use super::models::models;
use super::point::Point;
use super::report::{print_point_line, Report};
use super::worker::run_worker;
use super::{mix, CHUNKS_PER_CONTENT};
use crate::hcs_workload::{warmup_requests, RealParams};

/// Runs `cascade bench hcs`.
pub fn run_hcs(args: &HcsBenchArgs) -> Result<(), String> {
    if args.plot.is_some() && !cfg!(feature = "plot") {
        return Err(NO_PLOT.into());
    }
    // The worker count resolved once (the per-request mapping reads it).
    let args = &HcsBenchArgs {
        workers: Some(args.workers()),
        ..args.clone()
    };
    let setup = Setup::new(args)?;
    let seq = SeqRead {
        qd: usize::from(args.queue_depth),
        threads: usize::from(args.workers()),
        backend: setup.backend,
        extent: extent_bytes(args.batch),
    };
    // Written once, read `DEVICE_PASSES` times before the L2 runs and as many times after.
    let scratch = if args.emulated {
        None
    } else {
        Some(Scratch::write(&setup.dir, setup.scratch_bytes)?)
    };
    let mut device = Device::default();
    device_passes(&seq, scratch.as_ref(), &mut device)?;
    let params = RealParams {
        catalogue_contents: setup.catalogue,
        chunks_per_content: CHUNKS_PER_CONTENT,
        ..RealParams::default()
    };
    let (points, backend_name) = run_points(args, &params, &setup)?;
    // Measured again after the L2 runs: the reference is the best mode's median over all
    // passes, before and after.
    device_passes(&seq, scratch.as_ref(), &mut device)?;
    drop(scratch);
    let device = (!args.emulated).then_some(device);
    let rmse = rmse_against(&points, |p| p.model);
    // For reference: against eq. 4 of Mansilha et al. (which assumes L1 keeps a batch per
    // stream).
    let rmse_seed = rmse_against(&points, |p| p.model_seed);
    let hit_ns = if args.no_hit_cost {
        None
    } else {
        Some(l1_hit_cost_ns(args.seed))
    };
    if let Some(path) = &args.plot {
        plot_sweep(args, &params, path, &points)?;
    }
    let report = Report {
        args,
        catalogue_chunks: setup.catalogue_chunks,
        dir: &setup.dir,
        direct: setup.direct,
        backend_name: &backend_name,
        points: &points,
        rmse,
        rmse_seed,
        device: device.as_ref(),
        hit_ns,
    };
    if args.json {
        report.print_json();
    } else {
        report.print_text();
    }
    Ok(())
}

/// What the run needs before it measures anything: the catalogue, the |L1| points, the L2
/// directory and how the L2 is read.
struct Setup {
    catalogue: u32,
    catalogue_chunks: u64,
    l1_points: Vec<u64>,
    /// The temporary directory when `--l2-path` is not given, removed when the run ends.
    _tmp: Option<TempDir>,
    dir: PathBuf,
    direct: bool,
    backend: IoBackend,
    scratch_bytes: u64,
}

impl Setup {
    /// Checks the options and creates the L2 directory.
    fn new(args: &HcsBenchArgs) -> Result<Self, String> {
        let catalogue = if args.quick {
            args.catalogue.min(100)
        } else {
            args.catalogue
        };
        let catalogue_chunks = u64::from(catalogue) * u64::from(CHUNKS_PER_CONTENT);
        if !(args.tau_gbps.is_finite() && args.tau_gbps > 0.0) {
            return Err(format!(
                "--tau-gbps must be positive, got {}",
                args.tau_gbps
            ));
        }
        let l1_points: Vec<u64> = match (args.sweep, args.l1) {
            (Some(Sweep::L1), _) => [1, 5, 10, 25, 50]
                .iter()
                .map(|pct| catalogue_chunks * pct / 100)
                .collect(),
            (None, Some(l1)) => vec![l1],
            (None, None) => vec![catalogue_chunks / 10],
        };
        if l1_points
            .iter()
            .any(|&l| l < u64::from(args.workers()) || l > 50_000_000)
        {
            return Err(format!(
                "|L1| must be between the number of workers ({}) and 50M chunks",
                args.workers()
            ));
        }
        let (_tmp, dir) = match &args.l2_path {
            Some(p) => {
                std::fs::create_dir_all(p)
                    .map_err(|e| format!("cannot create {}: {e}", p.display()))?;
                (None, p.clone())
            }
            None => {
                let t = TempDir::new()?;
                let p = t.0.clone();
                (Some(t), p)
            }
        };
        let direct = !args.buffered && !args.emulated && supports_direct(&dir);
        if !args.buffered && !args.emulated && !direct {
            eprintln!(
                "note: {} does not accept O_DIRECT; the L2 file goes through the page cache",
                dir.display()
            );
        }
        let backend = match args.io {
            IoArg::Auto => IoBackend::Auto,
            IoArg::Uring => IoBackend::Uring,
            IoArg::Threads => IoBackend::Threads,
        };
        let scratch_bytes: u64 = match args.scratch_mib {
            Some(mib) => mib << 20,
            None if args.quick => 1 << 30,
            None => 4 << 30,
        };
        Ok(Setup {
            catalogue,
            catalogue_chunks,
            l1_points,
            _tmp,
            dir,
            direct,
            backend,
            scratch_bytes,
        })
    }
}

/// [`DEVICE_PASSES`] passes of each sequential-read mode over the scratch file, if any.
fn device_passes(
    seq: &SeqRead,
    scratch: Option<&Scratch>,
    device: &mut Device,
) -> Result<(), String> {
    if let Some(s) = scratch {
        for _ in 0..DEVICE_PASSES {
            device.add(seq.pass(s)?);
        }
    }
    Ok(())
}

/// Every |L1| point, each printed as it is measured (unless `--json`); returns the points and
/// the I/O engine's name.
fn run_points(
    args: &HcsBenchArgs,
    params: &RealParams,
    setup: &Setup,
) -> Result<(Vec<Point>, String), String> {
    let mut points = Vec::with_capacity(setup.l1_points.len());
    let mut backend_name = String::from("emulated");
    for &l1 in &setup.l1_points {
        let window = window_for(args, l1);
        let (p, b) = run_point(
            args,
            params,
            &setup.dir,
            l1,
            window,
            setup.direct,
            setup.backend,
        )?;
        backend_name = b;
        if !args.json {
            print_point_line(args.workload, &p);
        }
        points.push(p);
    }
    Ok((points, backend_name))
}

/// Root mean square error of the points' L1 hit ratios against `model`.
fn rmse_against(points: &[Point], model: impl Fn(&Point) -> f64) -> f64 {
    (points
        .iter()
        .map(|p| (p.hit_ratio() - model(p)).powi(2))
        .sum::<f64>()
        / points.len() as f64)
        .sqrt()
}

/// What `--plot` says in a build without the `plot` feature.
const NO_PLOT: &str = "--plot: this build has no plotting (built without the `plot` feature)";

/// Draws the sweep, the model as a curve over |L1|, to `path`.
#[cfg(feature = "plot")]
fn plot_sweep(
    args: &HcsBenchArgs,
    params: &RealParams,
    path: &Path,
    points: &[Point],
) -> Result<(), String> {
    let model_at = |l1: f64| -> f64 {
        let l1 = l1 as u64;
        models(args, params, l1, warmup_requests(l1), window_for(args, l1))
            .map(|m| m.0)
            .unwrap_or(0.0)
    };
    super::plot::plot(
        path,
        args.workload,
        points,
        model_at,
        super::models::model_name(args),
    )
}

/// Without the `plot` feature there is nothing to draw with.
#[cfg(not(feature = "plot"))]
fn plot_sweep(
    _args: &HcsBenchArgs,
    _params: &RealParams,
    _path: &Path,
    _points: &[Point],
) -> Result<(), String> {
    Err(NO_PLOT.into())
}

/// A temporary directory removed on drop (in the system temp dir, not tmpfs-only).
pub(super) struct TempDir(pub(super) PathBuf);

impl TempDir {
    /// A new directory under `$TMPDIR` (default `/var/tmp`) named after this process.
    pub(super) fn new() -> Result<Self, String> {
        let base = std::env::var_os("TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/var/tmp"));
        let p = base.join(format!("cascade-hcs-{}", std::process::id()));
        std::fs::create_dir_all(&p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The worker that serves `chunk` of `content`.
pub(super) fn worker_of(
    mapping: Mapping,
    workers: u16,
    batch: u32,
    content: u32,
    chunk: u32,
) -> usize {
    let key = match mapping {
        Mapping::Content => u64::from(content),
        Mapping::Batch => (u64::from(content) << 32) | u64::from(chunk / batch),
    };
    (mix(key) % u64::from(workers)) as usize
}

/// Runs one |L1| point over all workers; returns the summed point and the I/O engine's name.
fn run_point(
    args: &HcsBenchArgs,
    params: &RealParams,
    dir: &Path,
    l1_total: u64,
    window: u64,
    direct: bool,
    backend: IoBackend,
) -> Result<(Point, String), String> {
    let w = usize::from(args.workers());
    // Requests, generated before timing and split by worker.
    let warm = warmup_requests(l1_total);
    let mut per: Vec<(Vec<(u32, u32)>, usize)> = (0..w).map(|_| (Vec::new(), 0)).collect();
    for (i, r) in args
        .workload
        .requests(params, args.seed)
        .take((warm + window) as usize)
        .enumerate()
    {
        let k = worker_of(args.mapping, args.workers(), args.batch, r.content, r.chunk);
        per[k].0.push((r.content, r.chunk));
        if (i as u64) < warm {
            per[k].1 += 1;
        }
    }
    let catalogue = params.catalogue_contents;
    let results: Vec<Result<(Point, String), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = per
            .into_iter()
            .enumerate()
            .map(|(i, (reqs, warm_n))| {
                s.spawn(move || {
                    run_worker(
                        args,
                        i,
                        catalogue,
                        dir,
                        (l1_total / w as u64) as usize,
                        &reqs,
                        warm_n,
                        direct,
                        backend,
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("worker panicked".into())))
            .collect()
    });
    let mut total = Point {
        l1_chunks: l1_total,
        ..Point::default()
    };
    let mut name = String::new();
    for r in results {
        let (p, n) = r?;
        total.add(&p);
        name = n;
    }
    (total.model, total.model_seed, total.model_steady) =
        models(args, params, l1_total, warm, window)?;
    Ok((total, name))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_by_batch_keeps_a_batch_on_one_worker_and_spreads_batches() {
        let mut seen = [0u32; 4];
        for k in 0..1280 {
            let w = worker_of(Mapping::Batch, 4, 10, 3, k);
            assert_eq!(w, worker_of(Mapping::Batch, 4, 10, 3, k / 10 * 10));
            seen[w] += 1;
        }
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
        let w = worker_of(Mapping::Content, 4, 10, 3, 0);
        assert!((0..1280).all(|k| worker_of(Mapping::Content, 4, 10, 3, k) == w));
    }
}
