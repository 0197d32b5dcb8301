//! # lab — Cascade's research wiring
//!
//! Everything that measures the router or reproduces the papers it is built on, kept out of
//! the product crates:
//!
//! - [`bench`](mod@bench): the benchmarks of `cascade bench engine|forward|hcs`;
//! - [`workload`]: synthetic name workloads (IRCache-like names, a FIB with the URLBlacklist
//!   depth distribution, attack names) after So, Narayanan and Oran, "Named Data Networking on
//!   a Router: Fast and DoS-resistant Forwarding with Hash Tables" (ANCS 2013);
//! - [`hcs_workload`]: the chunk-request workloads Seq, Unif and Real of Mansilha et al.,
//!   "Exploiting parallelism in hierarchical content stores for high-speed ICN routers"
//!   (Computer Networks, 2017);
//! - [`tier_sim`]: the tier simulator, the hierarchical content store of that paper on chunk
//!   ids (L1 FIFO/LRU, batch prefetch, L2 always hit), checked against the models;
//! - [`bypass_sim`]: a discrete-event simulation of the N-queue bypass model of Pan et al.,
//!   "NB-Cache: Non-Blocking In-Network Caching for High-Performance Content Routers", checked
//!   against its Markov chain;
//! - [`model_cli`]: the model harness, `cascade model che` and `cascade model bypass` on the
//!   `model` crate;
//! - [`emulate`]: `cascade emulate`, a chain of real `cascade run` processes in network
//!   namespaces (or on loopback ports) with content placed in their stores and a consumer
//!   driving them, after the evaluation of Pan et al.'s NB-Cache.
//!
//! The `plot` feature (on by default) draws `cascade bench hcs --plot` and `cascade model
//! bypass --plot` with plotters, png and font8x8 ([`plot`] has what they share); a build
//! without it refuses `--plot` with one line.
//!
//! The router must never depend on this crate: it is wiring for experiments, free to pull in
//! whatever they need (sockets, threads, files, plotting), and it may depend on any product
//! crate. The `cascade` binary only parses its subcommands and dispatches to them.

pub mod bench;
pub mod bypass_sim;
pub mod emulate;
pub mod hcs_workload;
pub mod model_cli;
#[cfg(feature = "plot")]
pub mod plot;
pub mod tier_sim;
pub mod workload;
