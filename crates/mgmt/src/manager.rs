//! The manager: NFD's management protocol over a [`Forwarder`].
//!
//! Management Interests (`/localhost/nfd/...`, `/localhop/nfd/...`) come from the forwarder;
//! commands change the RIB (and through it the shared FIB, with no pause in forwarding), the
//! faces, the strategy choices and CS settings (through the [`Forwarder`]); datasets are
//! generated on request, versioned and segmented, and kept a few seconds so their later
//! segments can be fetched. Answers go back through the forwarder.
//!
//! The RIB is flat: a prefix's FIB next hops are the cheapest route per face among that
//! prefix's own routes (ChildInherit and Capture are recorded and listed, but routes of shorter
//! prefixes are not copied into longer ones: longest-prefix match already reaches them when a
//! longer prefix has no entry of its own).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use engine::fw::strategy::StrategyKind;
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId};
use face::FaceDesc;
use wire::nfd::{
    ControlParameters, ControlResponse, CsInfo, FaceScope, FaceStatus, FibEntry, ForwarderStatus,
    LinkType, NextHopRecord, RibEntry, Route as RibRoute, StrategyChoice, CS_FLAG_ENABLE_ADMIT,
    CS_FLAG_ENABLE_SERVE, FACE_FLAG_LOCAL_FIELDS_ENABLED, ROUTE_FLAG_CHILD_INHERIT,
};
use wire::{tt, Component, InterestView, Limits, LpPacketView, Name};

use crate as mgmt;
use crate::forwarder::{CreateFaceError, Forwarder, UpdateFaceError, WorkerStats};
use crate::{dataset_segments, parse_command, response_data, Command, DEFAULT_MAX_SEGMENT_BYTES};

/// Origin NFD gives to `fib/add-nexthop` next hops in our RIB (never listed by `rib/list`).
const FIB_ORIGIN: u64 = u64::MAX;
/// Datasets kept for segment fetches.
const DATASET_CACHE: usize = 32;
/// How long a generated dataset version stays fetchable.
const DATASET_TTL_MS: u64 = 5_000;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Route {
    face: FaceId,
    origin: u64,
    cost: u64,
    flags: u64,
    expires_ms: Option<u64>,
}

/// The manager's state.
pub struct Manager<F> {
    fib: Arc<Fib>,
    rib: BTreeMap<Name, Vec<Route>>,
    installed: BTreeMap<Name, Vec<(FaceId, u32)>>,
    strategies: BTreeMap<Name, StrategyKind>,
    forwarder: F,
    start: Instant,
    start_wall_ms: u64,
    cs_capacity: usize,
    cs_policy: CsPolicy,
    datasets: VecDeque<(Name, u64, Vec<Vec<u8>>)>,
    limits: Limits,
}

/// The manager's settings.
pub struct ManagerParts {
    /// The shared FIB.
    pub fib: Arc<Fib>,
    /// The forwarder's time origin (route expiry counts from it).
    pub start: Instant,
    /// Total CS capacity.
    pub cs_capacity: usize,
    /// CS policy.
    pub cs_policy: CsPolicy,
    /// Packet limits.
    pub limits: Limits,
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn resp(code: u64, text: &str) -> ControlResponse {
    ControlResponse::new(code, text)
}

impl<F: Forwarder> Manager<F> {
    /// A manager of `forwarder`; strategy `/` is best-route.
    pub fn new(forwarder: F, p: ManagerParts) -> Self {
        let mut strategies = BTreeMap::new();
        strategies.insert(Name::new(), StrategyKind::BestRoute);
        Manager {
            fib: p.fib,
            rib: BTreeMap::new(),
            installed: BTreeMap::new(),
            strategies,
            forwarder,
            start: p.start,
            start_wall_ms: wall_ms(),
            cs_capacity: p.cs_capacity,
            cs_policy: p.cs_policy,
            datasets: VecDeque::new(),
            limits: p.limits,
        }
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// The forwarder this manager drives.
    pub fn forwarder(&self) -> &F {
        &self.forwarder
    }

    /// Adds a route of origin 255 ("static", as NFD) with ChildInherit, never expiring: a
    /// route of the start-up configuration. The error is the status text.
    pub fn add_static_route(&mut self, name: &Name, face: FaceId, cost: u64) -> Result<(), String> {
        let route = Route {
            face,
            origin: 255,
            cost,
            flags: ROUTE_FLAG_CHILD_INHERIT,
            expires_ms: None,
        };
        self.add_route(name, route).map_err(|e| e.status_text)
    }

    /// Sets the strategy of `name` (as `strategy-choice/set` does).
    pub fn set_strategy(&mut self, name: Name, kind: StrategyKind) {
        self.strategies.insert(name.clone(), kind);
        self.forwarder.set_strategy(&name, Some(kind));
    }

    // ---- plumbing ---------------------------------------------------------------------------

    fn send(&self, face: FaceId, token: Option<&[u8]>, data: &[u8]) {
        self.forwarder.send(face, token, data);
    }

    fn snapshots(&self) -> Vec<WorkerStats> {
        self.forwarder.stats()
    }

    fn faces(&self) -> Vec<FaceDesc> {
        self.forwarder.faces()
    }

    fn face_exists(&self, id: FaceId) -> bool {
        self.faces().iter().any(|f| f.id == id)
    }

    // ---- requests ---------------------------------------------------------------------------

    /// Answers a management Interest (the received bytes, possibly an LpPacket) that arrived
    /// on `face` (`local`: a local face).
    pub fn on_interest(&mut self, face: FaceId, local: bool, bytes: &[u8]) {
        let (token, ibytes) = if bytes.first() == Some(&(tt::LP_PACKET as u8)) {
            match LpPacketView::decode(bytes, &self.limits) {
                Ok(lp) => match lp.fragment() {
                    Some(f) => (lp.pit_token, f),
                    None => return,
                },
                Err(_) => return,
            }
        } else {
            (None, bytes)
        };
        let Ok(interest) = InterestView::decode(ibytes, &self.limits) else {
            return;
        };
        let name = interest.name();
        let comps: Vec<wire::ComponentView<'_>> = name.components().collect();
        let text = |i: usize| {
            comps
                .get(i)
                .filter(|c| u32::from(c.typ) == tt::GENERIC_COMPONENT)
                .and_then(|c| std::str::from_utf8(c.value).ok())
                .unwrap_or("")
        };
        let (module, verb) = (text(2).to_string(), text(3).to_string());
        let localhost = text(0) == "localhost";
        if let Some(dataset) = Self::dataset_kind(&module, &verb) {
            // Datasets are served to local faces under /localhost only.
            if !(localhost && local) {
                return;
            }
            let full = name.to_name();
            if let Some(d) = self.dataset_data(dataset, &full) {
                self.send(face, token, &d);
            }
            return;
        }
        let answer = match parse_command(&interest, local) {
            Err(r) => r,
            Ok(cmd) => self.command(face, &cmd),
        };
        let data = response_data(&name.to_name(), &answer);
        self.send(face, token, &data);
    }

    fn dataset_kind(module: &str, verb: &str) -> Option<&'static str> {
        Some(match (module, verb) {
            ("status", "general") => "status/general",
            ("faces", "list") => "faces/list",
            ("fib", "list") => "fib/list",
            ("rib", "list") => "rib/list",
            ("cs", "info") => "cs/info",
            ("cs", "tiers") => "cs/tiers",
            ("strategy-choice", "list") => "strategy-choice/list",
            _ => return None,
        })
    }

    /// The Data answering a dataset Interest: a new version for the bare dataset name, or a
    /// segment of a version generated in the last few seconds.
    fn dataset_data(&mut self, kind: &str, full: &Name) -> Option<Vec<u8>> {
        let now = self.now_ms();
        self.datasets
            .retain(|(_, made, _)| now.saturating_sub(*made) < DATASET_TTL_MS);
        let base = full.prefix(4);
        let seg_of = |c: &Component| {
            (u32::from(c.typ) == tt::SEGMENT)
                .then(|| c.as_number())
                .flatten()
        };
        match full.len() {
            4 => {
                let content = self.dataset_content(kind);
                let version = wall_ms();
                let segs = dataset_segments(&base, version, &content, DEFAULT_MAX_SEGMENT_BYTES);
                let first = segs.first().cloned();
                let versioned = base.clone().with(Component::version(version));
                if self.datasets.len() >= DATASET_CACHE {
                    self.datasets.pop_front();
                }
                self.datasets.push_back((versioned, now, segs));
                first
            }
            5 | 6 => {
                let versioned = full.prefix(5);
                let seg = if full.len() == 6 {
                    seg_of(&full.components[5])?
                } else {
                    0
                };
                let (_, _, segs) = self.datasets.iter().find(|(n, _, _)| *n == versioned)?;
                segs.get(seg as usize).cloned()
            }
            _ => None,
        }
    }

    fn dataset_content(&self, kind: &str) -> Vec<u8> {
        let mut out = Vec::new();
        match kind {
            "status/general" => {
                let snaps = self.snapshots();
                let sum = |f: fn(&WorkerStats) -> u64| snaps.iter().map(f).sum::<u64>();
                let s = ForwarderStatus {
                    nfd_version: format!("cascade-{}", env!("CARGO_PKG_VERSION")),
                    start_timestamp: self.start_wall_ms,
                    current_timestamp: wall_ms(),
                    n_name_tree_entries: sum(|s| (s.pit_len + s.cs_len) as u64),
                    n_fib_entries: self.fib.real_len() as u64,
                    n_pit_entries: sum(|s| s.pit_len as u64),
                    n_measurements_entries: 0,
                    n_cs_entries: sum(|s| s.cs_len as u64),
                    n_in_interests: sum(|s| s.counters.in_interests),
                    n_in_data: sum(|s| s.counters.in_data),
                    n_in_nacks: sum(|s| s.counters.in_nacks),
                    n_out_interests: sum(|s| s.counters.out_interests),
                    n_out_data: sum(|s| s.counters.out_data),
                    n_out_nacks: sum(|s| s.counters.out_nacks),
                    n_satisfied_interests: sum(|s| s.counters.satisfied),
                    n_unsatisfied_interests: sum(|s| s.counters.unsatisfied),
                };
                s.encode(&mut out);
            }
            "faces/list" => {
                for f in self.faces() {
                    face_status(&f).encode(&mut out);
                }
            }
            "fib/list" => {
                for (name, hops) in self.fib.entries() {
                    FibEntry {
                        name,
                        next_hops: hops
                            .iter()
                            .map(|h| NextHopRecord {
                                face_id: u64::from(h.face),
                                cost: u64::from(h.cost),
                            })
                            .collect(),
                    }
                    .encode(&mut out);
                }
            }
            "rib/list" => {
                let now = self.now_ms();
                for (name, routes) in &self.rib {
                    let routes: Vec<RibRoute> = routes
                        .iter()
                        .filter(|r| r.origin != FIB_ORIGIN)
                        .map(|r| RibRoute {
                            face_id: u64::from(r.face),
                            origin: r.origin,
                            cost: r.cost,
                            flags: r.flags,
                            expiration_period: r.expires_ms.map(|e| e.saturating_sub(now)),
                        })
                        .collect();
                    if !routes.is_empty() {
                        RibEntry {
                            name: name.clone(),
                            routes,
                        }
                        .encode(&mut out);
                    }
                }
            }
            "cs/info" => {
                let snaps = self.snapshots();
                CsInfo {
                    capacity: self.cs_capacity as u64,
                    flags: CS_FLAG_ENABLE_ADMIT | CS_FLAG_ENABLE_SERVE,
                    n_cs_entries: snaps.iter().map(|s| s.cs_len as u64).sum(),
                    n_hits: snaps.iter().map(|s| s.cs_hits).sum(),
                    n_misses: snaps.iter().map(|s| s.cs_misses).sum(),
                }
                .encode(&mut out);
            }
            "cs/tiers" => {
                let snaps = self.snapshots();
                let mut l2 = snaps.iter().filter_map(|s| s.l2.as_ref());
                if let Some(first) = l2.next() {
                    l2.fold(*first, |all, x| all.merged(x)).encode(&mut out);
                }
            }
            "strategy-choice/list" => {
                for (name, kind) in &self.strategies {
                    StrategyChoice {
                        name: name.clone(),
                        strategy: strategy_name(*kind),
                    }
                    .encode(&mut out);
                }
            }
            _ => {}
        }
        out
    }

    // ---- commands ---------------------------------------------------------------------------

    fn command(&mut self, from: FaceId, c: &Command) -> ControlResponse {
        let p = &c.params;
        let face_or_self = |id: Option<u64>| match id {
            None | Some(0) => Some(from),
            Some(x) => FaceId::try_from(x).ok(),
        };
        match (c.module.as_str(), c.verb.as_str()) {
            ("rib", "register" | "unregister") | ("fib", "add-nexthop" | "remove-nexthop") => {
                let (Some(name), Some(face)) = (p.name.clone(), face_or_self(p.face_id)) else {
                    return mgmt::malformed();
                };
                let add = matches!(c.verb.as_str(), "register" | "add-nexthop");
                self.route_command(c.module == "rib", add, name, face, p)
            }
            ("faces", "create") => self.faces_create(p),
            ("faces", "destroy") => {
                let Some(id) = p.face_id.and_then(|x| FaceId::try_from(x).ok()) else {
                    return mgmt::malformed();
                };
                self.forwarder.destroy_face(id);
                mgmt::ok(ControlParameters {
                    face_id: Some(u64::from(id)),
                    ..ControlParameters::default()
                })
            }
            ("faces", "update") => {
                let Some(id) = face_or_self(p.face_id) else {
                    return mgmt::malformed();
                };
                let mask = p.mask.unwrap_or(0);
                let flags = p.flags.unwrap_or(0);
                if p.flags.is_some() != p.mask.is_some() {
                    return mgmt::malformed();
                }
                let local_fields = (mask & FACE_FLAG_LOCAL_FIELDS_ENABLED != 0)
                    .then_some(flags & FACE_FLAG_LOCAL_FIELDS_ENABLED != 0);
                let persistency = p.face_persistency;
                match self.forwarder.update_face(id, persistency, local_fields) {
                    Ok(d) => mgmt::ok(face_params(&d)),
                    Err(UpdateFaceError::Refused(text)) => resp(409, &text),
                    Err(UpdateFaceError::NotFound) => resp(404, "Face not found"),
                }
            }
            ("strategy-choice", "set") => {
                let (Some(name), Some(strategy)) = (p.name.clone(), p.strategy.clone()) else {
                    return mgmt::malformed();
                };
                let Some(kind) = StrategyKind::from_nfd_name(&strategy) else {
                    return resp(404, "Strategy not found");
                };
                self.strategies.insert(name.clone(), kind);
                self.forwarder.set_strategy(&name, Some(kind));
                mgmt::ok(ControlParameters {
                    name: Some(name),
                    strategy: Some(strategy_name(kind)),
                    ..ControlParameters::default()
                })
            }
            ("strategy-choice", "unset") => {
                let Some(name) = p.name.clone() else {
                    return mgmt::malformed();
                };
                if name.is_empty() {
                    return resp(400, "Cannot unset root prefix strategy");
                }
                self.strategies.remove(&name);
                self.forwarder.set_strategy(&name, None);
                mgmt::ok(ControlParameters {
                    name: Some(name),
                    ..ControlParameters::default()
                })
            }
            ("cs", "config") => {
                if let Some(cap) = p.capacity {
                    self.cs_capacity = usize::try_from(cap).unwrap_or(usize::MAX);
                    self.forwarder.cs_config(self.cs_capacity, self.cs_policy);
                }
                mgmt::ok(ControlParameters {
                    capacity: Some(self.cs_capacity as u64),
                    flags: Some(CS_FLAG_ENABLE_ADMIT | CS_FLAG_ENABLE_SERVE),
                    ..ControlParameters::default()
                })
            }
            ("cs", "erase") => {
                let Some(name) = p.name.clone() else {
                    return mgmt::malformed();
                };
                let limit = p.count.map_or(usize::MAX, |c| c as usize);
                let erased = self.forwarder.cs_erase(&name, limit);
                mgmt::ok(ControlParameters {
                    name: Some(name),
                    count: Some(erased as u64),
                    capacity: p.count.filter(|_| erased >= limit),
                    ..ControlParameters::default()
                })
            }
            _ => mgmt::unsupported(),
        }
    }

    /// `rib/register`, `rib/unregister` (`rib`) and `fib/add-nexthop`, `fib/remove-nexthop`
    /// (next hops kept in the RIB under an origin of their own), with NFD's defaults.
    fn route_command(
        &mut self,
        rib: bool,
        add: bool,
        name: Name,
        face: FaceId,
        p: &ControlParameters,
    ) -> ControlResponse {
        let origin = if rib {
            p.origin.unwrap_or(0)
        } else {
            FIB_ORIGIN
        };
        let mut answer = ControlParameters {
            name: Some(name.clone()),
            face_id: Some(u64::from(face)),
            origin: rib.then_some(origin),
            ..ControlParameters::default()
        };
        if !add {
            self.remove_route(&name, face, origin);
            return mgmt::ok(answer);
        }
        if !self.face_exists(face) {
            return resp(410, "Face not found");
        }
        let cost = p.cost.unwrap_or(0);
        let flags = if rib {
            p.flags.unwrap_or(ROUTE_FLAG_CHILD_INHERIT)
        } else {
            0
        };
        let expiration = p.expiration_period.filter(|_| rib);
        let route = Route {
            face,
            origin,
            cost,
            flags,
            expires_ms: expiration.map(|e| self.now_ms().saturating_add(e)),
        };
        if let Err(e) = self.add_route(&name, route) {
            return e;
        }
        answer.cost = Some(cost);
        answer.flags = rib.then_some(flags);
        answer.expiration_period = expiration;
        mgmt::ok(answer)
    }

    fn faces_create(&mut self, p: &ControlParameters) -> ControlResponse {
        let Some(uri) = p.uri.clone() else {
            return mgmt::malformed();
        };
        let persistency = p.face_persistency.unwrap_or_default();
        let wants_local_fields = p.mask.unwrap_or(0) & FACE_FLAG_LOCAL_FIELDS_ENABLED != 0
            && p.flags.unwrap_or(0) & FACE_FLAG_LOCAL_FIELDS_ENABLED != 0;
        let r = self
            .forwarder
            .create_face(&uri, persistency, p.mtu.map(|m| m as usize));
        match r {
            Ok(mut d) => {
                if wants_local_fields {
                    if !d.local {
                        return resp(
                            406,
                            "Local fields can only be enabled on faces with local scope",
                        );
                    }
                    let id = d.id;
                    if let Ok(nd) = self.forwarder.update_face(id, None, Some(true)) {
                        d = nd;
                    }
                }
                mgmt::ok(face_params(&d))
            }
            Err(CreateFaceError::UnsupportedScheme(_)) => resp(406, "Unsupported protocol"),
            Err(CreateFaceError::BadUri(_)) => resp(400, "Malformed URI"),
            Err(CreateFaceError::Exists(d)) => {
                ControlResponse::with_parameters(409, "Face already exists", face_params(&d))
            }
            Err(CreateFaceError::Failed(e)) => resp(504, &format!("Face creation failed: {e}")),
        }
    }

    // ---- RIB → FIB --------------------------------------------------------------------------

    fn add_route(&mut self, name: &Name, r: Route) -> Result<(), ControlResponse> {
        if name.len() > engine::hash::MAX_PREFIX_STATES {
            return Err(resp(400, "Prefix too long"));
        }
        let routes = self.rib.entry(name.clone()).or_default();
        match routes
            .iter_mut()
            .find(|x| x.face == r.face && x.origin == r.origin)
        {
            Some(x) => *x = r,
            None => routes.push(r),
        }
        self.sync_fib(name)
    }

    fn remove_route(&mut self, name: &Name, face: FaceId, origin: u64) {
        if let Some(routes) = self.rib.get_mut(name) {
            routes.retain(|x| !(x.face == face && x.origin == origin));
            if routes.is_empty() {
                self.rib.remove(name);
            }
        }
        let _ = self.sync_fib(name);
    }

    /// A face closed: its routes go.
    pub fn face_down(&mut self, id: FaceId) {
        let names: Vec<Name> = self
            .rib
            .iter()
            .filter(|(_, rs)| rs.iter().any(|r| r.face == id))
            .map(|(n, _)| n.clone())
            .collect();
        for n in names {
            if let Some(rs) = self.rib.get_mut(&n) {
                rs.retain(|r| r.face != id);
                if rs.is_empty() {
                    self.rib.remove(&n);
                }
            }
            let _ = self.sync_fib(&n);
        }
        // Next hops added some other way.
        self.fib.remove_face(id);
    }

    /// Removes the routes whose expiration period has passed.
    pub fn expire_routes(&mut self) {
        let now = self.now_ms();
        let expired: Vec<(Name, FaceId, u64)> = self
            .rib
            .iter()
            .flat_map(|(n, rs)| {
                rs.iter()
                    .filter(|r| r.expires_ms.is_some_and(|e| e <= now))
                    .map(move |r| (n.clone(), r.face, r.origin))
            })
            .collect();
        for (n, f, o) in expired {
            self.remove_route(&n, f, o);
        }
    }

    /// Makes the FIB entry of `name` match the RIB: the cheapest route per face.
    fn sync_fib(&mut self, name: &Name) -> Result<(), ControlResponse> {
        let mut want: Vec<(FaceId, u32)> = Vec::new();
        for r in self.rib.get(name).into_iter().flatten() {
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
            Some(e) => Err(resp(500, &format!("FIB update failed: {e:?}"))),
        }
    }
}

fn strategy_name(kind: StrategyKind) -> Name {
    let base = Name::from_uri(kind.nfd_name()).unwrap_or_default();
    // NFD lists versioned strategy names.
    let v = match kind {
        StrategyKind::BestRoute => 5,
        StrategyKind::Multicast => 4,
    };
    base.with(Component::version(v))
}

fn face_params(d: &FaceDesc) -> ControlParameters {
    ControlParameters {
        face_id: Some(u64::from(d.id)),
        uri: Some(d.uri.clone()),
        local_uri: Some(d.local_uri.clone()),
        face_persistency: Some(d.persistency),
        mtu: d.mtu,
        flags: Some(if d.local_fields {
            FACE_FLAG_LOCAL_FIELDS_ENABLED
        } else {
            0
        }),
        ..ControlParameters::default()
    }
}

fn face_status(d: &FaceDesc) -> FaceStatus {
    let c = &d.counters;
    FaceStatus {
        face_id: u64::from(d.id),
        uri: d.uri.clone(),
        local_uri: d.local_uri.clone(),
        expiration_period: None,
        face_scope: if d.local {
            FaceScope::Local
        } else {
            FaceScope::NonLocal
        },
        face_persistency: d.persistency,
        link_type: LinkType::PointToPoint,
        base_congestion_marking_interval: None,
        default_congestion_threshold: None,
        mtu: d.mtu,
        n_in_interests: c.in_interests,
        n_in_data: c.in_data,
        n_in_nacks: c.in_nacks,
        n_out_interests: c.out_interests,
        n_out_data: c.out_data,
        n_out_nacks: c.out_nacks,
        n_in_bytes: c.in_bytes,
        n_out_bytes: c.out_bytes,
        flags: if d.local_fields {
            FACE_FLAG_LOCAL_FIELDS_ENABLED
        } else {
            0
        },
    }
}
