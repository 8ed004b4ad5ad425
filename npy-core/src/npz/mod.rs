//! `.npz` archives: several named arrays in one zip file, as NumPy's `np.savez` and
//! `np.savez_compressed` write them and `np.load` reads them.
//!
//! A member `name.npy` holds the array `name`. [`Writer::add`] adds anything that writes a
//! `.npy` file (slices, N-d arrays, dynamic and object arrays), and
//! [`Writer::add_columns`] a struct's fields as one array each;
//! [`Reader`] lists names as NumPy's `NpzFile.files` does and reads members lazily.
//!
//! Stored members are streamed into the archive with their array data aligned to 64 bytes
//! (so they can be memory-mapped) and their CRC-32 computed on a second thread as they are
//! written; compressed members (deflate or Zstandard) are compressed on worker threads, in
//! parallel, and appended in order. The same members give the same bytes, whatever the
//! threads: no timestamps (every member is dated 1980-01-01), names and order as added. Zip64 is used whenever a member or the archive needs it. CRCs are checked on
//! every read.
//!
//! [`Reader::read_all`] and [`Reader::read_many`] give several members at once (what
//! `{k: f[k] for k in np.load(path).files}` gives), read on worker threads (one per CPU)
//! when the archive was opened by path. One compressed member is decompressed by one thread,
//! from its start (a deflate stream as `np.savez_compressed` writes it cannot be split);
//! read alone, a large one is decompressed on a second thread a few pieces ahead of its CRC
//! check and conversion. So deflated archives of several members read fastest, as many
//! members at a time as there are CPUs; stored members read faster still, or are mapped
//! ([`crate::mmap::NpyMap::from_npz_member`]).
//!
//! Archives are checked when opened: the central directory against the end records and
//! every local header, members' places, names, methods and claimed sizes, within limits
//! set by [`ReaderOptions`] (see [`Reader`]). A hostile archive is an [`ErrorKind::Npz`]
//! error, not a panic, a hang or an allocation the file's bytes cannot back.
//!
//! # Examples
//! ```
//! use std::io::Cursor;
//! use npy_core::npz::{Compression, Reader, Writer};
//!
//! let mut w = Writer::new(Cursor::new(Vec::new()));
//! w.add("time", &[0.0f64, 0.5, 1.0])?;
//! w.add_with("counts", &[3u32, 1, 4], Compression::deflated())?;
//! let bytes = w.finish()?.into_inner();
//!
//! let mut r = Reader::from_reader(Cursor::new(bytes))?;
//! assert_eq!(r.names(), ["time", "counts"]);
//! assert_eq!(r.read::<Vec<u32>>("counts")?, [3, 1, 4]);
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::io;

use zip::result::ZipError;

pub use crate::atomic::GrowingFile;
use crate::error::Error;
#[cfg(doc)]
use crate::error::ErrorKind;

// Where to look: `decoder` (MemberDecoder: a member's bytes decoded as they are pushed),
// `write` (Writer, MemberWriter, FileWriter and the sink under them),
// `workers` (members compressed on threads), `parts` (a member compressed in independent
// parts on several threads), `encoder` (the deflate encoder a part's sample chooses),
// `part_index` (where the parts start, for readers that decompress them at once),
// `whole` (a member in parts decompressed whole, its parts at once), `inflate` (zlib-rs's
// streaming inflater), `read` (ReaderOptions, Reader and
// member streaming; `read/parallel` several members read at once on worker threads,
// `read/piped` a member decompressed on a second thread), `directory` (the archive's
// structure, checked when it is opened), `columns` (records as one array per field, both
// ways). This file: what they share.
mod codec;
mod columns;
mod decoder;
mod directory;
mod encoder;
mod inflate;
mod members;
mod options;
mod part_index;
mod parts;
mod read;
#[cfg(not(any(target_family = "wasm", miri)))]
mod whole;
mod workers;
mod write;

pub use decoder::MemberDecoder;
pub use members::{local_header_ranges, local_header_ranges_with, members, members_with, MemberInfo};
pub use options::ReaderOptions;
pub use read::{MemberReader, OwnedMemberReader, Reader};
pub use write::{FileWriter, MemberWriter, Writer};

/// NumPy's member suffix.
const NPY_SUFFIX: &str = ".npy";

/// How a member is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// No compression (`np.savez`): members can be memory-mapped.
    Stored,
    /// Deflate (`np.savez_compressed`) at a level from 1 to 9.
    Deflated {
        /// zlib level, 1 (fastest) to 9 (smallest); NumPy uses 6. 0 is taken as 1 (for
        /// no compression use [`Compression::Stored`]), above 9 as 9. The level sets the
        /// size: at 4 to 6 a member of 1 MiB or more may be deflated by a faster encoder
        /// than zlib where a sample says it comes within 1.5% of zlib's size at the level
        /// (libdeflate, zlib-rs; see the crate's README).
        level: u32,
    },
    /// Zstandard (zip method 93) at a level from 1 to 22. Far quicker than deflate at a
    /// smaller size for most arrays; `np.load` reads it on Python 3.14 or later (whose
    /// `zipfile` knows method 93), and on 3.11 to 3.13 once the `zipfile-zstd` package has
    /// patched `zipfile`. Not memory-mappable, as deflate.
    Zstd {
        /// libzstd level, 1 (fastest) to 22 (smallest; above 19 the decoder needs up to
        /// 128 MiB); [`Compression::ZSTD_LEVEL`] by default. 0 is taken as 1, above 22 as
        /// 22.
        level: u32,
    },
}

impl Compression {
    /// The level of [`Compression::deflated`]: 6, as `np.savez_compressed` (zlib's default).
    pub const DEFLATE_LEVEL: u32 = 6;

    /// Deflate at level [`Compression::DEFLATE_LEVEL`] (6), as `np.savez_compressed`.
    pub const fn deflated() -> Compression {
        Compression::Deflated { level: Compression::DEFLATE_LEVEL }
    }

    /// The level of [`Compression::zstd`]: 8, the lowest at which the seismic traces of
    /// the bench come out no larger than `np.savez_compressed` makes them (libzstd's
    /// default 3 leaves them twice that size: its fast strategy misses their repeats), at
    /// level 3's speed there (bench: `zstd_*` rows; the table is in the CHANGELOG).
    pub const ZSTD_LEVEL: u32 = 8;

    /// Zstandard at level [`Compression::ZSTD_LEVEL`] (8).
    pub const fn zstd() -> Compression {
        Compression::Zstd { level: Compression::ZSTD_LEVEL }
    }

    /// The names [`Compression::named`] takes, in the order messages list them.
    pub const NAMES: [&'static str; 3] = ["stored", "deflate", "zstd"];

    /// The compression called `name` (`"stored"`, `"deflate"` or `"zstd"`: what `npy copy
    /// --compression` and Python's `npy.NpzWriter(compression=)` take) at `level`, or at
    /// its default level when `None` ([`Compression::DEFLATE_LEVEL`],
    /// [`Compression::ZSTD_LEVEL`]). The one place names, level ranges and defaults are
    /// checked, so that every front end takes the same ones.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for another name, a level out of its range (deflate 1 to 9,
    /// zstd 1 to 22), or any level for `"stored"`.
    ///
    /// # Examples
    /// ```
    /// use npy_core::npz::Compression;
    ///
    /// assert_eq!(Compression::named("zstd", None)?, Compression::zstd());
    /// assert_eq!(Compression::named("deflate", Some(9))?, Compression::Deflated { level: 9 });
    /// let e = Compression::named("zstd", Some(23)).unwrap_err();
    /// assert!(e.to_string().contains("level 23 is out of range for zstd: 1 to 22"));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn named(name: &str, level: Option<i64>) -> crate::Result<Compression> {
        let out_of_range = |range: &str| {
            let level = level.map_or_else(String::new, |l| format!("{l} "));
            Err(Error::usage(format!("level {level}is out of range for {name}: {range}")))
        };
        match (name, level) {
            ("stored", None) => Ok(Compression::Stored),
            ("stored", Some(level)) => Err(Error::usage(format!("stored has no level (level {level} given)"))),
            ("deflate", None) => Ok(Compression::deflated()),
            ("deflate", Some(level @ 1..=9)) => Ok(Compression::Deflated { level: level as u32 }),
            ("deflate", Some(_)) => out_of_range("1 to 9"),
            ("zstd", None) => Ok(Compression::zstd()),
            ("zstd", Some(level @ 1..=22)) => Ok(Compression::Zstd { level: level as u32 }),
            ("zstd", Some(_)) => out_of_range("1 to 22"),
            _ => Err(Error::usage(format!(
                "unknown compression {name:?}: expected one of {}",
                Compression::NAMES.map(|n| format!("{n:?}")).join(", ")
            ))),
        }
    }
}

impl Default for Compression {
    /// [`Compression::Stored`], as `np.savez`.
    fn default() -> Self {
        Compression::Stored
    }
}

/// How a member is compressed, as its archive records it ([`MemberInfo::compression`]):
/// the method, and for deflate the coarse option zip's general-purpose flags hold. An
/// archive records no level, so none is given.
///
/// npy's [`Writer`] records every deflated member as [`DeflateOption::Normal`], whatever its
/// level, as Python's `zipfile` (and so NumPy) does: the zip crate it writes through sets
/// no option bits.
///
/// # Examples
/// ```
/// use std::io::Cursor;
/// use npy_core::npz::{Compression, DeflateOption, Method, Reader, Writer};
///
/// let mut w = Writer::new(Cursor::new(Vec::new()));
/// w.add_with("a", &[1.5f64, 2.5], Compression::Deflated { level: 9 })?;
/// w.add_with("b", &[1u8, 2], Compression::Zstd { level: 19 })?;
/// let r = Reader::from_reader(Cursor::new(w.finish()?.into_inner()))?;
/// assert_eq!(r.members()[0].compression, Some(Method::Deflated(DeflateOption::Normal)));
/// assert_eq!(r.members()[1].compression, Some(Method::Zstd));
/// // Written back, a Zstandard member takes its method at the default level.
/// assert_eq!(Method::Zstd.compression(), Compression::zstd());
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Not compressed (zip method 0).
    Stored,
    /// Deflate (zip method 8), with the option its flags record.
    Deflated(DeflateOption),
    /// Zstandard (zip method 93), which records no option.
    Zstd,
}

impl Method {
    /// Its compression method id in a zip's headers (APPNOTE 4.4.5): 0, 8 or 93.
    pub const fn zip_id(self) -> u16 {
        match self {
            Method::Stored => 0,
            Method::Deflated(_) => 8,
            Method::Zstd => 93,
        }
    }

    /// The method of zip id `id` of a member whose general-purpose flags are `flags` (bits 1
    /// and 2 a deflated member's option); `None` for a method npy does not read.
    ///
    /// # Examples
    /// ```
    /// use npy_core::npz::{DeflateOption, Method};
    ///
    /// assert_eq!(Method::from_zip_id(8, 0b10), Some(Method::Deflated(DeflateOption::Maximum)));
    /// assert_eq!(Method::from_zip_id(Method::Zstd.zip_id(), 0), Some(Method::Zstd));
    /// assert_eq!(Method::from_zip_id(12, 0), None); // bzip2
    /// ```
    pub const fn from_zip_id(id: u16, flags: u16) -> Option<Method> {
        match id {
            0 => Some(Method::Stored),
            8 => Some(Method::Deflated(DeflateOption::from_flags(flags))),
            93 => Some(Method::Zstd),
            _ => None,
        }
    }

    /// Its name in messages: `stored`, `deflate` or `zstandard`.
    pub const fn name(self) -> &'static str {
        match self {
            Method::Stored => "stored",
            Method::Deflated(_) => "deflate",
            Method::Zstd => "zstandard",
        }
    }

    /// The most bytes one byte of its data can decode to: a stored byte is itself; a
    /// deflate match of 258 bytes coded in two bits is deflate's densest symbol; a
    /// Zstandard block of at most 128 KiB repeating one byte (an RLE block) is coded in
    /// four bytes, its 3-byte header and the byte.
    pub(crate) const fn max_ratio(self) -> u64 {
        match self {
            Method::Stored => 1,
            Method::Deflated(_) => 1032,
            Method::Zstd => 32768,
        }
    }

    /// The compression to write a member back as it was compressed: deflate at the level
    /// its option names (9 for [`DeflateOption::Maximum`], 2 for
    /// [`DeflateOption::Fast`], 1 for [`DeflateOption::SuperFast`], the default 6 for
    /// [`DeflateOption::Normal`]), Zstandard at its default level (its members record
    /// none).
    ///
    /// # Examples
    /// ```
    /// use npy_core::npz::{Compression, DeflateOption, Method};
    ///
    /// assert_eq!(Method::Deflated(DeflateOption::Maximum).compression(), Compression::Deflated { level: 9 });
    /// assert_eq!(Method::Deflated(DeflateOption::Normal).compression(), Compression::deflated());
    /// assert_eq!(Method::Stored.compression(), Compression::Stored);
    /// ```
    pub const fn compression(self) -> Compression {
        match self {
            Method::Stored => Compression::Stored,
            Method::Deflated(DeflateOption::Normal) => Compression::deflated(),
            Method::Deflated(DeflateOption::Maximum) => Compression::Deflated { level: 9 },
            Method::Deflated(DeflateOption::Fast) => Compression::Deflated { level: 2 },
            Method::Deflated(DeflateOption::SuperFast) => Compression::Deflated { level: 1 },
            Method::Zstd => Compression::zstd(),
        }
    }
}

impl Compression {
    /// The [`Method`] a member written so by npy's [`Writer`] records: a deflated one's
    /// option is [`DeflateOption::Normal`] at every level (see [`Method`]).
    ///
    /// # Examples
    /// ```
    /// use npy_core::npz::{Compression, DeflateOption, Method};
    ///
    /// assert_eq!(Compression::Deflated { level: 1 }.method(), Method::Deflated(DeflateOption::Normal));
    /// assert_eq!(Compression::Zstd { level: 3 }.method(), Method::Zstd);
    /// ```
    pub const fn method(self) -> Method {
        match self {
            Compression::Stored => Method::Stored,
            Compression::Deflated { .. } => Method::Deflated(DeflateOption::Normal),
            Compression::Zstd { .. } => Method::Zstd,
        }
    }
}

/// The deflate option a zip member's general-purpose flags record in bits 1 and 2 (APPNOTE
/// 4.4.4), the one trace of the level an archive keeps. Info-ZIP's `zip` sets
/// [`DeflateOption::Maximum`] at levels 8 and 9 and [`DeflateOption::Fast`] at 1 and 2;
/// Python's `zipfile` (so NumPy) and npy's [`Writer`] set [`DeflateOption::Normal`] at
/// every level. A hint, not a promise: a writer may set any of them.
///
/// # Examples
/// ```
/// use npy_core::npz::{DeflateOption, Method};
///
/// let m = Method::Deflated(DeflateOption::Maximum);
/// assert!(matches!(m, Method::Deflated(o) if o != DeflateOption::Normal));
/// assert_eq!(DeflateOption::default(), DeflateOption::Normal);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DeflateOption {
    /// Bits 1 and 2 clear: normal compression (`-en` in Info-ZIP's terms).
    #[default]
    Normal,
    /// Bit 1 set: maximum compression (`-ex`).
    Maximum,
    /// Bit 2 set: fast compression (`-ef`).
    Fast,
    /// Both bits set: super fast compression (`-es`).
    SuperFast,
}

impl DeflateOption {
    /// The option general-purpose `flags` of a deflated member record.
    const fn from_flags(flags: u16) -> DeflateOption {
        match (flags >> 1) & 3 {
            0 => DeflateOption::Normal,
            1 => DeflateOption::Maximum,
            2 => DeflateOption::Fast,
            _ => DeflateOption::SuperFast,
        }
    }
}

/// An error of the zip crate: an I/O error as it is (it may carry an [`Error`] of ours,
/// naming the file), anything else as [`ErrorKind::Npz`] with the zip error as its
/// source.
fn zip_err(member: Option<&str>, e: ZipError) -> Error {
    match e {
        ZipError::Io(io) if io.kind() != io::ErrorKind::InvalidData => io.into(),
        other => Error::npz_from(member, other.to_string(), other),
    }
}

/// Member name `name.npy`.
fn npy_member(name: &str) -> String {
    format!("{name}{NPY_SUFFIX}")
}

/// Whether the file at `path` starts as a zip archive does (`PK\x03\x04`, or `PK\x05\x06`
/// for an empty one): an `.npz` whatever its name, where a `.npy` file starts with
/// `\x93NUMPY`. Reads the first four bytes only; a file shorter than that is no archive.
/// By the bytes, as [`FileKind::of`](crate::header::FileKind::of) tells them; what a name
/// says is [`FileKind::of_name`](crate::header::FileKind::of_name).
///
/// # Errors
/// [`ErrorKind::Io`] naming `path` when it cannot be opened or read, or is not a regular
/// file (a FIFO is refused before it is opened: the open would wait for a writer).
///
/// # Examples
/// ```
/// use npy_core::npz::{self, Writer};
/// use npy_core::WriteNpy;
///
/// let dir = tempfile::tempdir()?;
/// let (archive, array) = (dir.path().join("a.npz"), dir.path().join("a.npy"));
/// let mut w = Writer::create(&archive)?;
/// w.add("x", &[1u8, 2])?;
/// w.finish()?;
/// [1u8, 2].write_npy(&array)?;
/// assert!(npz::is_npz(&archive)?);
/// assert!(!npz::is_npz(&array)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn is_npz(path: impl AsRef<std::path::Path>) -> crate::Result<bool> {
    let path = path.as_ref();
    let sniff = || -> crate::Result<bool> {
        let mut magic = [0u8; 4];
        let got = crate::stream::read_full(&mut crate::file::open_file(path)?, &mut magic)?;
        Ok(crate::header::FileKind::of(&magic[..got]) == crate::header::FileKind::Zip)
    };
    sniff().map_err(|e| e.reading(path))
}
