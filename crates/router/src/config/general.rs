//! The operator's settings: `[general]` (the user and group the router drops to, the log
//! filter, as NFD's `general` section) and the Unix socket's mode and group (`[listen]
//! unix_mode`, `unix_group`), with their checks.

use serde::Deserialize;

/// `[general]`: what the process runs as and what it logs.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct General {
    /// User to run as once the listeners are bound and the L2 store is open (empty: stay).
    pub user: String,
    /// Group to run as (empty: the user's primary group, or stay if `user` is empty too).
    pub group: String,
    /// Log filter in `RUST_LOG` syntax (`info,router=debug`); `RUST_LOG` in the environment
    /// wins over it (empty: `info`, or what `-v` asks for).
    pub log: String,
}

/// Default of `[listen] unix_mode`: everyone may connect, as NFD's Unix socket.
pub const DEFAULT_UNIX_MODE: &str = "0666";

/// `[listen] unix_mode` as permission bits: octal digits, at most `0777`.
pub fn parse_unix_mode(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8)
        .ok()
        .filter(|m| *m <= 0o777 && !s.is_empty())
        .ok_or_else(|| {
            format!("listen.unix_mode: {s:?} is not octal permission bits like \"0660\"")
        })
}

impl General {
    /// Checks the names' syntax (whether they exist is checked at start: [`crate::privileges`]).
    pub fn validate(&self) -> Result<(), String> {
        for (key, v) in [("general.user", &self.user), ("general.group", &self.group)] {
            if v.contains(['\0', ':', '/']) || v.trim() != v {
                return Err(format!("{key}: {v:?} is not a user or group name"));
            }
        }
        if !self.group.is_empty() && self.user.is_empty() {
            return Err("general.group: set without general.user (both, or user alone)".into());
        }
        Ok(())
    }
}

/// Checks `[general]` and the Unix socket's mode and group.
pub(super) fn validate(cfg: &super::Config) -> Result<(), String> {
    cfg.general.validate()?;
    parse_unix_mode(&cfg.listen.unix_mode)?;
    let g = &cfg.listen.unix_group;
    if g.contains(['\0', ':', '/']) || g.trim() != g {
        return Err(format!("listen.unix_group: {g:?} is not a group name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn unix_mode_is_octal_up_to_0777() {
        assert_eq!(parse_unix_mode("0666"), Ok(0o666));
        assert_eq!(parse_unix_mode("660"), Ok(0o660));
        for bad in ["", "0999", "1777", "rw", "-1"] {
            let e = parse_unix_mode(bad).unwrap_err();
            assert!(e.starts_with("listen.unix_mode:"), "{bad}: {e}");
        }
    }

    #[test]
    fn general_keys_parse_and_are_checked() {
        let c = Config::from_toml(
            "[general]\nuser = \"nobody\"\nlog = \"info,router=debug\"\n\
             [listen]\nunix_mode = \"0660\"\nunix_group = \"ndn\"\n",
        )
        .unwrap();
        assert_eq!(c.general.user, "nobody");
        assert_eq!(c.general.log, "info,router=debug");
        assert_eq!(c.listen.unix_mode, "0660");
        assert_eq!(c.listen.unix_group, "ndn");
        let d = Config::default();
        assert_eq!(d.listen.unix_mode, DEFAULT_UNIX_MODE);
        assert!(d.general.user.is_empty() && d.listen.unix_group.is_empty());
        for (text, key) in [
            ("[listen]\nunix_mode = \"0888\"", "listen.unix_mode"),
            ("[listen]\nunix_group = \"a:b\"", "listen.unix_group"),
            ("[general]\nuser = \"a/b\"", "general.user"),
            ("[general]\ngroup = \"ndn\"", "general.group"),
        ] {
            let e = Config::from_toml(text).unwrap_err();
            assert!(e.starts_with(key), "{text}: {e}");
        }
    }
}
