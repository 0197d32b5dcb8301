//! Forwarding: strategies and the pipeline that drives the tables.

pub mod asf;
pub mod pipeline;
pub mod strategy;
