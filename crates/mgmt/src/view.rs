//! The forwarder's state as the status datasets see it, in one structure: what a status page or
//! a metrics endpoint shows without speaking NFD's management protocol.
//!
//! [`Manager::status_view`] asks the forwarder for its figures once (the workers' and the
//! faces', as the `status/general`, `faces/list`, `cs/info` and `cs/tiers` datasets do) and
//! fills every part of the view from that one answer, so the parts agree with each other and
//! with the datasets: `general` is exactly what `status/general` would report at that moment.

use face::FaceDesc;
use wire::nfd::{CsInfo, FibEntry, ForwarderStatus, StrategyChoice};

use crate::dataset::content::{cs_info_of, forwarder_status, strategy_choices, tiers_of};
use crate::dataset::fib::fib_entries;
use crate::forwarder::{Forwarder, WorkerStats};
use crate::manager::{Manager, Traffic};
use crate::CsTierInfo;

/// The forwarder's state at one moment.
#[derive(Debug, Clone)]
pub struct StatusView {
    /// `status/general`.
    pub general: ForwarderStatus,
    /// `faces/list`: every face with its counters.
    pub faces: Vec<FaceDesc>,
    /// `fib/list`.
    pub fib: Vec<FibEntry>,
    /// `strategy-choice/list`.
    pub strategies: Vec<StrategyChoice>,
    /// `cs/info`.
    pub cs: CsInfo,
    /// `cs/tiers`: the storage tier behind the RAM CS, its workers' figures merged (none
    /// without one).
    pub tiers: Option<CsTierInfo>,
    /// Each worker's figures, in worker order (those that answered).
    pub workers: Vec<WorkerStats>,
    /// Management's own traffic (NFD's internal face), counted in `general`.
    pub management: Traffic,
}

impl<F: Forwarder> Manager<F> {
    /// The forwarder's state now: the workers and the faces are asked once.
    pub fn status_view(&self) -> StatusView {
        let workers = self.forwarder().stats();
        let faces = self.forwarder().faces();
        let s = self.sources();
        StatusView {
            general: forwarder_status(&s, &workers, &faces),
            fib: fib_entries(s.rib, &s.management_prefixes),
            strategies: strategy_choices(s.strategies).collect(),
            cs: cs_info_of(s.cs, &workers),
            tiers: tiers_of(&workers),
            management: s.traffic,
            faces,
            workers,
        }
    }
}
