//! Replaying fuzz inputs on the stable toolchain, shared by the corpus replay tests
//! (`crates/wire/tests/fuzz_corpus.rs` for the `wire` decoders' targets,
//! `crates/router/tests/fuzz_corpus.rs` for the other parsers a peer reaches), which include
//! this file with `#[path]`.
//!
//! Every file of `fuzz/corpus/<target>/` (the seeds, which must exist and be non-empty),
//! `fuzz/artifacts-found/<target>/` (committed reproducers of bugs the fuzzer found) and
//! `fuzz/artifacts/<target>/` (local crash files of a fuzzing run, if any) goes through the
//! check of `<target>`; a test fails listing every input whose check panicked.

#![allow(dead_code)] // each test uses what it needs

use std::fs;
use std::panic;
use std::path::{Path, PathBuf};

/// A target's check: false for a target it does not know.
pub type Check = fn(&str, &[u8]) -> bool;

/// The repository's `fuzz/` directory, seen from a crate under `crates/`.
pub fn fuzz_dir(manifest_dir: &str) -> PathBuf {
    let dir = Path::new(manifest_dir).join("../../fuzz");
    dir.canonicalize().unwrap_or(dir)
}

/// The regular files of `dir`, sorted; an error if `dir` cannot be read.
pub fn files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
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
pub fn replay(check: Check, target: &str, dir: &Path, failures: &mut Vec<String>) -> usize {
    let inputs = files(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for path in &inputs {
        let data = fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        match panic::catch_unwind(|| check(target, &data)) {
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

/// Every target of `targets` has a non-empty seed corpus.
pub fn assert_seed_corpora(fuzz: &Path, targets: &[&str]) {
    for target in targets {
        let dir = fuzz.join("corpus").join(target);
        let n = files(&dir)
            .unwrap_or_else(|e| panic!("seed corpus {} is missing: {e}", dir.display()))
            .len();
        assert!(n > 0, "seed corpus {} is empty", dir.display());
    }
}

/// Replays the seeds and the crash files of every target of `targets` through `check`.
pub fn assert_replays_cleanly(fuzz: &Path, targets: &[&str], check: Check) {
    // The default panic hook still prints each failure as it happens; all are listed at the end.
    let mut failures = Vec::new();
    let mut seeds = 0;
    for target in targets {
        seeds += replay(
            check,
            target,
            &fuzz.join("corpus").join(target),
            &mut failures,
        );
        for extra in ["artifacts-found", "artifacts"] {
            let dir = fuzz.join(extra).join(target);
            if dir.is_dir() {
                replay(check, target, &dir, &mut failures);
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
