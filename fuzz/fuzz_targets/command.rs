//! Fuzz target `command`: mgmt::command::parse_command on command Interests, local and not.
//! The invariants live in `fuzz/checks_peer.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks_peer.rs"]
mod checks_peer;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks_peer::check_command(data));
