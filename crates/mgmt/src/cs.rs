//! The content-store manager: its settings and the `cs/config`, `cs/erase` commands.
//!
//! The stores are the workers': settings and erasures reach them through the [`Forwarder`].
//! What they hold is reported by the `cs/info` and `cs/tiers` datasets ([`crate::dataset`]).
//!
//! As NFD's CsManager: `cs/config` sets the capacity and answers Capacity and Flags (no Mask);
//! `cs/erase` erases at most [`ERASE_LIMIT`] entries per command and answers Capacity =
//! [`ERASE_LIMIT`] when it stopped there with more asked (a client then asks again). Unlike NFD:
//! admission and serving are always on (the engine has no switch for them): `cs/config`
//! answers both flags set and does not apply a request to clear one; the capacity cannot grow
//! beyond the one the router started with (its tables are sized then), and the answer says the
//! capacity in force.

use engine::table::pit_cs::CsPolicy;
use wire::nfd::{ControlParameters, ControlResponse, CS_FLAG_ENABLE_ADMIT, CS_FLAG_ENABLE_SERVE};

use crate::forwarder::Forwarder;

/// The content store's flags, as `cs/config` and `cs/info` report them.
pub const CS_FLAGS: u64 = CS_FLAG_ENABLE_ADMIT | CS_FLAG_ENABLE_SERVE;

/// Most entries one `cs/erase` erases (NFD's `CsManager::ERASE_LIMIT`).
pub const ERASE_LIMIT: u64 = 256;

/// The content store's settings, over all workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsSettings {
    /// Total capacity in entries.
    pub capacity: usize,
    /// Largest capacity the forwarder can take (the one it started with).
    pub max_capacity: usize,
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
            self.capacity =
                usize::try_from(cap).map_or(self.max_capacity, |c| c.min(self.max_capacity));
            forwarder.cs_config(self.capacity, self.policy);
        }
        crate::ok(ControlParameters {
            capacity: Some(self.capacity as u64),
            flags: Some(CS_FLAGS),
            ..ControlParameters::default()
        })
    }
}

/// `cs/erase`: at most Count entries (all when absent), and never more than [`ERASE_LIMIT`],
/// under Name; Capacity = [`ERASE_LIMIT`] in the answer when that many went and more were asked
/// (there may be more: NFD looks whether one is left, Cascade leaves that to the next command).
fn erase(forwarder: &impl Forwarder, p: &ControlParameters) -> ControlResponse {
    let Some(name) = p.name.clone() else {
        return crate::malformed();
    };
    let count = p.count.unwrap_or(u64::MAX);
    let limit = count.min(ERASE_LIMIT);
    let erased = forwarder.cs_erase(&name, limit as usize) as u64;
    crate::ok(ControlParameters {
        name: Some(name),
        count: Some(erased),
        capacity: (erased == ERASE_LIMIT && count > ERASE_LIMIT).then_some(ERASE_LIMIT),
        ..ControlParameters::default()
    })
}
