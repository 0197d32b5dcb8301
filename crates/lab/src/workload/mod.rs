//! Deterministic synthetic name workloads for tests and benchmarks, after §4.1 of So, Narayanan
//! and Oran, "Named Data Networking on a Router: Fast and DoS-resistant Forwarding with Hash
//! Tables" (ANCS 2013).
//!
//! So et al. drove their forwarding engine with names made from the URLs of 16 IRCache traces
//! (reverse domain components, then path components, the query string as one component):
//! 6.66 components and 58.4 characters per name on average (Table 3). Their FIB was synthesized
//! from prefixes of those names to follow the URLBlacklist prefix-depth distribution, a
//! long-tailed one with mean 4.26 (Table 5). Neither data set ships with Cascade, so this module
//! generates look-alikes:
//!
//! - [`ircache_like_names`]: URL-shaped names calibrated to Table 3;
//! - [`synthetic_fib`]: distinct FIB prefixes with Table 5's depth distribution, whose deep
//!   prefixes mostly hang below shallower FIB prefixes (so 2-stage FIB expansion stays small);
//! - [`interests_for_fib`]: Interest names extending FIB prefixes (most match, some do not);
//! - attack shapes: [`garbage_token_names`], [`shared_long_prefix_names`],
//!   [`random_binary_names`].
//!
//! Everything is a pure function of its seed: a small xoshiro256** generator ([`Rng`]) and
//! table-driven [`Discrete`] and [`Zipf`] samplers, no outside randomness, and hash sets are
//! used only for membership tests (never iterated), so the output is identical on every run and
//! platform.

mod attack;
mod fib;
mod interests;
mod names;
mod rng;
mod stats;
mod vocab;

pub use attack::{garbage_token_names, random_binary_names, shared_long_prefix_names};
pub use fib::{synthetic_fib, synthetic_fib_with, FibConfig, TABLE5_DEPTH_SHARES};
pub use interests::{interests_for_fib, interests_for_fib_with, InterestConfig};
pub use names::{ircache_like_names, ircache_like_names_with, NameConfig};
pub use rng::{Discrete, Rng, Zipf};
pub use stats::{depth_histogram, stats, url_chars, virtual_entries_needed, NaiveLpm, NameStats};

#[cfg(test)]
mod tests;
