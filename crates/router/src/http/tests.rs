use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::fw::pipeline::DropReason;
use face::{FaceCounters, FaceDesc};
use mgmt::{LatencyHistogram, StatusView, WorkerStats};
use wire::nfd::{CsInfo, FibEntry, ForwarderStatus, NextHopRecord};
use wire::Name;

use super::*;

fn figures() -> Figures {
    let mut w = WorkerStats {
        pit_len: 3,
        cs_len: 5,
        cs_hits: 11,
        cs_misses: 4,
        latency: vec![LatencyHistogram {
            name: "batch",
            help: "batch time",
            le_us: vec![1, 2, 4],
            cumulative: vec![2, 5, 5],
            count: 6,
            sum_ns: 9_000,
        }],
        ..WorkerStats::default()
    };
    w.counters.drops[DropReason::NoRoute.index()] = 2;
    w.counters.drops[DropReason::Malformed.index()] = 1;
    w.counters.bypass.filter_false_positives = 9;
    w.counters.new_nexthop.sent = 12;
    w.counters.new_nexthop.unwatched = 13;
    w.counters.new_nexthop.scans = 14;
    let face = FaceDesc {
        id: 257,
        uri: "udp4://192.0.2.1:6363".into(),
        local_uri: "udp4://0.0.0.0:6363".into(),
        local: false,
        persistency: wire::nfd::FacePersistency::Persistent,
        mtu: None,
        options: face::LinkOptions::default(),
        counters: FaceCounters {
            in_interests: 40,
            out_bytes: 1234,
            malformed: 3,
            congestion_marks: 6,
            send_queue_bytes: 70_000,
            ..FaceCounters::default()
        },
    };
    let general = ForwarderStatus {
        nfd_version: "cascade-test".into(),
        n_in_interests: 41,
        n_pit_entries: 3,
        n_satisfied_interests: 17,
        ..ForwarderStatus::default()
    };
    Figures {
        view: StatusView {
            general,
            faces: vec![face],
            fib: vec![FibEntry {
                name: Name::from_uri("/a/b").unwrap(),
                next_hops: vec![NextHopRecord {
                    face_id: 257,
                    cost: 10,
                }],
            }],
            strategies: Vec::new(),
            cs: CsInfo {
                capacity: 100,
                n_cs_entries: 5,
                n_hits: 11,
                n_misses: 4,
                ..CsInfo::default()
            },
            tiers: None,
            workers: vec![w],
            management: Default::default(),
        },
        input_ring_full: vec![6],
        bounds: face::table::BoundCounters {
            on_demand_refused_full: 5,
            unproven_budget_dropped: 4,
            on_demand_created: 2,
            ws: face::table::WsCounters {
                handshakes_accepted: 9,
                handshakes_tls_failed: 3,
                ..Default::default()
            },
            ..Default::default()
        },
        uptime_s: 2.5,
        http: HttpCounters {
            refused_connections: 1,
            ..HttpCounters::default()
        },
    }
}

/// The value of the sample written exactly `series` (name and labels).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn metrics_count_refused_commands_by_reason() {
    let mut f = figures();
    f.view.management.refused_commands.replay = 3;
    f.view.management.refused_commands.bad_signature = 2;
    f.view.management.refused_commands.cache_evicted = 5;
    f.view.management.refused_commands.records_evicted = 7;
    let text = render_metrics(&f);
    let series = |r: &str| format!("cascade_mgmt_commands_refused_total{{reason=\"{r}\"}}");
    assert_eq!(sample(&text, &series("replay")), Some(3.0));
    assert_eq!(sample(&text, &series("bad_signature")), Some(2.0));
    assert_eq!(sample(&text, &series("stale")), Some(0.0));
    let evicted = |k: &str| format!("cascade_mgmt_auth_evicted_total{{kind=\"{k}\"}}");
    assert_eq!(sample(&text, &evicted("certificates")), Some(5.0));
    assert_eq!(sample(&text, &evicted("signer_records")), Some(7.0));
}

#[test]
fn metrics_render_every_part_of_the_snapshot() {
    let text = render_metrics(&figures());
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert_eq!(
        sample(&text, "cascade_forwarder_in_interests_total"),
        Some(41.0)
    );
    assert_eq!(sample(&text, "cascade_forwarder_pit_entries"), Some(3.0));
    assert_eq!(
        sample(&text, "cascade_forwarder_satisfied_interests_total"),
        Some(17.0)
    );
    let face = r#"{face="257",remote="udp4://192.0.2.1:6363"}"#;
    assert_eq!(
        sample(&text, &format!("cascade_face_in_interests_total{face}")),
        Some(40.0)
    );
    assert_eq!(
        sample(&text, &format!("cascade_face_out_bytes_total{face}")),
        Some(1234.0)
    );
    assert_eq!(
        sample(&text, &format!("cascade_face_congestion_marks_total{face}")),
        Some(6.0)
    );
    assert_eq!(
        sample(&text, &format!("cascade_face_send_queue_bytes{face}")),
        Some(70_000.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"cascade_worker_drops_total{worker="0",reason="no_route"}"#
        ),
        Some(2.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"cascade_worker_nbcache_total{worker="0",event="filter_false_positives"}"#
        ),
        Some(9.0)
    );
    for (event, v) in [("sent", 12.0), ("unwatched", 13.0), ("scans", 14.0)] {
        let series = format!(r#"cascade_worker_new_nexthop_total{{worker="0",event="{event}"}}"#);
        assert_eq!(sample(&text, &series), Some(v), "{series}");
    }
    // Router-wide drops: the face's 3 malformed and the engine's 1.
    assert_eq!(
        sample(&text, r#"cascade_drops_total{reason="malformed"}"#),
        Some(4.0)
    );
    assert_eq!(
        sample(&text, r#"cascade_cs_hits_total{tier="ram"}"#),
        Some(11.0)
    );
    assert_eq!(sample(&text, r#"cascade_cs_capacity{tier="l2"}"#), None);
    assert_eq!(
        sample(&text, r#"cascade_worker_input_ring_full_total{worker="0"}"#),
        Some(6.0)
    );
    assert_eq!(
        sample(&text, r#"cascade_http_refused_total{reason="connections"}"#),
        Some(1.0)
    );
    assert_eq!(sample(&text, "cascade_uptime_seconds"), Some(2.5));
    for (outcome, v) in [("accepted", 9.0), ("tls_error", 3.0), ("timeout", 0.0)] {
        let series = format!("cascade_websocket_handshakes_total{{outcome=\"{outcome}\"}}");
        assert_eq!(sample(&text, &series), Some(v), "{series}");
    }
    assert_eq!(
        sample(
            &text,
            r#"cascade_face_table_bounds_total{event="on_demand_refused_full"}"#
        ),
        Some(5.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"cascade_face_table_bounds_total{event="on_demand_created"}"#
        ),
        Some(2.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"cascade_drops_total{reason="on_demand_refused_full"}"#
        ),
        Some(5.0)
    );
    let budget = r#"cascade_face_table_bounds_total{event="unproven_budget"}"#;
    assert_eq!(sample(&text, budget), Some(4.0));
}

#[test]
fn metrics_show_the_l2_backpressure_and_prefix_counters() {
    let mut f = figures();
    f.view.tiers = Some(mgmt::CsTierInfo {
        level: 2,
        capacity: 100,
        n_input_held: 31,
        n_deferred: 32,
        n_prefix_lookups: 33,
        n_prefix_pending: 34,
        n_prefix_stale: 35,
        n_prefix_handovers: 36,
        n_prefix_handovers_full: 37,
        n_prefix_missed: 38,
        n_admit_taken: 39,
        n_admit_received: 40,
        n_admit_offered: 41,
        n_admit_handed: 42,
        n_admit_malformed: 43,
        ..Default::default()
    });
    let text = render_metrics(&f);
    assert_eq!(
        sample(&text, r#"cascade_cs_capacity{tier="l2"}"#),
        Some(100.0)
    );
    for (name, v) in [
        ("input_held", 31.0),
        ("deferred", 32.0),
        ("prefix_lookups", 33.0),
        ("prefix_pending", 34.0),
        ("prefix_stale", 35.0),
        ("prefix_handovers", 36.0),
        ("prefix_handovers_full", 37.0),
        ("prefix_missed", 38.0),
        ("admit_taken", 39.0),
        ("admit_received", 40.0),
        ("admit_offered", 41.0),
        ("admit_handed", 42.0),
        ("admit_malformed", 43.0),
    ] {
        let series = format!("cascade_cs_l2_{name}_total");
        assert_eq!(sample(&text, &series), Some(v), "{series}");
    }
    // /status.json carries the admission counters beside admit_dropped.
    let v: serde_json::Value = serde_json::from_str(&status_json(&f)).unwrap();
    let admit = ["taken", "received", "offered", "handed", "malformed"]
        .map(|k| v["l2"][format!("admit_{k}")].as_u64());
    assert_eq!(admit, [39, 40, 41, 42, 43].map(Some), "{}", v["l2"]);
}

#[test]
fn metrics_show_the_ethernet_and_lp_reliability_counters() {
    let mut f = figures();
    f.bounds.ether = face::table::EtherCounters {
        malformed: 21,
        unknown: 22,
        send_failed: 23,
    };
    f.bounds.reliability = face::lp_reliability::ReliabilityCounters {
        acknowledged: 51,
        retx_exhausted: 52,
        duplicates: 53,
        idle_packets: 54,
        ..Default::default()
    };
    let text = render_metrics(&f);
    for (reason, v) in [
        ("malformed", 21.0),
        ("unknown_destination", 22.0),
        ("send_failed", 23.0),
    ] {
        let series = format!("cascade_ether_drops_total{{reason=\"{reason}\"}}");
        assert_eq!(sample(&text, &series), Some(v), "{series}");
    }
    for (event, v) in [
        ("acknowledged", 51.0),
        ("retx_exhausted", 52.0),
        ("duplicates", 53.0),
        ("idle_packets", 54.0),
        ("retransmitted", 0.0),
    ] {
        let series = format!("cascade_lp_reliability_total{{event=\"{event}\"}}");
        assert_eq!(sample(&text, &series), Some(v), "{series}");
    }
}

#[test]
fn latency_histograms_are_cumulative_with_the_rest_above_the_last_bound() {
    let text = render_metrics(&figures());
    assert!(
        text.contains("# TYPE cascade_worker_batch_seconds histogram"),
        "{text}"
    );
    let b = |le: &str| {
        sample(
            &text,
            &format!("cascade_worker_batch_seconds_bucket{{le=\"{le}\",worker=\"0\"}}"),
        )
    };
    assert_eq!(b("0.000001"), Some(2.0), "{text}");
    assert_eq!(b("0.000002"), Some(5.0));
    assert_eq!(b("0.000004"), Some(5.0));
    assert_eq!(b("+Inf"), Some(6.0));
    assert_eq!(
        sample(&text, r#"cascade_worker_batch_seconds_count{worker="0"}"#),
        Some(6.0)
    );
    assert_eq!(
        sample(&text, r#"cascade_worker_batch_seconds_sum{worker="0"}"#),
        Some(9e-6)
    );
}

#[test]
fn status_json_carries_the_tables_the_page_shows() {
    let v: serde_json::Value = serde_json::from_str(&status_json(&figures())).unwrap();
    assert_eq!(v["faces"][0]["face_id"], 257);
    assert_eq!(v["faces"][0]["n_drops"], 3);
    assert_eq!(v["fib"][0]["prefix"], "/a/b");
    assert_eq!(v["fib"][0]["nexthops"][0]["cost"], 10);
    assert_eq!(v["general"]["n_in_interests"], 41);
    assert_eq!(v["workers"][0]["input_ring_full"], 6);
    let n = &v["workers"][0]["new_nexthop"];
    assert_eq!(
        (&n["sent"], &n["unwatched"], &n["scans"]),
        (&12.into(), &13.into(), &14.into())
    );
    assert!(v["l2"].is_null());
    assert_eq!(v["websocket_handshakes"]["accepted"], 9);
    assert_eq!(v["websocket_handshakes"]["tls_error"], 3);
    assert_eq!(v["websocket_handshakes"]["refused"], 0);
    assert_eq!(v["face_table_refused"]["on_demand_refused_full"], 5);
    assert_eq!(v["face_table_refused"]["unproven_budget"], 4);
    assert_eq!(v["face_table_refused"]["on_demand_refused_budget"], 0);
}

/// A server on an ephemeral port with a fake source that records the counters it was given.
fn serve(
    max_connections: usize,
    timeout_ms: u64,
) -> (SocketAddr, Arc<Mutex<HttpCounters>>, Arc<AtomicBool>) {
    let seen = Arc::new(Mutex::new(HttpCounters::default()));
    let s2 = seen.clone();
    let source: Source = Box::new(move |c| {
        *s2.lock().unwrap() = c;
        Some(figures())
    });
    let settings = HttpSettings {
        max_connections,
        timeout: Duration::from_millis(timeout_ms),
    };
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), settings, source).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    std::thread::spawn(move || server.run(st));
    (addr, seen, stop)
}

fn get(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn server_answers_the_page_the_metrics_and_the_json() {
    let (addr, _, stop) = serve(4, 5000);
    let page = get(addr, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
    assert!(page.contains("<canvas id=\"rates\""));
    let m = get(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(m.contains("application/openmetrics-text"), "{m}");
    assert!(m.contains("cascade_forwarder_in_interests_total 41\n"));
    let j = get(addr, b"GET /status.json?t=1 HTTP/1.1\r\n\r\n");
    assert!(j.contains("\"face_id\":257"), "{j}");
    assert!(get(addr, b"GET /nope HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
    assert!(get(addr, b"POST / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 400"));
    let big = format!(
        "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
        "a".repeat(MAX_REQUEST_BYTES)
    );
    assert!(get(addr, big.as_bytes()).starts_with("HTTP/1.1 431"));
    stop.store(true, Ordering::Relaxed);
}

#[test]
fn connections_beyond_the_bound_are_refused_and_idle_ones_time_out() {
    let (addr, seen, stop) = serve(1, 300);
    // One idle connection holds the only slot...
    let idle = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    // ...so the next one is closed without an answer.
    let refused = get(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(refused, "");
    // The idle one is closed at its deadline, then a request is served, and it reports both.
    let mut idle = idle;
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(idle.read(&mut buf).unwrap_or(0), 0);
    let m = get(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
    assert!(m.starts_with("HTTP/1.1 200"), "{m}");
    let c = *seen.lock().unwrap();
    assert_eq!((c.refused_connections, c.timeouts), (1, 1));
    stop.store(true, Ordering::Relaxed);
}
