//! The models each point is compared with.

use model::{predict_l1, predict_real_window, HcsParams, Policy, Streams};

use super::args::{HcsBenchArgs, ReplacementArg};
use super::CHUNKS_PER_CONTENT;
use crate::hcs_workload::{RealParams, WorkloadKind};

/// What the points are compared with.
pub(super) fn model_name(args: &HcsBenchArgs) -> &'static str {
    match (args.workload, args.replacement) {
        (WorkloadKind::Seq, _) if args.ahead() => {
            "Seq with prefetch-ahead, 1 - 1/chunks per content"
        }
        (WorkloadKind::Seq, _) => "Mansilha et al. (2017) eq. 3",
        (WorkloadKind::Unif, _) => "Mansilha et al. (2017) eq. 2",
        (WorkloadKind::Real, ReplacementArg::Fifo) => "stream model over the measured window",
        (WorkloadKind::Real, ReplacementArg::Lru) if args.ahead() => {
            "Mansilha et al. (2017) eq. 4 with Che-LRU, which has no prefetch-ahead term"
        }
        (WorkloadKind::Real, ReplacementArg::Lru) => "Mansilha et al. (2017) eq. 4 with Che-LRU",
    }
}

/// The models for one point: (compared with, eq. 2–4 of Mansilha et al. (2017), stream
/// model's steady state).
pub(super) fn models(
    args: &HcsBenchArgs,
    params: &RealParams,
    l1: u64,
    warm: u64,
    window: u64,
) -> Result<(f64, f64, Option<f64>), String> {
    let hp = HcsParams {
        l1_chunks: l1,
        catalogue: u64::from(params.catalogue_contents),
        chunks_per_content: u64::from(CHUNKS_PER_CONTENT),
        batch: u64::from(args.batch),
        alpha: params.alpha,
        policy: match args.replacement {
            ReplacementArg::Fifo => Policy::Fifo,
            ReplacementArg::Lru => Policy::Lru,
        },
    };
    let seed = predict_l1(&hp).map_err(|e| e.to_string())?;
    Ok(match args.workload {
        WorkloadKind::Seq if args.ahead() => (seed.seq_ahead, seed.seq, None),
        WorkloadKind::Seq => (seed.seq, seed.seq, None),
        WorkloadKind::Unif => (seed.unif, seed.unif, None),
        WorkloadKind::Real if args.replacement == ReplacementArg::Lru => {
            (seed.real, seed.real, None)
        }
        WorkloadKind::Real => {
            let s = Streams {
                lambda_per_s: params.lambda_per_s,
                chunk_rate_per_s: params.chunk_rate_per_s,
                prefetch_ahead: args.ahead(),
            };
            let w = predict_real_window(&hp, &s, warm, window).map_err(|e| e.to_string())?;
            (w.hit_ratio, seed.real, Some(w.steady.hit_ratio))
        }
    })
}
