//! The `.npy` header codec: preamble (magic, version, length) and the header dict, parsed
//! and written exactly as NumPy's `numpy.lib.format` does. Pure functions, no I/O.

use std::fmt::Write as _;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::literal::{self, Kind, Literal, ParseOptions, Value};
pub use crate::shape::{shape_repr, MAX_DIMS};

/// The six bytes every `.npy` file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// NumPy aligns the start of the data to this many bytes.
pub const ARRAY_ALIGN: usize = 64;
/// Spare spaces NumPy leaves after the dict so the growth axis can grow in place.
pub const GROWTH_AXIS_MAX_DIGITS: usize = 21;
/// Default limit on the header length: 16 MiB (16,777,216 bytes).
///
/// NumPy writes headers of any length its format allows: a v1 header up to 65,535 bytes and
/// v2/v3 headers up to 4 GiB. Its dtypes bound only a record's itemsize and offsets (to a C
/// `int`), not the number of fields nor the length of their names, so no finite limit
/// accepts every header NumPy can write; `np.load`'s default of 10,000 bytes
/// (`max_header_size`) exists because `ast.literal_eval` is unsafe on large input, and turns
/// away files NumPy itself wrote (a 2,000-field record header is 45 KB). This crate's header
/// parser is linear, depth-bounded ([`MAX_HEADER_DEPTH`]) and reads the header as its bytes
/// arrive, so a length field that lies costs nothing. The limit bounds what a real header
/// costs: parsing takes about 12 bytes of memory per header byte, the header's own bytes
/// included (measured: a 1,000,000-field header of 25.0 MB peaks at 294 MB, parsed in a
/// third of a second), so 16 MiB caps it near 200 MB while accepting record dtypes of
/// over 600,000 fields with names like `field_123456`, 300 times the largest dtype seen
/// in use. Raise it with
/// [`ReadOptions::max_header_size`](crate::ReadOptions::max_header_size).
pub const DEFAULT_MAX_HEADER_SIZE: usize = 16 << 20;
/// Deepest nesting of containers accepted in a header (dict, lists and tuples of the descr).
pub const MAX_HEADER_DEPTH: usize = 64;
/// Length of magic plus version bytes, the part that tells how long the length field is.
pub const MAGIC_VERSION_LEN: usize = 8;
/// The largest element count and data length (in bytes) a header may describe, which
/// [`Header::parse`] checks: `isize::MAX` on a 64-bit host, NumPy's own bound; 2^53 on a
/// 32-bit one (WebAssembly's wasm32), see [`Header::data_len_u64`].
pub const MAX_DATA_LEN: u64 = Sizes::HOST.codec;

/// What a file is: by its first [`FileKind::PROBE_LEN`] bytes ([`FileKind::of`], told as
/// `np.load` tells it: what a reader goes by), or by its name's suffix
/// ([`FileKind::of_name`]: what a directory listing or a table's files go by, before any
/// byte is read). The one place either test is written.
///
/// # Examples
/// ```
/// use npy_core::header::FileKind;
///
/// assert_eq!(FileKind::of(b"\x93NUMPY"), FileKind::Npy);
/// assert_eq!(FileKind::of(b"PK\x03\x04\x14\x00"), FileKind::Zip);
/// assert_eq!(FileKind::of(b"\x80\x04\x95"), FileKind::Other);
/// assert_eq!(FileKind::of(b""), FileKind::Empty);
/// assert_eq!(FileKind::of_name("runs/a.NPZ"), Some(FileKind::Zip));
/// assert_eq!(FileKind::of_name("notes.txt"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// [`MAGIC`]: a `.npy` file.
    Npy,
    /// A zip archive (`PK\x03\x04`, or `PK\x05\x06` for an empty one): an `.npz`.
    Zip,
    /// No bytes at all (`np.load` raises `EOFError`).
    Empty,
    /// Anything else (`np.load` would try it as a pickle).
    Other,
}

impl FileKind {
    /// How many first bytes tell the kinds apart.
    pub const PROBE_LEN: usize = 6;

    /// The kind of a file whose first bytes are `start` (all of them, or at least
    /// [`FileKind::PROBE_LEN`]).
    pub fn of(start: &[u8]) -> FileKind {
        if start.is_empty() {
            FileKind::Empty
        } else if start.starts_with(b"PK\x03\x04") || start.starts_with(b"PK\x05\x06") {
            FileKind::Zip
        } else if start.starts_with(MAGIC) {
            FileKind::Npy
        } else {
            FileKind::Other
        }
    }

    /// The kind a file's name says by its suffix, in any case: [`FileKind::Npy`] for
    /// `.npy`, [`FileKind::Zip`] for `.npz`, `None` for any other name (a folder's
    /// other files, which the doors that list folders leave out). `name` is a path or a
    /// URL's path; a trailing `/` is no suffix.
    ///
    /// # Examples
    /// ```
    /// use npy_core::header::FileKind;
    ///
    /// assert_eq!(FileKind::of_name("a/b.npy"), Some(FileKind::Npy));
    /// assert_eq!(FileKind::of_name("s3://bkt/run.Npz"), Some(FileKind::Zip));
    /// assert_eq!(FileKind::of_name("run.npz/"), None);
    /// assert_eq!(FileKind::of_name("npz"), None);
    /// ```
    pub fn of_name(name: &str) -> Option<FileKind> {
        let (stem, suffix) = name.rsplit_once('.')?;
        let named = !stem.is_empty() && !stem.ends_with(['/', '\\']);
        match () {
            () if named && suffix.eq_ignore_ascii_case("npy") => Some(FileKind::Npy),
            () if named && suffix.eq_ignore_ascii_case("npz") => Some(FileKind::Zip),
            () => None,
        }
    }
}

/// A format version of the `.npy` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// 1.0: header length in a `u16`, latin-1 text.
    V1_0,
    /// 2.0: header length in a `u32`, latin-1 text.
    V2_0,
    /// 3.0: header length in a `u32`, UTF-8 text.
    V3_0,
}

impl Version {
    /// `(major, minor)`.
    pub fn number(self) -> (u8, u8) {
        match self {
            Version::V1_0 => (1, 0),
            Version::V2_0 => (2, 0),
            Version::V3_0 => (3, 0),
        }
    }

    /// The version for `(major, minor)`, if NumPy defines it.
    pub fn from_number(major: u8, minor: u8) -> Option<Version> {
        match (major, minor) {
            (1, 0) => Some(Version::V1_0),
            (2, 0) => Some(Version::V2_0),
            (3, 0) => Some(Version::V3_0),
            _ => None,
        }
    }

    /// Bytes of the length field: 2 for 1.0, 4 otherwise.
    pub fn len_field_size(self) -> usize {
        match self {
            Version::V1_0 => 2,
            _ => 4,
        }
    }

    /// Bytes before the header text: magic, version and length field (10 or 12).
    pub fn preamble_len(self) -> usize {
        MAGIC_VERSION_LEN + self.len_field_size()
    }

    fn max_header_len(self) -> usize {
        match self {
            Version::V1_0 => u16::MAX as usize,
            _ => u32::MAX as usize,
        }
    }

    /// The version from the first eight bytes of a file (magic and version).
    ///
    /// # Errors
    /// [`ErrorKind::Format`] for short input, wrong magic or an unknown version.
    pub fn from_magic(bytes: &[u8]) -> Result<Version> {
        if bytes.len() < MAGIC_VERSION_LEN {
            return Err(Error::format(format!(
                "file is {} bytes, shorter than the 8-byte magic and version",
                bytes.len()
            )));
        }
        if &bytes[..6] != MAGIC {
            return Err(Error::format(format!(
                "bad magic {}: expected b'\\x93NUMPY'",
                Literal::Bytes(bytes[..6].to_vec()).repr()
            )));
        }
        Version::from_number(bytes[6], bytes[7]).ok_or_else(|| {
            Error::format(format!("unsupported version {}.{} (1.0, 2.0 and 3.0 are known)", bytes[6], bytes[7]))
        })
    }

    /// Decodes the little-endian header length field that follows the version bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Format`] when `field` is not [`Version::len_field_size`] bytes.
    pub fn decode_header_len(self, field: &[u8]) -> Result<usize> {
        match (self, field) {
            (Version::V1_0, [a, b]) => Ok(u16::from_le_bytes([*a, *b]) as usize),
            (Version::V2_0 | Version::V3_0, [a, b, c, d]) => Ok(u32::from_le_bytes([*a, *b, *c, *d]) as usize),
            _ => Err(Error::format("truncated header length field")),
        }
    }
}

/// What a `.npy` header says: the dtype, the memory order and the shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The element type.
    pub dtype: DType,
    /// True when the data is stored in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The array's shape; empty for a 0-d array.
    pub shape: Vec<usize>,
}

impl Header {
    /// A C-order header.
    pub fn new(dtype: DType, shape: Vec<usize>) -> Header {
        Header { dtype, fortran_order: false, shape }
    }

    /// Number of elements (the product of the shape; 1 for 0-d).
    ///
    /// # Errors
    /// [`ErrorKind::Shape`] when the product of the non-zero dimensions is over
    /// `isize::MAX` (see [`Header::data_len`]).
    pub fn element_count(&self) -> Result<usize> {
        element_count(&self.shape)
    }

    /// Number of data bytes: elements times itemsize.
    ///
    /// As NumPy (whose sizes are `npy_intp`), the product of the non-zero dimensions, and
    /// that times the itemsize, must be at most `isize::MAX`, even when another dimension
    /// is zero: `(0, 2**62, 2**62)` is refused though it has no elements, so no index or
    /// stride computed from the shape can overflow.
    ///
    /// An object array's data is a pickle, not elements: this is then NumPy's `nbytes`
    /// (8 per element), not the pickle's length.
    ///
    /// # Errors
    /// [`ErrorKind::Shape`] when a product overflows.
    pub fn data_len(&self) -> Result<usize> {
        // At most `isize::MAX`, so the conversion is exact.
        Sizes::HOST.data_len(&self.shape, self.dtype.itemsize(), true).map(|n| n as usize)
    }

    /// Number of data bytes as [`Header::data_len`] counts them, checked against
    /// [`MAX_DATA_LEN`] instead of this host's `isize::MAX`: what a reader that takes only
    /// ranges of the data needs to know. The two differ only on a 32-bit host (wasm32),
    /// where a file NumPy wrote on a 64-bit one may hold 4 GiB: its header parses, a reader
    /// of ranges (the JavaScript package's `open`) reads its rows, and [`Header::data_len`]
    /// (which readers that allocate or map the data call) refuses it.
    ///
    /// # Errors
    /// [`ErrorKind::Shape`] when a product is over [`MAX_DATA_LEN`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::header::{Header, Version};
    ///
    /// let text = b"{'descr': '<f4', 'fortran_order': False, 'shape': (32768, 32768), }\n";
    /// let h = Header::parse(Version::V1_0, text)?;
    /// assert_eq!(h.data_len_u64()?, 1 << 32);
    /// // A 64-bit host holds it; a 32-bit one reads it only by ranges.
    /// assert_eq!(h.data_len().is_ok(), usize::BITS == 64);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn data_len_u64(&self) -> Result<u64> {
        Sizes::HOST.data_len(&self.shape, self.dtype.itemsize(), false)
    }

    /// Parses the header text that follows the length field (the dict, padding and `\n`).
    ///
    /// 1.0 and 2.0 text is latin-1, 3.0 text UTF-8; Python 2's `L` suffix on integers is
    /// accepted in 1.0/2.0 as NumPy does. The dict must have exactly the keys `descr`,
    /// `fortran_order` and `shape`, each once. Error offsets count from the start of the
    /// file (the text starts at [`Version::preamble_len`]).
    ///
    /// # Errors
    /// [`ErrorKind::Header`] for text that is not such a dict; [`ErrorKind::Dtype`] or
    /// [`ErrorKind::UnsupportedDtype`] for a bad `descr`; [`ErrorKind::Shape`] for a shape
    /// with more than 64 dimensions or an element count that overflows.
    ///
    /// # Examples
    /// ```
    /// use npy_core::header::{Header, Version};
    ///
    /// let h = Header::parse(Version::V1_0, b"{'descr': '>f8', 'fortran_order': True, 'shape': (3, 4), }   \n")?;
    /// assert_eq!(h.dtype.descr(), "'>f8'");
    /// assert!(h.fortran_order);
    /// assert_eq!(h.shape, [3, 4]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn parse(version: Version, text: &[u8]) -> Result<Header> {
        let base = version.preamble_len();
        let decoded: std::borrow::Cow<'_, str> = match version {
            Version::V3_0 => std::str::from_utf8(text)
                .map_err(|e| Error::header(base + e.valid_up_to(), "header text is not valid UTF-8"))?
                .into(),
            // ASCII (what NumPy writes unless a name is not) is latin-1 and UTF-8 alike:
            // read in place. Other latin-1 text is decoded, one char per byte.
            _ => match (text.is_ascii(), std::str::from_utf8(text)) {
                (true, Ok(ascii)) => ascii.into(),
                _ => text.iter().map(|&b| b as char).collect::<String>().into(),
            },
        };
        // Error offsets in bytes of the file: for latin-1, one byte per char.
        let file_offset = |at: usize| match version {
            Version::V3_0 => base + at,
            _ => base + decoded.get(..at).map_or(at, |s| s.chars().count()),
        };
        let mut opts = ParseOptions::new();
        opts.allow_long_suffix(version != Version::V3_0).max_depth(MAX_HEADER_DEPTH);
        let tape = literal::parse_tape(&decoded, opts).map_err(|e| Error::header(file_offset(e.offset), e.reason))?;
        let lit = tape.root();
        let bad = |reason: String| Error::header(base, reason);
        let Kind::Dict = lit.kind() else {
            return Err(bad(format!("header is not a dict: {}", truncate(&lit.repr()))));
        };
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        for (key, value) in lit.entries() {
            let slot = match key.as_str() {
                Some("descr") => &mut descr,
                Some("fortran_order") => &mut fortran,
                Some("shape") => &mut shape,
                _ => {
                    return Err(bad(format!(
                        "unexpected key {} (only 'descr', 'fortran_order' and 'shape' are allowed)",
                        truncate(&key.repr())
                    )))
                }
            };
            if slot.is_some() {
                return Err(bad(format!("duplicate key {}", key.repr())));
            }
            *slot = Some(value);
        }
        let missing = |k: &str| bad(format!("missing key '{k}'"));
        let descr = descr.ok_or_else(|| missing("descr"))?;
        let fortran_lit = fortran.ok_or_else(|| missing("fortran_order"))?;
        let fortran_order = match fortran_lit.kind() {
            Kind::Bool(b) => b,
            _ => {
                return Err(bad(format!(
                    "'fortran_order' must be True or False, found {}",
                    truncate(&fortran_lit.repr())
                )))
            }
        };
        let shape_lit = shape.ok_or_else(|| missing("shape"))?;
        let shape = parse_shape(shape_lit).map_err(bad)?;
        if shape.len() > MAX_DIMS {
            let reason = format!("{} dimensions, more than {MAX_DIMS}", shape.len());
            return Err(ErrorKind::Shape { shape: truncate(&shape_repr(&shape)), reason }.into());
        }
        let dtype = DType::from_value(descr)?;
        if matches!(dtype, DType::SubArray(_)) {
            return Err(ErrorKind::UnsupportedDtype {
                descr: descr.repr(),
                reason:
                    "a (type, shape) descr for a whole array is not supported: put the subarray's shape into 'shape'"
                        .into(),
            }
            .into());
        }
        let header = Header { dtype, fortran_order, shape };
        header.data_len_u64()?;
        Ok(header)
    }

    /// Whether header text that [`Header::parse`] accepted needed Python 2's `L` suffix on
    /// an integer (`(3L,)`): written by NumPy on Python 2, for which `np.load` warns
    /// ("required additional header parsing as it was created on Python 2").
    ///
    /// # Examples
    /// ```
    /// use npy_core::header::{Header, Version};
    ///
    /// let py2 = b"{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }\n";
    /// assert!(Header::parse(Version::V1_0, py2).is_ok());
    /// assert!(Header::needs_python2(Version::V1_0, py2));
    /// assert!(!Header::needs_python2(Version::V1_0, b"{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }\n"));
    /// ```
    pub fn needs_python2(version: Version, text: &[u8]) -> bool {
        if version == Version::V3_0 || !text.iter().any(|&b| b == b'L' || b == b'l') {
            return false;
        }
        // Latin-1, one char per byte, as `parse` reads it.
        let decoded: String = text.iter().map(|&b| b as char).collect();
        let mut strict = ParseOptions::new();
        strict.max_depth(MAX_HEADER_DEPTH);
        literal::parse_tape(&decoded, strict).is_err()
    }

    /// The dict text `np.save` writes, growth-axis spaces included, before padding:
    /// `{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }` followed by spaces.
    pub fn dict_text(&self) -> String {
        let fields = self.dtype.as_record().map_or(0, |r| r.fields().len());
        let mut s = String::with_capacity(128 + fields.saturating_mul(32));
        s.push_str("{'descr': ");
        self.dtype.write_descr(&mut s);
        let order = if self.fortran_order { "True" } else { "False" };
        let _ = write!(s, ", 'fortran_order': {order}, 'shape': {}, }}", shape_repr(&self.shape));
        // NumPy: header += " " * (GROWTH_AXIS_MAX_DIGITS - len(repr(shape[-1 if fortran else 0])))
        let growth = if self.fortran_order { self.shape.last() } else { self.shape.first() };
        if let Some(d) = growth {
            let digits = d.to_string().len();
            s.extend(std::iter::repeat_n(' ', GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
        }
        s
    }

    /// The full preamble and header as `np.save` writes them: magic, version, length,
    /// dict text, space padding so the data starts at a multiple of 64, and `\n`.
    ///
    /// With `version` `None` the oldest version that fits is used, as NumPy chooses:
    /// 1.0 if the text is latin-1 and short enough, else 2.0 if latin-1, else 3.0.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] when the header does not fit the requested version (too long,
    /// or not latin-1 for 1.0/2.0).
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::DType;
    /// use npy_core::header::{Header, Version};
    ///
    /// let h = Header::new("<f8".parse::<DType>()?, vec![3]);
    /// let (version, bytes) = h.encode(None)?;
    /// assert_eq!(version, Version::V1_0);
    /// assert_eq!(bytes.len(), 128);
    /// assert!(bytes.starts_with(b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"));
    /// assert_eq!(bytes[127], b'\n');
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn encode(&self, version: Option<Version>) -> Result<(Version, Vec<u8>)> {
        let folded = self.folded()?;
        let text = folded.as_ref().unwrap_or(self).dict_text();
        match version {
            Some(v) => Ok((v, wrap(&text, v)?)),
            None => [Version::V1_0, Version::V2_0, Version::V3_0]
                .into_iter()
                .find_map(|v| wrap(&text, v).ok().map(|b| (v, b)))
                .ok_or_else(|| Error::usage("header too long for any .npy version")),
        }
    }

    /// The header encoded as [`Header::encode`] does, in `version` if it fits there, else
    /// in the oldest version that fits: what writing back an array read from a file of
    /// `version` gives (`read_dyn` then `write_npy` keep the file's version when they can).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] when the header fits no version.
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::DType;
    /// use npy_core::header::{Header, Version};
    ///
    /// let h = Header::new("<f8".parse::<DType>()?, vec![3]);
    /// // Fits version 2.0, so it stays there.
    /// assert_eq!(h.encode_keeping(Version::V2_0)?.0, Version::V2_0);
    /// // A name that is not latin-1 does not fit 1.0: the oldest version that fits is 3.0.
    /// let cjk = Header::new("[('温度', '<f4')]".parse::<DType>()?, vec![2]);
    /// assert_eq!(cjk.encode_keeping(Version::V1_0)?.0, Version::V3_0);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn encode_keeping(&self, version: Version) -> Result<(Version, Vec<u8>)> {
        self.encode(Some(version)).or_else(|_| self.encode(None))
    }
}

impl Header {
    /// This header encoded as `version` at exactly `total_len` bytes (magic to `\n`), the
    /// dict padded with spaces: what an in-place update of the shape writes over a header
    /// of that length (the room `np.save` leaves after the dict). `None` when it does not
    /// fit, or cannot be written as `version`.
    pub(crate) fn in_place(&self, version: Version, total_len: usize) -> Option<Vec<u8>> {
        let folded = self.folded().ok()?;
        let text = folded.as_ref().unwrap_or(self).dict_text();
        let mut out = wrap(text.trim_end(), version).ok()?;
        if out.len() > total_len {
            return None;
        }
        out.pop();
        out.resize(total_len - 1, b' ');
        out.push(b'\n');
        let hlen = total_len - version.preamble_len();
        match version {
            Version::V1_0 => out[8..10].copy_from_slice(&u16::try_from(hlen).ok()?.to_le_bytes()),
            _ => out[8..12].copy_from_slice(&u32::try_from(hlen).ok()?.to_le_bytes()),
        }
        Some(out)
    }

    /// This header as NumPy keeps it, when its element type is a subarray (`[T; N]`
    /// elements): NumPy has no subarray dtype at the top level of an array, its dims go
    /// after the array's (`Vec<[u8; 4]>` of 2 is `'|u1'` of shape `(2, 4)`), as `np.save`
    /// would write `np.zeros(2, dtype=('u1', (4,)))`. `None` for any other element type.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for a Fortran-order array of more than one non-trivial
    /// dimension: its elements' dims would vary fastest, which no NumPy order gives.
    fn folded(&self) -> Result<Option<Header>> {
        let DType::SubArray(sub) = &self.dtype else { return Ok(None) };
        if self.fortran_order && self.shape.iter().filter(|&&d| d > 1).count() > 1 {
            return Err(Error::usage(format!(
                "a Fortran-order array of shape {} with subarray elements {} has no NumPy layout: \
                 write it in C order",
                shape_repr(&self.shape),
                self.dtype.descr()
            )));
        }
        let mut shape = self.shape.clone();
        shape.extend(sub.flat_shape());
        Ok(Some(Header { dtype: sub.flat_base().clone(), fortran_order: false, shape }))
    }

    /// The inverse of [`Header::folded`]: this header as an array of `element`s, when
    /// `element` is a subarray type (`[T; N]`, nested) whose dims are this array's last
    /// ones and whose elements are contiguous (C order, or no more than one dim over 1):
    /// `'|u1'` of shape `(2, 4)` is 2 elements `[u8; 4]`. `None` otherwise, and for
    /// subarrays of no elements.
    pub(crate) fn grouped(&self, element: &DType) -> Option<Header> {
        let DType::SubArray(sub) = element else { return None };
        if matches!(self.dtype, DType::SubArray(_)) {
            return None; // grouped already
        }
        let inner = sub.flat_shape();
        let lead = self.shape.len().checked_sub(inner.len())?;
        let contiguous = !self.fortran_order || self.shape.iter().filter(|&&d| d > 1).count() <= 1;
        if self.shape[lead..] != inner[..] || !contiguous || inner.contains(&0) {
            return None;
        }
        let dtype = DType::subarray(self.dtype.clone(), inner).ok()?;
        Some(Header { dtype, fortran_order: self.fortran_order, shape: self.shape[..lead].to_vec() })
    }
}

/// Pads the dict text and puts the preamble in front, as NumPy's `_wrap_header`.
fn wrap(text: &str, version: Version) -> Result<Vec<u8>> {
    let body: Vec<u8> = match version {
        Version::V3_0 => text.as_bytes().to_vec(),
        _ => text.chars().map(|c| u8::try_from(c as u32)).collect::<std::result::Result<_, _>>().map_err(|_| {
            Error::usage(format!("header is not latin-1, so it cannot be written as version {}.0", version.number().0))
        })?,
    };
    let preamble = version.preamble_len();
    let hlen = body.len() + 1;
    let padlen = ARRAY_ALIGN - (preamble + hlen) % ARRAY_ALIGN;
    let total_len = hlen + padlen;
    if total_len > version.max_header_len() {
        return Err(Error::usage(format!(
            "header of {total_len} bytes is too long for version {}.0",
            version.number().0
        )));
    }
    let mut out = Vec::with_capacity(preamble + total_len);
    out.extend_from_slice(MAGIC);
    let (major, minor) = version.number();
    out.extend_from_slice(&[major, minor]);
    match version {
        Version::V1_0 => out.extend_from_slice(&(total_len as u16).to_le_bytes()),
        _ => out.extend_from_slice(&(total_len as u32).to_le_bytes()),
    }
    out.extend_from_slice(&body);
    out.resize(out.len() + padlen, b' ');
    out.push(b'\n');
    Ok(out)
}

/// The product of the dims, checked as NumPy checks shapes (see [`Header::data_len`]).
pub(crate) fn element_count(shape: &[usize]) -> Result<usize> {
    // At most `isize::MAX`, so the conversion is exact.
    Sizes::HOST.element_count(shape, true).map(|n| n as usize)
}

/// The bounds sizes are checked against, computed in `u64` so that a 32-bit host counts
/// past its `usize`.
///
/// `whole`: what a reader that allocates or maps the data can hold, `isize::MAX` of the
/// host (NumPy's `npy_intp`). `codec`: what a header may describe, [`MAX_DATA_LEN`]: the
/// same on a 64-bit host, so NumPy's rule holds exactly there; on a 32-bit host 2^53
/// instead of 2 GiB, so the header codec (one for every reader) accepts what NumPy wrote
/// on a 64-bit host, for readers that only take ranges, while readers that hold the data
/// still refuse it. 2^53 and not `u64::MAX`: the JavaScript package gives sizes and
/// offsets as numbers, exact up to 2^53 (8 PiB, past any file).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sizes {
    whole: u64,
    codec: u64,
}

impl Sizes {
    /// This host's bounds.
    const HOST: Sizes = Sizes::of(isize::MAX as u64);

    /// The bounds of a host whose `isize::MAX` is `isize_max`.
    const fn of(isize_max: u64) -> Sizes {
        const RANGES: u64 = 1 << 53;
        Sizes { whole: isize_max, codec: if isize_max > RANGES { isize_max } else { RANGES } }
    }

    /// The element count of `shape`, within `whole` when a reader holds the data, else
    /// within `codec`.
    fn element_count(self, shape: &[usize], whole: bool) -> Result<u64> {
        let nonzero = self.nonzero_product(shape, 1, whole, "element count")?;
        Ok(if shape.contains(&0) { 0 } else { nonzero })
    }

    /// The data bytes of `shape` elements of `itemsize` bytes, within `whole` when a
    /// reader holds the data, else within `codec`.
    fn data_len(self, shape: &[usize], itemsize: usize, whole: bool) -> Result<u64> {
        let elements = self.element_count(shape, whole)?;
        let bytes = self.nonzero_product(shape, itemsize, whole, "byte count")?;
        Ok(if elements == 0 { 0 } else { bytes })
    }

    /// `factor` times the non-zero dims, if within the bound: NumPy skips zero dims when
    /// it checks a shape, so a zero dim does not excuse the others.
    fn nonzero_product(self, shape: &[usize], factor: usize, whole: bool, what: &str) -> Result<u64> {
        let product = shape
            .iter()
            .filter(|&&d| d != 0)
            .try_fold(factor as u64, |acc, &d| acc.checked_mul(d as u64).filter(|&n| n <= self.codec));
        match product {
            Some(n) if !whole || n <= self.whole => Ok(n),
            // Only on a 32-bit host, where `codec` is the larger.
            Some(n) => Err(Error::shape(
                shape,
                format!(
                    "{what} {n} is over {}, isize::MAX of this 32-bit host: the array can be read here only by ranges",
                    self.whole
                ),
            )),
            None if self.codec == self.whole => {
                Err(Error::shape(shape, format!("{what} overflows: the non-zero dimensions multiply past isize::MAX")))
            }
            None => Err(Error::shape(shape, format!("{what} overflows: the non-zero dimensions multiply past 2^53"))),
        }
    }
}

fn parse_shape(lit: Value<'_, '_>) -> std::result::Result<Vec<usize>, String> {
    let Kind::Tuple = lit.kind() else {
        return Err(format!("'shape' must be a tuple of ints, found {}", truncate(&lit.repr())));
    };
    lit.items()
        .map(|d| match d.kind() {
            Kind::Int(n) if n >= 0 => usize::try_from(n).map_err(|_| format!("dimension {n} is too large")),
            Kind::Int(n) => Err(format!("negative dimension {n} in 'shape'")),
            _ => Err(format!("'shape' must be a tuple of ints, found {}", truncate(&d.repr()))),
        })
        .collect()
}

fn truncate(s: &str) -> String {
    const MAX: usize = 60;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(descr: &str, fortran_order: bool, shape: &[usize]) -> Header {
        Header { dtype: descr.parse().unwrap(), fortran_order, shape: shape.to_vec() }
    }

    fn text_of(bytes: &[u8], v: Version) -> &[u8] {
        &bytes[v.preamble_len()..]
    }

    #[test]
    fn encodes_what_np_save_writes() {
        // From ../shared/corpus manifest: datetime/be_M8_D.npy.
        let h = header("'>M8[D]'", false, &[6]);
        let (v, bytes) = h.encode(None).unwrap();
        assert_eq!(v, Version::V1_0);
        let want = format!("{{'descr': '>M8[D]', 'fortran_order': False, 'shape': (6,), }}{}\n", " ".repeat(57));
        assert_eq!(text_of(&bytes, v), want.as_bytes());
        assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00\x76\x00");
    }

    #[test]
    fn growth_axis_follows_order_and_zero_d_has_none() {
        let c = header("'<f8'", false, &[100000, 3]);
        assert!(c.dict_text().ends_with(&format!("(100000, 3), }}{}", " ".repeat(15))));
        let f = header("'<f8'", true, &[100000, 3]);
        assert!(f.dict_text().ends_with(&format!("(100000, 3), }}{}", " ".repeat(20))));
        let z = header("'<f8'", false, &[]);
        assert!(z.dict_text().ends_with("'shape': (), }"));
    }

    #[test]
    fn text_ending_on_boundary_still_gets_64_spaces() {
        // pad64_quirk: dict text + '\n' ends exactly at 64 bytes => NumPy adds 64 spaces.
        let name = "p".repeat(98);
        let h = header(&format!("[('{name}', '<f4')]"), false, &[5]);
        let (v, bytes) = h.encode(None).unwrap();
        assert_eq!(bytes.len(), 256);
        assert_eq!(bytes.len() % 64, 0);
        let text = std::str::from_utf8(text_of(&bytes, v)).unwrap();
        assert!(text.ends_with(&format!("{}\n", " ".repeat(64))));
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn version_choice_follows_numpy() {
        let latin = header("[('café', '<i4'), ('naïve', '<f2')]", false, &[3]);
        let (v, bytes) = latin.encode(None).unwrap();
        assert_eq!(v, Version::V1_0);
        assert!(bytes.windows(4).any(|w| w == b"caf\xe9"));
        let cjk = header("[('温度', '<f4')]", false, &[3]);
        let (v, bytes) = cjk.encode(None).unwrap();
        assert_eq!(v, Version::V3_0);
        assert!(std::str::from_utf8(&bytes[12..]).unwrap().contains("温度"));
        assert!(cjk.encode(Some(Version::V1_0)).is_err());
        let fields: Vec<String> = (0..6000).map(|i| format!("('f{i:04}', '<i2')")).collect();
        let big = header(&format!("[{}]", fields.join(", ")), false, &[1]);
        let (v, bytes) = big.encode(None).unwrap();
        assert_eq!(v, Version::V2_0);
        assert_eq!(bytes.len() % 64, 0);
    }

    #[test]
    fn parse_round_trips_encode() {
        for (d, f, s) in
            [("'<f8'", false, vec![3usize, 4]), ("'|b1'", true, vec![]), ("[('a', '>i4', (2,))]", false, vec![0, 5])]
        {
            let h = header(d, f, &s);
            let (v, bytes) = h.encode(None).unwrap();
            assert_eq!(Header::parse(v, text_of(&bytes, v)).unwrap(), h);
        }
    }

    #[test]
    fn legacy_headers_parse() {
        let h = Header::parse(Version::V1_0, b"{'shape': (4,), 'fortran_order': False, 'descr': '>u2'}  \n").unwrap();
        assert_eq!(h, header("'>u2'", false, &[4]));
        let h =
            Header::parse(Version::V1_0, b"{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 3L), }\n").unwrap();
        assert_eq!(h.shape, [2, 3]);
        assert!(
            Header::parse(Version::V3_0, b"{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 3L), }\n").is_err()
        );
        let h =
            Header::parse(Version::V1_0, b"{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (3,)}\n").unwrap();
        assert_eq!(h.shape, [3]);
        // latin-1 text in 1.0
        let h =
            Header::parse(Version::V1_0, b"{'descr': [('caf\xe9', '<i4')], 'fortran_order': False, 'shape': (3,), }\n")
                .unwrap();
        assert_eq!(h.dtype.as_record().unwrap().fields()[0].name, "café");
    }

    #[test]
    fn ascii_is_read_in_place_and_latin1_decoded_alike() {
        // ASCII text is read in place, other latin-1 text decoded: the same headers, and
        // error offsets in bytes of the file either way.
        for name in [&b"cafe"[..], b"caf\xe9", b"\xff\xfe"] {
            let text =
                [&b"{'descr': [('"[..], name, b"', '<i4')], 'fortran_order': False, 'shape': (3,), 'x' 1}"].concat();
            let e = Header::parse(Version::V1_0, &text).unwrap_err();
            let at = text.windows(3).position(|w| w == b" 1}").unwrap() + 1;
            assert!(matches!(e.kind(), ErrorKind::Header { offset, .. } if *offset == 10 + at), "{e}");
            let good = [&b"{'descr': [('"[..], name, b"', '<i4')], 'fortran_order': False, 'shape': (3,), }"].concat();
            let h = Header::parse(Version::V2_0, &good).unwrap();
            let want: String = name.iter().map(|&b| char::from(b)).collect();
            assert_eq!(h.dtype.as_record().unwrap().fields()[0].name, want);
        }
    }

    #[test]
    fn bad_headers_say_what_and_where() {
        let cases: &[(&[u8], &str)] = &[
            (b"{'descr': '<f8', 'fortran_order': False}\n", "missing key 'shape'"),
            (b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}\n", "unexpected key 'x'"),
            (b"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\n", "duplicate key 'descr'"),
            (b"{'descr': '<f8', 'fortran_order': 0, 'shape': (3,)}\n", "'fortran_order' must be True or False"),
            (b"{'descr': '<f8', 'fortran_order': False, 'shape': [3]}\n", "'shape' must be a tuple of ints"),
            (b"{'descr': '<f8', 'fortran_order': False, 'shape': (-3,)}\n", "negative dimension"),
            (b"{'descr': '<f8', 'fortran_order': False, 'shape': (True,)}\n", "must be a tuple of ints"),
            (b"['descr']\n", "header is not a dict"),
        ];
        for (text, want) in cases {
            let e = Header::parse(Version::V1_0, text).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Header { offset: 10, .. }), "{e}");
            assert!(e.to_string().contains(want), "{e} should contain {want}");
        }
        let e = Header::parse(Version::V1_0, b"{'descr' 5}").unwrap_err();
        let ErrorKind::Header { offset, .. } = e.kind() else { panic!("{e}") };
        assert_eq!(*offset, 10 + 9, "{e}");
        let e = Header::parse(Version::V3_0, b"{'descr': '\xff'}").unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Header { offset: 23, .. }), "{e}");
        let dims = vec!["1"; 65].join(", ");
        let e = Header::parse(
            Version::V1_0,
            format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({dims})}}").as_bytes(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("more than 64"), "{e}");
        let e = Header::parse(
            Version::V1_0,
            b"{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}",
        )
        .unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{e}");
        let e = Header::parse(Version::V1_0, b"{'descr': ('<f8', (3,)), 'fortran_order': False, 'shape': (2,)}")
            .unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{e}");
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn shapes_are_checked_as_numpy_checks_them() {
        // NumPy 2.4, np.empty(shape, dtype): the non-zero dims times the itemsize must fit
        // an npy_intp, even when another dim is zero; np.load also needs the element count
        // to fit one (`|V0` of 2**63 elements fails to load).
        let parse = |descr: &str, shape: &str| Header::parse(Version::V1_0, dict(descr, shape).as_bytes());
        for (descr, shape) in [
            ("'<f8'", "(0, 4611686018427387904, 2)"),
            ("'<f8'", "(1152921504606846976, 0)"),
            ("'<u2'", "(0, 9223372036854775807)"),
            ("'|u1'", "(0, 9223372036854775808)"),
            ("'|V0'", "(4611686018427387904, 2)"),
        ] {
            let e = parse(descr, shape).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{descr} {shape}: {e}");
        }
        for (descr, shape, len) in [
            ("'|u1'", "(0, 576460752303423488, 8)", 0),
            ("'|u1'", "(0, 9223372036854775807)", 0),
            ("'|V0'", "(4611686018427387903, 2)", 0),
            ("'<f8'", "(1152921504606846975,)", 9223372036854775800),
        ] {
            let h = parse(descr, shape).unwrap_or_else(|e| panic!("{descr} {shape}: {e}"));
            assert_eq!(h.data_len().unwrap(), len, "{descr} {shape}");
        }
        let many = format!("({})", vec!["1"; 10_000].join(", "));
        let e = parse("'<f8'", &many).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Shape { .. }) && e.to_string().len() < 200, "{e}");
    }

    #[test]
    fn a_32_bit_host_parses_what_it_reads_only_by_ranges() {
        // wasm32's isize::MAX is 2^31 - 1: the codec's bound is 2^53 there, the bound of
        // what a reader holds stays isize::MAX. On a 64-bit host both are NumPy's.
        let wasm32 = Sizes::of(i32::MAX as u64);
        assert_eq!(wasm32, Sizes { whole: (1 << 31) - 1, codec: 1 << 53 });
        assert_eq!(Sizes::of(i64::MAX as u64), Sizes { whole: i64::MAX as u64, codec: i64::MAX as u64 });
        #[cfg(target_pointer_width = "64")]
        assert_eq!(MAX_DATA_LEN, isize::MAX as u64);
        // A 4 GiB <f4 image and a 2.4 GB matrix: their headers parse, a reader holding
        // the data refuses them, saying how they can be read.
        for (shape, len) in [(&[32768, 32768][..], 1u64 << 32), (&[30000, 20000][..], 2_400_000_000)] {
            assert_eq!(wasm32.data_len(shape, 4, false).unwrap(), len, "{shape:?}");
            let e = wasm32.data_len(shape, 4, true).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{e}");
            assert!(e.to_string().contains(&format!("byte count {len} is over 2147483647")), "{e}");
            assert!(e.to_string().contains("only by ranges"), "{e}");
            assert_eq!(Sizes::HOST.data_len(shape, 4, false).unwrap(), len);
        }
        // Just under and at 2 GiB, for a reader that holds the data.
        assert_eq!(wasm32.data_len(&[(1 << 31) - 1], 1, true).unwrap(), (1 << 31) - 1);
        assert!(wasm32.data_len(&[1 << 29], 4, true).is_err());
        assert!(wasm32.element_count(&[1 << 16, 1 << 15], true).unwrap_err().to_string().contains("element count"));
        // NumPy's rule on zero dims holds within each bound: (0, 2^31) of bytes has no
        // data but its other dims' product is over what a 32-bit host holds.
        assert_eq!(wasm32.data_len(&[0, 1 << 31], 1, false).unwrap(), 0);
        assert!(wasm32.data_len(&[0, 1 << 31], 1, true).is_err());
        assert!(wasm32.data_len(&[0, 1 << 26, 1 << 27], 2, false).unwrap_err().to_string().contains("past 2^53"));
        // 2^53 itself is the last length a ranges reader on a 32-bit host accepts.
        assert_eq!(wasm32.data_len(&[1 << 26, 1 << 27], 1, false).unwrap(), 1 << 53);
        assert!(wasm32.data_len(&[(1 << 26) + 1, 1 << 27], 1, false).is_err());
    }

    fn dict(descr: &str, shape: &str) -> String {
        format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}}}")
    }

    #[test]
    fn preamble_checks() {
        assert_eq!(Version::from_magic(b"\x93NUMPY\x02\x00").unwrap(), Version::V2_0);
        assert!(matches!(Version::from_magic(b"\x93NUMPY\x04\x00").unwrap_err().kind(), ErrorKind::Format { .. }));
        assert!(matches!(Version::from_magic(b"PK\x03\x04abcd").unwrap_err().kind(), ErrorKind::Format { .. }));
        assert!(matches!(Version::from_magic(b"\x93NU").unwrap_err().kind(), ErrorKind::Format { .. }));
        assert_eq!(Version::V1_0.decode_header_len(&[0x76, 0]).unwrap(), 118);
        assert_eq!(Version::V2_0.decode_header_len(&[0, 0, 1, 0]).unwrap(), 65536);
    }

    #[test]
    fn shape_reprs() {
        assert_eq!(shape_repr(&[]), "()");
        assert_eq!(shape_repr(&[3]), "(3,)");
        assert_eq!(shape_repr(&[3, 4]), "(3, 4)");
    }
}
