//! # face — moving bytes between the router and its links
//!
//! A face is one link to a neighbour or a local application: a Unix or TCP stream carrying TLV
//! elements back to back, a UDP socket carrying one packet (or one NDNLPv2 fragment) per datagram,
//! and later Ethernet. This crate owns everything between the socket and a whole network packet:
//!
//! - the NDNLPv2 link layer ([`link`]): a packet and its link headers to the bytes a face sends
//!   ([`encode_link`]) and back ([`split_link`]);
//! - fragmentation and reassembly ([`lp_frag`]);
//! - NDNLPv2 link reliability ([`lp_reliability`]: TxSequence, Acks, retransmission);
//! - framing of streams ([`stream`]) and batched datagram I/O ([`udp`]: `recvmmsg` and
//!   `sendmmsg`; [`udp_ring`]: receiving through io_uring, a multishot `recvmsg` over provided
//!   buffers, with GRO);
//! - the faces and the face table ([`table`]): face ids, on-demand faces, idle expiry, closing,
//!   per-face counters and descriptions ([`FaceCounters`], [`FaceDesc`]), the per-face send
//!   queues and the listeners (Unix, TCP, UDP);
//! - face URIs ([`uri`]): one parser and formatter for the router's and the client's.
//!
//! What this crate must not do: call the forwarding engine or know about its tables, answer
//! management, or touch storage. It hands whole packets (and their link headers) to its caller
//! through [`FaceSink`] and takes whole packets back; the router's I/O thread drives the face
//! table and wires faces and workers together.
//!
//! Nothing here reads a clock: every function that needs the time takes it as an argument, or
//! asks the caller ([`FaceSink::now_ms`]; milliseconds on a monotonic clock of the caller's
//! choosing), so behaviour is deterministic and testable.

#[cfg(target_os = "linux")]
pub mod ether;
pub mod link;
pub mod lp_frag;
pub mod lp_reliability;
#[cfg(target_os = "linux")]
pub mod netif;
pub mod stream;
#[cfg(target_os = "linux")]
pub mod table;
#[cfg(target_os = "linux")]
pub mod udp;
#[cfg(target_os = "linux")]
pub mod udp_ring;
pub mod uri;

pub use link::{encode_link, link_len, split_link, LinkParts, Split};
pub use lp_frag::{
    FragmentError, Fragmenter, LpHeaders, PitToken, Reassembled, Reassembler, ReassemblyBudget,
    ReassemblyCounters, ReassemblyError, MAX_FRAGMENTS,
};
pub use stream::{FramingError, StreamCounters, StreamFramer};
#[cfg(target_os = "linux")]
pub use table::{
    CreateError, Face, FaceConfig, FaceCounters, FaceDesc, FaceId, FaceParams, FaceRx, FaceSink,
    FaceTable, FaceUpdate, LinkOptions, PacketKind, Refusal, UdpRx, UpdateError, FIRST_FACE_ID,
};
#[cfg(target_os = "linux")]
pub use udp::{UdpBatch, UdpCounters};
pub use uri::FaceUri;
