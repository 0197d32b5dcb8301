//! # face — moving bytes between the router and its links
//!
//! A face is one link to a neighbour or a local application: a Unix or TCP stream carrying TLV
//! elements back to back, a UDP socket carrying one packet (or one NDNLPv2 fragment) per datagram,
//! and later Ethernet. This crate owns everything between the socket and a whole network packet:
//! framing, NDNLPv2 link headers, fragmentation and reassembly ([`lp_frag`]), batching and per-face
//! counters.
//!
//! What this crate must not do: call the forwarding engine, or know about its tables. It hands
//! whole packets (and their link headers) to its caller and takes whole packets back; the router
//! wires faces and workers together.
//!
//! Nothing here reads a clock: every function that needs the time takes it as an argument
//! (milliseconds on a monotonic clock of the caller's choosing), so behaviour is deterministic
//! and testable.

pub mod link;
pub mod lp_frag;
pub mod stream;
#[cfg(target_os = "linux")]
pub mod udp;

pub use link::{encode_link, link_len, split_link, LinkParts, Split};
pub use lp_frag::{
    FragmentError, Fragmenter, LpHeaders, PitToken, Reassembled, Reassembler, ReassemblyCounters,
    ReassemblyError, MAX_FRAGMENTS,
};
pub use stream::{FramingError, StreamCounters, StreamFramer};
#[cfg(target_os = "linux")]
pub use udp::{UdpBatch, UdpCounters};
