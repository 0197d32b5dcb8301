//! Fuzz target `mgmt`: every NFD management decoder in wire::nfd (ControlParameters,
//! ControlResponse, ForwarderStatus, the dataset entries and decode_dataset), with round trips.
//! The invariants live in `fuzz/checks.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_mgmt(data));
