//! `cascade sim` as a user runs it: a seed replays to the same line, a corrupted Data fails
//! with its seed and step and the command that replays it, bad faults are refused.

use std::process::{Command, Output};

fn cascade(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cascade"))
        .args(args)
        .output()
        .expect("run cascade")
}

#[test]
fn a_seed_passes_and_replays_to_the_same_trace() {
    let args = ["sim", "--seed", "3", "--seeds", "2", "--steps", "2000"];
    let a = cascade(&args);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let text = String::from_utf8_lossy(&a.stdout);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.starts_with("seed 3: ok, 2000 steps"), "{text}");
    assert!(text.contains("\nseed 4: ok"), "{text}");
    assert_eq!(
        cascade(&args).stdout,
        a.stdout,
        "the same seeds, the same lines"
    );
}

#[test]
fn a_broken_invariant_exits_1_with_seed_step_and_replay() {
    let out = cascade(&[
        "sim",
        "--seed",
        "9",
        "--steps",
        "2000",
        "--faults",
        "all,corrupt@50",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("FAILED: seed 9 step "), "{err}");
    assert!(err.contains("not the producer's"), "{err}");
    assert!(
        err.contains("replay: cascade sim --seed 9 --steps 2000 --faults all,corrupt@50"),
        "{err}"
    );
}

#[test]
fn unknown_faults_exit_2() {
    let out = cascade(&["sim", "--faults", "hostile,meteor"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("meteor"));
}

#[test]
fn with_l2_each_seed_prints_its_store_line_and_a_planted_slot_fails_with_its_replay() {
    let out = cascade(&[
        "sim", "--seed", "0", "--seeds", "2", "--steps", "1500", "--l2",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let l2: Vec<&str> = text.lines().filter(|l| l.starts_with("  L2: ")).collect();
    assert_eq!(l2.len(), 2, "{text}");
    assert!(
        l2[0].contains(" writes, ") && l2[0].contains("faults: "),
        "{text}"
    );
    assert!(text.contains("\nall seeds, L2: "), "{text}");
    let args = [
        "sim",
        "--seed",
        "2",
        "--steps",
        "1000",
        "--l2-faults",
        "none",
        "--faults",
        "all,plant@300",
    ];
    let out = cascade(&args);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("FAILED: seed 2 step "), "{err}");
    assert!(err.contains("not the producer's"), "{err}");
    assert!(
        err.contains("--faults all,plant@300 --l2-faults none"),
        "{err}"
    );
    let mut args = args.to_vec();
    args[2] = "1";
    args.extend(["--mapping", "name"]);
    let out = cascade(&args);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cascade sim --seed 1 --steps 1000 --faults all,plant@300 --mapping name"),
        "{err}"
    );
    // Workers off from the start, by the same seeds, names spread by full name.
    let args = [
        "sim",
        "--seed",
        "0",
        "--seeds",
        "3",
        "--steps",
        "1500",
        "--l2-faults",
        "off=1000",
        "--mapping",
        "name",
    ];
    let out = cascade(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("all seeds, L2: 0 reads, 0 writes, ")
            && text.contains(" 6 workers off from the start"),
        "{text}"
    );
    let bad = cascade(&["sim", "--mapping", "batch"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = cascade(&["sim", "--l2-faults", "read=2,meteor"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("meteor"));
}
