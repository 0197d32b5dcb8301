//! The tables: the cache-line hash index every table is built on, PIT+CS and the slots
//! its Data live in (and the filter in front of the CS), FIB, dead-nonce list.

pub mod cs_data;
pub mod cs_filter;
pub mod dead_nonce;
pub mod fib;
pub mod index;
pub mod mem;
pub mod pit_cs;
