//! The replacement policy of a cache tier.

/// Replacement policy: which entry a full tier evicts (the L2's extents, [`crate::L2Config`];
/// also the L1 of the tier simulator in the `lab` crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Replacement {
    /// First in, first out: hits do not reorder (the policy of Mansilha et al., "Exploiting
    /// parallelism in hierarchical content stores for high-speed ICN routers", Computer
    /// Networks, 2017).
    #[default]
    Fifo,
    /// Least recently used: a hit moves the entry to the head.
    Lru,
}

impl From<Replacement> for model::Policy {
    fn from(r: Replacement) -> Self {
        match r {
            Replacement::Fifo => model::Policy::Fifo,
            Replacement::Lru => model::Policy::Lru,
        }
    }
}
