//! `[rib]`: the RIB's options, NFD's `rib` section's counterparts.

use serde::Deserialize;

use super::localhop::TrustAnchor;

/// The RIB's options.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Rib {
    /// Accept `/localhop/nfd/rib/register`, `unregister` and `announce` from non-local faces
    /// (NFD: a `localhop_security` section), verified with `localhop_trust_anchor`. Default off.
    pub localhop: bool,
    /// Prefix propagation to a hub (NFD's `auto_prefix_propagate`, [`super::rib_propagate`]);
    /// `None`: off.
    pub auto_prefix_propagate: Option<super::rib_propagate::Propagate>,
    /// NFD's `localhop_security` trust anchors ([`super::localhop`]); any implies `localhop`.
    /// Default none: any signer.
    pub localhop_trust_anchor: Vec<TrustAnchor>,
    /// NFD's `localhop_security` as an ndn-cxx validator configuration file (rules, trust
    /// anchors; certificate chains fetched from the command's face): its path, relative to the
    /// configuration file's directory. Implies `localhop`; not with `localhop_trust_anchor`.
    pub localhop_security: Option<String>,
    /// Readvertise routes of origin client (65) to NLSR through `/localhost/nlsr/rib/register`
    /// (NFD's `readvertise_nlsr yes`). Default off.
    pub readvertise_nlsr: bool,
    /// The first retry delay of a readvertisement NLSR refused or left unanswered, in
    /// milliseconds (doubling before each retry up to an hour). Default 50,000 (NFD's, which
    /// it does not let one set); 1,000 to 3,600,000.
    pub readvertise_retry_ms: Option<u64>,
}

impl Rib {
    /// The manager's options.
    pub fn options(&self) -> mgmt::RibOptions {
        mgmt::RibOptions {
            localhop: self.localhop
                || !self.localhop_trust_anchor.is_empty()
                || self.localhop_security.is_some(),
            readvertise_nlsr: self.readvertise_nlsr,
            readvertise_retry_ms: self.readvertise_retry_ms,
        }
    }

    /// Makes a relative `localhop_security` path relative to `dir` (the configuration file's
    /// directory).
    pub fn resolve_in(&mut self, dir: Option<&std::path::Path>) {
        if let (Some(dir), Some(p)) = (dir, self.localhop_security.as_mut()) {
            if std::path::Path::new(p.as_str()).is_relative() {
                *p = dir.join(p.as_str()).display().to_string();
            }
        }
    }

    /// Checks the ranges: one line naming the key on error.
    pub fn validate(&self) -> Result<(), String> {
        super::localhop::load(&self.localhop_trust_anchor)?;
        if let Some(path) = &self.localhop_security {
            if !self.localhop_trust_anchor.is_empty() {
                return Err(
                    "rib.localhop_security: not with rib.localhop_trust_anchor (the \
                            file names its trust anchors)"
                        .into(),
                );
            }
            super::localhop::read_policy(path)?;
        }
        if let Some(p) = &self.auto_prefix_propagate {
            p.validate()?;
        }
        match self.readvertise_retry_ms {
            Some(ms) if !(1_000..=3_600_000).contains(&ms) => Err(format!(
                "rib.readvertise_retry_ms: {ms} is outside 1000..=3600000"
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn rib_section() {
        let c: Config =
            toml::from_str("[rib]\nlocalhop = true\nreadvertise_nlsr = true\n").unwrap();
        assert!(c.rib.localhop && c.rib.readvertise_nlsr);
        let d = Config::default();
        assert!(!d.rib.localhop && !d.rib.readvertise_nlsr);
        assert_eq!(d.rib.options().readvertise_retry_ms, None);
        let r: Config = toml::from_str("[rib]\nreadvertise_retry_ms = 999\n").unwrap();
        let e = r.validate().unwrap_err();
        assert!(e.starts_with("rib.readvertise_retry_ms"), "{e}");
        let r: Config = toml::from_str("[rib]\nreadvertise_retry_ms = 1000\n").unwrap();
        assert_eq!(r.rib.options().readvertise_retry_ms, Some(1000));
        let e = toml::from_str::<Config>("[rib]\nlocalhopp = true\n").unwrap_err();
        assert!(e.to_string().contains("localhopp"), "{e}");
    }
}
