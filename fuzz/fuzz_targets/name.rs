//! Fuzz target `name`: wire::NameView::decode, then the Name round trip through to_wire and through the URI form.
//! The invariants live in `fuzz/checks.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_name(data));
