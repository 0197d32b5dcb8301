//! `cascade ctl`: manage a running forwarder the way `nfdc` does, through NFD's management
//! protocol only (so it works against NFD as well as Cascade).
//!
//! Datasets (`status`, `face list`, `route list`, `fib list`, `cs info`, `strategy list`) print
//! as aligned tables, or as JSON with `--json`. Commands print one `key=value` line as nfdc does
//! (or a JSON object). A command the forwarder refuses exits with status 1 and one line with its
//! StatusCode and StatusText; bad arguments exit with status 2.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use client::control::{Controller, CsTierInfo, ORIGIN_STATIC};
use client::transport::TransportUri;
use client::{Error, Face};
use serde_json::{json, Value};
use wire::nfd::{
    ControlParameters, CsInfo, FacePersistency, FaceScope, FaceStatus, FibEntry, ForwarderStatus,
    LinkType, RibEntry, StrategyChoice, CS_FLAG_ENABLE_ADMIT, CS_FLAG_ENABLE_SERVE,
    ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT,
};
use wire::Name;

/// `cascade ctl` arguments.
#[derive(Args, Debug)]
pub struct CtlArgs {
    /// Forwarder to talk to (unix:///path, tcp://host:port, udp://host:port); default:
    /// NDN_CLIENT_TRANSPORT, then client.conf, then unix:///run/nfd/nfd.sock.
    #[arg(long, global = true, value_name = "URI")]
    transport: Option<String>,
    /// Print JSON instead of tables and key=value lines.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: CtlCommand,
}

#[derive(Subcommand, Debug)]
enum CtlCommand {
    /// The forwarder's general status (status/general).
    Status,
    /// Faces: list, create, destroy.
    #[command(subcommand)]
    Face(FaceCommand),
    /// Routes (the RIB): list, add, remove.
    #[command(subcommand)]
    Route(RouteCommand),
    /// The FIB.
    #[command(subcommand)]
    Fib(FibCommand),
    /// The content store: info, erase.
    #[command(subcommand)]
    Cs(CsCommand),
    /// Strategy choices: list, set.
    #[command(subcommand)]
    Strategy(StrategyCommand),
}

#[derive(Subcommand, Debug)]
enum FaceCommand {
    /// List faces (faces/list).
    List,
    /// Create a face to a remote URI (faces/create), e.g. udp4://192.0.2.1:6363.
    Create {
        /// Remote face URI; tcp:// and udp:// with a host name are resolved to tcp4/udp4/...
        uri: String,
        /// Face persistency.
        #[arg(long, value_enum, default_value_t = PersistencyArg::Persistent)]
        persistency: PersistencyArg,
    },
    /// Destroy a face (faces/destroy).
    Destroy {
        /// FaceId.
        id: u64,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum PersistencyArg {
    /// Closed when the underlying socket fails.
    Persistent,
    /// Kept across socket failures.
    Permanent,
}

#[derive(Subcommand, Debug)]
enum RouteCommand {
    /// List routes (rib/list).
    List,
    /// Add a route (rib/register).
    Add {
        /// Name prefix.
        prefix: String,
        /// Nexthop FaceId.
        face_id: u64,
        /// Route cost.
        #[arg(long, default_value_t = 0)]
        cost: u64,
        /// Route origin (255: static, as nfdc).
        #[arg(long, default_value_t = ORIGIN_STATIC)]
        origin: u64,
        /// Clear the CHILD_INHERIT flag.
        #[arg(long)]
        no_inherit: bool,
        /// Set the CAPTURE flag.
        #[arg(long)]
        capture: bool,
        /// Expire the route after this many milliseconds (default: never).
        #[arg(long, value_name = "MS")]
        expires: Option<u64>,
    },
    /// Remove a route (rib/unregister).
    Remove {
        /// Name prefix.
        prefix: String,
        /// Nexthop FaceId.
        face_id: u64,
        /// Route origin.
        #[arg(long, default_value_t = ORIGIN_STATIC)]
        origin: u64,
    },
}

#[derive(Subcommand, Debug)]
enum FibCommand {
    /// List FIB entries (fib/list).
    List,
}

#[derive(Subcommand, Debug)]
enum CsCommand {
    /// Content store capacity, flags and counters (cs/info).
    Info,
    /// Erase cached Data under a prefix (cs/erase).
    Erase {
        /// Name prefix.
        prefix: String,
        /// Erase at most this many entries.
        #[arg(long)]
        count: Option<u64>,
    },
}

#[derive(Subcommand, Debug)]
enum StrategyCommand {
    /// List strategy choices (strategy-choice/list).
    List,
    /// Choose a strategy for a prefix (strategy-choice/set).
    Set {
        /// Name prefix.
        prefix: String,
        /// Strategy name: a full name (/localhost/nfd/strategy/best-route) or just its last
        /// component (best-route).
        strategy: String,
    },
}

/// Most `cs/erase` commands one `cs erase` sends (each erases up to the forwarder's limit).
const MAX_ERASE_ROUNDS: usize = 1024;

/// A failure: the exit status and the one-line message.
struct Failure(u8, String);

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e {
            Error::Config(_) => 2,
            _ => 1,
        };
        Failure(code, e.to_string())
    }
}

fn parse_name(s: &str) -> Result<Name, Failure> {
    Name::from_uri(s).map_err(|e| Failure(2, format!("bad name '{s}': {e}")))
}

/// Runs `cascade ctl`.
pub fn run(args: &CtlArgs) -> ExitCode {
    match run_inner(args) {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(Failure(code, msg)) => {
            eprintln!("cascade ctl: {msg}");
            ExitCode::from(code)
        }
    }
}

fn connect(transport: Option<&str>) -> Result<Face, Failure> {
    let uri: TransportUri = client::transport::resolve(transport)?;
    Ok(Face::connect(&uri)?)
}

fn run_inner(args: &CtlArgs) -> Result<String, Failure> {
    // Check the arguments before connecting.
    let json = args.json;
    let command = Prepared::from(&args.command)?;
    let mut face = connect(args.transport.as_deref())?;
    let mut c = Controller::new(&mut face);
    command.execute(&mut c, json)
}

/// A ctl command with its arguments checked.
enum Prepared {
    Status,
    FaceList,
    FaceCreate(ControlParameters),
    FaceDestroy(ControlParameters),
    RouteList,
    RouteAdd(ControlParameters),
    RouteRemove(ControlParameters),
    FibList,
    CsInfo,
    CsErase(Name, Option<u64>),
    StrategyList,
    StrategySet(ControlParameters),
}

impl Prepared {
    fn from(cmd: &CtlCommand) -> Result<Self, Failure> {
        Ok(match cmd {
            CtlCommand::Status => Prepared::Status,
            CtlCommand::Face(FaceCommand::List) => Prepared::FaceList,
            CtlCommand::Face(FaceCommand::Create { uri, persistency }) => {
                Prepared::FaceCreate(ControlParameters {
                    uri: Some(canonical_face_uri(uri)?),
                    face_persistency: Some(match persistency {
                        PersistencyArg::Persistent => FacePersistency::Persistent,
                        PersistencyArg::Permanent => FacePersistency::Permanent,
                    }),
                    ..ControlParameters::default()
                })
            }
            CtlCommand::Face(FaceCommand::Destroy { id }) => {
                Prepared::FaceDestroy(ControlParameters {
                    face_id: Some(*id),
                    ..ControlParameters::default()
                })
            }
            CtlCommand::Route(RouteCommand::List) => Prepared::RouteList,
            CtlCommand::Route(RouteCommand::Add {
                prefix,
                face_id,
                cost,
                origin,
                no_inherit,
                capture,
                expires,
            }) => {
                let mut flags = 0;
                if !no_inherit {
                    flags |= ROUTE_FLAG_CHILD_INHERIT;
                }
                if *capture {
                    flags |= ROUTE_FLAG_CAPTURE;
                }
                Prepared::RouteAdd(ControlParameters {
                    name: Some(parse_name(prefix)?),
                    face_id: Some(*face_id),
                    origin: Some(*origin),
                    cost: Some(*cost),
                    flags: Some(flags),
                    expiration_period: *expires,
                    ..ControlParameters::default()
                })
            }
            CtlCommand::Route(RouteCommand::Remove {
                prefix,
                face_id,
                origin,
            }) => Prepared::RouteRemove(ControlParameters {
                name: Some(parse_name(prefix)?),
                face_id: Some(*face_id),
                origin: Some(*origin),
                ..ControlParameters::default()
            }),
            CtlCommand::Fib(FibCommand::List) => Prepared::FibList,
            CtlCommand::Cs(CsCommand::Info) => Prepared::CsInfo,
            CtlCommand::Cs(CsCommand::Erase { prefix, count }) => {
                if *count == Some(0) {
                    return Err(Failure(2, "--count must be at least 1".into()));
                }
                Prepared::CsErase(parse_name(prefix)?, *count)
            }
            CtlCommand::Strategy(StrategyCommand::List) => Prepared::StrategyList,
            CtlCommand::Strategy(StrategyCommand::Set { prefix, strategy }) => {
                Prepared::StrategySet(ControlParameters {
                    name: Some(parse_name(prefix)?),
                    strategy: Some(strategy_name(strategy)?),
                    ..ControlParameters::default()
                })
            }
        })
    }

    fn execute(self, c: &mut Controller<'_>, json: bool) -> Result<String, Failure> {
        let cmd = |c: &mut Controller<'_>, module: &str, verb: &str, p: &ControlParameters| {
            c.command(module, verb, p)
                .map_err(|e| Failure(1, format!("{module}/{verb} failed: {e}")))
        };
        Ok(match self {
            Prepared::Status => render_status(&c.forwarder_status()?, json),
            Prepared::FaceList => render_faces(&c.faces()?, json),
            Prepared::FaceCreate(p) => {
                let r = c.command_response("faces", "create", &p)?;
                match (r.status_code, r.parameters()) {
                    (200, Some(rp)) => render_params("face-created", rp, json),
                    (409, Some(rp)) => render_params("face-exists", rp, json),
                    _ => {
                        return Err(Failure(
                            1,
                            format!(
                                "faces/create failed: StatusCode {}: {}",
                                r.status_code, r.status_text
                            ),
                        ))
                    }
                }
            }
            Prepared::FaceDestroy(p) => {
                let rp = cmd(c, "faces", "destroy", &p)?;
                render_params("face-destroyed", &merge(&p, rp), json)
            }
            Prepared::RouteList => render_routes(&c.rib()?, json),
            Prepared::RouteAdd(p) => {
                let rp = cmd(c, "rib", "register", &p)?;
                render_params("route-add-accepted", &merge(&p, rp), json)
            }
            Prepared::RouteRemove(p) => {
                let rp = cmd(c, "rib", "unregister", &p)?;
                render_params("route-removed", &merge(&p, rp), json)
            }
            Prepared::FibList => render_fib(&c.fib()?, json),
            Prepared::CsInfo => {
                let ram = c.cs_info()?;
                // Cascade's own dataset; NFD does not have it (nor does a router without L2).
                let tiers = c.cs_tiers(TIERS_TIMEOUT).unwrap_or_default();
                render_cs(&ram, &tiers, json)
            }
            Prepared::CsErase(prefix, limit) => {
                let mut total = 0u64;
                for _ in 0..MAX_ERASE_ROUNDS {
                    let p = ControlParameters {
                        name: Some(prefix.clone()),
                        count: limit.map(|l| l - total),
                        ..ControlParameters::default()
                    };
                    let rp = cmd(c, "cs", "erase", &p)?;
                    let n = rp.count.unwrap_or(0);
                    total += n;
                    // NFD caps one command; Capacity in the answer says the cap was reached.
                    let capped = rp.capacity.is_some_and(|cap| n >= cap && n > 0);
                    if !capped || limit.is_some_and(|l| total >= l) {
                        break;
                    }
                }
                if json {
                    format!(
                        "{}\n",
                        json!({"prefix": prefix.to_string(), "erased": total})
                    )
                } else {
                    format!("erased {total} entries under {prefix}\n")
                }
            }
            Prepared::StrategyList => render_strategies(&c.strategy_choices()?, json),
            Prepared::StrategySet(p) => {
                let rp = cmd(c, "strategy-choice", "set", &p)?;
                render_params("strategy-set", &merge(&p, rp), json)
            }
        })
    }
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

/// NFD wants canonical face URIs: `tcp://` and `udp://` with a host name become
/// `tcp4://ADDR:PORT` (or 6) with the first resolved address; other URIs are passed on as given.
fn canonical_face_uri(s: &str) -> Result<String, Failure> {
    let (is_tcp, uri) = match s.parse::<TransportUri>() {
        Ok(u @ TransportUri::Tcp { .. }) => (true, u),
        Ok(u @ TransportUri::Udp { .. }) => (false, u),
        Ok(TransportUri::Unix(_)) | Err(_) => return Ok(s.to_owned()),
    };
    let addrs = uri
        .socket_addrs()
        .map_err(|e| Failure(2, format!("cannot canonize face URI '{s}': {e}")))?;
    let a = addrs[0];
    let scheme = if is_tcp { "tcp" } else { "udp" };
    let v = if a.is_ipv4() { 4 } else { 6 };
    Ok(format!("{scheme}{v}://{a}"))
}

/// A strategy argument as a name: a bare word is `/localhost/nfd/strategy/<word>`.
fn strategy_name(s: &str) -> Result<Name, Failure> {
    if s.starts_with('/') || s.starts_with("ndn:") {
        parse_name(s)
    } else {
        parse_name(&format!("/localhost/nfd/strategy/{s}"))
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

/// Columns left-aligned, two spaces apart; the last column is not padded.
fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, c) in cells.enumerate() {
            if i + 1 < widths.len() {
                let _ = write!(l, "{c:<w$}  ", w = widths[i]);
            } else {
                l.push_str(c);
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut headers.iter().copied());
    for r in rows {
        line(&mut r.iter().map(String::as_str));
    }
    out
}

fn lines(items: &[Value]) -> String {
    let mut s = String::new();
    for v in items {
        let _ = writeln!(s, "{v}");
    }
    s
}

fn scope_str(s: FaceScope) -> String {
    match s {
        FaceScope::NonLocal => "non-local".into(),
        FaceScope::Local => "local".into(),
        FaceScope::Other(n) => n.to_string(),
    }
}

fn persistency_str(p: FacePersistency) -> String {
    match p {
        FacePersistency::Persistent => "persistent".into(),
        FacePersistency::OnDemand => "on-demand".into(),
        FacePersistency::Permanent => "permanent".into(),
        FacePersistency::Other(n) => n.to_string(),
    }
}

fn link_str(l: LinkType) -> String {
    match l {
        LinkType::PointToPoint => "point-to-point".into(),
        LinkType::MultiAccess => "multi-access".into(),
        LinkType::AdHoc => "adhoc".into(),
        LinkType::Other(n) => n.to_string(),
    }
}

fn route_flags_str(flags: u64) -> String {
    let mut v = Vec::new();
    if flags & ROUTE_FLAG_CHILD_INHERIT != 0 {
        v.push("child-inherit");
    }
    if flags & ROUTE_FLAG_CAPTURE != 0 {
        v.push("capture");
    }
    if v.is_empty() {
        "none".into()
    } else {
        v.join("|")
    }
}

fn expires_str(ms: Option<u64>) -> String {
    ms.map_or_else(|| "never".into(), |ms| format!("{ms}ms"))
}

fn render_status(s: &ForwarderStatus, json: bool) -> String {
    let uptime_s = s.current_timestamp.saturating_sub(s.start_timestamp) / 1000;
    let fields: Vec<(&str, Value)> = vec![
        ("version", json!(s.nfd_version)),
        ("start_timestamp", json!(s.start_timestamp)),
        ("current_timestamp", json!(s.current_timestamp)),
        ("uptime_s", json!(uptime_s)),
        ("n_name_tree_entries", json!(s.n_name_tree_entries)),
        ("n_fib_entries", json!(s.n_fib_entries)),
        ("n_pit_entries", json!(s.n_pit_entries)),
        ("n_measurements_entries", json!(s.n_measurements_entries)),
        ("n_cs_entries", json!(s.n_cs_entries)),
        ("n_in_interests", json!(s.n_in_interests)),
        ("n_in_data", json!(s.n_in_data)),
        ("n_in_nacks", json!(s.n_in_nacks)),
        ("n_out_interests", json!(s.n_out_interests)),
        ("n_out_data", json!(s.n_out_data)),
        ("n_out_nacks", json!(s.n_out_nacks)),
        ("n_satisfied_interests", json!(s.n_satisfied_interests)),
        ("n_unsatisfied_interests", json!(s.n_unsatisfied_interests)),
    ];
    if json {
        let obj: serde_json::Map<String, Value> =
            fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        return format!("{}\n", Value::Object(obj));
    }
    let w = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::from("General status:\n");
    for (k, v) in fields {
        let v = match v {
            Value::String(s) => s,
            v => v.to_string(),
        };
        let _ = writeln!(out, "  {k:>w$}={v}");
    }
    out
}

fn render_faces(faces: &[FaceStatus], json: bool) -> String {
    if json {
        let v: Vec<Value> = faces
            .iter()
            .map(|f| {
                json!({
                    "face_id": f.face_id,
                    "remote": f.uri,
                    "local": f.local_uri,
                    "scope": scope_str(f.face_scope),
                    "persistency": persistency_str(f.face_persistency),
                    "link_type": link_str(f.link_type),
                    "expiration_period_ms": f.expiration_period,
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
            })
            .collect();
        return lines(&v);
    }
    let rows: Vec<Vec<String>> = faces
        .iter()
        .map(|f| {
            vec![
                f.face_id.to_string(),
                f.uri.clone(),
                f.local_uri.clone(),
                scope_str(f.face_scope),
                persistency_str(f.face_persistency),
                link_str(f.link_type),
                format!("{}i {}d {}n", f.n_in_interests, f.n_in_data, f.n_in_nacks),
                format!(
                    "{}i {}d {}n",
                    f.n_out_interests, f.n_out_data, f.n_out_nacks
                ),
                format!("{}B/{}B", f.n_in_bytes, f.n_out_bytes),
            ]
        })
        .collect();
    table(
        &[
            "FACEID",
            "REMOTE",
            "LOCAL",
            "SCOPE",
            "PERSISTENCY",
            "LINK",
            "IN",
            "OUT",
            "BYTES IN/OUT",
        ],
        &rows,
    )
}

fn render_routes(rib: &[RibEntry], json: bool) -> String {
    if json {
        let v: Vec<Value> = rib
            .iter()
            .map(|e| {
                let routes: Vec<Value> = e
                    .routes
                    .iter()
                    .map(|r| {
                        json!({
                            "face_id": r.face_id,
                            "origin": r.origin,
                            "cost": r.cost,
                            "flags": r.flags,
                            "expiration_period_ms": r.expiration_period,
                        })
                    })
                    .collect();
                json!({"prefix": e.name.to_string(), "routes": routes})
            })
            .collect();
        return lines(&v);
    }
    let rows: Vec<Vec<String>> = rib
        .iter()
        .flat_map(|e| {
            e.routes.iter().map(|r| {
                vec![
                    e.name.to_string(),
                    r.face_id.to_string(),
                    r.origin.to_string(),
                    r.cost.to_string(),
                    route_flags_str(r.flags),
                    expires_str(r.expiration_period),
                ]
            })
        })
        .collect();
    table(
        &["PREFIX", "NEXTHOP", "ORIGIN", "COST", "FLAGS", "EXPIRES"],
        &rows,
    )
}

fn render_fib(fib: &[FibEntry], json: bool) -> String {
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
    let rows: Vec<Vec<String>> = fib
        .iter()
        .map(|e| {
            let hops: Vec<String> = e
                .next_hops
                .iter()
                .map(|h| format!("{} (cost={})", h.face_id, h.cost))
                .collect();
            vec![e.name.to_string(), hops.join(", ")]
        })
        .collect();
    table(&["PREFIX", "NEXTHOPS"], &rows)
}

/// How long `cs info` waits for Cascade's `cs/tiers` dataset (NFD never answers it).
const TIERS_TIMEOUT: Duration = Duration::from_millis(1000);

/// The RAM tier from NFD's CsInfo, then each storage tier behind it (Cascade's `cs/tiers`).
fn render_cs(cs: &CsInfo, tiers: &[CsTierInfo], json: bool) -> String {
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
            });
        }
        return format!("{v}\n");
    }
    let onoff = |b: bool| if b { "on" } else { "off" };
    let mut out = format!(
        "CS information:\n  capacity={}\n     admit={}\n     serve={}\n  nEntries={}\n     nHits={}\n   nMisses={}\n",
        cs.capacity,
        onoff(admit),
        onoff(serve),
        cs.n_cs_entries,
        cs.n_hits,
        cs.n_misses
    );
    for t in tiers {
        let usefulness = t
            .prefetch_usefulness()
            .map_or("-".to_string(), |u| format!("{:.1}%", 100.0 * u));
        out.push_str(&format!(
            "L{} tier (disk, {} workers):\n  capacity={} chunks\n  nEntries={}\n     nHits={}\n   nMisses={}\n    nReads={} ({} bytes)\n   nWrites={} ({} bytes)\n  checksumFailures={}\n  prefetch={} used={} ({})\n  readAhead offered={} reads={}\n  admitDropped={}\n  queueDepth={} inFlight={} batch={}\n  storageStall max={}us p99.9={}us over1ms={}\n  loopIteration max={}us p99.9={}us\n",
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
            t.loop_p999_us
        ));
    }
    out
}

fn render_strategies(v: &[StrategyChoice], json: bool) -> String {
    if json {
        let v: Vec<Value> = v
            .iter()
            .map(|s| json!({"prefix": s.name.to_string(), "strategy": s.strategy.to_string()}))
            .collect();
        return lines(&v);
    }
    let rows: Vec<Vec<String>> = v
        .iter()
        .map(|s| vec![s.name.to_string(), s.strategy.to_string()])
        .collect();
    table(&["PREFIX", "STRATEGY"], &rows)
}

/// One nfdc-style line (`face-created id=... remote=...`) or a JSON object of the fields set.
fn render_params(what: &str, p: &ControlParameters, json: bool) -> String {
    let mut fields: Vec<(&str, Value)> = Vec::new();
    if let Some(n) = &p.name {
        fields.push(("prefix", json!(n.to_string())));
    }
    if let Some(id) = p.face_id {
        fields.push((if p.name.is_some() { "nexthop" } else { "id" }, json!(id)));
    }
    if let Some(u) = &p.local_uri {
        fields.push(("local", json!(u)));
    }
    if let Some(u) = &p.uri {
        fields.push(("remote", json!(u)));
    }
    if let Some(per) = p.face_persistency {
        fields.push(("persistency", json!(persistency_str(per))));
    }
    if let Some(o) = p.origin {
        fields.push(("origin", json!(o)));
    }
    if let Some(c) = p.cost {
        fields.push(("cost", json!(c)));
    }
    if let (Some(_), Some(_), Some(f)) = (&p.name, p.face_id, p.flags) {
        fields.push(("flags", json!(route_flags_str(f))));
        fields.push(("expires", json!(expires_str(p.expiration_period))));
    }
    if let Some(s) = &p.strategy {
        fields.push(("strategy", json!(s.to_string())));
    }
    if json {
        let mut obj = serde_json::Map::new();
        obj.insert("result".into(), json!(what));
        for (k, v) in fields {
            obj.insert(k.into(), v);
        }
        return format!("{}\n", Value::Object(obj));
    }
    let mut s = what.to_owned();
    for (k, v) in fields {
        let v = match v {
            Value::String(s) => s,
            v => v.to_string(),
        };
        let _ = write!(s, " {k}={v}");
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::nfd::{NextHopRecord, Route};

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(
            &["A", "LONGER", "C"],
            &[
                vec!["xxxx".into(), "y".into(), "z".into()],
                vec!["1".into(), "2".into(), "3".into()],
            ],
        );
        assert_eq!(t, "A     LONGER  C\nxxxx  y       z\n1     2       3\n");
    }

    #[test]
    fn routes_and_fib_render() {
        let rib = vec![RibEntry {
            name: name("/a/b"),
            routes: vec![
                Route {
                    face_id: 260,
                    origin: 255,
                    cost: 10,
                    flags: ROUTE_FLAG_CHILD_INHERIT | ROUTE_FLAG_CAPTURE,
                    expiration_period: None,
                },
                Route {
                    face_id: 261,
                    origin: 0,
                    cost: 0,
                    flags: 0,
                    expiration_period: Some(5000),
                },
            ],
        }];
        assert_eq!(
            render_routes(&rib, false),
            "PREFIX  NEXTHOP  ORIGIN  COST  FLAGS                  EXPIRES\n\
             /a/b    260      255     10    child-inherit|capture  never\n\
             /a/b    261      0       0     none                   5000ms\n"
        );
        let j: Value = serde_json::from_str(render_routes(&rib, true).trim()).unwrap();
        assert_eq!(j["routes"][1]["expiration_period_ms"], 5000);
        let fib = vec![FibEntry {
            name: name("/"),
            next_hops: vec![
                NextHopRecord {
                    face_id: 1,
                    cost: 0,
                },
                NextHopRecord {
                    face_id: 2,
                    cost: 5,
                },
            ],
        }];
        assert_eq!(
            render_fib(&fib, false),
            "PREFIX  NEXTHOPS\n/       1 (cost=0), 2 (cost=5)\n"
        );
    }

    #[test]
    fn params_lines_follow_nfdc() {
        let p = ControlParameters {
            name: Some(name("/p")),
            face_id: Some(7),
            origin: Some(255),
            cost: Some(3),
            flags: Some(ROUTE_FLAG_CHILD_INHERIT),
            ..ControlParameters::default()
        };
        assert_eq!(
            render_params("route-add-accepted", &p, false),
            "route-add-accepted prefix=/p nexthop=7 origin=255 cost=3 flags=child-inherit \
             expires=never\n"
        );
        let f = ControlParameters {
            face_id: Some(300),
            uri: Some("udp4://192.0.2.1:6363".into()),
            face_persistency: Some(FacePersistency::Persistent),
            ..ControlParameters::default()
        };
        assert_eq!(
            render_params("face-created", &f, false),
            "face-created id=300 remote=udp4://192.0.2.1:6363 persistency=persistent\n"
        );
        let j: Value =
            serde_json::from_str(render_params("face-created", &f, true).trim()).unwrap();
        assert_eq!(j["result"], "face-created");
        assert_eq!(j["id"], 300);
    }

    #[test]
    fn status_and_cs_render() {
        let s = ForwarderStatus {
            nfd_version: "cascade-0.1.0".into(),
            start_timestamp: 1_000,
            current_timestamp: 61_000,
            n_pit_entries: 4,
            ..ForwarderStatus::default()
        };
        let t = render_status(&s, false);
        assert!(t.contains("               version=cascade-0.1.0\n"), "{t}");
        assert!(t.contains("uptime_s=60\n"));
        let j: Value = serde_json::from_str(render_status(&s, true).trim()).unwrap();
        assert_eq!(j["n_pit_entries"], 4);
        let cs = CsInfo {
            capacity: 100,
            flags: CS_FLAG_ENABLE_ADMIT,
            n_cs_entries: 3,
            n_hits: 2,
            n_misses: 1,
        };
        let t = render_cs(&cs, &[], false);
        assert!(t.contains("admit=on") && t.contains("serve=off"), "{t}");
        assert!(!t.contains("L2"), "{t}");
        let j: Value = serde_json::from_str(render_cs(&cs, &[], true).trim()).unwrap();
        assert_eq!(
            (j["serve"].clone(), j["n_hits"].clone()),
            (json!(false), json!(2))
        );
        assert!(j.get("l2").is_none());
        let l2 = CsTierInfo {
            level: 2,
            workers: 2,
            capacity: 1000,
            n_entries: 40,
            n_prefetched: 8,
            n_prefetch_used: 6,
            n_ahead_offered: 5,
            n_ahead_reads: 3,
            ..CsTierInfo::default()
        };
        let t = render_cs(&cs, &[l2], false);
        assert!(
            t.contains("L2 tier (disk, 2 workers)") && t.contains("nEntries=40"),
            "{t}"
        );
        assert!(t.contains("used=6 (75.0%)"), "{t}");
        assert!(t.contains("readAhead offered=5 reads=3"), "{t}");
        let j: Value = serde_json::from_str(render_cs(&cs, &[l2], true).trim()).unwrap();
        assert_eq!(j["l2"]["n_entries"], 40);
        assert_eq!(j["l2"]["prefetch_usefulness"], 0.75);
        assert_eq!(
            (
                j["l2"]["n_ahead_offered"].clone(),
                j["l2"]["n_ahead_reads"].clone()
            ),
            (json!(5), json!(3))
        );
        assert_eq!(
            j["n_entries"], 3,
            "the RAM tier's fields stay where they were"
        );
    }

    #[test]
    fn argument_helpers() {
        assert_eq!(
            strategy_name("best-route").ok().unwrap(),
            name("/localhost/nfd/strategy/best-route")
        );
        assert_eq!(
            strategy_name("/localhost/nfd/strategy/multicast/v=4")
                .ok()
                .unwrap(),
            name("/localhost/nfd/strategy/multicast/v=4")
        );
        assert_eq!(
            canonical_face_uri("udp://127.0.0.1").ok().unwrap(),
            "udp4://127.0.0.1:6363"
        );
        assert_eq!(
            canonical_face_uri("tcp6://[::1]:7000").ok().unwrap(),
            "tcp6://[::1]:7000"
        );
        assert_eq!(
            canonical_face_uri("ether://[01:00:5e:00:17:aa]")
                .ok()
                .unwrap(),
            "ether://[01:00:5e:00:17:aa]"
        );
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
}
