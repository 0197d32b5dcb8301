//! nfdc (NFD 24.07) as a library: what `cascade ctl` and the binary run as `nfdc` execute. It
//! manages a running forwarder through NFD's management protocol only, so it works against NFD
//! as well as Cascade.
//!
//! [`parse`] reads nfdc's command line (`route add prefix /a nexthop 300 cost 10`, or with the
//! positional forms `route add /a 300 cost 10`) into a [`Command`], checking every argument
//! before anything is sent; [`run`] connects, issues it through a [`Controller`] and returns the
//! text to print: nfdc's `key=value` lines and sections, or JSON (one object a line) when asked.
//! Every failure is a [`Failure`] carrying nfdc's exit status and message: 1 a refused command or
//! an unreachable forwarder, 2 bad usage, 3 face not found, 4 a face URI that cannot be made
//! canonical, 5 several faces match, 6 route not found, 7 unknown strategy.

mod batch;
mod canon;
mod exec;
mod grammar;
mod nbcache;
mod render;
mod xml;

pub use canon::canonical_face_uri;

use std::fmt;

use wire::nfd::{FacePersistency, ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT};
use wire::Name;

use crate::control::Controller;
use crate::transport::TransportUri;
use crate::{Error, Face};

/// nfdc's exit statuses.
pub mod status {
    /// An unspecified error: a refused command, an unreachable forwarder.
    pub const ERROR: u8 = 1;
    /// A malformed command line.
    pub const USAGE: u8 = 2;
    /// No face matches.
    pub const FACE_NOT_FOUND: u8 = 3;
    /// A face URI could not be made canonical.
    pub const CANONIZE_ERROR: u8 = 4;
    /// Several faces match where one was needed.
    pub const AMBIGUOUS: u8 = 5;
    /// No route matches (`route list`, `route show`).
    pub const ROUTE_NOT_FOUND: u8 = 6;
    /// The forwarder does not know the strategy (`strategy set`).
    pub const UNKNOWN_STRATEGY: u8 = 7;
}

/// Why a command failed: the exit status nfdc uses (see [`status`]), a message (one line, but
/// for a batch's), and what the command printed before it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The process exit status to report.
    pub status: u8,
    /// What went wrong (for stderr).
    pub message: String,
    /// What was printed before the failure (for stdout): a face `route add` created, the
    /// commands of a batch that succeeded.
    pub output: String,
}

impl Failure {
    /// A failure with `status` and `message`, nothing printed before it.
    pub fn new(status: u8, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
            output: String::new(),
        }
    }

    /// The same failure, `output` printed before it.
    fn after(mut self, output: String) -> Self {
        self.output = output + &self.output;
        self
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
            Error::Config(_) => status::USAGE,
            _ => status::ERROR,
        };
        Failure::new(status, e.to_string())
    }
}

/// A face named by its FaceId or by its remote URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaceRef {
    /// A FaceId.
    Id(u64),
    /// A remote face URI (made canonical before it is looked up).
    Uri(String),
}

/// `face create`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceCreate {
    /// The remote URI.
    pub remote: String,
    /// The local URI, if given.
    pub local: Option<String>,
    /// Persistency (default persistent).
    pub persistency: FacePersistency,
    /// NDNLPv2 reliability on or off, if given.
    pub reliability: Option<bool>,
    /// Congestion marking on or off, if given.
    pub congestion_marking: Option<bool>,
    /// Base congestion marking interval, in milliseconds.
    pub marking_interval_ms: Option<u64>,
    /// Default congestion threshold, in bytes.
    pub congestion_threshold: Option<u64>,
    /// MTU override in bytes (`u64::MAX`: `auto`, no override).
    pub mtu: Option<u64>,
    /// LocalFields on or off, if given (Cascade's extension).
    pub local_fields: Option<bool>,
}

/// A route as `route add` asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteAdd {
    /// The prefix.
    pub prefix: Name,
    /// The nexthop: a FaceId, or a URI (a face is created if none has it).
    pub nexthop: FaceRef,
    /// Route origin (default 255, static).
    pub origin: u64,
    /// Cost (default 0).
    pub cost: u64,
    /// Route flags (see [`route_flags`]).
    pub flags: u64,
    /// Expiration in milliseconds (`None`: never).
    pub expires_ms: Option<u64>,
}

/// A command with its arguments checked: build it with [`parse`], then [`run`] it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// The list of commands, all or one noun's (`help`, `-h`).
    Help(String),
    /// The tool's version.
    Version,
    /// A batch (`-f FILE`): commands run in order on one connection until one fails.
    Batch {
        /// The file name (`standard input` for `-`), for the messages.
        source: String,
        /// The commands in order, with the line each started on.
        commands: Vec<(usize, Command)>,
    },
    /// Every section nfdc's `status report` prints.
    StatusReport {
        /// In nfdc's XML format (`status report xml`), rather than text.
        xml: bool,
    },
    /// The forwarder's general status (status/general).
    Status,
    /// Listening channels (faces/channels).
    ChannelList,
    /// Faces (faces/list, or faces/query with the filters given).
    FaceList {
        /// Remote URI filter.
        remote: Option<String>,
        /// Local URI filter.
        local: Option<String>,
        /// URI scheme filter.
        scheme: Option<String>,
    },
    /// One face in detail.
    FaceShow(u64),
    /// Create a face (faces/create; faces/update when it exists with other parameters).
    FaceCreate(Box<FaceCreate>),
    /// Destroy a face (faces/destroy).
    FaceDestroy(FaceRef),
    /// Routes (rib/list), filtered by nexthop and origin.
    RouteList {
        /// Only routes through this face (or these faces, for a URI).
        nexthop: Option<FaceRef>,
        /// Only routes of this origin.
        origin: Option<u64>,
    },
    /// The routes of exactly this prefix.
    RouteShow(Name),
    /// Add a route (rib/register).
    RouteAdd(Box<RouteAdd>),
    /// Remove a route from every face matching the nexthop (rib/unregister).
    RouteRemove {
        /// The prefix.
        prefix: Name,
        /// The nexthop.
        nexthop: FaceRef,
        /// The route origin (default static).
        origin: u64,
    },
    /// FIB entries (fib/list).
    FibList,
    /// Content store capacity, flags and counters (cs/info, and Cascade's cs/tiers and
    /// cs/nbcache).
    CsInfo,
    /// Change the content store's capacity and flags (cs/config).
    CsConfig {
        /// Capacity in packets.
        capacity: Option<u64>,
        /// Admit flag.
        admit: Option<bool>,
        /// Serve flag.
        serve: Option<bool>,
    },
    /// Erase cached Data under a prefix, at most a count of entries (cs/erase, repeated while
    /// the forwarder says it stopped at its own cap).
    CsErase(Name, Option<u64>),
    /// Strategy choices (strategy-choice/list).
    StrategyList,
    /// The strategy choice that applies to a prefix (longest match).
    StrategyShow(Name),
    /// Choose a strategy for a prefix (strategy-choice/set).
    StrategySet(Name, Name),
    /// Clear the strategy choice of a prefix (strategy-choice/unset).
    StrategyUnset(Name),
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

/// Reads nfdc's command line (without the program name) into a [`Command`]: `-h`, `--help` or
/// `help` anywhere asks for the list of commands; `-V`/`--version` first for the version; no
/// argument at all lists the commands too, as nfdc does.
pub fn parse(tokens: &[String]) -> Result<Command, Failure> {
    match tokens.first().map(String::as_str) {
        None => return Ok(Command::Help(String::new())),
        Some("-V" | "--version") => return Ok(Command::Version),
        Some(flag @ ("-f" | "--batch")) => return batch::read(flag, &tokens[1..]),
        _ => {}
    }
    let (def, a) = match grammar::parse(tokens) {
        Ok(v) => v,
        Err(e) => {
            let is_help = |t: &&String| matches!(t.as_str(), "help" | "--help" | "-h");
            return match tokens.iter().position(|t| is_help(&t)) {
                Some(i) => {
                    let rest: Vec<&String> = tokens
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, t)| t)
                        .collect();
                    Ok(Command::Help(
                        rest.first().map_or_else(String::new, |n| n.to_string()),
                    ))
                }
                None => Err(e),
            };
        }
    };
    let name = |k: &str| a.name(k).cloned().unwrap_or_default();
    let face = |k: &str| a.face(k).cloned();
    let origin = a.u64("origin");
    Ok(match (def.noun, def.verb) {
        ("status", "report") => Command::StatusReport {
            xml: a.str("format") == Some("xml"),
        },
        ("status", _) => Command::Status,
        ("channel", _) => Command::ChannelList,
        ("fib", _) => Command::FibList,
        ("cs", "info") => Command::CsInfo,
        ("face", "list") => Command::FaceList {
            remote: a.str("remote").map(str::to_owned),
            local: a.str("local").map(str::to_owned),
            scheme: a.str("scheme").map(str::to_owned),
        },
        ("face", "show") => Command::FaceShow(a.u64("id").unwrap_or_default()),
        ("face", "create") => Command::FaceCreate(Box::new(face_create(&a)?)),
        ("face", "destroy") => Command::FaceDestroy(face("face").unwrap_or(FaceRef::Id(0))),
        ("route", "list") => Command::RouteList {
            nexthop: face("nexthop"),
            origin,
        },
        ("route", "show") => Command::RouteShow(name("prefix")),
        ("route", "add") => Command::RouteAdd(Box::new(RouteAdd {
            prefix: name("prefix"),
            nexthop: face("nexthop").unwrap_or(FaceRef::Id(0)),
            origin: origin.unwrap_or(crate::control::ORIGIN_STATIC),
            cost: a.u64("cost").unwrap_or(0),
            flags: route_flags(!a.flag("no-inherit"), a.flag("capture")),
            expires_ms: a.u64("expires"),
        })),
        ("route", _) => Command::RouteRemove {
            prefix: name("prefix"),
            nexthop: face("nexthop").unwrap_or(FaceRef::Id(0)),
            origin: origin.unwrap_or(crate::control::ORIGIN_STATIC),
        },
        ("cs", "config") => Command::CsConfig {
            capacity: a.u64("capacity"),
            admit: a.bool("admit"),
            serve: a.bool("serve"),
        },
        ("cs", _) => Command::CsErase(name("prefix"), a.u64("count")),
        ("strategy", "list") => Command::StrategyList,
        ("strategy", "show") => Command::StrategyShow(name("prefix")),
        ("strategy", "set") => Command::StrategySet(
            name("prefix"),
            strategy_name(a.str("strategy").unwrap_or(""))?,
        ),
        _ => {
            let prefix = name("prefix");
            if prefix.is_empty() {
                return Err(Failure::new(
                    status::USAGE,
                    "Unsetting default strategy is prohibited",
                ));
            }
            Command::StrategyUnset(prefix)
        }
    })
}

fn face_create(a: &grammar::Args) -> Result<FaceCreate, Failure> {
    let mtu = match a.str("mtu") {
        None => None,
        Some("auto") => Some(u64::MAX),
        Some(s) => Some(s.parse::<u64>().map_err(|_| {
            Failure::new(
                status::USAGE,
                "MTU must either be a non-negative integer or 'auto'",
            )
        })?),
    };
    Ok(FaceCreate {
        remote: a.str("remote").unwrap_or_default().to_owned(),
        local: a.str("local").map(str::to_owned),
        persistency: a
            .persistency("persistency")
            .unwrap_or(FacePersistency::Persistent),
        reliability: a.bool("reliability"),
        congestion_marking: a.bool("congestion-marking"),
        marking_interval_ms: a.u64("congestion-marking-interval"),
        congestion_threshold: a.u64("default-congestion-threshold"),
        mtu,
        local_fields: a.bool("local-fields"),
    })
}

/// Connects to the forwarder at `transport` (see [`crate::transport::resolve`] for the default),
/// runs `command` and returns the text to print (JSON if `json`). `help` and the version need no
/// forwarder.
pub fn run(command: Command, transport: Option<&str>, json: bool) -> Result<String, Failure> {
    run_signed(command, transport, json, None)
}

/// [`run`], the commands signed with `signer` (a key chain's key) instead of DigestSha256.
pub fn run_signed(
    command: Command,
    transport: Option<&str>,
    json: bool,
    signer: Option<&crate::control::Signer>,
) -> Result<String, Failure> {
    match command {
        Command::Help(noun) => return help(&noun),
        Command::Version => return Ok(version()),
        _ => {}
    }
    let uri: TransportUri = crate::transport::resolve(transport)?;
    let mut face = Face::connect(&uri)?;
    let mut c = Controller::new(&mut face).with_signer(signer);
    let Command::Batch { source, commands } = command else {
        return exec::execute(command, &mut c, json);
    };
    let mut out = String::new();
    let n = commands.len();
    for (i, (_, cmd)) in commands.into_iter().enumerate() {
        match exec::execute(cmd, &mut c, json) {
            Ok(text) => out += &text,
            Err(mut f) => {
                if n > 1 {
                    f.message += &format!(
                        "\n  >> Failed to execute command on line {} of the batch file \
                         {source}\n  Note that nfdc has executed all commands on previous \
                         lines and stopped processing at this line",
                        i + 1
                    );
                }
                return Err(f.after(out));
            }
        }
    }
    Ok(out)
}

/// What `help [NOUN]` prints: nfdc's list of commands, or a noun's usage lines and commands
/// (nfdc opens the noun's man page); a noun nfdc does not have is a usage error, its (empty)
/// list printed, as nfdc's `man` finds no page for it.
fn help(noun: &str) -> Result<String, Failure> {
    if noun.is_empty() {
        return Ok(grammar::help_list(noun));
    }
    grammar::help_noun(noun).ok_or_else(|| {
        Failure::new(status::USAGE, format!("No such command: {noun} "))
            .after(grammar::help_list(noun))
    })
}

/// What `-V`/`--version` prints: nfdc prints its build's version string (`24.07`) and a
/// newline; this prints Cascade's.
fn version() -> String {
    format!("{}\n", env!("CARGO_PKG_VERSION"))
}

fn parse_name(s: &str) -> Result<Name, Failure> {
    Name::from_uri(s).map_err(|e| Failure::new(status::USAGE, format!("bad name '{s}': {e}")))
}

/// A strategy argument as a name: a bare word is `/localhost/nfd/strategy/<word>` (Cascade's
/// shorthand; nfdc wants the full name).
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

    fn cmd(line: &str) -> Result<Command, Failure> {
        let t: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        parse(&t)
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
    }

    #[test]
    fn help_and_version_need_no_forwarder() {
        let out = |c: Command| run(c, Some("unix:///nonexistent/nfd.sock"), false);
        assert_eq!(
            out(Command::Help(String::new())),
            Ok(grammar::help_list(""))
        );
        let route = out(Command::Help("route".into())).unwrap();
        assert!(
            route.starts_with("Synopsis:\n  nfdc route [list "),
            "{route}"
        );
        // A noun nfdc has not: a usage error, the empty list on stdout.
        let e = out(Command::Help("bogus".into())).unwrap_err();
        assert_eq!(
            (e.status, e.message.as_str(), e.output.as_str()),
            (
                2,
                "No such command: bogus ",
                grammar::help_list("bogus").as_str()
            )
        );
        assert!(e
            .output
            .ends_with("Subcommands starting with bogus:\n  (none)\n"));
        // nfdc prints its version string alone on a line.
        let v = out(Command::Version).unwrap();
        assert_eq!(v, format!("{}\n", env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn command_lines_become_commands() {
        assert_eq!(cmd(""), Ok(Command::Help(String::new())));
        assert_eq!(cmd("-V"), Ok(Command::Version));
        assert_eq!(cmd("help"), Ok(Command::Help(String::new())));
        assert_eq!(cmd("route help"), Ok(Command::Help("route".into())));
        assert_eq!(cmd("route add /a 5 -h"), Ok(Command::Help("route".into())));
        let Ok(Command::RouteAdd(r)) = cmd("route add /a 5 cost 7 capture expires 9") else {
            panic!()
        };
        assert_eq!(
            (r.nexthop, r.origin, r.cost, r.flags, r.expires_ms),
            (
                FaceRef::Id(5),
                255,
                7,
                ROUTE_FLAG_CHILD_INHERIT | ROUTE_FLAG_CAPTURE,
                Some(9)
            )
        );
        let Ok(Command::FaceCreate(f)) = cmd("face create udp://192.0.2.1 mtu 1400 reliability on")
        else {
            panic!()
        };
        assert_eq!(
            (f.persistency, f.mtu, f.reliability, f.congestion_marking),
            (FacePersistency::Persistent, Some(1400), Some(true), None)
        );
        assert_eq!(
            cmd("face create udp://192.0.2.1 mtu -1").err().unwrap(),
            Failure::new(2, "MTU must either be a non-negative integer or 'auto'")
        );
        assert_eq!(
            cmd("strategy unset /").err().unwrap(),
            Failure::new(2, "Unsetting default strategy is prohibited")
        );
        assert_eq!(
            cmd("strategy set /a best-route"),
            Ok(Command::StrategySet(
                name("/a"),
                name("/localhost/nfd/strategy/best-route")
            ))
        );
        assert_eq!(
            cmd("route remove /a udp4://192.0.2.1:6363 origin app"),
            Ok(Command::RouteRemove {
                prefix: name("/a"),
                nexthop: FaceRef::Uri("udp4://192.0.2.1:6363".into()),
                origin: 0
            })
        );
        assert_eq!(
            cmd("status report xml").ok(),
            Some(Command::StatusReport { xml: true })
        );
        assert_eq!(
            cmd("status report").ok(),
            Some(Command::StatusReport { xml: false })
        );
        assert_eq!(cmd("status report html").err().unwrap().status, 2);
        assert_eq!(
            cmd("route").ok(),
            Some(Command::RouteList {
                nexthop: None,
                origin: None
            })
        );
    }
}
