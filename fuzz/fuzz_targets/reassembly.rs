//! Fuzz target `reassembly`: face::Reassembler: sequences of NDNLPv2 pieces, two reassemblers on one budget.
//! The invariants live in `fuzz/checks_peer.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks_peer.rs"]
mod checks_peer;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks_peer::check_reassembly(data));
