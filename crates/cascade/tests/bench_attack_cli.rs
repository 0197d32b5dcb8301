//! `cascade bench attack` as a user runs it, briefly: every attack against a real `cascade run`
//! child, at a low rate, with the output's shape checked and the legitimate consumer's Data
//! counted (no timing is asserted: the figures are the benchmark's business).

#[allow(dead_code)] // cascade_json is for single-object output; this one prints lines
mod common;

#[test]
fn every_attack_reports_one_object_with_the_consumer_served() {
    let out = common::cascade(&[
        "bench",
        "attack",
        "--duration",
        "0.5",
        "--rate",
        "2000",
        "--legit-rate",
        "500",
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r["attack"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "faces",
            "pit",
            "reassembly",
            "mgmt",
            "garbage",
            "reflection"
        ]
    );
    for (r, letter) in rows.iter().zip('a'..) {
        assert_eq!(r["letter"], letter.to_string(), "{r}");
        assert!(r["baseline"]["satisfied"].as_u64().unwrap() > 0, "{r}");
        assert!(r["attacked"]["satisfied"].is_u64(), "{r}");
        assert!(r["attack_packets"].as_u64().unwrap() > 0, "{r}");
        assert!(r["idle_rss_mib"].as_f64().unwrap() > 0.0, "{r}");
        assert!(
            r["attack_peak_rss_mib"].as_f64().unwrap() > 0.0
                && r["rss_bound_mib"].as_f64().unwrap() > r["idle_rss_mib"].as_f64().unwrap(),
            "{r}"
        );
        assert_eq!(r["router_alive"], true, "{r}");
        for k in ["floor_throughput_holds", "floor_rss_holds"] {
            assert!(r[k].is_boolean(), "{k}: {r}");
        }
        for k in [
            "pct_of_baseline",
            "router_cpu_cores",
            "rss_growth_end_mib_per_s",
        ] {
            assert!(r[k].is_number(), "{k}: {r}");
        }
    }
    // The router saw the attackers: faces from their addresses, counted refusals, the
    // unanswered Interests in the PIT, and the CS answering the reflection.
    let by = |n: &str| rows.iter().find(|r| r["attack"] == n).unwrap();
    assert!(by("faces")["attacker_faces"].as_u64().unwrap() > 0);
    assert!(by("pit")["pit_entries"].as_u64().unwrap() > 0);
    assert!(
        by("garbage")["bound_counters"]["on_demand_refused_malformed"]
            .as_u64()
            .unwrap()
            > 0
    );
    let f = by("reflection");
    assert!(
        f["attacker_face_out_bytes"].as_u64().unwrap()
            > f["attacker_face_in_bytes"].as_u64().unwrap()
    );
}

#[test]
fn text_output_names_each_attack_and_its_floors() {
    let out = common::cascade(&[
        "bench",
        "attack",
        "--duration",
        "0.3",
        "--rate",
        "1000",
        "--attacks",
        "b,mgmt",
        "--legit-face",
        "unix",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "b pit",
        "d mgmt",
        "floor b pit",
        "floor d mgmt",
        "of 4 floors hold",
    ] {
        assert!(stdout.contains(want), "{want:?} missing:\n{stdout}");
    }
}

#[test]
fn a_bad_attack_list_is_one_line_and_status_1() {
    let out = common::cascade(&["bench", "attack", "--attacks", "a,x"]);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--attacks") && e.contains("\"x\""), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}
