//! Reloading the configuration while forwarding (`SIGHUP` to `cascade run`): management
//! applies the new file's static faces, routes (origin 255, "static", as NFD) and strategy
//! choices as a difference against what it applied before — what is new is added, what is gone
//! is removed, what is unchanged is left alone — so that packets keep flowing through the
//! routes that stay. The start-up configuration is applied the same way, against nothing.
//!
//! New faces and routes go in before old ones go out; if a face cannot be created or a route
//! cannot be added, what this reload did is undone and the running configuration stays. Then
//! management gives the I/O loops the limits that can change while they run
//! ([`RUNTIME_FACES_KEYS`], [`RUNTIME_CONNECTION_KEYS`], [`face::table::RuntimeLimits`]): of
//! `[faces]`, the send queues' bound, the idle timeout of on-demand UDP faces, the malformed
//! packet limit, the on-demand quota and its per-host bound, the unproven send ratio and
//! budget, the creation budget of on-demand faces (rate and burst); all of
//! `[connections]` (the send-queue budget, the timeouts, the per-address limit) and of
//! `[local]` (the allow-lists, the scope of loopback TCP); and `[face_system.general]
//! enable_congestion_marking` ([`RUNTIME_FACE_SYSTEM_KEYS`]: the faces made from then on take
//! it, by the I/O loops and by management, as NFD's channels do). The other sections and keys size
//! tables and threads at start-up: a change to them is reported as needing a restart
//! ([`restart_sections`]) and the running values stay.

use std::collections::HashMap;
use std::time::Instant;

use engine::fw::strategy::Strategy;
use engine::table::pit_cs::FaceId;
use face::FaceParams;
use mgmt::{CreateFaceError, Forwarder};
use wire::nfd::FacePersistency;
use wire::Name;

use crate::config::localhop::AnchorState;
use crate::config::{parse_prefix, Config, Faces, Route, StaticFace, StrategyEntry};

/// The parts of a configuration that management applies, at start-up and at a reload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Statics {
    /// `[[face]]`.
    pub faces: Vec<StaticFace>,
    /// `[[route]]`.
    pub routes: Vec<Route>,
    /// `[[strategy]]`.
    pub strategies: Vec<StrategyEntry>,
    /// The limits that change while forwarding (for the I/O loops together).
    pub limits: face::table::RuntimeLimits,
    /// `[[authorize]]`.
    pub authorizations: Vec<crate::config::authorizations::AuthorizeEntry>,
    /// `[[rib.localhop_trust_anchor]]`.
    pub localhop_anchors: Vec<crate::config::localhop::TrustAnchor>,
    /// `[rib] localhop_security` (the file's path), read at every reload.
    pub localhop_security: Option<String>,
}

impl Statics {
    /// The static parts of `cfg`.
    pub fn of(cfg: &Config) -> Statics {
        Statics {
            faces: cfg.static_faces.clone(),
            routes: cfg.routes.clone(),
            strategies: cfg.strategies.clone(),
            limits: runtime_limits(cfg),
            authorizations: cfg.authorizations.clone(),
            localhop_anchors: cfg.rib.localhop_trust_anchor.clone(),
            localhop_security: cfg.rib.localhop_security.clone(),
        }
    }
}

/// The `[faces]` keys a reload applies while forwarding.
pub const RUNTIME_FACES_KEYS: [&str; 9] = [
    "faces.send_queue_bytes",
    "faces.udp_idle_timeout_s",
    "faces.malformed_limit",
    "faces.max_on_demand_faces",
    "faces.max_on_demand_per_host",
    "faces.unproven_send_ratio",
    "faces.unproven_send_bytes_per_s",
    "faces.on_demand_faces_per_s",
    "faces.on_demand_faces_burst",
];

/// The `[connections]` and `[local]` keys a reload applies while forwarding (all of them).
pub const RUNTIME_CONNECTION_KEYS: [&str; 8] = [
    "connections.send_queue_budget_bytes",
    "connections.idle_timeout_s",
    "connections.first_packet_timeout_s",
    "connections.unix_timeouts",
    "connections.max_per_address",
    "local.allow_uids",
    "local.allow_gids",
    "local.loopback_tcp_is_local",
];

/// The `[face_system]` keys a reload applies while forwarding (to the faces made from then on).
pub const RUNTIME_FACE_SYSTEM_KEYS: [&str; 1] = ["face_system.general.enable_congestion_marking"];

/// The limits that change while forwarding, for the I/O loops together.
pub fn runtime_limits(cfg: &Config) -> face::table::RuntimeLimits {
    let f = &cfg.faces;
    face::table::RuntimeLimits {
        send_queue_bytes: f.send_queue_bytes,
        udp_idle_timeout_ms: f.udp_idle_timeout_s.saturating_mul(1000),
        malformed_limit: f.malformed_limit,
        max_on_demand_faces: f.max_on_demand_faces,
        max_on_demand_per_host: f.max_on_demand_per_host,
        unproven_send_ratio: f.unproven_send_ratio,
        unproven_send_bytes_per_s: f.unproven_send_bytes_per_s,
        on_demand_faces_per_s: f.on_demand_faces_per_s,
        on_demand_faces_burst: f.on_demand_faces_burst,
        stream: cfg.connections.limits(),
        local: cfg.local.policy(),
        congestion_marking: cfg.face_system.general.enable_congestion_marking,
    }
}

/// Makes `running` what a reload to `new` leaves running: the keys of
/// [`RUNTIME_FACES_KEYS`] and [`RUNTIME_CONNECTION_KEYS`] as in `new`.
pub fn keep_runtime_keys(running: &mut Config, new: &Config) {
    running.faces = with_runtime_keys(&running.faces, &new.faces);
    running.connections = new.connections.clone();
    running.local = new.local.clone();
    running.face_system.general = new.face_system.general.clone();
}

/// `running` with the keys of [`RUNTIME_FACES_KEYS`] as in `new` (what a reload leaves
/// running).
pub fn with_runtime_keys(running: &Faces, new: &Faces) -> Faces {
    Faces {
        send_queue_bytes: new.send_queue_bytes,
        udp_idle_timeout_s: new.udp_idle_timeout_s,
        malformed_limit: new.malformed_limit,
        max_on_demand_faces: new.max_on_demand_faces,
        max_on_demand_per_host: new.max_on_demand_per_host,
        unproven_send_ratio: new.unproven_send_ratio,
        unproven_send_bytes_per_s: new.unproven_send_bytes_per_s,
        on_demand_faces_per_s: new.on_demand_faces_per_s,
        on_demand_faces_burst: new.on_demand_faces_burst,
        ..running.clone()
    }
}

/// The keys of [`RUNTIME_FACES_KEYS`] and [`RUNTIME_CONNECTION_KEYS`] that differ from `old`
/// to `new`.
pub fn runtime_changes(old: &Config, new: &Config) -> Vec<&'static str> {
    let (o, n) = (runtime_limits(old), runtime_limits(new));
    let (oc, nc, ol, nl) = (&old.connections, &new.connections, &old.local, &new.local);
    let connections = [
        oc.send_queue_budget_bytes != nc.send_queue_budget_bytes,
        oc.idle_timeout_s != nc.idle_timeout_s,
        oc.first_packet_timeout_s != nc.first_packet_timeout_s,
        oc.unix_timeouts != nc.unix_timeouts,
        oc.max_per_address != nc.max_per_address,
        ol.allow_uids != nl.allow_uids,
        ol.allow_gids != nl.allow_gids,
        ol.loopback_tcp_is_local != nl.loopback_tcp_is_local,
    ];
    let faces = [
        o.send_queue_bytes != n.send_queue_bytes,
        o.udp_idle_timeout_ms != n.udp_idle_timeout_ms,
        o.malformed_limit != n.malformed_limit,
        o.max_on_demand_faces != n.max_on_demand_faces,
        o.max_on_demand_per_host != n.max_on_demand_per_host,
        o.unproven_send_ratio != n.unproven_send_ratio,
        o.unproven_send_bytes_per_s != n.unproven_send_bytes_per_s,
        o.on_demand_faces_per_s != n.on_demand_faces_per_s,
        o.on_demand_faces_burst != n.on_demand_faces_burst,
    ];
    let face_system = [o.congestion_marking != n.congestion_marking];
    let keys = RUNTIME_FACES_KEYS.iter().chain(&RUNTIME_CONNECTION_KEYS);
    let keys = keys.chain(&RUNTIME_FACE_SYSTEM_KEYS);
    (keys.zip(faces.into_iter().chain(connections).chain(face_system)))
        .filter(|(_, c)| *c)
        .map(|(k, _)| *k)
        .collect()
}

/// What a reload changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reloaded {
    /// Static faces created.
    pub faces_added: usize,
    /// Static faces destroyed (gone from the file).
    pub faces_removed: usize,
    /// Routes added, or whose cost changed.
    pub routes_added: usize,
    /// Routes removed.
    pub routes_removed: usize,
    /// Strategy choices set or changed.
    pub strategies_set: usize,
    /// Strategy choices unset.
    pub strategies_unset: usize,
    /// Sections that changed but take effect only at a restart (they keep running as they
    /// are).
    pub need_restart: Vec<&'static str>,
    /// Keys that changed and that the I/O loops now apply ([`RUNTIME_FACES_KEYS`],
    /// [`RUNTIME_CONNECTION_KEYS`], [`RUNTIME_FACE_SYSTEM_KEYS`]).
    pub limits_applied: Vec<&'static str>,
    /// Whether `[[authorize]]` changed and was applied (the command-time records start anew,
    /// as NFD's validators do when its configuration is read again).
    pub authorizations_applied: bool,
    /// Whether the localhop trust anchors, read again, hold other certificates than those in
    /// force, and these were put in force.
    pub anchors_applied: bool,
}

/// The sections that changed from `old` to `new` and that only a restart applies: the
/// listeners, the threads, the tables' sizes, the packet limits, the face limits other than
/// [`RUNTIME_FACES_KEYS`], the L2 store, the user, `[face_system]` but for
/// [`RUNTIME_FACE_SYSTEM_KEYS`] (the multicast faces).
pub fn restart_sections(old: &Config, new: &Config) -> Vec<&'static str> {
    let changed = [
        ("listen", old.listen != new.listen),
        ("workers", old.workers != new.workers),
        ("cs", old.cs != new.cs),
        ("pit", old.pit != new.pit),
        ("fib", old.fib != new.fib),
        ("limits", old.limits != new.limits),
        (
            "faces",
            with_runtime_keys(&old.faces, &new.faces) != new.faces,
        ),
        ("store", old.store != new.store),
        (
            "face_system",
            crate::config::FaceSystem {
                general: new.face_system.general.clone(),
                ..old.face_system.clone()
            } != new.face_system,
        ),
        (
            "general.user",
            (&old.general.user, &old.general.group) != (&new.general.user, &new.general.group),
        ),
    ];
    changed.iter().filter(|c| c.1).map(|c| c.0).collect()
}

/// What management applied last: the static faces (by their URI in the file) with their ids,
/// the static routes and the strategy choices.
#[derive(Debug, Default)]
pub struct Applied {
    faces: HashMap<String, FaceId>,
    routes: HashMap<(Name, FaceId), u64>,
    strategies: HashMap<Name, (Strategy, Name)>,
    /// The `[[authorize]]` entries in force (`None` before start-up applied them).
    authorizations: Option<Vec<crate::config::authorizations::AuthorizeEntry>>,
    /// The localhop trust anchors in force (`None` before start-up read them).
    anchors: Option<AnchorState>,
}

/// One undo step of a reload that failed half-way.
enum Undo {
    /// A face this reload created.
    Face(FaceId),
    /// A route this reload added (with the cost it had before, if it was there).
    Route(Name, FaceId, Option<u64>),
}

/// Applies `new` as a difference against `applied` (which then describes `new`). Errors are
/// one line; nothing changed then.
pub fn apply<F: Forwarder>(
    m: &mut mgmt::Manager<F>,
    applied: &mut Applied,
    new: &Statics,
) -> Result<Reloaded, String> {
    let mut done = Reloaded::default();
    // The authorizations are read first (their certificate files may fail to load), so that
    // an error leaves everything as it was; they take effect once the rest is applied.
    let auth_changed = applied.authorizations.as_ref() != Some(&new.authorizations);
    let auth = auth_changed
        .then(|| crate::config::authorizations::load(&new.authorizations))
        .transpose()?;
    // The localhop anchors are read again at every reload (their files may have changed), and
    // so is the localhop_security file (a bad one keeps the policy in force: nothing changed).
    let (specs, policy) = match &new.localhop_security {
        Some(path) => {
            let (p, a) = crate::config::localhop::read_policy(path)?;
            (a, Some(std::sync::Arc::new(p)))
        }
        None => (new.localhop_anchors.clone(), None),
    };
    let (anchors, localhop) =
        AnchorState::renew(applied.anchors.as_ref(), &specs, policy, Instant::now())?;
    let mut undo = Vec::new();
    let r = add(m, applied, new, &mut done, &mut undo);
    let (faces, routes, strategies) = match r {
        Ok(x) => x,
        Err(e) => {
            for u in undo.into_iter().rev() {
                match u {
                    Undo::Face(id) => m.forwarder().destroy_face(id),
                    Undo::Route(name, face, None) => m.remove_static_route(&name, face),
                    Undo::Route(name, face, Some(cost)) => {
                        let _ = m.add_static_route(&name, face, cost);
                    }
                }
            }
            return Err(e);
        }
    };
    for ((name, face), _) in applied
        .routes
        .iter()
        .filter(|(k, _)| !routes.contains_key(k))
    {
        m.remove_static_route(name, *face);
        done.routes_removed += 1;
    }
    for name in applied
        .strategies
        .keys()
        .filter(|n| !strategies.contains_key(n))
    {
        m.unset_strategy(name);
        done.strategies_unset += 1;
    }
    // A face gone from the file, unless another URI of the file names it still.
    let gone = applied
        .faces
        .iter()
        .filter(|(uri, _)| !faces.contains_key(*uri));
    let mut gone: Vec<FaceId> = gone.map(|(_, id)| *id).collect();
    gone.retain(|id| !faces.values().any(|kept| kept == id));
    gone.sort_unstable();
    gone.dedup();
    if !gone.is_empty() {
        let live = m.forwarder().faces();
        for id in gone
            .into_iter()
            .filter(|id| live.iter().any(|d| d.id == *id))
        {
            m.forwarder().destroy_face(id);
            done.faces_removed += 1;
        }
    }
    if let Some(auth) = auth {
        m.set_authorizations(auth);
        done.authorizations_applied = true;
    }
    if let Some(localhop) = localhop {
        m.set_localhop_security(localhop);
        done.anchors_applied = true;
    }
    *applied = Applied {
        faces,
        routes,
        strategies,
        authorizations: Some(new.authorizations.clone()),
        anchors: Some(anchors),
    };
    Ok(done)
}

/// Reads the localhop trust anchors again if their refresh interval has passed at `now`
/// (ndn-cxx's dynamic trust-anchor groups), putting them in force if they changed; whether
/// they did. An error (an anchor file gone) keeps those in force and is tried again at the
/// next interval.
pub fn refresh_anchors<F: Forwarder>(
    m: &mut mgmt::Manager<F>,
    applied: &mut Applied,
    now: Instant,
) -> Result<bool, String> {
    let Some(current) = applied.anchors.as_mut().filter(|a| a.due(now)) else {
        return Ok(false);
    };
    let policy = current.policy.clone();
    match AnchorState::renew(Some(current), &current.specs.clone(), policy, now) {
        Ok((state, localhop)) => {
            *current = state;
            let changed = localhop.is_some();
            if let Some(l) = localhop {
                m.set_localhop_security(l);
            }
            Ok(changed)
        }
        Err(e) => {
            current.next_at = current.read.refresh.map(|d| now + d);
            Err(e)
        }
    }
}

type NewState = (
    HashMap<String, FaceId>,
    HashMap<(Name, FaceId), u64>,
    HashMap<Name, (Strategy, Name)>,
);

/// The additions of [`apply`]: faces, then routes, then strategies; each step that changed
/// something is in `undo`.
fn add<F: Forwarder>(
    m: &mut mgmt::Manager<F>,
    applied: &Applied,
    new: &Statics,
    done: &mut Reloaded,
    undo: &mut Vec<Undo>,
) -> Result<NewState, String> {
    let permanent = FaceParams {
        persistency: FacePersistency::Permanent,
        options: m.forwarder().link_defaults(),
        ..FaceParams::default()
    };
    let mut faces = HashMap::new();
    for f in &new.faces {
        let id = match m.forwarder().create_configured_face(&f.uri, &permanent) {
            Ok(d) => {
                undo.push(Undo::Face(d.id));
                done.faces_added += 1;
                d.id
            }
            Err(CreateFaceError::Exists(d)) => d.id,
            Err(CreateFaceError::UnsupportedScheme(e) | CreateFaceError::BadUri(e)) => {
                return Err(e)
            }
            Err(CreateFaceError::Failed(e)) => return Err(format!("face {}: {e}", f.uri)),
        };
        faces.insert(f.uri.clone(), id);
    }
    let mut routes = HashMap::new();
    for r in &new.routes {
        let name = parse_prefix("route.prefix", &r.prefix)?;
        let face = *faces
            .get(&r.face)
            .ok_or_else(|| format!("route {}: unknown face {}", r.prefix, r.face))?;
        let cost = u64::from(r.cost);
        let before = applied.routes.get(&(name.clone(), face)).copied();
        if before != Some(cost) {
            m.add_static_route(&name, face, cost)
                .map_err(|e| format!("route {}: {e}", r.prefix))?;
            undo.push(Undo::Route(name.clone(), face, before));
            done.routes_added += 1;
        }
        routes.insert((name, face), cost);
    }
    let mut strategies = HashMap::new();
    for s in &new.strategies {
        let (name, strategy, instance) = s.instance()?;
        strategies.insert(name, (strategy, instance));
    }
    // Strategy choices cannot fail: set only once every face and route is in. A change of
    // parameters alone is a change.
    for (name, chosen) in &strategies {
        if applied.strategies.get(name) != Some(chosen) {
            m.set_strategy_instance(name.clone(), chosen.0, chosen.1.clone());
            done.strategies_set += 1;
        }
    }
    Ok((faces, routes, strategies))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::sync::Arc;

    use engine::fw::strategy::StrategyKind;
    use engine::table::pit_cs::CsPolicy;
    use face::{FaceDesc, FaceUpdate};
    use mgmt::{UpdateFaceError, WorkerStats};

    /// Faces by URI; `create_face` of a URI with "fail" in it fails.
    #[derive(Default)]
    struct Faces(RefCell<Vec<FaceDesc>>);

    impl Forwarder for Faces {
        fn faces(&self) -> Vec<FaceDesc> {
            self.0.borrow().clone()
        }
        fn channels(&self) -> Vec<String> {
            Vec::new()
        }
        fn create_face(&self, uri: &str, _: &FaceParams) -> Result<FaceDesc, CreateFaceError> {
            if uri.contains("fail") {
                return Err(CreateFaceError::Failed("Connection refused".into()));
            }
            if let Some(d) = self.0.borrow().iter().find(|d| d.uri == uri) {
                return Err(CreateFaceError::Exists(Box::new(d.clone())));
            }
            let mut faces = self.0.borrow_mut();
            let d = FaceDesc {
                id: 300 + faces.len() as FaceId * 7,
                uri: uri.into(),
                local_uri: String::new(),
                local: false,
                persistency: FacePersistency::Permanent,
                mtu: None,
                options: Default::default(),
                counters: Default::default(),
            };
            faces.push(d.clone());
            Ok(d)
        }
        fn update_face(&self, _: FaceId, _: &FaceUpdate) -> Result<FaceDesc, UpdateFaceError> {
            Err(UpdateFaceError::NotFound)
        }
        fn destroy_face(&self, id: FaceId) {
            self.0.borrow_mut().retain(|d| d.id != id);
        }
        fn send(&self, _: FaceId, _: Option<&[u8]>, _: &[u8]) {}
        fn set_strategy(&self, _: &Name, _: Option<StrategyKind>) {}
        fn cs_config(&self, _: usize, _: CsPolicy) {}
        fn cs_erase(&self, _: &Name, _: usize) -> usize {
            0
        }
        fn stats(&self) -> Vec<WorkerStats> {
            Vec::new()
        }
    }

    fn manager() -> mgmt::Manager<Faces> {
        let parts = mgmt::ManagerParts {
            fib: Arc::new(engine::table::fib::Fib::new(
                engine::hash::HashKey::from_bytes([7; 16]),
                1024,
                4,
            )),
            start: std::time::Instant::now(),
            cs_capacity: 16,
            cs_policy: CsPolicy::Lru,
            limits: wire::Limits::default(),
            rib: mgmt::RibOptions::default(),
        };
        mgmt::Manager::new(Faces::default(), parts)
    }

    fn statics(text: &str) -> Statics {
        Statics::of(&Config::from_toml(text).unwrap())
    }

    /// The static routes as (prefix, face URI, cost), sorted.
    fn routes(m: &mgmt::Manager<Faces>) -> Vec<(String, String, u64)> {
        let faces = m.forwarder().faces();
        let uri = |id| {
            faces
                .iter()
                .find(|d| d.id == id)
                .map_or("?".into(), |d| d.uri.clone())
        };
        let mut v: Vec<_> = (m.rib().iter())
            .flat_map(|(n, rs)| rs.iter().map(move |r| (n.to_string(), r)))
            .filter(|(_, r)| r.origin == mgmt::rib::STATIC_ORIGIN)
            .map(|(n, r)| (n, uri(r.face), r.cost))
            .collect();
        v.sort();
        v
    }

    fn strategies(m: &mgmt::Manager<Faces>) -> Vec<(String, StrategyKind)> {
        m.strategies()
            .iter()
            .map(|(n, k, _)| (n.to_string(), k))
            .collect()
    }

    const U1: &str = "udp4://127.0.0.1:7001";
    const U2: &str = "udp4://127.0.0.1:7002";

    #[test]
    fn a_reload_adds_what_is_new_removes_what_is_gone_and_keeps_the_rest() {
        let (mut m, mut applied) = (manager(), Applied::default());
        let a = format!(
            "[[face]]\nuri = \"{U1}\"\n[[route]]\nprefix = \"/a\"\nface = \"{U1}\"\n\
             [[route]]\nprefix = \"/k\"\nface = \"{U1}\"\n\
             [[strategy]]\nprefix = \"/a\"\nstrategy = \"multicast\"\n"
        );
        let done = apply(&mut m, &mut applied, &statics(&a)).unwrap();
        assert_eq!(
            (done.faces_added, done.routes_added, done.strategies_set),
            (1, 2, 1)
        );
        let u1_id = m.forwarder().faces()[0].id;
        let b = format!(
            "[[face]]\nuri = \"{U1}\"\n[[face]]\nuri = \"{U2}\"\n\
             [[route]]\nprefix = \"/k\"\nface = \"{U1}\"\n\
             [[route]]\nprefix = \"/b\"\nface = \"{U2}\"\ncost = 5\n"
        );
        let done = apply(&mut m, &mut applied, &statics(&b)).unwrap();
        assert_eq!(
            (
                done.faces_added,
                done.faces_removed,
                done.routes_added,
                done.routes_removed
            ),
            (1, 0, 1, 1)
        );
        assert_eq!(done.strategies_unset, 1);
        assert_eq!(
            m.forwarder().faces()[0].id,
            u1_id,
            "the kept face is the same face"
        );
        let want = [("/b", U2, 5), ("/k", U1, 0)].map(|(p, u, c)| (p.into(), u.into(), c));
        assert_eq!(routes(&m), want);
        // Back to NFD's default choices only.
        let defaults = [
            ("/", StrategyKind::BestRoute),
            ("/ndn/broadcast", StrategyKind::Multicast),
            ("/localhost", StrategyKind::Multicast),
            ("/localhost/nfd", StrategyKind::BestRoute),
        ]
        .map(|(n, k)| (n.to_string(), k));
        assert_eq!(strategies(&m), defaults);
        // The same file again changes nothing; dropping U1 destroys it and its route.
        let done = apply(&mut m, &mut applied, &statics(&b)).unwrap();
        assert_eq!(done, Reloaded::default());
        let c = format!(
            "[[face]]\nuri = \"{U2}\"\n[[route]]\nprefix = \"/b\"\nface = \"{U2}\"\ncost = 5\n"
        );
        let done = apply(&mut m, &mut applied, &statics(&c)).unwrap();
        assert_eq!((done.faces_removed, done.routes_removed), (1, 1));
        assert_eq!(m.forwarder().faces().len(), 1);
        assert_eq!(routes(&m), [("/b".into(), U2.into(), 5)]);
    }

    #[test]
    fn a_reload_changing_only_strategy_parameters_applies_them() {
        let (mut m, mut applied) = (manager(), Applied::default());
        let file = |ms: u32| {
            format!(
                "[[strategy]]\nprefix = \"/s\"\n\
                 strategy = \"asf/v=5/probing-interval~{ms}/max-timeouts~4\"\n"
            )
        };
        let done = apply(&mut m, &mut applied, &statics(&file(30_000))).unwrap();
        assert_eq!(done.strategies_set, 1);
        let s = *m.strategies().get(&Name::from_uri("/s").unwrap()).unwrap();
        assert_eq!((s.probing_interval_ms, s.max_timeouts), (30_000, 4));
        let done = apply(&mut m, &mut applied, &statics(&file(30_000))).unwrap();
        assert_eq!(done, Reloaded::default());
        let done = apply(&mut m, &mut applied, &statics(&file(5_000))).unwrap();
        assert_eq!(done.strategies_set, 1);
        let s = *m.strategies().get(&Name::from_uri("/s").unwrap()).unwrap();
        assert_eq!(s.probing_interval_ms, 5_000);
        let listed = m.strategies().iter().find(|c| c.0.to_string() == "/s");
        let want = "/localhost/nfd/strategy/asf/v=5/probing-interval~5000/max-timeouts~4";
        assert_eq!(listed.unwrap().2, &Name::from_uri(want).unwrap());
    }

    #[test]
    fn a_reload_that_fails_half_way_is_undone() {
        let (mut m, mut applied) = (manager(), Applied::default());
        let a = format!("[[face]]\nuri = \"{U1}\"\n[[route]]\nprefix = \"/a\"\nface = \"{U1}\"\n");
        apply(&mut m, &mut applied, &statics(&a)).unwrap();
        let before = (routes(&m), m.forwarder().faces());
        // A new face, a changed cost, then a face that cannot be created.
        let fail = "udp4://127.0.0.1:7003";
        let text = format!(
            "[[face]]\nuri = \"{U1}\"\n[[face]]\nuri = \"{U2}\"\n[[face]]\nuri = \"{fail}\"\n\
             [[route]]\nprefix = \"/a\"\nface = \"{U1}\"\ncost = 9\n"
        );
        let mut bad = statics(&text);
        bad.faces[2].uri = "udp4://fail".into();
        bad.faces.swap(1, 2);
        let e = apply(&mut m, &mut applied, &bad).unwrap_err();
        assert!(e.contains("udp4://fail"), "{e}");
        assert_eq!((routes(&m), m.forwarder().faces()), before);
        // A route that cannot be added undoes the faces and routes before it.
        let mut bad = statics(&text);
        bad.faces.truncate(2);
        let long = "/x".repeat(engine::hash::MAX_PREFIX_STATES + 1);
        bad.routes.push(Route {
            prefix: long,
            face: U2.into(),
            cost: 0,
        });
        let e = apply(&mut m, &mut applied, &bad).unwrap_err();
        assert!(e.starts_with("route /x/x"), "{e}");
        assert_eq!((routes(&m), m.forwarder().faces()), before);
        // And what was applied before still describes the forwarder: a good file works.
        let done = apply(&mut m, &mut applied, &statics(&a)).unwrap();
        assert_eq!(done, Reloaded::default());
    }

    #[test]
    fn only_the_sections_sized_at_start_need_a_restart() {
        let old = Config::default();
        let text = "[[face]]\nuri = \"udp4://127.0.0.1:6363\"\n\
                    [[route]]\nprefix = \"/a\"\nface = \"udp4://127.0.0.1:6363\"\n\
                    [[strategy]]\nprefix = \"/a\"\nstrategy = \"multicast\"\n\
                    [general]\nlog = \"debug\"\n";
        let new = Config::from_toml(text).unwrap();
        assert!(restart_sections(&old, &new).is_empty());
        let text = "[listen]\nunix = \"/tmp/x.sock\"\n[cs]\ncapacity = 10\n\
                    [store]\nl2_path = \"/tmp/l2\"\n[general]\nuser = \"nobody\"\n";
        let new = Config::from_toml(text).unwrap();
        assert_eq!(
            restart_sections(&old, &new),
            ["listen", "cs", "store", "general.user"]
        );
    }

    #[test]
    fn the_runtime_face_limits_change_without_a_restart_and_the_others_need_one() {
        let old = Config::default();
        let text = "[faces]\nsend_queue_bytes = 65536\nudp_idle_timeout_s = 30\n\
                    malformed_limit = 3\nmax_on_demand_faces = 10\n\
                    max_on_demand_per_host = 2\nunproven_send_ratio = 7\n\
                    unproven_send_bytes_per_s = 65536\n\
                    on_demand_faces_per_s = 50\non_demand_faces_burst = 5\n";
        let new = Config::from_toml(text).unwrap();
        assert!(restart_sections(&old, &new).is_empty());
        assert_eq!(runtime_changes(&old, &new), RUNTIME_FACES_KEYS);
        let running = with_runtime_keys(&old.faces, &new.faces);
        assert_eq!(running, new.faces);
        assert_eq!(
            Statics::of(&new).limits.udp_idle_timeout_ms,
            30_000,
            "seconds in the file, milliseconds in the table"
        );
        for key in [
            "max_faces = 9000",
            "udp_mtu = 1400",
            "reassembly_budget_bytes = 1048576",
        ] {
            let new = Config::from_toml(&format!("[faces]\n{key}\n")).unwrap();
            assert_eq!(restart_sections(&old, &new), ["faces"], "{key}");
            assert!(runtime_changes(&old, &new).is_empty(), "{key}");
        }
        let new = Config::from_toml("[limits]\nmax_packet_bytes = 4000\n").unwrap();
        assert_eq!(restart_sections(&old, &new), ["limits"]);
    }

    #[test]
    fn connections_local_and_congestion_marking_change_without_a_restart() {
        let old = Config::default();
        let text = "[connections]\nsend_queue_budget_bytes = 33554432\nidle_timeout_s = 30\n\
                    first_packet_timeout_s = 2\nunix_timeouts = true\nmax_per_address = 3\n\
                    [local]\nallow_uids = [7]\nallow_gids = [8]\nloopback_tcp_is_local = true\n";
        let new = Config::from_toml(text).unwrap();
        assert!(restart_sections(&old, &new).is_empty());
        assert_eq!(runtime_changes(&old, &new), RUNTIME_CONNECTION_KEYS);
        let mut running = old.clone();
        keep_runtime_keys(&mut running, &new);
        assert_eq!(
            (&running.connections, &running.local),
            (&new.connections, &new.local)
        );
        let l = Statics::of(&new).limits;
        assert_eq!(
            (
                l.stream.idle_timeout_ms,
                l.stream.max_connections_per_address
            ),
            (30_000, 3)
        );
        assert_eq!(
            (&l.local.allow_gids[..], l.local.loopback_tcp_is_local),
            (&[8u32][..], true)
        );
        // Each of four loops takes a quarter of the budget, as at start-up.
        assert_eq!(l.clone().share(4).stream.send_queue_budget_bytes, 8 << 20);
        let new = Config::from_toml("[local]\nallow_gids = [9]\n").unwrap();
        assert_eq!(runtime_changes(&old, &new), ["local.allow_gids"]);
        // The congestion marking default goes to the I/O loops (and management) at once...
        let text = "[face_system.general]\nenable_congestion_marking = false\n";
        let new = Config::from_toml(text).unwrap();
        assert!(restart_sections(&old, &new).is_empty());
        assert_eq!(runtime_changes(&old, &new), RUNTIME_FACE_SYSTEM_KEYS);
        assert!(old.face_system.general.enable_congestion_marking);
        assert!(!Statics::of(&new).limits.congestion_marking);
        let mut running = old.clone();
        keep_runtime_keys(&mut running, &new);
        assert_eq!(running.face_system, new.face_system);
        // ...while the multicast faces are opened at start only.
        let text = "[face_system.udp]\nmcast = true\n[face_system.general]\n\
                    enable_congestion_marking = false\n";
        let new = Config::from_toml(text).unwrap();
        assert_eq!(restart_sections(&old, &new), ["face_system"]);
        assert_eq!(runtime_changes(&old, &new), RUNTIME_FACE_SYSTEM_KEYS);
        let mut running = old.clone();
        keep_runtime_keys(&mut running, &new);
        assert!(
            !running.face_system.udp.mcast
                && !running.face_system.general.enable_congestion_marking
        );
    }

    #[test]
    fn a_bad_localhop_security_file_at_a_reload_keeps_the_policy_in_force() {
        use crate::config::authorizations::tests::certificate_named;
        use crate::config::localhop::tests::{dir, POLICY};
        let d = dir("reload-policy");
        std::fs::create_dir_all(d.0.join("keys")).unwrap();
        std::fs::write(
            d.0.join("keys/root.ndncert"),
            certificate_named("/ndn/KEY/k/self/v=1"),
        )
        .unwrap();
        let file = d.0.join("localhop.conf");
        std::fs::write(&file, POLICY).unwrap();
        let (mut m, mut applied) = (manager(), Applied::default());
        let new = Statics {
            localhop_security: Some(file.display().to_string()),
            ..Statics::default()
        };
        assert!(apply(&mut m, &mut applied, &new).unwrap().anchors_applied);
        assert!(!apply(&mut m, &mut applied, &new).unwrap().anchors_applied);
        std::fs::write(&file, "rule { id x }").unwrap();
        let e = apply(&mut m, &mut applied, &new).unwrap_err();
        assert!(
            e.starts_with("rib.localhop_security: ") && e.contains("line 1"),
            "{e}"
        );
        // The rules changed: put in force at the next reload.
        let one_rule = POLICY.replace("<KEY><>{1,3}$", "<KEY><>{1,2}$");
        std::fs::write(&file, one_rule).unwrap();
        assert!(apply(&mut m, &mut applied, &new).unwrap().anchors_applied);
    }

    #[test]
    fn localhop_anchors_are_read_again_at_a_reload_and_at_their_refresh_interval() {
        use crate::config::authorizations::tests::certificate_named;
        use crate::config::localhop::tests::{dir, dir_anchor};
        use std::time::Duration;
        let d = dir("reload");
        let cert = |n: &str| certificate_named(&format!("/{n}/KEY/k/self/v=1"));
        std::fs::write(d.0.join("a.cert"), cert("a")).unwrap();
        let (mut m, mut applied) = (manager(), Applied::default());
        let with = |refresh| Statics {
            localhop_anchors: vec![dir_anchor(&d, refresh)],
            ..Statics::default()
        };
        assert!(
            apply(&mut m, &mut applied, &with(Some("60s")))
                .unwrap()
                .anchors_applied
        );
        // The same certificates: nothing changes, at a reload or a refresh.
        assert!(
            !apply(&mut m, &mut applied, &with(Some("60s")))
                .unwrap()
                .anchors_applied
        );
        let t = Instant::now();
        std::fs::write(d.0.join("b.cert"), cert("b")).unwrap();
        // Not due yet; due a minute later, and then not again for another minute.
        assert_eq!(refresh_anchors(&mut m, &mut applied, t), Ok(false));
        let later = t + Duration::from_secs(61);
        assert_eq!(refresh_anchors(&mut m, &mut applied, later), Ok(true));
        assert_eq!(refresh_anchors(&mut m, &mut applied, later), Ok(false));
        // Without refresh, only a reload (SIGHUP) reads them again.
        assert!(
            !apply(&mut m, &mut applied, &with(None))
                .unwrap()
                .anchors_applied
        );
        std::fs::remove_file(d.0.join("a.cert")).unwrap();
        let much_later = t + Duration::from_secs(1 << 20);
        assert_eq!(refresh_anchors(&mut m, &mut applied, much_later), Ok(false));
        assert!(
            apply(&mut m, &mut applied, &with(None))
                .unwrap()
                .anchors_applied
        );
        // A file anchor gone at a reload: one line naming it, the anchors in force stay.
        let gone = Statics {
            localhop_anchors: vec![crate::config::localhop::TrustAnchor {
                kind: "file".into(),
                base64_string: None,
                file_name: Some("/nonexistent/h.cert".into()),
                dir: None,
                refresh: None,
            }],
            ..Statics::default()
        };
        let e = apply(&mut m, &mut applied, &gone).unwrap_err();
        assert!(e.contains("localhop_trust_anchor[0].file_name"), "{e}");
        assert!(
            !apply(&mut m, &mut applied, &with(None))
                .unwrap()
                .anchors_applied
        );
    }
}
