//! `cascade model che` as a user runs it: JSON keys and ranges, table output, bad arguments.

use std::process::{Command, Output};

fn cascade(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cascade"))
        .args(args)
        .output()
        .expect("run cascade")
}

#[test]
fn che_json_has_the_three_workloads_in_unit_range() {
    for policy in ["fifo", "lru"] {
        let out = cascade(&[
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
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        for key in ["unif", "seq", "real", "p1st"] {
            let x = v[key]
                .as_f64()
                .unwrap_or_else(|| panic!("missing {key}: {v}"));
            assert!((0.0..=1.0).contains(&x), "{key} = {x}");
        }
        assert_eq!(v["seq"].as_f64(), Some(0.9));
        assert_eq!(v["unif"].as_f64(), Some(0.01));
        assert_eq!(v["policy"].as_str(), Some(policy));
        assert!(v["real"].as_f64() > v["seq"].as_f64());
    }
}

#[test]
fn che_table_lists_the_workloads() {
    let out = cascade(&["model", "che", "--l1", "1000", "--catalogue", "100"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for w in ["unif", "seq", "real"] {
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
