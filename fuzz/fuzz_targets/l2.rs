//! Fuzz target `l2`: store::layout: the L2 superblock, slot and chunk-name parsers.
//! The invariants live in `fuzz/checks_peer.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks_peer.rs"]
mod checks_peer;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks_peer::check_l2(data));
