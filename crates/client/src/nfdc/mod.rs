//! An `nfdc`-like management tool (what `cascade ctl` runs): it manages a running forwarder
//! through NFD's management protocol only, so it works against NFD as well as Cascade.
//!
//! A [`Command`] is built from the tool's arguments, which are checked before anything is sent;
//! [`run`] connects, issues it through a [`Controller`] and returns the text to print. Datasets
//! (`status`, `face list`, `route list`, `fib list`, `cs info`, `strategy list`) render as
//! aligned tables, or as JSON (one object a line) when asked. Commands render as one `key=value`
//! line as nfdc prints them (or a JSON object). Every failure is a [`Failure`] carrying the exit
//! status nfdc would use: 1 when the forwarder refuses a command (the message gives its
//! StatusCode and StatusText) or cannot be reached, 2 for bad arguments or configuration.

mod nbcache;
mod render;

use std::fmt;
use std::time::Duration;

use wire::nfd::{ControlParameters, FacePersistency, ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT};
use wire::Name;

use render::{
    render_cs, render_erased, render_faces, render_fib, render_params, render_routes,
    render_status, render_strategies,
};

use crate::control::Controller;
use crate::transport::TransportUri;
use crate::{Error, Face};

/// Most `cs/erase` commands one `cs erase` sends (each erases up to the forwarder's limit).
const MAX_ERASE_ROUNDS: usize = 1024;

/// How long `cs info` waits for Cascade's `cs/tiers` and `cs/nbcache` datasets (NFD never
/// answers them).
const TIERS_TIMEOUT: Duration = Duration::from_millis(1000);

/// Why a command failed: the exit status (1: refused or unreachable forwarder; 2: bad arguments
/// or configuration) and a one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The process exit status to report.
    pub status: u8,
    /// What went wrong, in one line.
    pub message: String,
}

impl Failure {
    fn new(status: u8, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let status = match e {
            Error::Config(_) => 2,
            _ => 1,
        };
        Failure::new(status, e.to_string())
    }
}

fn parse_name(s: &str) -> Result<Name, Failure> {
    Name::from_uri(s).map_err(|e| Failure::new(2, format!("bad name '{s}': {e}")))
}

/// A command with its arguments checked: build it with the constructors (which fail with
/// status 2 on bad arguments), then [`run`] or [`Command::execute`] it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// The forwarder's general status (status/general).
    Status,
    /// List faces (faces/list).
    FaceList,
    /// Create a face (faces/create); see [`Command::face_create`].
    FaceCreate(ControlParameters),
    /// Destroy a face (faces/destroy); see [`Command::face_destroy`].
    FaceDestroy(ControlParameters),
    /// List routes (rib/list).
    RouteList,
    /// Add a route (rib/register); see [`Command::route_add`].
    RouteAdd(ControlParameters),
    /// Remove a route (rib/unregister); see [`Command::route_remove`].
    RouteRemove(ControlParameters),
    /// List FIB entries (fib/list).
    FibList,
    /// Content store capacity, flags and counters (cs/info, and Cascade's cs/tiers).
    CsInfo,
    /// Erase cached Data under a prefix, at most a count of entries (cs/erase, repeated while
    /// the forwarder says it stopped at its own cap); see [`Command::cs_erase`].
    CsErase(Name, Option<u64>),
    /// List strategy choices (strategy-choice/list).
    StrategyList,
    /// Choose a strategy for a prefix (strategy-choice/set); see [`Command::strategy_set`].
    StrategySet(ControlParameters),
}

/// The Flags of a route: CHILD_INHERIT and CAPTURE as asked.
pub fn route_flags(child_inherit: bool, capture: bool) -> u64 {
    let mut flags = 0;
    if child_inherit {
        flags |= ROUTE_FLAG_CHILD_INHERIT;
    }
    if capture {
        flags |= ROUTE_FLAG_CAPTURE;
    }
    flags
}

impl Command {
    /// faces/create to the remote `uri` (made canonical, see [`canonical_face_uri`]).
    pub fn face_create(uri: &str, persistency: FacePersistency) -> Result<Self, Failure> {
        Ok(Command::FaceCreate(ControlParameters {
            uri: Some(canonical_face_uri(uri)?),
            face_persistency: Some(persistency),
            ..ControlParameters::default()
        }))
    }

    /// faces/destroy of face `id`.
    pub fn face_destroy(id: u64) -> Self {
        Command::FaceDestroy(ControlParameters {
            face_id: Some(id),
            ..ControlParameters::default()
        })
    }

    /// rib/register of `prefix` towards `face_id`; `flags` as [`route_flags`] makes them,
    /// `expires` in milliseconds (`None`: never).
    pub fn route_add(
        prefix: &str,
        face_id: u64,
        cost: u64,
        origin: u64,
        flags: u64,
        expires: Option<u64>,
    ) -> Result<Self, Failure> {
        Ok(Command::RouteAdd(ControlParameters {
            name: Some(parse_name(prefix)?),
            face_id: Some(face_id),
            origin: Some(origin),
            cost: Some(cost),
            flags: Some(flags),
            expiration_period: expires,
            ..ControlParameters::default()
        }))
    }

    /// rib/unregister of `prefix` towards `face_id`, for routes of `origin`.
    pub fn route_remove(prefix: &str, face_id: u64, origin: u64) -> Result<Self, Failure> {
        Ok(Command::RouteRemove(ControlParameters {
            name: Some(parse_name(prefix)?),
            face_id: Some(face_id),
            origin: Some(origin),
            ..ControlParameters::default()
        }))
    }

    /// cs/erase under `prefix`, at most `count` entries (which must be at least 1).
    pub fn cs_erase(prefix: &str, count: Option<u64>) -> Result<Self, Failure> {
        if count == Some(0) {
            return Err(Failure::new(2, "--count must be at least 1"));
        }
        Ok(Command::CsErase(parse_name(prefix)?, count))
    }

    /// strategy-choice/set of `strategy` (see [`strategy_name`]) for `prefix`.
    pub fn strategy_set(prefix: &str, strategy: &str) -> Result<Self, Failure> {
        Ok(Command::StrategySet(ControlParameters {
            name: Some(parse_name(prefix)?),
            strategy: Some(strategy_name(strategy)?),
            ..ControlParameters::default()
        }))
    }

    /// Issues the command through `c`; returns the text to print (JSON if `json`).
    pub fn execute(self, c: &mut Controller<'_>, json: bool) -> Result<String, Failure> {
        let cmd = |c: &mut Controller<'_>, module: &str, verb: &str, p: &ControlParameters| {
            c.command(module, verb, p)
                .map_err(|e| Failure::new(1, format!("{module}/{verb} failed: {e}")))
        };
        Ok(match self {
            Command::Status => render_status(&c.forwarder_status()?, json),
            Command::FaceList => render_faces(&c.faces()?, json),
            Command::FaceCreate(p) => {
                let r = c.command_response("faces", "create", &p)?;
                match (r.status_code, r.parameters()) {
                    (200, Some(rp)) => render_params("face-created", rp, json),
                    (409, Some(rp)) => render_params("face-exists", rp, json),
                    _ => {
                        return Err(Failure::new(
                            1,
                            format!(
                                "faces/create failed: StatusCode {}: {}",
                                r.status_code, r.status_text
                            ),
                        ))
                    }
                }
            }
            Command::FaceDestroy(p) => {
                let rp = cmd(c, "faces", "destroy", &p)?;
                render_params("face-destroyed", &merge(&p, rp), json)
            }
            Command::RouteList => render_routes(&c.rib()?, json),
            Command::RouteAdd(p) => {
                let rp = cmd(c, "rib", "register", &p)?;
                render_params("route-add-accepted", &merge(&p, rp), json)
            }
            Command::RouteRemove(p) => {
                let rp = cmd(c, "rib", "unregister", &p)?;
                render_params("route-removed", &merge(&p, rp), json)
            }
            Command::FibList => render_fib(&c.fib()?, json),
            Command::CsInfo => {
                let ram = c.cs_info()?;
                // Cascade's own dataset; NFD does not have it (nor does a router without L2).
                let tiers = c.cs_tiers(TIERS_TIMEOUT).unwrap_or_default();
                let nb = c.cs_nbcache(TIERS_TIMEOUT).ok();
                render_cs(&ram, &tiers, nb.as_ref(), json)
            }
            Command::CsErase(prefix, limit) => {
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
                render_erased(&prefix, total, json)
            }
            Command::StrategyList => render_strategies(&c.strategy_choices()?, json),
            Command::StrategySet(p) => {
                let rp = cmd(c, "strategy-choice", "set", &p)?;
                render_params("strategy-set", &merge(&p, rp), json)
            }
        })
    }
}

/// Connects to the forwarder at `transport` (see [`crate::transport::resolve`] for the default),
/// runs `command` and returns the text to print.
pub fn run(command: Command, transport: Option<&str>, json: bool) -> Result<String, Failure> {
    let uri: TransportUri = crate::transport::resolve(transport)?;
    let mut face = Face::connect(&uri)?;
    command.execute(&mut Controller::new(&mut face), json)
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
pub fn canonical_face_uri(s: &str) -> Result<String, Failure> {
    let (is_tcp, uri) = match s.parse::<TransportUri>() {
        Ok(u @ TransportUri::Tcp { .. }) => (true, u),
        Ok(u @ TransportUri::Udp { .. }) => (false, u),
        Ok(TransportUri::Unix(_)) | Err(_) => return Ok(s.to_owned()),
    };
    let addrs = uri
        .socket_addrs()
        .map_err(|e| Failure::new(2, format!("cannot canonize face URI '{s}': {e}")))?;
    let a = addrs[0];
    Ok(if is_tcp {
        TransportUri::tcp(a)
    } else {
        TransportUri::udp(a)
    }
    .to_string())
}

/// A strategy argument as a name: a bare word is `/localhost/nfd/strategy/<word>`.
pub fn strategy_name(s: &str) -> Result<Name, Failure> {
    if s.starts_with('/') || s.starts_with("ndn:") {
        parse_name(s)
    } else {
        parse_name(&format!("/localhost/nfd/strategy/{s}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
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
