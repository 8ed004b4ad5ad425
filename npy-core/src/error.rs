//! The one error type of the crate.

use std::fmt;
use std::io;

/// Everything that can go wrong reading or writing NumPy files.
///
/// The error is one pointer wide; [`Error::kind`] tells what happened and where.
/// Messages are lower-case and quote the offending text, e.g.
/// `invalid header at byte 37: expected ':' after key 'descr'`.
pub struct Error(Box<ErrorKind>);

/// What went wrong, with what and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An I/O error from the underlying reader, writer or file system.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),

    /// The file does not start like a `.npy` file: bad magic, unknown version, short preamble.
    #[error("not a .npy file: {reason}")]
    Format {
        /// What is wrong.
        reason: String,
    },

    /// The header length field is larger than the configured limit; nothing was allocated.
    #[error(
        "header is {len} bytes, over the limit of {limit} bytes \
         (raise it with ReadOptions::max_header_size, as numpy's max_header_size)"
    )]
    HeaderTooLarge {
        /// The length the file claims.
        len: u64,
        /// The limit in force.
        limit: usize,
    },

    /// The header text is not a valid NumPy header dict.
    #[error("invalid header at byte {offset}: {reason}")]
    Header {
        /// Byte offset of the problem, counted from the start of the file (or npz member).
        offset: usize,
        /// What is wrong.
        reason: String,
    },

    /// A `descr` that does not describe a valid dtype.
    #[error("invalid dtype {descr}: {reason}")]
    Dtype {
        /// The offending descr (or part of it), as Python would print it.
        descr: String,
        /// What is wrong.
        reason: String,
    },

    /// A dtype that is valid for NumPy but not supported here (object fields in records),
    /// or not by the API used (an object array read as raw bytes or typed elements: read
    /// it through [`crate::object`]).
    #[error("unsupported dtype {descr}: {reason}")]
    UnsupportedDtype {
        /// The offending descr.
        descr: String,
        /// Why it is not supported.
        reason: String,
    },

    /// The shape is invalid: too many dimensions, or an element/byte count that overflows.
    #[error("invalid shape {shape}: {reason}")]
    Shape {
        /// The shape as Python would print it.
        shape: String,
        /// What is wrong.
        reason: String,
    },

    /// The file's dtype cannot be read as the requested Rust type.
    #[error("cannot read {found} as {expected}{}", field.as_ref().map(|f| format!(" (field '{f}')")).unwrap_or_default())]
    DtypeMismatch {
        /// What the Rust side wants (its dtype, or the Rust type).
        expected: String,
        /// What the file holds.
        found: String,
        /// The record field concerned, as a dotted path, if any.
        field: Option<String>,
    },

    /// The array is of a different shape or dimensionality than the caller asked for.
    #[error("{reason}")]
    WrongShape {
        /// What the caller should do instead.
        reason: String,
    },

    /// The data section ends before the header's shape says it should.
    #[error("data truncated: the header needs {expected} data bytes, only {found} present")]
    Truncated {
        /// Bytes the header calls for.
        expected: u64,
        /// Bytes actually present.
        found: u64,
    },

    /// A value in the data is not valid for the Rust type it is read into (or, writing an
    /// object array, an element that cannot be written as a Python value).
    #[error("invalid value at element {index}: {reason}")]
    InvalidValue {
        /// Element index (in storage order).
        index: usize,
        /// What is wrong.
        reason: String,
    },

    /// An object array's pickle that is not decoded: malformed or truncated, trailing bytes
    /// after its `STOP`, a shape that does not match its values, or anything beyond NumPy's
    /// array reconstruction and plain values — another global (`os.system`), a call of
    /// anything else, an opcode outside the supported set — or a pickle that would take
    /// more memory than [`crate::ReadOptions::max_object_bytes`] allows. Nothing in a pickle
    /// is ever executed.
    #[error("invalid pickle at byte {offset}: {reason}")]
    Pickle {
        /// Byte offset of the offending opcode, counted from the start of the file (or npz
        /// member).
        offset: u64,
        /// What is wrong, naming the opcode or global.
        reason: String,
    },

    /// A memory map cannot be viewed in place as the requested type (other byte order,
    /// other layout, misaligned data, fields that are not stored): decoding still works.
    #[error("cannot view the data in place: {reason}")]
    NotViewable {
        /// Why, and what to use instead.
        reason: String,
    },

    /// An `.npz` archive problem: a zip error, a missing or duplicate member, a bad CRC.
    #[error("npz{}: {reason}", member.as_ref().map(|m| format!(" member '{m}'")).unwrap_or_default())]
    Npz {
        /// The member concerned, if any.
        member: Option<String>,
        /// What is wrong.
        reason: String,
    },

    /// A serde bridge problem (feature `serde`): a Rust type or value that does not fit the
    /// array's dtype, e.g. a missing or extra field, a type serde cannot map, a value out
    /// of range. The reason names the element and the field.
    #[error("serde: {reason}")]
    Serde {
        /// What is wrong, and where.
        reason: String,
    },

    /// The caller asked for something the data cannot give (e.g. a header that does not fit
    /// the requested version, an out-of-bounds index, a data length that does not match).
    #[error("{reason}")]
    Usage {
        /// What is wrong.
        reason: String,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// What happened, and where.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// Consumes the error and returns what happened.
    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }

    pub(crate) fn format(reason: impl Into<String>) -> Self {
        ErrorKind::Format { reason: reason.into() }.into()
    }

    pub(crate) fn header(offset: usize, reason: impl Into<String>) -> Self {
        ErrorKind::Header { offset, reason: reason.into() }.into()
    }

    pub(crate) fn dtype(descr: impl Into<String>, reason: impl Into<String>) -> Self {
        ErrorKind::Dtype { descr: descr.into(), reason: reason.into() }.into()
    }

    pub(crate) fn shape(shape: &[usize], reason: impl Into<String>) -> Self {
        ErrorKind::Shape { shape: crate::header::shape_repr(shape), reason: reason.into() }.into()
    }

    pub(crate) fn npz(member: Option<&str>, reason: impl Into<String>) -> Self {
        ErrorKind::Npz { member: member.map(str::to_string), reason: reason.into() }.into()
    }

    pub(crate) fn pickle(offset: u64, reason: impl Into<String>) -> Self {
        ErrorKind::Pickle { offset, reason: reason.into() }.into()
    }

    pub(crate) fn usage(reason: impl Into<String>) -> Self {
        ErrorKind::Usage { reason: reason.into() }.into()
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error(Box::new(kind))
    }
}

impl From<io::Error> for Error {
    /// An I/O error; one that carries an [`Error`] of ours (raised inside a reader we
    /// wrap, e.g. an npz member's bad CRC) gives that error back.
    fn from(err: io::Error) -> Self {
        match err.downcast::<Error>() {
            Ok(ours) => ours,
            Err(err) => ErrorKind::Io(err).into(),
        }
    }
}

impl From<Error> for io::Error {
    fn from(err: Error) -> Self {
        match err.into_kind() {
            ErrorKind::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidData, Error::from(other)),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.0 {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_error_message_names_offset() {
        let e = Error::header(37, "expected ':' after key 'descr'");
        assert_eq!(e.to_string(), "invalid header at byte 37: expected ':' after key 'descr'");
        assert!(matches!(e.kind(), ErrorKind::Header { offset: 37, .. }));
    }

    #[test]
    fn our_error_inside_an_io_error_comes_back() {
        let io: io::Error = Error::npz(Some("x.npy"), "Invalid checksum").into();
        let back = Error::from(io);
        assert!(matches!(back.kind(), ErrorKind::Npz { member: Some(m), .. } if m == "x.npy"), "{back}");
    }

    #[test]
    fn io_error_round_trips_through_std() {
        let e = Error::from(io::Error::new(io::ErrorKind::UnexpectedEof, "eof"));
        let back: io::Error = e.into();
        assert_eq!(back.kind(), io::ErrorKind::UnexpectedEof);
        let e: io::Error = Error::format("bad magic").into();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(e.to_string(), "not a .npy file: bad magic");
    }
}
