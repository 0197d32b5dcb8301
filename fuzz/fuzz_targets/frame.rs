//! Fuzz target `frame`: wire::packet::frame_len over arbitrary stream buffers.
//! The invariants live in `fuzz/checks.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_frame(data));
