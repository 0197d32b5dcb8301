//! The content-store manager: its settings and the `cs/config`, `cs/erase` commands.
//!
//! The stores are the workers': settings and erasures reach them through the [`Forwarder`].
//! What they hold is reported by the `cs/info` and `cs/tiers` datasets ([`crate::dataset`]).
//! Admission and serving are always on: `cs/config` answers both flags set and ignores a request
//! to clear them.

use engine::table::pit_cs::CsPolicy;
use wire::nfd::{ControlParameters, ControlResponse, CS_FLAG_ENABLE_ADMIT, CS_FLAG_ENABLE_SERVE};

use crate::forwarder::Forwarder;

/// The content store's flags, as `cs/config` and `cs/info` report them.
pub const CS_FLAGS: u64 = CS_FLAG_ENABLE_ADMIT | CS_FLAG_ENABLE_SERVE;

/// The content store's settings, over all workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsSettings {
    /// Total capacity in entries.
    pub capacity: usize,
    /// Replacement policy.
    pub policy: CsPolicy,
}

impl CsSettings {
    /// `cs/config`, `cs/erase`.
    pub(crate) fn command(
        &mut self,
        forwarder: &impl Forwarder,
        verb: &str,
        p: &ControlParameters,
    ) -> ControlResponse {
        match verb {
            "config" => self.config(forwarder, p),
            "erase" => erase(forwarder, p),
            _ => crate::unsupported(),
        }
    }

    fn config(&mut self, forwarder: &impl Forwarder, p: &ControlParameters) -> ControlResponse {
        if let Some(cap) = p.capacity {
            self.capacity = usize::try_from(cap).unwrap_or(usize::MAX);
            forwarder.cs_config(self.capacity, self.policy);
        }
        crate::ok(ControlParameters {
            capacity: Some(self.capacity as u64),
            flags: Some(CS_FLAGS),
            ..ControlParameters::default()
        })
    }
}

/// `cs/erase`: at most Count entries (all when absent) under Name; the answer's Capacity
/// repeats the Count when the limit was reached (NFD: there may be more).
fn erase(forwarder: &impl Forwarder, p: &ControlParameters) -> ControlResponse {
    let Some(name) = p.name.clone() else {
        return crate::malformed();
    };
    let limit = p.count.map_or(usize::MAX, |c| c as usize);
    let erased = forwarder.cs_erase(&name, limit);
    crate::ok(ControlParameters {
        name: Some(name),
        count: Some(erased as u64),
        capacity: p.count.filter(|_| erased >= limit),
        ..ControlParameters::default()
    })
}
