//! `[[strategy]]` entries read as management reads `strategy-choice/set`
//! ([`mgmt::strategy::parse_config_name`]): a short name (`best-route`, `multicast`, `asf`) or
//! NFD's instance name with its version and parameters
//! (`/localhost/nfd/strategy/asf/v=5/probing-interval~30000`).

use engine::fw::strategy::Strategy;
use wire::Name;

use super::{parse_prefix, StrategyEntry};

impl StrategyEntry {
    /// The entry's prefix, strategy instance (with its parameters) and the instance name
    /// `strategy-choice/list` shows; the error is one line naming the entry.
    pub fn instance(&self) -> Result<(Name, Strategy, Name), String> {
        let prefix = parse_prefix("strategy.prefix", &self.prefix)?;
        let (strategy, instance) = mgmt::strategy::parse_config_name(&self.strategy)
            .map_err(|why| format!("strategy {}: {:?}: {why}", self.prefix, self.strategy))?;
        Ok((prefix, strategy, instance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::fw::strategy::StrategyKind;

    fn entry(strategy: &str) -> StrategyEntry {
        StrategyEntry {
            prefix: "/p".into(),
            strategy: strategy.into(),
        }
    }

    #[test]
    fn parameters_are_read_as_management_reads_them() {
        let s = "/localhost/nfd/strategy/best-route/v=5/retx-suppression-initial~20";
        let (prefix, br, name) = entry(s).instance().unwrap();
        assert_eq!(prefix, Name::from_uri("/p").unwrap());
        assert_eq!((br.kind, br.retx.initial_ms), (StrategyKind::BestRoute, 20));
        assert_eq!(name, Name::from_uri(s).unwrap());
        let (_, asf, name) = entry("asf/v=5/probing-interval~30000").instance().unwrap();
        assert_eq!(
            (asf.kind, asf.probing_interval_ms),
            (StrategyKind::Asf, 30_000)
        );
        let full = "/localhost/nfd/strategy/asf/v=5/probing-interval~30000";
        assert_eq!(name, Name::from_uri(full).unwrap());
        // A short name is listed with the latest version, as management lists it.
        let (_, m, name) = entry("multicast").instance().unwrap();
        assert_eq!(m, Strategy::new(StrategyKind::Multicast));
        let full = "/localhost/nfd/strategy/multicast/v=5";
        assert_eq!(name, Name::from_uri(full).unwrap());
    }

    #[test]
    fn a_bad_entry_is_one_line_naming_it_with_management_words() {
        for (s, words) in [
            (
                "/localhost/nfd/strategy/asf/v=5/probing-interval~10",
                "Probing interval must be >= 1000",
            ),
            (
                "/localhost/nfd/strategy/best-route/v=5/retx-suppression-initial~0",
                "initial interval must be > 0",
            ),
            ("/localhost/nfd/strategy/asf/v=5/nonsense", "format is"),
            ("self-learning", "Strategy not registered"),
            ("/localhost/nfd/strategy/multicast/v=4", "version 4"),
        ] {
            let e = entry(s).instance().unwrap_err();
            assert!(e.starts_with(&format!("strategy /p: {s:?}: ")), "{e}");
            assert!(e.contains(words), "{e}");
            assert!(!e.contains('\n'));
        }
    }
}
