//! `[[rib.localhop_trust_anchor]]`: NFD's `localhop_security` trust anchors, against which the
//! router verifies the `/localhop/nfd/rib` commands its neighbours send.
//!
//! ```toml
//! [rib]
//! localhop = true
//! [[rib.localhop_trust_anchor]]
//! type = "file"                      # NFD: trust-anchor { type file; file-name "..." }
//! file_name = "/etc/ndn/host.ndncert"
//! ```
//!
//! `type = "any"` (NFD's `trust-anchor { type any }`) accepts any signer, the signing time and
//! replay rules still applying; it is also what `localhop = true` with no anchor means. An
//! anchor implies `localhop = true`. What the router then checks is
//! [`mgmt::auth::Authorizations::localhop`]'s part.

use serde::Deserialize;

use mgmt::auth::Authorizations;

use super::authorizations::read_certificate;

/// One trust anchor.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TrustAnchor {
    /// `file` or `any`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The certificate file (`type = "file"`): base64 as `ndnsec cert-dump` writes it, or the
    /// binary Data.
    pub file_name: Option<String>,
}

/// The localhop validator the anchors make; the error names the entry in one line.
pub fn load(anchors: &[TrustAnchor]) -> Result<Authorizations, String> {
    let mut certs = Vec::with_capacity(anchors.len());
    let mut any = anchors.is_empty();
    for (i, a) in anchors.iter().enumerate() {
        let key = format!("rib.localhop_trust_anchor[{i}]");
        match (a.kind.as_str(), &a.file_name) {
            ("any", None) => any = true,
            ("file", Some(path)) => certs.push(
                read_certificate(path)
                    .map_err(|why| format!("{key}.file_name: cannot load {path}: {why}"))?,
            ),
            ("file", None) => return Err(format!("{key}.file_name: missing for type \"file\"")),
            ("any", Some(_)) => return Err(format!("{key}.file_name: not for type \"any\"")),
            (t, _) => return Err(format!("{key}.type: {t:?} is not \"file\" or \"any\"")),
        }
    }
    Ok(Authorizations::localhop((!any).then_some(certs)))
}

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn anchors_parse_and_bad_ones_are_one_line() {
        let c =
            Config::from_toml("[rib]\n[[rib.localhop_trust_anchor]]\ntype = \"any\"\n").unwrap();
        assert!(c.rib.options().localhop, "an anchor implies localhop");
        assert!(!Config::default().rib.options().localhop);
        for (toml, key) in [
            ("type = \"file\"", "[0].file_name"),
            ("type = \"dir\"", "[0].type"),
            ("type = \"any\"\nfile_name = \"x\"", "[0].file_name"),
            (
                "type = \"file\"\nfile_name = \"/nonexistent/h.cert\"",
                "/nonexistent/h.cert",
            ),
        ] {
            let e =
                Config::from_toml(&format!("[[rib.localhop_trust_anchor]]\n{toml}\n")).unwrap_err();
            assert!(
                e.contains("rib.localhop_trust_anchor") && e.contains(key),
                "{e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
