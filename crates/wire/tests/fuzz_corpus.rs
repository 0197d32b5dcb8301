//! Replays the fuzz corpus of the `wire` decoders' targets on the stable toolchain, through the
//! same checks as the cargo-fuzz targets (`fuzz/checks.rs`, included below; the replay itself
//! is `fuzz/replay.rs`). The other targets are replayed by `crates/router/tests/fuzz_corpus.rs`,
//! which also checks that every corpus directory has a check.

#[path = "../../../fuzz/checks.rs"]
mod checks;
#[path = "../../../fuzz/replay.rs"]
mod replay;

#[test]
fn every_target_has_a_seed_corpus() {
    let fuzz = replay::fuzz_dir(env!("CARGO_MANIFEST_DIR"));
    replay::assert_seed_corpora(&fuzz, checks::TARGETS);
}

#[test]
fn corpus_replays_cleanly() {
    let fuzz = replay::fuzz_dir(env!("CARGO_MANIFEST_DIR"));
    replay::assert_replays_cleanly(&fuzz, checks::TARGETS, checks::check);
}
