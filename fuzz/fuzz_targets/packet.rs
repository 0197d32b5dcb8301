//! Fuzz target `packet`: wire::PacketView::decode (and every typed decoder, LpPacket fragments), then to_packet -> to_wire -> decode round trip.
//! The invariants live in `fuzz/checks.rs`, shared with the corpus replay test.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_packet(data));
