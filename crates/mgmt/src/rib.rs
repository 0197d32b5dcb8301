//! The RIB: routes per prefix, each with the face it leads to, its origin, cost, flags and
//! expiry; the FIB next hops it derives, as NFD's RIB and `FibUpdater` derive them; and the
//! `rib/register`, `rib/unregister` and `rib/announce` commands (`rib/command.rs`).
//!
//! A prefix's FIB next hops are, per face, the cheapest of its own routes, plus the routes it
//! inherits: walking up from its parent, each ancestor's ChildInherit routes (the cheapest per
//! face) for the faces that neither the prefix nor a nearer ancestor has given a route yet; the
//! walk stops after an ancestor with a Capture route, and a prefix with a Capture route of its
//! own inherits nothing. Any change (a route added, replaced, removed or expired, a face gone)
//! recomputes the prefix and every prefix below it, so an app's `/ndn/grp` keeps the `/ndn`
//! uplink it inherits, and loses it when the uplink goes.
//!
//! The RIB is the FIB's only writer in management: next hops set with `fib/add-nexthop` are
//! routes too, of an origin of their own ([`FIB_ORIGIN`], see [`crate::fib`]), that are never
//! inherited and never make a prefix inherit (as NFD's FIB manager writes its FIB without the
//! RIB). It writes the shared FIB directly (an update is published to the workers' lookups
//! without a pause in forwarding) and reads no clock: expiry times are milliseconds on the
//! caller's clock.
//!
//! Routes of origin client (65) are what NFD's readvertise-to-NLSR policy readvertises: the
//! RIB notes each one added and removed ([`RouteEvent`]) for [`readvertise`] to count.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use engine::table::fib::{Fib, FibError};
use engine::table::pit_cs::FaceId;
use wire::nfd::{ControlResponse, ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT};
use wire::Name;

pub mod announce;
pub(crate) mod command;
pub mod readvertise;

pub(crate) use command::{command, Clocks, RouteCommand};

/// Origin of the next hops of `fib/add-nexthop` in the RIB (never listed by `rib/list`).
pub const FIB_ORIGIN: u64 = u64::MAX;

/// Origin of the routes of the start-up configuration ("static", as NFD).
pub const STATIC_ORIGIN: u64 = 255;

/// Origin "client" (NFD's `ROUTE_ORIGIN_CLIENT`): the routes readvertised to NLSR.
pub const CLIENT_ORIGIN: u64 = 65;

/// Origin "prefixann" (NFD's `ROUTE_ORIGIN_PREFIXANN`): routes of `rib/announce`.
pub const PREFIXANN_ORIGIN: u64 = 129;

/// One route of a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The face it leads to.
    pub face: FaceId,
    /// Who registered it (NFD's route origin: 0 application, 255 static, ...).
    pub origin: u64,
    /// Cost.
    pub cost: u64,
    /// Route flags: ChildInherit (the prefixes below inherit it), Capture (they inherit
    /// nothing from above this prefix).
    pub flags: u64,
    /// When it expires (milliseconds on the manager's clock), `None` for never.
    pub expires_ms: Option<u64>,
}

impl Route {
    fn inherits(&self) -> bool {
        self.flags & ROUTE_FLAG_CHILD_INHERIT != 0
    }

    pub(crate) fn captures(&self) -> bool {
        self.flags & ROUTE_FLAG_CAPTURE != 0
    }

    fn cost_u32(&self) -> u32 {
        u32::try_from(self.cost).unwrap_or(u32::MAX)
    }
}

/// A route that appeared in or left the RIB (a replaced route is neither).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteEvent {
    /// Its prefix.
    pub name: Name,
    /// Its origin.
    pub origin: u64,
    /// Added (`true`) or removed.
    pub added: bool,
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

/// The most route events kept until [`Rib::take_events`] (the manager drains them after every
/// change; past this, the oldest are dropped and counted).
pub const MAX_PENDING_EVENTS: usize = 65_536;

/// The routes per prefix, and the FIB next hops installed from them.
pub struct Rib {
    fib: Arc<Fib>,
    routes: BTreeMap<Name, Vec<Route>>,
    installed: BTreeMap<Name, Vec<(FaceId, u32)>>,
    events: Vec<RouteEvent>,
    track_events: bool,
    events_dropped: u64,
}

impl Rib {
    /// An empty RIB writing `fib`.
    pub fn new(fib: Arc<Fib>) -> Self {
        Rib {
            fib,
            routes: BTreeMap::new(),
            installed: BTreeMap::new(),
            events: Vec::new(),
            track_events: false,
            events_dropped: 0,
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

    /// The next hops (face, cost) the RIB installed in the FIB for exactly `name`, its own
    /// routes' and the inherited ones.
    pub fn next_hops(&self, name: &Name) -> &[(FaceId, u32)] {
        self.installed.get(name).map_or(&[], Vec::as_slice)
    }

    /// The installed next hops of the longest prefix of `name` that has any, cheapest first.
    pub fn lookup(&self, name: &Name) -> Vec<(FaceId, u32)> {
        for d in (0..=name.len()).rev() {
            if let Some(h) = self.installed.get(&name.prefix(d)) {
                let mut h = h.clone();
                h.sort_by_key(|&(f, c)| (c, f));
                return h;
            }
        }
        Vec::new()
    }

    /// True if a prefix of `name` (itself included) has a route other than `fib/add-nexthop`'s.
    pub fn has_rib_entry_above(&self, name: &Name) -> bool {
        (0..=name.len()).any(|d| {
            self.routes
                .get(&name.prefix(d))
                .is_some_and(|rs| rs.iter().any(|r| r.origin != FIB_ORIGIN))
        })
    }

    /// Starts noting the routes added and removed ([`Rib::take_events`]).
    pub fn track_events(&mut self) {
        self.track_events = true;
    }

    /// The routes added and removed since the last call, in order.
    pub fn take_events(&mut self) -> Vec<RouteEvent> {
        std::mem::take(&mut self.events)
    }

    /// Route events dropped because nobody took them in time.
    pub fn events_dropped(&self) -> u64 {
        self.events_dropped
    }

    fn note(&mut self, name: &Name, origin: u64, added: bool) {
        if !self.track_events || origin == FIB_ORIGIN {
            return;
        }
        if self.events.len() >= MAX_PENDING_EVENTS {
            self.events.remove(0);
            self.events_dropped += 1;
        }
        self.events.push(RouteEvent {
            name: name.clone(),
            origin,
            added,
        });
    }

    /// Adds a route, or replaces the one of the same face and origin, and updates the FIB
    /// entries of the prefix and every prefix below it.
    pub fn add(&mut self, name: &Name, r: Route) -> Result<(), RibError> {
        if name.len() > engine::hash::MAX_PREFIX_STATES {
            return Err(RibError::PrefixTooLong);
        }
        let routes = self.routes.entry(name.clone()).or_default();
        let existing = routes
            .iter_mut()
            .find(|x| x.face == r.face && x.origin == r.origin);
        let origin = r.origin;
        match existing {
            Some(x) => *x = r,
            None => {
                routes.push(r);
                self.note(name, origin, true);
            }
        }
        self.update_below(name)
    }

    /// Removes the route of `face` and `origin` from `name` (if any) and updates the FIB
    /// entries of the prefix and every prefix below it.
    pub fn remove(&mut self, name: &Name, face: FaceId, origin: u64) {
        if self.take_route(name, |r| r.face == face && r.origin == origin) {
            let _ = self.update_below(name);
        }
    }

    /// Removes the routes of `name` that `gone` picks (noting each); true if any went.
    fn take_route(&mut self, name: &Name, gone: impl Fn(&Route) -> bool) -> bool {
        let Some(routes) = self.routes.get_mut(name) else {
            return false;
        };
        let (out, kept): (Vec<Route>, Vec<Route>) = routes.drain(..).partition(|r| gone(r));
        *routes = kept;
        if routes.is_empty() {
            self.routes.remove(name);
        }
        for r in &out {
            self.note(name, r.origin, false);
        }
        !out.is_empty()
    }

    /// A face went down: its routes go (every FIB entry that had them or inherited them is
    /// updated), and so do its next hops in the FIB that the RIB did not install.
    pub fn face_down(&mut self, id: FaceId) {
        let names: Vec<Name> = self
            .routes
            .iter()
            .filter(|(_, rs)| rs.iter().any(|r| r.face == id))
            .map(|(n, _)| n.clone())
            .collect();
        for n in &names {
            self.take_route(n, |r| r.face == id);
        }
        self.update_all_below(names);
        // Next hops added some other way.
        self.fib.remove_face(id);
    }

    /// Removes the routes that expire at or before `now_ms`.
    pub fn expire(&mut self, now_ms: u64) {
        let due = |r: &Route| r.expires_ms.is_some_and(|e| e <= now_ms);
        let names: Vec<Name> = self
            .routes
            .iter()
            .filter(|(_, rs)| rs.iter().any(due))
            .map(|(n, _)| n.clone())
            .collect();
        for n in &names {
            self.take_route(n, due);
        }
        self.update_all_below(names);
    }

    /// Updates the prefixes below each of `names` (sorted), each subtree once.
    fn update_all_below(&mut self, mut names: Vec<Name>) {
        names.sort();
        let mut done: Option<Name> = None;
        for n in names {
            if done.as_ref().is_some_and(|d| d.is_prefix_of(&n)) {
                continue;
            }
            let _ = self.update_below(&n);
            done = Some(n);
        }
    }

    /// Makes the FIB entries of `name` and every prefix below it match the RIB. Answers the
    /// FIB's refusal for `name` itself, if any (a refusal below it leaves that entry with what
    /// fits).
    fn update_below(&mut self, name: &Name) -> Result<(), RibError> {
        let mut names: BTreeSet<Name> = below(&self.routes, name).collect();
        names.extend(below(&self.installed, name));
        let mut result = Ok(());
        for n in names {
            let r = self.sync_fib(&n);
            if &n == name {
                result = r;
            }
        }
        result
    }

    /// The next hops `name`'s FIB entry should have: the cheapest own route per face, then the
    /// inherited ones (see the module's description).
    pub fn wanted_next_hops(&self, name: &Name) -> Vec<(FaceId, u32)> {
        let Some(own) = self.routes.get(name) else {
            return Vec::new();
        };
        let mut want = cheapest_per_face(own.iter());
        let rib_entry = own.iter().any(|r| r.origin != FIB_ORIGIN);
        if !rib_entry || own.iter().any(Route::captures) {
            return want;
        }
        // Faces the prefix or a nearer ancestor has decided.
        let mut decided: Vec<FaceId> = own.iter().map(|r| r.face).collect();
        for d in (0..name.len()).rev() {
            let Some(up) = self.routes.get(&name.prefix(d)) else {
                continue;
            };
            for (f, c) in cheapest_per_face(up.iter().filter(|r| r.inherits())) {
                if !decided.contains(&f) {
                    decided.push(f);
                    want.push((f, c));
                }
            }
            if up.iter().any(Route::captures) {
                break;
            }
        }
        want
    }

    /// Makes the FIB entry of `name` match [`Rib::wanted_next_hops`].
    fn sync_fib(&mut self, name: &Name) -> Result<(), RibError> {
        let want = self.wanted_next_hops(name);
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
}

/// The keys of `m` that `name` is a prefix of (`name` included): they follow it in name order.
fn below<'a, V>(m: &'a BTreeMap<Name, V>, name: &'a Name) -> impl Iterator<Item = Name> + 'a {
    m.range(name.clone()..)
        .take_while(move |(n, _)| name.is_prefix_of(n))
        .map(|(n, _)| n.clone())
}

/// The cheapest of `routes` per face, in the order the faces first appear.
fn cheapest_per_face<'a>(routes: impl Iterator<Item = &'a Route>) -> Vec<(FaceId, u32)> {
    let mut out: Vec<(FaceId, u32)> = Vec::new();
    for r in routes {
        let cost = r.cost_u32();
        match out.iter_mut().find(|(f, _)| *f == r.face) {
            Some((_, c)) => *c = (*c).min(cost),
            None => out.push((r.face, cost)),
        }
    }
    out
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod updates_tests;
