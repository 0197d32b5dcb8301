//! `cascade ctl`, and the binary run as `nfdc`: manage a running forwarder with nfdc's (NFD
//! 24.07) command line, output and exit statuses, through NFD's management protocol only (so
//! it works against NFD as well as Cascade).
//!
//! `cascade ctl route add /a 300 cost 10` is `nfdc route add /a 300 cost 10`. Two options of
//! Cascade's own go anywhere on the line: `--transport URI` (which forwarder) and `--json` (one
//! JSON object a line instead of nfdc's text). [`client::nfdc`] parses, issues the commands and
//! renders the answers.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;
use client::nfdc::{self, Failure};

/// `cascade ctl` arguments.
#[derive(Args, Debug)]
pub struct CtlArgs {
    /// Forwarder to talk to (unix:///path, tcp://host:port, udp://host:port); default:
    /// NDN_CLIENT_TRANSPORT, then client.conf, then unix:///run/nfd/nfd.sock. Also taken
    /// anywhere after the command.
    #[arg(long, value_name = "URI")]
    transport: Option<String>,
    /// Print JSON (one object a line) instead of nfdc's text. Also taken anywhere after the
    /// command.
    #[arg(long)]
    json: bool,
    /// nfdc's command line: `status`, `face list|show|create|destroy`, `channel list`,
    /// `fib list`, `route list|show|add|remove`, `strategy list|show|set|unset`,
    /// `cs info|config|erase`, `help` (e.g. `route add /example 300 cost 10`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<String>,
}

/// Runs `cascade ctl`.
pub fn run(args: &CtlArgs) -> ExitCode {
    run_line(args.command.clone(), args.transport.clone(), args.json)
}

/// Runs the binary as `nfdc` with `argv` (the program name left out).
pub fn run_as_nfdc(argv: Vec<String>) -> ExitCode {
    run_line(argv, None, false)
}

/// Takes `--transport URI`, `--transport=URI` and `--json` out of `tokens`.
fn take_options(
    tokens: Vec<String>,
    transport: &mut Option<String>,
    json: &mut bool,
) -> Result<Vec<String>, Failure> {
    let mut rest = Vec::with_capacity(tokens.len());
    let mut it = tokens.into_iter();
    while let Some(t) = it.next() {
        if t == "--json" {
            *json = true;
        } else if t == "--transport" {
            let uri = it
                .next()
                .ok_or_else(|| Failure::new(nfdc::status::USAGE, "--transport: URI is missing"))?;
            *transport = Some(uri);
        } else if let Some(uri) = t.strip_prefix("--transport=") {
            *transport = Some(uri.to_owned());
        } else {
            rest.push(t);
        }
    }
    Ok(rest)
}

fn run_line(tokens: Vec<String>, mut transport: Option<String>, mut json: bool) -> ExitCode {
    // The arguments are checked before connecting.
    let result = take_options(tokens, &mut transport, &mut json)
        .and_then(|t| nfdc::parse(&t))
        .and_then(|c| nfdc::run(c, transport.as_deref(), json));
    match result {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(Failure {
            status,
            message,
            output,
        }) => {
            let _ = std::io::stdout().lock().write_all(output.as_bytes());
            eprintln!("{message}");
            ExitCode::from(status)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn options_go_anywhere() {
        let (mut t, mut j) = (None, false);
        let rest = take_options(
            v("route --json list --transport unix:///x.sock"),
            &mut t,
            &mut j,
        )
        .unwrap();
        assert_eq!(
            (rest, t.as_deref(), j),
            (v("route list"), Some("unix:///x.sock"), true)
        );
        let mut t = None;
        take_options(v("--transport=tcp://h:1 status"), &mut t, &mut j).unwrap();
        assert_eq!(t.as_deref(), Some("tcp://h:1"));
        let e = take_options(v("status --transport"), &mut t, &mut j).unwrap_err();
        assert_eq!(e.status, 2);
    }
}
