//! `[rib]`: the RIB's options, NFD's `rib` section's counterparts.

use serde::Deserialize;

/// The RIB's options.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Rib {
    /// Accept `/localhop/nfd/rib/register`, `unregister` and `announce` from non-local faces
    /// (NFD: a `localhop_security` section; Cascade verifies no signature). Default off.
    pub localhop: bool,
    /// Readvertise routes of origin client (65) to NLSR through `/localhost/nlsr/rib/register`
    /// (NFD's `readvertise_nlsr yes`). Default off.
    pub readvertise_nlsr: bool,
}

impl Rib {
    /// The manager's options.
    pub fn options(&self) -> mgmt::RibOptions {
        mgmt::RibOptions {
            localhop: self.localhop,
            readvertise_nlsr: self.readvertise_nlsr,
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
        let e = toml::from_str::<Config>("[rib]\nlocalhopp = true\n").unwrap_err();
        assert!(e.to_string().contains("localhopp"), "{e}");
    }
}
