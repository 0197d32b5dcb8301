//! Status datasets: which there are, how they are cut into signed, versioned segments, and the
//! versions kept so that their later segments can be fetched.
//!
//! A dataset Interest names `/localhost/nfd/<module>/<verb>` ([`Dataset`]); the answer is the
//! first segment of a new version, generated on request. A version stays fetchable for
//! [`DATASET_TTL_MS`] ([`Versions`]): `<dataset>/v=<version>` and `<dataset>/v=<version>/seg=<n>`
//! are answered from it. What each dataset carries, built from the manager's state and the
//! forwarder's figures, is in `content.rs`; Cascade's own `cs/tiers` encoding is [`tiers`].

#[cfg(target_os = "linux")]
mod content;
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
    /// `fib/list`: a FibEntry per FIB prefix.
    FibList,
    /// `rib/list`: a RibEntry per RIB prefix (next hops of `fib/add-nexthop` left out).
    RibList,
    /// `cs/info`: CsInfo.
    CsInfo,
    /// `cs/tiers`: Cascade's storage tiers ([`tiers`]).
    CsTiers,
    /// `strategy-choice/list`: a StrategyChoice per prefix.
    StrategyChoiceList,
}

impl Dataset {
    /// The dataset a module and verb name, if any.
    pub fn from_module_verb(module: &str, verb: &str) -> Option<Dataset> {
        Some(match (module, verb) {
            ("status", "general") => Dataset::StatusGeneral,
            ("faces", "list") => Dataset::FacesList,
            ("fib", "list") => Dataset::FibList,
            ("rib", "list") => Dataset::RibList,
            ("cs", "info") => Dataset::CsInfo,
            ("cs", "tiers") => Dataset::CsTiers,
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

impl Versions {
    /// The Data answering a dataset Interest named `full` at `now_ms`: for the bare dataset
    /// name (4 components), the first segment of a new version, whose version number and
    /// content `make` gives; for a versioned name, with or without a segment, that segment
    /// (the first by default) of a version kept. `None`: no such version or segment.
    pub fn answer(
        &mut self,
        full: &Name,
        now_ms: u64,
        make: impl FnOnce() -> (u64, Vec<u8>),
    ) -> Option<Vec<u8>> {
        self.kept
            .retain(|(_, made, _)| now_ms.saturating_sub(*made) < DATASET_TTL_MS);
        let base = full.prefix(4);
        let seg_of = |c: &Component| {
            (u32::from(c.typ) == tt::SEGMENT)
                .then(|| c.as_number())
                .flatten()
        };
        match full.len() {
            4 => {
                let (version, content) = make();
                let segs = dataset_segments(&base, version, &content, DEFAULT_MAX_SEGMENT_BYTES);
                let first = segs.first().cloned();
                let versioned = base.clone().with(Component::version(version));
                if self.kept.len() >= DATASET_CACHE {
                    self.kept.pop_front();
                }
                self.kept.push_back((versioned, now_ms, segs));
                first
            }
            5 | 6 => {
                let versioned = full.prefix(5);
                let seg = if full.len() == 6 {
                    seg_of(&full.components[5])?
                } else {
                    0
                };
                let (_, _, segs) = self.kept.iter().find(|(n, _, _)| *n == versioned)?;
                segs.get(seg as usize).cloned()
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
