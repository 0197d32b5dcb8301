//! `/metrics`: the router's figures in the OpenMetrics text format (which Prometheus scrapes),
//! encoded by the `prometheus-client` crate from one [`Figures`] snapshot.
//!
//! Names (all prefixed `cascade_`; counters end in `_total` in the exposition):
//! `forwarder_*` are exactly `status/general`'s figures (what `cascade ctl status` prints);
//! `face_*` carry `face` and `remote` labels, `worker_*` a `worker` label, `cs_*` a `tier`
//! label (`ram`, `l2`); `websocket_handshakes` an `outcome` label; `drops` sums every drop by
//! `reason`; `worker_*_seconds` are latency histograms; `http_*` count the endpoint's own work.

use std::fmt;

use engine::fw::pipeline::{DropReason, DROP_REASONS};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::Figures;

/// A sample's labels.
type Labels = Vec<(&'static str, String)>;

/// A metric family being gathered: its samples.
struct Family {
    name: String,
    help: &'static str,
    kind: MetricType,
    samples: Vec<(Labels, u64)>,
}

/// The families of one scrape, in order.
#[derive(Default)]
struct Families(Vec<Family>);

impl Families {
    fn add(
        &mut self,
        kind: MetricType,
        name: &str,
        help: &'static str,
        samples: Vec<(Labels, u64)>,
    ) {
        self.0.push(Family {
            name: name.to_owned(),
            help,
            kind,
            samples,
        });
    }

    fn counter(&mut self, name: &str, help: &'static str, samples: Vec<(Labels, u64)>) {
        self.add(MetricType::Counter, name, help, samples);
    }

    fn gauge(&mut self, name: &str, help: &'static str, samples: Vec<(Labels, u64)>) {
        self.add(MetricType::Gauge, name, help, samples);
    }
}

/// A sample without labels.
fn one(v: u64) -> Vec<(Labels, u64)> {
    vec![(Vec::new(), v)]
}

/// `DropReason::NoRoute` as `no_route`.
fn snake(reason: DropReason) -> String {
    let mut out = String::new();
    for (i, ch) in format!("{reason:?}").chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// The whole exposition, `# EOF` included.
pub fn render_metrics(f: &Figures) -> String {
    let mut registry = Registry::with_prefix("cascade");
    registry.register_collector(Box::new(Scrape(gather(f), f.clone())));
    let mut out = String::new();
    // Writing into a String cannot fail; a collector's error would be a bug shown as such.
    if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &registry) {
        out = format!("# encoding failed: {e}\n# EOF\n");
    }
    out
}

fn gather(f: &Figures) -> Families {
    let mut m = Families::default();
    forwarder(&mut m, f);
    faces(&mut m, f);
    workers(&mut m, f);
    content_store(&mut m, f);
    face_table(&mut m, f);
    drops(&mut m, f);
    m.counter(
        "mgmt_commands_refused",
        "Control commands the authorizations refused, by reason.",
        f.view
            .management
            .refused_commands
            .by_reason()
            .into_iter()
            .map(|(r, v)| (vec![("reason", r.to_owned())], v))
            .collect(),
    );
    m.counter(
        "mgmt_auth_evicted",
        "What the authorizations forgot to stay within their bounds, by kind.",
        f.view
            .management
            .refused_commands
            .evictions()
            .into_iter()
            .map(|(k, v)| (vec![("kind", k.to_owned())], v))
            .collect(),
    );
    let h = &f.http;
    m.counter(
        "http_requests",
        "Requests the HTTP endpoint answered.",
        one(h.requests),
    );
    m.counter(
        "http_refused",
        "Connections or requests the HTTP endpoint refused, by reason.",
        [
            ("connections", h.refused_connections),
            ("too_large", h.too_large),
            ("bad_request", h.bad_requests),
            ("timeout", h.timeouts),
            ("unavailable", h.unavailable),
        ]
        .into_iter()
        .map(|(r, v)| (vec![("reason", r.to_owned())], v))
        .collect(),
    );
    m
}

/// `status/general`, named after `cascade ctl status --json`'s keys without their `n_`.
fn forwarder(m: &mut Families, f: &Figures) {
    let g = &f.view.general;
    for (name, v) in [
        ("forwarder_in_interests", g.n_in_interests),
        ("forwarder_in_data", g.n_in_data),
        ("forwarder_in_nacks", g.n_in_nacks),
        ("forwarder_out_interests", g.n_out_interests),
        ("forwarder_out_data", g.n_out_data),
        ("forwarder_out_nacks", g.n_out_nacks),
        ("forwarder_satisfied_interests", g.n_satisfied_interests),
        ("forwarder_unsatisfied_interests", g.n_unsatisfied_interests),
    ] {
        m.counter(
            name,
            "As status/general (NFD's ForwarderStatus) counts it.",
            one(v),
        );
    }
    for (name, v) in [
        ("forwarder_name_tree_entries", g.n_name_tree_entries),
        ("forwarder_fib_entries", g.n_fib_entries),
        ("forwarder_pit_entries", g.n_pit_entries),
        ("forwarder_measurements_entries", g.n_measurements_entries),
        ("forwarder_cs_entries", g.n_cs_entries),
    ] {
        m.gauge(
            name,
            "As status/general (NFD's ForwarderStatus) counts it.",
            one(v),
        );
    }
    m.gauge("faces", "Faces open.", one(f.view.faces.len() as u64));
    m.gauge(
        "workers",
        "Forwarding workers that answered.",
        one(f.view.workers.len() as u64),
    );
}

fn faces(m: &mut Families, f: &Figures) {
    let labels = |d: &face::FaceDesc| vec![("face", d.id.to_string()), ("remote", d.uri.clone())];
    type Get = fn(&face::FaceCounters) -> u64;
    let per = |get: Get| -> Vec<(Labels, u64)> {
        f.view
            .faces
            .iter()
            .map(|d| (labels(d), get(&d.counters)))
            .collect()
    };
    let counters: [(&str, &'static str, Get); 8] = [
        (
            "face_in_interests",
            "Interests received on the face.",
            |c| c.in_interests,
        ),
        ("face_in_data", "Data received on the face.", |c| c.in_data),
        ("face_in_nacks", "Nacks received on the face.", |c| {
            c.in_nacks
        }),
        ("face_out_interests", "Interests sent on the face.", |c| {
            c.out_interests
        }),
        ("face_out_data", "Data sent on the face.", |c| c.out_data),
        ("face_out_nacks", "Nacks sent on the face.", |c| c.out_nacks),
        (
            "face_in_bytes",
            "Link-layer bytes received on the face.",
            |c| c.in_bytes,
        ),
        (
            "face_out_bytes",
            "Link-layer bytes sent on the face.",
            |c| c.out_bytes,
        ),
    ];
    for (name, help, get) in counters {
        m.counter(name, help, per(get));
    }
    m.counter(
        "face_congestion_marks",
        "Packets sent with an NDNLPv2 CongestionMark: the face's send queue was congested.",
        per(|c| c.congestion_marks),
    );
    m.gauge(
        "face_send_queue_bytes",
        "Bytes in the face's send queue (the router's, plus the kernel's socket queue).",
        per(|c| c.send_queue_bytes),
    );
    let mut samples = Vec::new();
    for d in &f.view.faces {
        for (reason, v) in face_drops(&d.counters) {
            let mut l = labels(d);
            l.push(("reason", reason.to_owned()));
            samples.push((l, v));
        }
    }
    m.counter(
        "face_drops",
        "Packets the face dropped, by reason (send_queue_full: its send queue was full).",
        samples,
    );
}

/// A face's drops by reason.
fn face_drops(c: &face::FaceCounters) -> [(&'static str, u64); 4] {
    [
        ("malformed", c.malformed),
        ("no_buffer", c.drop_no_buffer),
        ("ring_full", c.drop_ring_full),
        ("send_queue_full", c.drop_queue_full),
    ]
}

fn workers(m: &mut Families, f: &Figures) {
    type Get = fn(&mgmt::WorkerStats) -> u64;
    let w = &f.view.workers;
    let label = |i: usize| vec![("worker", i.to_string())];
    let per = |get: Get| -> Vec<(Labels, u64)> {
        w.iter()
            .enumerate()
            .map(|(i, s)| (label(i), get(s)))
            .collect()
    };
    m.gauge(
        "worker_pit_entries",
        "PIT entries of the worker.",
        per(|s| s.pit_len as u64),
    );
    m.gauge(
        "worker_cs_entries",
        "RAM CS entries of the worker.",
        per(|s| s.cs_len as u64),
    );
    let counters: [(&str, &'static str, Get); 13] = [
        (
            "worker_in_interests",
            "Interests the worker's engine took from faces.",
            |s| s.counters.in_interests,
        ),
        (
            "worker_handed_on_in",
            "CanBePrefix Interests another worker's L2 missed and handed on to this worker.",
            |s| s.counters.handed_on_in,
        ),
        ("worker_in_data", "Data the worker's engine took.", |s| {
            s.counters.in_data
        }),
        ("worker_in_nacks", "Nacks the worker's engine took.", |s| {
            s.counters.in_nacks
        }),
        (
            "worker_out_interests",
            "Interests the worker forwarded.",
            |s| s.counters.out_interests,
        ),
        ("worker_out_data", "Data the worker sent.", |s| {
            s.counters.out_data
        }),
        ("worker_out_nacks", "Nacks the worker sent.", |s| {
            s.counters.out_nacks
        }),
        ("worker_satisfied", "PIT entries Data satisfied.", |s| {
            s.counters.satisfied
        }),
        (
            "worker_unsatisfied",
            "PIT entries that expired unsatisfied.",
            |s| s.counters.unsatisfied,
        ),
        ("worker_cs_hits", "Interests the RAM CS answered.", |s| {
            s.cs_hits
        }),
        (
            "worker_cs_misses",
            "Interests the RAM CS did not answer.",
            |s| s.cs_misses,
        ),
        ("worker_fib_lookups", "Longest-prefix-match lookups.", |s| {
            s.counters.lpm.lookups
        }),
        ("worker_fib_probes", "FIB hash-table probes.", |s| {
            s.counters.lpm.probes
        }),
    ];
    for (name, help, get) in counters {
        m.counter(name, help, per(get));
    }
    let rings = f.input_ring_full.iter().enumerate();
    m.counter(
        "worker_input_ring_full",
        "Packets the I/O loop dropped because the worker's input ring was full.",
        rings.map(|(i, &v)| (label(i), v)).collect(),
    );
    worker_events(m, w);
}

/// The workers' drops by reason and NB-Cache's events.
fn worker_events(m: &mut Families, w: &[mgmt::WorkerStats]) {
    let labelled = |pairs: &dyn Fn(&mgmt::WorkerStats) -> Vec<(String, u64)>, key| {
        let mut out = Vec::new();
        for (i, s) in w.iter().enumerate() {
            for (l, v) in pairs(s) {
                out.push((vec![("worker", i.to_string()), (key, l)], v));
            }
        }
        out
    };
    let drops = labelled(
        &|s| {
            DropReason::ALL
                .iter()
                .map(|&r| (snake(r), s.counters.drops[r.index()]))
                .collect()
        },
        "reason",
    );
    m.counter(
        "worker_drops",
        "Packets the worker's engine dropped, by reason.",
        drops,
    );
    let nbcache = labelled(
        &|s| {
            let b = &s.counters.bypass;
            let c = &s.counters.congestion;
            [
                ("filter_skips", b.filter_skips),
                ("filter_false_positives", b.filter_false_positives),
                ("queue_bypasses", b.queue_bypasses),
                ("queue_no_upstream", b.queue_no_upstream),
                ("nack_alpha_sent", c.alpha_sent),
                ("nack_beta_sent", c.beta_sent),
                ("nack_idle_sent", c.idle_sent),
                ("nack_alpha_received", c.alpha_received),
                ("nack_beta_received", c.beta_received),
                ("faces_unavailable", c.faces_unavailable),
                ("bypass_unavailable", c.bypass_unavailable),
                ("data_marked", c.data_marked),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect()
        },
        "event",
    );
    m.counter(
        "worker_nbcache",
        "NB-Cache (Pan et al.): Bloom-filter skips and false positives, queue bypasses, \
         NB-CC signals and Data marked, by event.",
        nbcache,
    );
    let new_nexthop = labelled(
        &|s| {
            let n = &s.counters.new_nexthop;
            [
                ("sent", n.sent),
                ("unwatched", n.unwatched),
                ("scans", n.scans),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect()
        },
        "event",
    );
    m.counter(
        "worker_new_nexthop",
        "Multicast's afterNewNextHop (NFD): Interests sent to next hops added while they \
         waited, PIT entries not watched (queue full), scans of the watch, by event.",
        new_nexthop,
    );
}

fn content_store(m: &mut Families, f: &Figures) {
    let (cs, l2) = (&f.view.cs, f.view.tiers.as_ref());
    let tier = |t: &str| vec![("tier", t.to_owned())];
    let both = |ram: u64, l2v: Option<u64>| {
        let mut v = vec![(tier("ram"), ram)];
        if let Some(x) = l2v {
            v.push((tier("l2"), x));
        }
        v
    };
    m.gauge(
        "cs_capacity",
        "Content store capacity (RAM: packets; L2: chunks).",
        both(cs.capacity, l2.map(|t| t.capacity)),
    );
    m.gauge(
        "cs_entries",
        "Content store entries.",
        both(cs.n_cs_entries, l2.map(|t| t.n_entries)),
    );
    m.counter(
        "cs_hits",
        "Content store hits (L2: lookups that went to storage).",
        both(cs.n_hits, l2.map(|t| t.n_hits)),
    );
    m.counter(
        "cs_misses",
        "Content store misses.",
        both(cs.n_misses, l2.map(|t| t.n_misses)),
    );
    if let Some(t) = l2 {
        l2_tier(m, t);
    }
}

/// The L2 tier's counters and gauges (summed over the workers).
fn l2_tier(m: &mut Families, t: &mgmt::dataset::tiers::CsTierInfo) {
    for (name, help, v) in [
        ("cs_l2_reads", "L2 reads submitted.", t.n_reads),
        ("cs_l2_read_bytes", "L2 bytes read.", t.n_read_bytes),
        ("cs_l2_writes", "L2 writes submitted.", t.n_writes),
        ("cs_l2_write_bytes", "L2 bytes written.", t.n_write_bytes),
        (
            "cs_l2_checksum_failures",
            "L2 chunks that failed their checksum.",
            t.n_checksum_failures,
        ),
        (
            "cs_l2_prefetched",
            "Prefetched chunks the RAM CS took.",
            t.n_prefetched,
        ),
        (
            "cs_l2_prefetch_used",
            "Prefetched chunks later served.",
            t.n_prefetch_used,
        ),
        (
            "cs_l2_admit_dropped",
            "Chunks not admitted: the write backlog was full.",
            t.n_admit_dropped,
        ),
        (
            "cs_l2_admit_taken",
            "Chunks workers took for L2 from their own traffic.",
            t.n_admit_taken,
        ),
        (
            "cs_l2_admit_received",
            "Chunks workers received from the worker that took them.",
            t.n_admit_received,
        ),
        (
            "cs_l2_admit_offered",
            "Chunks offered to a store with an outcome (not a full write queue).",
            t.n_admit_offered,
        ),
        (
            "cs_l2_admit_handed",
            "Chunks handed over to the worker that owns them.",
            t.n_admit_handed,
        ),
        (
            "cs_l2_admit_malformed",
            "Hand-overs received that carried no chunk (refused).",
            t.n_admit_malformed,
        ),
        (
            "cs_l2_io_errors",
            "L2 read and write errors.",
            t.n_io_errors,
        ),
        (
            "cs_l2_input_held",
            "Worker loop iterations that held input back while L2 writes were in flight.",
            t.n_input_held,
        ),
        (
            "cs_l2_deferred",
            "L2 lookups that found the queue full and waited for room.",
            t.n_deferred,
        ),
        (
            "cs_l2_prefix_lookups",
            "CanBePrefix lookups asked of the L2 prefix index.",
            t.n_prefix_lookups,
        ),
        (
            "cs_l2_prefix_pending",
            "CanBePrefix L2 lookups answered pending (a batch under the prefix is read).",
            t.n_prefix_pending,
        ),
        (
            "cs_l2_prefix_stale",
            "Pending CanBePrefix L2 lookups whose batch had no (fresh) chunk.",
            t.n_prefix_stale,
        ),
        (
            "cs_l2_prefix_handovers",
            "CanBePrefix L2 misses handed on to the next worker whose L2 may hold the name.",
            t.n_prefix_handovers,
        ),
        (
            "cs_l2_prefix_handovers_full",
            "CanBePrefix L2 misses whose hand-over found the next worker's ring full.",
            t.n_prefix_handovers_full,
        ),
        (
            "cs_l2_prefix_missed",
            "CanBePrefix L2 lookups completed without data (no chunk under the prefix, a filter's false positive included, or no queue room).",
            t.n_prefix_missed,
        ),
    ] {
        m.counter(name, help, one(v));
    }
    m.gauge(
        "cs_l2_in_flight",
        "L2 operations in flight.",
        one(t.n_in_flight),
    );
    m.gauge(
        "cs_l2_workers_off",
        "Workers whose L2 a storage fault turned off.",
        one(t.n_workers_off),
    );
}

/// What the face tables' bounds refused: packets dropped, by reason (`/metrics`' `event`
/// label, `/status.json`'s `face_table_refused` keys).
pub(super) fn bounds_refused(b: &face::table::BoundCounters) -> [(&'static str, u64); 8] {
    [
        ("on_demand_refused_budget", b.on_demand_refused_budget),
        ("on_demand_refused_host", b.on_demand_refused_host),
        ("on_demand_refused_malformed", b.on_demand_refused_malformed),
        ("on_demand_refused_full", b.on_demand_refused_full),
        ("on_demand_refused_ids", b.on_demand_refused_ids),
        ("unproven_send", b.unproven_send_dropped),
        ("unproven_budget", b.unproven_budget_dropped),
        ("reassembly_refused", b.reassembly_refused),
    ]
}

/// The WebSocket handshakes by outcome (`/metrics`' `outcome` label, `/status.json`'s keys).
pub(super) fn ws_outcomes(w: &face::table::WsCounters) -> [(&'static str, u64); 6] {
    [
        ("accepted", w.handshakes_accepted),
        ("completed", w.handshakes_done),
        ("timeout", w.handshakes_timed_out),
        ("bad_request", w.handshakes_failed),
        ("tls_error", w.handshakes_tls_failed),
        ("refused", w.handshakes_refused),
    ]
}

/// The face tables' bounds: what they refused, evicted and hold.
fn face_table(m: &mut Families, f: &Figures) {
    let b = &f.bounds;
    let mut events: Vec<(Labels, u64)> = bounds_refused(b)
        .into_iter()
        .chain([
            ("on_demand_created", b.on_demand_created),
            ("on_demand_evicted", b.on_demand_evicted),
            ("face_ids_reused_early", b.face_ids_reused_early),
            ("sent_to_closed_faces", b.sent_to_closed_faces),
            ("unproven_probes", b.unproven_probes),
            ("proven_by_ack", b.proven_by_ack),
            ("tx_sequence_acks_sent", b.tx_sequence_acks_sent),
            ("unix_peer_refused", b.unix_peer_refused),
            (
                "connection_refused_address",
                b.connections.per_address_refused,
            ),
            ("connection_budget_refused", b.connections.budget_refused),
            (
                "connection_first_packet_timeout",
                b.connections.first_packet_timeouts,
            ),
            ("connection_idle_timeout", b.connections.idle_timeouts),
            ("accept_fd_exhausted", b.connections.accept_fd_exhausted),
        ])
        .map(|(e, v)| (vec![("event", e.to_owned())], v))
        .collect();
    events.sort_by(|a, b| a.0.cmp(&b.0));
    m.counter(
        "face_table_bounds",
        "What the face tables' bounds did, by event: datagrams and fragments refused, \
         on-demand faces created and evicted, face ids reused early, Unix connections \
         refused by `[local]`'s allow-lists, `[connections]`' refusals and timeouts.",
        events,
    );
    let ether = [
        ("malformed", b.ether.malformed),
        ("unknown_destination", b.ether.unknown),
        ("send_failed", b.ether.send_failed),
    ];
    m.counter(
        "ether_drops",
        "Frames the Ethernet ports dropped, by reason: malformed, unknown destination (neither \
         the group nor this interface, or a source with no face), send failed.",
        ether
            .into_iter()
            .map(|(r, v)| (vec![("reason", r.to_owned())], v))
            .collect(),
    );
    m.counter(
        "lp_reliability",
        "NDNLPv2 reliability of the open reliable UDP faces, summed, by event (NFD's link \
         service counters: acknowledged, retransmitted, retx_exhausted, duplicates; and \
         retransmissions, unknown_acks, refused, acks_dropped, idle_packets).",
        b.reliability
            .named()
            .into_iter()
            .map(|(e, v)| (vec![("event", e.to_owned())], v))
            .collect(),
    );
    m.gauge(
        "face_table_reassembly_bytes",
        "Bytes the reassemblers hold now.",
        one(b.reassembly_bytes),
    );
    m.counter(
        "websocket_handshakes",
        "WebSocket (ws:// and wss://) connections by how their handshake ended: accepted (every \
         connection), completed, or failed by reason (timeout, bad_request, tls_error, refused \
         at the bound of pending handshakes).",
        ws_outcomes(&b.ws)
            .into_iter()
            .map(|(r, v)| (vec![("outcome", r.to_owned())], v))
            .collect(),
    );
}

/// Every drop, router-wide, by reason: the faces' (open faces) and the engines'.
fn drops(m: &mut Families, f: &Figures) {
    let mut by: Vec<(String, u64)> = Vec::new();
    let mut add = |reason: String, v: u64| match by.iter_mut().find(|(r, _)| *r == reason) {
        Some(x) => x.1 += v,
        None => by.push((reason, v)),
    };
    for d in &f.view.faces {
        for (r, v) in face_drops(&d.counters) {
            add(r.to_owned(), v);
        }
    }
    let mut engine = [0u64; DROP_REASONS];
    for s in &f.view.workers {
        for (e, d) in engine.iter_mut().zip(&s.counters.drops) {
            *e += d;
        }
    }
    for r in DropReason::ALL {
        add(snake(r), engine[r.index()]);
    }
    for (r, v) in bounds_refused(&f.bounds) {
        add(r.to_owned(), v);
    }
    m.counter(
        "drops",
        "Packets dropped, by reason: the faces' (malformed, no_buffer, ring_full, \
         send_queue_full), the engines' (malformed names and the rest) and the face tables' \
         bounds (on_demand_*, unproven_send, reassembly_refused).",
        by.into_iter()
            .map(|(r, v)| (vec![("reason", r)], v))
            .collect(),
    );
}

/// The scrape as a collector: the gathered families, and the figures for the histograms.
struct Scrape(Families, Figures);

impl fmt::Debug for Scrape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Scrape")
    }
}

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        for fam in &self.0 .0 {
            let mut me = enc.encode_descriptor(&fam.name, fam.help, None, fam.kind)?;
            for (labels, v) in &fam.samples {
                let sample = |m: &mut prometheus_client::encoding::MetricEncoder| match fam.kind {
                    MetricType::Counter => m.encode_counter::<NoLabelSet, _, u64>(v, None),
                    _ => m.encode_gauge(v),
                };
                if labels.is_empty() {
                    sample(&mut me)?;
                } else {
                    sample(&mut me.encode_family(labels)?)?;
                }
            }
        }
        histograms(&mut enc, &self.1)?;
        let up = prometheus_client::metrics::gauge::ConstGauge::new(self.1.uptime_s);
        up.encode(enc.encode_descriptor(
            "uptime_seconds",
            "Seconds since the router started.",
            None,
            up.metric_type(),
        )?)
    }
}

/// Each latency histogram the workers keep, one family per kind, a series per worker.
fn histograms(enc: &mut DescriptorEncoder, f: &Figures) -> fmt::Result {
    let mut kinds: Vec<(&'static str, &'static str)> = Vec::new();
    for s in &f.view.workers {
        for h in &s.latency {
            if !kinds.iter().any(|(n, _)| *n == h.name) {
                kinds.push((h.name, h.help));
            }
        }
    }
    for (kind, help) in kinds {
        let name = format!("worker_{kind}_seconds");
        let mut me = enc.encode_descriptor(&name, help, None, MetricType::Histogram)?;
        for (i, s) in f.view.workers.iter().enumerate() {
            let Some(h) = s.latency.iter().find(|h| h.name == kind) else {
                continue;
            };
            let mut buckets = Vec::with_capacity(h.le_us.len() + 1);
            let mut below = 0;
            for (&le, &cum) in h.le_us.iter().zip(&h.cumulative) {
                buckets.push((le as f64 / 1e6, cum - below));
                below = cum;
            }
            buckets.push((f64::INFINITY, h.count.saturating_sub(below)));
            let labels = [("worker", i.to_string())];
            me.encode_family(&labels)?.encode_histogram::<NoLabelSet>(
                h.sum_ns as f64 / 1e9,
                h.count,
                &buckets,
                None,
            )?;
        }
    }
    Ok(())
}
