//! The tables: the cache-line hash index every table is built on, PIT+CS and the slots
//! its Data live in, FIB, dead-nonce list.

pub mod cs_data;
pub mod dead_nonce;
pub mod fib;
pub mod index;
pub mod mem;
pub mod pit_cs;
