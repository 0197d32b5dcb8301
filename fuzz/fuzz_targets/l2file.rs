//! Fuzz target `l2file`: store::l2::L2File: a damaged file and index opened (index load or rebuild) and read.
//! The invariants live in `fuzz/checks_peer.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks_peer.rs"]
mod checks_peer;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks_peer::check_l2file(data));
