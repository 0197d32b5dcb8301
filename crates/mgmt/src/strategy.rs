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
//! are `<name>~<value>` components, read and checked as NFD 24.07 reads them
//! ([`parse_parameters`]): every strategy takes `retx-suppression-initial`, `-max` (in
//! milliseconds) and `-multiplier`; ASF also `probing-interval` (milliseconds, at least 1 s) and
//! `max-timeouts`; `random` and `access` take none (409, as NFD). Unknown parameters are
//! ignored, as NFD does. The workers apply them
//! ([`Forwarder::set_strategy_instance`]).

use std::collections::BTreeMap;

use engine::fw::strategy::{Strategy, StrategyKind, ASF_MIN_PROBING_INTERVAL_MS};
use wire::nfd::{ControlParameters, ControlResponse};
use wire::{tt, Component, Name};

use crate::forwarder::Forwarder;

/// The strategies Cascade has, as NFD registers them: name, version, kind, NFD's class name;
/// in NFD's registry order (names in canonical order: a shorter component first).
const REGISTRY: [(&str, u64, StrategyKind, &str); 5] = [
    (
        "/localhost/nfd/strategy/asf",
        5,
        StrategyKind::Asf,
        "AsfStrategy",
    ),
    (
        "/localhost/nfd/strategy/access",
        1,
        StrategyKind::Access,
        "AccessStrategy",
    ),
    (
        "/localhost/nfd/strategy/random",
        1,
        StrategyKind::Random,
        "RandomStrategy",
    ),
    (
        "/localhost/nfd/strategy/multicast",
        5,
        StrategyKind::Multicast,
        "MulticastStrategy",
    ),
    (
        "/localhost/nfd/strategy/best-route",
        5,
        StrategyKind::BestRoute,
        "BestRouteStrategy",
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
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyChoices(BTreeMap<Name, (Strategy, Name)>);

impl Default for StrategyChoices {
    /// NFD's defaults ([`DEFAULT_CHOICES`]).
    fn default() -> Self {
        StrategyChoices(
            DEFAULT_CHOICES
                .iter()
                .map(|&(p, k)| {
                    (
                        Name::from_uri(p).expect("a valid name"),
                        (Strategy::new(k), strategy_name(k)),
                    )
                })
                .collect(),
        )
    }
}

impl StrategyChoices {
    /// Every choice (prefix, strategy, instance name), in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, StrategyKind, &Name)> {
        self.0.iter().map(|(n, (k, i))| (n, k.kind, i))
    }

    /// The strategy instance (with its parameters) chosen at exactly `name`.
    pub fn get(&self, name: &Name) -> Option<&Strategy> {
        self.0.get(name).map(|(s, _)| s)
    }

    /// Tells the forwarder every choice but `/`'s (the workers start with best-route there).
    pub fn push_defaults(&self, forwarder: &impl Forwarder) {
        for (name, (s, _)) in self.0.iter().filter(|(n, _)| !n.is_empty()) {
            forwarder.set_strategy_instance(name, Some(*s));
        }
    }

    /// Sets the strategy of `name` (its latest version), here and in the forwarder.
    pub fn set(&mut self, forwarder: &impl Forwarder, name: Name, kind: StrategyKind) {
        self.set_instance(forwarder, name, Strategy::new(kind), strategy_name(kind));
    }

    /// Sets the strategy instance of `name` (a strategy with its parameters, listed as
    /// `instance`), here and in the forwarder.
    pub fn set_instance(
        &mut self,
        forwarder: &impl Forwarder,
        name: Name,
        strategy: Strategy,
        instance: Name,
    ) {
        forwarder.set_strategy_instance(&name, Some(strategy));
        self.0.insert(name, (strategy, instance));
    }

    /// Unsets the strategy of `name`, here and in the forwarder; `/` goes back to best-route.
    pub fn unset(&mut self, forwarder: &impl Forwarder, name: &Name) {
        if name.is_empty() {
            self.set(forwarder, Name::new(), StrategyKind::BestRoute);
            return;
        }
        self.0.remove(name);
        forwarder.set_strategy_instance(name, None);
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

/// Reads a strategy instance name as NFD does: the strategy with its parameters and the
/// instance name NFD lists (an unversioned name gets the version found), or the answer
/// refusing it: 404 "Strategy not registered" for a name no strategy matches (or a version
/// newer than the strategy's), 409 "Error instantiating strategy: ..." for an older version or
/// bad parameters (NFD's manager answers the strategy table's 409 for any error the strategy
/// raises).
pub fn parse_instance(input: &Name) -> Result<(Strategy, Name), ControlResponse> {
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
        return Ok((
            Strategy::new(*kind),
            input.clone().with(Component::version(*rv)),
        ));
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
    let params = &comps[i + 1..];
    if !params.is_empty() && !takes_parameters(*kind) {
        return Err(cannot_instantiate(&format!(
            "{class} does not accept parameters"
        )));
    }
    let strategy = parse_parameters(*kind, params).map_err(|e| cannot_instantiate(&e))?;
    Ok((strategy, input.clone()))
}

/// Whether a strategy takes parameters (NFD's random and access strategies refuse any).
fn takes_parameters(kind: StrategyKind) -> bool {
    !matches!(kind, StrategyKind::Random | StrategyKind::Access)
}

/// Reads a strategy written in the configuration file: a short name (`best-route`,
/// `multicast`, `asf`, optionally followed by `/v=5/<parameters>`) stands for
/// `/localhost/nfd/strategy/<name>`; a name starting with `/` is read as NFD's instance name
/// ([`parse_instance`]). The error is management's answer text (or the name's fault).
pub fn parse_config_name(s: &str) -> Result<(Strategy, Name), String> {
    let uri = if s.starts_with('/') {
        s.to_string()
    } else {
        format!("/localhost/nfd/strategy/{s}")
    };
    let name = Name::from_uri(&uri).map_err(|e| format!("bad name: {}", e.0))?;
    parse_instance(&name).map_err(|r| r.status_text)
}

/// Reads strategy parameters (`<name>~<value>` components; the last of a name wins) as NFD
/// 24.07 reads them, with its words for each error: the format, then the retransmission
/// suppression's (signed milliseconds; initial > 0, max >= initial, multiplier >= 1), then, for
/// ASF, `probing-interval` (signed milliseconds, >= 1000) and `max-timeouts` (unsigned).
/// Milliseconds beyond `u32::MAX` (49 days) are taken as `u32::MAX`.
pub fn parse_parameters(kind: StrategyKind, params: &[Component]) -> Result<Strategy, String> {
    let mut map = BTreeMap::new();
    for c in params {
        let s = String::from_utf8_lossy(&c.value);
        let Some((p, v)) = s.split_once('~') else {
            return Err("Strategy parameters format is (<parameter>~<value>)*".into());
        };
        if p.is_empty() || v.is_empty() {
            return Err("Strategy parameter name and value cannot be empty".into());
        }
        map.insert(p.to_string(), v.to_string());
    }
    let malformed = |key: &str| format!("{key} value is malformed");
    let signed = |key: &str, default: i64| match map.get(key) {
        None => Ok(default),
        Some(v) => v.parse::<i64>().map_err(|_| malformed(key)),
    };
    let ms = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
    let mut s = Strategy::new(kind);
    let initial = signed("retx-suppression-initial", s.retx.initial_ms.into())?;
    let max = signed("retx-suppression-max", s.retx.max_ms.into())?;
    let key = "retx-suppression-multiplier";
    let mult = match map.get(key) {
        None => s.retx.multiplier,
        Some(v) => v.parse::<f32>().map_err(|_| malformed(key))?,
    };
    if initial <= 0 {
        return Err("Retx suppression initial interval must be > 0".into());
    }
    if max < initial {
        return Err("Retx suppression max interval must be >= initial interval".into());
    }
    if mult.is_nan() || mult < 1.0 {
        return Err("Retx suppression multiplier must be >= 1".into());
    }
    (s.retx.initial_ms, s.retx.max_ms, s.retx.multiplier) = (ms(initial), ms(max), mult);
    if kind == StrategyKind::Asf {
        let probing = signed("probing-interval", s.probing_interval_ms.into())?;
        if probing < i64::from(ASF_MIN_PROBING_INTERVAL_MS) {
            return Err(format!(
                "Probing interval must be >= {ASF_MIN_PROBING_INTERVAL_MS} milliseconds"
            ));
        }
        s.probing_interval_ms = ms(probing);
        if let Some(v) = map.get("max-timeouts") {
            if v.contains('-') {
                return Err("max-timeouts cannot be negative".into());
            }
            let n: u64 = v.parse().map_err(|_| malformed("max-timeouts"))?;
            s.max_timeouts = u32::try_from(n).unwrap_or(u32::MAX);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(uri: &str) -> Result<(StrategyKind, String), (u64, String)> {
        parse_instance(&Name::from_uri(uri).unwrap())
            .map(|(k, n)| (k.kind, n.to_string()))
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
        // A prefix of a registered name finds the last one it starts, in NFD's registry
        // order (canonical: best-route's longer component after multicast's).
        assert_eq!(parse("/localhost/nfd/strategy").unwrap().0, BestRoute);
        // Random, as NFD 24.07 registers it: version 1, no parameters.
        let rnd = "/localhost/nfd/strategy/random";
        assert_eq!(parse(rnd), Ok((Random, format!("{rnd}/v=1"))));
        assert_eq!(
            parse(&format!("{rnd}/v=1/retx-suppression-initial~20")),
            Err((
                409,
                "Error instantiating strategy: RandomStrategy does not accept parameters".into()
            ))
        );
        assert_eq!(parse(&format!("{rnd}/v=2")).unwrap_err().0, 404);
        let acc = "/localhost/nfd/strategy/access";
        assert_eq!(parse(acc), Ok((Access, format!("{acc}/v=1"))));
        assert_eq!(
            parse(&format!("{acc}/v=1/x~1")).unwrap_err().1,
            "Error instantiating strategy: AccessStrategy does not accept parameters"
        );
        assert_eq!(
            parse("/localhost/nfd/strategy/self-learning")
                .unwrap_err()
                .0,
            404
        );
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
        assert_eq!(parse("/localhost/nfd/strategy/asf/v=6"), missing);
        assert_eq!(parse("/localhost/nfd/strategy/best-route/x"), missing);
        assert_eq!(parse("/"), missing);
        // Bad parameters.
        for (p, why) in [
            ("oops", "format"),
            ("~1", "cannot be empty"),
            ("retx-suppression-initial~0", "initial interval must be > 0"),
            (
                "retx-suppression-initial~x",
                "retx-suppression-initial value is malformed",
            ),
            (
                "retx-suppression-initial~-5",
                "initial interval must be > 0",
            ),
            (
                "retx-suppression-multiplier~x",
                "multiplier value is malformed",
            ),
            ("retx-suppression-max~5", "max interval must be >= initial"),
            ("retx-suppression-multiplier~0.5", "multiplier must be >= 1"),
        ] {
            let (code, text) = parse(&format!("{br}/v=5/{p}")).unwrap_err();
            assert_eq!(code, 409, "{p}");
            assert!(text.contains(why), "{p}: {text}");
        }
    }

    #[test]
    fn parameters_are_read_as_nfd_reads_them() {
        let get = |uri: &str| parse_instance(&Name::from_uri(uri).unwrap()).map(|(s, _)| s);
        let br = "/localhost/nfd/strategy/best-route/v=5";
        let s = get(&format!(
            "{br}/retx-suppression-initial~20/retx-suppression-max~400\
             /retx-suppression-multiplier~1.5/unknown~x"
        ))
        .unwrap();
        assert_eq!((s.retx.initial_ms, s.retx.max_ms), (20, 400));
        assert_eq!(s.retx.multiplier, 1.5);
        // The last value of a parameter wins; ASF's own parameters.
        let asf = "/localhost/nfd/strategy/asf/v=5";
        let s = get(&format!(
            "{asf}/probing-interval~3000/probing-interval~5000/max-timeouts~2"
        ))
        .unwrap();
        assert_eq!(s.kind, StrategyKind::Asf);
        assert_eq!((s.probing_interval_ms, s.max_timeouts), (5000, 2));
        assert_eq!(get(asf).unwrap(), Strategy::new(StrategyKind::Asf));
        for (p, why) in [
            (
                "probing-interval~999",
                "Probing interval must be >= 1000 milliseconds",
            ),
            ("probing-interval~1s", "probing-interval value is malformed"),
            ("max-timeouts~-1", "max-timeouts cannot be negative"),
            ("max-timeouts~x", "max-timeouts value is malformed"),
        ] {
            let r = get(&format!("{asf}/{p}")).unwrap_err();
            assert_eq!(r.status_code, 409, "{p}");
            assert_eq!(
                r.status_text,
                format!("Error instantiating strategy: {why}")
            );
        }
        // Best-route ignores ASF's parameters.
        assert!(get(&format!("{br}/probing-interval~5")).is_ok());
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
