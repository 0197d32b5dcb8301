//! The route commands: `rib/register`, `rib/unregister`, `rib/announce`, and the
//! `fib/add-nexthop`, `fib/remove-nexthop` that [`crate::fib`] passes on, with NFD's defaults
//! and answers.

use engine::table::pit_cs::FaceId;
use wire::nfd::{ControlParameters, ControlResponse, ROUTE_FLAG_CHILD_INHERIT};
use wire::{Limits, Name};

use super::announce::{PrefixAnnouncement, PA_ROUTE_COST};
use super::{Rib, RibError, Route, FIB_ORIGIN, PREFIXANN_ORIGIN};
use crate::faces::face_or_self;
use crate::forwarder::Forwarder;

/// A route command as [`Rib::command`] takes it.
pub(crate) struct RouteCommand<'a> {
    /// The face the command came from (FaceId 0 or none means this one).
    pub from: FaceId,
    /// Its ControlParameters.
    pub params: &'a ControlParameters,
    /// Add (register) rather than remove.
    pub add: bool,
    /// `rib/...` rather than `fib/...`.
    pub rib: bool,
}

/// The clocks a route command may read: the manager's (route expiry) and the wall clock
/// (prefix announcements' validity periods). Each is asked only when needed.
pub(crate) struct Clocks<N, W> {
    /// Milliseconds on the manager's clock.
    pub now_ms: N,
    /// Milliseconds since the Unix epoch.
    pub wall_ms: W,
}

/// NFD's 414 for a route prefix too long for the FIB.
fn too_long(name: &Name) -> Option<ControlResponse> {
    (name.len() > engine::hash::MAX_PREFIX_STATES).then(|| RibError::PrefixTooLong.response())
}

fn success(p: ControlParameters) -> ControlResponse {
    ControlResponse::with_parameters(200, "Success", p)
}

impl Rib {
    /// Answers a route command, with NFD's defaults and answers: `rib/register` and
    /// `rib/unregister` (`c.rib`), or `fib/add-nexthop` and `fib/remove-nexthop` (next hops kept
    /// here under [`FIB_ORIGIN`]). 200 "Success" echoing the parameters in force; 414 for a
    /// prefix of more than 32 components; `fib/add-nexthop` to a face that does not exist is
    /// 410 "Face not found", where `rib/register` answers 200 and adds nothing (NFD's FIB
    /// update fails after the answer). `now_ms` is asked only for a route with an expiration
    /// period.
    pub(crate) fn command(
        &mut self,
        forwarder: &impl Forwarder,
        c: RouteCommand<'_>,
        now_ms: impl FnOnce() -> u64,
    ) -> ControlResponse {
        let p = c.params;
        let (Some(name), Some(face)) = (p.name.clone(), face_or_self(c.from, p.face_id)) else {
            return crate::malformed();
        };
        let origin = if c.rib {
            p.origin.unwrap_or(0)
        } else {
            FIB_ORIGIN
        };
        if c.add && name.len() > engine::hash::MAX_PREFIX_STATES {
            if c.rib {
                return RibError::PrefixTooLong.response();
            }
            let depth = engine::hash::MAX_PREFIX_STATES;
            let text = format!("FIB entry prefix cannot exceed {depth} components");
            return ControlResponse::new(414, text);
        }
        let mut answer = ControlParameters {
            name: Some(name.clone()),
            face_id: Some(u64::from(face)),
            origin: c.rib.then_some(origin),
            ..ControlParameters::default()
        };
        if !c.add {
            self.remove(&name, face, origin);
            return success(answer);
        }
        let exists = forwarder.faces().iter().any(|f| f.id == face);
        if !exists && !c.rib {
            return ControlResponse::new(410, "Face not found");
        }
        let cost = p.cost.unwrap_or(0);
        let flags = if c.rib {
            p.flags.unwrap_or(ROUTE_FLAG_CHILD_INHERIT)
        } else {
            0
        };
        // NFD takes the largest period for "never".
        let expiration = p
            .expiration_period
            .filter(|&e| c.rib && e != u64::MAX && e <= i64::MAX as u64);
        answer.cost = Some(cost);
        answer.flags = c.rib.then_some(flags);
        answer.expiration_period = p.expiration_period.filter(|_| c.rib);
        if !exists {
            // NFD answers a registration first; the route to a face that does not exist never
            // reaches its FIB, and the RIB drops it.
            return success(answer);
        }
        let route = Route {
            face,
            origin,
            cost,
            flags,
            expires_ms: expiration.map(|e| now_ms().saturating_add(e)),
        };
        if let Err(e) = self.add(&name, route) {
            return e.response();
        }
        success(answer)
    }

    /// `rib/announce`: the prefix announcement in `app_params` becomes a route of `from` (origin
    /// prefixann, cost 2048, ChildInherit, expiring with the announcement). 200 "Success" with
    /// the route's parameters (an announcement whose validity period does not cover now is
    /// answered so, with ExpirationPeriod 0, and adds no route, as NFD's expired route); 414
    /// for a prefix of more than 32 components; 400 for what is no announcement (signatures
    /// are not verified: NFD's default `prefix_announcement_validation` accepts any).
    pub(crate) fn announce<N: FnOnce() -> u64, W: FnOnce() -> u64>(
        &mut self,
        forwarder: &impl Forwarder,
        from: FaceId,
        app_params: &[u8],
        clocks: Clocks<N, W>,
    ) -> ControlResponse {
        let pa = match PrefixAnnouncement::from_app_params(app_params, &Limits::default()) {
            Ok(pa) => pa,
            Err(e) => return ControlResponse::new(400, e),
        };
        if let Some(r) = too_long(&pa.name) {
            return r;
        }
        let lifetime = pa.lifetime_ms((clocks.wall_ms)());
        let answer = ControlParameters {
            name: Some(pa.name.clone()),
            face_id: Some(u64::from(from)),
            origin: Some(PREFIXANN_ORIGIN),
            cost: Some(PA_ROUTE_COST),
            flags: Some(ROUTE_FLAG_CHILD_INHERIT),
            expiration_period: Some(lifetime),
            ..ControlParameters::default()
        };
        let exists = forwarder.faces().iter().any(|f| f.id == from);
        if lifetime == 0 || !exists {
            return success(answer);
        }
        let route = Route {
            face: from,
            origin: PREFIXANN_ORIGIN,
            cost: PA_ROUTE_COST,
            flags: ROUTE_FLAG_CHILD_INHERIT,
            expires_ms: Some((clocks.now_ms)().saturating_add(lifetime)),
        };
        if let Err(e) = self.add(&pa.name, route) {
            return e.response();
        }
        success(answer)
    }
}

/// `rib/register`, `rib/unregister`, `rib/announce` (`app_params`: the command Interest's
/// ApplicationParameters).
pub(crate) fn command<N: FnOnce() -> u64, W: FnOnce() -> u64>(
    rib: &mut Rib,
    forwarder: &impl Forwarder,
    from: FaceId,
    verb: &str,
    params: &ControlParameters,
    app_params: Option<&[u8]>,
    clocks: Clocks<N, W>,
) -> ControlResponse {
    let add = match verb {
        "register" => true,
        "unregister" => false,
        "announce" => {
            return rib.announce(forwarder, from, app_params.unwrap_or(&[]), clocks);
        }
        _ => return crate::unsupported(),
    };
    let c = RouteCommand {
        from,
        params,
        add,
        rib: true,
    };
    rib.command(forwarder, c, clocks.now_ms)
}
