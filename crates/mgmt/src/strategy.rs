//! The strategy choices and the `strategy-choice/set`, `strategy-choice/unset` commands.
//!
//! Management keeps which strategy each prefix chose (listed by `strategy-choice/list`,
//! [`crate::dataset`]); the workers, told through the [`Forwarder`], apply them. `/` always
//! has one: best-route unless set otherwise, and it cannot be unset.

use std::collections::BTreeMap;

use engine::fw::strategy::StrategyKind;
use wire::nfd::{ControlParameters, ControlResponse};
use wire::{Component, Name};

use crate::forwarder::Forwarder;

/// The strategy of each prefix that chose one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyChoices(BTreeMap<Name, StrategyKind>);

impl Default for StrategyChoices {
    /// `/` is best-route.
    fn default() -> Self {
        StrategyChoices(BTreeMap::from([(Name::new(), StrategyKind::BestRoute)]))
    }
}

impl StrategyChoices {
    /// Every choice, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, StrategyKind)> {
        self.0.iter().map(|(n, k)| (n, *k))
    }

    /// Sets the strategy of `name`, here and in the forwarder.
    pub fn set(&mut self, forwarder: &impl Forwarder, name: Name, kind: StrategyKind) {
        self.0.insert(name.clone(), kind);
        forwarder.set_strategy(&name, Some(kind));
    }

    /// Unsets the strategy of `name`, here and in the forwarder; `/` goes back to best-route.
    pub fn unset(&mut self, forwarder: &impl Forwarder, name: &Name) {
        if name.is_empty() {
            self.set(forwarder, Name::new(), StrategyKind::BestRoute);
            return;
        }
        self.0.remove(name);
        forwarder.set_strategy(name, None);
    }

    /// `strategy-choice/set`, `strategy-choice/unset`.
    pub(crate) fn command(
        &mut self,
        forwarder: &impl Forwarder,
        verb: &str,
        p: &ControlParameters,
    ) -> ControlResponse {
        match verb {
            "set" => self.set_command(forwarder, p),
            "unset" => self.unset_command(forwarder, p),
            _ => crate::unsupported(),
        }
    }

    fn set_command(
        &mut self,
        forwarder: &impl Forwarder,
        p: &ControlParameters,
    ) -> ControlResponse {
        let (Some(name), Some(strategy)) = (p.name.clone(), p.strategy.clone()) else {
            return crate::malformed();
        };
        let depth = engine::hash::MAX_PREFIX_STATES;
        if name.len() > depth {
            let text = format!("Prefix has too many components (limit is {depth})");
            return ControlResponse::new(414, text);
        }
        let Some(kind) = StrategyKind::from_nfd_name(&strategy) else {
            return ControlResponse::new(404, "Strategy not registered");
        };
        self.set(forwarder, name.clone(), kind);
        crate::ok(ControlParameters {
            name: Some(name),
            strategy: Some(strategy_name(kind)),
            ..ControlParameters::default()
        })
    }

    fn unset_command(
        &mut self,
        forwarder: &impl Forwarder,
        p: &ControlParameters,
    ) -> ControlResponse {
        // The field check refuses a missing Name and the root's (NFD's words: 400 "failed in
        // validating parameters").
        let Some(name) = p.name.clone().filter(|n| !n.is_empty()) else {
            return crate::malformed();
        };
        self.unset(forwarder, &name);
        crate::ok(ControlParameters {
            name: Some(name),
            ..ControlParameters::default()
        })
    }
}

/// A strategy's name as NFD lists it: versioned.
pub fn strategy_name(kind: StrategyKind) -> Name {
    let base = Name::from_uri(kind.nfd_name()).unwrap_or_default();
    let v = match kind {
        StrategyKind::BestRoute => 5,
        StrategyKind::Multicast => 4,
    };
    base.with(Component::version(v))
}
