//! The text nfdc 24.07 prints: `key=value` attributes on one line (`face list`, `route list`,
//! command results) or aligned one a line (`face show`, `status`), and `status report`'s
//! sections; or JSON, one object a line.

use std::fmt::{Display, Write as _};

use serde_json::{json, Value};
use wire::nfd::{
    ChannelStatus, ControlParameters, CsInfo, FacePersistency, FaceScope, FaceStatus, FibEntry,
    ForwarderStatus, LinkType, RibEntry, Route, StrategyChoice, CS_FLAG_ENABLE_ADMIT,
    CS_FLAG_ENABLE_SERVE, FACE_FLAG_CONGESTION_MARKING_ENABLED, FACE_FLAG_LOCAL_FIELDS_ENABLED,
    FACE_FLAG_LP_RELIABILITY_ENABLED, ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT,
};
use wire::Name;

use super::{status, Failure};
use crate::control::{CsTierInfo, NbCacheInfo};

/// nfdc's `ItemAttributes`: `k=v k=v` on one line, or one `k=v` a line with the keys
/// right-aligned to a width.
struct Attrs {
    /// `Some(width)`: one attribute a line.
    multi: Option<usize>,
    out: String,
}

impl Attrs {
    fn line() -> Self {
        Attrs {
            multi: None,
            out: String::new(),
        }
    }

    fn multi(width: usize) -> Self {
        Attrs {
            multi: Some(width),
            out: String::new(),
        }
    }

    fn add(&mut self, key: &str, value: impl Display) -> &mut Self {
        match self.multi {
            Some(w) => {
                if !self.out.is_empty() {
                    self.out.push('\n');
                }
                let _ = write!(self.out, "{key:>w$}={value}");
            }
            None => {
                if !self.out.is_empty() {
                    self.out.push(' ');
                }
                let _ = write!(self.out, "{key}={value}");
            }
        }
        self
    }

    /// The text; a multi-line item ends with a newline.
    fn done(&mut self) -> String {
        let mut s = std::mem::take(&mut self.out);
        if self.multi.is_some() {
            s.push('\n');
        }
        s
    }
}

/// Every line of `s` indented by two spaces.
fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

fn lines(items: &[Value]) -> String {
    let mut s = String::new();
    for v in items {
        let _ = writeln!(s, "{v}");
    }
    s
}

fn onoff(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

pub(super) fn scope_str(s: FaceScope) -> String {
    match s {
        FaceScope::NonLocal => "non-local".into(),
        FaceScope::Local => "local".into(),
        FaceScope::Other(n) => n.to_string(),
    }
}

pub(super) fn persistency_str(p: FacePersistency) -> String {
    match p {
        FacePersistency::Persistent => "persistent".into(),
        FacePersistency::OnDemand => "on-demand".into(),
        FacePersistency::Permanent => "permanent".into(),
        FacePersistency::Other(0) => "none".into(),
        FacePersistency::Other(n) => n.to_string(),
    }
}

pub(super) fn link_str(l: LinkType) -> String {
    match l {
        LinkType::PointToPoint => "point-to-point".into(),
        LinkType::MultiAccess => "multi-access".into(),
        LinkType::AdHoc => "adhoc".into(),
        LinkType::Other(n) => n.to_string(),
    }
}

/// A route origin as ndn-cxx prints it: its name, else the number.
pub(super) fn origin_str(o: u64) -> String {
    match o {
        0 => "app".into(),
        64 => "autoreg".into(),
        65 => "client".into(),
        66 => "autoconf".into(),
        128 => "nlsr".into(),
        129 => "prefixann".into(),
        255 => "static".into(),
        65535 => "none".into(),
        n => n.to_string(),
    }
}

/// Route flags as ndn-cxx prints them: `child-inherit|capture`, `none`, unknown bits in hex.
fn route_flags_str(flags: u64) -> String {
    let mut v: Vec<String> = Vec::new();
    if flags & ROUTE_FLAG_CHILD_INHERIT != 0 {
        v.push("child-inherit".into());
    }
    if flags & ROUTE_FLAG_CAPTURE != 0 {
        v.push("capture".into());
    }
    let rest = flags & !(ROUTE_FLAG_CHILD_INHERIT | ROUTE_FLAG_CAPTURE);
    if rest != 0 {
        v.push(format!("0x{rest:x}"));
    }
    if v.is_empty() {
        "none".into()
    } else {
        v.join("|")
    }
}

/// A UTC time in milliseconds since the epoch as ndn-cxx's `toIsoString`:
/// `YYYYMMDDTHHMMSS.ffffff`, the fraction left out when it is zero.
pub(super) fn iso_time(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let sod = secs % 86_400;
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mut s = format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    if ms % 1000 != 0 {
        let _ = write!(s, ".{:06}", (ms % 1000) * 1000);
    }
    s
}

fn status_json(s: &ForwarderStatus) -> Value {
    let uptime_s = s.current_timestamp.saturating_sub(s.start_timestamp) / 1000;
    json!({
        "version": s.nfd_version,
        "start_timestamp": s.start_timestamp,
        "current_timestamp": s.current_timestamp,
        "uptime_s": uptime_s,
        "n_name_tree_entries": s.n_name_tree_entries,
        "n_fib_entries": s.n_fib_entries,
        "n_pit_entries": s.n_pit_entries,
        "n_measurements_entries": s.n_measurements_entries,
        "n_cs_entries": s.n_cs_entries,
        "n_in_interests": s.n_in_interests,
        "n_in_data": s.n_in_data,
        "n_in_nacks": s.n_in_nacks,
        "n_out_interests": s.n_out_interests,
        "n_out_data": s.n_out_data,
        "n_out_nacks": s.n_out_nacks,
        "n_satisfied_interests": s.n_satisfied_interests,
        "n_unsatisfied_interests": s.n_unsatisfied_interests,
    })
}

/// `General NFD status:` and the attributes, as `status show` and `status report` print them.
fn status_section(s: &ForwarderStatus) -> String {
    let uptime_s = s.current_timestamp.saturating_sub(s.start_timestamp) / 1000;
    let body = Attrs::multi(21)
        .add("version", &s.nfd_version)
        .add("startTime", iso_time(s.start_timestamp))
        .add("currentTime", iso_time(s.current_timestamp))
        .add("uptime", format!("{uptime_s} seconds"))
        .add("nNameTreeEntries", s.n_name_tree_entries)
        .add("nFibEntries", s.n_fib_entries)
        .add("nPitEntries", s.n_pit_entries)
        .add("nMeasurementsEntries", s.n_measurements_entries)
        .add("nCsEntries", s.n_cs_entries)
        .add("nInInterests", s.n_in_interests)
        .add("nOutInterests", s.n_out_interests)
        .add("nInData", s.n_in_data)
        .add("nOutData", s.n_out_data)
        .add("nInNacks", s.n_in_nacks)
        .add("nOutNacks", s.n_out_nacks)
        .add("nSatisfiedInterests", s.n_satisfied_interests)
        .add("nUnsatisfiedInterests", s.n_unsatisfied_interests)
        .done();
    format!("General NFD status:\n{}", indent(&body))
}

/// `status show`.
pub(super) fn status(s: &ForwarderStatus, json: bool) -> String {
    if json {
        return format!("{}\n", status_json(s));
    }
    status_section(s)
}

fn channels_section(v: &[ChannelStatus]) -> String {
    let mut s = String::from("Channels:\n");
    for c in v {
        let _ = writeln!(s, "  {}", c.local_uri);
    }
    s
}

/// `channel list`.
pub(super) fn channels(v: &[ChannelStatus], json: bool) -> String {
    if json {
        let v: Vec<Value> = v.iter().map(|c| json!({"local": c.local_uri})).collect();
        return lines(&v);
    }
    channels_section(v)
}

fn face_json(f: &FaceStatus) -> Value {
    json!({
        "face_id": f.face_id,
        "remote": f.uri,
        "local": f.local_uri,
        "scope": scope_str(f.face_scope),
        "persistency": persistency_str(f.face_persistency),
        "link_type": link_str(f.link_type),
        "expiration_period_ms": f.expiration_period,
        "base_congestion_marking_interval_ns": f.base_congestion_marking_interval,
        "default_congestion_threshold_bytes": f.default_congestion_threshold,
        "mtu": f.mtu,
        "n_in_interests": f.n_in_interests,
        "n_in_data": f.n_in_data,
        "n_in_nacks": f.n_in_nacks,
        "n_out_interests": f.n_out_interests,
        "n_out_data": f.n_out_data,
        "n_out_nacks": f.n_out_nacks,
        "n_in_bytes": f.n_in_bytes,
        "n_out_bytes": f.n_out_bytes,
        "flags": f.flags,
    })
}

/// One face as nfdc's `FaceModule::formatItemText`.
fn face_item(f: &FaceStatus, mut a: Attrs) -> String {
    a.add("faceid", f.face_id)
        .add("remote", &f.uri)
        .add("local", &f.local_uri);
    if let Some(ms) = f.expiration_period {
        a.add("expires", format!("{}s", ms / 1000));
    }
    if f.base_congestion_marking_interval.is_some() || f.default_congestion_threshold.is_some() {
        let mut c = Vec::new();
        if let Some(ns) = f.base_congestion_marking_interval {
            c.push(format!("base-marking-interval={}ms", ns / 1_000_000));
        }
        if let Some(b) = f.default_congestion_threshold {
            c.push(format!("default-threshold={b}B"));
        }
        a.add("congestion", format!("{{{}}}", c.join(" ")));
    }
    if let Some(mtu) = f.mtu {
        a.add("mtu", mtu);
    }
    a.add(
        "counters",
        format!(
            "{{in={{{}i {}d {}n {}B}} out={{{}i {}d {}n {}B}}}}",
            f.n_in_interests,
            f.n_in_data,
            f.n_in_nacks,
            f.n_in_bytes,
            f.n_out_interests,
            f.n_out_data,
            f.n_out_nacks,
            f.n_out_bytes
        ),
    );
    let mut flags = vec![
        scope_str(f.face_scope),
        persistency_str(f.face_persistency),
        link_str(f.link_type),
    ];
    for (bit, word) in [
        (FACE_FLAG_LOCAL_FIELDS_ENABLED, "local-fields"),
        (FACE_FLAG_LP_RELIABILITY_ENABLED, "lp-reliability"),
        (FACE_FLAG_CONGESTION_MARKING_ENABLED, "congestion-marking"),
    ] {
        if f.flags & bit != 0 {
            flags.push(word.into());
        }
    }
    a.add("flags", format!("{{{}}}", flags.join(" ")));
    a.done()
}

/// `face list`: one line a face.
pub(super) fn faces(v: &[FaceStatus], json: bool) -> String {
    if json {
        return lines(&v.iter().map(face_json).collect::<Vec<_>>());
    }
    v.iter()
        .map(|f| face_item(f, Attrs::line()) + "\n")
        .collect()
}

/// `face show`: one attribute a line.
pub(super) fn face_show(f: &FaceStatus, json: bool) -> String {
    if json {
        return format!("{}\n", face_json(f));
    }
    face_item(f, Attrs::multi(10))
}

/// A command's result: `WHAT k=v ...`, or a JSON object with `"result": WHAT` and the fields
/// (numbers as numbers).
fn result(what: &str, a: &[(&str, String)], json: bool) -> String {
    if json {
        let mut obj = serde_json::Map::new();
        obj.insert("result".into(), json!(what));
        for (k, v) in a {
            let v = v.parse::<u64>().map_or_else(|_| json!(v), |n| json!(n));
            obj.insert((*k).into(), v);
        }
        return format!("{}\n", Value::Object(obj));
    }
    let mut l = Attrs::line();
    for (k, v) in a {
        l.add(k, v);
    }
    format!("{what} {}\n", l.done())
}

/// The face attributes of a faces/* answer after nfdc's `printFaceParams`.
fn face_params_fields(p: &ControlParameters, a: &mut Vec<(&str, String)>) {
    let flags = p.flags.unwrap_or(0);
    a.push((
        "reliability",
        onoff(flags & FACE_FLAG_LP_RELIABILITY_ENABLED != 0).into(),
    ));
    a.push((
        "congestion-marking",
        onoff(flags & FACE_FLAG_CONGESTION_MARKING_ENABLED != 0).into(),
    ));
    if let Some(ns) = p.base_congestion_marking_interval {
        a.push((
            "congestion-marking-interval",
            format!("{}ms", ns / 1_000_000),
        ));
    }
    if let Some(b) = p.default_congestion_threshold {
        a.push(("default-congestion-threshold", format!("{b}B")));
    }
    if let Some(mtu) = p.mtu {
        a.push(("mtu", mtu.to_string()));
    }
}

/// `face-created`, `face-exists`, `face-updated`.
pub(super) fn face_params(what: &str, p: &ControlParameters, json: bool) -> String {
    let mut a = vec![
        ("id", p.face_id.unwrap_or(0).to_string()),
        ("local", p.local_uri.clone().unwrap_or_default()),
        ("remote", p.uri.clone().unwrap_or_default()),
        (
            "persistency",
            persistency_str(p.face_persistency.unwrap_or(FacePersistency::Other(0))),
        ),
    ];
    face_params_fields(p, &mut a);
    result(what, &a, json)
}

/// `face-destroyed`: the face as it was listed, then the answer's parameters.
pub(super) fn face_destroyed(f: &FaceStatus, p: &ControlParameters, json: bool) -> String {
    let mut a = vec![
        ("id", f.face_id.to_string()),
        ("local", f.local_uri.clone()),
        ("remote", f.uri.clone()),
        ("persistency", persistency_str(f.face_persistency)),
    ];
    face_params_fields(p, &mut a);
    result("face-destroyed", &a, json)
}

fn route_item(prefix: Option<&Name>, r: &Route) -> String {
    let mut a = Attrs::line();
    if let Some(p) = prefix {
        a.add("prefix", p);
    }
    a.add("nexthop", r.face_id)
        .add("origin", origin_str(r.origin))
        .add("cost", r.cost)
        .add("flags", route_flags_str(r.flags))
        .add(
            "expires",
            r.expiration_period
                .map_or_else(|| "never".into(), |ms| format!("{}s", ms / 1000)),
        );
    a.done()
}

fn route_json(r: &Route) -> Value {
    json!({
        "face_id": r.face_id,
        "origin": r.origin,
        "cost": r.cost,
        "flags": r.flags,
        "expiration_period_ms": r.expiration_period,
    })
}

/// `route list`, `route show`: the routes `keep` accepts, one a line (JSON: an object per
/// prefix with its routes); status 6 when there is none.
pub(super) fn routes(
    rib: &[RibEntry],
    keep: impl Fn(&Name, &Route) -> bool,
    json: bool,
) -> Result<String, Failure> {
    let mut out = String::new();
    let mut any = false;
    for e in rib {
        let kept: Vec<&Route> = e.routes.iter().filter(|r| keep(&e.name, r)).collect();
        any |= !kept.is_empty();
        if json && !kept.is_empty() {
            let routes: Vec<Value> = kept.iter().map(|r| route_json(r)).collect();
            let _ = writeln!(
                out,
                "{}",
                json!({"prefix": e.name.to_string(), "routes": routes})
            );
        } else if !json {
            for r in kept {
                out += &route_item(Some(&e.name), r);
                out.push('\n');
            }
        }
    }
    if !any {
        return Err(Failure::new(status::ROUTE_NOT_FOUND, "Route not found"));
    }
    Ok(out)
}

/// `route-add-accepted`.
pub(super) fn route_added(p: &ControlParameters, json: bool) -> String {
    let a = [
        ("prefix", p.name.clone().unwrap_or_default().to_string()),
        ("nexthop", p.face_id.unwrap_or(0).to_string()),
        ("origin", origin_str(p.origin.unwrap_or(0))),
        ("cost", p.cost.unwrap_or(0).to_string()),
        ("flags", route_flags_str(p.flags.unwrap_or(0))),
        (
            "expires",
            p.expiration_period
                .map_or_else(|| "never".into(), |ms| format!("{ms}ms")),
        ),
    ];
    result("route-add-accepted", &a, json)
}

/// `route-removed`.
pub(super) fn route_removed(p: &ControlParameters, json: bool) -> String {
    let a = [
        ("prefix", p.name.clone().unwrap_or_default().to_string()),
        ("nexthop", p.face_id.unwrap_or(0).to_string()),
        ("origin", origin_str(p.origin.unwrap_or(0))),
    ];
    result("route-removed", &a, json)
}

fn fib_section(fib: &[FibEntry]) -> String {
    let mut s = String::from("FIB:\n");
    for e in fib {
        let hops: Vec<String> = e
            .next_hops
            .iter()
            .map(|h| format!("faceid={} (cost={})", h.face_id, h.cost))
            .collect();
        let _ = writeln!(s, "  {} nexthops={{{}}}", e.name, hops.join(", "));
    }
    s
}

/// `fib list`.
pub(super) fn fib(fib: &[FibEntry], json: bool) -> String {
    if json {
        let v: Vec<Value> = fib
            .iter()
            .map(|e| {
                let hops: Vec<Value> = e
                    .next_hops
                    .iter()
                    .map(|h| json!({"face_id": h.face_id, "cost": h.cost}))
                    .collect();
                json!({"prefix": e.name.to_string(), "next_hops": hops})
            })
            .collect();
        return lines(&v);
    }
    fib_section(fib)
}

/// `CS information:` and the RAM tier's attributes, as `cs info` and `status report` print them.
fn cs_section(cs: &CsInfo) -> String {
    let body = Attrs::multi(8)
        .add("capacity", cs.capacity)
        .add("admit", onoff(cs.flags & CS_FLAG_ENABLE_ADMIT != 0))
        .add("serve", onoff(cs.flags & CS_FLAG_ENABLE_SERVE != 0))
        .add("nEntries", cs.n_cs_entries)
        .add("nHits", cs.n_hits)
        .add("nMisses", cs.n_misses)
        .done();
    format!("CS information:\n{}", indent(&body))
}

/// `cs-config-updated`.
pub(super) fn cs_config(p: &ControlParameters, json: bool) -> String {
    let flags = p.flags.unwrap_or(0);
    let a = [
        ("capacity", p.capacity.unwrap_or(0).to_string()),
        ("admit", onoff(flags & CS_FLAG_ENABLE_ADMIT != 0).into()),
        ("serve", onoff(flags & CS_FLAG_ENABLE_SERVE != 0).into()),
    ];
    result("cs-config-updated", &a, json)
}

/// `cs-erased`: how many entries went under `prefix`.
pub(super) fn cs_erased(prefix: &Name, total: u64, json: bool) -> String {
    let a = [("prefix", prefix.to_string()), ("count", total.to_string())];
    result("cs-erased", &a, json)
}

fn strategy_json(s: &StrategyChoice) -> Value {
    json!({"prefix": s.name.to_string(), "strategy": s.strategy.to_string()})
}

/// `strategy list`: one line a choice.
pub(super) fn strategies(v: &[StrategyChoice], json: bool) -> String {
    if json {
        return lines(&v.iter().map(strategy_json).collect::<Vec<_>>());
    }
    v.iter()
        .map(|s| {
            Attrs::line()
                .add("prefix", &s.name)
                .add("strategy", &s.strategy)
                .done()
                + "\n"
        })
        .collect()
}

/// `strategy show`: one attribute a line.
pub(super) fn strategy_show(s: &StrategyChoice, json: bool) -> String {
    if json {
        return format!("{}\n", strategy_json(s));
    }
    Attrs::multi(8)
        .add("prefix", &s.name)
        .add("strategy", &s.strategy)
        .done()
}

/// `strategy-set`.
pub(super) fn strategy_set(p: &ControlParameters, json: bool) -> String {
    let a = [
        ("prefix", p.name.clone().unwrap_or_default().to_string()),
        (
            "strategy",
            p.strategy.clone().unwrap_or_default().to_string(),
        ),
    ];
    result("strategy-set", &a, json)
}

/// `strategy-unset`.
pub(super) fn strategy_unset(p: &ControlParameters, json: bool) -> String {
    let a = [("prefix", p.name.clone().unwrap_or_default().to_string())];
    result("strategy-unset", &a, json)
}

/// What `status report` collects.
pub(super) struct Report {
    pub(super) general: ForwarderStatus,
    pub(super) channels: Vec<ChannelStatus>,
    pub(super) faces: Vec<FaceStatus>,
    pub(super) fib: Vec<FibEntry>,
    pub(super) rib: Vec<RibEntry>,
    pub(super) cs: CsInfo,
    pub(super) strategies: Vec<StrategyChoice>,
}

/// `status report`: nfdc's sections in its order (JSON: one object of them).
pub(super) fn report(r: &Report, json: bool) -> String {
    if json {
        let parse = |s: String| -> Vec<Value> {
            s.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        };
        let v = json!({
            "general": status_json(&r.general),
            "channels": parse(channels(&r.channels, true)),
            "faces": r.faces.iter().map(face_json).collect::<Vec<_>>(),
            "fib": parse(fib(&r.fib, true)),
            "rib": parse(routes(&r.rib, |_, _| true, true).unwrap_or_default()),
            "cs": serde_json::from_str::<Value>(&cs(&r.cs, &[], None, true)).unwrap_or_default(),
            "strategies": r.strategies.iter().map(strategy_json).collect::<Vec<_>>(),
        });
        return format!("{v}\n");
    }
    let mut s = status_section(&r.general);
    s += &channels_section(&r.channels);
    s += "Faces:\n";
    for f in &r.faces {
        let _ = writeln!(s, "  {}", face_item(f, Attrs::line()));
    }
    s += &fib_section(&r.fib);
    s += "RIB:\n";
    for e in &r.rib {
        let routes: Vec<String> = e.routes.iter().map(|r| route_item(None, r)).collect();
        let _ = writeln!(s, "  {} routes={{{}}}", e.name, routes.join(", "));
    }
    s += &cs_section(&r.cs);
    s += "Strategy choices:\n";
    s += &indent(&strategies(&r.strategies, false));
    s
}

/// The RAM tier from NFD's CsInfo, then each storage tier behind it (Cascade's `cs/tiers`),
/// then NB-Cache's counters (Cascade's `cs/nbcache`), if the forwarder answered them.
pub(super) fn cs(
    cs: &CsInfo,
    tiers: &[CsTierInfo],
    nb: Option<&NbCacheInfo>,
    json: bool,
) -> String {
    let admit = cs.flags & CS_FLAG_ENABLE_ADMIT != 0;
    let serve = cs.flags & CS_FLAG_ENABLE_SERVE != 0;
    if json {
        let mut v = json!({
            "capacity": cs.capacity,
            "admit": admit,
            "serve": serve,
            "n_entries": cs.n_cs_entries,
            "n_hits": cs.n_hits,
            "n_misses": cs.n_misses,
        });
        for t in tiers {
            v[format!("l{}", t.level)] = json!({
                "workers": t.workers,
                "capacity": t.capacity,
                "n_entries": t.n_entries,
                "n_lookups": t.n_lookups,
                "n_hits": t.n_hits,
                "n_misses": t.n_misses,
                "n_reads": t.n_reads,
                "n_read_bytes": t.n_read_bytes,
                "n_writes": t.n_writes,
                "n_write_bytes": t.n_write_bytes,
                "n_checksum_failures": t.n_checksum_failures,
                "n_prefetched": t.n_prefetched,
                "n_prefetch_used": t.n_prefetch_used,
                "prefetch_usefulness": t.prefetch_usefulness(),
                "n_admit_dropped": t.n_admit_dropped,
                "queue_depth": t.queue_depth,
                "n_in_flight": t.n_in_flight,
                "batch": t.batch,
                "storage_stall_max_us": t.stall_max_us,
                "storage_stall_p999_us": t.stall_p999_us,
                "storage_stalls_over_1ms": t.n_stalls_over_1ms,
                "loop_max_us": t.loop_max_us,
                "loop_p999_us": t.loop_p999_us,
                "n_ahead_offered": t.n_ahead_offered,
                "n_ahead_reads": t.n_ahead_reads,
                "n_name_mismatches": t.n_name_mismatches,
                "n_workers_off": t.n_workers_off,
                "n_io_errors": t.n_io_errors,
                "n_input_held": t.n_input_held,
                "n_deferred": t.n_deferred,
                "n_prefix_lookups": t.n_prefix_lookups,
                "n_prefix_pending": t.n_prefix_pending,
                "n_prefix_stale": t.n_prefix_stale,
                "n_prefix_handovers": t.n_prefix_handovers,
                "n_prefix_handovers_full": t.n_prefix_handovers_full,
                "n_prefix_missed": t.n_prefix_missed,
            });
        }
        if let Some(n) = nb {
            v["nbcache"] = super::nbcache::json(n);
        }
        return format!("{v}\n");
    }
    let mut out = cs_section(cs);
    for t in tiers {
        let usefulness = t
            .prefetch_usefulness()
            .map_or("-".to_string(), |u| format!("{:.1}%", 100.0 * u));
        out.push_str(&format!(
            "L{} tier (disk, {} workers):\n  capacity={} chunks\n  nEntries={}\n     nHits={}\n   nMisses={}\n    nReads={} ({} bytes)\n   nWrites={} ({} bytes)\n  checksumFailures={}\n  prefetch={} used={} ({})\n  readAhead offered={} reads={}\n  admitDropped={}\n  queueDepth={} inFlight={} batch={}\n  storageStall max={}us p99.9={}us over1ms={}\n  loopIteration max={}us p99.9={}us\n  nameMismatches={}\n  workersOff={} ioErrors={}\n  inputHeld={} deferred={}\n  prefixLookups={} pending={} stale={} missed={}\n  prefixHandovers={} full={}\n",
            t.level,
            t.workers,
            t.capacity,
            t.n_entries,
            t.n_hits,
            t.n_misses,
            t.n_reads,
            t.n_read_bytes,
            t.n_writes,
            t.n_write_bytes,
            t.n_checksum_failures,
            t.n_prefetched,
            t.n_prefetch_used,
            usefulness,
            t.n_ahead_offered,
            t.n_ahead_reads,
            t.n_admit_dropped,
            t.queue_depth,
            t.n_in_flight,
            t.batch,
            t.stall_max_us,
            t.stall_p999_us,
            t.n_stalls_over_1ms,
            t.loop_max_us,
            t.loop_p999_us,
            t.n_name_mismatches,
            t.n_workers_off,
            t.n_io_errors,
            t.n_input_held,
            t.n_deferred,
            t.n_prefix_lookups,
            t.n_prefix_pending,
            t.n_prefix_stale,
            t.n_prefix_missed,
            t.n_prefix_handovers,
            t.n_prefix_handovers_full
        ));
    }
    if let Some(n) = nb {
        out.push_str(&super::nbcache::text(n));
    }
    out
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
