//! Decoding errors: what is wrong, and at which byte offset.

use core::fmt;

/// Result of a decoding step.
pub type Result<T> = core::result::Result<T, Error>;

/// A decoding error: its kind, and the absolute byte offset in the input where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    /// What is wrong.
    pub kind: ErrorKind,
    /// Byte offset (from the start of the decoded buffer) of the element at fault.
    pub offset: usize,
}

impl Error {
    /// An error of `kind` at `offset`.
    #[inline]
    pub const fn new(kind: ErrorKind, offset: usize) -> Self {
        Error { kind, offset }
    }
}

/// The classes of decoding error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ends in the middle of a TYPE, LENGTH or VALUE.
    Truncated,
    /// A VAR-NUMBER that is not in its shortest form.
    NonMinimalVarNumber,
    /// TLV-TYPE 0 or above 2^32-1.
    InvalidType(u64),
    /// A TLV-LENGTH that runs past the end of its enclosing buffer.
    LengthExceedsBuffer,
    /// Bytes left over after the outermost element, or inside a value after its last element.
    TrailingBytes,
    /// A different element was required here.
    UnexpectedType {
        /// The type the format requires.
        expected: u32,
        /// The type found.
        found: u32,
    },
    /// An element of unrecognized critical type.
    UnknownCritical(u32),
    /// A recognized critical element out of its required order (or repeated).
    OutOfOrder(u32),
    /// A required element is missing.
    Missing(u32),
    /// A NonNegativeInteger whose length is not 1, 2, 4 or 8.
    BadNonNegativeInteger,
    /// An element whose value has the wrong length (flags, Nonce, HopLimit, digests, ...).
    BadLength {
        /// The type of the element.
        typ: u32,
    },
    /// A name component type outside 1..=65535.
    BadComponentType(u32),
    /// An Interest with no name components.
    EmptyName,
    /// A name with more components than the configured limit.
    TooManyComponents,
    /// A name longer (in bytes) than the configured limit.
    NameTooLong,
    /// A packet larger than the configured limit.
    Oversize,
    /// The ParametersSha256DigestComponent is missing, misplaced, repeated or wrong.
    BadParametersDigest,
    /// An Interest signature without ApplicationParameters, or a SignatureValue without its info.
    BadSignatureElements,
    /// A packet of a type this decoder does not accept here.
    NotAPacket(u32),
    /// An NDN URI that cannot be parsed.
    BadUri,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorKind::Truncated => write!(f, "truncated element"),
            ErrorKind::NonMinimalVarNumber => write!(f, "non-minimal VAR-NUMBER"),
            ErrorKind::InvalidType(t) => write!(f, "invalid TLV-TYPE {t}"),
            ErrorKind::LengthExceedsBuffer => write!(f, "TLV-LENGTH exceeds the enclosing buffer"),
            ErrorKind::TrailingBytes => write!(f, "trailing bytes after the last element"),
            ErrorKind::UnexpectedType { expected, found } => {
                write!(f, "expected TLV-TYPE {expected}, found {found}")
            }
            ErrorKind::UnknownCritical(t) => write!(f, "unrecognized critical element of type {t}"),
            ErrorKind::OutOfOrder(t) => write!(f, "critical element of type {t} out of order"),
            ErrorKind::Missing(t) => write!(f, "required element of type {t} missing"),
            ErrorKind::BadNonNegativeInteger => {
                write!(f, "NonNegativeInteger length is not 1, 2, 4 or 8")
            }
            ErrorKind::BadLength { typ } => write!(f, "element of type {typ} has a wrong length"),
            ErrorKind::BadComponentType(t) => {
                write!(f, "name component type {t} outside 1..65535")
            }
            ErrorKind::EmptyName => write!(f, "Interest name has zero components"),
            ErrorKind::TooManyComponents => write!(f, "name has too many components"),
            ErrorKind::NameTooLong => write!(f, "name is too long"),
            ErrorKind::Oversize => write!(f, "packet exceeds the size limit"),
            ErrorKind::BadParametersDigest => write!(f, "bad ParametersSha256DigestComponent"),
            ErrorKind::BadSignatureElements => write!(f, "inconsistent signature elements"),
            ErrorKind::NotAPacket(t) => write!(f, "TLV-TYPE {t} is not an NDN packet"),
            ErrorKind::BadUri => write!(f, "malformed NDN URI"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte offset {}", self.kind, self.offset)
    }
}

impl std::error::Error for Error {}
