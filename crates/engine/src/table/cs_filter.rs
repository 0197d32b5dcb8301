//! The filter in front of the content store: NB-Cache's first-stage bypass (Pan et al.,
//! "NB-Cache: Non-Blocking In-Network Caching for High-Performance Content Routers").
//!
//! A [`CsFilter`] answers, from a name's full-name hash alone, whether the content store may
//! hold the name in any tier; "no" is certain, so an Interest it answers "no" for skips the CS
//! lookup and the slower tier's storage queue. The PIT+CS table keeps it up to date for the
//! RAM tier ([`crate::table::pit_cs::PitCs::set_filter`]: an insertion for every name that
//! comes to hold Data, a removal for every one that stops), and the slower tier for its own
//! names (the `store` crate's counting Bloom filter is shared by both).

/// A filter of the names the content store holds, keyed by the names' full-name hashes.
pub trait CsFilter: Send + core::fmt::Debug {
    /// Requests the memory a lookup of `full_hash` reads (called in the batch's first-level
    /// prefetch pass). Default: nothing.
    fn prefetch(&self, _full_hash: u64) {}

    /// Whether the content store may hold the name of `full_hash`; `false` is certain.
    fn may_hold(&self, full_hash: u64) -> bool;

    /// The RAM tier now holds the name of `full_hash` (once more: a name the slower tier holds
    /// too is counted twice).
    fn insert(&mut self, full_hash: u64);

    /// The RAM tier dropped the name of `full_hash` (once).
    fn remove(&mut self, full_hash: u64);
}
