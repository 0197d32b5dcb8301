//! What each status dataset carries, in NFD's encoding (Cascade's own for `cs/tiers`): entries
//! back to back, in the order NFD lists them (FIB, RIB and strategy choices by name, faces by
//! the forwarder's order).

use std::collections::BTreeMap;
use std::time::Instant;

use face::{FaceCounters, FaceDesc};
use wire::nfd::{
    ChannelStatus, CsInfo, FaceQueryFilter, FaceStatus, ForwarderStatus, RibEntry,
    Route as RibRoute, StrategyChoice, ROUTE_FLAG_CHILD_INHERIT,
};
use wire::Name;

use super::fib::{fib_entries, fib_len, own_entries};
use super::nbcache::NbCacheInfo;
use super::reserved::reserved_faces;
use super::Dataset;
use crate::cs::CsSettings;
use crate::faces::{properties, reported_mtu};
use crate::forwarder::{Forwarder, WorkerStats};
use crate::manager::{add_counters, Traffic};
use crate::rib::{Rib, FIB_ORIGIN};
use crate::strategy::StrategyChoices;
use crate::CsTierInfo;

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
    /// Management's own traffic (NFD's internal face).
    pub traffic: Traffic,
    /// The counters of the faces closed so far, summed.
    pub closed_faces: &'a FaceCounters,
    /// The manager's time origin (route expiry counts from it).
    pub start: Instant,
    /// When the manager started, in milliseconds since the Unix epoch.
    pub start_wall_ms: u64,
    /// The management prefixes `rib/list` shows a route of (`/localhost/nfd`, and
    /// `/localhop/nfd` when it is served), as NFD's RIB holds them.
    pub management_prefixes: Vec<Name>,
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
                let faces = s.forwarder.faces();
                let real = faces.iter().map(face_status);
                for status in reserved_faces(&s.traffic).into_iter().chain(real) {
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
            Dataset::FibList => {
                for e in fib_entries(s.rib, &s.management_prefixes) {
                    e.encode(&mut out);
                }
            }
            Dataset::RibList => rib_list(s, &mut out),
            Dataset::CsInfo => cs_info(s, &mut out),
            Dataset::CsTiers => {
                if let Some(t) = tiers_of(&s.forwarder.stats()) {
                    t.encode(&mut out);
                }
            }
            Dataset::CsNbCache => nbcache(&s.forwarder.stats()).encode(&mut out),
            Dataset::StrategyChoiceList => {
                for c in strategy_choices(s.strategies) {
                    c.encode(&mut out);
                }
            }
        }
        out
    }
}

/// `cs/nbcache`: the engines' bypass and congestion counters, summed over the workers.
fn nbcache(stats: &[WorkerStats]) -> NbCacheInfo {
    stats
        .iter()
        .map(|w| {
            let (b, c) = (&w.counters.bypass, &w.counters.congestion);
            NbCacheInfo {
                n_filter_skips: b.filter_skips,
                n_filter_false_positives: b.filter_false_positives,
                n_queue_bypasses: b.queue_bypasses,
                n_queue_no_upstream: b.queue_no_upstream,
                n_bypass_unavailable: c.bypass_unavailable,
                n_alpha_sent: c.alpha_sent,
                n_beta_sent: c.beta_sent,
                n_alpha_received: c.alpha_received,
                n_beta_received: c.beta_received,
                n_faces_made_unavailable: c.faces_unavailable,
                n_faces_unavailable: w.nbcc_unavailable_faces,
                n_data_marked: c.data_marked,
                n_idle_sent: c.idle_sent,
            }
        })
        .fold(NbCacheInfo::default(), |all, x| all.merged(&x))
}

/// The strategy choices, by name.
pub(crate) fn strategy_choices(
    strategies: &StrategyChoices,
) -> impl Iterator<Item = StrategyChoice> + '_ {
    strategies.iter().map(|(name, _, instance)| StrategyChoice {
        name: name.clone(),
        strategy: instance.clone(),
    })
}

/// `status/general` as NFD's ForwarderStatusManager fills it. NFD's forwarder counts every
/// packet in from and out to a face, its internal face (management) included: here, the faces'
/// counters (those open and those closed) plus management's own traffic. Satisfied Interests
/// are the PIT entries Data satisfied and the Interests the CS answered (NFD satisfies those
/// too), plus management's answers; unsatisfied ones, the PIT entries that ended without Data
/// (expired, rejected for want of a route, Nacked by every upstream), plus the management
/// Interests left unanswered. Measurements entries: the distinct prefixes the workers' tables
/// measure ([`measurements_entries`]).
fn status_general<F: Forwarder>(s: &Sources<'_, F>, out: &mut Vec<u8>) {
    forwarder_status(s, &s.forwarder.stats(), &s.forwarder.faces()).encode(out);
}

/// NFD's NMeasurementsEntries (one entry per name) over workers that may measure the same
/// prefix: the distinct name hashes they report, plus the counts of workers that report none.
/// Merged here from the lists management fetches anyway, so the workers share no table.
pub(crate) fn measurements_entries(stats: &[WorkerStats]) -> u64 {
    let mut all: Vec<u64> = stats
        .iter()
        .flat_map(|s| s.measured_prefixes.iter().copied())
        .collect();
    all.sort_unstable();
    all.dedup();
    let unlisted = stats
        .iter()
        .filter(|s| s.measured_prefixes.is_empty())
        .map(|s| s.measurements as u64)
        .sum::<u64>();
    all.len() as u64 + unlisted
}

/// `status/general`'s figures from these workers' figures and faces.
pub(crate) fn forwarder_status<F>(
    s: &Sources<'_, F>,
    stats: &[WorkerStats],
    open_faces: &[FaceDesc],
) -> ForwarderStatus {
    let sum = |f: fn(&WorkerStats) -> u64| stats.iter().map(f).sum::<u64>();
    let mut faces = *s.closed_faces;
    for f in open_faces {
        add_counters(&mut faces, &f.counters);
    }
    let own = own_entries(&s.management_prefixes);
    let mut names: Vec<&Name> = s.rib.iter().map(|(n, _)| n).collect();
    names.extend(s.strategies.iter().map(|(n, _, _)| n));
    names.extend(&own);
    names.sort_unstable();
    names.dedup();
    ForwarderStatus {
        nfd_version: format!("cascade-{}", env!("CARGO_PKG_VERSION")),
        start_timestamp: s.start_wall_ms,
        current_timestamp: crate::manager::wall_ms(),
        n_name_tree_entries: name_tree_entries(names.into_iter()) + sum(|s| s.pit_len as u64),
        n_fib_entries: fib_len(s.rib, &s.management_prefixes),
        n_pit_entries: sum(|s| s.pit_len as u64),
        n_measurements_entries: measurements_entries(stats),
        n_cs_entries: sum(|s| s.cs_len as u64),
        n_in_interests: faces.in_interests,
        n_in_data: faces.in_data + s.traffic.data,
        n_in_nacks: faces.in_nacks,
        n_out_interests: faces.out_interests + s.traffic.interests,
        n_out_data: faces.out_data,
        n_out_nacks: faces.out_nacks,
        n_satisfied_interests: sum(|s| s.counters.satisfied + s.cs_hits) + s.traffic.satisfied,
        n_unsatisfied_interests: sum(|s| s.counters.unsatisfied) + s.traffic.unanswered,
    }
}

/// How many entries NFD's name tree would hold for these names (sorted): each name and every
/// prefix of it, once, the root included. In order, a name adds the components past the
/// longest prefix it shares with the name before it.
fn name_tree_entries<'a>(sorted: impl Iterator<Item = &'a Name>) -> u64 {
    let mut entries = 1;
    let mut prev: Option<&Name> = None;
    for name in sorted {
        let shared = prev.map_or(0, |p| {
            p.components
                .iter()
                .zip(&name.components)
                .take_while(|(x, y)| x == y)
                .count()
        });
        entries += (name.len() - shared) as u64;
        prev = Some(name);
    }
    entries
}

/// The FaceId NFD lists for its management's own routes: its internal face's
/// (`FACEID_INTERNAL_FACE`).
pub const INTERNAL_FACE_ID: u64 = 1;

/// The RIB's prefixes with their routes, in name order, expiration periods counted from now;
/// next hops of `fib/add-nexthop` are left out, and so is a prefix that has no other route.
/// As NFD's RIB service inserts them at start-up, `/localhost/nfd` (and `/localhop/nfd` when
/// `/localhop` commands are served) has a route to the internal face, origin app, cost 0,
/// ChildInherit, never expiring, listed first among the prefix's routes (Cascade's management
/// sits behind no face: the route is listed only, and reaches no FIB).
fn rib_list<F>(s: &Sources<'_, F>, out: &mut Vec<u8>) {
    let now = s.start.elapsed().as_millis() as u64;
    let mut entries: BTreeMap<&Name, Vec<RibRoute>> = BTreeMap::new();
    let internal = RibRoute {
        face_id: INTERNAL_FACE_ID,
        origin: 0,
        cost: 0,
        flags: ROUTE_FLAG_CHILD_INHERIT,
        expiration_period: None,
    };
    for top in &s.management_prefixes {
        entries.insert(top, vec![internal]);
    }
    for (name, routes) in s.rib.iter() {
        let listed = routes
            .iter()
            .filter(|r| r.origin != FIB_ORIGIN)
            .map(|r| RibRoute {
                face_id: u64::from(r.face),
                origin: r.origin,
                cost: r.cost,
                flags: r.flags,
                expiration_period: r.expires_ms.map(|e| e.saturating_sub(now)),
            });
        entries.entry(name).or_default().extend(listed);
    }
    for (name, routes) in entries {
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
    cs_info_of(s.cs, &s.forwarder.stats()).encode(out);
}

/// `cs/info`'s figures from these workers' figures.
pub(crate) fn cs_info_of(cs: &CsSettings, stats: &[WorkerStats]) -> CsInfo {
    CsInfo {
        capacity: cs.capacity as u64,
        flags: cs.flags(),
        n_cs_entries: stats.iter().map(|w| w.cs_len as u64).sum(),
        n_hits: stats.iter().map(|w| w.cs_hits).sum(),
        n_misses: stats.iter().map(|w| w.cs_misses).sum(),
    }
}

/// `cs/tiers`' entry: the workers' L2 tiers merged (none without one).
pub(crate) fn tiers_of(stats: &[WorkerStats]) -> Option<CsTierInfo> {
    let mut l2 = stats.iter().filter_map(|w| w.l2.as_ref());
    let first = l2.next()?;
    Some(l2.fold(*first, |all, x| all.merged(x)))
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
