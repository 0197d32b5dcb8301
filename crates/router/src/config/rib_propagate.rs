//! `[rib.auto_prefix_propagate]`: prefix propagation to a hub, NFD's `auto_prefix_propagate`.
//!
//! ```toml
//! [rib.auto_prefix_propagate]
//! cost = 15                 # the Cost of the routes registered at the hub
//! timeout_ms = 10000        # how long each command's answer is awaited
//! refresh_interval_s = 25   # how often a propagated prefix is registered again
//! ```
//!
//! The section turns it on. The identities are the key chain's
//! ([`mgmt::keychain::locations`]: `NDN_CLIENT_PIB`/`NDN_CLIENT_TPM`, `client.conf`, `~/.ndn`),
//! read once at start-up; what is propagated is [`mgmt::rib::readvertise`]'s part.

use std::sync::Arc;

use serde::Deserialize;

use mgmt::keychain::{KeyChain, SigningInfo};
use mgmt::rib::readvertise::{
    HostToGateway, Readvertise, PROPAGATE_COST, PROPAGATE_REFRESH_MS, PROPAGATE_TIMEOUT_MS,
    RETRY_DELAY_MIN_MS,
};

/// `[rib.auto_prefix_propagate]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Propagate {
    /// The Cost of the routes registered at the hub (NFD: 15).
    pub cost: Option<u64>,
    /// How long a command's answer is awaited, in milliseconds (NFD: 10,000).
    pub timeout_ms: Option<u64>,
    /// How often a propagated prefix is registered again, in seconds (NFD: 25).
    pub refresh_interval_s: Option<u64>,
}

impl Propagate {
    /// Checks the ranges: one line naming the key on error.
    pub fn validate(&self) -> Result<(), String> {
        let key = "rib.auto_prefix_propagate";
        if let Some(t) = self.timeout_ms.filter(|t| !(100..=600_000).contains(t)) {
            return Err(format!("{key}.timeout_ms: {t} is outside 100..=600000"));
        }
        if let Some(r) = self
            .refresh_interval_s
            .filter(|r| !(1..=86_400).contains(r))
        {
            return Err(format!(
                "{key}.refresh_interval_s: {r} is outside 1..=86400"
            ));
        }
        if let Some(c) = self.cost.filter(|c| *c > 65_535) {
            return Err(format!("{key}.cost: {c} is outside 0..=65535"));
        }
        Ok(())
    }

    /// The propagation state: the key chain's identities with their default keys (an identity
    /// without a usable key is left out); the error (no key chain) is one line.
    pub fn load(&self, retry_ms: Option<u64>) -> Result<(Readvertise, Vec<String>), String> {
        let key = "rib.auto_prefix_propagate";
        let kc = KeyChain::open_default().map_err(|e| format!("{key}: {e}"))?;
        let mut identities = Vec::new();
        let mut skipped = Vec::new();
        for id in kc.identities().map_err(|e| format!("{key}: {e}"))? {
            match kc.signer(&SigningInfo::Identity(id.clone())) {
                Ok(Some(s)) => identities.push((HostToGateway::identity_prefix(&id), Arc::new(s))),
                Ok(None) => {}
                Err(e) => skipped.push(e),
            }
        }
        let policy = HostToGateway {
            identities,
            cost: self.cost.unwrap_or(PROPAGATE_COST),
        };
        let rv = Readvertise::host_to_gateway(
            policy,
            self.timeout_ms.unwrap_or(PROPAGATE_TIMEOUT_MS),
            self.refresh_interval_s
                .map_or(PROPAGATE_REFRESH_MS, |s| s * 1000),
            retry_ms.unwrap_or(RETRY_DELAY_MIN_MS),
        );
        Ok((rv, skipped))
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn the_section_and_its_ranges() {
        let c = Config::from_toml("[rib.auto_prefix_propagate]\n").unwrap();
        assert_eq!(c.rib.auto_prefix_propagate, Some(Default::default()));
        assert_eq!(Config::default().rib.auto_prefix_propagate, None);
        for (toml, key) in [
            ("timeout_ms = 10", "timeout_ms"),
            ("refresh_interval_s = 0", "refresh_interval_s"),
            ("cost = 70000", "cost"),
        ] {
            let e =
                Config::from_toml(&format!("[rib.auto_prefix_propagate]\n{toml}\n")).unwrap_err();
            assert!(
                e.starts_with(&format!("rib.auto_prefix_propagate.{key}")),
                "{e}"
            );
        }
        let e = Config::from_toml("[rib.auto_prefix_propagate]\nbase_retry_wait = 5\n");
        assert!(e.unwrap_err().contains("base_retry_wait"));
    }
}
