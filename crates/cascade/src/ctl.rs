//! `cascade ctl`, and the binary run as `nfdc`: manage a running forwarder with nfdc's (NFD
//! 24.07) command line, output and exit statuses, through NFD's management protocol only (so
//! it works against NFD as well as Cascade).
//!
//! `cascade ctl route add /a 300 cost 10` is `nfdc route add /a 300 cost 10`. Three options of
//! Cascade's own go anywhere on the line: `--transport URI` (which forwarder), `--json` (one
//! JSON object a line instead of nfdc's text) and `--sign SIGNING-INFO` (sign the commands with
//! a key of the key chain, ndn-cxx's SigningInfo string; default DigestSha256). [`client::nfdc`] parses, issues the commands and
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
    /// How to sign the commands, as ndn-cxx's SigningInfo: "" (DigestSha256), `id:/identity`,
    /// `key:/identity/KEY/id` or `cert:/...` (a key of the key chain in ~/.ndn). Also taken
    /// anywhere after the command.
    #[arg(long, value_name = "SIGNING-INFO", default_value = "")]
    sign: String,
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
    let o = Options {
        transport: args.transport.clone(),
        json: args.json,
        sign: args.sign.clone(),
    };
    run_line(args.command.clone(), o)
}

/// Cascade's own options.
#[derive(Debug, Default)]
struct Options {
    transport: Option<String>,
    json: bool,
    sign: String,
}

/// Runs the binary as `nfdc` with `argv` (the program name left out).
pub fn run_as_nfdc(argv: Vec<String>) -> ExitCode {
    run_line(argv, Options::default())
}

/// Takes `--transport URI`, `--transport=URI`, `--sign INFO`, `--sign=INFO` and `--json` out of
/// `tokens`.
fn take_options(tokens: Vec<String>, o: &mut Options) -> Result<Vec<String>, Failure> {
    let mut rest = Vec::with_capacity(tokens.len());
    let mut it = tokens.into_iter();
    while let Some(t) = it.next() {
        if t == "--json" {
            o.json = true;
        } else if t == "--transport" || t == "--sign" {
            let v = it.next().ok_or_else(|| {
                Failure::new(nfdc::status::USAGE, format!("{t}: a value is missing"))
            })?;
            if t == "--sign" {
                o.sign = v;
            } else {
                o.transport = Some(v);
            }
        } else if let Some(uri) = t.strip_prefix("--transport=") {
            o.transport = Some(uri.to_owned());
        } else if let Some(info) = t.strip_prefix("--sign=") {
            o.sign = info.to_owned();
        } else {
            rest.push(t);
        }
    }
    Ok(rest)
}

fn run_line(tokens: Vec<String>, mut o: Options) -> ExitCode {
    // The arguments are checked before connecting.
    let result = take_options(tokens, &mut o).and_then(|t| {
        let c = nfdc::parse(&t)?;
        let signer = crate::tools::load_signer(&o.sign)
            .map_err(|crate::tools::Failure(status, m)| Failure::new(status, m))?;
        nfdc::run_signed(c, o.transport.as_deref(), o.json, signer.as_ref())
    });
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
        let mut o = Options::default();
        let rest = take_options(
            v("route --json list --transport unix:///x.sock --sign id:/op"),
            &mut o,
        )
        .unwrap();
        assert_eq!(
            (rest, o.transport.as_deref(), o.json, o.sign.as_str()),
            (v("route list"), Some("unix:///x.sock"), true, "id:/op")
        );
        let mut o = Options::default();
        take_options(v("--transport=tcp://h:1 --sign=key:/k status"), &mut o).unwrap();
        assert_eq!(
            (o.transport.as_deref(), o.sign.as_str()),
            (Some("tcp://h:1"), "key:/k")
        );
        for line in ["status --transport", "status --sign"] {
            let e = take_options(v(line), &mut o).unwrap_err();
            assert_eq!(e.status, 2);
        }
    }
}
