//! # engine — Cascade's forwarding engine
//!
//! The data plane of seed 002 ("NDN on a Router: Fast and DoS-resistant Forwarding with Hash
//! Tables"): keyed SipHash over every name prefix ([`hash`]), cache-line hash tables
//! ([`table::index`]), one PIT+CS table ([`table::pit_cs`]), the 2-stage FIB longest-prefix match
//! ([`table::fib`]), the dead-nonce list, strategies ([`fw::strategy`]) and the forwarding
//! pipeline ([`fw::pipeline`]).
//!
//! It owns the forwarding decisions and nothing else: it never opens a socket, a file or a
//! thread, and it has no clock — packets go in with the current time, actions come out. That
//! makes it deterministic under test and benchmarkable in-process. Capacity is fixed when an
//! engine is built; the hot path does not allocate once tables are warm.

pub mod fw;
pub mod hash;
pub mod hcs_workload;
pub mod partition;
pub mod table;
pub mod workload;
