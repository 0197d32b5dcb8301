//! `cascade ctl`: manage a running forwarder the way `nfdc` does, through NFD's management
//! protocol only (so it works against NFD as well as Cascade).
//!
//! Datasets (`status`, `face list`, `route list`, `fib list`, `cs info`, `strategy list`) print
//! as aligned tables, or as JSON with `--json`. Commands print one `key=value` line as nfdc does
//! (or a JSON object). A command the forwarder refuses exits with status 1 and one line with its
//! StatusCode and StatusText; bad arguments exit with status 2.
//!
//! This file holds the arguments; [`client::nfdc`] issues the commands and renders the answers.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use client::control::ORIGIN_STATIC;
use client::nfdc::{self, Command, Failure};
use wire::nfd::FacePersistency;

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

/// Runs `cascade ctl`.
pub fn run(args: &CtlArgs) -> ExitCode {
    // The arguments are checked before connecting.
    let result =
        command(&args.command).and_then(|c| nfdc::run(c, args.transport.as_deref(), args.json));
    match result {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(Failure { status, message }) => {
            eprintln!("cascade ctl: {message}");
            ExitCode::from(status)
        }
    }
}

/// The [`Command`] the arguments ask for.
fn command(cmd: &CtlCommand) -> Result<Command, Failure> {
    Ok(match cmd {
        CtlCommand::Status => Command::Status,
        CtlCommand::Face(FaceCommand::List) => Command::FaceList,
        CtlCommand::Face(FaceCommand::Create { uri, persistency }) => {
            let persistency = match persistency {
                PersistencyArg::Persistent => FacePersistency::Persistent,
                PersistencyArg::Permanent => FacePersistency::Permanent,
            };
            Command::face_create(uri, persistency)?
        }
        CtlCommand::Face(FaceCommand::Destroy { id }) => Command::face_destroy(*id),
        CtlCommand::Route(RouteCommand::List) => Command::RouteList,
        CtlCommand::Route(RouteCommand::Add {
            prefix,
            face_id,
            cost,
            origin,
            no_inherit,
            capture,
            expires,
        }) => {
            let flags = nfdc::route_flags(!no_inherit, *capture);
            Command::route_add(prefix, *face_id, *cost, *origin, flags, *expires)?
        }
        CtlCommand::Route(RouteCommand::Remove {
            prefix,
            face_id,
            origin,
        }) => Command::route_remove(prefix, *face_id, *origin)?,
        CtlCommand::Fib(FibCommand::List) => Command::FibList,
        CtlCommand::Cs(CsCommand::Info) => Command::CsInfo,
        CtlCommand::Cs(CsCommand::Erase { prefix, count }) => Command::cs_erase(prefix, *count)?,
        CtlCommand::Strategy(StrategyCommand::List) => Command::StrategyList,
        CtlCommand::Strategy(StrategyCommand::Set { prefix, strategy }) => {
            Command::strategy_set(prefix, strategy)?
        }
    })
}
