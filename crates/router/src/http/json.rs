//! `/status.json`: what the status page polls every second (faces, routes, strategies, the
//! content store's tiers, the workers), the same snapshot `/metrics` renders.

use serde_json::{json, Value};

use super::Figures;

/// The status as one JSON object.
pub fn status_json(f: &Figures) -> String {
    let v = &f.view;
    let g = &v.general;
    let faces = faces_json(f);
    let fib: Vec<Value> = v
        .fib
        .iter()
        .map(|e| {
            let hops: Vec<Value> = e
                .next_hops
                .iter()
                .map(|h| json!({"face_id": h.face_id, "cost": h.cost}))
                .collect();
            json!({"prefix": e.name.to_string(), "nexthops": hops})
        })
        .collect();
    let strategies: Vec<Value> = v
        .strategies
        .iter()
        .map(|c| json!({"prefix": c.name.to_string(), "strategy": c.strategy.to_string()}))
        .collect();
    let workers = workers_json(f);
    let l2 = v.tiers.as_ref().map(|t| {
        json!({
            "capacity": t.capacity,
            "entries": t.n_entries,
            "hits": t.n_hits,
            "misses": t.n_misses,
            "reads": t.n_reads,
            "writes": t.n_writes,
            "admit_dropped": t.n_admit_dropped,
            "admit_taken": t.n_admit_taken,
            "admit_received": t.n_admit_received,
            "admit_offered": t.n_admit_offered,
            "admit_handed": t.n_admit_handed,
            "admit_malformed": t.n_admit_malformed,
            "workers_off": t.n_workers_off,
        })
    });
    json!({
        "version": g.nfd_version,
        "uptime_s": f.uptime_s,
        "general": {
            "n_name_tree_entries": g.n_name_tree_entries,
            "n_fib_entries": g.n_fib_entries,
            "n_pit_entries": g.n_pit_entries,
            "n_cs_entries": g.n_cs_entries,
            "n_in_interests": g.n_in_interests,
            "n_in_data": g.n_in_data,
            "n_in_nacks": g.n_in_nacks,
            "n_out_interests": g.n_out_interests,
            "n_out_data": g.n_out_data,
            "n_out_nacks": g.n_out_nacks,
            "n_satisfied_interests": g.n_satisfied_interests,
            "n_unsatisfied_interests": g.n_unsatisfied_interests,
        },
        "faces": faces,
        "fib": fib,
        "strategies": strategies,
        "cs": {
            "capacity": v.cs.capacity,
            "entries": v.cs.n_cs_entries,
            "hits": v.cs.n_hits,
            "misses": v.cs.n_misses,
        },
        "l2": l2,
        "workers": workers,
        "websocket_handshakes": serde_json::Map::from_iter(
            super::metrics::ws_outcomes(&f.bounds.ws)
                .map(|(k, v)| (k.to_owned(), serde_json::Value::from(v)))
        ),
        "face_table_refused": serde_json::Map::from_iter(
            super::metrics::bounds_refused(&f.bounds)
                .map(|(k, v)| (k.to_owned(), serde_json::Value::from(v)))
        ),
        "http": {
            "requests": f.http.requests,
            "refused_connections": f.http.refused_connections,
            "timeouts": f.http.timeouts,
        },
    })
    .to_string()
}

/// One object per face.
fn faces_json(f: &Figures) -> Vec<Value> {
    f.view
        .faces
        .iter()
        .map(|d| {
            let c = &d.counters;
            json!({
                "face_id": d.id,
                "remote": d.uri,
                "local": d.local_uri,
                "scope": if d.local { "local" } else { "non-local" },
                "persistency": format!("{:?}", d.persistency).to_lowercase(),
                "n_in_interests": c.in_interests,
                "n_in_data": c.in_data,
                "n_in_nacks": c.in_nacks,
                "n_out_interests": c.out_interests,
                "n_out_data": c.out_data,
                "n_out_nacks": c.out_nacks,
                "n_in_bytes": c.in_bytes,
                "n_out_bytes": c.out_bytes,
                "n_drops": c.malformed + c.drop_no_buffer + c.drop_ring_full + c.drop_queue_full,
            })
        })
        .collect()
}

/// One object per forwarding worker.
fn workers_json(f: &Figures) -> Vec<Value> {
    f.view
        .workers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "worker": i,
                "pit_entries": s.pit_len,
                "cs_entries": s.cs_len,
                "cs_hits": s.cs_hits,
                "cs_misses": s.cs_misses,
                "n_in_interests": s.counters.in_interests,
                "n_in_data": s.counters.in_data,
                "n_drops": s.counters.drops.iter().sum::<u64>(),
                "input_ring_full": f.input_ring_full.get(i).copied().unwrap_or(0),
                "new_nexthop": {
                    "sent": s.counters.new_nexthop.sent,
                    "unwatched": s.counters.new_nexthop.unwatched,
                    "scans": s.counters.new_nexthop.scans,
                },
            })
        })
        .collect()
}
