//! What management asks of the forwarder it manages: the one door to faces and workers.
//!
//! The [`Manager`](crate::Manager) never touches a socket, a thread or a worker's tables: it
//! calls a [`Forwarder`], which the router implements over its channels to the I/O thread and
//! the workers (and a unit test with a fake). Only the FIB is written directly: it is shared,
//! and changing it needs no pause in forwarding.

use engine::fw::pipeline::Counters;
use engine::fw::strategy::{Strategy, StrategyKind};
use engine::table::pit_cs::{CsPolicy, FaceId};
use face::{CreateError, FaceDesc, FaceParams, FaceUpdate, LinkOptions};
use wire::Name;

use crate::CsTierInfo;

/// The forwarder's side of management: faces, strategies, the content stores and statistics.
///
/// Every call answers on the caller's thread; a forwarder that does not answer in time reports
/// what its documentation says (nothing, no face, a failure).
pub trait Forwarder {
    /// Every face with its counters (empty if the forwarder does not answer).
    fn faces(&self) -> Vec<FaceDesc>;

    /// The local URIs of the listening channels (Unix, TCP, UDP), in NFD's order: TCP, then
    /// UDP, then Unix (empty if the forwarder does not answer).
    fn channels(&self) -> Vec<String>;

    /// Creates a face to `uri` (a canonical `udp4`/`udp6`/`tcp4`/`tcp6` face URI; a TCP face is
    /// connected first) with these parameters (MTU `None`: the forwarder's default). A face to
    /// that remote that exists already, whatever its persistency, is
    /// [`CreateFaceError::Exists`], and is left as it is.
    fn create_face(&self, uri: &str, params: &FaceParams) -> Result<FaceDesc, CreateFaceError>;

    /// The link options of a face `faces/create` makes where the command leaves them unset
    /// (CongestionMarkingEnabled: `face_system.general.enable_congestion_marking`, as NFD's
    /// channels take it). By default NFD's.
    fn link_defaults(&self) -> LinkOptions {
        LinkOptions::default()
    }

    /// Creates a unicast Ethernet face to `remote` on the Ethernet channel of interface
    /// `ifname` (NFD: 504 "No channels available to connect" when there is none). By default
    /// the forwarder has no Ethernet faces (406 "Unsupported protocol").
    fn create_ether_face(
        &self,
        ifname: &str,
        remote: face::netif::MacAddr,
        params: &FaceParams,
    ) -> Result<FaceDesc, CreateFaceError> {
        let _ = (ifname, params);
        Err(CreateFaceError::UnsupportedScheme(format!(
            "ether://[{remote}]"
        )))
    }

    /// Creates a face the configuration asks for (`[[face]]`, permanent): as
    /// [`Forwarder::create_face`], except that a TCP face whose remote does not answer may be
    /// created DOWN, redialing, rather than refused (NFD's `faces/create` refuses it, and so does
    /// `create_face`). By default, [`Forwarder::create_face`].
    fn create_configured_face(
        &self,
        uri: &str,
        params: &FaceParams,
    ) -> Result<FaceDesc, CreateFaceError> {
        self.create_face(uri, params)
    }

    /// Changes a face as `faces/update` asks: all the changes, or none if the face refuses one;
    /// answers the face after the change.
    fn update_face(&self, id: FaceId, update: &FaceUpdate) -> Result<FaceDesc, UpdateFaceError>;

    /// Closes a face (nothing if there is none); returns once the forwarder has done it or did
    /// not answer. Its routes go when the forwarder reports the face down.
    fn destroy_face(&self, id: FaceId);

    /// Sends a Data (a network-layer packet) on a face, with this NDNLPv2 PIT token if any.
    fn send(&self, face: FaceId, pit_token: Option<&[u8]>, data: &[u8]);

    /// Sets (`Some`) or unsets (`None`) the strategy of `prefix` in every worker.
    fn set_strategy(&self, prefix: &Name, kind: Option<StrategyKind>);

    /// Sets (`Some`) or unsets (`None`) the strategy of `prefix`, with its parameters, in every
    /// worker. The default tells [`Forwarder::set_strategy`] the strategy alone.
    fn set_strategy_instance(&self, prefix: &Name, strategy: Option<Strategy>) {
        self.set_strategy(prefix, strategy.map(|s| s.kind));
    }

    /// Turns the content store's admission and serving on or off in every worker (NFD's
    /// CS_ENABLE_ADMIT and CS_ENABLE_SERVE). The default ignores it (a forwarder without the
    /// switches).
    fn cs_flags(&self, _admit: bool, _serve: bool) {}

    /// Sets the content store's total capacity (the forwarder shares it among its workers) and
    /// its policy.
    fn cs_config(&self, capacity: usize, policy: CsPolicy);

    /// Erases at most `limit` content-store entries under `prefix`; answers how many went.
    fn cs_erase(&self, prefix: &Name, limit: usize) -> usize;

    /// The figures of every worker that answered.
    fn stats(&self) -> Vec<WorkerStats>;
}

/// Why [`Forwarder::create_face`] made no face.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateFaceError {
    /// The URI's scheme is one the forwarder cannot create faces for (NFD: 406); the text names
    /// the URI.
    UnsupportedScheme(String),
    /// The URI does not parse or does not resolve (NFD: 400); the text names the URI.
    BadUri(String),
    /// A face to that remote exists (NFD: 409 with it).
    Exists(Box<FaceDesc>),
    /// Anything else: 504 with this status text ("Connection failed: ...", "Connection timed
    /// out", "Face creation failed: ...", as NFD words them).
    Failed(String),
}

impl CreateFaceError {
    /// 504 `"Connection failed: <reason>"` for a connection `e` refused, the reason worded as
    /// NFD's (Boost.Asio's, the system's message alone: "Connection refused", without Rust's
    /// " (os error 111)").
    pub fn connection_failed(e: &std::io::Error) -> Self {
        let text = e.to_string();
        let reason = match text.rfind(" (os error ") {
            Some(i) if e.raw_os_error().is_some() => &text[..i],
            _ => &text,
        };
        CreateFaceError::Failed(format!("Connection failed: {reason}"))
    }
}

impl From<CreateError> for CreateFaceError {
    fn from(e: CreateError) -> Self {
        match e {
            CreateError::Exists(d) => CreateFaceError::Exists(d),
            CreateError::Failed(e) => CreateFaceError::Failed(e),
        }
    }
}

/// Why [`Forwarder::update_face`] changed nothing: no such face (or no answer), or the changes
/// the face refused.
pub type UpdateFaceError = face::UpdateError;

/// One worker's figures, as the status datasets report them (summed over workers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// The engine's counters.
    pub counters: Counters,
    /// PIT entries.
    pub pit_len: usize,
    /// CS entries.
    pub cs_len: usize,
    /// CS hits.
    pub cs_hits: u64,
    /// CS misses.
    pub cs_misses: u64,
    /// The worker's storage tier behind its RAM CS, if it has one: its figures for this worker
    /// alone (`workers` = 1), which [`CsTierInfo::merged`] sums (or takes the maximum of) over
    /// workers.
    pub l2: Option<CsTierInfo>,
    /// Live entries of the worker's strategy measurements tables (ASF's namespaces).
    pub measurements: usize,
    /// The name hashes of those entries (the workers share the hash key), so that a prefix
    /// two workers both measure counts once; empty when not reported (then `measurements`
    /// counts).
    pub measured_prefixes: Vec<u64>,
    /// Upstream faces this worker holds unavailable to bypassed Interests now (under a
    /// Nack-α of NB-CC).
    pub nbcc_unavailable_faces: u64,
    /// Latency histograms the worker keeps (the time its batches take, ...).
    pub latency: Vec<LatencyHistogram>,
}

/// A latency histogram: how many observations took at most each bound, as Prometheus keeps
/// one (cumulative counts), with their count and sum.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatencyHistogram {
    /// What is timed, a metric name's stem (`batch`, `l2_storage`, ...).
    pub name: &'static str,
    /// One line saying what is timed.
    pub help: &'static str,
    /// Upper bounds of the buckets, in microseconds, increasing (observations above the last
    /// are in `count` only).
    pub le_us: Vec<u64>,
    /// Observations at or below each bound (cumulative).
    pub cumulative: Vec<u64>,
    /// Observations in all.
    pub count: u64,
    /// Their sum, in nanoseconds.
    pub sum_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_is_worded_as_nfd_words_it() {
        let e = std::io::Error::from_raw_os_error(111);
        assert_eq!(
            CreateFaceError::connection_failed(&e),
            CreateFaceError::Failed("Connection failed: Connection refused".into())
        );
        let e = std::io::Error::other("no route");
        assert_eq!(
            CreateFaceError::connection_failed(&e),
            CreateFaceError::Failed("Connection failed: no route".into())
        );
    }
}
