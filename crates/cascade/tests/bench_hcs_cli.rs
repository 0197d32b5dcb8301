//! `cascade bench hcs` as a user runs it, with a real L2 file, on a catalogue small enough for a
//! test: every batch read the workload asks for is read (through the backlog when the L2 queue
//! is full), verified, and the L1 hit ratio does not depend on how fast the L2 is.

mod common;

/// One point of the Real workload on one worker: 2 contents (2,560 chunks, a 20 MB L2 file),
/// |L1| = 1,280, a 16 MiB scratch file for the device reference.
fn real_point(queue_depth: &str) -> serde_json::Value {
    common::cascade_json(&[
        "bench",
        "hcs",
        "--workload",
        "real",
        "--catalogue",
        "2",
        "--l1",
        "1280",
        "--queue-depth",
        queue_depth,
        "--workers",
        "1",
        "--scratch-mib",
        "16",
        "--no-hit-cost",
        "--json",
    ])
}

#[test]
fn a_full_queue_backs_reads_up_without_losing_any_and_leaves_the_hit_ratio_alone() {
    let shallow = real_point("2");
    let deep = real_point("16");
    for v in [&shallow, &deep] {
        let p = &v["points"][0];
        assert_eq!(v["checksum_failures"].as_u64(), Some(0), "{v}");
        // Every batch read asked for was found in L2 and none was given up.
        assert_eq!(p["l2_hit_ratio"].as_f64(), Some(1.0), "{v}");
        assert_eq!(p["l2_reads_given_up"].as_u64(), Some(0), "{v}");
        assert!(p["l2_read_gbytes_per_s"].as_f64().unwrap() > 0.0, "{v}");
        let hit = p["l1_hit_ratio"].as_f64().unwrap();
        let model = p["model_hit_ratio"].as_f64().unwrap();
        assert!((hit - model).abs() < 0.02, "hit {hit} model {model}");
    }
    let (s, d) = (&shallow["points"][0], &deep["points"][0]);
    // Two reads in flight cannot keep up with this workload: reads waited in the backlog,
    // and the queue never held more than its depth.
    assert!(s["l2_mean_backlog"].as_f64().unwrap() > 0.0, "{shallow}");
    assert!(s["l2_mean_in_flight"].as_f64().unwrap() <= 2.0, "{shallow}");
    // The L1 logic is the same whatever the L2's speed: only pending hits differ.
    assert_eq!(s["l1_hit_ratio"], d["l1_hit_ratio"]);
    assert!(s["pending_hits"].as_u64().unwrap() > 0, "{shallow}");
}

#[test]
fn a_scratch_file_below_eight_mib_is_refused_with_one_line() {
    let out = common::cascade(&["bench", "hcs", "--scratch-mib", "1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--scratch-mib"), "{err}");
}

/// The Seq workload on the emulated L2 (fast): prefetch-ahead is on by default and is compared
/// with its own model (one miss per content); `--no-prefetch-ahead` gives Mansilha et al.'s eq. 3.
#[test]
fn seq_reads_ahead_by_default_and_each_setting_meets_its_model() {
    let seq = |extra: &[&str]| {
        let mut a = vec![
            "bench",
            "hcs",
            "--workload",
            "seq",
            "--emulated",
            "--catalogue",
            "4",
            "--l1",
            "1280",
            "--no-hit-cost",
            "--json",
        ];
        a.extend_from_slice(extra);
        common::cascade_json(&a)
    };
    let on = seq(&[]);
    // One worker per core unless told.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(64));
    assert_eq!(on["workers"].as_u64(), Some(cores as u64), "{on}");
    let off = seq(&["--no-prefetch-ahead"]);
    assert_eq!(on["prefetch_ahead"].as_bool(), Some(true), "{on}");
    assert_eq!(off["prefetch_ahead"].as_bool(), Some(false), "{off}");
    let hit = |v: &serde_json::Value| v["points"][0]["l1_hit_ratio"].as_f64().unwrap();
    let model = |v: &serde_json::Value| v["points"][0]["model_hit_ratio"].as_f64().unwrap();
    assert!((model(&on) - (1.0 - 1.0 / 1280.0)).abs() < 1e-12, "{on}");
    assert!((model(&off) - 0.9).abs() < 1e-12, "{off}");
    for v in [&on, &off] {
        assert!((hit(v) - model(v)).abs() < 0.005, "{v}");
    }
    // The old flag still parses and means the default.
    let again = seq(&["--prefetch-ahead"]);
    assert_eq!(again["prefetch_ahead"].as_bool(), Some(true), "{again}");
}
