//! The application tools: `cascade peek`, `poke`, `put` and `get` (ndnpeek, ndnpoke,
//! ndnputchunks and ndncatchunks), each a thin front end over the `client` crate; `put` answers
//! RDR metadata and `get` discovers the version through it. `ping` and `pingserver` live in
//! [`crate::tools_ping`].
//!
//! Exit statuses: 0 success; 1 a failure talking to the forwarder (connection, I/O, protocol,
//! a refused registration); 2 bad arguments; 3 timeout; 4 Nack. Every failure prints one line
//! on stderr.

use std::fmt::Write as _;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use client::aimd::AimdOptions;
use client::error::nack_reason_str;
use client::face::{satisfies, Received};
use client::producer::{
    segment_data_signed, serve_one_seeing, serve_segments_seeing, Segmented, ServeOptions,
};
use client::rtt::RttOptions;
use client::{CubicOptions, Error, Face, FetchOptions, Outcome, Stats};
use serde_json::json;
use wire::{Data, Interest, MetaInfo, Name};

use crate::signals::StopSignals;

/// Exit status of a timeout.
const EXIT_TIMEOUT: u8 = 3;
/// Exit status of a Nack.
const EXIT_NACK: u8 = 4;
/// `get`'s exit status for a file it cannot write (the output, `--log-cwnd`, `--log-rtt`):
/// ndncatchunks' for a log file it cannot open. ndncatchunks exits 1 on a timeout or a Nack
/// (its fetch fails like any other error), so `get` does too (unlike `peek`).
pub(crate) const EXIT_GET_FILE: u8 = 4;
/// `get`'s exit status for an application-level Nack (a segment Data of ContentType NACK):
/// ndncatchunks'. (Its status 5, a Data its validator refuses, cannot happen: ndncatchunks
/// 24.07 validates with ndn-cxx's accept-all validator, and `get` checks no signature either.)
const EXIT_GET_APP_NACK: u8 = 3;

/// The `--transport` option shared by the tools.
#[derive(Args, Debug)]
pub struct TransportArg {
    /// Forwarder to talk to (unix:///path, tcp://host:port, udp://host:port); default:
    /// NDN_CLIENT_TRANSPORT, then client.conf, then unix:///run/nfd/nfd.sock.
    #[arg(long, value_name = "URI")]
    transport: Option<String>,
}

/// `cascade peek` arguments (ndnpeek's).
#[derive(Args, Debug)]
pub struct PeekArgs {
    /// Name of the Interest.
    name: String,
    /// InterestLifetime in milliseconds.
    #[arg(short = 'l', long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// Set CanBePrefix.
    #[arg(short = 'P', long, visible_alias = "prefix")]
    can_be_prefix: bool,
    /// Set MustBeFresh.
    #[arg(short = 'f', long, visible_alias = "fresh")]
    must_be_fresh: bool,
    /// Add a ForwardingHint delegation name (repeatable).
    #[arg(short = 'F', long = "fwhint", value_name = "NAME")]
    fwhint: Vec<String>,
    /// HopLimit (0-255).
    #[arg(short = 'H', long)]
    hop_limit: Option<u8>,
    /// ApplicationParameters, as a base64 string.
    #[arg(
        short = 'A',
        long,
        value_name = "BASE64",
        conflicts_with = "app_params_file"
    )]
    app_params: Option<String>,
    /// ApplicationParameters, read from this file.
    #[arg(long, value_name = "FILE")]
    app_params_file: Option<PathBuf>,
    /// Print the Data's payload only (for a Nack: its reason and a newline), instead of the
    /// whole packet (for a Nack: its NackHeader).
    #[arg(short = 'p', long)]
    payload: bool,
    /// Give up after this many milliseconds (default: when the Interest's lifetime ends).
    #[arg(short = 'w', long, value_name = "MS")]
    timeout: Option<u64>,
    /// Print the Interest, and the outcome with its RTT, on stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
    #[command(flatten)]
    transport: TransportArg,
}

/// `cascade poke` arguments (ndnpoke's).
#[derive(Args, Debug)]
pub struct PokeArgs {
    /// Name of the Data (also the prefix registered).
    name: String,
    /// FreshnessPeriod in milliseconds (default: none, so MustBeFresh Interests are not
    /// answered).
    #[arg(short = 'f', long, value_name = "MS")]
    freshness: Option<u64>,
    /// Give up after this many milliseconds without a matching Interest (default: wait until
    /// SIGINT or SIGTERM).
    #[arg(short = 'w', long, value_name = "MS", conflicts_with = "unsolicited")]
    timeout: Option<u64>,
    /// Set FinalBlockId to the last component of the name.
    #[arg(short = 'F', long)]
    r#final: bool,
    /// Send the Data at once, unsolicited, without registering or waiting for an Interest.
    #[arg(short = 'u', long)]
    unsolicited: bool,
    /// How to sign, as ndn-cxx's SigningInfo: "" or `id:/localhost/identity/digest-sha256`
    /// (DigestSha256), `id:/identity`, `key:/identity/KEY/id` or `cert:/...` (a key of the
    /// key chain in ~/.ndn, as ndn-cxx and python-ndn keep it).
    #[arg(short = 'S', long, value_name = "SIGNING-INFO", default_value = "")]
    signing_info: String,
    /// Print each Interest, the registration and the Data sent on stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
    #[command(flatten)]
    transport: TransportArg,
}

/// `cascade put` arguments.
#[derive(Args, Debug)]
pub struct PutArgs {
    /// Name prefix; segments are PREFIX/v=VERSION/seg=N.
    #[arg(required_unless_present = "version")]
    prefix: Option<String>,
    /// File to serve.
    #[arg(required_unless_present = "version")]
    file: Option<PathBuf>,
    /// Content bytes per segment.
    #[arg(
        short = 's',
        long,
        visible_alias = "size",
        default_value_t = client::producer::DEFAULT_SEGMENT_SIZE,
        value_name = "BYTES"
    )]
    segment_size: usize,
    /// FreshnessPeriod of every segment, in milliseconds.
    #[arg(
        short = 'f',
        long,
        default_value_t = client::producer::DEFAULT_FRESHNESS_MS,
        value_name = "MS"
    )]
    freshness: u64,
    /// Print the version to stdout once serving.
    #[arg(short = 'p', long)]
    print_data_version: bool,
    /// No output but failures.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Print each Interest and the Data answering it on stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Alone: print the program version and exit (ndnputchunks' `-V`). With N: the Data's
    /// version number (default: now, in milliseconds since the Unix epoch).
    #[arg(short = 'V', long, num_args = 0..=1, value_name = "N")]
    version: Option<Option<u64>>,
    /// Exit once every segment has been served at least once (default: serve until SIGINT or
    /// SIGTERM).
    #[arg(long)]
    once: bool,
    /// How to sign, as ndn-cxx's SigningInfo (see `cascade poke -S`).
    #[arg(short = 'S', long, value_name = "SIGNING-INFO", default_value = "")]
    signing_info: String,
    /// Naming convention of the version and segment components: `typed` (the only one).
    #[arg(short = 'N', long, value_name = "CONVENTION")]
    naming_convention: Option<String>,
    #[command(flatten)]
    transport: TransportArg,
}

/// `cascade get` arguments.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// Name to fetch (the prefix given to `put`, or a versioned name).
    name: String,
    /// Output file (`-` for stdout).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Set MustBeFresh on every Interest.
    #[arg(short = 'f', long)]
    fresh: bool,
    /// Naming convention of the version and segment components: `typed` (the only one).
    #[arg(short = 'N', long, value_name = "CONVENTION")]
    naming_convention: Option<String>,
    /// InterestLifetime in milliseconds.
    #[arg(short = 'l', long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// Most retries of one segment after a timeout or Nack (-1: no limit).
    #[arg(
        short = 'r',
        long,
        visible_alias = "max-retries",
        default_value_t = 15,
        allow_negative_numbers = true
    )]
    retries: i64,
    /// The Interest pipeline: a fixed window, AIMD or CUBIC.
    #[arg(short = 'p', long, value_enum, default_value_t = PipelineType::Cubic)]
    pipeline_type: PipelineType,
    /// Take the name as the versioned name: no version discovery.
    #[arg(short = 'D', long)]
    no_version_discovery: bool,
    /// No progress bar and no statistics; failures only.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Print the pipeline's parameters before fetching.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// The fixed pipeline's window, in Interests.
    #[arg(short = 's', long, default_value_t = 1, value_name = "N")]
    pipeline_size: u32,
    /// Initial congestion window, in Interests (AIMD, CUBIC).
    #[arg(long, default_value_t = 2.0)]
    init_cwnd: f64,
    /// Initial slow-start threshold, in Interests (default: infinite).
    #[arg(long)]
    init_ssthresh: Option<f64>,
    /// Largest congestion window, in Interests (AIMD, CUBIC).
    #[arg(long, default_value_t = 1024.0)]
    max_cwnd: f64,
    /// Do not shrink the window on NDNLPv2 CongestionMarks.
    #[arg(long)]
    ignore_marks: bool,
    /// Shrink the window on every congestion signal, not at most once per RTT.
    #[arg(long)]
    disable_cwa: bool,
    /// AIMD: after a decrease, restart from the initial window instead of ssthresh.
    #[arg(long)]
    reset_cwnd_to_init: bool,
    /// AIMD's additive increase per RTT.
    #[arg(long, default_value_t = 1.0)]
    aimd_step: f64,
    /// AIMD's multiplicative decrease factor.
    #[arg(long, default_value_t = 0.5)]
    aimd_beta: f64,
    /// CUBIC's multiplicative decrease factor.
    #[arg(long, default_value_t = 0.7)]
    cubic_beta: f64,
    /// CUBIC's fast convergence.
    #[arg(long)]
    fast_conv: bool,
    /// Gain of the smoothed RTT in the RTO.
    #[arg(long, default_value_t = 0.125)]
    rto_alpha: f64,
    /// Gain of the RTT variation in the RTO.
    #[arg(long, default_value_t = 0.25)]
    rto_beta: f64,
    /// Multiplier of the RTT variation in the RTO (8, as ndncatchunks).
    #[arg(long, default_value_t = 8.0)]
    rto_k: f64,
    /// Smallest RTO, in milliseconds.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    min_rto: u64,
    /// Largest RTO, in milliseconds.
    #[arg(long, default_value_t = 60_000, value_name = "MS")]
    max_rto: u64,
    /// Cascade's older form of `-p fixed -s N`.
    #[arg(long, value_name = "N", hide = true)]
    fixed_window: Option<u32>,
    /// Log the congestion window to FILE, as ndncatchunks (AIMD and CUBIC pipelines).
    #[arg(long, value_name = "FILE")]
    log_cwnd: Option<PathBuf>,
    /// Log the RTT samples and estimates to FILE, as ndncatchunks (AIMD and CUBIC pipelines).
    #[arg(long, value_name = "FILE")]
    log_rtt: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Print the statistics as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    transport: TransportArg,
}

/// ndncatchunks' pipelines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PipelineType {
    /// A fixed window of `--pipeline-size` Interests.
    Fixed,
    /// Additive increase, multiplicative decrease.
    Aimd,
    /// CUBIC (RFC 8312), as ndncatchunks.
    Cubic,
}

/// A failure: exit status and one-line message.
pub(crate) struct Failure(pub(crate) u8, pub(crate) String);

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match &e {
            Error::Config(_) => 2,
            Error::Timeout(_) => EXIT_TIMEOUT,
            Error::Nack { .. } => EXIT_NACK,
            _ => 1,
        };
        Failure(code, e.to_string())
    }
}

pub(crate) fn bad(msg: impl Into<String>) -> Failure {
    Failure(2, msg.into())
}

pub(crate) fn finish(tool: &str, r: Result<(), Failure>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(code, msg)) => {
            // An empty message: the tool said what it had to (ndnpeek's Nack and timeout).
            if !msg.is_empty() {
                eprintln!("cascade {tool}: {msg}");
            }
            ExitCode::from(code)
        }
    }
}

pub(crate) fn parse_name(s: &str, what: &str) -> Result<Name, Failure> {
    let n = Name::from_uri(s).map_err(|e| bad(format!("bad {what} '{s}': {e}")))?;
    if n.is_empty() {
        return Err(bad(format!("{what} '{s}' has no components")));
    }
    Ok(n)
}

pub(crate) fn connect(t: &TransportArg) -> Result<Face, Failure> {
    let uri = client::transport::resolve(t.transport.as_deref())?;
    Ok(Face::connect(&uri)?)
}

/// Registers `prefix` towards `face`, naming the prefix in the error.
pub(crate) fn register(face: &mut Face, prefix: &Name) -> Result<(), Failure> {
    face.register(prefix).map(|_| ()).map_err(|e| {
        let Failure(code, msg) = e.into();
        Failure(code, format!("cannot register {prefix}: {msg}"))
    })
}

/// A flag set by SIGINT and SIGTERM (blocked from here on in this thread and the threads it
/// starts).
pub(crate) fn stop_flag() -> Result<Arc<AtomicBool>, Failure> {
    StopSignals::block()
        .into_flag()
        .map_err(|e| Failure(1, format!("cannot start the signal thread: {e}")))
}

/// Runs `cascade peek`.
pub fn peek(args: &PeekArgs) -> ExitCode {
    finish("peek", peek_inner(args))
}

fn peek_inner(args: &PeekArgs) -> Result<(), Failure> {
    let i = peek_interest(args)?;
    let mut face = connect(&args.transport)?;
    if args.verbose {
        eprintln!("INTEREST: {}", describe_interest(&i));
    }
    let sent = std::time::Instant::now();
    let rtt = || format!("RTT: {} ms", sent.elapsed().as_millis());
    // `-w`: the Interest keeps its lifetime on the wire; only the wait is cut.
    let wait_ms = args.timeout.map_or(args.lifetime, |w| w.min(args.lifetime));
    let outcome = express_within(&mut face, &i, Duration::from_millis(wait_ms))?;
    let mut out = std::io::stdout().lock();
    let written = match outcome {
        Outcome::Data(d) => {
            if args.verbose {
                eprintln!("DATA: {}\n{}", d.name, rtt());
            }
            let bytes = if args.payload { d.content() } else { &d.wire };
            out.write_all(bytes)
        }
        Outcome::Nack(n) => {
            if args.verbose {
                eprintln!("NACK: {}\n{}", nack_reason_str(n.reason), rtt());
            }
            let r = if args.payload {
                writeln!(out, "{}", nack_reason_str(n.reason))
            } else {
                out.write_all(&nack_header(n.reason))
            };
            r.and_then(|()| out.flush())
                .map_err(|e| Failure(1, format!("cannot write stdout: {e}")))?;
            // As ndnpeek: the Nack on stdout (and stderr with -v) only.
            return Err(Failure(EXIT_NACK, String::new()));
        }
        Outcome::Timeout => {
            if args.verbose {
                eprintln!("TIMEOUT");
            }
            return Err(Failure(EXIT_TIMEOUT, String::new()));
        }
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| Failure(1, format!("cannot write stdout: {e}")))
}

/// Sends `i` and waits up to `wait` for the Data or Nack answering it.
fn express_within(face: &mut Face, i: &Interest, wait: Duration) -> Result<Outcome, Failure> {
    let w = face.send_interest(i)?;
    let name = wire::InterestView::decode(&w, &wire::Limits::default())
        .map_err(|e| Failure(1, format!("the Interest does not decode: {e}")))?
        .name()
        .to_name();
    let deadline = std::time::Instant::now() + wait;
    while let Some(r) = face.recv_until(deadline)? {
        match r {
            Received::Data(d) if satisfies(&name, i.can_be_prefix, &d.name, &d.wire) => {
                return Ok(Outcome::Data(d));
            }
            Received::Nack(n) if n.interest.name == name && n.interest.nonce == i.nonce => {
                return Ok(Outcome::Nack(n));
            }
            _ => {}
        }
    }
    Ok(Outcome::Timeout)
}

/// The Interest `cascade peek` expresses, from its flags (ndnpeek's construction).
fn peek_interest(args: &PeekArgs) -> Result<Interest, Failure> {
    let name = parse_name(&args.name, "name")?;
    if args.lifetime == 0 {
        return Err(bad("--lifetime must be at least 1 ms"));
    }
    let mut i = Interest::new(name, client::random_nonce());
    i.can_be_prefix = args.can_be_prefix;
    i.must_be_fresh = args.must_be_fresh;
    i.lifetime_ms = Some(args.lifetime);
    i.hop_limit = args.hop_limit;
    for h in &args.fwhint {
        i.forwarding_hint.push(parse_name(h, "--fwhint")?);
    }
    if let Some(b64) = &args.app_params {
        let v = data_encoding::BASE64
            .decode(b64.trim().as_bytes())
            .map_err(|e| bad(format!("invalid ApplicationParameters string: {e}")))?;
        i.app_params = Some(v);
    }
    if let Some(f) = &args.app_params_file {
        let v = std::fs::read(f)
            .map_err(|e| bad(format!("cannot open '{}' for reading: {e}", f.display())))?;
        i.app_params = Some(v);
    }
    Ok(i)
}

/// An Interest as ndn-cxx prints one: its name, then its fields as query parameters.
fn describe_interest(i: &Interest) -> String {
    // The name as encoded (with the parameters digest where there are parameters).
    let w = i.to_wire();
    let encoded = wire::InterestView::decode(&w, &wire::Limits::default());
    let mut s = encoded.map_or_else(|_| i.name.to_string(), |v| v.name().to_name().to_string());
    let mut sep = '?';
    let mut add = |s: &mut String, field: String| {
        s.push(sep);
        s.push_str(&field);
        sep = '&';
    };
    if i.can_be_prefix {
        add(&mut s, "CanBePrefix".into());
    }
    if i.must_be_fresh {
        add(&mut s, "MustBeFresh".into());
    }
    if let Some(n) = i.nonce {
        add(
            &mut s,
            format!("Nonce={}", data_encoding::HEXLOWER.encode(&n)),
        );
    }
    if let Some(l) = i.lifetime_ms {
        add(&mut s, format!("Lifetime={l}"));
    }
    if let Some(h) = i.hop_limit {
        add(&mut s, format!("HopLimit={h}"));
    }
    s
}

/// A NackHeader (0x0320) holding this reason (NackReason 0x0321), as ndnpeek writes a Nack.
fn nack_header(reason: Option<wire::NackReason>) -> Vec<u8> {
    let mut out = Vec::new();
    wire::tlv::write_nested(&mut out, wire::tt::LP_NACK, |o| {
        if let Some(r) = reason {
            wire::tlv::write_nni_tlv(o, wire::tt::LP_NACK_REASON, r.code());
        }
    });
    out
}

/// Runs `cascade poke`.
pub fn poke(args: &PokeArgs) -> ExitCode {
    finish("poke", poke_inner(args))
}

fn poke_inner(args: &PokeArgs) -> Result<(), Failure> {
    let name = parse_name(&args.name, "name")?;
    let signer = load_signer(&args.signing_info)?;
    let limit = wire::MAX_NDN_PACKET_BYTES;
    let mut content = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit as u64 + 1)
        .read_to_end(&mut content)
        .map_err(|e| Failure(1, format!("cannot read stdin: {e}")))?;
    let content_len = content.len();
    let mut d = Data::new(name.clone(), content);
    let final_block_id = args
        .r#final
        .then(|| name.components.last().cloned())
        .flatten();
    if args.freshness.is_some() || final_block_id.is_some() {
        d.meta_info = Some(MetaInfo {
            freshness_ms: args.freshness,
            final_block_id,
            ..MetaInfo::default()
        });
    }
    match &signer {
        Some(s) => s.sign_data(&mut d).map_err(|e| Failure(1, e))?,
        None => d.sign_digest_sha256(),
    }
    let wire = d.to_wire();
    if wire.len() > limit {
        return Err(bad(format!(
            "the Data would be {} bytes, above the {limit}-byte packet limit",
            wire.len()
        )));
    }
    let verbose_data = || {
        if args.verbose {
            eprintln!("DATA: Name: {name}\nContent: ({content_len} bytes)");
        }
    };
    if args.unsolicited {
        let mut face = connect(&args.transport)?;
        face.put_data(&wire, None)?;
        verbose_data();
        return Ok(());
    }
    let stop = stop_flag()?;
    let mut face = connect(&args.transport)?;
    register(&mut face, &name)?;
    if args.verbose {
        eprintln!("Prefix registration successful");
    }
    let fresh = args.freshness.is_some_and(|f| f > 0);
    let timeout = args.timeout.map(Duration::from_millis);
    let seen = |i: &client::InterestPacket, answered: bool| {
        if args.verbose {
            eprintln!("INTEREST: {}", describe_interest(&i.interest));
            if !answered {
                eprintln!("Interest cannot be satisfied");
            }
        }
    };
    match serve_one_seeing(&mut face, &name, &wire, fresh, timeout, &stop, seen)? {
        Some(_) => {
            verbose_data();
            Ok(())
        }
        None if timeout.is_some() && !stop.load(std::sync::atomic::Ordering::Relaxed) => {
            if args.verbose {
                eprintln!("TIMEOUT");
            }
            // As ndnpoke: nothing more on stderr.
            Err(Failure(EXIT_TIMEOUT, String::new()))
        }
        None => Err(Failure(1, "interrupted before an Interest came".into())),
    }
}

/// Checks `-N`/`--naming-convention` as ndnputchunks and ndncatchunks read it: `typed` is
/// Cascade's (and their default); `marker`, the older convention, is not supported (2).
fn check_naming_convention(c: Option<&str>) -> Result<(), Failure> {
    match c {
        None | Some("typed") => Ok(()),
        Some("marker") => Err(bad(
            "--naming-convention marker is not supported (typed components only)",
        )),
        Some(other) => Err(bad(format!("'{other}' is not a valid naming convention"))),
    }
}

/// The signer of a `-S`/`--signing-info` string as ndn-cxx's SigningInfo reads it: "" (the
/// default) and `id:/localhost/identity/digest-sha256` sign DigestSha256 (`None`); `id:`,
/// `key:` and `cert:` name a key of the key chain (1 if it has none, as ndn-cxx fails to find
/// the signer); anything else is bad (2).
pub(crate) fn load_signer(s: &str) -> Result<Option<client::keychain::Signer>, Failure> {
    use client::keychain::SignerError;
    client::keychain::load_signer(s).map_err(|e| match e {
        SignerError::Invalid(m) => bad(m),
        SignerError::NotFound(m) => Failure(1, m),
    })
}

/// Runs `cascade put`.
pub fn put(args: &PutArgs) -> ExitCode {
    finish("put", put_inner(args))
}

fn put_inner(args: &PutArgs) -> Result<(), Failure> {
    if args.version == Some(None) {
        println!("cascade-put {}", env!("CARGO_PKG_VERSION"));
        return Ok(());
    }
    let (Some(prefix), Some(file)) = (&args.prefix, &args.file) else {
        return Err(bad("PREFIX and FILE are required"));
    };
    let prefix = parse_name(prefix, "prefix")?;
    let signer = load_signer(&args.signing_info)?;
    check_naming_convention(args.naming_convention.as_deref())?;
    if args.segment_size == 0 {
        return Err(bad("--segment-size must be at least 1"));
    }
    let version = args.version.flatten().unwrap_or_else(client::unix_time_ms);
    // The largest segment must fit a packet.
    let probe = segment_data_signed(
        &prefix,
        version,
        &vec![0u8; args.segment_size.min(wire::MAX_NDN_PACKET_BYTES + 1)],
        args.segment_size,
        args.freshness,
        signer.as_ref(),
    )?;
    let biggest = probe[0].len();
    if biggest > wire::MAX_NDN_PACKET_BYTES {
        return Err(bad(format!(
            "--segment-size {} makes {biggest}-byte Data, above the {}-byte packet limit",
            args.segment_size,
            wire::MAX_NDN_PACKET_BYTES
        )));
    }
    let content = std::fs::read(file)
        .map_err(|e| Failure(1, format!("cannot read {}: {e}", file.display())))?;
    // Every segment signed now, before serving (ndnputchunks' Segmenter signs them up front).
    let started = std::time::Instant::now();
    let segments = segment_data_signed(
        &prefix,
        version,
        &content,
        args.segment_size,
        args.freshness,
        signer.as_ref(),
    )?;
    let segmenting_ms = started.elapsed().as_millis();
    let segmented = Segmented { version, segments };
    let stop = stop_flag()?;
    let mut face = connect(&args.transport)?;
    let opts = ServeOptions {
        segment_size: args.segment_size,
        freshness_ms: args.freshness,
        version: Some(version),
        once: args.once,
        register: false,
    };
    register(&mut face, &prefix)?;
    let segments = segmented.segments.len();
    if args.print_data_version {
        println!("{version}");
    }
    if !args.quiet {
        let key = signer
            .as_ref()
            .map_or("DigestSha256".into(), |s| s.key_name().to_string());
        eprintln!(
            "cascade put: serving {prefix}/v={version}: {} bytes in {segments} segments \
             (signed by {key} in {segmenting_ms} ms)",
            content.len()
        );
    }
    let verbose = args.verbose && !args.quiet;
    let seen = |i: &client::InterestPacket, data: Option<&[u8]>| {
        if !verbose {
            return;
        }
        eprintln!("Interest: {}", describe_interest(&i.interest));
        match data.map(|d| wire::DataView::decode(d, &wire::Limits::default())) {
            Some(Ok(d)) => eprintln!("Data: Name: {}", d.name()),
            Some(Err(_)) => {}
            None => eprintln!("Interest cannot be satisfied, sending Nack"),
        }
    };
    let st = serve_segments_seeing(
        &mut face,
        &prefix,
        &segmented,
        &opts,
        signer.as_ref(),
        &stop,
        seen,
    )?;
    if !args.quiet {
        eprintln!(
            "cascade put: {} Interests, {} Data sent ({} RDR metadata), {} Nacked, {} unanswered",
            st.interests, st.data_sent, st.metadata_sent, st.nacked, st.unanswered
        );
    }
    Ok(())
}

/// Runs `cascade get`.
pub fn get(args: &GetArgs) -> ExitCode {
    finish("get", get_inner(args))
}

/// A number in (0, 1), or status 2 naming the option.
fn factor(v: f64, what: &str) -> Result<f64, Failure> {
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(bad(format!("{what} must be a number between 0 and 1")))
    }
}

fn fetch_options(args: &GetArgs) -> Result<FetchOptions, Failure> {
    if args.lifetime == 0 {
        return Err(bad("--lifetime must be at least 1 ms"));
    }
    if !(args.init_cwnd.is_finite() && args.init_cwnd >= 1.0) {
        return Err(bad("--init-cwnd must be a number >= 1"));
    }
    if !(args.max_cwnd.is_finite() && args.max_cwnd >= args.init_cwnd) {
        return Err(bad("--max-cwnd must be a number >= --init-cwnd"));
    }
    let ssthresh = args.init_ssthresh.unwrap_or(f64::INFINITY);
    if ssthresh.is_nan() || ssthresh < 1.0 {
        return Err(bad("--init-ssthresh must be a number >= 1"));
    }
    if !(args.aimd_step.is_finite() && args.aimd_step > 0.0) {
        return Err(bad("--aimd-step must be a positive number"));
    }
    if args.retries < -1 {
        return Err(bad("--retries must be -1 (no limit) or more"));
    }
    let max_retries = u32::try_from(args.retries).unwrap_or(u32::MAX);
    let pipeline = match args.fixed_window {
        Some(0) => return Err(bad("--fixed-window must be at least 1")),
        Some(_) => PipelineType::Fixed,
        None => args.pipeline_type,
    };
    let mut opts = FetchOptions {
        lifetime_ms: args.lifetime,
        max_retries,
        must_be_fresh: args.fresh,
        version_discovery: !args.no_version_discovery,
        ignore_congestion_marks: args.ignore_marks,
        rtt: RttOptions {
            alpha: factor(args.rto_alpha, "--rto-alpha")?,
            beta: factor(args.rto_beta, "--rto-beta")?,
            k: args.rto_k.max(0.0),
            min_rto: Duration::from_millis(args.min_rto),
            max_rto: Duration::from_millis(args.max_rto.max(args.min_rto)),
            ..RttOptions::default()
        },
        ..FetchOptions::default()
    };
    match pipeline {
        PipelineType::Fixed => {
            let n = args.fixed_window.unwrap_or(args.pipeline_size);
            if n == 0 {
                return Err(bad("--pipeline-size must be at least 1"));
            }
            opts.aimd = AimdOptions::fixed(f64::from(n));
        }
        PipelineType::Aimd => {
            opts.aimd = AimdOptions {
                initial_cwnd: args.init_cwnd,
                initial_ssthresh: ssthresh,
                max_cwnd: args.max_cwnd,
                ai_step: args.aimd_step,
                md_coef: factor(args.aimd_beta, "--aimd-beta")?,
                conservative: !args.disable_cwa,
                reset_to_initial: args.reset_cwnd_to_init,
                ..AimdOptions::default()
            };
        }
        PipelineType::Cubic => {
            opts.cubic = Some(CubicOptions {
                initial_cwnd: args.init_cwnd,
                initial_ssthresh: ssthresh,
                max_cwnd: args.max_cwnd,
                beta: factor(args.cubic_beta, "--cubic-beta")?,
                fast_convergence: args.fast_conv,
                conservative: !args.disable_cwa,
            });
        }
    }
    // Enough for a full window of segments waiting on one lost segment.
    let max_window = match pipeline {
        PipelineType::Fixed => opts.aimd.max_cwnd,
        _ => args.max_cwnd,
    };
    opts.max_reorder = (max_window as u64).saturating_mul(4).max(64);
    Ok(opts)
}

/// What `-v` prints before fetching: the pipeline and its parameters, as ndncatchunks does.
fn describe_pipeline(opts: &FetchOptions) -> String {
    let mut s = format!(
        "Pipeline parameters:\n\tInterest lifetime = {} ms\n\tMax retries = {}\n",
        opts.lifetime_ms, opts.max_retries
    );
    match (&opts.cubic, opts.aimd.fixed) {
        (Some(c), _) => {
            let _ = writeln!(
                s,
                "\tCUBIC: initial cwnd = {}, initial ssthresh = {}, max cwnd = {}, beta = {}, \
                 fast convergence = {}",
                c.initial_cwnd,
                c.initial_ssthresh,
                c.max_cwnd,
                c.beta,
                if c.fast_convergence { "yes" } else { "no" }
            );
        }
        (None, true) => {
            let _ = writeln!(s, "\tFixed pipeline size = {}", opts.aimd.max_cwnd);
        }
        (None, false) => {
            let a = &opts.aimd;
            let _ = writeln!(
                s,
                "\tAIMD: initial cwnd = {}, initial ssthresh = {}, max cwnd = {}, step = {}, \
                 beta = {}",
                a.initial_cwnd, a.initial_ssthresh, a.max_cwnd, a.ai_step, a.md_coef
            );
        }
    }
    let _ = writeln!(
        s,
        "\tCongestion marks: {}",
        if opts.ignore_congestion_marks {
            "ignored"
        } else {
            "reacted to"
        }
    );
    s
}

/// A writer that remembers whether a write failed (to tell the output's failure from the
/// forwarder's in `get`'s exit status).
struct Watched<W> {
    inner: W,
    failed: bool,
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.failed |= r.is_err();
        r
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.failed |= r.is_err();
        r
    }
}

/// `get`'s exit status for a fetch that failed: ndncatchunks' (2 for bad usage, 3 for an
/// application-level Nack of a segment, 4 for a file it cannot write, 1 for anything else, a
/// timeout, a network Nack or an application Nack of the metadata included).
fn get_failure(e: Error, output_failed: bool) -> Failure {
    let code = match &e {
        _ if output_failed => EXIT_GET_FILE,
        Error::Config(_) => 2,
        Error::ApplicationNack { .. } => EXIT_GET_APP_NACK,
        _ => 1,
    };
    Failure(code, e.to_string())
}

fn get_inner(args: &GetArgs) -> Result<(), Failure> {
    let name = parse_name(&args.name, "name")?;
    check_naming_convention(args.naming_convention.as_deref())?;
    let opts = fetch_options(args)?;
    if args.verbose && !args.quiet {
        eprint!("{}", describe_pipeline(&opts));
    }
    let to_stdout = args.output.as_os_str() == "-";
    let mut log = match opts.aimd.fixed && opts.cubic.is_none() {
        true => None,
        false => {
            crate::tools_log::ChunksLog::open(args.log_cwnd.as_deref(), args.log_rtt.as_deref())?
        }
    };
    // The files first, as ndncatchunks opens its logs before it fetches.
    let inner: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout().lock())
    } else {
        let f = std::fs::File::create(&args.output).map_err(|e| {
            Failure(
                EXIT_GET_FILE,
                format!("cannot create {}: {e}", args.output.display()),
            )
        })?;
        Box::new(std::io::BufWriter::new(f))
    };
    let mut sink = Watched {
        inner,
        failed: false,
    };
    let mut face = connect(&args.transport).inspect_err(|_| {
        if !to_stdout {
            let _ = std::fs::remove_file(&args.output);
        }
    })?;
    let show_bar = !args.no_progress && !args.quiet && std::io::stderr().is_terminal();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut on_progress = |p: &client::Progress| {
        if !show_bar {
            return;
        }
        let b = bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(p.total_segments);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} segments {msg} {elapsed}",
            ) {
                b.set_style(style);
            }
            b
        });
        b.set_position(p.segments);
        b.set_message(indicatif::HumanBytes(p.bytes).to_string());
    };
    let mut record = |e: &client::FetchEvent| log.iter_mut().for_each(|l| l.record(e));
    let logger: Option<&mut dyn FnMut(&client::FetchEvent)> =
        match args.log_cwnd.is_some() || args.log_rtt.is_some() {
            true => Some(&mut record),
            false => None,
        };
    let r = client::get_logged(&mut face, &name, &opts, &mut sink, &mut on_progress, logger);
    if let Some(b) = bar.take() {
        b.finish_and_clear();
    }
    // The rest of the output (a BufWriter's) is written here, its failure seen.
    let flushed = sink.flush();
    let output_failed = sink.failed;
    drop(sink);
    if let Some(l) = log {
        l.finish()?;
    }
    let r = r.and_then(|s| {
        flushed.map_err(|e| Error::io("cannot write the output", e))?;
        Ok(s)
    });
    let stats = match r {
        Ok(s) => s,
        Err(e) => {
            if !to_stdout {
                let _ = std::fs::remove_file(&args.output);
            }
            return Err(get_failure(e, output_failed));
        }
    };
    if args.quiet {
        return Ok(());
    }
    let text = render_stats(&stats, args.json);
    if to_stdout {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The summary `get` prints: goodput, RTT min/avg/p50/p99/max and the counters.
fn render_stats(s: &Stats, json: bool) -> String {
    if json {
        let rtt = s.rtt.map(|r| {
            json!({
                "samples": r.count,
                "min": ms(r.min), "avg": ms(r.avg), "p50": ms(r.p50), "p99": ms(r.p99),
                "max": ms(r.max),
            })
        });
        return format!(
            "{}\n",
            json!({
                "name": s.versioned_name.to_string(),
                "segments": s.segments,
                "bytes": s.bytes,
                "elapsed_s": s.elapsed.as_secs_f64(),
                "goodput_bps": s.goodput_bps(),
                "rtt_ms": rtt,
                "interests": s.interests,
                "retransmissions": s.retransmissions,
                "timeouts": s.timeouts,
                "nacks": s.nacks,
                "congestion_marks": s.congestion_marks,
                "window_decreases": s.window_decreases,
                "final_cwnd": s.final_cwnd,
            })
        );
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "fetched {}: {} segments, {} bytes in {:.3} s",
        s.versioned_name,
        s.segments,
        s.bytes,
        s.elapsed.as_secs_f64()
    );
    let _ = write!(out, "goodput {:.3} Mbit/s", s.goodput_bps() / 1e6);
    match s.rtt {
        Some(r) => {
            let _ = writeln!(
                out,
                "; RTT min/avg/p50/p99/max = {:.3}/{:.3}/{:.3}/{:.3}/{:.3} ms ({} samples)",
                ms(r.min),
                ms(r.avg),
                ms(r.p50),
                ms(r.p99),
                ms(r.max),
                r.count
            );
        }
        None => out.push_str("; no RTT sample\n"),
    }
    let _ = writeln!(
        out,
        "interests {}, retransmissions {}, timeouts {}, nacks {}, congestion marks {}, \
         window decreases {}, final cwnd {:.1}",
        s.interests,
        s.retransmissions,
        s.timeouts,
        s.nacks,
        s.congestion_marks,
        s.window_decreases,
        s.final_cwnd
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use client::RttSummary;

    #[derive(clap::Parser)]
    struct Get {
        #[command(flatten)]
        args: GetArgs,
    }

    fn opts(line: &str) -> Result<FetchOptions, String> {
        let argv = ["get", "/x", "-o", "/dev/null"]
            .into_iter()
            .chain(line.split_whitespace());
        let g = <Get as clap::Parser>::try_parse_from(argv).map_err(|e| e.to_string())?;
        fetch_options(&g.args).map_err(|Failure(_, m)| m)
    }

    #[test]
    fn get_flags_as_ndncatchunks() {
        // CUBIC by default, beta 0.7, fast convergence off, RTO k = 8.
        let o = opts("").unwrap();
        let c = o.cubic.unwrap();
        assert_eq!(
            (c.beta, c.fast_convergence, c.initial_cwnd),
            (0.7, false, 2.0)
        );
        assert_eq!((o.rtt.k, o.max_retries, o.lifetime_ms), (8.0, 15, 4000));
        assert!(o.version_discovery && !o.must_be_fresh);
        let o = opts("-p aimd --aimd-step 2 --aimd-beta 0.6 --init-ssthresh 10 -r -1 -l 900 -f -D")
            .unwrap();
        assert!(o.cubic.is_none() && !o.aimd.fixed);
        assert_eq!(
            (o.aimd.ai_step, o.aimd.md_coef, o.aimd.initial_ssthresh),
            (2.0, 0.6, 10.0)
        );
        assert_eq!((o.max_retries, o.lifetime_ms), (u32::MAX, 900));
        assert!(o.must_be_fresh && !o.version_discovery);
        let o = opts("--pipeline-type fixed --pipeline-size 6").unwrap();
        assert!(o.cubic.is_none() && o.aimd.fixed);
        assert_eq!(o.aimd.initial_cwnd, 6.0);
        let o = opts("--fixed-window 3").unwrap();
        assert_eq!((o.aimd.fixed, o.aimd.initial_cwnd), (true, 3.0));
        let a = opts("-p aimd --disable-cwa --reset-cwnd-to-init")
            .unwrap()
            .aimd;
        assert!(!a.conservative && a.reset_to_initial);
        assert!(opts("").unwrap().cubic.unwrap().conservative);
        let c = opts("--cubic-beta 0.8 --fast-conv --init-cwnd 4")
            .unwrap()
            .cubic
            .unwrap();
        assert_eq!(
            (c.beta, c.fast_convergence, c.initial_cwnd),
            (0.8, true, 4.0)
        );
        assert_eq!(
            opts("--cubic-beta 1.5").unwrap_err(),
            "--cubic-beta must be a number between 0 and 1"
        );
        assert_eq!(
            opts("-p fixed -s 0").unwrap_err(),
            "--pipeline-size must be at least 1"
        );
        assert!(opts("-r -2").is_err());
        assert!(opts("-p reno").is_err());
        assert!(describe_pipeline(&opts("-p aimd").unwrap()).contains("AIMD: initial cwnd = 2"));
    }

    fn stats() -> Stats {
        Stats {
            versioned_name: Name::from_uri("/f/v=1").unwrap(),
            bytes: 1_000_000,
            segments: 125,
            elapsed: Duration::from_secs(2),
            interests: 124,
            retransmissions: 3,
            timeouts: 2,
            nacks: 1,
            congestion_marks: 0,
            window_decreases: 2,
            final_cwnd: 12.5,
            rtt: Some(RttSummary {
                count: 121,
                min: Duration::from_micros(500),
                avg: Duration::from_micros(1500),
                p50: Duration::from_micros(1200),
                p99: Duration::from_micros(9000),
                max: Duration::from_micros(12_000),
            }),
        }
    }

    #[test]
    fn stats_text_and_json() {
        let t = render_stats(&stats(), false);
        assert_eq!(
            t,
            "fetched /f/v=1: 125 segments, 1000000 bytes in 2.000 s\n\
             goodput 4.000 Mbit/s; RTT min/avg/p50/p99/max = \
             0.500/1.500/1.200/9.000/12.000 ms (121 samples)\n\
             interests 124, retransmissions 3, timeouts 2, nacks 1, congestion marks 0, \
             window decreases 2, final cwnd 12.5\n"
        );
        let j: serde_json::Value =
            serde_json::from_str(render_stats(&stats(), true).trim()).unwrap();
        assert_eq!(j["goodput_bps"], 4_000_000.0);
        assert_eq!(j["rtt_ms"]["p99"], 9.0);
        assert_eq!(j["retransmissions"], 3);
        let mut none = stats();
        none.rtt = None;
        assert!(render_stats(&none, false).contains("no RTT sample"));
    }

    #[test]
    fn failure_exit_codes() {
        let code = |e: Error| Failure::from(e).0;
        assert_eq!(code(Error::Config("x".into())), 2);
        assert_eq!(code(Error::Timeout("x".into())), EXIT_TIMEOUT);
        let nack = Error::Nack {
            name: Name::new(),
            reason: None,
        };
        assert_eq!(code(nack), EXIT_NACK);
        assert_eq!(code(Error::Closed), 1);
        // get: ndncatchunks' statuses, 1 for a timeout or a Nack, 4 for the output.
        let get = |e: Error, out: bool| get_failure(e, out).0;
        let nack = || Error::Nack {
            name: Name::new(),
            reason: None,
        };
        assert_eq!(get(Error::Timeout("x".into()), false), 1);
        assert_eq!(get(nack(), false), 1);
        let app_nack = Error::ApplicationNack {
            name: Name::new(),
            content_bytes: 0,
        };
        assert_eq!(get(app_nack, false), EXIT_GET_APP_NACK);
        assert_eq!(get(Error::Protocol("x".into()), false), 1);
        assert_eq!(get(Error::Config("x".into()), false), 2);
        let io = || Error::io("cannot write the output", std::io::ErrorKind::Other.into());
        assert_eq!(get(io(), true), EXIT_GET_FILE);
        assert_eq!(get(io(), false), 1);
        assert!(parse_name("/", "name").is_err());
        assert!(parse_name("/a/%zz", "name").is_err());
    }
}
