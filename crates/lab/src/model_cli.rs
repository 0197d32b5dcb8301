//! `cascade model`: the analytic models of the `model` crate from the command line.
//!
//! `cascade model che` prints the L1 hit ratio the models predict for the hierarchical content
//! store of Mansilha et al., "Exploiting parallelism in hierarchical content stores for
//! high-speed ICN routers" (Computer Networks, 2017), as a table or one JSON object.
//! `cascade model bypass` solves the N-queue bypass model of Pan et al., "NB-Cache:
//! Non-Blocking In-Network Caching for High-Performance Content Routers" ([`bypass`]).

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use model::{HcsParams, L1Prediction, WindowPrediction};

pub mod bypass;
#[cfg(feature = "plot")]
mod bypass_plot;

/// The models of `cascade model`.
#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// L1 hit ratio of the hierarchical content store for the Unif, Seq and Real workloads
    /// (Mansilha et al. 2017, eq. 2–6; Che's approximation for the Real workload's first
    /// chunks), and the stream model of Real with a FIFO L1 (steady state and over the paper's
    /// measurement window).
    Che(CheArgs),
    /// The N-queue bypass model of Pan et al. (NB-Cache): n queues with bypass threshold T,
    /// steady state of its Markov chain (mean length, utilization, loss per queue), the M/M/1
    /// queue with a drop threshold of the same buffer, and with --simulate a discrete-event
    /// simulation of the same queues; --fig9 / --plot FILE.png sweep the paper's Fig. 9.
    Bypass(bypass::BypassArgs),
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum PolicyArg {
    /// FIFO (also Random replacement), the paper's default.
    Fifo,
    /// Least recently used.
    Lru,
}

/// Options of `cascade model che`.
#[derive(clap::Args, Debug)]
pub struct CheArgs {
    /// L1 size in chunks.
    #[arg(long)]
    l1: u64,
    /// Catalogue size in contents.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    catalogue: u64,
    /// Chunks per content.
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u64).range(1..))]
    chunks_per_content: u64,
    /// Prefetch batch size B in chunks.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    batch: u64,
    /// Zipf exponent of content popularity (>= 0).
    #[arg(long, default_value_t = 1.0, value_parser = parse_alpha)]
    alpha: f64,
    /// L1 replacement policy.
    #[arg(long, value_enum, default_value_t = PolicyArg::Fifo)]
    policy: PolicyArg,
    /// Real: stream arrivals per second (Poisson).
    #[arg(long, default_value_t = 1.0, value_parser = parse_rate)]
    lambda: f64,
    /// Real: chunks per second of one stream.
    #[arg(long, default_value_t = 8.0, value_parser = parse_rate)]
    chunk_rate: f64,
    /// Real: the next batch is read at the current batch's penultimate chunk.
    #[arg(long)]
    prefetch_ahead: bool,
    /// Real: warm-up requests before the measured window (default: 10 x |L1|, the paper's).
    #[arg(long)]
    warmup: Option<u64>,
    /// Real: measured requests (default: the catalogue's chunks, the paper's |W| - 10 |L1|).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    window: Option<u64>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    let a: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if a.is_finite() && a >= 0.0 {
        Ok(a)
    } else {
        Err("must be a finite number >= 0".into())
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let a: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if a.is_finite() && a > 0.0 {
        Ok(a)
    } else {
        Err("must be a finite number > 0".into())
    }
}

impl ModelCommand {
    /// Runs the model and prints its prediction; bad parameters are reported as one line on
    /// stderr (exit status 2).
    pub fn run(&self) -> ExitCode {
        match self {
            ModelCommand::Che(args) => run_model_che(args),
            ModelCommand::Bypass(args) => bypass::run(args),
        }
    }
}

impl PolicyArg {
    /// The CLI name.
    fn name(self) -> &'static str {
        match self {
            PolicyArg::Fifo => "fifo",
            PolicyArg::Lru => "lru",
        }
    }
}

impl CheArgs {
    /// The model's parameters.
    fn params(&self) -> HcsParams {
        HcsParams {
            l1_chunks: self.l1,
            catalogue: self.catalogue,
            chunks_per_content: self.chunks_per_content,
            batch: self.batch,
            alpha: self.alpha,
            policy: match self.policy {
                PolicyArg::Fifo => model::Policy::Fifo,
                PolicyArg::Lru => model::Policy::Lru,
            },
        }
    }

    /// Warm-up requests before the measured window of Real.
    fn warmup(&self) -> u64 {
        self.warmup.unwrap_or(self.l1.saturating_mul(10))
    }

    /// Measured requests of Real.
    fn window(&self) -> u64 {
        self.window
            .unwrap_or(self.catalogue.saturating_mul(self.chunks_per_content))
    }
}

fn run_model_che(args: &CheArgs) -> ExitCode {
    let params = args.params();
    let pred = match model::predict_l1(&params) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cascade model che: {e}");
            return ExitCode::from(2);
        }
    };
    let streams = model::Streams {
        lambda_per_s: args.lambda,
        chunk_rate_per_s: args.chunk_rate,
        prefetch_ahead: args.prefetch_ahead,
    };
    // The stream model is derived for FIFO only.
    let stream = match args.policy {
        PolicyArg::Fifo => {
            match model::predict_real_window(&params, &streams, args.warmup(), args.window()) {
                Ok(w) => Some(w),
                Err(e) => {
                    eprintln!("cascade model che: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        PolicyArg::Lru => None,
    };
    let text = if args.json {
        che_json(args, &pred, stream.as_ref())
    } else {
        che_table(args, &pred) + &che_stream_lines(args, stream.as_ref())
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

/// The prediction as one JSON object (and a newline).
fn che_json(args: &CheArgs, pred: &L1Prediction, stream: Option<&WindowPrediction>) -> String {
    let finite = |x: f64| if x.is_finite() { Some(x) } else { None };
    let (warmup, window) = (args.warmup(), args.window());
    let v = serde_json::json!({
        "l1_chunks": args.l1,
        "catalogue": args.catalogue,
        "chunks_per_content": args.chunks_per_content,
        "batch": args.batch,
        "alpha": args.alpha,
        "policy": args.policy.name(),
        "cache_contents": pred.cache_contents,
        "t_c": if pred.t_c.is_finite() { Some(pred.t_c) } else { None },
        "p1st": pred.p1st,
        "unif": pred.unif,
        "seq": pred.seq,
        "seq_prefetch_ahead": pred.seq_ahead,
        "real": pred.real,
        "real_streams": stream.map(|w| serde_json::json!({
            "lambda_per_s": args.lambda,
            "chunk_rate_per_s": args.chunk_rate,
            "prefetch_ahead": args.prefetch_ahead,
            "steady": {
                "active_streams": w.steady.active_streams,
                "t_mean_s": finite(w.steady.t_mean_s),
                "hit_ratio": w.steady.hit_ratio,
                "reads_per_request": w.steady.reads_per_request,
            },
            "window": {
                "warmup_requests": warmup,
                "window_requests": window,
                "start_s": w.start_s,
                "end_s": w.end_s,
                "min_active_streams": w.min_active_streams,
                "hit_ratio": w.hit_ratio,
                "reads_per_request": w.reads_per_request,
            },
        })),
    });
    format!("{v}\n")
}

/// The table of the closed-form predictions.
fn che_table(args: &CheArgs, pred: &L1Prediction) -> String {
    format!(
        "L1 {} chunks ({:.3} contents), catalogue {} contents x {} chunks, B {}, alpha {}, {}\n\
         T_C {:.6e}, P1st {:.6}\n\
         workload  l1_hit_ratio\n\
         unif      {:.6}\n\
         seq       {:.6}\n\
         seq+ahead {:.6}  (prefetch-ahead: one miss per content; not in the seed)\n\
         real      {:.6}\n",
        args.l1,
        pred.cache_contents,
        args.catalogue,
        args.chunks_per_content,
        args.batch,
        args.alpha,
        args.policy.name(),
        pred.t_c,
        pred.p1st,
        pred.unif,
        pred.seq,
        pred.seq_ahead,
        pred.real,
    )
}

/// The lines of the stream model of Real (FIFO only).
fn che_stream_lines(args: &CheArgs, stream: Option<&WindowPrediction>) -> String {
    let Some(w) = stream else {
        return "real, stream model: derived for FIFO only\n".to_string();
    };
    let warmup = args.warmup();
    format!(
        "real, stream model (lambda {} /s, {} chunks/s, prefetch-ahead {}):\n\
         steady    {:.6}  ({:.0} streams, mean sojourn {:.4} s, {:.4} batch reads per \
         request)\n\
         window    {:.6}  (requests {}..{}, t = {:.1}..{:.1} s, from {:.0} streams)\n",
        args.lambda,
        args.chunk_rate,
        if args.prefetch_ahead { "on" } else { "off" },
        w.steady.hit_ratio,
        w.steady.active_streams,
        w.steady.t_mean_s,
        w.steady.reads_per_request,
        w.hit_ratio,
        warmup,
        warmup.saturating_add(args.window()),
        w.start_s,
        w.end_s,
        w.min_active_streams,
    )
}
