//! The manager: NFD's management protocol over a [`Forwarder`].
//!
//! Management Interests (`/localhost/nfd/...`, `/localhop/nfd/...`) come from the forwarder
//! ([`Manager::on_interest`]). A command is authorized and parsed ([`parse_command_with`]) and
//! routed to its module: [`crate::rib`], [`crate::fib`], [`crate::faces`],
//! [`crate::strategy`] (`strategy-choice`) or [`crate::cs`]; they change the RIB (and through
//! it the shared FIB, with no pause in forwarding), the faces, the strategy choices and CS
//! settings (through the [`Forwarder`]). Datasets ([`crate::dataset`]) are generated on
//! request, versioned and segmented, and kept a few seconds so their later segments can be
//! fetched. Answers go back through the forwarder.
//!
//! Faces created, destroyed, gone down or come up are published on the `faces/events`
//! notification stream ([`crate::notify`], [`Manager::face_event`]); Interests for the stream
//! are answered from it or wait there for the next notification.
//!
//! The manager runs no thread: its owner calls it with each Interest and each face event, and
//! regularly asks it to expire routes and waiting Interests ([`Manager::tick`]).

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use engine::fw::strategy::{Strategy, StrategyKind};
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId};
use face::{FaceCounters, FaceDesc};
use wire::nfd::{
    ControlResponse, FaceEventKind, FaceEventNotification, FaceQueryFilter,
    ROUTE_FLAG_CHILD_INHERIT,
};
use wire::{tt, InterestView, Limits, LpPacketView, Name};

use crate::auth::{Authorizations, Origin, Refused, Verdict};
use crate::cs::CsSettings;
use crate::dataset::{names_a_version, Dataset, Sources, Versions};
use crate::forwarder::Forwarder;
use crate::notify::NotificationStream;
use crate::rib::readvertise::{Readvertise, RETRY_DELAY_MIN_MS};
use crate::rib::{Clocks, Rib, RibError, Route, STATIC_ORIGIN};
use crate::strategy::StrategyChoices;
use crate::{faces, fib, parse_command_with, response_data, rib, Command};

/// The manager's state: the RIB, the strategy choices, the CS settings, the dataset versions
/// kept, and the forwarder it drives.
pub struct Manager<F> {
    forwarder: F,
    rib: Rib,
    strategies: StrategyChoices,
    cs: CsSettings,
    datasets: Versions,
    face_events: NotificationStream,
    traffic: Traffic,
    closed_faces: FaceCounters,
    start: Instant,
    start_wall_ms: u64,
    limits: Limits,
    localhop: bool,
    readvertise: Option<Readvertise>,
    propagate: Option<Readvertise>,
    auth: Authorizations,
    localhop_auth: Authorizations,
}

/// Management's own traffic, as NFD's forwarder counts the traffic of its internal face (the
/// one its managers sit behind): every management Interest goes out to it, every answer comes
/// in from it and satisfies the Interests it matches; an Interest left unanswered is
/// unsatisfied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Management Interests taken (the internal face's incoming Interests).
    pub interests: u64,
    /// Data management produced: answers and notifications (the internal face's outgoing Data).
    pub data: u64,
    /// Interests its Data satisfied.
    pub satisfied: u64,
    /// Interests it left unanswered (datasets it had nothing for; notification Interests
    /// refused, expired or left by their face).
    pub unanswered: u64,
    /// Commands the authorizations refused, by reason.
    pub refused_commands: Refused,
}

/// The `faces/events` notification stream's name.
pub const FACE_EVENTS: &str = "/localhost/nfd/faces/events";

/// The manager's settings.
pub struct ManagerParts {
    /// The shared FIB.
    pub fib: Arc<Fib>,
    /// The forwarder's time origin (route expiry counts from it).
    pub start: Instant,
    /// Total CS capacity (the largest `cs/config` can set: the tables are sized for it).
    pub cs_capacity: usize,
    /// CS policy.
    pub cs_policy: CsPolicy,
    /// Packet limits.
    pub limits: Limits,
    /// The RIB's options.
    pub rib: RibOptions,
}

/// The RIB's options (the router's `[rib]` section).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RibOptions {
    /// Accept `/localhop/nfd/rib/...` commands from non-local faces (NFD's
    /// `localhop_security` section; the trust anchors are set by
    /// [`Manager::set_localhop_security`], any signer until then).
    pub localhop: bool,
    /// Readvertise routes of origin client to NLSR (NFD's `readvertise_nlsr`,
    /// [`crate::rib::readvertise`]).
    pub readvertise_nlsr: bool,
    /// The first retry delay of a readvertisement NLSR refused or left unanswered, in
    /// milliseconds; `None`: NFD's 50 s ([`crate::rib::readvertise::RETRY_DELAY_MIN_MS`]).
    pub readvertise_retry_ms: Option<u64>,
}

/// Milliseconds since the Unix epoch (dataset versions, `status/general` timestamps).
pub(crate) fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl<F: Forwarder> Manager<F> {
    /// A manager of `forwarder`, with NFD's default strategy choices (told to the forwarder).
    pub fn new(forwarder: F, p: ManagerParts) -> Self {
        let strategies = StrategyChoices::default();
        strategies.push_defaults(&forwarder);
        let mut rib = Rib::new(p.fib);
        if p.rib.readvertise_nlsr {
            rib.track_events();
        }
        Manager {
            forwarder,
            rib,
            strategies,
            cs: CsSettings {
                capacity: p.cs_capacity,
                max_capacity: p.cs_capacity,
                policy: p.cs_policy,
                admit: true,
                serve: true,
            },
            datasets: Versions::default(),
            face_events: NotificationStream::new(
                Name::from_uri(FACE_EVENTS).expect("a valid name"),
            ),
            traffic: Traffic::default(),
            closed_faces: FaceCounters::default(),
            start: p.start,
            start_wall_ms: wall_ms(),
            limits: p.limits,
            localhop: p.rib.localhop,
            readvertise: p.rib.readvertise_nlsr.then(|| {
                let min = p.rib.readvertise_retry_ms;
                Readvertise::with_retry_delay(min.unwrap_or(RETRY_DELAY_MIN_MS))
            }),
            propagate: None,
            auth: Authorizations::default(),
            localhop_auth: Authorizations::localhop(None),
        }
    }

    /// Propagates prefixes to a hub with `rv` ([`Readvertise::host_to_gateway`]), from the
    /// routes added from now on (call it before any route is added).
    pub fn set_propagation(&mut self, rv: Readvertise) {
        self.rib.track_events();
        self.propagate = Some(rv);
    }

    /// The prefix-propagation state, if it is on.
    pub fn propagation(&self) -> Option<&Readvertise> {
        self.propagate.as_ref()
    }

    /// Puts `auth` ([`Authorizations::localhop`]) in force for `/localhop/nfd/rib` commands
    /// (NFD's `localhop_security`); the counts of refusals carry on.
    /// Commands waiting for their certificate chains under the old one are refused (403).
    pub fn set_localhop_security(&mut self, auth: Authorizations) {
        self.localhop_auth.abandon();
        self.flush_chains();
        let refused = self.localhop_auth.refused();
        self.localhop_auth = auth;
        self.localhop_auth.add_refused(refused);
    }

    /// Puts `auth` in force (the signers' last times start afresh, as NFD's validators do when
    /// the `authorizations` section is read again); the counts of refusals carry on.
    pub fn set_authorizations(&mut self, auth: Authorizations) {
        let refused = self.auth.refused();
        self.auth = auth;
        self.auth.add_refused(refused);
    }

    /// The authorizations in force.
    pub fn authorizations(&self) -> &Authorizations {
        &self.auth
    }

    /// The readvertise-to-NLSR state, if it is on.
    pub fn readvertise(&self) -> Option<&Readvertise> {
        self.readvertise.as_ref()
    }

    /// Readvertises what the RIB's last changes call for (and what is due for refresh), to
    /// NLSR and to the hub: each command goes to the next hops of the destination's `rib`.
    fn readvertise_changes(&mut self) {
        if self.readvertise.is_none() && self.propagate.is_none() {
            return;
        }
        let events = self.rib.take_events();
        let now = self.start.elapsed().as_millis() as u64;
        for rv in [self.readvertise.as_mut(), self.propagate.as_mut()]
            .into_iter()
            .flatten()
        {
            let available = self.rib.has_rib_entry_above(rv.destination());
            let commands = rv.update(&events, available, now);
            if commands.is_empty() {
                continue;
            }
            let to = self.rib.lookup(&rv.destination().clone().with_str("rib"));
            for c in &commands {
                let interest = rv.interest(c, now, wall_ms());
                for &(face, _) in &to {
                    self.forwarder.send(face, None, &interest);
                }
            }
        }
    }

    /// A Data under NLSR's or a hub's RIB commands: the answer to a readvertisement or a
    /// propagation (anything else is dropped).
    fn on_nlsr_reply(&mut self, bytes: &[u8]) {
        let now = self.now_ms();
        let Ok(data) = wire::DataView::decode(bytes, &self.limits) else {
            return;
        };
        let code = data
            .content()
            .and_then(|c| ControlResponse::decode(c).ok())
            .map(|r| r.status_code);
        let name = data.name().to_name();
        for rv in [self.readvertise.as_mut(), self.propagate.as_mut()]
            .into_iter()
            .flatten()
        {
            if rv.on_reply(&name, code, now) {
                break;
            }
        }
        // A failure schedules a retry; nothing else is due at once.
        self.readvertise_changes();
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// The forwarder this manager drives.
    pub fn forwarder(&self) -> &F {
        &self.forwarder
    }

    /// The RIB.
    pub fn rib(&self) -> &Rib {
        &self.rib
    }

    /// The strategy choices.
    pub fn strategies(&self) -> &StrategyChoices {
        &self.strategies
    }

    /// Adds a route of the start-up configuration: origin [`STATIC_ORIGIN`], ChildInherit,
    /// never expiring.
    pub fn add_static_route(
        &mut self,
        name: &Name,
        face: FaceId,
        cost: u64,
    ) -> Result<(), RibError> {
        let route = Route {
            face,
            origin: STATIC_ORIGIN,
            cost,
            flags: ROUTE_FLAG_CHILD_INHERIT,
            expires_ms: None,
        };
        self.rib.add(name, route)
    }

    /// Removes a route [`Manager::add_static_route`] added (none: nothing happens).
    pub fn remove_static_route(&mut self, name: &Name, face: FaceId) {
        self.rib.remove(name, face, STATIC_ORIGIN);
    }

    /// Sets the strategy of `name` (as `strategy-choice/set` does).
    pub fn set_strategy(&mut self, name: Name, kind: StrategyKind) {
        self.strategies.set(&self.forwarder, name, kind);
    }

    /// Sets the strategy instance of `name`: a strategy with its parameters, listed as
    /// `instance` (as `strategy-choice/set` does, from [`crate::strategy::parse_config_name`]).
    pub fn set_strategy_instance(&mut self, name: Name, strategy: Strategy, instance: Name) {
        self.strategies
            .set_instance(&self.forwarder, name, strategy, instance);
    }

    /// Unsets the strategy of `name` (as `strategy-choice/unset` does); `/` goes back to
    /// best-route, as it cannot be unset.
    pub fn unset_strategy(&mut self, name: &Name) {
        self.strategies.unset(&self.forwarder, name);
    }

    /// The `faces/events` notification stream.
    pub fn face_events(&self) -> &NotificationStream {
        &self.face_events
    }

    /// Management's own traffic so far (NFD counts it as its internal face's).
    pub fn traffic(&self) -> Traffic {
        Traffic {
            unanswered: self.traffic.unanswered + self.face_events.unanswered(),
            refused_commands: self.auth.refused().plus(self.localhop_auth.refused()),
            ..self.traffic
        }
    }

    /// Sends a Data answering one Interest, and counts it.
    fn answer(&mut self, face: FaceId, token: Option<&[u8]>, data: &[u8]) {
        self.forwarder.send(face, token, data);
        self.traffic.data += 1;
        self.traffic.satisfied += 1;
    }

    /// A face closed: its routes go, and so do the Interests it left waiting for notifications.
    pub fn face_down(&mut self, id: FaceId) {
        self.rib.face_down(id);
        self.face_events.face_down(id);
        self.readvertise_changes();
    }

    /// Something happened to a face (`face` as it is now): a FaceEventNotification on
    /// `faces/events` to every subscriber waiting, as NFD's FaceManager posts one; a destroyed
    /// face also goes down ([`Manager::face_down`]) first, and its counters (as it closed) are
    /// kept for `status/general`.
    pub fn face_event(&mut self, kind: FaceEventKind, face: &FaceDesc) {
        if kind == FaceEventKind::Destroyed {
            self.face_down(face.id);
            add_counters(&mut self.closed_faces, &face.counters);
        }
        let p = faces::properties(face);
        let mut content = Vec::new();
        FaceEventNotification {
            kind,
            face_id: p.face_id,
            uri: p.uri,
            local_uri: p.local_uri,
            face_scope: p.face_scope,
            face_persistency: p.face_persistency,
            link_type: p.link_type,
            flags: p.flags,
        }
        .encode(&mut content);
        let now = self.now_ms();
        let (data, to) = self.face_events.publish(content, now);
        // One notification into the forwarder, which satisfies every Interest it matches.
        self.traffic.data += 1;
        self.traffic.satisfied += to.len() as u64;
        for (face, token) in to {
            self.forwarder.send(face, token.as_deref(), &data);
        }
    }

    /// Removes the routes whose expiration period has passed.
    pub fn expire_routes(&mut self) {
        let now = self.now_ms();
        self.rib.expire(now);
    }

    /// The regular chores: expired routes go ([`Manager::expire_routes`]), and so do Interests
    /// that waited for a notification past their lifetime.
    pub fn tick(&mut self) {
        let now = self.now_ms();
        self.localhop_auth.tick_chains(now);
        self.flush_chains();
        self.expire_routes();
        self.readvertise_changes();
        let now = self.now_ms();
        self.face_events.expire(now);
    }

    /// Answers a management Interest (the received bytes, possibly an LpPacket) that arrived
    /// on `face` (`local`: a local face). Datasets are served to local faces under
    /// `/localhost` only, and nothing answers a refused or unknown dataset request; every
    /// command gets a ControlResponse. The answer echoes the Interest's PIT token.
    pub fn on_interest(&mut self, face: FaceId, local: bool, bytes: &[u8]) {
        let (token, ibytes, nack) = if bytes.first() == Some(&(tt::LP_PACKET as u8)) {
            match LpPacketView::decode(bytes, &self.limits) {
                Ok(lp) => match lp.fragment() {
                    Some(f) => (lp.pit_token, f, lp.nack.is_some()),
                    None => return,
                },
                Err(_) => return,
            }
        } else {
            (None, bytes, false)
        };
        let is_data = ibytes.first() == Some(&(tt::DATA as u8));
        if token == Some(&crate::auth::FETCH_TOKEN[..]) && (is_data || nack) {
            // A certificate fetched for a localhop command's chain (or a Nack of the fetch).
            self.on_fetched(face, ibytes, nack);
            return;
        }
        if nack {
            return;
        }
        if ibytes.first() == Some(&(tt::DATA as u8)) {
            self.on_nlsr_reply(ibytes);
            return;
        }
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
        let localhost = text(0) == "localhost" && text(1) == "nfd";
        // NFD's forwarder drops /localhost from a non-local face before its managers see it.
        if text(0) != "localhost" || local {
            self.traffic.interests += 1;
        }
        if (module.as_str(), verb.as_str()) == ("faces", "events") {
            // The notification stream: answered with a notification or not at all (a
            // subscriber takes any other answer for a broken stream and asks again at once).
            if localhost && local {
                let now = self.now_ms();
                if let Some(d) = self.face_events.on_interest(face, token, &interest, now) {
                    self.answer(face, token, &d);
                }
            }
            return;
        }
        if let Some(dataset) = Dataset::from_module_verb(&module, &verb) {
            // Datasets are served to local faces under /localhost only.
            if !(localhost && local) {
                return;
            }
            let full = name.to_name();
            match self.dataset_data(dataset, &full) {
                Some(d) => self.answer(face, token, &d),
                None => self.traffic.unanswered += 1,
            }
            return;
        }
        let answer = match parse_command_with(&interest, local, self.localhop) {
            Err(r) => r,
            Ok(cmd) => {
                let (wall, now) = (wall_ms(), self.now_ms());
                let verdict = if text(0) == "localhop" && module == "rib" {
                    let origin = Origin {
                        face,
                        token: token.map(<[u8]>::to_vec),
                    };
                    let v = self
                        .localhop_auth
                        .check_localhop(&interest, ibytes, origin, wall, now);
                    self.flush_chains();
                    v
                } else {
                    self.auth.check(&module, &interest, wall, now)
                };
                match verdict {
                    Verdict::Accept => self.command(face, &cmd),
                    Verdict::Reject => crate::unauthorized(),
                    // Answered once its certificate chain is fetched and verified.
                    Verdict::Pending => return,
                    Verdict::Drop => {
                        self.traffic.unanswered += 1;
                        return;
                    }
                }
            }
        };
        self.readvertise_changes();
        let data = response_data(&name.to_name(), &answer);
        self.answer(face, token, &data);
    }

    /// A Data (or a Nack, `nack`) that came back on `face` to a certificate fetch.
    fn on_fetched(&mut self, face: FaceId, bytes: &[u8], nack: bool) {
        let (wall, now) = (wall_ms(), self.now_ms());
        if nack {
            if let Ok(i) = InterestView::decode(bytes, &self.limits) {
                self.localhop_auth.on_nack(face, &i.name().to_name(), now);
            }
        } else {
            self.localhop_auth.on_certificate(face, bytes, wall, now);
        }
        self.flush_chains();
    }

    /// Sends the certificate fetches the localhop validator asks for, and runs (or answers 403)
    /// the commands it decided after their chains.
    fn flush_chains(&mut self) {
        for f in self.localhop_auth.take_fetches() {
            let token = &crate::auth::FETCH_TOKEN[..];
            self.forwarder.send(f.face, Some(token), &f.interest);
        }
        let decided = self.localhop_auth.take_decided();
        if decided.is_empty() {
            return;
        }
        for d in decided {
            let Ok(interest) = InterestView::decode(&d.command, &self.limits) else {
                continue;
            };
            let Ok(cmd) = parse_command_with(&interest, false, self.localhop) else {
                continue;
            };
            let answer = if d.accepted {
                self.command(d.origin.face, &cmd)
            } else {
                crate::unauthorized()
            };
            let data = response_data(&interest.name().to_name(), &answer);
            self.answer(d.origin.face, d.origin.token.as_deref(), &data);
        }
        self.readvertise_changes();
    }

    /// The Data answering a dataset Interest: a new version for the bare dataset name, or a
    /// segment of a version generated in the last few seconds. A `faces/query` whose last
    /// component is no FaceQueryFilter is answered, as NFD answers it, with a ControlResponse
    /// 400 "Malformed filter" in a Data of ContentType Nack.
    fn dataset_data(&mut self, dataset: Dataset, full: &Name) -> Option<Vec<u8>> {
        let mut filter = FaceQueryFilter::default();
        if dataset == Dataset::FacesQuery && !names_a_version(full) {
            let last = full.components.last().filter(|_| full.len() > 4);
            match last.map(|c| FaceQueryFilter::decode(&c.value)) {
                Some(Ok(f)) => filter = f,
                _ => {
                    let refused = ControlResponse::new(400, "Malformed filter");
                    return Some(crate::command::nack_data(full, &refused));
                }
            }
        }
        let now = self.now_ms();
        let mut datasets = std::mem::take(&mut self.datasets);
        let sources = self.sources();
        let answer = datasets.answer(full, now, || {
            let content = dataset.content(&sources, &filter);
            (wall_ms(), content)
        });
        self.datasets = datasets;
        answer
    }

    /// What the datasets are made of.
    pub(crate) fn sources(&self) -> Sources<'_, F> {
        Sources {
            forwarder: &self.forwarder,
            rib: &self.rib,
            strategies: &self.strategies,
            cs: &self.cs,
            traffic: self.traffic(),
            closed_faces: &self.closed_faces,
            start: self.start,
            start_wall_ms: self.start_wall_ms,
            management_prefixes: self.management_prefixes(),
        }
    }

    /// The management prefixes NFD's RIB holds a route of: `/localhost/nfd`, and
    /// `/localhop/nfd` when `/localhop` commands are served.
    fn management_prefixes(&self) -> Vec<Name> {
        let tops: &[&str] = if self.localhop {
            &["/localhost/nfd", "/localhop/nfd"]
        } else {
            &["/localhost/nfd"]
        };
        tops.iter()
            .map(|t| Name::from_uri(t).expect("a valid name"))
            .collect()
    }

    /// Routes a command to its module (`from`: the face it came from).
    fn command(&mut self, from: FaceId, c: &Command) -> ControlResponse {
        let (p, verb) = (&c.params, c.verb.as_str());
        if !crate::validate::valid(&c.module, verb, p) {
            return ControlResponse::new(400, "failed in validating parameters");
        }
        let fwd = &self.forwarder;
        match c.module.as_str() {
            "rib" => {
                let start = self.start;
                let clocks = Clocks {
                    now_ms: move || start.elapsed().as_millis() as u64,
                    wall_ms,
                };
                let app = c.app_params.as_deref();
                rib::command(&mut self.rib, fwd, from, verb, p, app, clocks)
            }
            "fib" => fib::command(&mut self.rib, fwd, from, verb, p),
            "faces" => faces::command(fwd, from, verb, p),
            "strategy-choice" => self.strategies.command(fwd, verb, p),
            "cs" => self.cs.command(fwd, verb, p),
            _ => crate::unsupported(),
        }
    }
}

/// Adds `b`'s NFD counters (packets and bytes in and out) to `a`.
pub(crate) fn add_counters(a: &mut FaceCounters, b: &FaceCounters) {
    a.in_interests += b.in_interests;
    a.in_data += b.in_data;
    a.in_nacks += b.in_nacks;
    a.out_interests += b.out_interests;
    a.out_data += b.out_data;
    a.out_nacks += b.out_nacks;
    a.in_bytes += b.in_bytes;
    a.out_bytes += b.out_bytes;
}

#[cfg(test)]
mod propagate_tests;
#[cfg(test)]
mod rib_tests;
#[cfg(test)]
mod tests;
