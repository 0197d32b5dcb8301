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
use client::producer::{segment_data, serve_content, serve_one, ServeOptions};
use client::{Error, Face, FetchOptions, Outcome, Stats};
use serde_json::json;
use wire::{Data, Interest, MetaInfo, Name};

use crate::signals::StopSignals;

/// Exit status of a timeout.
const EXIT_TIMEOUT: u8 = 3;
/// Exit status of a Nack.
const EXIT_NACK: u8 = 4;

/// The `--transport` option shared by the tools.
#[derive(Args, Debug)]
pub struct TransportArg {
    /// Forwarder to talk to (unix:///path, tcp://host:port, udp://host:port); default:
    /// NDN_CLIENT_TRANSPORT, then client.conf, then unix:///run/nfd/nfd.sock.
    #[arg(long, value_name = "URI")]
    transport: Option<String>,
}

/// `cascade peek` arguments.
#[derive(Args, Debug)]
pub struct PeekArgs {
    /// Name of the Interest.
    name: String,
    /// InterestLifetime in milliseconds.
    #[arg(long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// Set CanBePrefix.
    #[arg(long)]
    can_be_prefix: bool,
    /// Set MustBeFresh.
    #[arg(long)]
    must_be_fresh: bool,
    /// HopLimit.
    #[arg(long)]
    hop_limit: Option<u8>,
    #[command(flatten)]
    transport: TransportArg,
}

/// `cascade poke` arguments.
#[derive(Args, Debug)]
pub struct PokeArgs {
    /// Name of the Data (also the prefix registered).
    name: String,
    /// FreshnessPeriod in milliseconds (default: none, so MustBeFresh Interests are not
    /// answered).
    #[arg(long, value_name = "MS")]
    freshness: Option<u64>,
    /// Give up after this many milliseconds without a matching Interest (default: wait until
    /// SIGINT or SIGTERM).
    #[arg(long, value_name = "MS")]
    timeout: Option<u64>,
    #[command(flatten)]
    transport: TransportArg,
}

/// `cascade put` arguments.
#[derive(Args, Debug)]
pub struct PutArgs {
    /// Name prefix; segments are PREFIX/v=VERSION/seg=N.
    prefix: String,
    /// File to serve.
    file: PathBuf,
    /// Content bytes per segment.
    #[arg(long, default_value_t = client::producer::DEFAULT_SEGMENT_SIZE, value_name = "BYTES")]
    segment_size: usize,
    /// FreshnessPeriod of every segment, in milliseconds.
    #[arg(long, default_value_t = client::producer::DEFAULT_FRESHNESS_MS, value_name = "MS")]
    freshness: u64,
    /// Version number (default: now, in milliseconds since the Unix epoch).
    #[arg(long)]
    version: Option<u64>,
    /// Exit once every segment has been served at least once (default: serve until SIGINT or
    /// SIGTERM).
    #[arg(long)]
    once: bool,
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
    /// InterestLifetime in milliseconds.
    #[arg(long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// Most retransmissions of one segment.
    #[arg(long, default_value_t = 15)]
    max_retries: u32,
    /// Initial congestion window, in Interests.
    #[arg(long, default_value_t = 2.0)]
    init_cwnd: f64,
    /// Largest congestion window, in Interests.
    #[arg(long, default_value_t = 1024.0)]
    max_cwnd: f64,
    /// Do not shrink the window on NDNLPv2 CongestionMarks.
    #[arg(long)]
    ignore_marks: bool,
    /// Keep the window at N Interests: no AIMD (neither marks, Nacks nor timeouts shrink it).
    #[arg(long, value_name = "N")]
    fixed_window: Option<u32>,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Print the statistics as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    transport: TransportArg,
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
            eprintln!("cascade {tool}: {msg}");
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
    let name = parse_name(&args.name, "name")?;
    if args.lifetime == 0 {
        return Err(bad("--lifetime must be at least 1 ms"));
    }
    let mut face = connect(&args.transport)?;
    let mut i = Interest::new(name, client::random_nonce());
    i.can_be_prefix = args.can_be_prefix;
    i.must_be_fresh = args.must_be_fresh;
    i.lifetime_ms = Some(args.lifetime);
    i.hop_limit = args.hop_limit;
    match face.express(&i)? {
        Outcome::Data(d) => {
            let mut out = std::io::stdout().lock();
            out.write_all(d.content())
                .and_then(|()| out.flush())
                .map_err(|e| Failure(1, format!("cannot write stdout: {e}")))
        }
        Outcome::Nack(n) => Err(Failure(
            EXIT_NACK,
            format!("Nack: {}", nack_reason_str(n.reason)),
        )),
        Outcome::Timeout => Err(Failure(EXIT_TIMEOUT, "timeout".into())),
    }
}

/// Runs `cascade poke`.
pub fn poke(args: &PokeArgs) -> ExitCode {
    finish("poke", poke_inner(args))
}

fn poke_inner(args: &PokeArgs) -> Result<(), Failure> {
    let name = parse_name(&args.name, "name")?;
    let limit = wire::MAX_NDN_PACKET_BYTES;
    let mut content = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit as u64 + 1)
        .read_to_end(&mut content)
        .map_err(|e| Failure(1, format!("cannot read stdin: {e}")))?;
    let mut d = Data::new(name.clone(), content);
    d.meta_info = args.freshness.map(|f| MetaInfo {
        freshness_ms: Some(f),
        ..MetaInfo::default()
    });
    d.sign_digest_sha256();
    let wire = d.to_wire();
    if wire.len() > limit {
        return Err(bad(format!(
            "the Data would be {} bytes, above the {limit}-byte packet limit",
            wire.len()
        )));
    }
    let stop = stop_flag()?;
    let mut face = connect(&args.transport)?;
    register(&mut face, &name)?;
    let fresh = args.freshness.is_some_and(|f| f > 0);
    let timeout = args.timeout.map(Duration::from_millis);
    match serve_one(&mut face, &name, &wire, fresh, false, timeout, &stop)? {
        Some(_) => Ok(()),
        None if timeout.is_some() && !stop.load(std::sync::atomic::Ordering::Relaxed) => Err(
            Failure(EXIT_TIMEOUT, format!("timeout: no Interest for {name}")),
        ),
        None => Err(Failure(1, "interrupted before an Interest came".into())),
    }
}

/// Runs `cascade put`.
pub fn put(args: &PutArgs) -> ExitCode {
    finish("put", put_inner(args))
}

fn put_inner(args: &PutArgs) -> Result<(), Failure> {
    let prefix = parse_name(&args.prefix, "prefix")?;
    if args.segment_size == 0 {
        return Err(bad("--segment-size must be at least 1"));
    }
    let version = args.version.unwrap_or_else(client::unix_time_ms);
    // The largest segment must fit a packet.
    let probe = segment_data(
        &prefix,
        version,
        &vec![0u8; args.segment_size.min(wire::MAX_NDN_PACKET_BYTES + 1)],
        args.segment_size,
        args.freshness,
    );
    let biggest = probe[0].len();
    if biggest > wire::MAX_NDN_PACKET_BYTES {
        return Err(bad(format!(
            "--segment-size {} makes {biggest}-byte Data, above the {}-byte packet limit",
            args.segment_size,
            wire::MAX_NDN_PACKET_BYTES
        )));
    }
    let content = std::fs::read(&args.file)
        .map_err(|e| Failure(1, format!("cannot read {}: {e}", args.file.display())))?;
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
    let segments = content.len().div_ceil(args.segment_size).max(1);
    eprintln!(
        "cascade put: serving {prefix}/v={version}: {} bytes in {segments} segments",
        content.len()
    );
    let st = serve_content(&mut face, &prefix, &content, &opts, &stop)?;
    eprintln!(
        "cascade put: {} Interests, {} Data sent ({} RDR metadata), {} unanswered",
        st.interests, st.data_sent, st.metadata_sent, st.unanswered
    );
    Ok(())
}

/// Runs `cascade get`.
pub fn get(args: &GetArgs) -> ExitCode {
    finish("get", get_inner(args))
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
    let aimd = match args.fixed_window {
        Some(0) => return Err(bad("--fixed-window must be at least 1")),
        Some(n) => AimdOptions::fixed(f64::from(n)),
        None => AimdOptions {
            initial_cwnd: args.init_cwnd,
            max_cwnd: args.max_cwnd,
            ..AimdOptions::default()
        },
    };
    Ok(FetchOptions {
        lifetime_ms: args.lifetime,
        max_retries: args.max_retries,
        aimd,
        ignore_congestion_marks: args.ignore_marks,
        // Enough for a full window of segments waiting on one lost segment.
        max_reorder: (aimd.max_cwnd as u64).saturating_mul(4).max(64),
        ..FetchOptions::default()
    })
}

fn get_inner(args: &GetArgs) -> Result<(), Failure> {
    let name = parse_name(&args.name, "name")?;
    let opts = fetch_options(args)?;
    let to_stdout = args.output.as_os_str() == "-";
    let mut face = connect(&args.transport)?;
    let mut sink: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout().lock())
    } else {
        let f = std::fs::File::create(&args.output)
            .map_err(|e| Failure(1, format!("cannot create {}: {e}", args.output.display())))?;
        Box::new(std::io::BufWriter::new(f))
    };
    let show_bar = !args.no_progress && std::io::stderr().is_terminal();
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
    let r = client::get_with_progress(&mut face, &name, &opts, &mut sink, &mut on_progress);
    if let Some(b) = bar.take() {
        b.finish_and_clear();
    }
    drop(sink);
    let stats = match r {
        Ok(s) => s,
        Err(e) => {
            if !to_stdout {
                let _ = std::fs::remove_file(&args.output);
            }
            return Err(e.into());
        }
    };
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
        assert!(parse_name("/", "name").is_err());
        assert!(parse_name("/a/%zz", "name").is_err());
    }
}
