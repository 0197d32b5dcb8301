//! The router under test: started here or attached to, the generator's links to it, and the
//! producer's route.

use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use wire::{tt, Limits, LpPacketView, PacketView};

use super::link::{wait_fd, Link};
use super::{FaceKind, ForwardBenchArgs};

/// Creates a UDP face to the producer's socket and routes `/bench` to it, through the router's
/// Unix socket (what an operator does with `nfdc face create` and `nfdc route add`).
fn route_to_udp_producer(mgmt: &std::path::Path, prod: &Link) -> Result<(), String> {
    let Link::Udp { batch, .. } = prod else {
        return Err("not a UDP link".into());
    };
    let local = batch.socket().local_addr().map_err(|e| e.to_string())?;
    let uri = client::transport::TransportUri::Unix(mgmt.to_path_buf());
    let mut face = client::Face::connect(&uri).map_err(|e| e.to_string())?;
    let mut c = client::control::Controller::new(&mut face);
    let created = c
        .command(
            "faces",
            "create",
            &wire::nfd::ControlParameters {
                uri: Some(format!("udp4://{local}")),
                ..Default::default()
            },
        )
        .map_err(|e| format!("faces/create: {e}"))?;
    let id = created
        .face_id
        .ok_or("faces/create: no FaceId in the answer")?;
    c.command(
        "rib",
        "register",
        &wire::nfd::ControlParameters {
            name: wire::Name::from_uri("/bench").ok(),
            face_id: Some(id),
            origin: Some(client::control::ORIGIN_STATIC),
            ..Default::default()
        },
    )
    .map_err(|e| format!("rib/register: {e}"))?;
    Ok(())
}

/// Registers `/bench` from the producer's (local) link and waits for a 200.
fn register(prod: &mut Link) -> Result<(), String> {
    let params =
        client::control::register_params(&wire::Name::from_uri("/bench").unwrap_or_default());
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let i =
        client::control::command_interest("rib", "register", &params, now_ms, [7; 8], [1, 2, 3, 4]);
    prod.queue(&i.to_wire()).map_err(|e| e.to_string())?;
    prod.flush().map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let limits = Limits::default();
    while Instant::now() < deadline {
        wait_fd(prod.fd(), libc::POLLIN, 100);
        let mut status = None;
        prod.recv(|p| {
            let bytes = if p.first() == Some(&(tt::LP_PACKET as u8)) {
                match LpPacketView::decode(p, &limits) {
                    Ok(lp) => lp.fragment().unwrap_or(&[]),
                    Err(_) => return,
                }
            } else {
                p
            };
            if let Ok(PacketView::Data(d)) = PacketView::decode(bytes, &limits) {
                if let Ok(r) = wire::nfd::ControlResponse::decode(d.content().unwrap_or(&[])) {
                    status = Some((r.status_code, r.status_text));
                }
            }
        })
        .map_err(|e| e.to_string())?;
        match status {
            Some((200, _)) => return Ok(()),
            Some((c, t)) => return Err(format!("rib/register answered {c} {t}")),
            None => {}
        }
    }
    Err("rib/register: no answer within 5 s".into())
}

fn connect(kind: FaceKind, at: &Endpoints) -> Result<Link, String> {
    let (unix, udp) = (at.unix.as_ref(), at.udp);
    match kind {
        FaceKind::Udp => {
            let a = udp.ok_or("the router has no UDP listener")?;
            Link::udp(a).map_err(|e| format!("udp: {e}"))
        }
        FaceKind::Unix => {
            let p = unix.ok_or("the router has no Unix listener")?;
            let s = UnixStream::connect(p).map_err(|e| format!("connect {}: {e}", p.display()))?;
            Link::stream(s).map_err(|e| e.to_string())
        }
        FaceKind::Ws => {
            let a = at.ws.ok_or("the router has no WebSocket listener")?;
            let w = super::ws_link::WsLink::connect(a).map_err(|e| format!("ws://{a}: {e}"))?;
            Ok(Link::Ws(Box::new(w)))
        }
    }
}

/// The generator's consumer and producer links to the router at `at`, with the producer's
/// route to `/bench` in place: registered from its own face over a Unix socket or a loopback
/// WebSocket connection (local faces), or, over UDP (not a local face), created and routed
/// through the router's Unix socket.
pub(super) fn links_to(args: &ForwardBenchArgs, at: &Endpoints) -> Result<(Link, Link), String> {
    let cons = connect(args.face, at)?;
    let mut prod = connect(args.face, at)?;
    match args.face {
        FaceKind::Unix | FaceKind::Ws => register(&mut prod)?,
        FaceKind::Udp => {
            let mgmt = at.unix.clone().unwrap_or_else(|| args.mgmt.clone());
            route_to_udp_producer(&mgmt, &prod)?;
        }
    }
    Ok((cons, prod))
}

/// Where the router listens.
pub(super) struct Endpoints {
    pub(super) unix: Option<PathBuf>,
    pub(super) udp: Option<SocketAddr>,
    pub(super) ws: Option<SocketAddr>,
    /// The router started here and its directory (none with `--attach`).
    pub(super) started: Option<(router::Router, PathBuf)>,
}

/// The router's Unix and UDP listeners: those of `--attach`, or of a router started here (in
/// a temporary directory) with `workers` forwarding workers, `--spin-us` and `--threads`
/// (default: the router's defaults).
pub(super) fn router_endpoints(
    args: &ForwardBenchArgs,
    workers: Option<usize>,
) -> Result<Endpoints, String> {
    match &args.attach {
        Some(uri) => {
            if let Some(p) = uri.strip_prefix("unix://") {
                if args.face != FaceKind::Unix {
                    return Err("--attach unix://... needs --face unix".into());
                }
                Ok(Endpoints {
                    unix: Some(PathBuf::from(p)),
                    udp: None,
                    ws: None,
                    started: None,
                })
            } else if let Some(a) = uri.strip_prefix("udp://") {
                if args.face != FaceKind::Udp {
                    return Err("--attach udp://... needs --face udp".into());
                }
                let a: SocketAddr = a
                    .parse()
                    .map_err(|_| format!("--attach {uri}: bad address"))?;
                Ok(Endpoints {
                    unix: None,
                    udp: Some(a),
                    ws: None,
                    started: None,
                })
            } else if let Some(a) = uri.strip_prefix("ws://") {
                if args.face != FaceKind::Ws {
                    return Err("--attach ws://... needs --face ws".into());
                }
                let a: SocketAddr = (a.trim_end_matches('/').parse())
                    .map_err(|_| format!("--attach {uri}: bad address"))?;
                Ok(Endpoints {
                    unix: None,
                    udp: None,
                    ws: Some(a),
                    started: None,
                })
            } else {
                Err(format!(
                    "--attach {uri}: expected unix:///path, udp://host:port or ws://host:port"
                ))
            }
        }
        None => {
            let dir = std::env::temp_dir().join(format!("cascade-bench-{}", std::process::id()));
            let _ = std::fs::create_dir_all(&dir);
            let mut cfg = match &args.config {
                Some(p) => std::fs::read_to_string(p)
                    .map_err(|e| format!("--config {}: {e}", p.display()))
                    .and_then(|t| router::Config::from_toml(&t))?,
                None => router::Config::default(),
            };
            cfg.listen.unix = dir.join("nfd.sock").display().to_string();
            cfg.listen.tcp = String::new();
            cfg.listen.websocket = match args.face {
                FaceKind::Ws => "127.0.0.1:0".into(),
                _ => String::new(),
            };
            cfg.listen.udp = "127.0.0.1:0".into();
            cfg.http.listen = args.http.clone().unwrap_or_default();
            if let Some(w) = workers {
                cfg.workers.count = w;
            }
            if let Some(s) = args.spin_us {
                cfg.workers.spin_us = s;
            }
            cfg.workers.threads = args.threads.into();
            cfg.workers.udp_io = args.udp_io.into();
            cfg.workers.udp_gro = args.udp_gro;
            if args.l2 {
                cfg.store.l2_path = dir.join("l2").display().to_string();
                cfg.store.bloom = args.nbcache;
                cfg.store.aqm = args.nbcache;
            }
            if args.threads == super::ThreadsArg::One && workers.is_some_and(|w| w > 1) {
                // --scale: one thread runs one worker; more workers need worker threads.
                cfg.workers.threads = router::config::Threads::IoWorkers;
            }
            let r = router::Router::start(&cfg)?;
            let b = r.bound().clone();
            Ok(Endpoints {
                unix: b.unix,
                udp: b.udp,
                ws: b.ws,
                started: Some((r, dir)),
            })
        }
    }
}

/// Stops a router started here and removes its directory; returns its drops by reason and
/// its worker count.
pub(super) fn stop_router(r: router::Router, dir: PathBuf) -> (Vec<(String, u64)>, usize) {
    let mut drops: Vec<(String, u64)> = Vec::new();
    let workers = r.workers();
    let snaps = r.snapshots();
    for reason in engine::fw::pipeline::DropReason::ALL {
        let n: u64 = snaps.iter().map(|s| s.counters.drops[reason.index()]).sum();
        if n > 0 {
            drops.push((format!("{reason:?}"), n));
        }
    }
    let ring = r.input_ring_full();
    if ring > 0 {
        drops.push(("InputRingFull".into(), ring));
    }
    let out_full: u64 = snaps
        .iter()
        .map(|s| s.out_ring_full + s.out_no_buffer)
        .sum();
    if out_full > 0 {
        drops.push(("OutputRingFull".into(), out_full));
    }
    let send_full: u64 = r.shard_stats().iter().map(|s| s.send_ring_full).sum();
    if send_full > 0 {
        drops.push(("SendRingFull".into(), send_full));
    }
    r.stop_handle().stop();
    r.join();
    let _ = std::fs::remove_dir_all(dir);
    (drops, workers)
}
