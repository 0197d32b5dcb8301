//! `cascade run`'s log: `RUST_LOG`-style filters (tracing-subscriber's `EnvFilter`, e.g.
//! `info,router=debug`) from the environment, `-v`, or `[general] log`, in that order of
//! precedence; the configuration's filter is applied again at a reload.

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{reload, EnvFilter, Registry};

/// The log, set up; the filter can change at a reload.
pub struct Log {
    handle: Option<reload::Handle<EnvFilter, Registry>>,
    /// `RUST_LOG` or `-v` decide the filter: the configuration's is ignored.
    fixed: bool,
}

/// The filter `spec` (`RUST_LOG` syntax), or one line naming `key` and what is wrong.
pub fn parse(key: &str, spec: &str) -> Result<EnvFilter, String> {
    EnvFilter::builder()
        .parse(spec)
        .map_err(|e| format!("{key}: {spec:?} is not a log filter: {e}"))
}

impl Log {
    /// Installs the log on stderr: `RUST_LOG` if set, else `-v` (debug, -vv: trace) if given,
    /// else `config_filter` if not empty, else `info`.
    pub fn init(verbose: u8, config_filter: &str) -> Result<Log, String> {
        let env = std::env::var("RUST_LOG").ok().filter(|s| !s.is_empty());
        let (filter, fixed) = match (&env, verbose) {
            (Some(spec), _) => (parse("RUST_LOG", spec)?, true),
            (None, 1) => (parse("-v", "debug")?, true),
            (None, 2..) => (parse("-vv", "trace")?, true),
            (None, 0) if !config_filter.is_empty() => (parse("general.log", config_filter)?, false),
            (None, 0) => (parse("default", "info")?, false),
        };
        let (filter, handle) = reload::Layer::new(filter);
        let fmt = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
        let installed = tracing_subscriber::registry()
            .with(filter)
            .with(fmt)
            .try_init()
            .is_ok();
        Ok(Log {
            handle: installed.then_some(handle),
            fixed,
        })
    }

    /// Applies a reloaded configuration's `[general] log` (unless `RUST_LOG` or `-v` decide).
    pub fn reload(&self, config_filter: &str) -> Result<(), String> {
        let spec = if config_filter.is_empty() {
            "info"
        } else {
            config_filter
        };
        let filter = parse("general.log", spec)?;
        match &self.handle {
            Some(h) if !self.fixed => h.reload(filter).map_err(|e| format!("general.log: {e}")),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_and_a_bad_one_names_its_key() {
        assert!(parse("general.log", "info,router=debug").is_ok());
        assert!(parse("general.log", "warn,router::reload=trace").is_ok());
        let e = parse("general.log", "info,router=loud").unwrap_err();
        assert!(e.starts_with("general.log: \"info,router=loud\""), "{e}");
    }
}
