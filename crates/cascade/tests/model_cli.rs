//! `cascade model che` as a user runs it: JSON keys and ranges, table output, bad arguments.

mod common;

use common::{cascade, cascade_json};

#[test]
fn che_json_has_the_three_workloads_in_unit_range() {
    for policy in ["fifo", "lru"] {
        let v = cascade_json(&[
            "model",
            "che",
            "--l1",
            "128000",
            "--catalogue",
            "10000",
            "--policy",
            policy,
            "--json",
        ]);
        for key in ["unif", "seq", "real", "p1st"] {
            let x = v[key]
                .as_f64()
                .unwrap_or_else(|| panic!("missing {key}: {v}"));
            assert!((0.0..=1.0).contains(&x), "{key} = {x}");
        }
        assert_eq!(v["seq"].as_f64(), Some(0.9));
        assert_eq!(v["seq_prefetch_ahead"].as_f64(), Some(1.0 - 1.0 / 1280.0));
        assert_eq!(v["unif"].as_f64(), Some(0.01));
        assert_eq!(v["policy"].as_str(), Some(policy));
        assert!(v["real"].as_f64() > v["seq"].as_f64());
        // The stream model is derived for FIFO only.
        assert_eq!(v["real_streams"].is_null(), policy == "lru", "{v}");
    }
}

#[test]
fn che_json_has_the_stream_model_of_real() {
    let v = cascade_json(&[
        "model",
        "che",
        "--l1",
        "1280",
        "--catalogue",
        "100",
        "--window",
        "100000",
        "--json",
    ]);
    let s = &v["real_streams"];
    let steady = s["steady"]["hit_ratio"].as_f64().expect("steady hit ratio");
    let window = s["window"]["hit_ratio"].as_f64().expect("window hit ratio");
    // L1 of 1,280 chunks cannot keep a batch for each of 160 streams: the steady state has
    // collapsed; the paper's window (10 x |L1| warm-up) still starts on the arrival ramp.
    assert_eq!(s["steady"]["active_streams"].as_f64(), Some(160.0));
    assert!(steady < 0.6 && window > steady && window < v["real"].as_f64().unwrap());
    assert_eq!(s["window"]["warmup_requests"].as_u64(), Some(12_800));
    assert!(s["window"]["start_s"].as_f64().unwrap() < 60.0);
    for bad in ["0", "-1", "nan"] {
        let out = cascade(&[
            "model",
            "che",
            "--l1",
            "10",
            "--catalogue",
            "10",
            "--chunk-rate",
            bad,
        ]);
        assert!(!out.status.success(), "--chunk-rate {bad} accepted");
    }
}

#[test]
fn che_table_lists_the_workloads() {
    let out = cascade(&["model", "che", "--l1", "1000", "--catalogue", "100"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for w in ["unif", "seq", "seq+ahead", "real", "steady", "window"] {
        assert!(text.lines().any(|l| l.starts_with(w)), "{text}");
    }
}

#[test]
fn che_rejects_bad_arguments() {
    for args in [
        &["model", "che", "--catalogue", "10"][..],
        &["model", "che", "--l1", "10", "--catalogue", "0"],
        &[
            "model",
            "che",
            "--l1",
            "10",
            "--catalogue",
            "10",
            "--batch",
            "0",
        ],
        &[
            "model",
            "che",
            "--l1",
            "10",
            "--catalogue",
            "10",
            "--alpha",
            "-1",
        ],
        &[
            "model",
            "che",
            "--l1",
            "10",
            "--catalogue",
            "10",
            "--policy",
            "lfu",
        ],
    ] {
        let out = cascade(args);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(!out.stderr.is_empty());
    }
}
