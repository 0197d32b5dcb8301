//! The text `nfdc` prints: datasets as aligned tables (or one JSON object a line), command
//! results as one nfdc-style `key=value` line (or a JSON object).

use std::fmt::Write as _;

use serde_json::{json, Value};
use wire::nfd::{
    ControlParameters, CsInfo, FacePersistency, FaceScope, FaceStatus, FibEntry, ForwarderStatus,
    LinkType, RibEntry, StrategyChoice, CS_FLAG_ENABLE_ADMIT, CS_FLAG_ENABLE_SERVE,
    ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT,
};
use wire::Name;

use crate::control::{CsTierInfo, NbCacheInfo};

/// Columns left-aligned, two spaces apart; the last column is not padded.
fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, c) in cells.enumerate() {
            if i + 1 < widths.len() {
                let _ = write!(l, "{c:<w$}  ", w = widths[i]);
            } else {
                l.push_str(c);
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut headers.iter().copied());
    for r in rows {
        line(&mut r.iter().map(String::as_str));
    }
    out
}

fn lines(items: &[Value]) -> String {
    let mut s = String::new();
    for v in items {
        let _ = writeln!(s, "{v}");
    }
    s
}

fn scope_str(s: FaceScope) -> String {
    match s {
        FaceScope::NonLocal => "non-local".into(),
        FaceScope::Local => "local".into(),
        FaceScope::Other(n) => n.to_string(),
    }
}

fn persistency_str(p: FacePersistency) -> String {
    match p {
        FacePersistency::Persistent => "persistent".into(),
        FacePersistency::OnDemand => "on-demand".into(),
        FacePersistency::Permanent => "permanent".into(),
        FacePersistency::Other(n) => n.to_string(),
    }
}

fn link_str(l: LinkType) -> String {
    match l {
        LinkType::PointToPoint => "point-to-point".into(),
        LinkType::MultiAccess => "multi-access".into(),
        LinkType::AdHoc => "adhoc".into(),
        LinkType::Other(n) => n.to_string(),
    }
}

fn route_flags_str(flags: u64) -> String {
    let mut v = Vec::new();
    if flags & ROUTE_FLAG_CHILD_INHERIT != 0 {
        v.push("child-inherit");
    }
    if flags & ROUTE_FLAG_CAPTURE != 0 {
        v.push("capture");
    }
    if v.is_empty() {
        "none".into()
    } else {
        v.join("|")
    }
}

fn expires_str(ms: Option<u64>) -> String {
    ms.map_or_else(|| "never".into(), |ms| format!("{ms}ms"))
}

pub(super) fn render_status(s: &ForwarderStatus, json: bool) -> String {
    let uptime_s = s.current_timestamp.saturating_sub(s.start_timestamp) / 1000;
    let fields: Vec<(&str, Value)> = vec![
        ("version", json!(s.nfd_version)),
        ("start_timestamp", json!(s.start_timestamp)),
        ("current_timestamp", json!(s.current_timestamp)),
        ("uptime_s", json!(uptime_s)),
        ("n_name_tree_entries", json!(s.n_name_tree_entries)),
        ("n_fib_entries", json!(s.n_fib_entries)),
        ("n_pit_entries", json!(s.n_pit_entries)),
        ("n_measurements_entries", json!(s.n_measurements_entries)),
        ("n_cs_entries", json!(s.n_cs_entries)),
        ("n_in_interests", json!(s.n_in_interests)),
        ("n_in_data", json!(s.n_in_data)),
        ("n_in_nacks", json!(s.n_in_nacks)),
        ("n_out_interests", json!(s.n_out_interests)),
        ("n_out_data", json!(s.n_out_data)),
        ("n_out_nacks", json!(s.n_out_nacks)),
        ("n_satisfied_interests", json!(s.n_satisfied_interests)),
        ("n_unsatisfied_interests", json!(s.n_unsatisfied_interests)),
    ];
    if json {
        let obj: serde_json::Map<String, Value> =
            fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        return format!("{}\n", Value::Object(obj));
    }
    let w = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::from("General status:\n");
    for (k, v) in fields {
        let v = match v {
            Value::String(s) => s,
            v => v.to_string(),
        };
        let _ = writeln!(out, "  {k:>w$}={v}");
    }
    out
}

pub(super) fn render_faces(faces: &[FaceStatus], json: bool) -> String {
    if json {
        let v: Vec<Value> = faces
            .iter()
            .map(|f| {
                json!({
                    "face_id": f.face_id,
                    "remote": f.uri,
                    "local": f.local_uri,
                    "scope": scope_str(f.face_scope),
                    "persistency": persistency_str(f.face_persistency),
                    "link_type": link_str(f.link_type),
                    "expiration_period_ms": f.expiration_period,
                    "mtu": f.mtu,
                    "n_in_interests": f.n_in_interests,
                    "n_in_data": f.n_in_data,
                    "n_in_nacks": f.n_in_nacks,
                    "n_out_interests": f.n_out_interests,
                    "n_out_data": f.n_out_data,
                    "n_out_nacks": f.n_out_nacks,
                    "n_in_bytes": f.n_in_bytes,
                    "n_out_bytes": f.n_out_bytes,
                    "flags": f.flags,
                })
            })
            .collect();
        return lines(&v);
    }
    let rows: Vec<Vec<String>> = faces
        .iter()
        .map(|f| {
            vec![
                f.face_id.to_string(),
                f.uri.clone(),
                f.local_uri.clone(),
                scope_str(f.face_scope),
                persistency_str(f.face_persistency),
                link_str(f.link_type),
                format!("{}i {}d {}n", f.n_in_interests, f.n_in_data, f.n_in_nacks),
                format!(
                    "{}i {}d {}n",
                    f.n_out_interests, f.n_out_data, f.n_out_nacks
                ),
                format!("{}B/{}B", f.n_in_bytes, f.n_out_bytes),
            ]
        })
        .collect();
    table(
        &[
            "FACEID",
            "REMOTE",
            "LOCAL",
            "SCOPE",
            "PERSISTENCY",
            "LINK",
            "IN",
            "OUT",
            "BYTES IN/OUT",
        ],
        &rows,
    )
}

pub(super) fn render_routes(rib: &[RibEntry], json: bool) -> String {
    if json {
        let v: Vec<Value> = rib
            .iter()
            .map(|e| {
                let routes: Vec<Value> = e
                    .routes
                    .iter()
                    .map(|r| {
                        json!({
                            "face_id": r.face_id,
                            "origin": r.origin,
                            "cost": r.cost,
                            "flags": r.flags,
                            "expiration_period_ms": r.expiration_period,
                        })
                    })
                    .collect();
                json!({"prefix": e.name.to_string(), "routes": routes})
            })
            .collect();
        return lines(&v);
    }
    let rows: Vec<Vec<String>> = rib
        .iter()
        .flat_map(|e| {
            e.routes.iter().map(|r| {
                vec![
                    e.name.to_string(),
                    r.face_id.to_string(),
                    r.origin.to_string(),
                    r.cost.to_string(),
                    route_flags_str(r.flags),
                    expires_str(r.expiration_period),
                ]
            })
        })
        .collect();
    table(
        &["PREFIX", "NEXTHOP", "ORIGIN", "COST", "FLAGS", "EXPIRES"],
        &rows,
    )
}

pub(super) fn render_fib(fib: &[FibEntry], json: bool) -> String {
    if json {
        let v: Vec<Value> = fib
            .iter()
            .map(|e| {
                let hops: Vec<Value> = e
                    .next_hops
                    .iter()
                    .map(|h| json!({"face_id": h.face_id, "cost": h.cost}))
                    .collect();
                json!({"prefix": e.name.to_string(), "next_hops": hops})
            })
            .collect();
        return lines(&v);
    }
    let rows: Vec<Vec<String>> = fib
        .iter()
        .map(|e| {
            let hops: Vec<String> = e
                .next_hops
                .iter()
                .map(|h| format!("{} (cost={})", h.face_id, h.cost))
                .collect();
            vec![e.name.to_string(), hops.join(", ")]
        })
        .collect();
    table(&["PREFIX", "NEXTHOPS"], &rows)
}

/// The RAM tier from NFD's CsInfo, then each storage tier behind it (Cascade's `cs/tiers`),
/// then NB-Cache's counters (Cascade's `cs/nbcache`), if the forwarder answered them.
pub(super) fn render_cs(
    cs: &CsInfo,
    tiers: &[CsTierInfo],
    nb: Option<&NbCacheInfo>,
    json: bool,
) -> String {
    let admit = cs.flags & CS_FLAG_ENABLE_ADMIT != 0;
    let serve = cs.flags & CS_FLAG_ENABLE_SERVE != 0;
    if json {
        let mut v = json!({
            "capacity": cs.capacity,
            "admit": admit,
            "serve": serve,
            "n_entries": cs.n_cs_entries,
            "n_hits": cs.n_hits,
            "n_misses": cs.n_misses,
        });
        for t in tiers {
            v[format!("l{}", t.level)] = json!({
                "workers": t.workers,
                "capacity": t.capacity,
                "n_entries": t.n_entries,
                "n_lookups": t.n_lookups,
                "n_hits": t.n_hits,
                "n_misses": t.n_misses,
                "n_reads": t.n_reads,
                "n_read_bytes": t.n_read_bytes,
                "n_writes": t.n_writes,
                "n_write_bytes": t.n_write_bytes,
                "n_checksum_failures": t.n_checksum_failures,
                "n_prefetched": t.n_prefetched,
                "n_prefetch_used": t.n_prefetch_used,
                "prefetch_usefulness": t.prefetch_usefulness(),
                "n_admit_dropped": t.n_admit_dropped,
                "queue_depth": t.queue_depth,
                "n_in_flight": t.n_in_flight,
                "batch": t.batch,
                "storage_stall_max_us": t.stall_max_us,
                "storage_stall_p999_us": t.stall_p999_us,
                "storage_stalls_over_1ms": t.n_stalls_over_1ms,
                "loop_max_us": t.loop_max_us,
                "loop_p999_us": t.loop_p999_us,
                "n_ahead_offered": t.n_ahead_offered,
                "n_ahead_reads": t.n_ahead_reads,
                "n_name_mismatches": t.n_name_mismatches,
                "n_workers_off": t.n_workers_off,
                "n_io_errors": t.n_io_errors,
            });
        }
        if let Some(n) = nb {
            v["nbcache"] = super::nbcache::json(n);
        }
        return format!("{v}\n");
    }
    let onoff = |b: bool| if b { "on" } else { "off" };
    let mut out = format!(
        "CS information:\n  capacity={}\n     admit={}\n     serve={}\n  nEntries={}\n     nHits={}\n   nMisses={}\n",
        cs.capacity,
        onoff(admit),
        onoff(serve),
        cs.n_cs_entries,
        cs.n_hits,
        cs.n_misses
    );
    for t in tiers {
        let usefulness = t
            .prefetch_usefulness()
            .map_or("-".to_string(), |u| format!("{:.1}%", 100.0 * u));
        out.push_str(&format!(
            "L{} tier (disk, {} workers):\n  capacity={} chunks\n  nEntries={}\n     nHits={}\n   nMisses={}\n    nReads={} ({} bytes)\n   nWrites={} ({} bytes)\n  checksumFailures={}\n  prefetch={} used={} ({})\n  readAhead offered={} reads={}\n  admitDropped={}\n  queueDepth={} inFlight={} batch={}\n  storageStall max={}us p99.9={}us over1ms={}\n  loopIteration max={}us p99.9={}us\n  nameMismatches={}\n  workersOff={} ioErrors={}\n",
            t.level,
            t.workers,
            t.capacity,
            t.n_entries,
            t.n_hits,
            t.n_misses,
            t.n_reads,
            t.n_read_bytes,
            t.n_writes,
            t.n_write_bytes,
            t.n_checksum_failures,
            t.n_prefetched,
            t.n_prefetch_used,
            usefulness,
            t.n_ahead_offered,
            t.n_ahead_reads,
            t.n_admit_dropped,
            t.queue_depth,
            t.n_in_flight,
            t.batch,
            t.stall_max_us,
            t.stall_p999_us,
            t.n_stalls_over_1ms,
            t.loop_max_us,
            t.loop_p999_us,
            t.n_name_mismatches,
            t.n_workers_off,
            t.n_io_errors
        ));
    }
    if let Some(n) = nb {
        out.push_str(&super::nbcache::text(n));
    }
    out
}

pub(super) fn render_strategies(v: &[StrategyChoice], json: bool) -> String {
    if json {
        let v: Vec<Value> = v
            .iter()
            .map(|s| json!({"prefix": s.name.to_string(), "strategy": s.strategy.to_string()}))
            .collect();
        return lines(&v);
    }
    let rows: Vec<Vec<String>> = v
        .iter()
        .map(|s| vec![s.name.to_string(), s.strategy.to_string()])
        .collect();
    table(&["PREFIX", "STRATEGY"], &rows)
}

/// What `cs erase` prints: how many entries went under `prefix`.
pub(super) fn render_erased(prefix: &Name, total: u64, json: bool) -> String {
    if json {
        format!(
            "{}\n",
            json!({"prefix": prefix.to_string(), "erased": total})
        )
    } else {
        format!("erased {total} entries under {prefix}\n")
    }
}

/// One nfdc-style line (`face-created id=... remote=...`) or a JSON object of the fields set.
pub(super) fn render_params(what: &str, p: &ControlParameters, json: bool) -> String {
    let mut fields: Vec<(&str, Value)> = Vec::new();
    if let Some(n) = &p.name {
        fields.push(("prefix", json!(n.to_string())));
    }
    if let Some(id) = p.face_id {
        fields.push((if p.name.is_some() { "nexthop" } else { "id" }, json!(id)));
    }
    if let Some(u) = &p.local_uri {
        fields.push(("local", json!(u)));
    }
    if let Some(u) = &p.uri {
        fields.push(("remote", json!(u)));
    }
    if let Some(per) = p.face_persistency {
        fields.push(("persistency", json!(persistency_str(per))));
    }
    if let Some(o) = p.origin {
        fields.push(("origin", json!(o)));
    }
    if let Some(c) = p.cost {
        fields.push(("cost", json!(c)));
    }
    if let (Some(_), Some(_), Some(f)) = (&p.name, p.face_id, p.flags) {
        fields.push(("flags", json!(route_flags_str(f))));
        fields.push(("expires", json!(expires_str(p.expiration_period))));
    }
    if let Some(s) = &p.strategy {
        fields.push(("strategy", json!(s.to_string())));
    }
    if json {
        let mut obj = serde_json::Map::new();
        obj.insert("result".into(), json!(what));
        for (k, v) in fields {
            obj.insert(k.into(), v);
        }
        return format!("{}\n", Value::Object(obj));
    }
    let mut s = what.to_owned();
    for (k, v) in fields {
        let v = match v {
            Value::String(s) => s,
            v => v.to_string(),
        };
        let _ = write!(s, " {k}={v}");
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::nfd::{NextHopRecord, Route};

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(
            &["A", "LONGER", "C"],
            &[
                vec!["xxxx".into(), "y".into(), "z".into()],
                vec!["1".into(), "2".into(), "3".into()],
            ],
        );
        assert_eq!(t, "A     LONGER  C\nxxxx  y       z\n1     2       3\n");
    }

    #[test]
    fn routes_and_fib_render() {
        let rib = vec![RibEntry {
            name: name("/a/b"),
            routes: vec![
                Route {
                    face_id: 260,
                    origin: 255,
                    cost: 10,
                    flags: ROUTE_FLAG_CHILD_INHERIT | ROUTE_FLAG_CAPTURE,
                    expiration_period: None,
                },
                Route {
                    face_id: 261,
                    origin: 0,
                    cost: 0,
                    flags: 0,
                    expiration_period: Some(5000),
                },
            ],
        }];
        assert_eq!(
            render_routes(&rib, false),
            "PREFIX  NEXTHOP  ORIGIN  COST  FLAGS                  EXPIRES\n\
             /a/b    260      255     10    child-inherit|capture  never\n\
             /a/b    261      0       0     none                   5000ms\n"
        );
        let j: Value = serde_json::from_str(render_routes(&rib, true).trim()).unwrap();
        assert_eq!(j["routes"][1]["expiration_period_ms"], 5000);
        let fib = vec![FibEntry {
            name: name("/"),
            next_hops: vec![
                NextHopRecord {
                    face_id: 1,
                    cost: 0,
                },
                NextHopRecord {
                    face_id: 2,
                    cost: 5,
                },
            ],
        }];
        assert_eq!(
            render_fib(&fib, false),
            "PREFIX  NEXTHOPS\n/       1 (cost=0), 2 (cost=5)\n"
        );
    }

    #[test]
    fn params_lines_follow_nfdc() {
        let p = ControlParameters {
            name: Some(name("/p")),
            face_id: Some(7),
            origin: Some(255),
            cost: Some(3),
            flags: Some(ROUTE_FLAG_CHILD_INHERIT),
            ..ControlParameters::default()
        };
        assert_eq!(
            render_params("route-add-accepted", &p, false),
            "route-add-accepted prefix=/p nexthop=7 origin=255 cost=3 flags=child-inherit \
             expires=never\n"
        );
        let f = ControlParameters {
            face_id: Some(300),
            uri: Some("udp4://192.0.2.1:6363".into()),
            face_persistency: Some(FacePersistency::Persistent),
            ..ControlParameters::default()
        };
        assert_eq!(
            render_params("face-created", &f, false),
            "face-created id=300 remote=udp4://192.0.2.1:6363 persistency=persistent\n"
        );
        let j: Value =
            serde_json::from_str(render_params("face-created", &f, true).trim()).unwrap();
        assert_eq!(j["result"], "face-created");
        assert_eq!(j["id"], 300);
    }

    #[test]
    fn status_and_cs_render() {
        let s = ForwarderStatus {
            nfd_version: "cascade-0.1.0".into(),
            start_timestamp: 1_000,
            current_timestamp: 61_000,
            n_pit_entries: 4,
            ..ForwarderStatus::default()
        };
        let t = render_status(&s, false);
        assert!(t.contains("               version=cascade-0.1.0\n"), "{t}");
        assert!(t.contains("uptime_s=60\n"));
        let j: Value = serde_json::from_str(render_status(&s, true).trim()).unwrap();
        assert_eq!(j["n_pit_entries"], 4);
        let cs = CsInfo {
            capacity: 100,
            flags: CS_FLAG_ENABLE_ADMIT,
            n_cs_entries: 3,
            n_hits: 2,
            n_misses: 1,
        };
        let t = render_cs(&cs, &[], None, false);
        assert!(t.contains("admit=on") && t.contains("serve=off"), "{t}");
        assert!(!t.contains("L2"), "{t}");
        let j: Value = serde_json::from_str(render_cs(&cs, &[], None, true).trim()).unwrap();
        assert_eq!(
            (j["serve"].clone(), j["n_hits"].clone()),
            (json!(false), json!(2))
        );
        assert!(j.get("l2").is_none());
        let l2 = CsTierInfo {
            level: 2,
            workers: 2,
            capacity: 1000,
            n_entries: 40,
            n_prefetched: 8,
            n_prefetch_used: 6,
            n_ahead_offered: 5,
            n_ahead_reads: 3,
            n_name_mismatches: 7,
            n_workers_off: 1,
            n_io_errors: 2,
            ..CsTierInfo::default()
        };
        let t = render_cs(&cs, &[l2], None, false);
        assert!(
            t.contains("L2 tier (disk, 2 workers)") && t.contains("nEntries=40"),
            "{t}"
        );
        assert!(t.contains("used=6 (75.0%)"), "{t}");
        assert!(t.contains("readAhead offered=5 reads=3"), "{t}");
        assert!(t.contains("nameMismatches=7"), "{t}");
        assert!(t.contains("workersOff=1 ioErrors=2"), "{t}");
        let nb = NbCacheInfo {
            n_queue_bypasses: 9,
            ..NbCacheInfo::default()
        };
        assert!(render_cs(&cs, &[l2], Some(&nb), false).contains("NB-Cache:\n"));
        assert!(!t.contains("NB-Cache"), "{t}");
        let j: Value = serde_json::from_str(render_cs(&cs, &[l2], Some(&nb), true).trim()).unwrap();
        assert_eq!(j["nbcache"]["n_queue_bypasses"], 9);
        assert_eq!(j["l2"]["n_entries"], 40);
        assert_eq!(
            (
                j["l2"]["n_name_mismatches"].clone(),
                j["l2"]["n_workers_off"].clone(),
                j["l2"]["n_io_errors"].clone()
            ),
            (json!(7), json!(1), json!(2))
        );
        assert_eq!(j["l2"]["prefetch_usefulness"], 0.75);
        assert_eq!(
            (
                j["l2"]["n_ahead_offered"].clone(),
                j["l2"]["n_ahead_reads"].clone()
            ),
            (json!(5), json!(3))
        );
        assert_eq!(
            j["n_entries"], 3,
            "the RAM tier's fields stay where they were"
        );
    }
}
