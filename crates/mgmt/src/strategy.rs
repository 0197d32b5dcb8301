//! The strategy choices and the `strategy-choice/set`, `strategy-choice/unset` commands.
//!
//! Management keeps which strategy instance each prefix chose (listed by
//! `strategy-choice/list`, [`crate::dataset`]); the workers, told through the [`Forwarder`],
//! apply them. The choices start as NFD's default configuration sets them: `/` best-route,
//! `/localhost` multicast, `/localhost/nfd` best-route, `/ndn/broadcast` multicast; `/` always
//! has one and cannot be unset.
//!
//! Strategy names are read as NFD's `Strategy::find` reads an instance name
//! ([`parse_instance`]): `<strategy>/<version>/<parameters>`, where an unversioned name means
//! the latest version, a versioned one must be a version the strategy has, and the parameters
//! are `<name>~<value>` components (`retx-suppression-initial`, `-max` in milliseconds,
//! `-multiplier`), checked as NFD's best-route and multicast check them. The workers run each
//! strategy with NFD's default retransmission suppression (10 ms, doubling, up to 250 ms):
//! parameters are checked and listed, not applied.

use std::collections::BTreeMap;

use engine::fw::strategy::StrategyKind;
use wire::nfd::{ControlParameters, ControlResponse};
use wire::{tt, Component, Name};

use crate::forwarder::Forwarder;

/// The strategies Cascade has, as NFD registers them: name, version, kind, NFD's class name.
const REGISTRY: [(&str, u64, StrategyKind, &str); 2] = [
    (
        "/localhost/nfd/strategy/best-route",
        5,
        StrategyKind::BestRoute,
        "BestRouteStrategy",
    ),
    (
        "/localhost/nfd/strategy/multicast",
        5,
        StrategyKind::Multicast,
        "MulticastStrategy",
    ),
];

/// NFD's default strategy choices (its default `tables.strategy_choice`).
pub const DEFAULT_CHOICES: [(&str, StrategyKind); 4] = [
    ("/", StrategyKind::BestRoute),
    ("/localhost", StrategyKind::Multicast),
    ("/localhost/nfd", StrategyKind::BestRoute),
    ("/ndn/broadcast", StrategyKind::Multicast),
];

/// The strategy instance of each prefix that chose one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyChoices(BTreeMap<Name, (StrategyKind, Name)>);

impl Default for StrategyChoices {
    /// NFD's defaults ([`DEFAULT_CHOICES`]).
    fn default() -> Self {
        StrategyChoices(
            DEFAULT_CHOICES
                .iter()
                .map(|&(p, k)| {
                    (
                        Name::from_uri(p).expect("a valid name"),
                        (k, strategy_name(k)),
                    )
                })
                .collect(),
        )
    }
}

impl StrategyChoices {
    /// Every choice (prefix, strategy, instance name), in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, StrategyKind, &Name)> {
        self.0.iter().map(|(n, (k, i))| (n, *k, i))
    }

    /// Tells the forwarder every choice but `/`'s (the workers start with best-route there).
    pub fn push_defaults(&self, forwarder: &impl Forwarder) {
        for (name, (kind, _)) in self.0.iter().filter(|(n, _)| !n.is_empty()) {
            forwarder.set_strategy(name, Some(*kind));
        }
    }

    /// Sets the strategy of `name` (its latest version), here and in the forwarder.
    pub fn set(&mut self, forwarder: &impl Forwarder, name: Name, kind: StrategyKind) {
        self.set_instance(forwarder, name, kind, strategy_name(kind));
    }

    fn set_instance(
        &mut self,
        forwarder: &impl Forwarder,
        name: Name,
        kind: StrategyKind,
        instance: Name,
    ) {
        forwarder.set_strategy(&name, Some(kind));
        self.0.insert(name, (kind, instance));
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
        let (kind, instance) = match parse_instance(&strategy) {
            Ok(x) => x,
            Err(r) => return r,
        };
        self.set_instance(forwarder, name.clone(), kind, instance.clone());
        crate::ok(ControlParameters {
            name: Some(name),
            strategy: Some(instance),
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
    let (base, v, _, _) = REGISTRY
        .iter()
        .find(|r| r.2 == kind)
        .expect("every kind is registered");
    Name::from_uri(base)
        .expect("a valid name")
        .with(Component::version(*v))
}

/// A version component, typed (`v=5`) or in the older marker form (`%FD%05`).
fn version_of(c: &Component) -> Option<u64> {
    let nni = |v: &[u8]| (matches!(v.len(), 1 | 2 | 4 | 8)).then(|| wire::tlv::read_be(v));
    match u32::from(c.typ) {
        tt::VERSION => nni(&c.value),
        tt::GENERIC_COMPONENT if c.value.first() == Some(&0xFD) => nni(&c.value[1..]),
        _ => None,
    }
}

/// 409 "Error instantiating strategy: ..." (NFD's words when a strategy refuses its name).
fn cannot_instantiate(why: &str) -> ControlResponse {
    ControlResponse::new(409, format!("Error instantiating strategy: {why}"))
}

/// Reads a strategy instance name as NFD does: the strategy and the instance name NFD lists
/// (an unversioned name gets the version found), or the answer refusing it: 404 "Strategy not
/// registered" for a name no strategy matches (or a version newer than the strategy's), 409
/// for an older version or bad parameters.
pub fn parse_instance(input: &Name) -> Result<(StrategyKind, Name), ControlResponse> {
    let not_registered = || ControlResponse::new(404, "Strategy not registered");
    let comps = &input.components;
    let versioned = (1..comps.len())
        .rev()
        .find_map(|i| version_of(&comps[i]).map(|v| (i, v)));
    let Some((i, v)) = versioned else {
        // No version: the highest version of a strategy whose name the input starts.
        if input.is_empty() {
            return Err(not_registered());
        }
        let (_, rv, kind, _) = REGISTRY
            .iter()
            .rev()
            .find(|r| {
                let full = Name::from_uri(r.0).expect("a valid name");
                input.is_prefix_of(&full.with(Component::version(r.1)))
            })
            .ok_or_else(not_registered)?;
        return Ok((*kind, input.clone().with(Component::version(*rv))));
    };
    let base = input.prefix(i);
    let (_, rv, kind, class) = REGISTRY
        .iter()
        .find(|r| Name::from_uri(r.0).ok().as_ref() == Some(&base) && v <= r.1)
        .ok_or_else(not_registered)?;
    if v != *rv {
        return Err(cannot_instantiate(&format!(
            "{class} does not support version {v}"
        )));
    }
    check_parameters(&comps[i + 1..]).map_err(|e| cannot_instantiate(&e))?;
    Ok((*kind, input.clone()))
}

/// Checks strategy parameters as NFD's best-route and multicast read them.
fn check_parameters(params: &[Component]) -> Result<(), String> {
    let (mut initial, mut max, mut mult) = (10u64, 250u64, 2.0f64);
    for c in params {
        let s = String::from_utf8_lossy(&c.value);
        let Some((p, v)) = s.split_once('~') else {
            return Err("Strategy parameters format is (<parameter>~<value>)*".into());
        };
        if p.is_empty() || v.is_empty() {
            return Err("Strategy parameter name and value cannot be empty".into());
        }
        let bad = || format!("Strategy parameter {p} has a bad value {v:?}");
        match p {
            "retx-suppression-initial" => initial = v.parse().map_err(|_| bad())?,
            "retx-suppression-max" => max = v.parse().map_err(|_| bad())?,
            "retx-suppression-multiplier" => mult = v.parse().map_err(|_| bad())?,
            _ => {}
        }
    }
    if initial == 0 {
        return Err("Retx suppression initial interval must be > 0".into());
    }
    if max < initial {
        return Err("Retx suppression max interval must be >= initial interval".into());
    }
    if mult.is_nan() || mult < 1.0 {
        return Err("Retx suppression multiplier must be >= 1".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(uri: &str) -> Result<(StrategyKind, String), (u64, String)> {
        parse_instance(&Name::from_uri(uri).unwrap())
            .map(|(k, n)| (k, n.to_string()))
            .map_err(|r| (r.status_code, r.status_text))
    }

    #[test]
    fn instance_names_as_nfd_reads_them() {
        use StrategyKind::*;
        let br = "/localhost/nfd/strategy/best-route";
        assert_eq!(parse(br), Ok((BestRoute, format!("{br}/v=5"))));
        assert_eq!(
            parse(&format!("{br}/v=5")),
            Ok((BestRoute, format!("{br}/v=5")))
        );
        assert_eq!(parse(&format!("{br}/%FD%05")).unwrap().0, BestRoute);
        let mc = "/localhost/nfd/strategy/multicast";
        assert_eq!(parse(mc), Ok((Multicast, format!("{mc}/v=5"))));
        // Parameters are kept in the instance name.
        let with = format!("{mc}/v=5/retx-suppression-initial~20/retx-suppression-max~500");
        assert_eq!(parse(&with), Ok((Multicast, with.clone())));
        // A prefix of a registered name finds the last one it starts (NFD's lookup).
        assert_eq!(parse("/localhost/nfd/strategy").unwrap().0, Multicast);
        // Older version: the strategy refuses it; newer or unknown: not registered.
        assert_eq!(
            parse(&format!("{br}/v=4")),
            Err((
                409,
                "Error instantiating strategy: BestRouteStrategy does not support version 4".into()
            ))
        );
        let missing = Err((404, "Strategy not registered".to_string()));
        assert_eq!(parse(&format!("{br}/v=6")), missing);
        assert_eq!(parse("/localhost/nfd/strategy/asf"), missing);
        assert_eq!(parse("/localhost/nfd/strategy/best-route/x"), missing);
        assert_eq!(parse("/"), missing);
        // Bad parameters.
        for (p, why) in [
            ("oops", "format"),
            ("~1", "cannot be empty"),
            ("retx-suppression-initial~0", "initial interval must be > 0"),
            ("retx-suppression-initial~x", "bad value"),
            ("retx-suppression-max~5", "max interval must be >= initial"),
            ("retx-suppression-multiplier~0.5", "multiplier must be >= 1"),
        ] {
            let (code, text) = parse(&format!("{br}/v=5/{p}")).unwrap_err();
            assert_eq!(code, 409, "{p}");
            assert!(text.contains(why), "{p}: {text}");
        }
    }

    #[test]
    fn defaults_are_nfds() {
        let c = StrategyChoices::default();
        let v: Vec<(String, StrategyKind, String)> = c
            .iter()
            .map(|(n, k, i)| (n.to_string(), k, i.to_string()))
            .collect();
        let br = "/localhost/nfd/strategy/best-route/v=5".to_string();
        let mc = "/localhost/nfd/strategy/multicast/v=5".to_string();
        assert_eq!(
            v,
            [
                ("/".into(), StrategyKind::BestRoute, br.clone()),
                // Canonical order: shorter components first.
                ("/ndn/broadcast".into(), StrategyKind::Multicast, mc.clone()),
                ("/localhost".into(), StrategyKind::Multicast, mc),
                ("/localhost/nfd".into(), StrategyKind::BestRoute, br),
            ]
        );
    }
}
