//! `[[authorize]]`: who may send which control command, NFD's `authorizations` section.
//!
//! ```toml
//! [[authorize]]
//! certfile = "/etc/ndn/operator.ndncert"   # or "any"
//! privileges = ["faces", "fib", "cs", "strategy-choice"]
//! ```
//!
//! No entry: NFD's default, every module granted to `any`. A certificate file is an NDN
//! certificate as `ndnsec cert-dump` writes it (base64, line breaks allowed) or the binary Data;
//! a relative path is read from the configuration file's directory (as NFD does; from the
//! working directory for a configuration that is not a file). What the router then checks is
//! [`mgmt::auth`]'s part.

use std::path::Path;

use data_encoding::BASE64;
use serde::Deserialize;

use mgmt::auth::{Authorizations, Authorize, Certificate, MODULES};

/// One `[[authorize]]` entry.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AuthorizeEntry {
    /// `any`, or the path of the signer's certificate.
    pub certfile: String,
    /// The modules granted: `faces`, `fib`, `cs`, `strategy-choice`, `rib`.
    pub privileges: Vec<String>,
}

/// Reads a certificate file: base64 (as ndnsec writes it) or the binary Data (TLV type 6).
pub fn read_certificate(path: &str) -> Result<Certificate, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let der = if bytes.first() == Some(&6) {
        bytes
    } else {
        let text: Vec<u8> = bytes
            .into_iter()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        BASE64
            .decode(&text)
            .map_err(|e| format!("neither a binary certificate nor base64 ({e})"))?
    };
    Certificate::decode(&der)
}

/// Makes every relative certfile of `entries` relative to `dir` (the configuration file's
/// directory), as NFD resolves them; `any`, absolute paths and `dir = None` leave them as they
/// are.
pub fn resolve_in(entries: &mut [AuthorizeEntry], dir: Option<&Path>) {
    let Some(dir) = dir else {
        return;
    };
    for e in entries {
        if e.certfile != "any" && Path::new(&e.certfile).is_relative() {
            e.certfile = dir.join(&e.certfile).display().to_string();
        }
    }
}

/// The authorizations `entries` grant; the error names the entry and what is wrong in one line.
pub fn load(entries: &[AuthorizeEntry]) -> Result<Authorizations, String> {
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let cert = match e.certfile.as_str() {
            "any" => None,
            path => Some(read_certificate(path).map_err(|why| {
                format!("authorize[{i}].certfile: cannot load certfile {path}: {why}")
            })?),
        };
        if let Some(p) = e.privileges.iter().find(|p| !MODULES.contains(&p.as_str())) {
            return Err(format!(
                "authorize[{i}].privileges: unknown module {p:?} (one of {})",
                MODULES.join(", ")
            ));
        }
        out.push(Authorize {
            cert,
            privileges: e.privileges.clone(),
        });
    }
    Authorizations::new(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn entries_parse_and_default_to_any() {
        let c = Config::from_toml(
            "[[authorize]]\ncertfile = \"any\"\nprivileges = [\"faces\", \"rib\"]\n",
        )
        .unwrap();
        assert_eq!(c.authorizations.len(), 1);
        let a = load(&c.authorizations).unwrap();
        assert!(a.is_open("faces") && a.is_open("rib") && !a.is_open("fib"));
        let d = load(&Config::default().authorizations).unwrap();
        assert!(MODULES.iter().all(|m| d.is_open(m)));
    }

    #[test]
    fn bad_entries_are_one_line_naming_them() {
        let e = Config::from_toml("[[authorize]]\ncertfile = \"any\"\n").unwrap_err();
        assert!(e.contains("privileges"), "{e}");
        let e = Config::from_toml(
            "[[authorize]]\ncertfile = \"any\"\nprivileges = [\"faces\"]\n\
             [[authorize]]\ncertfile = \"any\"\nprivileges = [\"routes\"]\n",
        )
        .unwrap_err();
        assert!(e.contains("authorize[1]") && e.contains("routes"), "{e}");
        let e = Config::from_toml(
            "[[authorize]]\ncertfile = \"/nonexistent/op.cert\"\nprivileges = [\"fib\"]\n",
        )
        .unwrap_err();
        assert!(
            e.contains("authorize[0].certfile") && e.contains("/nonexistent/op.cert"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }

    /// A P-256 key's certificate, `/op/KEY/k/self/v=1` (binary).
    fn certificate() -> Vec<u8> {
        certificate_named("/op/KEY/k/self/v=1")
    }

    /// A P-256 key's certificate named `name` (binary).
    pub(crate) fn certificate_named(name: &str) -> Vec<u8> {
        // The point is a valid one: the generator.
        let point = [
            "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296",
            "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5",
        ]
        .concat();
        let point: Vec<u8> = (0..point.len() / 2)
            .map(|i| u8::from_str_radix(&point[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let name = wire::Name::from_uri(name).unwrap();
        let mut d = wire::Data::new(name, mgmt::auth::p256_spki(&point));
        d.meta_info = Some(wire::MetaInfo {
            content_type: Some(wire::data::content_type::KEY),
            freshness_ms: None,
            final_block_id: None,
        });
        d.sign_digest_sha256();
        d.to_wire()
    }

    #[test]
    fn certificate_files_in_base64_or_binary() {
        let dir = std::env::temp_dir().join(format!("cascade-authz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bin = certificate();
        let b64 = BASE64.encode(&bin);
        let wrapped: Vec<&str> = (0..b64.len())
            .step_by(64)
            .map(|i| &b64[i..(i + 64).min(b64.len())])
            .collect();
        let (p1, p2, p3) = (dir.join("b.cert"), dir.join("a.ndncert"), dir.join("bad"));
        std::fs::write(&p1, &bin).unwrap();
        std::fs::write(&p2, wrapped.join("\n") + "\n").unwrap();
        std::fs::write(&p3, "not a certificate").unwrap();
        for p in [&p1, &p2] {
            let c = read_certificate(p.to_str().unwrap()).unwrap();
            assert_eq!(c.key_name(), wire::Name::from_uri("/op/KEY/k").unwrap());
        }
        let e = read_certificate(p3.to_str().unwrap()).unwrap_err();
        assert!(e.contains("base64"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn relative_certfiles_are_read_from_the_config_files_directory() {
        let dir = std::env::temp_dir().join(format!("cascade-authz-rel-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("keys")).unwrap();
        std::fs::write(dir.join("keys/op.cert"), certificate()).unwrap();
        let text = "[[authorize]]\ncertfile = \"keys/op.cert\"\nprivileges = [\"fib\"]\n\
                    [[authorize]]\ncertfile = \"any\"\nprivileges = [\"faces\"]\n";
        let c = Config::from_toml_in(text, Some(&dir)).unwrap();
        let want = dir.join("keys/op.cert").display().to_string();
        assert_eq!(c.authorizations[0].certfile, want);
        assert_eq!(c.authorizations[1].certfile, "any");
        let a = load(&c.authorizations).unwrap();
        assert!(!a.is_open("fib") && a.is_open("faces"));
        // Not from the working directory (which has no keys/op.cert)...
        assert!(!Path::new("keys/op.cert").exists());
        let e = Config::from_toml(text).unwrap_err();
        assert!(
            e.contains("authorize[0].certfile: cannot load certfile keys/op.cert"),
            "{e}"
        );
        // ...and an absolute path stays as it is, wherever the file is.
        let abs = format!("[[authorize]]\ncertfile = \"{want}\"\nprivileges = [\"rib\"]\n");
        let c = Config::from_toml_in(&abs, Some(Path::new("/nonexistent"))).unwrap();
        assert_eq!(c.authorizations[0].certfile, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
