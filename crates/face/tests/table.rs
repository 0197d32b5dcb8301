//! The face table over loopback sockets, driven as a forwarder's I/O thread drives it, its UDP
//! sockets receiving with `recvmmsg`.
#![cfg(target_os = "linux")]

const UDP_RX: face::UdpRx = face::UdpRx::Recvmmsg;

mod support;

include!("table/suite.rs");

include!("table/proof.rs");

include!("table/budget.rs");
