//! ndncatchunks' `--log-cwnd FILE` and `--log-rtt FILE` for `cascade get` (AIMD and CUBIC
//! pipelines; ndncatchunks' fixed pipeline logs nothing, and neither does Cascade's).
//!
//! The files have ndncatchunks' tab-separated shape, numbers printed as C++ streams print a
//! `double` (six significant digits):
//!
//! - cwnd: a `time\tcwndsize` header, then one line per window change: seconds since the
//!   segment pipeline started, and the new window in segments;
//! - rtt: a `segment\trtt\trttvar\tsrtt\trto` header, then one line per RTT sample (segments
//!   sent once only): the segment number, then the sample, RTT variation, smoothed RTT and RTO,
//!   in milliseconds.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use client::FetchEvent;

use crate::tools::{Failure, EXIT_GET_FILE};
use crate::tools_ping::g;

/// The open log files.
pub(crate) struct ChunksLog {
    cwnd: Option<BufWriter<File>>,
    rtt: Option<BufWriter<File>>,
}

fn create(path: &Path, option: &str, header: &str) -> Result<BufWriter<File>, Failure> {
    let cannot = |e: std::io::Error| {
        Failure(
            EXIT_GET_FILE,
            format!("{option}: cannot write {}: {e}", path.display()),
        )
    };
    let mut w = BufWriter::new(File::create(path).map_err(cannot)?);
    w.write_all(header.as_bytes()).map_err(cannot)?;
    Ok(w)
}

impl ChunksLog {
    /// Creates the files asked for (with their headers); `None` when neither was.
    pub(crate) fn open(cwnd: Option<&Path>, rtt: Option<&Path>) -> Result<Option<Self>, Failure> {
        if cwnd.is_none() && rtt.is_none() {
            return Ok(None);
        }
        Ok(Some(ChunksLog {
            cwnd: cwnd
                .map(|p| create(p, "--log-cwnd", "time\tcwndsize\n"))
                .transpose()?,
            rtt: rtt
                .map(|p| create(p, "--log-rtt", "segment\trtt\trttvar\tsrtt\trto\n"))
                .transpose()?,
        }))
    }

    /// Logs one event (a write error shows at [`ChunksLog::finish`]).
    pub(crate) fn record(&mut self, e: &FetchEvent) {
        let ms = |d: std::time::Duration| g(d.as_secs_f64() * 1e3);
        match (*e, &mut self.cwnd, &mut self.rtt) {
            (FetchEvent::Cwnd { at, cwnd }, Some(w), _) => {
                let _ = writeln!(w, "{}\t{}", g(at.as_secs_f64()), g(cwnd));
            }
            (
                FetchEvent::Rtt {
                    segment,
                    rtt,
                    srtt,
                    rttvar,
                    rto,
                },
                _,
                Some(w),
            ) => {
                let _ = writeln!(
                    w,
                    "{segment}\t{}\t{}\t{}\t{}",
                    ms(rtt),
                    ms(rttvar),
                    ms(srtt),
                    ms(rto)
                );
            }
            _ => {}
        }
    }

    /// Flushes the files.
    pub(crate) fn finish(self) -> Result<(), Failure> {
        for (w, option) in [(self.cwnd, "--log-cwnd"), (self.rtt, "--log-rtt")] {
            if let Some(mut w) = w {
                w.flush()
                    .map_err(|e| Failure(EXIT_GET_FILE, format!("{option}: cannot write: {e}")))?;
            }
        }
        Ok(())
    }
}
