//! `cascade model bypass`: the N-queue bypass model of Pan et al., "NB-Cache: Non-Blocking
//! In-Network Caching for High-Performance Content Routers" (§IV), its M/M/1-with-drop-threshold
//! baseline and, with `--simulate`, the discrete-event simulation of the same queues
//! ([`crate::bypass_sim`]); `--fig9` (or `--plot FILE.png`) sweeps the load over the cases of
//! the paper's Fig. 9.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use model::bypass::{self, Bypass, BypassError, BypassSolution, Mm1Drop};
use serde_json::{json, Value};

use crate::bypass_sim::{simulate, SimConfig, SimResult};

/// Options of `cascade model bypass`.
#[derive(clap::Args, Debug)]
pub struct BypassArgs {
    /// Queues n (routers along the path).
    #[arg(long, required_unless_present_any = ["fig9", "plot"])]
    queues: Option<usize>,
    /// Bypass threshold T = m - 1: packets a queue holds before arrivals bypass it.
    #[arg(long, required_unless_present_any = ["fig9", "plot"])]
    threshold: Option<usize>,
    /// Arrival rate lambda.
    #[arg(long, value_parser = super::parse_rate, required_unless_present_any = ["fig9", "plot"])]
    lambda: Option<f64>,
    /// Service rate mu of each queue.
    #[arg(long, default_value_t = 1.0, value_parser = super::parse_rate)]
    mu: f64,
    /// Also run the discrete-event simulation of the same queues.
    #[arg(long)]
    simulate: bool,
    /// Simulation: measured arrivals per model (after a warm-up of a tenth as many); default
    /// 2,000,000, and 10,000,000 per point of --fig9.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1000..))]
    arrivals: Option<u64>,
    /// Simulation: seed of the random numbers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Steady state: stop when ||pi Q||_1 / (lambda + n mu) is at most this.
    #[arg(long, default_value_t = bypass::DEFAULT_TOLERANCE, value_parser = super::parse_rate)]
    tolerance: f64,
    /// Sweep the load lambda/mu over the cases of the paper's Fig. 9 instead of one model.
    #[arg(long, conflicts_with_all = ["queues", "threshold", "lambda"])]
    fig9: bool,
    /// Draw Fig. 9 to this PNG file (implies --fig9; simulated points too with --simulate).
    #[arg(long, conflicts_with_all = ["queues", "threshold", "lambda"])]
    plot: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Default simulated arrivals of one model.
pub const DEFAULT_ARRIVALS: u64 = 2_000_000;

/// Default simulated arrivals per point of the Fig. 9 sweep: enough for every figure to be
/// within 1 % of the model at every point (a standard error of loss of about 1e-4 where loss
/// is a few per cent).
pub const FIG9_ARRIVALS: u64 = 10_000_000;

/// Runs `cascade model bypass`; bad parameters are one line on stderr (exit status 2).
pub fn run(args: &BypassArgs) -> ExitCode {
    let out = if args.fig9 || args.plot.is_some() {
        run_fig9(args)
    } else {
        run_one(args)
    };
    match out {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cascade model bypass: {e}");
            ExitCode::from(2)
        }
    }
}

/// One model: solve it, its baseline, and the simulation if asked.
fn run_one(args: &BypassArgs) -> Result<String, String> {
    let (Some(queues), Some(threshold), Some(lambda)) = (args.queues, args.threshold, args.lambda)
    else {
        return Err("--queues, --threshold and --lambda are required".into());
    };
    let p = Bypass {
        queues,
        threshold,
        lambda,
        mu: args.mu,
    };
    let e = |e: BypassError| e.to_string();
    p.states().map_err(e)?;
    let sol = bypass::solve_to(&p, args.tolerance).map_err(e)?;
    // The baseline holds the same buffer in one queue: n·T packets.
    let buffer = queues.saturating_mul(threshold);
    let mm1 = bypass::mm1_drop(lambda, args.mu, buffer).map_err(e)?;
    let arrivals = args.arrivals.unwrap_or(DEFAULT_ARRIVALS);
    let sim = args
        .simulate
        .then(|| simulate(&p, &SimConfig::new(arrivals, args.seed)));
    Ok(if args.json {
        format!("{}\n", one_json(args, &p, &sol, &mm1, sim.as_ref()))
    } else {
        one_table(args, &p, &sol, &mm1, sim.as_ref())
    })
}

fn one_json(
    args: &BypassArgs,
    p: &Bypass,
    sol: &BypassSolution,
    mm1: &Mm1Drop,
    sim: Option<&SimResult>,
) -> Value {
    let per_queue: Vec<Value> = sol
        .per_queue
        .iter()
        .map(|q| json!({"mean_length": q.mean_length, "utilization": q.utilization}))
        .collect();
    let mut v = json!({
        "queues": p.queues,
        "threshold": p.threshold,
        "lambda": p.lambda,
        "mu": p.mu,
        "states": sol.states,
        "loss": sol.loss,
        "mean_length": sol.mean_in_system(),
        "utilization": sol.utilization(),
        "per_queue": per_queue,
        "mm1_drop": {
            "threshold": mm1.threshold,
            "mean_length": mm1.mean_length,
            "utilization": mm1.utilization,
            "loss": mm1.loss,
        },
        "solver": {
            "method": "gauss-seidel",
            "tolerance": args.tolerance,
            "residual": sol.residual,
            "sweeps": sol.sweeps,
        },
    });
    if let Some(s) = sim {
        v["simulation"] = sim_json(s, args.seed);
    }
    v
}

fn sim_json(s: &SimResult, seed: u64) -> Value {
    let per_queue: Vec<Value> = s
        .per_queue
        .iter()
        .map(|q| {
            json!({
                "mean_length": q.mean_length.value,
                "utilization": q.utilization.value,
                "mean_length_stderr": q.mean_length.stderr,
                "utilization_stderr": q.utilization.stderr,
            })
        })
        .collect();
    json!({
        "arrivals": s.arrivals,
        "seed": seed,
        "loss": s.loss.value,
        "loss_stderr": s.loss.stderr,
        "per_queue": per_queue,
    })
}

fn one_table(
    args: &BypassArgs,
    p: &Bypass,
    sol: &BypassSolution,
    mm1: &Mm1Drop,
    sim: Option<&SimResult>,
) -> String {
    let mut t = format!(
        "bypass model: {} queues, threshold {} ({} states), lambda {}, mu {}\n\
         steady state: {} Gauss-Seidel sweeps, residual {:.2e} (tolerance {:.0e})\n",
        p.queues, p.threshold, sol.states, p.lambda, p.mu, sol.sweeps, sol.residual, args.tolerance
    );
    if let Some(s) = sim {
        t += &format!(
            "simulation: {} arrivals, seed {} (+- one standard error)\n",
            s.arrivals, args.seed
        );
    }
    t += "queue  mean_length  utilization";
    t += if sim.is_some() {
        "  sim_mean_length       sim_utilization\n"
    } else {
        "\n"
    };
    for (i, q) in sol.per_queue.iter().enumerate() {
        t += &format!("{i:<5}  {:>11.6}  {:>11.6}", q.mean_length, q.utilization);
        if let Some(s) = sim {
            let (l, u) = (s.per_queue[i].mean_length, s.per_queue[i].utilization);
            t += &format!(
                "  {:>9.6}+-{:<8.6}  {:>9.6}+-{:.6}",
                l.value, l.stderr, u.value, u.stderr
            );
        }
        t += "\n";
    }
    t += &format!(
        "all    {:>11.6}  {:>11.6}  (in system; mean utilization)\nloss   {:.6e}",
        sol.mean_in_system(),
        sol.utilization(),
        sol.loss
    );
    if let Some(s) = sim {
        t += &format!("  simulated {:.6e}+-{:.1e}", s.loss.value, s.loss.stderr);
    }
    t += &format!(
        "\nM/M/1 with drop threshold {} (the same buffer): mean_length {:.6}, utilization \
         {:.6}, loss {:.6e}\n",
        mm1.threshold, mm1.mean_length, mm1.utilization, mm1.loss
    );
    t
}

/// A curve of Fig. 9: `mm1-drop-K` (one queue, drop threshold K; the closed form) or
/// `bypass-n*m` (n queues, threshold m - 1; the Markov chain).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fig9Case {
    /// The paper's label.
    pub name: &'static str,
    /// Queues.
    pub queues: usize,
    /// Threshold.
    pub threshold: usize,
}

/// The cases drawn: the paper names mm1-drop-10 and bypass-5*3 (the same buffer of 10
/// packets) and a bypass model with fewer queues; Cascade completes the four with the single
/// queue of the bypass models' threshold (mm1-drop-2, which is bypass-1*3) and bypass-2*3.
pub const FIG9_CASES: [Fig9Case; 4] = [
    Fig9Case {
        name: "mm1-drop-2",
        queues: 1,
        threshold: 2,
    },
    Fig9Case {
        name: "mm1-drop-10",
        queues: 1,
        threshold: 10,
    },
    Fig9Case {
        name: "bypass-2*3",
        queues: 2,
        threshold: 2,
    },
    Fig9Case {
        name: "bypass-5*3",
        queues: 5,
        threshold: 2,
    },
];

/// The loads `rho = lambda / mu` of the sweep: 0.25 to 5 by 0.25.
pub fn fig9_loads() -> Vec<f64> {
    (1..=20).map(|i| f64::from(i) * 0.25).collect()
}

/// The four figures of Fig. 9 at one point: packets in the system (a), waiting (b), loss (c),
/// mean server utilization (d).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Fig9Figures {
    /// Mean packets in the system.
    pub in_system: f64,
    /// Mean packets waiting (not in service).
    pub waiting: f64,
    /// Fraction of arrivals lost.
    pub loss: f64,
    /// Mean server utilization.
    pub utilization: f64,
}

impl Fig9Figures {
    fn of_model(case: &Fig9Case, lambda: f64, mu: f64) -> Result<Self, BypassError> {
        if case.queues == 1 {
            let m = bypass::mm1_drop(lambda, mu, case.threshold)?;
            return Ok(Fig9Figures {
                in_system: m.mean_length,
                waiting: m.mean_waiting(),
                loss: m.loss,
                utilization: m.utilization,
            });
        }
        let sol = bypass::solve(&case.model(lambda, mu))?;
        Ok(Fig9Figures {
            in_system: sol.mean_in_system(),
            waiting: sol.mean_waiting(),
            loss: sol.loss,
            utilization: sol.utilization(),
        })
    }

    fn of_simulation(s: &SimResult) -> Self {
        let n = s.per_queue.len().max(1) as f64;
        let len: f64 = s.per_queue.iter().map(|q| q.mean_length.value).sum();
        let busy: f64 = s.per_queue.iter().map(|q| q.utilization.value).sum();
        Fig9Figures {
            in_system: len,
            waiting: len - busy,
            loss: s.loss.value,
            utilization: busy / n,
        }
    }

    /// The largest deviation of `other` from these figures, each relative to its model value
    /// with a floor of 0.01 (packets or probability) for figures too small to resolve.
    pub fn deviation(&self, other: &Fig9Figures) -> f64 {
        [
            (self.in_system, other.in_system),
            (self.waiting, other.waiting),
            (self.loss, other.loss),
            (self.utilization, other.utilization),
        ]
        .iter()
        .map(|&(m, s)| (s - m).abs() / m.abs().max(0.01))
        .fold(0.0, f64::max)
    }
}

impl Fig9Case {
    fn model(&self, lambda: f64, mu: f64) -> Bypass {
        Bypass {
            queues: self.queues,
            threshold: self.threshold,
            lambda,
            mu,
        }
    }
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fig9Point {
    /// `lambda / mu`.
    pub rho: f64,
    /// What the model says.
    pub model: Fig9Figures,
    /// What the simulation measured, if it ran.
    pub simulated: Option<Fig9Figures>,
}

/// The sweep of one case (`mu = 1`).
fn sweep(case: &Fig9Case, sim: Option<SimConfig>) -> Result<Vec<Fig9Point>, BypassError> {
    fig9_loads()
        .into_iter()
        .map(|rho| {
            let model = Fig9Figures::of_model(case, rho, 1.0)?;
            let simulated = sim.map(|cfg| {
                // Each point its own stream, so that points do not share random numbers.
                let cfg = SimConfig {
                    seed: cfg.seed ^ (rho * 4.0) as u64 ^ ((case.queues as u64) << 32),
                    ..cfg
                };
                Fig9Figures::of_simulation(&simulate(&case.model(rho, 1.0), &cfg))
            });
            Ok(Fig9Point {
                rho,
                model,
                simulated,
            })
        })
        .collect()
}

fn run_fig9(args: &BypassArgs) -> Result<String, String> {
    let sim = args
        .simulate
        .then(|| SimConfig::new(fig9_arrivals(args), args.seed));
    // The cases side by side, one thread each.
    let sweeps: Vec<Result<Vec<Fig9Point>, BypassError>> = std::thread::scope(|s| {
        let handles: Vec<_> = FIG9_CASES
            .iter()
            .map(|c| s.spawn(move || sweep(c, sim)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut all = Vec::with_capacity(sweeps.len());
    for s in sweeps {
        all.push(s.map_err(|e| e.to_string())?);
    }
    if let Some(path) = &args.plot {
        plot(path, &all)?;
    }
    Ok(if args.json {
        format!("{}\n", fig9_json(args, &all))
    } else {
        fig9_table(args, &all)
    })
}

/// Draws Fig. 9 to `path`.
#[cfg(feature = "plot")]
fn plot(path: &std::path::Path, all: &[Vec<Fig9Point>]) -> Result<(), String> {
    super::bypass_plot::plot(path, &FIG9_CASES, all)
}

/// Without the `plot` feature there is nothing to draw with.
#[cfg(not(feature = "plot"))]
fn plot(_path: &std::path::Path, _all: &[Vec<Fig9Point>]) -> Result<(), String> {
    Err("--plot: this build has no plotting (built without the `plot` feature)".into())
}

fn fig9_arrivals(args: &BypassArgs) -> u64 {
    args.arrivals.unwrap_or(FIG9_ARRIVALS)
}

/// The largest deviation of the simulation from the model over the sweep (0 without one).
fn max_deviation(all: &[Vec<Fig9Point>]) -> f64 {
    all.iter()
        .flatten()
        .filter_map(|p| p.simulated.map(|s| p.model.deviation(&s)))
        .fold(0.0, f64::max)
}

fn figures_json(f: &Fig9Figures) -> Value {
    json!({
        "in_system": f.in_system,
        "waiting": f.waiting,
        "loss": f.loss,
        "utilization": f.utilization,
    })
}

fn fig9_json(args: &BypassArgs, all: &[Vec<Fig9Point>]) -> Value {
    let cases: Vec<Value> = FIG9_CASES
        .iter()
        .zip(all)
        .map(|(c, points)| {
            let points: Vec<Value> = points
                .iter()
                .map(|p| {
                    let mut v = figures_json(&p.model);
                    v["rho"] = json!(p.rho);
                    if let Some(s) = &p.simulated {
                        let mut sv = figures_json(s);
                        sv["deviation"] = json!(p.model.deviation(s));
                        v["simulation"] = sv;
                    }
                    v
                })
                .collect();
            json!({"name": c.name, "queues": c.queues, "threshold": c.threshold,
                   "points": points})
        })
        .collect();
    let mut v = json!({"figure": "fig9", "mu": 1.0, "cases": cases});
    if args.simulate {
        v["arrivals"] = json!(fig9_arrivals(args));
        v["seed"] = json!(args.seed);
        v["max_deviation"] = json!(max_deviation(all));
    }
    v
}

fn fig9_table(args: &BypassArgs, all: &[Vec<Fig9Point>]) -> String {
    let mut t = String::from(
        "Fig. 9 of Pan et al. (NB-Cache): mu = 1, rho = lambda/mu\n\
         case         rho    in_system   waiting     loss          utilization",
    );
    t += if args.simulate {
        "   sim_in_system  sim_loss      deviation\n"
    } else {
        "\n"
    };
    for (c, points) in FIG9_CASES.iter().zip(all) {
        for p in points {
            let m = &p.model;
            t += &format!(
                "{:<12} {:>4.2}  {:>10.6}  {:>10.6}  {:<12.6e}  {:>10.6}",
                c.name, p.rho, m.in_system, m.waiting, m.loss, m.utilization
            );
            if let Some(s) = &p.simulated {
                t += &format!(
                    "   {:>12.6}  {:<12.6e}  {:.4}",
                    s.in_system,
                    s.loss,
                    m.deviation(s)
                );
            }
            t += "\n";
        }
    }
    if args.simulate {
        t += &format!(
            "simulation: {} arrivals per point, seed {}; largest deviation {:.4} (each figure \
             relative to the model's, with a floor of 0.01)\n",
            fig9_arrivals(args),
            args.seed,
            max_deviation(all)
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: BypassArgs,
    }

    fn args(line: &str) -> BypassArgs {
        let words = std::iter::once("bypass").chain(line.split_whitespace());
        Cli::try_parse_from(words).expect("parses").args
    }

    #[test]
    fn the_json_has_the_interface_shape() {
        let out = run_one(&args("--queues 3 --threshold 2 --lambda 2.5 --mu 1 --json")).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["queues"], 3);
        assert_eq!(v["threshold"], 2);
        assert_eq!(v["states"], 27);
        assert_eq!(v["per_queue"].as_array().unwrap().len(), 3);
        for q in v["per_queue"].as_array().unwrap() {
            assert!(q["mean_length"].as_f64().unwrap() > 0.0);
            assert!((0.0..=1.0).contains(&q["utilization"].as_f64().unwrap()));
        }
        let loss = v["loss"].as_f64().unwrap();
        assert!(loss > 0.0 && loss < v["mm1_drop"]["loss"].as_f64().unwrap());
        assert_eq!(v["mm1_drop"]["threshold"], 6, "the same buffer");
        assert!(v["mm1_drop"]["mean_length"].as_f64().unwrap() > 0.0);
        assert!(v.get("simulation").is_none(), "only with --simulate");
        assert!(v["solver"]["residual"].as_f64().unwrap() <= bypass::DEFAULT_TOLERANCE);
    }

    #[test]
    fn simulate_adds_the_simulation_beside_the_model() {
        let line = "--queues 2 --threshold 3 --lambda 1.5 --simulate --arrivals 200000 --json";
        let v: Value = serde_json::from_str(&run_one(&args(line)).unwrap()).unwrap();
        let sim = &v["simulation"];
        assert_eq!(sim["arrivals"], 200_000);
        let (m, s) = (v["loss"].as_f64().unwrap(), sim["loss"].as_f64().unwrap());
        assert!((m - s).abs() <= 5.0 * sim["loss_stderr"].as_f64().unwrap() + 1e-4);
        assert_eq!(sim["per_queue"].as_array().unwrap().len(), 2);
        // The table says the same.
        let table = run_one(&args(
            "--queues 2 --threshold 3 --lambda 1.5 --simulate \
                                   --arrivals 20000",
        ))
        .unwrap();
        assert!(table.contains("(16 states)"), "{table}");
        assert!(table.contains("simulated"), "{table}");
    }

    #[test]
    fn bad_models_are_one_line_errors() {
        let e = run_one(&args("--queues 0 --threshold 2 --lambda 1")).unwrap_err();
        assert!(e.contains("at least one queue"), "{e}");
        let e = run_one(&args("--queues 30 --threshold 3 --lambda 1")).unwrap_err();
        assert!(e.contains("states"), "{e}");
        assert!(Cli::try_parse_from(["bypass", "--queues", "2", "--lambda", "-1"]).is_err());
        assert!(Cli::try_parse_from(["bypass", "--fig9", "--queues", "2"]).is_err());
    }

    #[test]
    fn the_fig9_curves_start_from_the_same_models() {
        // mm1-drop-2 is the bypass model with one queue of threshold 2.
        for rho in fig9_loads() {
            let a = Fig9Figures::of_model(&FIG9_CASES[0], rho, 1.0).unwrap();
            let b = Fig9Figures::of_model(
                &Fig9Case {
                    name: "bypass-1*3",
                    queues: 1,
                    threshold: 2,
                },
                rho,
                1.0,
            )
            .unwrap();
            assert!(a.deviation(&b) < 1e-9, "{rho}: {a:?} vs {b:?}");
        }
        let m = Fig9Figures {
            in_system: 2.0,
            waiting: 1.0,
            loss: 0.001,
            utilization: 0.5,
        };
        let s = Fig9Figures {
            in_system: 2.02,
            loss: 0.0012,
            ..m
        };
        // 1 % on the system, 0.0002 of loss against the floor of 0.01.
        assert!((m.deviation(&s) - 0.02).abs() < 1e-9);
    }

    #[cfg(feature = "plot")]
    #[test]
    fn plot_draws_the_sweep_to_a_png_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fig9.png");
        let out = run_fig9(&args(&format!("--plot {}", path.display()))).unwrap();
        assert!(out.lines().count() > 4 * fig9_loads().len(), "{out}");
        assert_eq!(&std::fs::read(&path).unwrap()[1..4], b"PNG");
    }
}
