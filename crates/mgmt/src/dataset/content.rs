//! What each status dataset carries, in NFD's encoding (Cascade's own for `cs/tiers`): entries
//! back to back, in the order NFD lists them (FIB, RIB and strategy choices by name, faces by
//! the forwarder's order).

use std::time::Instant;

use face::FaceDesc;
use wire::nfd::{
    ChannelStatus, CsInfo, FaceQueryFilter, FaceStatus, FibEntry, ForwarderStatus, NextHopRecord,
    RibEntry, Route as RibRoute, StrategyChoice,
};

use super::Dataset;
use crate::cs::{CsSettings, CS_FLAGS};
use crate::faces::{properties, reported_mtu};
use crate::forwarder::{Forwarder, WorkerStats};
use crate::rib::{Rib, FIB_ORIGIN};
use crate::strategy::{strategy_name, StrategyChoices};

/// What the datasets are made of: the manager's state and the forwarder.
pub(crate) struct Sources<'a, F> {
    /// The forwarder (faces, workers' figures).
    pub forwarder: &'a F,
    /// The RIB, and through it the FIB.
    pub rib: &'a Rib,
    /// The strategy choices.
    pub strategies: &'a StrategyChoices,
    /// The CS settings.
    pub cs: &'a CsSettings,
    /// The manager's time origin (route expiry counts from it).
    pub start: Instant,
    /// When the manager started, in milliseconds since the Unix epoch.
    pub start_wall_ms: u64,
}

impl Dataset {
    /// The dataset's content, generated now; `filter` chooses the faces of `faces/query` (and
    /// is the default, matching every face, for every other dataset).
    pub(crate) fn content<F: Forwarder>(
        self,
        s: &Sources<'_, F>,
        filter: &FaceQueryFilter,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Dataset::StatusGeneral => status_general(s, &mut out),
            Dataset::FacesList | Dataset::FacesQuery => {
                for f in s.forwarder.faces() {
                    let status = face_status(&f);
                    if matches(filter, &status) {
                        status.encode(&mut out);
                    }
                }
            }
            Dataset::FacesChannels => {
                for local_uri in s.forwarder.channels() {
                    ChannelStatus { local_uri }.encode(&mut out);
                }
            }
            Dataset::FibList => fib_list(s.rib, &mut out),
            Dataset::RibList => rib_list(s, &mut out),
            Dataset::CsInfo => cs_info(s, &mut out),
            Dataset::CsTiers => {
                let stats = s.forwarder.stats();
                let mut l2 = stats.iter().filter_map(|w| w.l2.as_ref());
                if let Some(first) = l2.next() {
                    l2.fold(*first, |all, x| all.merged(x)).encode(&mut out);
                }
            }
            Dataset::StrategyChoiceList => {
                for (name, kind) in s.strategies.iter() {
                    StrategyChoice {
                        name: name.clone(),
                        strategy: strategy_name(kind),
                    }
                    .encode(&mut out);
                }
            }
        }
        out
    }
}

fn status_general<F: Forwarder>(s: &Sources<'_, F>, out: &mut Vec<u8>) {
    let stats = s.forwarder.stats();
    let sum = |f: fn(&WorkerStats) -> u64| stats.iter().map(f).sum::<u64>();
    ForwarderStatus {
        nfd_version: format!("cascade-{}", env!("CARGO_PKG_VERSION")),
        start_timestamp: s.start_wall_ms,
        current_timestamp: crate::manager::wall_ms(),
        n_name_tree_entries: sum(|s| (s.pit_len + s.cs_len) as u64),
        n_fib_entries: s.rib.fib().real_len() as u64,
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
    }
    .encode(out);
}

fn fib_list(rib: &Rib, out: &mut Vec<u8>) {
    for (name, hops) in rib.fib().entries() {
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
        .encode(out);
    }
}

/// The RIB's prefixes with their routes, expiration periods counted from now; next hops of
/// `fib/add-nexthop` are left out, and so is a prefix that has no other route.
fn rib_list<F>(s: &Sources<'_, F>, out: &mut Vec<u8>) {
    let now = s.start.elapsed().as_millis() as u64;
    for (name, routes) in s.rib.iter() {
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
            .encode(out);
        }
    }
}

fn cs_info<F: Forwarder>(s: &Sources<'_, F>, out: &mut Vec<u8>) {
    let stats = s.forwarder.stats();
    CsInfo {
        capacity: s.cs.capacity as u64,
        flags: CS_FLAGS,
        n_cs_entries: stats.iter().map(|w| w.cs_len as u64).sum(),
        n_hits: stats.iter().map(|w| w.cs_hits).sum(),
        n_misses: stats.iter().map(|w| w.cs_misses).sum(),
    }
    .encode(out);
}

/// A face as `faces/list` reports it.
fn face_status(d: &FaceDesc) -> FaceStatus {
    let c = &d.counters;
    let p = properties(d);
    FaceStatus {
        face_id: p.face_id,
        uri: p.uri,
        local_uri: p.local_uri,
        expiration_period: None,
        face_scope: p.face_scope,
        face_persistency: p.face_persistency,
        link_type: p.link_type,
        base_congestion_marking_interval: Some(d.options.base_congestion_marking_interval_ns),
        default_congestion_threshold: Some(d.options.default_congestion_threshold_bytes),
        mtu: Some(reported_mtu(d)),
        n_in_interests: c.in_interests,
        n_in_data: c.in_data,
        n_in_nacks: c.in_nacks,
        n_out_interests: c.out_interests,
        n_out_data: c.out_data,
        n_out_nacks: c.out_nacks,
        n_in_bytes: c.in_bytes,
        n_out_bytes: c.out_bytes,
        flags: p.flags,
    }
}

/// A URI's scheme: what comes before its first `:`.
fn scheme(uri: &str) -> &str {
    uri.split_once(':').map_or("", |(s, _)| s)
}

/// Whether a face matches a FaceQueryFilter, as NFD's FaceManager matches it: every field
/// present must match (UriScheme: the scheme of the remote or of the local URI); an empty
/// UriScheme, Uri or LocalUri counts as absent (as ndn-cxx reads it).
pub(crate) fn matches(f: &FaceQueryFilter, face: &FaceStatus) -> bool {
    let given = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    f.face_id.is_none_or(|id| id == face.face_id)
        && given(&f.uri_scheme)
            .is_none_or(|s| s == scheme(&face.uri) || s == scheme(&face.local_uri))
        && given(&f.uri).is_none_or(|u| u == face.uri)
        && given(&f.local_uri).is_none_or(|u| u == face.local_uri)
        && f.face_scope.is_none_or(|x| x == face.face_scope)
        && f.face_persistency
            .is_none_or(|x| x == face.face_persistency)
        && f.link_type.is_none_or(|x| x == face.link_type)
}
