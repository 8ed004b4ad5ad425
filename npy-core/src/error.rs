//! The one error type of the crate.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Everything that can go wrong reading or writing NumPy files.
///
/// The error is one pointer wide. [`Error::kind`] tells what happened; [`Error::path`]
/// and [`Error::member`] tell which file (and whether it was being read or written:
/// [`Error::access`]) and which `.npz` member, when the error is about one. Messages are
/// lower-case, say where first and quote the offending text, e.g.
/// `reading 'traces.npy': invalid header at byte 37: expected ':' after key 'descr'`.
///
/// # Examples
/// ```
/// use npy_core::prelude::*;
/// use npy_core::{Access, ErrorKind};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("missing.npy");
/// let e = Vec::<f64>::read_npy(&path).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound));
/// assert_eq!((e.path(), e.access()), (Some(path.as_path()), Some(Access::Read)));
/// assert!(e.to_string().starts_with(&format!("reading '{}': i/o error: ", path.display())), "{e}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Error(Box<Repr>);

/// An error and where it happened.
#[derive(Debug)]
struct Repr {
    kind: ErrorKind,
    /// The user's file the error is about (never a temporary file), and what was being
    /// done with it.
    file: Option<(PathBuf, Access)>,
    /// The `.npz` member the error is about, when the kind does not name it itself.
    member: Option<String>,
    /// The shape of the array whose data the error is about, when its header was read
    /// first (data shorter than it says: [`ErrorKind::Truncated`]).
    shape: Option<Box<[usize]>>,
    /// Where a `.npy` file ended inside its magic string or header, when it did.
    short_header: Option<ShortHeader>,
}

/// Where a `.npy` file ends before its header does ([`Error::short_header`]): the part being
/// read, its length and the bytes of it present, as NumPy's `EOF: reading array header,
/// expected 118 bytes got 50` says them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortHeader {
    /// The part of the file's start that it ends inside.
    pub part: HeaderPart,
    /// The part's length in bytes.
    pub expected: u64,
    /// Its bytes in the file.
    pub found: u64,
}

/// A part of a `.npy` file's start, before its data ([`ShortHeader`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderPart {
    /// The magic string and format version: 8 bytes.
    Magic,
    /// The header's length: 2 bytes (version 1) or 4.
    HeaderLength,
    /// The header's text.
    Header,
}

impl HeaderPart {
    /// NumPy's name for the part, as its messages say it: `magic string`, `array header
    /// length`, `array header`.
    pub fn numpy_name(self) -> &'static str {
        match self {
            HeaderPart::Magic => "magic string",
            HeaderPart::HeaderLength => "array header length",
            HeaderPart::Header => "array header",
        }
    }
}

/// Whether a file was being read or written when an error happened ([`Error::access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// The file was being opened or read: an input.
    Read,
    /// The file was being created or written: an output.
    Write,
}

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
         (raise it with ReadOptions::max_header_size)"
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
    /// arrays and scalars and the data types [`crate::object`] lists — another global
    /// (`os.system`), a constructor given arguments its pickles never hold, a call of
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
        /// The error of the zip or deflate library that found the problem, if one did
        /// (also [`std::error::Error::source`] of the [`Error`]).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },

    /// A Dask npy stack problem ([`crate::stack`]): an `info` that is not a stack's, a
    /// block that is missing or does not match it, blocks that do not line up, a target
    /// directory that is not empty.
    #[error("npy stack: {reason}")]
    Stack {
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
    /// What happened.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// Consumes the error and returns what happened.
    pub fn into_kind(self) -> ErrorKind {
        self.0.kind
    }

    /// The file the error is about, as the caller named it (a path write's target, never
    /// its temporary file), if the error came from an API given a path.
    pub fn path(&self) -> Option<&Path> {
        self.0.file.as_ref().map(|(p, _)| p.as_path())
    }

    /// Whether [`Error::path`] was being read or written.
    pub fn access(&self) -> Option<Access> {
        self.0.file.as_ref().map(|&(_, a)| a)
    }

    /// The `.npz` member the error is about, if any: the member being read or written
    /// when a member's header, data or CRC was at fault, or the one an
    /// [`ErrorKind::Npz`] names.
    pub fn member(&self) -> Option<&str> {
        match &self.0.kind {
            ErrorKind::Npz { member: Some(m), .. } => Some(m),
            _ => self.0.member.as_deref(),
        }
    }

    /// Says that the error happened reading `path`, unless it names a file already. For
    /// callers that read files themselves and report errors as this crate does.
    pub fn reading(self, path: impl AsRef<Path>) -> Self {
        self.in_file(path.as_ref(), Access::Read)
    }

    /// Says that the error happened writing `path`, unless it names a file already.
    pub fn writing(self, path: impl AsRef<Path>) -> Self {
        self.in_file(path.as_ref(), Access::Write)
    }

    /// Names `path` in place of the file the error names, if it names one: for callers
    /// that write through a temporary file and report the file the user asked for.
    ///
    /// # Examples
    /// ```
    /// use npy_core::{Error, ErrorKind};
    ///
    /// let e = Error::from(std::io::Error::other("disk full")).writing("/tmp/spool/out.npz");
    /// let e = e.renamed("s3://bucket/out.npz");
    /// assert_eq!(e.path().unwrap().to_str(), Some("s3://bucket/out.npz"));
    /// assert!(matches!(e.kind(), ErrorKind::Io(_)));
    /// ```
    pub fn renamed(mut self, path: impl AsRef<Path>) -> Self {
        if let Some((file, _)) = &mut self.0.file {
            *file = path.as_ref().to_path_buf();
        }
        self
    }

    fn in_file(mut self, path: &Path, access: Access) -> Self {
        if self.0.file.is_none() {
            self.0.file = Some((path.to_path_buf(), access));
        }
        self
    }

    /// Says that the error happened in `.npz` member `member`, unless it names one. For
    /// callers that decode members' data themselves and report errors as this crate does.
    pub fn in_member(mut self, member: &str) -> Self {
        if self.member().is_none() {
            self.0.member = Some(member.to_string());
        }
        self
    }

    /// The shape of the array whose data the error is about, when its header was read
    /// before the error: a file whose data are shorter than its header says
    /// ([`ErrorKind::Truncated`], in bytes) keeps it, so a message can say how many of
    /// how many elements were there.
    ///
    /// # Examples
    /// ```
    /// use npy_core::prelude::*;
    /// use npy_core::{DynArray, ErrorKind};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("cut.npy");
    /// let bytes = vec![1.5f64; 10].write_npy_to(Vec::new())?;
    /// std::fs::write(&path, &bytes[..bytes.len() - 20])?;
    /// let e = DynArray::read_npy(&path).unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::Truncated { expected: 80, found: 60 }));
    /// assert_eq!(e.array_shape(), Some(&[10][..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn array_shape(&self) -> Option<&[usize]> {
        self.0.shape.as_deref()
    }

    /// Says the error is about the data of an array of `shape`.
    pub(crate) fn of_shape(mut self, shape: &[usize]) -> Self {
        self.0.shape = Some(shape.into());
        self
    }

    /// Where the `.npy` file ended inside its magic string or header, when this error is
    /// of one that did (its kind is [`ErrorKind::Format`] or the magic's error).
    ///
    /// # Examples
    /// ```
    /// use npy_core::prelude::*;
    /// use npy_core::{HeaderPart, NpyReader, ShortHeader};
    ///
    /// let bytes = [1.5f64].write_npy_to(Vec::new())?;
    /// let e = NpyReader::from_reader(&bytes[..50]).unwrap_err();
    /// let expected = u64::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    /// assert_eq!(e.short_header(), Some(ShortHeader { part: HeaderPart::Header, expected, found: 40 }));
    /// assert_eq!(NpyReader::from_reader(&bytes[..7]).unwrap_err().short_header().unwrap().found, 7);
    /// let length = NpyReader::from_reader(&bytes[..9]).unwrap_err().short_header();
    /// assert_eq!(length, Some(ShortHeader { part: HeaderPart::HeaderLength, expected: 2, found: 1 }));
    ///
    /// // A file's, whose length is known before its header is read.
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("cut.npy");
    /// std::fs::write(&path, &bytes[..50])?;
    /// let e = npy_core::DynArray::read_npy(&path).unwrap_err();
    /// assert_eq!(e.short_header(), Some(ShortHeader { part: HeaderPart::Header, expected, found: 40 }));
    /// assert_eq!(HeaderPart::Header.numpy_name(), "array header");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn short_header(&self) -> Option<ShortHeader> {
        self.0.short_header
    }

    /// Says the file ended inside `part` of its start, `found` of its `expected` bytes
    /// present.
    pub(crate) fn of_short_header(mut self, part: HeaderPart, expected: u64, found: u64) -> Self {
        self.0.short_header = Some(ShortHeader { part, expected, found });
        self
    }

    /// Says where the error happened, as far as known (an empty member is none).
    pub(crate) fn locate(self, path: Option<&Path>, access: Access, member: Option<&str>) -> Self {
        let e = match member {
            Some(m) if !m.is_empty() => self.in_member(m),
            _ => self,
        };
        match path {
            Some(p) => e.in_file(p, access),
            None => e,
        }
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
        ErrorKind::Shape { shape: crate::shape::shape_repr(shape), reason: reason.into() }.into()
    }

    pub(crate) fn npz(member: Option<&str>, reason: impl Into<String>) -> Self {
        ErrorKind::Npz { member: member.map(str::to_string), reason: reason.into(), source: None }.into()
    }

    /// An [`ErrorKind::Npz`] found by another library, whose error is kept as the source.
    pub(crate) fn npz_from(
        member: Option<&str>,
        reason: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        let source = Some(Box::new(source) as Box<dyn std::error::Error + Send + Sync>);
        ErrorKind::Npz { member: member.map(str::to_string), reason: reason.into(), source }.into()
    }

    pub(crate) fn pickle(offset: u64, reason: impl Into<String>) -> Self {
        ErrorKind::Pickle { offset, reason: reason.into() }.into()
    }

    pub(crate) fn usage(reason: impl Into<String>) -> Self {
        ErrorKind::Usage { reason: reason.into() }.into()
    }

    pub(crate) fn stack(reason: impl Into<String>) -> Self {
        ErrorKind::Stack { reason: reason.into() }.into()
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error(Box::new(Repr { kind, file: None, member: None, shape: None, short_header: None }))
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
    /// An I/O error keeps its kind; one that names a file or member carries the whole
    /// [`Error`] (which `From<io::Error>` gives back), so the message keeps saying where.
    fn from(err: Error) -> Self {
        let plain = err.0.file.is_none() && err.0.member.is_none();
        match err.0.kind {
            ErrorKind::Io(e) if plain => e,
            ErrorKind::Io(ref e) => io::Error::new(e.kind(), err),
            _ => io::Error::new(io::ErrorKind::InvalidData, err),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Repr { kind, file, member, .. } = &*self.0;
        if file.is_none() && member.is_none() {
            return fmt::Debug::fmt(kind, f);
        }
        f.debug_struct("Error").field("kind", kind).field("file", file).field("member", member).finish()
    }
}

impl fmt::Display for Error {
    /// `reading 'a.npz', member 'x.npy': ` before what happened, as far as known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Repr { kind, file, member, .. } = &*self.0;
        if let Some((path, access)) = file {
            let verb = match access {
                Access::Read => "reading",
                Access::Write => "writing",
            };
            write!(f, "{verb} '{}'", path.display())?;
        }
        if let Some(m) = member {
            let sep = if file.is_some() { ", " } else { "" };
            write!(f, "{sep}member '{m}'")?;
        }
        if file.is_some() || member.is_some() {
            f.write_str(": ")?;
        }
        fmt::Display::fmt(kind, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            ErrorKind::Npz { source: Some(s), .. } => Some(&**s),
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
    fn errors_say_which_file_and_member_first() {
        let e = Error::header(37, "expected ':'").in_member("x.npy").reading("a.npz");
        assert_eq!(e.to_string(), "reading 'a.npz', member 'x.npy': invalid header at byte 37: expected ':'");
        assert_eq!((e.path(), e.access(), e.member()), (Some(Path::new("a.npz")), Some(Access::Read), Some("x.npy")));
        assert!(matches!(e.kind(), ErrorKind::Header { offset: 37, .. }));
        // The first place named stays: an inner writer's target is not renamed by callers.
        let e = Error::from(io::Error::from(io::ErrorKind::StorageFull)).writing("out.npy").writing("other.npy");
        assert!(e.to_string().starts_with("writing 'out.npy': i/o error: "), "{e}");
        // An npz error names its member once.
        let e = Error::npz(Some("y.npy"), "bad crc-32").in_member("z.npy").reading("b.npz");
        assert_eq!(e.to_string(), "reading 'b.npz': npz member 'y.npy': bad crc-32");
        assert_eq!(e.member(), Some("y.npy"));
    }

    #[test]
    fn the_source_is_the_error_underneath() {
        use std::error::Error as _;
        let zip = io::Error::new(io::ErrorKind::InvalidData, "Invalid checksum");
        let e = Error::npz_from(Some("x.npy"), "bad crc-32: the member's data is corrupt", zip);
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("Invalid checksum"));
        let e = Error::from(io::Error::new(io::ErrorKind::StorageFull, "full")).writing("o.npy");
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("full"));
        assert!(Error::usage("x").source().is_none());
    }

    #[test]
    fn a_located_error_keeps_its_place_through_std() {
        let e = Error::from(io::Error::from(io::ErrorKind::StorageFull)).writing("out.npy");
        let io: io::Error = e.into();
        assert_eq!(io.kind(), io::ErrorKind::StorageFull);
        assert!(io.to_string().starts_with("writing 'out.npy'"), "{io}");
        let back = Error::from(io);
        assert_eq!(back.path(), Some(Path::new("out.npy")));
        assert!(matches!(back.kind(), ErrorKind::Io(e) if e.kind() == io::ErrorKind::StorageFull));
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
