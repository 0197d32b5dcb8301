//! Status datasets: which there are, how they are cut into signed, versioned segments, and the
//! versions kept so that their later segments can be fetched.
//!
//! A dataset Interest names `/localhost/nfd/<module>/<verb>` ([`Dataset`]), followed for
//! `faces/query` by the FaceQueryFilter; the answer is the first segment of a new version,
//! generated on request. A version stays fetchable for [`DATASET_TTL_MS`] ([`Versions`]):
//! `<name>/v=<version>` and `<name>/v=<version>/seg=<n>` are answered from it. What each dataset carries, built from the manager's state and the
//! forwarder's figures, is in `content.rs`; Cascade's own `cs/tiers` encoding is [`tiers`],
//! its `cs/nbcache` [`nbcache`].

#[cfg(target_os = "linux")]
pub(crate) mod content;
#[cfg(target_os = "linux")]
pub(crate) mod fib;
pub mod nbcache;
#[cfg(target_os = "linux")]
pub(crate) mod reserved;
pub mod tiers;

#[cfg(target_os = "linux")]
pub(crate) use content::Sources;

use std::collections::VecDeque;

use wire::{tt, Component, Name};

/// Default largest Content per dataset segment, in bytes (NFD uses about 8000).
pub const DEFAULT_MAX_SEGMENT_BYTES: usize = 8000;

/// Dataset versions kept for segment fetches.
pub const DATASET_CACHE: usize = 32;

/// How long a generated dataset version stays fetchable, in milliseconds.
pub const DATASET_TTL_MS: u64 = 5_000;

/// The status datasets served, by `<module>/<verb>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dataset {
    /// `status/general`: ForwarderStatus.
    StatusGeneral,
    /// `faces/list`: a FaceStatus per face.
    FacesList,
    /// `faces/query/<FaceQueryFilter>`: a FaceStatus per face the filter matches.
    FacesQuery,
    /// `faces/channels`: a ChannelStatus per listening channel.
    FacesChannels,
    /// `fib/list`: a FibEntry per FIB prefix.
    FibList,
    /// `rib/list`: a RibEntry per RIB prefix (next hops of `fib/add-nexthop` left out).
    RibList,
    /// `cs/info`: CsInfo.
    CsInfo,
    /// `cs/tiers`: Cascade's storage tiers ([`tiers`]).
    CsTiers,
    /// `cs/nbcache`: Cascade's NB-Cache bypass and congestion counters ([`nbcache`]).
    CsNbCache,
    /// `strategy-choice/list`: a StrategyChoice per prefix.
    StrategyChoiceList,
}

impl Dataset {
    /// The dataset a module and verb name, if any.
    pub fn from_module_verb(module: &str, verb: &str) -> Option<Dataset> {
        Some(match (module, verb) {
            ("status", "general") => Dataset::StatusGeneral,
            ("faces", "list") => Dataset::FacesList,
            ("faces", "query") => Dataset::FacesQuery,
            ("faces", "channels") => Dataset::FacesChannels,
            ("fib", "list") => Dataset::FibList,
            ("rib", "list") => Dataset::RibList,
            ("cs", "info") => Dataset::CsInfo,
            ("cs", "tiers") => Dataset::CsTiers,
            ("cs", "nbcache") => Dataset::CsNbCache,
            ("strategy-choice", "list") => Dataset::StrategyChoiceList,
            _ => return None,
        })
    }
}

/// Cuts a status dataset into Data packets named `<dataset_name>/v=<version>/seg=<n>`, each with
/// at most `max_segment_bytes` of Content (a value of 0 is treated as 1), FreshnessPeriod
/// [`FRESHNESS_MS`](crate::FRESHNESS_MS), signed DigestSha256. FinalBlockId (the last segment
/// component) is put on every segment, as NFD does. An empty dataset yields one empty segment.
pub fn dataset_segments(
    dataset_name: &Name,
    version: u64,
    content: &[u8],
    max_segment_bytes: usize,
) -> Vec<Vec<u8>> {
    let max = max_segment_bytes.max(1);
    let chunks: Vec<&[u8]> = if content.is_empty() {
        vec![&[]]
    } else {
        content.chunks(max).collect()
    };
    let last = Component::segment(chunks.len() as u64 - 1);
    let base = dataset_name.clone().with(Component::version(version));
    chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let name = base.clone().with(Component::segment(i as u64));
            crate::signed_data(name, chunk.to_vec(), Some(last.clone()))
        })
        .collect()
}

/// The dataset versions generated in the last [`DATASET_TTL_MS`], at most [`DATASET_CACHE`]
/// (the oldest goes first), with their segments.
#[derive(Debug, Default)]
pub struct Versions {
    kept: VecDeque<(Name, u64, Vec<Vec<u8>>)>,
}

/// The number of a component of type `typ`, if `c` is one.
fn number_of(c: Option<&Component>, typ: u32) -> Option<u64> {
    c.filter(|c| u32::from(c.typ) == typ)
        .and_then(Component::as_number)
}

/// Whether a dataset Interest named `full` asks for a version already made (its last component
/// is a version or a segment number), as NFD's dispatcher tells them apart; such an Interest is
/// answered from the versions kept, never with a new one.
pub fn names_a_version(full: &Name) -> bool {
    let last = full.components.last();
    number_of(last, tt::VERSION).is_some() || number_of(last, tt::SEGMENT).is_some()
}

impl Versions {
    /// The Data answering a dataset Interest named `full` at `now_ms`: for a name that
    /// [names a version](names_a_version), that segment (the first when the name ends with the
    /// version) of a version kept; for any other, the first segment of a new version named
    /// `<full>/v=<version>`, whose version number and content `make` gives. `None`: no such
    /// version or segment.
    pub fn answer(
        &mut self,
        full: &Name,
        now_ms: u64,
        make: impl FnOnce() -> (u64, Vec<u8>),
    ) -> Option<Vec<u8>> {
        self.kept
            .retain(|(_, made, _)| now_ms.saturating_sub(*made) < DATASET_TTL_MS);
        if !names_a_version(full) {
            let (version, content) = make();
            let segs = dataset_segments(full, version, &content, DEFAULT_MAX_SEGMENT_BYTES);
            let first = segs.first().cloned();
            let versioned = full.clone().with(Component::version(version));
            if self.kept.len() >= DATASET_CACHE {
                self.kept.pop_front();
            }
            self.kept.push_back((versioned, now_ms, segs));
            return first;
        }
        let (versioned, seg) = match number_of(full.components.last(), tt::SEGMENT) {
            Some(seg) => (full.prefix(full.len() - 1), seg),
            None => (full.clone(), 0),
        };
        let (_, _, segs) = self.kept.iter().find(|(n, _, _)| *n == versioned)?;
        segs.get(usize::try_from(seg).ok()?).cloned()
    }
}

#[cfg(test)]
mod tests;
