//! `[local]`: who is local to the router. The Unix socket's connections are checked against
//! allow-lists of user and group ids (the peer's `SO_PEERCRED` credentials), and TCP and
//! WebSocket faces between loopback addresses are local (may reach `/localhost/nfd`) only if
//! `loopback_tcp_is_local` says so. Read at start.

use serde::Deserialize;

/// Most entries in each allow-list.
pub const MAX_ALLOW_IDS: usize = 256;

/// `[local]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Local {
    /// User ids whose processes may connect to the Unix socket (either list admits; both
    /// empty: everyone, as the socket's mode allows). Default empty.
    pub allow_uids: Vec<u32>,
    /// Group ids (the connecting process's effective group) that may connect. Default empty.
    pub allow_gids: Vec<u32>,
    /// TCP and WebSocket faces between loopback addresses have local scope, as in NFD.
    /// Default false: any local process can open a TCP connection, so only the Unix socket
    /// (with its mode and allow-lists) reaches `/localhost/nfd`.
    pub loopback_tcp_is_local: bool,
}

impl Local {
    /// The face tables' policy.
    pub fn policy(&self) -> face::table::LocalPolicy {
        face::table::LocalPolicy {
            allow_uids: self.allow_uids.clone(),
            allow_gids: self.allow_gids.clone(),
            loopback_tcp_is_local: self.loopback_tcp_is_local,
        }
    }

    /// One line naming the key on error.
    pub fn validate(&self) -> Result<(), String> {
        for (key, ids) in [
            ("local.allow_uids", &self.allow_uids),
            ("local.allow_gids", &self.allow_gids),
        ] {
            if ids.len() > MAX_ALLOW_IDS {
                return Err(format!("{key}: {} ids, at most {MAX_ALLOW_IDS}", ids.len()));
            }
            if ids.contains(&u32::MAX) {
                return Err(format!("{key}: {} is not an id", u32::MAX));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn keys_parse_and_default_to_everyone_and_loopback_not_local() {
        let c = Config::default();
        assert!(c.local.allow_uids.is_empty() && !c.local.loopback_tcp_is_local);
        let c = Config::from_toml(
            "[local]\nallow_uids = [0, 1000]\nallow_gids = [27]\nloopback_tcp_is_local = true\n",
        )
        .unwrap();
        assert_eq!(c.local.allow_uids, [0, 1000]);
        assert_eq!(c.local.policy().allow_gids, [27]);
        assert!(c.local.policy().loopback_tcp_is_local);
    }

    #[test]
    fn bad_lists_name_the_key() {
        let bad = Config::from_toml("[local]\nallow_gids = [4294967295]\n").unwrap_err();
        assert!(bad.starts_with("local.allow_gids:"), "{bad}");
        let ids: Vec<String> = (0..300).map(|i| i.to_string()).collect();
        let bad =
            Config::from_toml(&format!("[local]\nallow_uids = [{}]\n", ids.join(","))).unwrap_err();
        assert!(bad.starts_with("local.allow_uids:"), "{bad}");
        assert!(Config::from_toml("[local]\nallow_uids = [-1]\n").is_err());
        assert!(Config::from_toml("[local]\nallow_users = [0]\n").is_err());
    }
}
