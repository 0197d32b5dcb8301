//! `fib/add-nexthop` and `fib/remove-nexthop`: next hops set by hand.
//!
//! As in NFD, such a next hop is a route of the RIB under an origin of its own
//! ([`FIB_ORIGIN`](crate::rib::FIB_ORIGIN), never listed by `rib/list`), with no flags and no
//! expiry, so that the FIB has one writer in management: the [`Rib`]. The FIB itself is listed
//! by the `fib/list` dataset ([`crate::dataset`]).

use engine::table::pit_cs::FaceId;
use wire::nfd::{ControlParameters, ControlResponse};

use crate::forwarder::Forwarder;
use crate::rib::{Rib, RouteCommand};

/// `fib/add-nexthop`, `fib/remove-nexthop`.
pub(crate) fn command(
    rib: &mut Rib,
    forwarder: &impl Forwarder,
    from: FaceId,
    verb: &str,
    params: &ControlParameters,
) -> ControlResponse {
    let add = match verb {
        "add-nexthop" => true,
        "remove-nexthop" => false,
        _ => return crate::unsupported(),
    };
    let c = RouteCommand {
        from,
        params,
        add,
        rib: false,
    };
    // No expiration period for a next hop: the clock is never asked.
    rib.command(forwarder, c, || 0)
}
