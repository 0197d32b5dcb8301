use super::*;

#[test]
fn twenty_seeds_keep_every_invariant_and_replay_exactly() {
    for seed in 0..20 {
        let cfg = SimConfig::new(seed, 3_000);
        let a = run(&cfg).unwrap_or_else(|f| panic!("{f}"));
        assert!(
            a.stats.data > 0,
            "seed {seed}: no Data reached a consumer: {a:?}"
        );
        assert!(a.stats.checked > a.stats.data);
        if seed < 3 {
            let b = run(&cfg).unwrap_or_else(|f| panic!("{f}"));
            assert_eq!(a, b, "seed {seed} replays to the same trace and counts");
        }
    }
}

#[test]
fn another_seed_another_trace() {
    let a = run(&SimConfig::new(1, 500)).unwrap_or_else(|f| panic!("{f}"));
    let b = run(&SimConfig::new(4, 500)).unwrap_or_else(|f| panic!("{f}"));
    assert_ne!(a.trace_hash, b.trace_hash);
}

#[test]
fn a_corrupted_data_is_caught_with_its_seed_and_step() {
    let mut cfg = SimConfig::new(5, 3_000);
    cfg.faults.corrupt_at = Some(200);
    let f = run(&cfg).expect_err("the flipped byte must be reported");
    assert_eq!(f.seed, 5);
    assert!(f.step >= 200, "{f}");
    assert!(f.what.contains("not the producer's"), "{f}");
    assert!(f.to_string().starts_with("seed 5 step "), "{f}");
    // The same failure again, at the same step.
    assert_eq!(run(&cfg).expect_err("again"), f);
}

#[test]
fn runs_without_faults_answer_most_interests() {
    let mut cfg = SimConfig::new(2, 3_000);
    cfg.faults = Faults::NONE;
    let o = run(&cfg).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(o.stats.malformed, 0);
    assert_eq!(o.stats.destroyed, 0);
    assert!(o.stats.data * 2 > o.stats.nacks, "{o:?}");
}

#[test]
fn faults_parse_and_refuse_unknown_words() {
    assert_eq!(Faults::parse("all").unwrap(), Faults::ALL);
    assert_eq!(Faults::parse("none").unwrap(), Faults::NONE);
    let f = Faults::parse("hostile,corrupt@7").unwrap();
    assert!(f.hostile && !f.admin && f.corrupt_at == Some(7));
    assert!(Faults::parse("hostle").unwrap_err().contains("hostle"));
}

/// More seeds, longer: `cargo test -p cascade-router --release -- --ignored many_seeds`.
#[test]
#[ignore]
fn many_seeds() {
    let n: u64 = std::env::var("SIM_SEEDS").map_or(200, |s| s.parse().unwrap_or(200));
    for seed in 0..n {
        run(&SimConfig::new(seed, 10_000)).unwrap_or_else(|f| panic!("{f}"));
    }
}
