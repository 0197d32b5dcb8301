//! `[[rib.localhop_trust_anchor]]`: NFD's `localhop_security` trust anchors, against which the
//! router verifies the `/localhop/nfd/rib` commands its neighbours send.
//!
//! ```toml
//! [rib]
//! localhop = true
//! [[rib.localhop_trust_anchor]]
//! type = "file"                      # NFD: trust-anchor { type file; file-name "..." }
//! file_name = "/etc/ndn/host.ndncert"
//! [[rib.localhop_trust_anchor]]
//! type = "dir"                       # NFD: trust-anchor { type dir; dir "..."; refresh 1h }
//! dir = "/etc/ndn/anchors"
//! refresh = "1h"
//! ```
//!
//! `type = "base64"` with `base64_string` holds the certificate itself (NFD's
//! `trust-anchor { type base64; base64-string "..." }`).
//!
//! With these anchors, a command's KeyLocator must name a trust anchor: certificates are not
//! fetched. NFD's full `localhop_security` — rules, and certificate chains fetched from the
//! command's face up to an anchor — is `[rib] localhop_security = "<file>"`, an ndn-cxx
//! validator configuration file as NFD reads it ([`read_policy`], [`mgmt::auth::policy`],
//! [`mgmt::auth::chain`]); a relative path is read from the configuration file's directory, and
//! the relative paths inside it from its own directory, as ndn-cxx reads them.
//!
//! `type = "any"` (NFD's `trust-anchor { type any }`) accepts any signer, the signing time and
//! replay rules still applying; it is also what `localhop = true` with no anchor means. An
//! anchor implies `localhop = true`. What the router then checks is
//! [`mgmt::auth::Authorizations::localhop`]'s part.
//!
//! As ndn-cxx's dynamic trust-anchor groups: `type = "dir"` takes every certificate file
//! directly in the directory (files that are no certificate are skipped; a directory that does
//! not exist holds none), and an anchor with `refresh` (`<n>h`, `<n>m` or `<n>s`; `0` of any
//! unit: an hour) is read again at that interval; without it, only when the configuration is
//! read again (start-up, SIGHUP). The anchors in force change only when the certificates
//! read differ ([`AnchorState`]), so a refresh that finds the same ones keeps the commands'
//! replay records.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use mgmt::auth::policy::{AnchorSpec, Policy};
use mgmt::auth::{Authorizations, Certificate};

use super::authorizations::read_certificate;

/// One trust anchor.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TrustAnchor {
    /// `file`, `dir`, `base64` or `any`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The certificate in base64 (`type = "base64"`).
    #[serde(default)]
    pub base64_string: Option<String>,
    /// The certificate file (`type = "file"`): base64 as `ndnsec cert-dump` writes it, or the
    /// binary Data.
    pub file_name: Option<String>,
    /// The directory of certificate files (`type = "dir"`).
    pub dir: Option<String>,
    /// How often a `file` or `dir` anchor is read again: `<n>h`, `<n>m` or `<n>s` (NFD's
    /// `refresh`); default: never (only at a reload).
    pub refresh: Option<String>,
}

/// What the anchors hold when read: `any`, or these certificates; and the shortest refresh
/// interval among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchors {
    /// Any signer is accepted (`type = "any"`, or no anchor).
    pub any: bool,
    /// The certificates, in the anchors' order (a directory's files by name).
    pub certs: Vec<Certificate>,
    /// When to read them again; `None`: never.
    pub refresh: Option<Duration>,
}

impl Anchors {
    /// The localhop validator they make: with `policy`'s rules and certificate chains, or
    /// (without) the anchors alone.
    pub fn authorizations(&self, policy: Option<&Policy>) -> Authorizations {
        match policy {
            Some(p) if !self.any => Authorizations::localhop_with(p.clone(), self.certs.clone()),
            _ => Authorizations::localhop((!self.any).then(|| self.certs.clone())),
        }
    }
}

/// Reads an ndn-cxx validator configuration file (`[rib] localhop_security`): its rules, and
/// its trust anchors as [`TrustAnchor`]s (relative paths made relative to the file's
/// directory). The error is one line naming the file and the problem.
pub fn read_policy(path: &str) -> Result<(Policy, Vec<TrustAnchor>), String> {
    let key = "rib.localhop_security";
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{key}: cannot read {path}: {e}"))?;
    let policy = Policy::parse(&text).map_err(|e| format!("{key}: {path}: {e}"))?;
    let dir = Path::new(path).parent().unwrap_or(Path::new("."));
    let resolve = |f: &str| {
        if Path::new(f).is_relative() {
            dir.join(f).display().to_string()
        } else {
            f.to_string()
        }
    };
    let anchor = |kind: &str| TrustAnchor {
        kind: kind.into(),
        base64_string: None,
        file_name: None,
        dir: None,
        refresh: None,
    };
    let anchors = policy
        .anchors
        .iter()
        .map(|a| match a {
            AnchorSpec::File(f, r) => TrustAnchor {
                file_name: Some(resolve(f)),
                refresh: r.clone(),
                ..anchor("file")
            },
            AnchorSpec::Dir(d, r) => TrustAnchor {
                dir: Some(resolve(d)),
                refresh: r.clone(),
                ..anchor("dir")
            },
            AnchorSpec::Base64(b) => TrustAnchor {
                base64_string: Some(data_encoding::BASE64.encode(b)),
                ..anchor("base64")
            },
            AnchorSpec::Any => anchor("any"),
        })
        .collect::<Vec<_>>();
    // A trust anchor file that cannot be read is an error now, as ndn-cxx's is.
    read(&anchors).map_err(|e| format!("{key}: {path}: {e}"))?;
    Ok((policy, anchors))
}

/// ndn-cxx's `refresh` value: a non-negative count and a unit, `h`, `m` or `s`; 0 is an hour.
pub fn parse_refresh(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not <n>h, <n>m or <n>s");
    let unit = s.chars().last().ok_or_else(bad)?;
    let n: u64 = s[..s.len() - unit.len_utf8()].parse().map_err(|_| bad())?;
    let secs = match unit {
        _ if n == 0 => 3_600,
        'h' => n.saturating_mul(3_600),
        'm' => n.saturating_mul(60),
        's' => n,
        _ => return Err(bad()),
    };
    Ok(Duration::from_secs(secs))
}

/// The certificate files directly in `dir`, by name (none if it cannot be listed).
fn dir_certificates(dir: &str) -> Vec<Certificate> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| read_certificate(&p.display().to_string()).ok())
        .collect()
}

/// Reads the anchors; the error names the entry in one line.
pub fn read(anchors: &[TrustAnchor]) -> Result<Anchors, String> {
    let mut out = Anchors {
        any: anchors.is_empty(),
        certs: Vec::with_capacity(anchors.len()),
        refresh: None,
    };
    for (i, a) in anchors.iter().enumerate() {
        let key = format!("rib.localhop_trust_anchor[{i}]");
        if let Some(r) = &a.refresh {
            let every = parse_refresh(r).map_err(|why| format!("{key}.refresh: {why}"))?;
            out.refresh = Some(out.refresh.map_or(every, |o: Duration| o.min(every)));
        }
        let not_for = |field: &str| format!("{key}.{field}: not for type {:?}", a.kind);
        if a.kind == "base64" || a.base64_string.is_some() {
            match (&a.base64_string, &a.file_name, &a.dir) {
                _ if a.kind != "base64" => return Err(not_for("base64_string")),
                (None, _, _) => {
                    return Err(format!("{key}.base64_string: missing for type \"base64\""))
                }
                (_, Some(_), _) => return Err(not_for("file_name")),
                (_, _, Some(_)) => return Err(not_for("dir")),
                _ if a.refresh.is_some() => return Err(not_for("refresh")),
                (Some(b), None, None) => {
                    let clean: String = b.chars().filter(|c| !c.is_whitespace()).collect();
                    let bytes = data_encoding::BASE64
                        .decode(clean.as_bytes())
                        .map_err(|e| format!("{key}.base64_string: not base64 ({e})"))?;
                    out.certs.push(
                        Certificate::decode(&bytes)
                            .map_err(|why| format!("{key}.base64_string: {why}"))?,
                    );
                }
            }
            continue;
        }
        match (a.kind.as_str(), &a.file_name, &a.dir) {
            ("any", None, None) if a.refresh.is_none() => out.any = true,
            ("any", None, None) => return Err(not_for("refresh")),
            ("file", Some(path), None) => out.certs.push(
                read_certificate(path)
                    .map_err(|why| format!("{key}.file_name: cannot load {path}: {why}"))?,
            ),
            ("dir", None, Some(dir)) => out.certs.extend(dir_certificates(dir)),
            ("file", None, _) => return Err(format!("{key}.file_name: missing for type \"file\"")),
            ("dir", _, None) => return Err(format!("{key}.dir: missing for type \"dir\"")),
            ("file" | "any", _, Some(_)) => return Err(not_for("dir")),
            ("dir" | "any", Some(_), _) => return Err(not_for("file_name")),
            (t, _, _) => {
                return Err(format!(
                    "{key}.type: {t:?} is not \"file\", \"dir\", \"base64\" or \"any\""
                ))
            }
        }
    }
    Ok(out)
}

/// The localhop validator the anchors make; the error names the entry in one line.
pub fn load(anchors: &[TrustAnchor]) -> Result<Authorizations, String> {
    read(anchors).map(|a| a.authorizations(None))
}

/// The anchors in force and when they are read again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorState {
    /// The configuration's anchors.
    pub specs: Vec<TrustAnchor>,
    /// The rules of `[rib] localhop_security`, if that is what configures them.
    pub policy: Option<Arc<Policy>>,
    /// What they held when last read (what is in force).
    pub read: Anchors,
    /// When to read them again (`None`: at the next reload only).
    pub next_at: Option<Instant>,
}

impl AnchorState {
    /// Reads `specs` at `now` against `current` (the state in force, if any), under `policy`'s
    /// rules if any: the new state, and the validator to put in force if what they hold (or
    /// the rules) changed, or nothing was in force.
    pub fn renew(
        current: Option<&AnchorState>,
        specs: &[TrustAnchor],
        policy: Option<Arc<Policy>>,
        now: Instant,
    ) -> Result<(AnchorState, Option<Authorizations>), String> {
        let read = read(specs)?;
        let changed = current.is_none_or(|c| {
            c.read.any != read.any || c.read.certs != read.certs || c.policy != policy
        });
        let auth = changed.then(|| read.authorizations(policy.as_deref()));
        let next_at = read.refresh.map(|d| now + d);
        let state = AnchorState {
            specs: specs.to_vec(),
            policy,
            read,
            next_at,
        };
        Ok((state, auth))
    }

    /// Whether the refresh interval has passed at `now`.
    pub fn due(&self, now: Instant) -> bool {
        self.next_at.is_some_and(|t| t <= now)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    use super::{parse_refresh, read, AnchorState, TrustAnchor};
    use crate::config::authorizations::tests::certificate_named;
    use crate::Config;

    #[test]
    fn anchors_parse_and_bad_ones_are_one_line() {
        let c =
            Config::from_toml("[rib]\n[[rib.localhop_trust_anchor]]\ntype = \"any\"\n").unwrap();
        assert!(c.rib.options().localhop, "an anchor implies localhop");
        assert!(!Config::default().rib.options().localhop);
        for (toml, key) in [
            ("type = \"file\"", "[0].file_name"),
            ("type = \"dir\"", "[0].dir"),
            ("type = \"x\"", "[0].type"),
            ("type = \"any\"\nfile_name = \"x\"", "[0].file_name"),
            (
                "type = \"dir\"\ndir = \"/d\"\nfile_name = \"x\"",
                "[0].file_name",
            ),
            (
                "type = \"file\"\nfile_name = \"x\"\ndir = \"/d\"",
                "[0].dir",
            ),
            ("type = \"any\"\nrefresh = \"1h\"", "[0].refresh"),
            (
                "type = \"dir\"\ndir = \"/d\"\nrefresh = \"1d\"",
                "[0].refresh",
            ),
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

    #[test]
    fn refresh_values_as_ndn_cxx_reads_them() {
        assert_eq!(parse_refresh("2h"), Ok(Duration::from_secs(7_200)));
        assert_eq!(parse_refresh("30m"), Ok(Duration::from_secs(1_800)));
        assert_eq!(parse_refresh("10s"), Ok(Duration::from_secs(10)));
        // Zero of any unit is ndn-cxx's default, an hour.
        assert_eq!(parse_refresh("0s"), Ok(Duration::from_secs(3_600)));
        for bad in ["", "h", "-1h", "1d", "1", "1.5h", "é"] {
            assert!(parse_refresh(bad).is_err(), "{bad}");
        }
    }

    /// A fresh temporary directory, removed on drop.
    pub(crate) struct Dir(pub(crate) PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    pub(crate) fn dir(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("cascade-anchors-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        Dir(d)
    }

    pub(crate) fn dir_anchor(d: &Dir, refresh: Option<&str>) -> TrustAnchor {
        TrustAnchor {
            kind: "dir".into(),
            base64_string: None,
            file_name: None,
            dir: Some(d.0.display().to_string()),
            refresh: refresh.map(String::from),
        }
    }

    fn names(a: &super::Anchors) -> Vec<String> {
        a.certs.iter().map(|c| c.name.to_string()).collect()
    }

    #[test]
    fn a_dir_anchor_holds_every_certificate_file_directly_in_it() {
        let d = dir("read");
        std::fs::write(d.0.join("b.cert"), certificate_named("/b/KEY/k/self/v=1")).unwrap();
        std::fs::write(d.0.join("a.cert"), certificate_named("/a/KEY/k/self/v=1")).unwrap();
        std::fs::write(d.0.join("notes.txt"), "not a certificate").unwrap();
        std::fs::write(
            d.0.join("sub/c.cert"),
            certificate_named("/c/KEY/k/self/v=1"),
        )
        .unwrap();
        let a = read(&[dir_anchor(&d, Some("5m"))]).unwrap();
        assert!(!a.any);
        assert_eq!(names(&a), ["/a/KEY/k/self/v=1", "/b/KEY/k/self/v=1"]);
        assert_eq!(a.refresh, Some(Duration::from_secs(300)));
        // A directory that does not exist holds none (ndn-cxx: no error either).
        let gone = TrustAnchor {
            dir: Some("/nonexistent/anchors".into()),
            ..dir_anchor(&d, None)
        };
        let a = read(&[gone]).unwrap();
        assert!(!a.any && a.certs.is_empty() && a.refresh.is_none());
    }

    #[test]
    fn anchors_read_again_change_only_when_the_certificates_do() {
        let d = dir("renew");
        std::fs::write(d.0.join("a.cert"), certificate_named("/a/KEY/k/self/v=1")).unwrap();
        let specs = [dir_anchor(&d, Some("10s"))];
        let t0 = Instant::now();
        let (s0, auth) = AnchorState::renew(None, &specs, None, t0).unwrap();
        assert!(auth.is_some(), "the first read is put in force");
        assert!(!s0.due(t0 + Duration::from_secs(9)));
        assert!(s0.due(t0 + Duration::from_secs(10)));
        let (s1, auth) = AnchorState::renew(Some(&s0), &specs, None, t0).unwrap();
        assert!(auth.is_none(), "the same certificates: nothing to change");
        std::fs::write(d.0.join("b.cert"), certificate_named("/b/KEY/k/self/v=1")).unwrap();
        let (s2, auth) = AnchorState::renew(Some(&s1), &specs, None, t0).unwrap();
        assert!(auth.is_some());
        assert_eq!(names(&s2.read).len(), 2);
        std::fs::remove_file(d.0.join("a.cert")).unwrap();
        let (s3, auth) = AnchorState::renew(Some(&s2), &specs, None, t0).unwrap();
        assert!(auth.is_some());
        assert_eq!(names(&s3.read), ["/b/KEY/k/self/v=1"]);
        // Without refresh, never due.
        let (s4, _) = AnchorState::renew(None, &[dir_anchor(&d, None)], None, t0).unwrap();
        assert!(!s4.due(t0 + Duration::from_secs(1 << 30)));
    }

    /// NFD's sample localhop_security, its anchor a file relative to the policy's directory.
    pub(crate) const POLICY: &str = r#"
        rule
        {
          id "RIB Command Interest"
          for interest
          filter
          {
            type name
            regex ^<localhop><nfd><rib>[<register><unregister>]<>{1,3}$
          }
          checker
          {
            type customized
            sig-type ecdsa-sha256
            key-locator
            {
              type name
              regex ^<>*<KEY><>{1,3}$
            }
          }
        }
        rule
        {
          id "NDN Testbed Certificate Hierarchy"
          for data
          filter
          {
            type name
            regex ^<>*<KEY><>{3}$
          }
          checker
          {
            type hierarchical
            sig-type ecdsa-sha256
          }
        }
        trust-anchor
        {
          type file
          file-name keys/root.ndncert ; relative to this file
        }
    "#;

    #[test]
    fn localhop_security_reads_an_ndn_cxx_validator_file_relative_to_the_config() {
        let d = dir("policy");
        std::fs::create_dir_all(d.0.join("keys")).unwrap();
        std::fs::write(
            d.0.join("keys/root.ndncert"),
            certificate_named("/ndn/KEY/k/self/v=1"),
        )
        .unwrap();
        std::fs::write(
            d.0.join("sub/localhop.conf"),
            POLICY.replace("keys/", "../keys/"),
        )
        .unwrap();
        let toml = "[rib]\nlocalhop_security = \"sub/localhop.conf\"\n";
        let c = Config::from_toml_in(toml, Some(&d.0)).unwrap();
        assert!(c.rib.options().localhop, "the file implies localhop");
        let path = c.rib.localhop_security.clone().unwrap();
        assert_eq!(path, d.0.join("sub/localhop.conf").display().to_string());
        let (policy, anchors) = super::read_policy(&path).unwrap();
        assert_eq!(policy.rules.len(), 2);
        let read = read(&anchors).unwrap();
        assert_eq!(names(&read), ["/ndn/KEY/k/self/v=1"]);
        // Without the directory, the relative path is not found: one line naming the file.
        let e = Config::from_toml(toml).unwrap_err();
        assert!(e.starts_with("rib.localhop_security: cannot read"), "{e}");
        // A bad file: the line and the problem, in one line.
        std::fs::write(
            d.0.join("sub/localhop.conf"),
            POLICY.replace("type hierarchical", "type fancy"),
        )
        .unwrap();
        let e = Config::from_toml_in(toml, Some(&d.0)).unwrap_err();
        assert!(
            e.contains("localhop.conf: line 33:") && e.contains("checker.type"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        // An anchor file that is missing is an error too.
        std::fs::write(d.0.join("sub/localhop.conf"), POLICY).unwrap();
        let e = Config::from_toml_in(toml, Some(&d.0)).unwrap_err();
        assert!(e.contains("root.ndncert"), "{e}");
        // Not both ways at once.
        let both = format!("{toml}[[rib.localhop_trust_anchor]]\ntype = \"any\"\n");
        let e = Config::from_toml_in(&both, Some(&d.0)).unwrap_err();
        assert!(e.starts_with("rib.localhop_security: not with"), "{e}");
    }

    #[test]
    fn a_base64_anchor_holds_its_certificate() {
        let cert = certificate_named("/b64/KEY/k/self/v=1");
        let b64 = data_encoding::BASE64.encode(&cert);
        let toml = format!(
            "[[rib.localhop_trust_anchor]]\ntype = \"base64\"\nbase64_string = \"{b64}\"\n"
        );
        let c = Config::from_toml(&toml).unwrap();
        let a = read(&c.rib.localhop_trust_anchor).unwrap();
        assert_eq!(names(&a), ["/b64/KEY/k/self/v=1"]);
        for (toml, key) in [
            ("type = \"base64\"", "[0].base64_string"),
            (
                "type = \"base64\"\nbase64_string = \"!!\"",
                "[0].base64_string",
            ),
            (
                "type = \"base64\"\nbase64_string = \"AAAA\"",
                "[0].base64_string",
            ),
            (
                "type = \"any\"\nbase64_string = \"AAAA\"",
                "[0].base64_string",
            ),
        ] {
            let e =
                Config::from_toml(&format!("[[rib.localhop_trust_anchor]]\n{toml}\n")).unwrap_err();
            assert!(e.contains(key), "{e}");
        }
    }
}
