//! Replays the fuzz corpus on the stable toolchain, through the same checks as the cargo-fuzz
//! targets (`fuzz/checks.rs`, included below).
//!
//! Every file of `fuzz/corpus/<target>/` (the seeds, which must exist and be non-empty),
//! `fuzz/artifacts-found/<target>/` (committed reproducers of bugs the fuzzer found) and
//! `fuzz/artifacts/<target>/` (local crash files of a fuzzing run, if any) is run through the
//! check of `<target>`. The test fails listing every input whose check panicked.

use std::fs;
use std::panic;
use std::path::{Path, PathBuf};

#[path = "../../../fuzz/checks.rs"]
mod checks;

fn fuzz_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    dir.canonicalize().unwrap_or(dir)
}

/// The regular files of `dir`, sorted; an error if `dir` cannot be read.
fn files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Runs `target`'s check on every file in `dir`; returns how many ran, and pushes failures.
fn replay(target: &str, dir: &Path, failures: &mut Vec<String>) -> usize {
    let inputs = files(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for path in &inputs {
        let data = fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let outcome = panic::catch_unwind(|| checks::check(target, &data));
        match outcome {
            Ok(true) => {}
            Ok(false) => failures.push(format!("{}: no check for `{target}`", path.display())),
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| e.downcast_ref::<&str>().copied())
                    .unwrap_or("(non-string panic)");
                let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
                failures.push(format!(
                    "{} ({} bytes: {hex}): {msg}",
                    path.display(),
                    data.len()
                ));
            }
        }
    }
    inputs.len()
}

#[test]
fn every_target_has_a_seed_corpus() {
    let corpus = fuzz_dir().join("corpus");
    for target in checks::TARGETS {
        let dir = corpus.join(target);
        let n = files(&dir)
            .unwrap_or_else(|e| panic!("seed corpus {} is missing: {e}", dir.display()))
            .len();
        assert!(n > 0, "seed corpus {} is empty", dir.display());
    }
    // A corpus directory without a check would be silently skipped by the fuzzer's replay.
    for entry in fs::read_dir(&corpus).expect("fuzz/corpus") {
        let name = entry.expect("fuzz/corpus entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            checks::TARGETS.contains(&name.as_ref()),
            "fuzz/corpus/{name} has no check in fuzz/checks.rs"
        );
    }
}

#[test]
fn corpus_replays_cleanly() {
    // The default panic hook still prints each failure as it happens; all are listed at the end.
    let fuzz = fuzz_dir();
    let mut failures = Vec::new();
    let mut seeds = 0;
    for target in checks::TARGETS {
        seeds += replay(target, &fuzz.join("corpus").join(target), &mut failures);
        for extra in ["artifacts-found", "artifacts"] {
            let dir = fuzz.join(extra).join(target);
            if dir.is_dir() {
                replay(target, &dir, &mut failures);
            }
        }
    }
    assert!(seeds > 0, "no seed inputs replayed");
    assert!(
        failures.is_empty(),
        "{} fuzz input(s) fail their check:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
