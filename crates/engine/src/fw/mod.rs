//! Forwarding: strategies and the pipeline that drives the tables.

pub mod access;
pub mod asf;
pub mod pipeline;
pub mod rtt;
pub mod strategy;
