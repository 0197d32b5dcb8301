//! Fuzz target `dispatch`: router::dispatch::Dispatcher, the I/O thread's classifier, against the full decoder.
//! The invariants live in `fuzz/checks_peer.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks_peer.rs"]
mod checks_peer;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks_peer::check_dispatch(data));
