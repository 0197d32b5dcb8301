//! Issuing a [`Command`] as nfdc 24.07 does: which datasets it reads and commands it sends, in
//! which order, and which failure ends it with which exit status.

use std::time::Duration;

use wire::nfd::{
    decode_dataset, ChannelStatus, ControlParameters, FacePersistency, FaceQueryFilter, FaceStatus,
    CS_FLAG_ENABLE_ADMIT, CS_FLAG_ENABLE_SERVE, FACE_FLAG_CONGESTION_MARKING_ENABLED,
    FACE_FLAG_LOCAL_FIELDS_ENABLED, FACE_FLAG_LP_RELIABILITY_ENABLED,
};
use wire::{Component, Name};

use super::render::{self, Report};
use super::{canonical_face_uri, status, Command, FaceCreate, FaceRef, Failure, RouteAdd};
use crate::control::{Controller, LOCALHOST_NFD};
use crate::Error;

/// Most `cs/erase` commands one `cs erase` sends (each erases up to the forwarder's limit).
const MAX_ERASE_ROUNDS: usize = 1024;

/// How long `cs info` waits for Cascade's `cs/tiers` and `cs/nbcache` datasets (NFD never
/// answers them).
const TIERS_TIMEOUT: Duration = Duration::from_millis(1000);

/// The code nfdc prints for a failure: the StatusCode of a refused command, else ndn-cxx's
/// Controller codes (10060 timeout, 10800 Nack, 500 anything else).
fn code(e: &Error) -> u64 {
    match e {
        Error::Command { code, .. } => *code,
        Error::Timeout(_) => 10060,
        Error::Nack { .. } => 10800,
        _ => 500,
    }
}

fn reason(e: &Error) -> String {
    match e {
        Error::Command { text, .. } => text.clone(),
        e => e.to_string(),
    }
}

/// `Error CODE when ACTION: REASON`, status 1, as nfdc prints a refused command.
fn failed(action: &str, e: &Error) -> Failure {
    Failure::new(
        status::ERROR,
        format!("Error {} when {action}: {}", code(e), reason(e)),
    )
}

/// A dataset that could not be fetched: `Error CODE when fetching WHAT: REASON`.
fn fetch_failed(what: &str) -> impl Fn(Error) -> Failure + '_ {
    move |e| failed(&format!("fetching {what}"), &e)
}

/// Issues `cmd` through `c`; returns the text to print (JSON if `json`).
pub(super) fn execute(cmd: Command, c: &mut Controller<'_>, json: bool) -> Result<String, Failure> {
    Ok(match cmd {
        Command::Help(_) | Command::Version | Command::Batch { .. } => String::new(),
        Command::StatusReport { xml: true } => super::xml::report(&report(c)?),
        Command::StatusReport { xml: false } => render::report(&report(c)?, json),
        Command::Status => render::status(
            &c.forwarder_status()
                .map_err(fetch_failed("general status"))?,
            json,
        ),
        Command::ChannelList => render::channels(&channels(c)?, json),
        Command::FaceList {
            remote,
            local,
            scheme,
        } => {
            let filter = FaceQueryFilter {
                uri: remote
                    .map(|u| canonize(&u, "remote FaceUri "))
                    .transpose()?,
                local_uri: local.map(|u| canonize(&u, "local FaceUri ")).transpose()?,
                uri_scheme: scheme,
                ..FaceQueryFilter::default()
            };
            render::faces(&found(query_faces(c, &filter)?)?, json)
        }
        Command::FaceShow(id) => {
            render::face_show(&find_faces(c, &FaceRef::Id(id), false)?[0], json)
        }
        Command::FaceCreate(f) => face_create(c, &f, json)?,
        Command::FaceDestroy(face) => {
            let f = find_faces(c, &face, false)?.swap_remove(0);
            let p = ControlParameters {
                face_id: Some(f.face_id),
                ..ControlParameters::default()
            };
            let rp = c
                .command("faces", "destroy", &p)
                .map_err(|e| failed("destroying face", &e))?;
            render::face_destroyed(&f, &rp, json)
        }
        Command::RouteList { nexthop, origin } => {
            let ids = match nexthop {
                Some(f) => Some(find_faces(c, &f, true)?.iter().map(|f| f.face_id).collect()),
                None => None,
            };
            let rib = c.rib().map_err(fetch_failed("RIB dataset"))?;
            render::routes(
                &rib,
                |_, r| {
                    ids.as_ref()
                        .is_none_or(|v: &Vec<u64>| v.contains(&r.face_id))
                        && origin.is_none_or(|o| o == r.origin)
                },
                json,
            )?
        }
        Command::RouteShow(prefix) => {
            let rib = c.rib().map_err(fetch_failed("RIB dataset"))?;
            render::routes(&rib, |n, _| *n == prefix, json)?
        }
        Command::RouteAdd(r) => route_add(c, &r, json)?,
        Command::RouteRemove {
            prefix,
            nexthop,
            origin,
        } => {
            let mut out = String::new();
            for f in find_faces(c, &nexthop, true)? {
                let p = ControlParameters {
                    name: Some(prefix.clone()),
                    face_id: Some(f.face_id),
                    origin: Some(origin),
                    ..ControlParameters::default()
                };
                let rp = c
                    .command("rib", "unregister", &p)
                    .map_err(|e| failed("removing route", &e))?;
                out += &render::route_removed(&merge(&p, rp), json);
            }
            out
        }
        Command::FibList => render::fib(&c.fib().map_err(fetch_failed("FIB dataset"))?, json),
        Command::CsInfo => {
            let ram = c.cs_info().map_err(fetch_failed("CS information"))?;
            // Cascade's own datasets; NFD does not have them (nor does a router without L2).
            let tiers = c.cs_tiers(TIERS_TIMEOUT).unwrap_or_default();
            let nb = c.cs_nbcache(TIERS_TIMEOUT).ok();
            render::cs(&ram, &tiers, nb.as_ref(), json)
        }
        cmd => cs_strategy(cmd, c, json)?,
    })
}

/// The `cs config`, `cs erase` and `strategy` commands.
fn cs_strategy(cmd: Command, c: &mut Controller<'_>, json: bool) -> Result<String, Failure> {
    Ok(match cmd {
        Command::CsConfig {
            capacity,
            admit,
            serve,
        } => {
            let mut p = ControlParameters {
                capacity,
                ..ControlParameters::default()
            };
            set_flag(&mut p, CS_FLAG_ENABLE_ADMIT, admit);
            set_flag(&mut p, CS_FLAG_ENABLE_SERVE, serve);
            let rp = c
                .command("cs", "config", &p)
                .map_err(|e| failed("updating CS config", &e))?;
            render::cs_config(&rp, json)
        }
        Command::CsErase(prefix, limit) => {
            let total = cs_erase(c, &prefix, limit)?;
            render::cs_erased(&prefix, total, json)
        }
        Command::StrategyList => render::strategies(
            &c.strategy_choices()
                .map_err(fetch_failed("strategy choice dataset"))?,
            json,
        ),
        Command::StrategyShow(prefix) => {
            let v = c
                .strategy_choices()
                .map_err(fetch_failed("strategy choice dataset"))?;
            // The longest prefix match.
            let best = v
                .into_iter()
                .filter(|s| s.name.is_prefix_of(&prefix))
                .max_by_key(|s| s.name.len())
                .unwrap_or_default();
            render::strategy_show(&best, json)
        }
        Command::StrategySet(prefix, strategy) => {
            let p = ControlParameters {
                name: Some(prefix),
                strategy: Some(strategy.clone()),
                ..ControlParameters::default()
            };
            let rp = match c.command("strategy-choice", "set", &p) {
                Ok(rp) => rp,
                Err(Error::Command { code: 404, .. }) => {
                    return Err(Failure::new(
                        status::UNKNOWN_STRATEGY,
                        format!("Unknown strategy: {strategy}"),
                    ))
                }
                Err(e) => return Err(failed("setting strategy", &e)),
            };
            render::strategy_set(&merge(&p, rp), json)
        }
        Command::StrategyUnset(prefix) => {
            let p = ControlParameters {
                name: Some(prefix),
                ..ControlParameters::default()
            };
            let rp = c
                .command("strategy-choice", "unset", &p)
                .map_err(|e| failed("unsetting strategy", &e))?;
            render::strategy_unset(&merge(&p, rp), json)
        }
        _ => unreachable!("execute handles every other command"),
    })
}

/// Every section of `status report`, in nfdc's order.
fn report(c: &mut Controller<'_>) -> Result<Report, Failure> {
    let e = |e: Error| failed("collecting status report", &e);
    Ok(Report {
        general: c.forwarder_status().map_err(e)?,
        channels: channels(c)?,
        faces: c.faces().map_err(e)?,
        fib: c.fib().map_err(e)?,
        rib: c.rib().map_err(e)?,
        cs: c.cs_info().map_err(e)?,
        strategies: c.strategy_choices().map_err(e)?,
    })
}

fn channels(c: &mut Controller<'_>) -> Result<Vec<ChannelStatus>, Failure> {
    let name = Name::from_uri(&format!("{LOCALHOST_NFD}/faces/channels"))
        .map_err(|e| Failure::new(status::ERROR, e.to_string()))?;
    let content = c.dataset(&name).map_err(fetch_failed("channel dataset"))?;
    decode_dataset(&content, ChannelStatus::from_element).map_err(|e| {
        Failure::new(
            status::ERROR,
            format!("Error 500 when fetching channel dataset: {e}"),
        )
    })
}

/// Sets or clears one flag bit (and its Mask bit) when `on` is given.
fn set_flag(p: &mut ControlParameters, bit: u64, on: Option<bool>) {
    let Some(on) = on else { return };
    let flags = p.flags.unwrap_or(0);
    p.flags = Some(if on { flags | bit } else { flags & !bit });
    p.mask = Some(p.mask.unwrap_or(0) | bit);
}

/// `uri` made canonical, or status 4 with nfdc's message (`field` ends with a space, or is
/// empty).
fn canonize(uri: &str, field: &str) -> Result<String, Failure> {
    canonical_face_uri(uri).map_err(|why| {
        Failure::new(
            status::CANONIZE_ERROR,
            format!("Error during canonization of {field}'{uri}': {why}"),
        )
    })
}

/// The faces matching `filter` (faces/list when it is empty, else faces/query).
fn query_faces(
    c: &mut Controller<'_>,
    filter: &FaceQueryFilter,
) -> Result<Vec<FaceStatus>, Failure> {
    let result = if *filter == FaceQueryFilter::default() {
        c.faces()
    } else {
        let mut enc = Vec::new();
        filter.encode(&mut enc);
        let name = Name::from_uri(&format!("{LOCALHOST_NFD}/faces/query"))
            .map_err(|e| Failure::new(status::ERROR, e.to_string()))?
            .with(Component::generic(enc));
        c.dataset(&name).and_then(|content| {
            decode_dataset(&content, FaceStatus::from_element)
                .map_err(|e| Error::Protocol(format!("faces/query: {e}")))
        })
    };
    result.map_err(|e| failed("querying face", &e))
}

/// Status 3 (`Face not found`) when no face matched.
fn found(v: Vec<FaceStatus>) -> Result<Vec<FaceStatus>, Failure> {
    if v.is_empty() {
        Err(Failure::new(status::FACE_NOT_FOUND, "Face not found"))
    } else {
        Ok(v)
    }
}

/// The faces `face` names: one (status 5 if several match, unless `allow_multi`), or status 3.
fn find_faces(
    c: &mut Controller<'_>,
    face: &FaceRef,
    allow_multi: bool,
) -> Result<Vec<FaceStatus>, Failure> {
    let filter = match face {
        FaceRef::Id(id) => FaceQueryFilter {
            face_id: Some(*id),
            ..FaceQueryFilter::default()
        },
        FaceRef::Uri(u) => FaceQueryFilter {
            uri: Some(canonize(u, "")?),
            ..FaceQueryFilter::default()
        },
    };
    let v = found(query_faces(c, &filter)?)?;
    if v.len() > 1 && !allow_multi {
        let which: Vec<String> = v
            .iter()
            .map(|f| format!("{} (local={})", f.face_id, f.local_uri))
            .collect();
        return Err(Failure::new(
            status::AMBIGUOUS,
            format!(
                "Multiple faces match specified remote FaceUri. Re-run the command with a \
                 FaceId: {}",
                which.join(", ")
            ),
        ));
    }
    Ok(v)
}

/// The parameters of `faces/create` for `f`, the remote and local URIs already canonical.
fn create_params(f: &FaceCreate, remote: String, local: Option<String>) -> ControlParameters {
    let mut p = ControlParameters {
        uri: Some(remote),
        local_uri: local,
        face_persistency: Some(f.persistency),
        base_congestion_marking_interval: f.marking_interval_ms.map(|ms| ms * 1_000_000),
        default_congestion_threshold: f.congestion_threshold,
        mtu: f.mtu,
        ..ControlParameters::default()
    };
    set_flag(&mut p, FACE_FLAG_LP_RELIABILITY_ENABLED, f.reliability);
    set_flag(
        &mut p,
        FACE_FLAG_CONGESTION_MARKING_ENABLED,
        f.congestion_marking,
    );
    set_flag(&mut p, FACE_FLAG_LOCAL_FIELDS_ENABLED, f.local_fields);
    p
}

/// nfdc orders persistencies none < on-demand < persistent < permanent.
fn persistency_rank(p: FacePersistency) -> u64 {
    match p {
        FacePersistency::OnDemand => 1,
        FacePersistency::Persistent => 2,
        FacePersistency::Permanent => 3,
        FacePersistency::Other(_) => 0,
    }
}

/// What `faces/update` must change on the existing face `old` for `f`, if anything.
fn update_params(f: &FaceCreate, old: &ControlParameters) -> Option<ControlParameters> {
    let mut p = ControlParameters {
        face_id: old.face_id,
        ..ControlParameters::default()
    };
    let mut change = false;
    if f.mtu.is_some() && old.mtu != f.mtu {
        p.mtu = f.mtu;
        change = true;
    }
    let old_persistency = old.face_persistency.unwrap_or(FacePersistency::Other(0));
    if persistency_rank(old_persistency) < persistency_rank(f.persistency) {
        p.face_persistency = Some(f.persistency);
        change = true;
    }
    let old_flags = old.flags.unwrap_or(0);
    for (bit, want) in [
        (FACE_FLAG_LP_RELIABILITY_ENABLED, f.reliability),
        (FACE_FLAG_CONGESTION_MARKING_ENABLED, f.congestion_marking),
        (FACE_FLAG_LOCAL_FIELDS_ENABLED, f.local_fields),
    ] {
        if want.is_some_and(|w| w != (old_flags & bit != 0)) {
            set_flag(&mut p, bit, want);
            change = true;
        }
    }
    if let Some(ms) = f.marking_interval_ms {
        p.base_congestion_marking_interval = Some(ms * 1_000_000);
        change = true;
    }
    if f.congestion_threshold.is_some() {
        p.default_congestion_threshold = f.congestion_threshold;
        change = true;
    }
    change.then_some(p)
}

/// `face create`: faces/create; on 409 for the same remote URI, faces/update of what differs
/// (`face-updated`) or nothing (`face-exists`).
fn face_create(c: &mut Controller<'_>, f: &FaceCreate, json: bool) -> Result<String, Failure> {
    let remote = canonize(&f.remote, "remote FaceUri ")?;
    let local = f
        .local
        .as_deref()
        .map(|u| canonize(u, "local FaceUri "))
        .transpose()?;
    let p = create_params(f, remote.clone(), local);
    let r = c
        .command_response("faces", "create", &p)
        .map_err(|e| failed("creating face", &e))?;
    let refused = || {
        failed(
            "creating face",
            &Error::Command {
                code: r.status_code,
                text: r.status_text.clone(),
            },
        )
    };
    match (r.status_code, r.parameters()) {
        (200, Some(rp)) => Ok(render::face_params("face-created", rp, json)),
        (409, Some(old)) if old.uri.as_deref() == Some(remote.as_str()) => {
            let Some(up) = update_params(f, old) else {
                return Ok(render::face_params("face-exists", old, json));
            };
            let mut rp = c
                .command("faces", "update", &up)
                .map_err(|e| failed("updating face", &e))?;
            // faces/update does not echo the URIs: those of the create response.
            rp.uri.clone_from(&old.uri);
            rp.local_uri.clone_from(&old.local_uri);
            Ok(render::face_params("face-updated", &rp, json))
        }
        _ => Err(refused()),
    }
}

/// `route add`: the nexthop face (created first if a URI names no face), then rib/register.
fn route_add(c: &mut Controller<'_>, r: &RouteAdd, json: bool) -> Result<String, Failure> {
    let mut out = String::new();
    let face_id = match find_faces(c, &r.nexthop, false) {
        Ok(v) => v[0].face_id,
        Err(e) if e.status == status::FACE_NOT_FOUND => {
            let FaceRef::Uri(uri) = &r.nexthop else {
                return Err(e);
            };
            if uri.starts_with("ether:") {
                return Err(Failure::new(
                    status::ERROR,
                    "Unable to implicitly create Ethernet faces; please create the face with \
                     'nfdc face create' before adding the route",
                ));
            }
            let p = ControlParameters {
                uri: Some(canonize(uri, "")?),
                ..ControlParameters::default()
            };
            let rp = c
                .command("faces", "create", &p)
                .map_err(|e| failed("implicitly creating face", &e))?;
            out += &render::face_params("face-created", &rp, json);
            rp.face_id.unwrap_or(0)
        }
        Err(e) => return Err(e),
    };
    let p = ControlParameters {
        name: Some(r.prefix.clone()),
        face_id: Some(face_id),
        origin: Some(r.origin),
        cost: Some(r.cost),
        flags: Some(r.flags),
        expiration_period: r.expires_ms,
        ..ControlParameters::default()
    };
    let rp = match c.command("rib", "register", &p) {
        Ok(rp) => rp,
        Err(e) => return Err(failed("adding route", &e).after(out)),
    };
    out += &render::route_added(&merge(&p, rp), json);
    Ok(out)
}

/// cs/erase under `prefix` until the forwarder stops at fewer than its cap, or `limit` went.
fn cs_erase(c: &mut Controller<'_>, prefix: &Name, limit: Option<u64>) -> Result<u64, Failure> {
    let mut total = 0u64;
    for _ in 0..MAX_ERASE_ROUNDS {
        let p = ControlParameters {
            name: Some(prefix.clone()),
            count: limit.map(|l| l - total),
            ..ControlParameters::default()
        };
        let rp = c
            .command("cs", "erase", &p)
            .map_err(|e| failed("erasing cached Data", &e))?;
        let n = rp.count.unwrap_or(0);
        total += n;
        // NFD caps one command; Capacity in the answer says the cap was reached.
        let capped = rp.capacity.is_some_and(|cap| n >= cap && n > 0);
        if !capped || limit.is_some_and(|l| total >= l) {
            break;
        }
    }
    Ok(total)
}

/// The request's fields overridden by those the forwarder echoed.
fn merge(req: &ControlParameters, resp: ControlParameters) -> ControlParameters {
    ControlParameters {
        name: resp.name.or_else(|| req.name.clone()),
        face_id: resp.face_id.or(req.face_id),
        uri: resp.uri.or_else(|| req.uri.clone()),
        local_uri: resp.local_uri.or_else(|| req.local_uri.clone()),
        origin: resp.origin.or(req.origin),
        cost: resp.cost.or(req.cost),
        flags: resp.flags.or(req.flags),
        strategy: resp.strategy.or_else(|| req.strategy.clone()),
        expiration_period: resp.expiration_period.or(req.expiration_period),
        face_persistency: resp.face_persistency.or(req.face_persistency),
        ..resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    #[test]
    fn merge_prefers_the_answer() {
        let req = ControlParameters {
            name: Some(name("/x")),
            cost: Some(1),
            ..ControlParameters::default()
        };
        let resp = ControlParameters {
            cost: Some(9),
            face_id: Some(4),
            ..ControlParameters::default()
        };
        let m = merge(&req, resp);
        assert_eq!(
            (m.name, m.cost, m.face_id),
            (Some(name("/x")), Some(9), Some(4))
        );
    }

    fn create(mtu: Option<u64>, reliability: Option<bool>, p: FacePersistency) -> FaceCreate {
        FaceCreate {
            remote: "udp4://192.0.2.1:6363".into(),
            local: None,
            persistency: p,
            reliability,
            congestion_marking: None,
            marking_interval_ms: None,
            congestion_threshold: None,
            mtu,
            local_fields: None,
        }
    }

    #[test]
    fn an_existing_face_is_updated_only_where_it_differs() {
        let old = ControlParameters {
            face_id: Some(300),
            face_persistency: Some(FacePersistency::Persistent),
            flags: Some(FACE_FLAG_LP_RELIABILITY_ENABLED),
            mtu: Some(1400),
            ..ControlParameters::default()
        };
        let same = create(Some(1400), Some(true), FacePersistency::Persistent);
        assert_eq!(update_params(&same, &old), None);
        // A lower persistency is not a change.
        let mut lower = same.clone();
        lower.persistency = FacePersistency::OnDemand;
        assert_eq!(update_params(&lower, &old), None);
        let up =
            update_params(&create(None, Some(false), FacePersistency::Permanent), &old).unwrap();
        assert_eq!(up.face_id, Some(300));
        assert_eq!(up.face_persistency, Some(FacePersistency::Permanent));
        assert_eq!(
            (up.flags, up.mask),
            (Some(0), Some(FACE_FLAG_LP_RELIABILITY_ENABLED))
        );
        assert_eq!(up.mtu, None);
        let p = create_params(
            &create(Some(9000), Some(true), FacePersistency::Persistent),
            "udp4://192.0.2.1:6363".into(),
            None,
        );
        assert_eq!(
            (p.flags, p.mask, p.mtu),
            (
                Some(FACE_FLAG_LP_RELIABILITY_ENABLED),
                Some(FACE_FLAG_LP_RELIABILITY_ENABLED),
                Some(9000)
            )
        );
    }
}
