//! # mgmt — NFD management
//!
//! Cascade's side of NFD's management protocol, the way NFD and ndn-cxx do it on the wire:
//!
//! - [`command`]: parsing a control command (`/localhost/nfd/<module>/<verb>/<ControlParameters>`
//!   plus a signature) and its scope (local faces only; `/localhop` signed in either form), and the
//!   signed Data that answers it ([`parse_command`], [`response_data`]);
//! - [`manager`]: the [`Manager`], which takes management Interests, routes each command to its
//!   module (once [`validate`] has checked its fields as ndn-cxx's command classes do) and each
//!   dataset request to [`dataset`], and sends the answers;
//! - the modules, one per NFD management module: [`rib`] (the RIB: routes with origins, costs,
//!   flags and expiry, the FIB next hops it derives with ChildInherit and Capture expanded as
//!   NFD's `FibUpdater` does, prefix announcements and readvertising to NLSR), [`fib`]
//!   (`fib/add-nexthop`), [`faces`], [`strategy`] (the strategy choices) and [`cs`] (the
//!   content store's settings);
//! - [`dataset`]: the status datasets (`status/general`, `faces/list`, `fib/list`, `rib/list`,
//!   `cs/info`, `strategy-choice/list` and Cascade's own `cs/tiers`, [`dataset::tiers`], and
//!   `cs/nbcache`, [`dataset::nbcache`]), cut
//!   into signed, versioned segments ([`dataset_segments`]) and kept a few seconds for their
//!   later segments;
//! - [`view`]: the same figures as one structure ([`StatusView`]), for a status page or a
//!   metrics endpoint that does not speak the protocol;
//! - [`notify`]: notification streams, NFD's `faces/events` (a FaceEventNotification per face
//!   created, destroyed, up or down), read as ndn-cxx's `NotificationSubscriber` reads them.
//!
//! What this crate must not touch: sockets, threads and the router's internals. The manager
//! talks to the forwarder through the [`Forwarder`] trait (faces, sending, strategies, content
//! stores, the workers' figures), which the router implements over its channels; the router
//! also runs the manager on a thread of its own. The one table the manager writes directly is
//! the shared FIB ([`engine::table::fib::Fib`], through the [`rib::Rib`]), whose updates reach
//! the workers without a pause in forwarding.
//!
//! [`auth`] decides who may send which command, as NFD's `authorizations` section and ndn-cxx's
//! command-Interest policy do: by default anyone (NFD's `certfile any`), else signers whose
//! certificates are trust anchors, with signing times checked against the clock and replays
//! refused; `/localhop/nfd/rib` commands from neighbours answer to NFD's `localhop_security`
//! ([`auth::Authorizations::localhop`], or with an ndn-cxx validator configuration's rules,
//! [`auth::policy`], and certificate chains fetched from the command's face, [`auth::chain`]).
//!
//! [`keychain`] reads the key chain ndn-cxx and python-ndn keep (`~/.ndn/pib.db` and the
//! `tpm-file` private keys) and signs with it, for the tools and for prefix propagation.
//!
//! The manager's modules speak of faces as the face table describes them ([`face::FaceDesc`]),
//! which exists on Linux only; elsewhere this crate is the command parser and the datasets'
//! encoding (what a client needs).

pub mod auth;
pub mod command;
#[cfg(target_os = "linux")]
pub mod cs;
pub mod dataset;
#[cfg(target_os = "linux")]
pub mod faces;
#[cfg(all(test, target_os = "linux"))]
mod fake;
#[cfg(target_os = "linux")]
pub mod fib;
#[cfg(target_os = "linux")]
pub mod forwarder;
pub mod keychain;
#[cfg(target_os = "linux")]
pub mod manager;
pub mod notify;
#[cfg(target_os = "linux")]
pub mod rib;
#[cfg(target_os = "linux")]
pub mod strategy;
#[cfg(test)]
mod test_support;
pub mod validate;
#[cfg(target_os = "linux")]
pub mod view;

pub use command::{
    malformed, not_found, ok, parse_command, parse_command_with, response_data, status,
    unauthorized, unsupported, Command, PARAMETERS_INDEX,
};
pub use dataset::nbcache::NbCacheInfo;
pub use dataset::tiers::CsTierInfo;
pub use dataset::{dataset_segments, DEFAULT_MAX_SEGMENT_BYTES};
#[cfg(target_os = "linux")]
pub use forwarder::{CreateFaceError, Forwarder, LatencyHistogram, UpdateFaceError, WorkerStats};
#[cfg(target_os = "linux")]
pub use manager::{Manager, ManagerParts, RibOptions};
#[cfg(target_os = "linux")]
pub use view::StatusView;

use wire::{Component, Data, MetaInfo, Name};

/// FreshnessPeriod of ControlResponse and dataset Data, in milliseconds (as NFD).
pub const FRESHNESS_MS: u64 = 1000;

/// A management answer: Data named `name` with this Content, FreshnessPeriod [`FRESHNESS_MS`],
/// signed DigestSha256.
fn signed_data(name: Name, content: Vec<u8>, final_block_id: Option<Component>) -> Vec<u8> {
    let mut d = Data::new(name, content);
    d.meta_info = Some(MetaInfo {
        content_type: None,
        freshness_ms: Some(FRESHNESS_MS),
        final_block_id,
    });
    d.sign_digest_sha256();
    d.to_wire()
}
