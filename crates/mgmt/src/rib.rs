//! The RIB: routes per prefix, each with the face it leads to, its origin, cost, flags and
//! expiry; the FIB next hops it derives; and the `rib/register`, `rib/unregister` commands.
//!
//! The RIB is flat: a prefix's FIB next hops are the cheapest route per face among that
//! prefix's own routes. ChildInherit and Capture are recorded and listed, but routes of shorter
//! prefixes are not copied into longer ones: longest-prefix match already reaches them when a
//! longer prefix has no entry of its own.
//!
//! The RIB is the FIB's only writer in management: next hops set with `fib/add-nexthop` are
//! routes too, of an origin of their own ([`FIB_ORIGIN`], see [`crate::fib`]). It writes the
//! shared FIB directly (an update is published to the workers' lookups without a pause in
//! forwarding) and reads no clock: expiry times are milliseconds on the caller's clock.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use engine::table::fib::{Fib, FibError};
use engine::table::pit_cs::FaceId;
use wire::nfd::{ControlParameters, ControlResponse, ROUTE_FLAG_CHILD_INHERIT};
use wire::Name;

use crate::faces::face_or_self;
use crate::forwarder::Forwarder;

/// Origin of the next hops of `fib/add-nexthop` in the RIB (never listed by `rib/list`).
pub const FIB_ORIGIN: u64 = u64::MAX;

/// Origin of the routes of the start-up configuration ("static", as NFD).
pub const STATIC_ORIGIN: u64 = 255;

/// One route of a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The face it leads to.
    pub face: FaceId,
    /// Who registered it (NFD's route origin: 0 application, 255 static, ...).
    pub origin: u64,
    /// Cost.
    pub cost: u64,
    /// Route flags (ChildInherit, Capture): recorded and listed, not expanded.
    pub flags: u64,
    /// When it expires (milliseconds on the manager's clock), `None` for never.
    pub expires_ms: Option<u64>,
}

/// Why a route could not be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RibError {
    /// The prefix has more components than the FIB can hold.
    PrefixTooLong,
    /// The FIB refused a next hop (the route is kept in the RIB).
    Fib(FibError),
}

impl RibError {
    /// The ControlResponse answering the command: 414 (NFD's words for `rib/register`) or 500.
    pub fn response(&self) -> ControlResponse {
        let code = match self {
            RibError::PrefixTooLong => 414,
            RibError::Fib(_) => 500,
        };
        ControlResponse::new(code, self.to_string())
    }
}

impl fmt::Display for RibError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RibError::PrefixTooLong => write!(
                f,
                "Route prefix cannot exceed {} components",
                engine::hash::MAX_PREFIX_STATES
            ),
            RibError::Fib(e) => write!(f, "FIB update failed: {e:?}"),
        }
    }
}

/// The routes per prefix, and the FIB next hops installed from them.
pub struct Rib {
    fib: Arc<Fib>,
    routes: BTreeMap<Name, Vec<Route>>,
    installed: BTreeMap<Name, Vec<(FaceId, u32)>>,
}

impl Rib {
    /// An empty RIB writing `fib`.
    pub fn new(fib: Arc<Fib>) -> Self {
        Rib {
            fib,
            routes: BTreeMap::new(),
            installed: BTreeMap::new(),
        }
    }

    /// The FIB it writes.
    pub fn fib(&self) -> &Fib {
        &self.fib
    }

    /// Every prefix with its routes, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &[Route])> {
        self.routes.iter().map(|(n, r)| (n, r.as_slice()))
    }

    /// The routes of exactly `name`, in the order they were first added.
    pub fn routes(&self, name: &Name) -> &[Route] {
        self.routes.get(name).map_or(&[], Vec::as_slice)
    }

    /// The next hops (face, cost) the RIB installed in the FIB for exactly `name`.
    pub fn next_hops(&self, name: &Name) -> &[(FaceId, u32)] {
        self.installed.get(name).map_or(&[], Vec::as_slice)
    }

    /// Adds a route, or replaces the one of the same face and origin, and updates the FIB.
    pub fn add(&mut self, name: &Name, r: Route) -> Result<(), RibError> {
        if name.len() > engine::hash::MAX_PREFIX_STATES {
            return Err(RibError::PrefixTooLong);
        }
        let routes = self.routes.entry(name.clone()).or_default();
        match routes
            .iter_mut()
            .find(|x| x.face == r.face && x.origin == r.origin)
        {
            Some(x) => *x = r,
            None => routes.push(r),
        }
        self.sync_fib(name)
    }

    /// Removes the route of `face` and `origin` from `name` (if any) and updates the FIB.
    pub fn remove(&mut self, name: &Name, face: FaceId, origin: u64) {
        if let Some(routes) = self.routes.get_mut(name) {
            routes.retain(|x| !(x.face == face && x.origin == origin));
            if routes.is_empty() {
                self.routes.remove(name);
            }
        }
        let _ = self.sync_fib(name);
    }

    /// A face went down: its routes go, and so do its next hops in the FIB that the RIB did
    /// not install.
    pub fn face_down(&mut self, id: FaceId) {
        let names: Vec<Name> = self
            .routes
            .iter()
            .filter(|(_, rs)| rs.iter().any(|r| r.face == id))
            .map(|(n, _)| n.clone())
            .collect();
        for n in names {
            if let Some(rs) = self.routes.get_mut(&n) {
                rs.retain(|r| r.face != id);
                if rs.is_empty() {
                    self.routes.remove(&n);
                }
            }
            let _ = self.sync_fib(&n);
        }
        // Next hops added some other way.
        self.fib.remove_face(id);
    }

    /// Removes the routes that expire at or before `now_ms`.
    pub fn expire(&mut self, now_ms: u64) {
        let expired: Vec<(Name, FaceId, u64)> = self
            .routes
            .iter()
            .flat_map(|(n, rs)| {
                rs.iter()
                    .filter(|r| r.expires_ms.is_some_and(|e| e <= now_ms))
                    .map(move |r| (n.clone(), r.face, r.origin))
            })
            .collect();
        for (n, f, o) in expired {
            self.remove(&n, f, o);
        }
    }

    /// Makes the FIB entry of `name` match the RIB: the cheapest route per face.
    fn sync_fib(&mut self, name: &Name) -> Result<(), RibError> {
        let mut want: Vec<(FaceId, u32)> = Vec::new();
        for r in self.routes.get(name).into_iter().flatten() {
            let cost = u32::try_from(r.cost).unwrap_or(u32::MAX);
            match want.iter_mut().find(|(f, _)| *f == r.face) {
                Some((_, c)) => *c = (*c).min(cost),
                None => want.push((r.face, cost)),
            }
        }
        let have = self.installed.remove(name).unwrap_or_default();
        for &(f, _) in &have {
            if !want.iter().any(|(w, _)| *w == f) {
                self.fib.remove_nexthop(name, f);
            }
        }
        let mut done = Vec::new();
        let mut err = None;
        for &(f, c) in &want {
            if have.contains(&(f, c)) {
                done.push((f, c));
                continue;
            }
            match self.fib.add_nexthop(name, f, c) {
                Ok(()) => done.push((f, c)),
                Err(e) => err = Some(e),
            }
        }
        if !done.is_empty() {
            self.installed.insert(name.clone(), done);
        }
        match err {
            None => Ok(()),
            Some(e) => Err(RibError::Fib(e)),
        }
    }

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
        let success = |p| ControlResponse::with_parameters(200, "Success", p);
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
        let expiration = p.expiration_period.filter(|_| c.rib);
        answer.cost = Some(cost);
        answer.flags = c.rib.then_some(flags);
        answer.expiration_period = expiration;
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
}

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

/// `rib/register`, `rib/unregister`.
pub(crate) fn command(
    rib: &mut Rib,
    forwarder: &impl Forwarder,
    from: FaceId,
    verb: &str,
    params: &ControlParameters,
    now_ms: impl FnOnce() -> u64,
) -> ControlResponse {
    let add = match verb {
        "register" => true,
        "unregister" => false,
        _ => return crate::unsupported(),
    };
    let c = RouteCommand {
        from,
        params,
        add,
        rib: true,
    };
    rib.command(forwarder, c, now_ms)
}

#[cfg(test)]
mod tests;
