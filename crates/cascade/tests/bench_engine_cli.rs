//! `cascade bench engine` as a user runs it, on tables small enough for a test: the JSON report's
//! shape and invariants (probe counts, the attack's rounds), and the `--steady` mode.

mod common;

fn bench(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "bench", "engine", "--fib", "5000", "--pit", "2048", "--quick", "--json",
    ];
    args.extend_from_slice(extra);
    common::cascade_json(&args)
}

#[test]
fn report_has_the_issue_shape_and_the_attack_stays_within_m_probes() {
    let v = bench(&[]);
    assert_eq!(v["fib_entries"].as_u64(), Some(5000));
    for phase in ["interest", "data"] {
        let c = v[phase]["cycles_per_packet"].as_f64().unwrap();
        assert!(c > 0.0, "{phase}: {v}");
    }
    let m = v["attack"]["m"].as_f64().unwrap();
    let probes = v["attack"]["probes_per_interest"].as_f64().unwrap();
    assert!(
        probes > 0.0 && probes <= m,
        "attack probes {probes} > M {m}"
    );
    let rounds = v["attack"]["round_ratios"].as_array().unwrap();
    assert_eq!(rounds.len() as u64, v["attack"]["rounds"].as_u64().unwrap());
    // The reported ratio is the median of the rounds.
    let mut r: Vec<f64> = rounds.iter().map(|x| x.as_f64().unwrap()).collect();
    r.sort_by(f64::total_cmp);
    assert_eq!(
        v["attack"]["relative_throughput"].as_f64(),
        Some(r[r.len() / 2])
    );
    let lpm = v["lpm"].as_array().unwrap();
    assert_eq!(lpm[0]["algorithm"].as_str(), Some("longest-first"));
    assert!(lpm.iter().skip(1).all(|row| row["algorithm"] == "2-stage"));
    // The dispatcher's hashing is measured and reported beside the engine's figures.
    assert_eq!(v["precomputed_hash"], true);
    for phase in ["interest", "data", "attack"] {
        let c = v["dispatcher"][format!("{phase}_cycles_per_packet")].as_f64();
        assert!(c.is_some_and(|c| c > 0.0), "{phase}: {v}");
    } // So is the wire decoder alone.
    for phase in ["interest", "data"] {
        let c = v["decode"][format!("{phase}_cycles_per_packet")].as_f64();
        assert!(c.is_some_and(|c| c > 0.0), "{phase}: {v}");
    }
}

#[test]
fn without_precomputed_hashes_the_engine_hashes_and_no_dispatcher_is_reported() {
    let v = bench(&["--no-precomputed-hash", "--steady", "1"]);
    assert_eq!(v["precomputed_hash"], false);
    let v = bench(&["--no-precomputed-hash"]);
    assert_eq!(v["precomputed_hash"], false);
    assert!(v["dispatcher"].is_null(), "{v}");
    assert!(v["data"]["cycles_per_packet"]
        .as_f64()
        .is_some_and(|c| c > 0.0));
}

#[test]
fn steady_mode_reports_medians_of_its_rounds() {
    let v = bench(&["--steady", "3"]);
    assert_eq!(v["rounds"].as_u64(), Some(3));
    for key in [
        "interest_cycles_per_packet",
        "data_cycles_per_packet",
        "attack_cycles_per_packet",
    ] {
        assert!(v[key].as_f64().is_some_and(|c| c > 0.0), "{key}: {v}");
    }
    let decode = v["decode"]["data_cycles_per_packet"].as_f64();
    assert!(decode.is_some_and(|c| c > 0.0), "{v}");
}
