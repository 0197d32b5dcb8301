//! The face table's limits that can change while it runs (a configuration reload): they are
//! read where they apply, at each packet, datagram or sweep, so a new value holds from the next
//! one on. Faces already open keep what they hold (a send queue longer than a lowered bound
//! drains; on-demand faces beyond a lowered quota are evicted as new remotes come). The
//! creation budget of on-demand faces takes its new rate and burst at once, keeping the
//! tokens it holds up to the new burst.
//!
//! The connection limits ([`StreamLimits`]) and who is local ([`LocalPolicy`]) change the same
//! way: a lowered send-queue budget refuses packets until the queues drain below it, the
//! timeouts hold from the next sweep, the per-address limit and the allow-lists from the next
//! connection accepted (the connections open stay), and the scope of loopback TCP and
//! WebSocket faces from the next face made (the open faces keep theirs). So does the
//! congestion marking default ([`super::FaceConfig::congestion_marking`]): the faces made from
//! then on take it, the open ones keep theirs (as NFD's channels do at a reload).

use super::ws::ws_config;
use super::{FaceIo, FaceTable, LocalPolicy, StreamLimits};

/// The limits of a [`FaceTable`] that [`FaceTable::set_runtime_limits`] changes while it runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuntimeLimits {
    /// [`super::FaceConfig::send_queue_bytes`]: the stream and WebSocket faces' send queues.
    pub send_queue_bytes: usize,
    /// [`super::FaceConfig::udp_idle_timeout_ms`].
    pub udp_idle_timeout_ms: u64,
    /// [`super::FaceConfig::malformed_limit`].
    pub malformed_limit: u64,
    /// [`super::FaceBounds::max_on_demand_faces`] (of this table: its share).
    pub max_on_demand_faces: usize,
    /// [`super::FaceBounds::max_on_demand_per_host`].
    pub max_on_demand_per_host: usize,
    /// [`super::FaceBounds::unproven_send_ratio`].
    pub unproven_send_ratio: u64,
    /// [`super::FaceBounds::unproven_send_bytes_per_s`] (of this table: its share).
    pub unproven_send_bytes_per_s: u64,
    /// [`super::FaceBounds::on_demand_faces_per_s`] (of this table: its share).
    pub on_demand_faces_per_s: u64,
    /// [`super::FaceBounds::on_demand_faces_burst`] (of this table: its share).
    pub on_demand_faces_burst: u64,
    /// [`super::FaceConfig::stream`] (the send-queue budget: of this table, its share).
    pub stream: StreamLimits,
    /// [`super::FaceConfig::local`].
    pub local: LocalPolicy,
    /// [`super::FaceConfig::congestion_marking`].
    pub congestion_marking: bool,
}

impl RuntimeLimits {
    /// One table's share of limits meant for `tables` tables together (the on-demand quota,
    /// the unproven faces' send budget and the send-queue budget are divided, as at start-up).
    pub fn share(mut self, tables: usize) -> RuntimeLimits {
        let n = tables.max(1);
        if self.max_on_demand_faces > 0 {
            self.max_on_demand_faces = (self.max_on_demand_faces / n).max(1);
        }
        self.unproven_send_bytes_per_s = self.unproven_send_bytes_per_s.div_ceil(n as u64);
        self.on_demand_faces_per_s = self.on_demand_faces_per_s.div_ceil(n as u64);
        self.on_demand_faces_burst = self.on_demand_faces_burst.div_ceil(n as u64);
        let budget = &mut self.stream.send_queue_budget_bytes;
        *budget = budget.div_ceil(n);
        self
    }
}

impl FaceTable {
    /// The limits that can change while the table runs, as they are.
    pub fn runtime_limits(&self) -> RuntimeLimits {
        let (c, b) = (&self.cfg, &self.cfg.bounds);
        RuntimeLimits {
            send_queue_bytes: c.send_queue_bytes,
            udp_idle_timeout_ms: c.udp_idle_timeout_ms,
            malformed_limit: c.malformed_limit,
            max_on_demand_faces: b.max_on_demand_faces,
            max_on_demand_per_host: b.max_on_demand_per_host,
            unproven_send_ratio: b.unproven_send_ratio,
            unproven_send_bytes_per_s: b.unproven_send_bytes_per_s,
            on_demand_faces_per_s: b.on_demand_faces_per_s,
            on_demand_faces_burst: b.on_demand_faces_burst,
            stream: c.stream,
            local: c.local.clone(),
            congestion_marking: c.congestion_marking,
        }
    }

    /// Changes the limits that can change while the table runs (see the module docs); the
    /// open WebSocket faces' write buffers take the new send queue bound too.
    pub fn set_runtime_limits(&mut self, l: RuntimeLimits) {
        let c = &mut self.cfg;
        c.send_queue_bytes = l.send_queue_bytes;
        c.udp_idle_timeout_ms = l.udp_idle_timeout_ms;
        c.malformed_limit = l.malformed_limit;
        c.bounds.max_on_demand_faces = l.max_on_demand_faces;
        c.bounds.max_on_demand_per_host = l.max_on_demand_per_host;
        c.bounds.unproven_send_ratio = l.unproven_send_ratio;
        c.bounds.unproven_send_bytes_per_s = l.unproven_send_bytes_per_s;
        if self.unproven.budget.rate() != l.unproven_send_bytes_per_s {
            self.unproven.budget.set_rate(l.unproven_send_bytes_per_s);
        }
        c.bounds.on_demand_faces_per_s = l.on_demand_faces_per_s;
        c.bounds.on_demand_faces_burst = l.on_demand_faces_burst;
        let (per_s, burst) = (l.on_demand_faces_per_s, l.on_demand_faces_burst);
        self.on_demand.set_creation_bounds(per_s, burst);
        c.stream = l.stream;
        c.local = l.local;
        c.congestion_marking = l.congestion_marking;
        let sized = ws_config(c.max_packet_bytes, c.send_queue_bytes);
        for f in self.faces.values_mut() {
            if let FaceIo::Ws(w) = &mut f.io {
                w.ws.set_config(|ws| {
                    ws.write_buffer_size = sized.write_buffer_size;
                    ws.max_write_buffer_size = sized.max_write_buffer_size;
                });
            }
        }
    }
}
