//! The client's error type: one line each, naming what went wrong.

use std::fmt;
use std::io;

use wire::{NackReason, Name};

/// Result of a client operation.
pub type Result<T> = core::result::Result<T, Error>;

/// What went wrong talking to the forwarder.
#[derive(Debug)]
pub enum Error {
    /// A transport URI, a `client.conf` or an argument that cannot be used.
    Config(String),
    /// A socket operation failed.
    Io {
        /// What was being done (`connect to unix:///run/nfd/nfd.sock`, `send`, ...).
        context: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The forwarder closed the connection.
    Closed,
    /// The forwarder sent bytes that are not NDN, or a reply that makes no sense.
    Protocol(String),
    /// No answer in time.
    Timeout(String),
    /// An Interest was Nacked.
    Nack {
        /// The Interest's name.
        name: Name,
        /// The reason, if the Nack carried one.
        reason: Option<NackReason>,
    },
    /// A producer answered with an application-level Nack (a Data of ContentType NACK).
    ApplicationNack {
        /// The Data's name.
        name: Name,
        /// The length of its Content.
        content_bytes: usize,
    },
    /// A management command was answered with a StatusCode other than 200.
    Command {
        /// StatusCode.
        code: u64,
        /// StatusText.
        text: String,
    },
}

impl Error {
    /// An I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// NFD's name for a Nack reason, or `None` when the Nack carried no reason.
pub fn nack_reason_str(reason: Option<NackReason>) -> String {
    match reason {
        Some(NackReason::Other(c)) => format!("Unknown({c})"),
        Some(r) => r.as_str().to_owned(),
        None => "None".to_owned(),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(s) => write!(f, "{s}"),
            Error::Io { context, source } => write!(f, "{context}: {source}"),
            Error::Closed => write!(f, "the forwarder closed the connection"),
            Error::Protocol(s) => write!(f, "protocol error: {s}"),
            Error::Timeout(s) => write!(f, "timeout: {s}"),
            Error::Nack { name, reason } => {
                write!(f, "Nack ({}) for {name}", nack_reason_str(*reason))
            }
            Error::ApplicationNack {
                name,
                content_bytes,
            } => write!(
                f,
                "application Nack: {name} (ContentType NACK, {content_bytes} bytes of content)"
            ),
            Error::Command { code, text } => write!(f, "StatusCode {code}: {text}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
