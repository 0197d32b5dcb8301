//! Fuzz target `uri`: wire::Name::from_uri on arbitrary UTF-8; a parsed name must print to a URI that parses back to it.
//! The invariants live in `fuzz/checks.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_uri(data));
