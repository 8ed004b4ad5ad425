//! Checking an object array's pickle without building its values, for callers whose own
//! unpickler builds them (the `npy` Python package has CPython's, restricted to
//! [`globals`]): whole, by prefixes as the check runs, or with its large payloads left out
//! ([`SparsePickle`]). The check passes exactly what [`super::from_pickle`] decodes.

use super::pickle;
use crate::error::{Error, Result};
use crate::header::Header;
use crate::options::ReadOptions;

/// The `(module, name)` of every global an object array's pickle may name — NumPy's
/// array and scalar reconstruction, `numpy.dtype`, NumPy 2's `StringDType` arguments,
/// `_codecs.encode`, and the data types the module's table lists (under their Python 2
/// and Python 3.13 names too); [`check_pickle`] refuses any other.
///
/// # Examples
/// ```
/// use npy_core::object::globals;
///
/// assert!(globals().any(|g| g == ("numpy._core.multiarray", "_reconstruct")));
/// assert!(!globals().any(|(module, _)| module == "os"));
/// ```
pub fn globals() -> impl Iterator<Item = (&'static str, &'static str)> {
    pickle::GLOBALS.iter().map(|&(module, name, _)| (module, name))
}

/// Checks that `bytes` hold the pickle of an object array that [`from_pickle`](super::from_pickle) decodes,
/// without building the values, and gives the array's shape: for
/// callers that have another unpickler build them, one that names nothing but
/// [`globals`] (the `npy` Python package has CPython's build NumPy's own array, NumPy
/// scalar types and shared values included, once this has said yes).
///
/// # Errors
/// As [`from_pickle`](super::from_pickle).
///
/// # Examples
/// ```
/// use npy_core::object::{check_pickle, to_pickle, Object};
/// use npy_core::prelude::*;
///
/// let a = Array::from_shape_vec(vec![2, 1], vec![Object::from("x"), Object::None])?;
/// assert_eq!(check_pickle(&to_pickle(&a)?)?, [2, 1]);
/// let evil = b"\x80\x04\x95\x1e\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x04true\x94\x85\x94R\x94.";
/// assert!(check_pickle(evil).is_err());
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn check_pickle(bytes: &[u8]) -> Result<Vec<usize>> {
    check_pickle_with(bytes, &ReadOptions::new())
}

/// As [`check_pickle`], with options (the object budget, Python 2 strings).
///
/// # Errors
/// As [`from_pickle_with`](super::from_pickle_with).
pub fn check_pickle_with(bytes: &[u8], options: &ReadOptions) -> Result<Vec<usize>> {
    pickle::check(bytes, 0, pickle::Settings::of(options), true, &mut |_| true).map(|(shape, _)| shape)
}

/// How far [`check_pickle_prefix`] has come, as it tells its `progress` callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckProgress<'a> {
    /// Every opcode in the first `n` bytes has been checked, in order (`n` grows from call
    /// to call, by at most 64 KiB of pickle and never to the `STOP`).
    Checked(usize),
    /// The whole pickle passed: its array has `shape`, and it is `len` bytes long. Said
    /// before the check frees its memory, so a caller can go on at once.
    Passed {
        /// The shape of the pickle's array.
        shape: &'a [usize],
        /// The pickle's length, its `STOP` included.
        len: usize,
    },
}

/// What [`check_pickle_prefix`] found: the array's shape and the pickle's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedPrefix {
    /// The shape of the pickle's array.
    pub shape: Vec<usize>,
    /// The pickle's length, its `STOP` included: where the bytes after it start.
    pub len: usize,
}

/// As [`check_pickle`], for the pickle at the start of `bytes`, which may go on past it
/// (the rest of a stream): bytes after its `STOP` are not read. While it runs, `progress`
/// hears how far it has come ([`CheckProgress`]): a caller may hand the bytes checked so
/// far to an unpickler that can name only [`globals`] before the whole pickle is checked,
/// and the rest once it has passed. Returning
/// [`ControlFlow::Break`](std::ops::ControlFlow::Break) stops the check with an error.
///
/// # Errors
/// As [`check_pickle`] (but for bytes after `STOP`), or a check stopped by `progress`.
///
/// # Examples
/// ```
/// use std::ops::ControlFlow;
/// use npy_core::object::{check_pickle_prefix, to_pickle, CheckProgress, Object};
/// use npy_core::prelude::*;
///
/// let a = Array::from_shape_vec(vec![100_000], vec![Object::from("trace"); 100_000])?;
/// let mut stream = to_pickle(&a)?;
/// let len = stream.len();
/// stream.extend_from_slice(b"the next array");
/// let (mut seen, mut passed) = (Vec::new(), None);
/// let checked = check_pickle_prefix(&stream, |progress| {
///     match progress {
///         CheckProgress::Checked(n) => seen.push(n),
///         CheckProgress::Passed { shape, len } => passed = Some((shape.to_vec(), len)),
///         _ => {}
///     }
///     ControlFlow::Continue(())
/// })?;
/// assert_eq!((checked.shape.clone(), checked.len), (vec![100_000], len));
/// assert_eq!(passed, Some((checked.shape, len)));
/// assert!(!seen.is_empty() && seen.is_sorted() && seen.iter().all(|&n| n < len));
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn check_pickle_prefix(
    bytes: &[u8],
    progress: impl FnMut(CheckProgress<'_>) -> std::ops::ControlFlow<()>,
) -> Result<CheckedPrefix> {
    check_pickle_prefix_with(bytes, progress, &ReadOptions::new())
}

/// As [`check_pickle_prefix`], with options (the object budget, Python 2 strings).
///
/// # Errors
/// As [`check_pickle_prefix`].
pub fn check_pickle_prefix_with(
    bytes: &[u8],
    mut progress: impl FnMut(CheckProgress<'_>) -> std::ops::ControlFlow<()>,
    options: &ReadOptions,
) -> Result<CheckedPrefix> {
    let mut report = |p: CheckProgress<'_>| progress(p).is_continue();
    let (shape, len) = pickle::check(bytes, 0, pickle::Settings::of(options), false, &mut report)?;
    Ok(CheckedPrefix { shape, len })
}

/// A run of a pickle's bytes that a [`SparsePickle`] left out: the content of a long
/// `BINBYTES` or `BINBYTES8` payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// The offset in the pickle of the payload's first byte.
    pub at: u64,
    /// Where it would be in [`SparsePickle::bytes`]: how many bytes were kept before it.
    pub kept: usize,
    /// The payload's length (as its opcode says).
    pub len: u64,
}

/// A pickle read with the content of its long bytes payloads left out, for
/// [`check_sparse_pickle_prefix_with`]: every other byte up to its `STOP` (its opcodes
/// and their arguments) in memory, and the [`Gap`]s. An object array of large arrays (what
/// `np.save` writes of a dict of arrays) is mostly such payloads, raw array data that a
/// check needs only the length of: a caller can read each payload later, once, straight
/// from the file into where it goes.
///
/// # Examples
/// ```
/// use npy_core::object::{to_pickle, Object, SparsePickle};
/// use npy_core::prelude::*;
///
/// let a = Array::from_shape_vec(vec![2], vec![Object::Bytes(vec![7; 100_000]), Object::from("x")])?;
/// let pickle = to_pickle(&a)?;
/// let sparse = SparsePickle::read(std::io::Cursor::new(&pickle), 64 << 10)?;
/// assert_eq!(sparse.gaps().len(), 1);
/// assert_eq!(sparse.gaps()[0].len, 100_000);
/// assert_eq!(sparse.len(), pickle.len() as u64);
/// assert_eq!(sparse.bytes().len(), pickle.len() - 100_000);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparsePickle {
    bytes: Vec<u8>,
    gaps: Vec<Gap>,
}

impl SparsePickle {
    /// Reads the pickle at `reader`'s position up to its `STOP` (nothing after it is
    /// kept), leaving out (seeking past) the payload of each `BINBYTES` and `BINBYTES8`
    /// opcode at least `min_gap` bytes long, unless it was read already with the bytes
    /// before it (bytes are read `min_gap` at a time, at least 64 and at most 1 MiB). Only the lengths of opcodes'
    /// arguments are looked at: the pickle is not checked. A reader that ends early ends
    /// the bytes early (the check then refuses the pickle); after an opcode not of
    /// protocols 0 to 5 the rest is read whole.
    ///
    /// # Errors
    /// The reader's.
    pub fn read(reader: impl std::io::Read + std::io::Seek, min_gap: u64) -> std::io::Result<SparsePickle> {
        let (bytes, gaps) = pickle::read_sparse(reader, min_gap)?;
        Ok(SparsePickle { bytes, gaps })
    }

    /// A pickle in memory, `bytes` with the gaps `gaps`: in order, each [`Gap::kept`] at
    /// most `bytes.len()`, and each [`Gap::at`] its `kept` plus the lengths of the gaps
    /// before it.
    ///
    /// # Errors
    /// [`ErrorKind::Pickle`](crate::ErrorKind::Pickle) for gaps out of order, past the bytes or misplaced.
    pub fn from_parts(bytes: Vec<u8>, gaps: Vec<Gap>) -> Result<SparsePickle> {
        let (mut kept, mut left_out) = (0, 0u64);
        for g in &gaps {
            if g.kept > bytes.len() || g.kept < kept || Some(g.at) != (g.kept as u64).checked_add(left_out) {
                return Err(Error::pickle(g.at, "gaps out of order, past the bytes kept or misplaced"));
            }
            kept = g.kept;
            left_out = left_out.checked_add(g.len).ok_or_else(|| Error::pickle(g.at, "gaps longer than 2^64 bytes"))?;
        }
        Ok(SparsePickle { bytes, gaps })
    }

    /// The bytes kept: the pickle but for the gaps.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The payloads left out, in order.
    pub fn gaps(&self) -> &[Gap] {
        &self.gaps
    }

    /// The pickle's length as read, the gaps counted.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64 + self.gaps.iter().map(|g| g.len).sum::<u64>()
    }

    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parts, consuming this.
    pub fn into_parts(self) -> (Vec<u8>, Vec<Gap>) {
        (self.bytes, self.gaps)
    }
}

/// What [`check_sparse_pickle_prefix_with`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SparseCheck {
    /// The pickle passed: its array's shape, and its length (gaps counted).
    Passed(CheckedPrefix),
    /// The check needs the content of a payload left out (it had come to this offset):
    /// only [`check_pickle_prefix_with`] over the whole pickle can decide. No opcode from
    /// the one that looked at the content on was reported checked.
    NeedsGap(u64),
}

/// As [`check_pickle_prefix_with`], for a pickle whose long bytes payloads were left out
/// ([`SparsePickle`]): the same check, which refuses all it refuses, looking at a gap only
/// as the payload of the `BINBYTES`/`BINBYTES8` opcode right before it (a gap anywhere
/// else is a pickle the sparse check cannot read: [`SparseCheck::NeedsGap`]), and at the
/// payload only for its length (as it does at an array's raw data, which must be as long
/// as its shape and dtype say). A check that needs a left-out payload's content (the
/// data of a NumPy scalar, a `bytearray` made from bytes, a dtype's bytes title) stops
/// with [`SparseCheck::NeedsGap`] before any later opcode is reported checked. Offsets in
/// errors and in [`CheckProgress`] count the gaps' bytes, as the pickle holds them.
///
/// The content of a gap is pure data: a caller may read it from the file when it is
/// needed (an unpickler reading what the check approved, the opcodes from
/// [`SparsePickle::bytes`], never from the file again).
///
/// # Errors
/// As [`check_pickle_prefix`].
///
/// # Examples
/// ```
/// use std::ops::ControlFlow;
/// use npy_core::object::{check_sparse_pickle_prefix_with, to_pickle, Object, SparseCheck, SparsePickle};
/// use npy_core::ReadOptions;
/// use npy_core::prelude::*;
///
/// let a = Array::from_shape_vec(vec![1], vec![Object::Bytes(vec![1; 1 << 20])])?;
/// let pickle = to_pickle(&a)?;
/// let sparse = SparsePickle::read(std::io::Cursor::new(&pickle), 64 << 10)?;
/// let checked = check_sparse_pickle_prefix_with(&sparse, |_| ControlFlow::Continue(()), &ReadOptions::new())?;
/// let SparseCheck::Passed(passed) = checked else { panic!("needs a gap") };
/// assert_eq!((passed.shape, passed.len), (vec![1], pickle.len()));
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn check_sparse_pickle_prefix_with(
    pickle: &SparsePickle,
    mut progress: impl FnMut(CheckProgress<'_>) -> std::ops::ControlFlow<()>,
    options: &ReadOptions,
) -> Result<SparseCheck> {
    let mut report = |p: CheckProgress<'_>| progress(p).is_continue();
    let settings = pickle::Settings::of(options);
    sparse_check(pickle::check_sparse(&pickle.bytes, &pickle.gaps, 0, settings, &mut report)?)
}

/// What a check of a pickle with payloads left out found, as the public type says it.
fn sparse_check(checked: pickle::SparseChecked) -> Result<SparseCheck> {
    Ok(match checked {
        pickle::SparseChecked::Passed(shape, len) => {
            let len = usize::try_from(len).map_err(|_| Error::pickle(len, "a pickle longer than memory"))?;
            SparseCheck::Passed(CheckedPrefix { shape, len })
        }
        pickle::SparseChecked::NeedsGap(at) => SparseCheck::NeedsGap(at),
    })
}

/// A pickle read as it is checked ([`check_growing_pickle_with`]), which other threads read
/// meanwhile: the bytes read so far ([`GrowingPickle::bytes`], which only grow, and never
/// change once there) and the [`Gap`]s, the payloads of long `BINBYTES` and `BINBYTES8`
/// left out (but for what was read before the check met them), as in a [`SparsePickle`].
/// A caller that lets an unpickler read only what the check has reported checked
/// ([`CheckProgress::Checked`]) can start it at once, while the check reads on: no
/// thread reads the whole pickle first. Not on WebAssembly.
///
/// # Examples
/// ```
/// use std::io::Cursor;
/// use std::ops::ControlFlow;
/// use npy_core::object::{check_growing_pickle_with, to_pickle, GrowingPickle, Object, SparseCheck};
/// use npy_core::{prelude::*, ReadOptions};
///
/// let a = Array::from_shape_vec(vec![2], vec![Object::Bytes(vec![7; 100_000]), Object::from("x")])?;
/// let pickle = to_pickle(&a)?;
/// let growing = GrowingPickle::new(pickle.len() as u64, 64 << 10)?;
/// let checked = check_growing_pickle_with(&growing, Cursor::new(&pickle), |_| ControlFlow::Continue(()), &ReadOptions::new())?;
/// assert!(matches!(checked, SparseCheck::Passed(ref c) if c.shape == [2] && c.len == pickle.len()));
/// let gaps = growing.gaps();
/// assert_eq!(gaps.len(), 1);
/// assert_eq!(growing.bytes().len() as u64 + gaps[0].len, pickle.len() as u64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(not(target_family = "wasm"))]
#[derive(Debug)]
pub struct GrowingPickle {
    kept: crate::buffer::AppendBytes,
    gaps: std::sync::Mutex<Vec<Gap>>,
    min_gap: u64,
}

#[cfg(not(target_family = "wasm"))]
impl GrowingPickle {
    /// Room for a pickle of at most `max_len` bytes (what is left of its file: address
    /// space only, memory is taken as bytes are read), leaving out payloads of `BINBYTES`
    /// and `BINBYTES8` at least `min_gap` long.
    ///
    /// # Errors
    /// An I/O error when the address space cannot be had.
    pub fn new(max_len: u64, min_gap: u64) -> std::io::Result<GrowingPickle> {
        let capacity = usize::try_from(max_len).map_err(|_| std::io::Error::other("a pickle longer than memory"))?;
        Ok(GrowingPickle {
            kept: crate::buffer::AppendBytes::new(capacity)?,
            gaps: std::sync::Mutex::new(Vec::new()),
            min_gap: min_gap.max(1),
        })
    }

    /// The bytes read so far, gaps cut out.
    pub fn bytes(&self) -> &[u8] {
        self.kept.bytes()
    }

    /// The payloads left out so far, in order.
    pub fn gaps(&self) -> Vec<Gap> {
        self.with_gaps(<[Gap]>::to_vec)
    }

    /// `f` of the payloads left out so far, in order (without copying them).
    pub fn with_gaps<R>(&self, f: impl FnOnce(&[Gap]) -> R) -> R {
        f(&self.gaps.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

/// As [`check_sparse_pickle_prefix_with`], for the pickle at `reader`'s position, which
/// it reads into `pickle` as it checks (so other threads may read `pickle` meanwhile),
/// leaving out what a [`SparsePickle`] would leave out but for what it had read already
/// when it met it. `pickle` takes one check: a second one that starts while the first
/// runs fails at its first read.
///
/// # Errors
/// As [`check_sparse_pickle_prefix_with`], and the reader's.
#[cfg(not(target_family = "wasm"))]
pub fn check_growing_pickle_with(
    pickle: &GrowingPickle,
    reader: impl std::io::Read + std::io::Seek,
    mut progress: impl FnMut(CheckProgress<'_>) -> std::ops::ControlFlow<()>,
    options: &ReadOptions,
) -> Result<SparseCheck> {
    let mut report = |p: CheckProgress<'_>| progress(p).is_continue();
    let settings = pickle::Settings::of(options);
    let input = pickle::Growing::new(&pickle.kept, &pickle.gaps, pickle.min_gap, reader);
    sparse_check(pickle::check_growing(input, settings, &mut report)?)
}

/// An object array's pickle as its file holds it, checked by the restricted decoder
/// ([`check_pickle`]: the values the module lists, the header's shape) but not decoded: for callers
/// that have another unpickler, one that names nothing but [`globals`], build the values
/// (the `npy` Python package has CPython's). Read it as any array, with
/// [`NpyReader::read`](crate::NpyReader::read) or an archive's
/// [`read_all`](crate::npz::Reader::read_all).
///
/// # Examples
/// ```
/// use npy_core::object::{CheckedPickle, Object};
/// use npy_core::prelude::*;
///
/// let file = vec![Object::from("a"), Object::None].write_npy_to(Vec::new())?;
/// let pickle = CheckedPickle::read_npy_from(&file[..])?;
/// assert_eq!(pickle.header().shape, [2]);
/// assert!(pickle.bytes().starts_with(b"\x80\x04"));
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPickle {
    header: Header,
    bytes: Vec<u8>,
}

impl CheckedPickle {
    pub(crate) fn new(header: Header, bytes: Vec<u8>) -> Self {
        CheckedPickle { header, bytes }
    }

    /// The file's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The pickle.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The pickle, consuming this.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}
