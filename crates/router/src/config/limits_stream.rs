//! `[connections]`: the bounds of connection faces (Unix, TCP and WebSocket): the byte budget
//! all stream faces' send queues share, the idle and first-packet timeouts of accepted
//! connections, and the most TCP and WebSocket connections one address may hold.

use serde::Deserialize;

/// `[connections]`: the bounds of connection faces (Unix, TCP and WebSocket): the byte budget
/// all stream faces' send queues share, the idle and first-packet timeouts of accepted
/// connections, the most TCP and WebSocket connections one address may hold.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Connections {
    /// Bytes all stream faces' send queues may hold together.
    pub send_queue_budget_bytes: usize,
    /// Seconds an accepted TCP or WebSocket connection may pass without a packet either way
    /// before it is closed (0: never).
    pub idle_timeout_s: u64,
    /// Seconds an accepted TCP or WebSocket connection has to send its first packet (0: no
    /// limit).
    pub first_packet_timeout_s: u64,
    /// Apply both timeouts to Unix connections (local applications) too.
    pub unix_timeouts: bool,
    /// Most TCP and WebSocket connections accepted from one address at once (0: no limit).
    pub max_per_address: usize,
}

impl Default for Connections {
    fn default() -> Self {
        let l = face::StreamLimits::default();
        Connections {
            send_queue_budget_bytes: l.send_queue_budget_bytes,
            idle_timeout_s: l.idle_timeout_ms / 1000,
            first_packet_timeout_s: l.first_packet_timeout_ms / 1000,
            unix_timeouts: l.unix_timeouts,
            max_per_address: l.max_connections_per_address,
        }
    }
}

impl Connections {
    /// The face table's limits.
    pub fn limits(&self) -> face::StreamLimits {
        face::StreamLimits {
            send_queue_budget_bytes: self.send_queue_budget_bytes,
            idle_timeout_ms: self.idle_timeout_s.saturating_mul(1000),
            first_packet_timeout_ms: self.first_packet_timeout_s.saturating_mul(1000),
            unix_timeouts: self.unix_timeouts,
            max_connections_per_address: self.max_per_address,
        }
    }

    /// Checks the ranges; `send_queue_bytes` is `[faces] send_queue_bytes` (one face's queue
    /// must fit in the budget).
    pub fn validate(&self, send_queue_bytes: usize) -> Result<(), String> {
        let b = self.send_queue_budget_bytes;
        if b < send_queue_bytes || b > 1 << 40 {
            return Err(format!(
                "connections.send_queue_budget_bytes: {b} is out of range \
                 (faces.send_queue_bytes {send_queue_bytes} to 2^40)"
            ));
        }
        for (key, v) in [
            ("connections.idle_timeout_s", self.idle_timeout_s),
            (
                "connections.first_packet_timeout_s",
                self.first_packet_timeout_s,
            ),
        ] {
            if v > 86_400 * 365 {
                return Err(format!("{key}: {v} is out of range (0 to one year)"));
            }
        }
        if self.max_per_address > 1 << 20 {
            return Err(format!(
                "connections.max_per_address: {} is out of range (0 to 2^20)",
                self.max_per_address
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_face_tables_and_ranges_are_checked() {
        let c = Connections::default();
        assert_eq!(c.limits(), face::StreamLimits::default());
        assert_eq!(c.validate(16 << 20), Ok(()));
        let small = Connections {
            send_queue_budget_bytes: 1000,
            ..c.clone()
        };
        let e = small.validate(16 << 20).unwrap_err();
        assert!(e.starts_with("connections.send_queue_budget_bytes:"), "{e}");
        let long = Connections {
            idle_timeout_s: u64::MAX,
            ..c.clone()
        };
        assert!(long
            .validate(1)
            .unwrap_err()
            .starts_with("connections.idle_timeout_s:"));
        let parsed: crate::config::Config = toml::from_str(
            "[connections]\nidle_timeout_s = 5\nfirst_packet_timeout_s = 2\nmax_per_address = 3\n",
        )
        .unwrap();
        let l = parsed.connections.limits();
        assert_eq!(
            (
                l.idle_timeout_ms,
                l.first_packet_timeout_ms,
                l.max_connections_per_address
            ),
            (5000, 2000, 3)
        );
        assert!(toml::from_str::<crate::config::Config>("[connections]\nidle = 1\n").is_err());
    }
}
