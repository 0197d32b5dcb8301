//! The content-store manager: its settings and the `cs/config`, `cs/erase` commands.
//!
//! The stores are the workers': settings and erasures reach them through the [`Forwarder`].
//! What they hold is reported by the `cs/info` and `cs/tiers` datasets ([`crate::dataset`]).
//!
//! As NFD's CsManager: `cs/config` sets the capacity and answers Capacity and Flags (no Mask);
//! `cs/erase` erases at most [`ERASE_LIMIT`] entries per command and answers Capacity =
//! [`ERASE_LIMIT`] when it stopped there with more asked (a client then asks again). The
//! CS_ENABLE_ADMIT and CS_ENABLE_SERVE flags are set or cleared as NFD does: a bit of Flags
//! applies when Mask has it; every worker gets them ([`Forwarder::cs_flags`]); the answer and
//! `cs/info` report the flags in force. Unlike NFD: the capacity cannot grow beyond the one the
//! router started with (its tables are sized then), and the answer says the capacity in force.

use engine::table::pit_cs::CsPolicy;
use wire::nfd::{ControlParameters, ControlResponse, CS_FLAG_ENABLE_ADMIT, CS_FLAG_ENABLE_SERVE};

use crate::forwarder::Forwarder;

/// The content store's flags at start-up: admission and serving on.
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
    /// Data are admitted (CS_ENABLE_ADMIT).
    pub admit: bool,
    /// Interests are served from the CS (CS_ENABLE_SERVE).
    pub serve: bool,
}

impl CsSettings {
    /// The `CS_FLAG_*` bits in force.
    pub fn flags(&self) -> u64 {
        (if self.admit { CS_FLAG_ENABLE_ADMIT } else { 0 })
            | (if self.serve { CS_FLAG_ENABLE_SERVE } else { 0 })
    }

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
        // A bit of Flags applies where Mask has it (NFD's `hasFlagBit`).
        let (flags, mask) = (p.flags.unwrap_or(0), p.mask.unwrap_or(0));
        let bit = |b: u64, cur: bool| if mask & b != 0 { flags & b != 0 } else { cur };
        let (admit, serve) = (
            bit(CS_FLAG_ENABLE_ADMIT, self.admit),
            bit(CS_FLAG_ENABLE_SERVE, self.serve),
        );
        if (admit, serve) != (self.admit, self.serve) {
            (self.admit, self.serve) = (admit, serve);
            forwarder.cs_flags(admit, serve);
        }
        crate::ok(ControlParameters {
            capacity: Some(self.capacity as u64),
            flags: Some(self.flags()),
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
