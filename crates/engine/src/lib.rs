//! # engine — Cascade's forwarding engine
//!
//! The data plane of So, Narayanan and Oran, "Named Data Networking on a Router: Fast and
//! DoS-resistant Forwarding with Hash Tables" (ANCS 2013): keyed SipHash over every name prefix
//! ([`hash`]), cache-line hash tables ([`table::index`]), one PIT+CS table ([`table::pit_cs`]),
//! the 2-stage FIB longest-prefix match ([`table::fib`]), the dead-nonce list, strategies
//! ([`fw::strategy`]) and the forwarding pipeline ([`fw::pipeline`]).
//!
//! It owns the forwarding decisions and nothing else: it never opens a socket, a file or a
//! thread, and it has no clock — packets go in with the current time, actions come out. That
//! makes it deterministic under test and benchmarkable in-process. Capacity is fixed when an
//! engine is built; the hot path does not allocate once tables are warm. Workloads and
//! benchmarks that drive it live in the `lab` crate, never here.

pub mod fw;
pub mod hash;
pub mod partition;
pub mod table;
