//! # client — a blocking NDN application face for Cascade (or NFD)
//!
//! What an NDN application needs to talk to a forwarder, with no async runtime and no threads:
//!
//! - [`transport`]: where the forwarder is. [`TransportUri`] (`unix:///path`, `tcp://host:port`,
//!   `tcp4`/`tcp6`, `udp://host:port`, `udp4`/`udp6`) and [`transport::resolve`], which finds it
//!   as ndn-cxx applications do: an explicit URI, else `NDN_CLIENT_TRANSPORT`, else the
//!   `transport=` line of the first `client.conf` found, else `unix:///run/nfd/nfd.sock`.
//! - [`Face`]: one connection. Stream transports carry TLV elements back to back (framed with
//!   [`::face::StreamFramer`]); UDP carries one packet or NDNLPv2 fragment per datagram
//!   (reassembled with [`::face::Reassembler`], cut with [`::face::Fragmenter`]). Incoming NDNLPv2
//!   headers are decoded: Nack (with its reason), PitToken, CongestionMark, IncomingFaceId.
//! - Consumer: [`Face::express`] (one Interest, one [`Outcome`]: Data, Nack or timeout) and
//!   [`Consumer`] (many Interests outstanding, answers in arrival order).
//! - Producer: [`Face::register`] (`rib/register`) and [`Face::put_data`], which echoes the
//!   Interest's PitToken as NDNLPv2 requires; [`serve_file`] serves a file as versioned, segmented,
//!   signed Data.
//! - Management ([`control`]): signed command Interests (v0.3 signed-Interest form, DigestSha256)
//!   answered by a [`wire::nfd::ControlResponse`]; status datasets fetched segment by segment and
//!   reassembled. [`nfdc`]: the logic of an nfdc-like tool on top of it (`cascade ctl`): checked
//!   commands, and datasets rendered as text tables or JSON.
//! - RDR ([`rdr`]): version discovery through `<prefix>/32=metadata`, answered by
//!   [`serve_content`] and tried first by [`get`].
//! - Segmented fetch ([`fetch`]): [`get`] discovers the version, then fetches the segments with an
//!   AIMD window ([`Aimd`]) and RFC 6298 retransmission timers ([`RttEstimator`]).
//!
//! Every loop here is bounded: receive loops by a deadline, the window by a maximum, datasets by
//! a segment count, reorder buffers by the window.

pub mod aimd;
pub mod control;
pub mod cubic;
pub mod error;
pub mod face;
pub mod fetch;
pub mod nfdc;
pub mod producer;
pub mod rdr;
pub mod rtt;
pub mod transport;

pub use aimd::{Aimd, AimdOptions};
pub use control::{command_interest, Controller};
pub use cubic::{Cubic, CubicOptions, Window};
pub use error::{Error, Result};
pub use face::{Consumer, DataPacket, Face, InterestPacket, NackPacket, Outcome, Received};
pub use fetch::{get, get_logged, get_with_progress, FetchEvent, FetchOptions, Progress, Stats};
/// The key chain (`~/.ndn`, as ndn-cxx and python-ndn keep it) and signing with its keys.
pub use mgmt::keychain;
pub use producer::{segment_data, serve_content, serve_file, serve_one, ServeOptions, ServeStats};
pub use rtt::{RttEstimator, RttSummary};
pub use transport::TransportUri;

/// Four random bytes for an Interest Nonce.
pub fn random_nonce() -> [u8; 4] {
    let mut n = [0u8; 4];
    fill_random(&mut n);
    n
}

pub(crate) use wire::fill_random;

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_time_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
