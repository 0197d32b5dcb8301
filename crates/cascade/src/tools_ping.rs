//! `cascade ping` and `cascade pingserver`: ndn-tools' ndnping and ndnpingserver (ndnping
//! protocol version 1), with their names, flags, output and exit statuses.
//!
//! A probe Interest is named `<prefix>/ping[/<identifier>]/<sequence number>`, the number a
//! generic component holding its decimal string, with MustBeFresh (unless `--cache`) and the
//! timeout as InterestLifetime. The server registers `<prefix>/ping` and answers every Interest
//! under it with a Data of the Interest's name, a FreshnessPeriod (1 s by default) and `--size`
//! bytes of content (`a` repeated), signed DigestSha256.
//!
//! `ping` exits 0 when every probe was answered with Data, 1 when any was lost (timeout or Nack),
//! 2 on bad arguments or a failure talking to the forwarder, as ndnping does.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use client::error::nack_reason_str;
use client::producer::POLL;
use client::{Face, Received};
use wire::{Component, Data, Interest, MetaInfo, Name};

use crate::tools::{bad, connect, finish, parse_name, register, stop_flag, Failure, TransportArg};

/// `cascade ping` arguments (ndnping's).
#[derive(Args, Debug)]
pub struct PingArgs {
    /// Prefix to send pings to (the server's prefix, without `/ping`).
    prefix: String,
    /// Ping interval, in milliseconds (at least 1).
    #[arg(short = 'i', long, default_value_t = 1000, value_name = "MS")]
    interval: u64,
    /// Ping timeout (InterestLifetime), in milliseconds.
    #[arg(short = 'o', long, default_value_t = 4000, value_name = "MS")]
    timeout: u64,
    /// Number of pings to send (default: no limit; stop with SIGINT).
    #[arg(short = 'c', long)]
    count: Option<u64>,
    /// Starting sequence number, incremented by 1 after each Interest (default: random).
    #[arg(short = 'n', long)]
    start: Option<u64>,
    /// Identifier added to the Interest names before the sequence numbers (alphanumeric).
    #[arg(short = 'p', long)]
    identifier: Option<String>,
    /// Allow routers to return stale Data from cache (no MustBeFresh).
    #[arg(short = 'a', long)]
    cache: bool,
    /// Print a timestamp with every message.
    #[arg(short = 't', long)]
    timestamp: bool,
    #[command(flatten)]
    transport: TransportArg,
}

/// `cascade pingserver` arguments (ndnpingserver's).
#[derive(Args, Debug)]
pub struct PingServerArgs {
    /// Prefix to answer pings under (`<prefix>/ping` is registered).
    prefix: String,
    /// FreshnessPeriod of the ping responses, in milliseconds.
    #[arg(short = 'f', long, default_value_t = 1000, value_name = "MS")]
    freshness: u64,
    /// Most pings to satisfy before exiting (0: no limit).
    #[arg(short = 'p', long, default_value_t = 0)]
    satisfy: u64,
    /// Size of the response payload, in bytes.
    #[arg(short = 's', long, default_value_t = 0, value_name = "BYTES")]
    size: usize,
    /// Prepend a timestamp to each log message.
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Do not print a message for each ping received.
    #[arg(short = 'q', long)]
    quiet: bool,
    #[command(flatten)]
    transport: TransportArg,
}

/// The name of probe `seq`: `<prefix>/ping[/<identifier>]/<seq as decimal>`.
pub fn ping_name(prefix: &Name, identifier: Option<&str>, seq: u64) -> Name {
    let mut n = prefix.clone().with_str("ping");
    if let Some(id) = identifier {
        n = n.with_str(id);
    }
    n.with(Component::generic(seq.to_string()))
}

/// ndnping's counters and RTT sums.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PingStats {
    /// Probes sent.
    pub sent: u64,
    /// Probes answered with Data.
    pub received: u64,
    /// Probes answered with a Nack.
    pub nacked: u64,
    rtt_min_ms: f64,
    rtt_max_ms: f64,
    rtt_sum_ms: f64,
    rtt_sq_sum_ms2: f64,
}

impl PingStats {
    /// Adds a Data's round-trip time.
    pub fn add_rtt(&mut self, rtt_ms: f64) {
        if self.received == 0 || rtt_ms < self.rtt_min_ms {
            self.rtt_min_ms = rtt_ms;
        }
        self.rtt_max_ms = self.rtt_max_ms.max(rtt_ms);
        self.received += 1;
        self.rtt_sum_ms += rtt_ms;
        self.rtt_sq_sum_ms2 += rtt_ms * rtt_ms;
    }

    /// ndnping's loss and Nack percentages (`, L% lost, N% nacked`): a probe Nacked is not
    /// lost. Empty before the first probe.
    fn rates(&self) -> String {
        if self.sent == 0 {
            return String::new();
        }
        let pct = |n: u64| g(n as f64 * 100.0 / self.sent as f64);
        let lost = self.sent.saturating_sub(self.received + self.nacked);
        format!(", {}% lost, {}% nacked", pct(lost), pct(self.nacked))
    }

    /// `min/avg/max/mdev = ... ms` once any Data came.
    fn rtts(&self) -> Option<String> {
        if self.received == 0 {
            return None;
        }
        let n = self.received as f64;
        let avg = self.rtt_sum_ms / n;
        let mdev = (self.rtt_sq_sum_ms2 / n - avg * avg).max(0.0).sqrt();
        Some(format!(
            "min/avg/max/mdev = {}/{}/{}/{} ms",
            g(self.rtt_min_ms),
            g(avg),
            g(self.rtt_max_ms),
            g(mdev)
        ))
    }

    /// ndnping's full summary: counts, loss and Nack percentages, RTT sum, and
    /// min/avg/max/mdev when any Data came.
    pub fn render(&self, prefix: &Name) -> String {
        let mut o = format!(
            "\n--- {prefix} ping statistics ---\n{} packets transmitted, {} received, {} nacked{}, time {} ms",
            self.sent,
            self.received,
            self.nacked,
            self.rates(),
            g(self.rtt_sum_ms)
        );
        if let Some(r) = self.rtts() {
            let _ = write!(o, "\nrtt {r}");
        }
        o.push('\n');
        o
    }

    /// ndnping's short summary, printed on SIGQUIT: `R/S packets`, the rates, the RTTs.
    pub fn summary_line(&self) -> String {
        let mut o = format!("{}/{} packets{}", self.received, self.sent, self.rates());
        if let Some(r) = self.rtts() {
            let _ = write!(o, ", {r}");
        }
        o.push('\n');
        o
    }
}

/// A number with at most 6 significant digits and no trailing zeros (C++ stream default).
pub(crate) fn g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let int_digits = x.abs().log10().floor() as i32 + 1;
    let decimals = (6 - int_digits).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `20240101T120000.123456 - ` (UTC, as ndn-cxx's `toIsoString`) when `on`.
fn stamp(on: bool) -> String {
    if !on {
        return String::new();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as libc::time_t;
    // SAFETY: gmtime_r writes only into `tm`, which lives on this stack frame.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::gmtime_r(&secs, &mut tm) }.is_null() {
        return String::new();
    }
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}.{:06} - ",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        now.subsec_micros()
    )
}

/// Failures of ping tools exit 2, as ndnping's do.
fn as_ping_failure(f: Failure) -> Failure {
    Failure(2, f.1)
}

/// Runs `cascade ping`.
pub fn ping(args: &PingArgs) -> ExitCode {
    match ping_inner(args).map_err(as_ping_failure) {
        Ok(code) => ExitCode::from(code),
        Err(f) => finish("ping", Err(f)),
    }
}

struct Pending {
    seq: u64,
    name: Name,
    sent_at: Instant,
}

fn ping_inner(args: &PingArgs) -> Result<u8, Failure> {
    let prefix = parse_name(&args.prefix, "prefix")?;
    if args.interval == 0 {
        return Err(bad("--interval must be at least 1 ms"));
    }
    if args.timeout == 0 {
        return Err(bad("--timeout must be at least 1 ms"));
    }
    if args.count == Some(0) {
        return Err(bad("--count must be positive"));
    }
    if let Some(id) = &args.identifier {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(bad("--identifier must be alphanumeric"));
        }
    }
    // SIGQUIT prints the short summary and goes on (ndnping's); blocked before the stop
    // flag's thread starts, and polled by the loop.
    let quit = crate::signals::StopSignals::block_quit();
    let stop = stop_flag()?;
    let mut face = connect(&args.transport)?;
    println!("PING {prefix}");
    let st = ping_loop(&mut face, &prefix, args, &stop, &quit)?;
    print!("{}", st.render(&prefix));
    Ok(u8::from(st.received != st.sent))
}

fn ping_loop(
    face: &mut Face,
    prefix: &Name,
    args: &PingArgs,
    stop: &AtomicBool,
    quit: &crate::signals::StopSignals,
) -> Result<PingStats, Failure> {
    let interval = Duration::from_millis(args.interval);
    let timeout = Duration::from_millis(args.timeout);
    let mut seq = args.start.unwrap_or_else(|| {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&client::random_nonce());
        b[4..].copy_from_slice(&client::random_nonce());
        u64::from_le_bytes(b)
    });
    let mut st = PingStats::default();
    // Probes in flight, oldest first; bounded by timeout / interval + 1.
    let mut pending: VecDeque<Pending> = VecDeque::new();
    let mut next_send = Instant::now();
    let more = |st: &PingStats| args.count.is_none_or(|c| st.sent < c);
    while !stop.load(Ordering::Relaxed) && (more(&st) || !pending.is_empty()) {
        let now = Instant::now();
        if more(&st) && now >= next_send {
            let name = ping_name(prefix, args.identifier.as_deref(), seq);
            let mut i = Interest::new(name.clone(), client::random_nonce());
            i.must_be_fresh = !args.cache;
            i.lifetime_ms = Some(args.timeout);
            face.send_interest(&i)?;
            pending.push_back(Pending {
                seq,
                name,
                sent_at: now,
            });
            st.sent += 1;
            seq = seq.wrapping_add(1);
            next_send += interval;
        }
        let mut deadline = now + POLL;
        if more(&st) {
            deadline = deadline.min(next_send);
        }
        if let Some(p) = pending.front() {
            deadline = deadline.min(p.sent_at + timeout);
        }
        let got = face.recv_until(deadline)?;
        let now = Instant::now();
        let answered = |n: &Name, pending: &mut VecDeque<Pending>| {
            let at = pending.iter().position(|p| p.name == *n)?;
            pending.remove(at)
        };
        match got {
            Some(Received::Data(d)) => {
                if let Some(p) = answered(&d.name, &mut pending) {
                    let rtt_ms = (now - p.sent_at).as_secs_f64() * 1e3;
                    st.add_rtt(rtt_ms);
                    println!(
                        "{}content from {prefix}: seq={} time={} ms",
                        stamp(args.timestamp),
                        p.seq,
                        g(rtt_ms)
                    );
                }
            }
            Some(Received::Nack(n)) => {
                if let Some(p) = answered(&n.interest.name, &mut pending) {
                    st.nacked += 1;
                    println!(
                        "{}nack from {prefix}: seq={} time={} ms reason={}",
                        stamp(args.timestamp),
                        p.seq,
                        g((now - p.sent_at).as_secs_f64() * 1e3),
                        nack_reason_str(n.reason)
                    );
                }
            }
            Some(Received::Interest(_)) | None => {}
        }
        if quit.wait_timeout(Duration::ZERO).is_some() {
            print!("{}", st.summary_line());
        }
        while pending.front().is_some_and(|p| p.sent_at + timeout <= now) {
            if let Some(p) = pending.pop_front() {
                println!(
                    "{}timeout from {prefix}: seq={}",
                    stamp(args.timestamp),
                    p.seq
                );
            }
        }
    }
    Ok(st)
}

/// Runs `cascade pingserver`.
pub fn pingserver(args: &PingServerArgs) -> ExitCode {
    finish(
        "pingserver",
        pingserver_inner(args).map_err(as_ping_failure),
    )
}

/// The encoded response to a probe named `name`.
pub fn ping_response(name: &Name, freshness_ms: u64, payload: &[u8]) -> Vec<u8> {
    let mut d = Data::new(name.clone(), payload.to_vec());
    d.meta_info = Some(MetaInfo {
        freshness_ms: Some(freshness_ms),
        ..MetaInfo::default()
    });
    d.sign_digest_sha256();
    d.to_wire()
}

fn pingserver_inner(args: &PingServerArgs) -> Result<(), Failure> {
    let prefix = parse_name(&args.prefix, "prefix")?;
    let served = prefix.clone().with_str("ping");
    let payload = vec![b'a'; args.size.min(wire::MAX_NDN_PACKET_BYTES + 1)];
    let probe = ping_response(&served.clone().with_str("0"), args.freshness, &payload);
    if probe.len() > wire::MAX_NDN_PACKET_BYTES {
        return Err(bad(format!(
            "--size {} makes Data above the {}-byte packet limit",
            args.size,
            wire::MAX_NDN_PACKET_BYTES
        )));
    }
    let stop = stop_flag()?;
    let mut face = connect(&args.transport)?;
    register(&mut face, &served)?;
    println!("PING SERVER {prefix}");
    let mut processed = 0u64;
    while !stop.load(Ordering::Relaxed) && (args.satisfy == 0 || processed < args.satisfy) {
        let Some(Received::Interest(i)) = face.recv(POLL)? else {
            continue;
        };
        let name = &i.interest.name;
        if name.len() <= served.len() || !served.is_prefix_of(name) {
            continue;
        }
        if !args.quiet {
            let last = name.components.last().map(|c| Name::new().with(c.clone()));
            let seq = last.map(|n| n.to_string()).unwrap_or_default();
            println!(
                "{}interest received: seq={}",
                stamp(args.timestamp),
                seq.trim_start_matches('/')
            );
        }
        let data = ping_response(name, args.freshness, &payload);
        face.put_data(&data, i.pit_token)?;
        processed += 1;
    }
    println!("\n--- {prefix} ping server statistics ---\n{processed} packets processed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_names_are_ndnpings() {
        let p = Name::from_uri("/a/b").unwrap();
        assert_eq!(ping_name(&p, None, 42).to_string(), "/a/b/ping/42");
        assert_eq!(ping_name(&p, Some("x1"), 7).to_string(), "/a/b/ping/x1/7");
        let c = ping_name(&p, None, 42).components[3].clone();
        assert_eq!(c, Component::generic(b"42".to_vec()));
    }

    #[test]
    fn summary_counts_loss_and_rtt() {
        let p = Name::from_uri("/a").unwrap();
        let mut st = PingStats {
            sent: 4,
            nacked: 1,
            ..PingStats::default()
        };
        st.add_rtt(1.0);
        st.add_rtt(3.0);
        assert_eq!(
            st.render(&p),
            "\n--- /a ping statistics ---\n4 packets transmitted, 2 received, 1 nacked, \
             25% lost, 25% nacked, time 4 ms\nrtt min/avg/max/mdev = 1/2/3/1 ms\n"
        );
        assert_eq!(
            st.summary_line(),
            "2/4 packets, 25% lost, 25% nacked, min/avg/max/mdev = 1/2/3/1 ms\n"
        );
        assert_eq!(PingStats::default().summary_line(), "0/0 packets\n");
        let none = PingStats {
            sent: 3,
            ..PingStats::default()
        };
        assert!(none.render(&p).contains("100% lost"));
        assert!(!none.render(&p).contains("rtt"));
        assert_eq!(g(33.333_333_33), "33.3333");
        assert_eq!(g(0.123_456_78), "0.123457");
        assert_eq!(g(1500.0), "1500");
    }

    #[test]
    fn response_shape() {
        let n = Name::from_uri("/a/ping/5").unwrap();
        let w = ping_response(&n, 1000, b"aaa");
        let d = wire::DataView::decode(&w, &wire::Limits::default()).unwrap();
        assert_eq!(d.name().to_string(), "/a/ping/5");
        assert_eq!(d.freshness_ms(), Some(1000));
        assert_eq!(d.content(), Some(&b"aaa"[..]));
        assert!(d.verify_digest_sha256());
    }
}
