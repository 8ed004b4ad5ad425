//! Reading `.npy` data from paths and from any [`io::Read`].

use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::array::{Array, DynArray};
use crate::buffer::{self, Buffer};
use crate::dtype::refuse_objects;
use crate::error::{Access, Error, ErrorKind, HeaderPart, Result};
use crate::header::{Header, Version, MAGIC_VERSION_LEN};
use crate::object::{pickle, CheckedPickle, FromObject, ObjectArray};
use crate::options::ReadOptions;
use crate::plan::Plan;
use crate::record::{native_dtype_of, NpyRecord};
use crate::stream::{read_full, read_full_at, read_growing, STREAM_CHUNK};

mod path;
mod prefix;
mod whole;
pub use {
    prefix::HeaderPrefix,
    whole::{Loader, Opened},
};

/// Bytes of source records converted per step on the conversion path.
const CONVERT_CHUNK: usize = 128 << 10;
/// Conversions of at least this many source bytes from a file are split between two
/// threads ([`NpyReader::read`]).
const SPLIT_THRESHOLD: usize = 64 << 20;
/// Bytes read per step when read data is fixed up in place (byte swaps, checks), so the
/// fix-up runs on data still in cache.
const FIX_CHUNK: usize = 256 << 10;

/// Opening readers inside the crate: sources of known length (the settings themselves are
/// in `options.rs`; users open readers with [`NpyReader::from_path_with`] and its kin).
impl ReadOptions {
    /// Reads the header from `reader` whose total length (header and data) is `len`,
    /// known from elsewhere (an npz member's size): claims beyond it fail before allocating.
    pub(crate) fn open_sized<R: Read>(&self, reader: R, len: u64) -> Result<NpyReader<R>> {
        NpyReader::with_options(reader, self, Some(len))
    }

    /// As [`ReadOptions::open_sized`], for a source that checks itself at its end (an npz
    /// member and its CRC): reads go in cache-sized pieces, and reading the last element
    /// reads on to the end of the source. `present` says whether the `len` bytes are known
    /// to be there (a stored member whose range the archive's checks placed inside the
    /// file) or only claimed (a deflated member is only as long as it inflates): then
    /// buffers grow as data arrives instead of being sized by the claim.
    pub(crate) fn open_member<R: Read>(
        &self,
        reader: R,
        len: u64,
        present: bool,
        origin: Origin,
    ) -> Result<NpyReader<R>> {
        let r = located(Some(origin.clone()), NpyReader::with_options(reader, self, Some(len)))?;
        let mut r = r.sized_as(|available| Input::Member { available, present, drained: false });
        r.origin = Some(origin);
        Ok(r)
    }
}

/// A `.npy` stream whose header has been read; the data follows.
///
/// Reads only the bytes of this array, so several arrays written one after another to one
/// stream are read by opening a reader on `&mut stream` for each, as `np.load` does on an
/// open file.
///
/// # Examples
/// ```
/// use npy_core::NpyReader;
/// use npy_core::prelude::*;
///
/// let mut stream = Vec::new();
/// [1i32, 2, 3].write_npy_to(&mut stream)?;
/// [0.5f32].write_npy_to(&mut stream)?;
/// let mut input = &stream[..];
/// assert_eq!(NpyReader::from_reader(&mut input)?.read::<Vec<i32>>()?, [1, 2, 3]);
/// assert_eq!(NpyReader::from_reader(&mut input)?.read::<Vec<f32>>()?, [0.5]);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug)]
pub struct NpyReader<R> {
    reader: R,
    header: Header,
    version: Version,
    header_len: usize,
    data_len: usize,
    /// Number of elements, and how many have been read.
    elements: usize,
    position: usize,
    /// What the data is read from, which decides how it is read.
    source: Input,
    /// [`ReadOptions::max_object_bytes`].
    pickle: pickle::Settings,
    /// [`NpyReader::python2_header`].
    python2: bool,
    /// Where the data comes from (a path, an npz member), which errors name.
    origin: Option<Origin>,
    /// Takes the whole file's bytes from the reader to keep them ([`NpyReader::lending`]).
    lend: Option<fn(&mut R) -> Vec<u8>>,
}

/// What a [`NpyReader`] reads its data from, which decides how it reads it.
#[derive(Debug)]
enum Input {
    /// A stream of unknown length, which may hold more arrays after this one: only this
    /// array's bytes are read, and memory is taken as data arrives.
    Stream,
    /// A source holding `available` data bytes, known to be there (a file of known length,
    /// data in memory): buffers are sized by the header before reading.
    Sized { available: u64 },
    /// A file opened by path ([`NpyReader::from_path_with`]), holding `available` data bytes.
    /// `positional` is a second handle on it, taken by the first large conversion, which
    /// reads it at positions, half on each of two threads (`None` when the file could not
    /// be cloned).
    File { available: u64, positional: Option<File> },
    /// An npz member of `available` data bytes, which checks itself at its end (the zip
    /// reader checks the CRC there): read in cache-sized pieces, so that per-byte work is
    /// on hot data, and to its end once the last element is read (then `drained`).
    /// `present`: whether the `available` bytes are known to be there (a stored member
    /// whose range the archive's checks placed inside the file) or only claimed (a
    /// deflated member is only as long as it inflates), when buffers grow as data arrives.
    Member { available: u64, present: bool, drained: bool },
}

impl Input {
    /// Data bytes the source holds, if known (claimed, for a deflated member).
    fn available(&self) -> Option<u64> {
        match *self {
            Input::Stream => None,
            Input::Sized { available } | Input::File { available, .. } | Input::Member { available, .. } => {
                Some(available)
            }
        }
    }

    /// Whether at least `len` data bytes are known to be there, so buffers may be sized
    /// for them before reading.
    fn holds(&self, len: usize) -> bool {
        match *self {
            Input::Stream | Input::Member { present: false, .. } => false,
            Input::Sized { available } | Input::File { available, .. } | Input::Member { available, .. } => {
                available >= len as u64
            }
        }
    }

    /// The largest read into the destination at once, if limited (an npz member).
    fn piece(&self) -> Option<usize> {
        matches!(self, Input::Member { .. }).then_some(FIX_CHUNK)
    }
}

/// The preamble and header of a `.npy` stream, read from `reader` (of `file_len` bytes in
/// all, when known): its version, header length, header and whether the header needed
/// Python 2's `L` suffixes. Sizes are checked as the header codec checks them (within
/// [`crate::header::MAX_DATA_LEN`]); readers that hold the data check theirs after.
fn read_header<R: Read>(
    reader: &mut R,
    opts: &ReadOptions,
    file_len: Option<u64>,
) -> Result<(Version, usize, Header, bool)> {
    let mut magic = [0u8; MAGIC_VERSION_LEN];
    let got = read_full(reader, &mut magic)?;
    let version = Version::from_magic(&magic[..got]).map_err(|e| {
        if got < MAGIC_VERSION_LEN {
            e.of_short_header(HeaderPart::Magic, MAGIC_VERSION_LEN as u64, got as u64)
        } else {
            e
        }
    })?;
    let mut len_field = [0u8; 4];
    let len_field = &mut len_field[..version.len_field_size()];
    let got = read_full(reader, len_field)?;
    if got < len_field.len() {
        return Err(Error::format("file ends inside the header length field").of_short_header(
            HeaderPart::HeaderLength,
            len_field.len() as u64,
            got as u64,
        ));
    }
    let header_len = version.decode_header_len(len_field)?;
    if header_len > opts.header_limit() {
        return Err(ErrorKind::HeaderTooLarge { len: header_len as u64, limit: opts.header_limit() }.into());
    }
    let data_offset = version.preamble_len() + header_len;
    if let Some(len) = file_len {
        if (data_offset as u64) > len {
            let found = len.saturating_sub(version.preamble_len() as u64);
            let e = Error::format(format!("header claims {header_len} bytes but the file has only {len} bytes in all"));
            return Err(e.of_short_header(HeaderPart::Header, header_len as u64, found));
        }
    }
    let mut text = Vec::new();
    let got = read_growing(reader, header_len, &mut text)?;
    if got < header_len {
        let e = Error::format(format!("file ends inside the header: {got} of {header_len} header bytes present"));
        return Err(e.of_short_header(HeaderPart::Header, header_len as u64, got as u64));
    }
    let header = Header::parse(version, &text)?;
    let python2 = Header::needs_python2(version, &text);
    Ok((version, header_len, header, python2))
}

/// Checks that `available` data bytes hold the `data_len` a header says.
fn check_present(header: &Header, data_len: u64, available: u64) -> Result<()> {
    // An object array's data is a pickle, whose length the shape does not give.
    if available < data_len && !header.dtype.has_object() {
        return Err(Error::from(ErrorKind::Truncated { expected: data_len, found: available }).of_shape(&header.shape));
    }
    Ok(())
}

#[cfg(not(any(target_family = "wasm", miri)))]
impl NpyReader<io::Cursor<Vec<u8>>> {
    /// This reader over a file's bytes, which a read as [`DynArray`] keeps for its data.
    pub(crate) fn lending(mut self) -> Self {
        self.lend = Some(|cursor| std::mem::take(cursor.get_mut()));
        self
    }
}

impl<R: Read> NpyReader<R> {
    /// Reads the preamble and header with default [`ReadOptions`].
    ///
    /// # Errors
    /// [`ErrorKind::Format`] for a short file, bad magic or unknown version;
    /// [`ErrorKind::HeaderTooLarge`] over the size limit; [`ErrorKind::Header`],
    /// [`ErrorKind::Dtype`], [`ErrorKind::UnsupportedDtype`] or [`ErrorKind::Shape`] for
    /// a bad header; [`ErrorKind::Io`] from the reader.
    pub fn from_reader(reader: R) -> Result<Self> {
        NpyReader::with_options(reader, &ReadOptions::default(), None)
    }

    /// Reads the preamble and header from `reader` with the given options, leaving it at
    /// the start of the data.
    ///
    /// # Errors
    /// As [`NpyReader::from_reader`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, NpyReader, ReadOptions};
    ///
    /// let bytes = [1.0f64, 2.0].write_npy_to(Vec::new())?;
    /// let reader = NpyReader::from_reader_with(&bytes[..], ReadOptions::new().max_header_size(100_000))?;
    /// assert_eq!(reader.header().shape, [2]);
    /// assert_eq!(reader.read::<Vec<f64>>()?, [1.0, 2.0]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn from_reader_with(reader: R, options: &ReadOptions) -> Result<Self> {
        NpyReader::with_options(reader, options, None)
    }

    fn with_options(mut reader: R, opts: &ReadOptions, file_len: Option<u64>) -> Result<Self> {
        let (version, header_len, header, python2) = read_header(&mut reader, opts, file_len)?;
        let data_offset = version.preamble_len() + header_len;
        let data_len = header.data_len()?;
        let available = file_len.map(|l| l - data_offset as u64);
        if let Some(avail) = available {
            check_present(&header, data_len as u64, avail)?;
        }
        let elements = header.element_count()?;
        Ok(NpyReader {
            reader,
            header,
            version,
            header_len,
            data_len,
            elements,
            position: 0,
            source: available.map_or(Input::Stream, |available| Input::Sized { available }),
            pickle: pickle::Settings::of(opts),
            python2,
            origin: None,
            lend: None,
        })
    }

    /// This reader, its source of known length re-described by `source` (given the data
    /// bytes it holds): a file opened by path, an npz member.
    fn sized_as(mut self, source: impl FnOnce(u64) -> Input) -> Self {
        debug_assert!(matches!(self.source, Input::Sized { .. }), "opened without a length");
        if let Input::Sized { available } = self.source {
            self.source = source(available);
        }
        self
    }

    /// A reader over data already in memory, with its header (no preamble to parse): the
    /// data of the array, or of rows `a..b` of it read from elsewhere (with the header's
    /// first dim set to `b - a`; rows are contiguous in C order). Reads check that the
    /// data holds what the header says.
    ///
    /// # Errors
    /// [`ErrorKind::Shape`] when the header's sizes overflow.
    ///
    /// # Examples
    /// ```
    /// use npy_core::{header::Header, prelude::*, NpyReader};
    ///
    /// let file = (0..10i32).collect::<Vec<_>>().write_npy_to(Vec::new())?;
    /// let reader = NpyReader::from_reader(&file[..])?;
    /// let (offset, mut header) = (reader.data_offset(), reader.header().clone());
    /// header.shape = vec![3]; // rows 4..7
    /// let rows = NpyReader::over_data(&file[offset + 4 * 4..offset + 7 * 4], header)?.read::<Vec<i32>>()?;
    /// assert_eq!(rows, [4, 5, 6]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn over_data(data: R, header: Header) -> Result<Self>
    where
        R: AsRef<[u8]>,
    {
        let data_len = header.data_len()?;
        let available = data.as_ref().len() as u64;
        let elements = header.element_count()?;
        Ok(NpyReader {
            reader: data,
            header,
            version: Version::V1_0,
            header_len: 0,
            data_len,
            elements,
            position: 0,
            source: Input::Sized { available },
            pickle: pickle::Settings::default(),
            python2: false,
            origin: None,
            lend: None,
        })
    }

    /// The parsed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file's format version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Whether the header needed Python 2's `L` suffix on an integer to be read (see
    /// [`Header::needs_python2`]), for callers that warn as `np.load` does.
    pub fn python2_header(&self) -> bool {
        self.python2
    }

    /// The value of the header length field (header text, padding and `\n`).
    pub fn header_len(&self) -> usize {
        self.header_len
    }

    /// Byte offset of the data from the start of the array.
    pub fn data_offset(&self) -> usize {
        self.version.preamble_len() + self.header_len
    }

    /// Bytes of data the header calls for (for an object array, 8 per element as NumPy's
    /// `nbytes`: its data is a pickle of a length the header does not give).
    pub fn data_len(&self) -> usize {
        self.data_len
    }

    /// Number of elements in the array.
    pub fn len(&self) -> usize {
        self.elements
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.elements == 0
    }

    /// Elements not read yet (after [`NpyReader::read_into`] or partial iteration).
    pub fn remaining(&self) -> usize {
        self.elements - self.position
    }

    /// Reads the data as raw bytes into a [`DynArray`] that remembers the file's version,
    /// so writing it back reproduces the file.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] when the data ends early; [`ErrorKind::Io`];
    /// [`ErrorKind::Usage`] if elements were already read; [`ErrorKind::UnsupportedDtype`]
    /// for an object array (its data is a pickle: see [`NpyReader::read_objects`]).
    pub(crate) fn read_dyn(mut self) -> Result<DynArray> {
        let origin = self.origin.take();
        located(origin, self.read_dyn_here())
    }

    fn read_dyn_here(mut self) -> Result<DynArray> {
        refuse_objects(&self.header.dtype)?;
        if self.position != 0 {
            return Err(Error::usage("read::<DynArray> needs the whole array, but elements were already read"));
        }
        let total = self.data_len;
        if let Some(lend) = self.lend.take() {
            // The file's bytes become the array's: its data moved to their start, in place.
            let (mut bytes, start) = (lend(&mut self.reader), self.data_offset());
            let Some(end) = start.checked_add(total).filter(|&end| end <= bytes.len()) else {
                return Err(self.truncated(bytes.len().saturating_sub(start)));
            };
            bytes.copy_within(start..end, 0);
            bytes.truncate(total);
            self.position = self.elements;
            return DynArray::from_parts(self.header, bytes, Some(self.version));
        }
        let sized = self.length_known();
        let mut data = if sized { Buffer::zeroed(total)? } else { Buffer::new() };
        let piece = self.source.piece();
        let nothing_to_fix = |_: &mut [u8], _| Ok(());
        buffer::prefaulting(&mut data, sized, |data| {
            // SAFETY:
            // - the elements are `u8`s, which any byte is: there is nothing to fix.
            unsafe { self.fill_in_place(data, total, sized, 0, piece, nothing_to_fix) }
        })?;
        self.position = self.elements;
        self.finish_source()?;
        DynArray::from_parts(self.header, data.into_vec(), Some(self.version))
    }

    /// Reads an object array (dtype `|O`): its pickle is decoded without executing anything
    /// (see [`crate::object`]) into [`Object`]s, with the header's shape, in the header's
    /// order (Fortran-order values are stored column by column, as [`Array`] stores them).
    ///
    /// The pickle is the rest of the source: from a file or an npz member, bytes after its
    /// `STOP` are an error; from a stream of unknown length, reading stops right after it
    /// (as `np.load` does), so the stream can hold more arrays. NumPy's pickle lists the
    /// values in C order whatever the array's order, with its own shape, which must be the
    /// header's (`np.load` trusts the pickle alone; a file whose two disagree is refused).
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] when the file is not an object array;
    /// [`ErrorKind::Pickle`] when its pickle is not NumPy's array of plain values, is
    /// malformed or truncated, does not match the header's shape, or is over
    /// [`ReadOptions::max_object_bytes`]; [`ErrorKind::Usage`] if elements were already
    /// read; [`ErrorKind::Io`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::object::Object;
    /// use npy_core::prelude::*;
    /// use npy_core::NpyReader;
    ///
    /// let cells = ["a", "b", "c", "d"].map(Object::from).to_vec();
    /// let grid = Array::from_shape_vec_fortran(vec![2, 2], cells)?;
    /// let file = grid.write_npy_to(Vec::new())?;
    /// let back = NpyReader::from_reader(&file[..])?.read::<Array<Object>>()?;
    /// assert_eq!(back, grid);
    /// assert_eq!(back.get(&[1, 0]), Some(&Object::from("b")));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub(crate) fn read_objects(mut self) -> Result<ObjectArray> {
        let origin = self.origin.take();
        located(origin, self.read_objects_here())
    }

    fn read_objects_here(mut self) -> Result<ObjectArray> {
        self.refuse_non_objects()?;
        let base = self.data_offset() as u64;
        let decoded = match self.source.available() {
            Some(len) => {
                let source = io::BufReader::with_capacity(64 << 10, (&mut self.reader).take(len));
                pickle::decode(source, base, Some(len), self.pickle.clone())?
            }
            None => pickle::decode(&mut self.reader, base, None, self.pickle.clone())?,
        };
        self.position = self.elements;
        self.finish_source()?;
        let header = &self.header;
        crate::object::into_array(decoded, Some(&header.shape), header.fortran_order)
    }

    /// Reads an object array's pickle whole, checked by the restricted decoder but not
    /// decoded ([`CheckedPickle`]).
    pub(crate) fn read_pickle(mut self) -> Result<CheckedPickle> {
        let origin = self.origin.take();
        located(origin, self.read_pickle_here())
    }

    fn read_pickle_here(mut self) -> Result<CheckedPickle> {
        self.refuse_non_objects()?;
        let base = self.data_offset() as u64;
        let mut bytes = Vec::new();
        match self.source.available() {
            Some(len) => {
                (&mut self.reader).take(len).read_to_end(&mut bytes)?;
                if (bytes.len() as u64) < len {
                    return Err(ErrorKind::Truncated { expected: len, found: bytes.len() as u64 }.into());
                }
            }
            None => {
                self.reader.read_to_end(&mut bytes)?;
            }
        }
        let (shape, _) = pickle::check(&bytes, base, self.pickle.clone(), true, &mut |_| true)?;
        if shape != self.header.shape {
            return Err(Error::pickle(
                base,
                format!(
                    "the pickle's array has shape {}, but the header says {}",
                    crate::header::shape_repr(&shape),
                    crate::header::shape_repr(&self.header.shape)
                ),
            ));
        }
        self.position = self.elements;
        self.finish_source()?;
        Ok(CheckedPickle::new(self.header, bytes))
    }

    /// Refuses a file that is not an object array, for the reads of one.
    fn refuse_non_objects(&self) -> Result<()> {
        if !self.header.dtype.has_object() {
            return Err(ErrorKind::DtypeMismatch {
                expected: "'|O' (an object array)".into(),
                found: self.header.dtype.descr(),
                field: None,
            }
            .into());
        }
        if self.position != 0 {
            return Err(Error::usage("an object array is read whole, but elements were already read"));
        }
        Ok(())
    }

    /// Reads an object array's elements in storage order as `T` (`String`,
    /// `Option<String>`, [`Object`](crate::Object), `i64`, `f64`, ...: see [`FromObject`]), whatever its
    /// shape. Kept beside [`NpyReader::read`]: `Vec<T>` of a `FromObject` type cannot be a
    /// [`crate::ReadNpy`] type for every `T` (`Vec<i64>` reads numeric files), and this
    /// also reads object arrays of any shape flat.
    ///
    /// # Errors
    /// As [`NpyReader::read`]`::<Array<Object>>()`; [`ErrorKind::InvalidValue`] naming the index and
    /// Python type of the first element that is not a `T`.
    ///
    /// # Examples
    /// ```
    /// use npy_core::prelude::*;
    /// use npy_core::{ErrorKind, NpyReader};
    ///
    /// let file = [Some("a".to_string()), None].write_npy_to(Vec::new())?;
    /// assert_eq!(NpyReader::from_reader(&file[..])?.read_object_vec::<Option<String>>()?, [Some("a".into()), None]);
    /// let e = NpyReader::from_reader(&file[..])?.read_object_vec::<String>().unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn read_object_vec<T: FromObject>(self) -> Result<Vec<T>> {
        crate::object::convert(self.read_objects()?.into_array().into_vec())
    }

    /// Reads all (remaining) elements, in storage order, as `T`, converting byte order and
    /// widening as needed (see [`Plan`]), whatever the shape: what `Vec<T>` and [`Array`]
    /// reads do after their shape checks.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] when the file's dtype cannot be read as `T`;
    /// [`ErrorKind::InvalidValue`] for invalid values (`bool`, `char`, enum discriminants);
    /// [`ErrorKind::Truncated`]; [`ErrorKind::Io`].
    pub(crate) fn read_flat<T: NpyRecord>(mut self) -> Result<Vec<T>> {
        let origin = self.origin.take();
        located(origin, self.regroup::<T>().and_then(|()| self.read_flat_here()))
    }

    /// [`NpyReader::read_flat`] of a reader its caller regrouped for `T` to see the shape.
    pub(crate) fn read_regrouped<T: NpyRecord>(mut self) -> Result<Vec<T>> {
        let origin = self.origin.take();
        located(origin, self.read_flat_here())
    }

    fn read_flat_here<T: NpyRecord>(mut self) -> Result<Vec<T>> {
        let plan = self.plan::<T>()?;
        let n = self.remaining();
        let sized = self.length_known();
        let mut out = if sized { Buffer::zeroed(n)? } else { Buffer::new() };
        let split = sized && !plan.in_place() && plan.dst_size() > 0;
        if split && n.saturating_mul(plan.src_size()) >= SPLIT_THRESHOLD && crate::cpu::two_cpus() {
            if let Some(file) = self.positional_file() {
                self.convert_split(&file, &plan, &mut out, n)?;
                return Ok(out.into_vec());
            }
        }
        buffer::prefaulting(&mut out, sized, |out| self.append(&plan, out, n, sized))?;
        Ok(out.into_vec())
    }

    /// Reads the array as a typed N-d [`Array`], keeping shape and memory order.
    ///
    /// # Errors
    /// As [`NpyReader::read_flat`]; [`ErrorKind::Usage`] if elements were already read.
    pub(crate) fn read_array<T: NpyRecord>(mut self) -> Result<Array<T>> {
        if self.position != 0 {
            return Err(Error::usage("read::<Array<T>> needs the whole array, but elements were already read"));
        }
        self.regroup::<T>()?;
        let shape = self.header.shape.clone();
        let fortran_order = self.header.fortran_order;
        let data = self.read_regrouped::<T>()?;
        Array::from_parts(data, shape, fortran_order)
    }

    /// Iterates over the elements in chunks of at most `chunk_len`, holding only one
    /// chunk in memory: for arrays larger than memory, or to start work early.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] when the file's dtype cannot be read as `T` (then, per
    /// chunk, as [`NpyReader::read`]).
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, NpyReader};
    ///
    /// let file = (0..10i64).collect::<Vec<_>>().write_npy_to(Vec::new())?;
    /// let mut sums = Vec::new();
    /// for chunk in NpyReader::from_reader(&file[..])?.chunks::<i64>(4)? {
    ///     sums.push(chunk?.iter().sum::<i64>());
    /// }
    /// assert_eq!(sums, [6, 22, 17]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn chunks<T: NpyRecord>(mut self, chunk_len: usize) -> Result<Chunks<R, T>> {
        self.regroup::<T>()?;
        let plan = self.plan::<T>()?;
        Ok(Chunks { reader: self, plan, chunk_len: chunk_len.max(1), failed: false, _marker: std::marker::PhantomData })
    }

    /// Reads the next elements into `buf` (as many as fit, or as remain) and returns how
    /// many were read; 0 at the end. Kept beside [`NpyReader::read`]: it fills the caller's
    /// buffer, reusing it across calls, where `read` and [`NpyReader::chunks`] allocate.
    ///
    /// # Errors
    /// As [`NpyReader::read`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, NpyReader};
    ///
    /// let file = [1.0f32, 2.0, 3.0].write_npy_to(Vec::new())?;
    /// let mut reader = NpyReader::from_reader(&file[..])?;
    /// let mut buf = [0.0f64; 2]; // '<f4' widens to f64
    /// assert_eq!(reader.read_into(&mut buf)?, 2);
    /// assert_eq!(buf, [1.0, 2.0]);
    /// assert_eq!(reader.read_into(&mut buf)?, 1);
    /// assert_eq!(buf[0], 3.0);
    /// assert_eq!(reader.read_into(&mut buf)?, 0);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn read_into<T: NpyRecord + Copy>(&mut self, buf: &mut [T]) -> Result<usize> {
        let read = (|| {
            self.regroup::<T>()?;
            let plan = self.plan::<T>()?;
            let k = buf.len().min(self.remaining());
            let mut tmp = Buffer::with_capacity(k);
            self.append(&plan, &mut tmp, k, false)?;
            buf[..k].copy_from_slice(&tmp.into_vec());
            Ok(k)
        })();
        located(self.origin.clone(), read)
    }

    /// Appends the next `count` elements (at most those remaining) to `out` as raw bytes,
    /// as stored: file layout and byte order, padding included, no value checked. Returns
    /// how many elements were appended (0 at the end). For decoders that walk the dtype
    /// themselves, one element at a time, with [`crate::scalar`] (the serde bridge,
    /// `npy dump`); reading in chunks keeps memory bounded. Kept beside [`NpyReader::read`]:
    /// it gives the stored bytes, unconverted and unchecked, which no element type does. Reading the last element of an
    /// npz member reads on to its end, which checks its CRC.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] when the data ends early;
    /// [`ErrorKind::Io`], or [`ErrorKind::Npz`] for a member's bad CRC;
    /// [`ErrorKind::UnsupportedDtype`] for an object array.
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, NpyReader};
    ///
    /// let file = [1u16, 2, 3].write_npy_to(Vec::new())?;
    /// let mut reader = NpyReader::from_reader(&file[..])?;
    /// let mut raw = Vec::new();
    /// assert_eq!(reader.read_raw(2, &mut raw)?, 2);
    /// assert_eq!(raw, [1, 0, 2, 0]); // '<u2', as stored
    /// assert_eq!(reader.read_raw(2, &mut raw)?, 1);
    /// assert_eq!(reader.read_raw(2, &mut raw)?, 0);
    /// assert_eq!(raw.len(), 6);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn read_raw(&mut self, count: usize, out: &mut Vec<u8>) -> Result<usize> {
        let read = self.read_raw_here(count, out);
        located(self.origin.clone(), read)
    }

    fn read_raw_here(&mut self, count: usize, out: &mut Vec<u8>) -> Result<usize> {
        refuse_objects(&self.header.dtype)?;
        let count = count.min(self.remaining());
        let size = self.header.dtype.itemsize();
        // At most data_len, which the header checked; of a source of unknown length,
        // memory is taken only as data arrives.
        let len = count * size;
        let step = if self.length_known() { len } else { STREAM_CHUNK };
        let start = out.len();
        let mut done = 0;
        while done < len {
            let k = step.min(len - done);
            buffer::try_grow(out, k)?;
            out.resize(start + done + k, 0);
            let got = read_full(&mut self.reader, &mut out[start + done..])?;
            done += got;
            if got < k {
                out.truncate(start);
                return Err(self.truncated(self.position * size + done));
            }
        }
        self.position += count;
        if self.position == self.elements {
            self.finish_source()?;
        }
        Ok(count)
    }

    /// Returns the underlying reader (positioned wherever reading stopped).
    pub fn into_inner(self) -> R {
        self.reader
    }

    /// Whether the data is known to be present, so buffers may be sized by the header.
    fn length_known(&self) -> bool {
        self.source.holds(self.data_len)
    }

    /// The second handle on a file opened by path, for positional reads, if not taken yet.
    fn positional_file(&mut self) -> Option<File> {
        match &mut self.source {
            Input::File { positional, .. } => positional.take(),
            _ => None,
        }
    }

    /// How the elements become `T`s, on a header regrouped for `T` (each read does so once).
    fn plan<T: NpyRecord>(&mut self) -> Result<Plan> {
        refuse_objects(&self.header.dtype)?;
        Plan::new(&self.header.dtype, &native_dtype_of::<T>()?)
    }

    /// Appends the next `count` elements to `out`, converting through `plan` (built by
    /// [`NpyReader::plan`] for `T`). `sized`: `out` has room for all of them (the data is
    /// known to be present), so they are read in one go rather than as they arrive.
    fn append<T: NpyRecord>(&mut self, plan: &Plan, out: &mut Buffer<T>, count: usize, sized: bool) -> Result<()> {
        self.append_elements(plan, out, count, sized)?;
        if self.position == self.elements {
            self.finish_source()?;
        }
        Ok(())
    }

    /// Reads the file as an array of `T`s when `T` is an array type (`[U; N]`, nested)
    /// whose dims are the file's last ones, as writing folds them (`'|u1'` of shape
    /// `(2, 4)` is 2 elements `[u8; 4]`): the header's shape loses those dims and its
    /// dtype becomes `T`'s subarray of the file's (else nothing changes). Once per read.
    /// # Errors
    /// [`ErrorKind::Usage`] when elements already read do not make whole `T`s.
    pub(crate) fn regroup<T: NpyRecord>(&mut self) -> Result<()> {
        let Some(grouped) = self.header.grouped(&T::dtype()) else { return Ok(()) };
        let per: usize = self.header.shape[grouped.shape.len()..].iter().product();
        if !self.position.is_multiple_of(per) {
            return Err(Error::usage(format!(
                "{} elements were read, which do not make whole elements of {}",
                self.position,
                grouped.dtype.descr()
            )));
        }
        self.elements /= per;
        self.position /= per;
        self.header = grouped;
        Ok(())
    }

    /// For sources that check themselves at their end: reads to the end (the bytes after
    /// the array, if any, are not part of it and are discarded).
    fn finish_source(&mut self) -> Result<()> {
        if let Input::Member { drained: drained @ false, .. } = &mut self.source {
            *drained = true;
            io::copy(&mut self.reader, &mut io::sink())?;
        }
        Ok(())
    }

    fn append_elements<T: NpyRecord>(
        &mut self,
        plan: &Plan,
        out: &mut Buffer<T>,
        count: usize,
        sized: bool,
    ) -> Result<()> {
        if plan.in_place() {
            // Data that needs fixing (byte swaps, checks) is read in cache-sized pieces and
            // fixed while hot; an exact copy is read in one go.
            let piece = if plan.is_identity() && !T::NEEDS_CHECK && !T::HAS_SKIPPED {
                self.source.piece()
            } else {
                Some(FIX_CHUNK)
            };
            let fix = |buf: &mut [u8], first| {
                plan.run_in_place(buf, first)?;
                check_elements::<T>(buf, first)
            };
            let first = self.position;
            // SAFETY:
            // - the plan, built for `T`, is in place: the source layout is `T`'s;
            // - `fix` runs it over the bytes, which fixes byte order and validates `b1`
            //   fields, then `T::check` on every element.
            unsafe { self.fill_in_place(out, count, sized, first, piece, fix) }?;
            self.position += count;
            Ok(())
        } else {
            self.fill_converted(plan, out, count, sized)
        }
    }

    /// Reads `count` elements' worth of source bytes straight into `out`'s spare memory
    /// (the source layout is `T`'s), calling `fix` on each filled part (with the index of
    /// its first element, counting from `first`) before the elements count as `T`s.
    /// Parts are at most `piece` bytes when given; `sized` as for [`NpyReader::append`].
    ///
    /// # Safety
    /// `fix`, when it returns `Ok`, has made the bytes it was given valid stored fields of
    /// `T`s, as [`Buffer::assume_records`] requires: `b1` fields 0 or 1, and
    /// [`NpyRecord::check`] passed.
    unsafe fn fill_in_place<T: NpyRecord>(
        &mut self,
        out: &mut Buffer<T>,
        count: usize,
        sized: bool,
        mut first: usize,
        piece: Option<usize>,
        mut fix: impl FnMut(&mut [u8], usize) -> Result<()>,
    ) -> Result<()> {
        let size = std::mem::size_of::<T>();
        if size == 0 {
            return zero_sized::<T>(count);
        }
        let mut step = if sized { count } else { (STREAM_CHUNK / size).max(1) };
        if let Some(bytes) = piece {
            step = step.min((bytes / size).max(1));
        }
        let target = out.len() + count;
        let start = first;
        while out.len() < target {
            let k = step.min(target - out.len());
            out.try_grow(k)?;
            let bytes = out.spare_bytes(k);
            let got = read_full(&mut self.reader, bytes)?;
            if got < bytes.len() {
                let before = self.position * self.header.dtype.itemsize();
                return Err(self.truncated(before + (first - start) * size + got));
            }
            fix(bytes, first)?;
            // SAFETY:
            // - the `k` elements' bytes were lent by `spare_bytes` and filled from the
            //   source, whose layout is `T`'s;
            // - `fix` returned `Ok`, so their stored fields are valid (this function's
            //   contract).
            unsafe { out.assume_records(k) };
            first += k;
        }
        Ok(())
    }

    /// Reads `count` elements' worth of source bytes in chunks and converts them into
    /// `out` through `plan` (built for `T`); `sized` as for [`NpyReader::append`].
    fn fill_converted<T: NpyRecord>(
        &mut self,
        plan: &Plan,
        out: &mut Buffer<T>,
        count: usize,
        sized: bool,
    ) -> Result<()> {
        let (ss, ds) = (plan.src_size(), plan.dst_size());
        if ds == 0 {
            return zero_sized::<T>(count);
        }
        let per_chunk = (CONVERT_CHUNK / ss.max(1)).max(1);
        // Input bytes of a chunk: sized up front when the data is known to be present,
        // else grown as it arrives (one element may claim 2 GiB). The destination is
        // reserved once the chunk's source bytes are in.
        let mut staging = if sized { vec![0u8; per_chunk.min(count) * ss] } else { Vec::new() };
        let target = out.len() + count;
        while out.len() < target {
            let k = per_chunk.min(target - out.len());
            let (want, first) = (k * ss, self.position);
            let got = if staging.len() >= want {
                read_full(&mut self.reader, &mut staging[..want])?
            } else {
                staging.clear();
                read_growing(&mut self.reader, want, &mut staging)?
            };
            if got < want {
                return Err(self.truncated(first * self.header.dtype.itemsize() + got));
            }
            let src = &staging[..want];
            out.try_grow(k)?;
            let dst = out.spare_bytes(k);
            plan.run(src, dst, first)?;
            check_elements::<T>(dst, first)?;
            // SAFETY:
            // - the plan, built for `T`, wrote every field of `T::native_dtype()` into the
            //   `k` elements' bytes lent by `spare_bytes` (it fails on a missing field) and
            //   validated `b1` fields;
            // - `T::check` passed (`check_elements`).
            unsafe { out.assume_records(k) };
            self.position += k;
        }
        Ok(())
    }

    /// Converts the `n` remaining elements of a file into `out` (empty, capacity `n`) on
    /// two threads, each reading its half of the data at its position in `file`
    /// and converting it into its half of `out`: reading, converting and the kernel's
    /// zeroing of fresh pages all split between two CPUs. Errors are those of a
    /// sequential read: the first half's first.
    fn convert_split<T: NpyRecord>(&mut self, file: &File, plan: &Plan, out: &mut Buffer<T>, n: usize) -> Result<()> {
        let (ss, ds) = (plan.src_size(), plan.dst_size());
        let first = self.position;
        let start = (self.data_offset() + first * ss) as u64;
        let half = n / 2;
        let dst = out.spare_bytes(n);
        let (low, high) = dst.split_at_mut(half * ds);
        // Errors are those of a sequential read, so the first half always runs to its
        // end (an error of its own comes first); when it fails, it sets `failed` and the
        // second half stops at its next chunk (its `None`), its work being of no use.
        let failed = AtomicBool::new(false);
        let (got_low, got_high) = std::thread::scope(|scope| {
            let second = scope
                .spawn(|| convert_at::<T>(file, start + (half * ss) as u64, plan, high, first + half, Some(&failed)));
            let got_low = convert_at::<T>(file, start, plan, low, first, None);
            if !matches!(got_low, Ok(Some(read)) if read == half * ss) {
                failed.store(true, Ordering::Relaxed);
            }
            (got_low, second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        // As a sequential read reports: the first half's error first; the second half
        // stopped (`None`) only after the first failed.
        let (got_low, got_high) = (got_low?, got_high?);
        if let Some(got) = got_low.filter(|&got| got < half * ss) {
            return Err(self.truncated(first * ss + got));
        }
        if let Some(got) = got_high.filter(|&got| got < (n - half) * ss) {
            return Err(self.truncated((first + half) * ss + got));
        }
        if got_low.is_none() || got_high.is_none() {
            return Err(Error::usage("half of a conversion stopped, but the other half did not fail"));
        }
        // SAFETY:
        // - `convert_at` filled all `n` elements' bytes lent by `spare_bytes`: each half
        //   ran the plan (built for `T`) over all its elements, their source bytes all
        //   read (checked above); the plan wrote every field of `T::native_dtype()` and
        //   validated `b1` fields;
        // - `T::check` passed (`convert_at` checks every chunk it converts).
        unsafe { out.assume_records(n) };
        self.position += n;
        Ok(())
    }

    fn truncated(&self, found: usize) -> Error {
        Error::from(ErrorKind::Truncated { expected: self.data_len as u64, found: found as u64 })
            .of_shape(&self.header.shape)
    }
}

/// Chunks of records from [`NpyReader::chunks`].
#[derive(Debug)]
pub struct Chunks<R, T> {
    reader: NpyReader<R>,
    plan: Plan,
    chunk_len: usize,
    failed: bool,
    _marker: std::marker::PhantomData<fn() -> T>,
}

impl<R: Read, T: NpyRecord> Iterator for Chunks<R, T> {
    type Item = Result<Vec<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        let k = self.chunk_len.min(self.reader.remaining());
        if self.failed || k == 0 {
            return None;
        }
        // Capacity comes with the data (`append` reserves as elements arrive): `k` may be
        // all the elements a stream's header claims.
        let mut chunk = Buffer::new();
        match self.reader.append(&self.plan, &mut chunk, k, false) {
            Ok(()) => Some(Ok(chunk.into_vec())),
            Err(e) => {
                self.failed = true;
                Some(located(self.reader.origin.clone(), Err(e)))
            }
        }
    }
}

impl<R, T> Chunks<R, T> {
    /// The reader (to read what follows the array in the stream).
    pub fn into_inner(self) -> NpyReader<R> {
        self.reader
    }
}

/// A `Vec<T>` of `n` elements whose bytes `fill` writes (given all `n * size_of::<T>()`
/// bytes, zeroed): every field of `T::native_dtype()` must be written by it (through
/// plans, which validate `b1` fields); `T::check` and skipped fields are handled here.
///
/// `fill` is trusted to write `b1` fields only through plans: a safe closure that wrote a
/// 2 there would make an invalid `bool`. Its callers (npz columns, mmap's `Decoded`) run
/// plans; this should take the plans to run, or be an `unsafe fn`, when they next change.
pub(crate) fn build_vec<T: NpyRecord>(n: usize, fill: impl FnOnce(&mut [u8]) -> Result<()>) -> Result<Vec<T>> {
    if std::mem::size_of::<T>() == 0 {
        zero_sized::<T>(n)?;
        return Ok(Vec::new());
    }
    let mut out = Buffer::zeroed(n)?;
    let bytes = out.spare_bytes(n);
    fill(bytes)?;
    check_elements::<T>(bytes, 0)?;
    // SAFETY:
    // - `fill` wrote every field of `T::native_dtype()` into the `n` elements' bytes lent
    //   by `spare_bytes`, through plans (the caller's promise: see the doc), which
    //   validated `b1` fields;
    // - `T::check` passed (`check_elements`).
    unsafe { out.assume_records(n) };
    Ok(out.into_vec())
}

fn zero_sized<T>(n: usize) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    Err(Error::usage(format!("cannot read {n} elements of the zero-sized type {}", std::any::type_name::<T>())))
}

/// Reads source elements of `plan` from `file` at `offset` and converts them into `dst`
/// (whole destination elements; the first is element `first` of the array), in cache-sized
/// chunks. Returns the source bytes read: fewer than `dst` needs when the file ends early
/// (then `dst` is only partly converted); `None` when it stopped because `stop` was set
/// (by the thread converting the first half, which failed).
fn convert_at<T: NpyRecord>(
    file: &File,
    offset: u64,
    plan: &Plan,
    dst: &mut [u8],
    first: usize,
    stop: Option<&AtomicBool>,
) -> Result<Option<usize>> {
    let (ss, ds) = (plan.src_size(), plan.dst_size());
    let per_chunk = (CONVERT_CHUNK / ss.max(1)).max(1);
    let mut staging = vec![0u8; per_chunk.min(dst.len() / ds.max(1)) * ss];
    let mut read = 0;
    for (c, out) in dst.chunks_mut(per_chunk * ds).enumerate() {
        if stop.is_some_and(|stop| stop.load(Ordering::Relaxed)) {
            return Ok(None);
        }
        let k = out.len() / ds;
        let src = &mut staging[..k * ss];
        let got = read_full_at(file, src, offset + read as u64)?;
        read += got;
        if got < src.len() {
            return Ok(Some(read));
        }
        plan.run(src, out, first + c * per_chunk)?;
        check_elements::<T>(out, first + c * per_chunk)?;
    }
    Ok(Some(read))
}

/// Where a reader's data comes from: the file read and the npz member, as known.
#[derive(Debug, Clone, Default)]
pub(crate) struct Origin {
    pub(crate) path: Option<std::path::PathBuf>,
    pub(crate) member: Option<String>,
}

/// `result`, its error naming `origin` (the file and member read) if known.
fn located<V>(origin: Option<Origin>, result: Result<V>) -> Result<V> {
    let Some(Origin { path, member }) = origin else { return result };
    result.map_err(|e| e.locate(path.as_deref(), Access::Read, member.as_deref()))
}

pub(crate) fn check_elements<T: NpyRecord>(bytes: &[u8], first: usize) -> Result<()> {
    if T::NEEDS_CHECK {
        let size = std::mem::size_of::<T>();
        for (i, el) in bytes.chunks_exact(size).enumerate() {
            T::check(el).map_err(|reason| Error::from(ErrorKind::InvalidValue { index: first + i, reason }))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// A reader that hands out at most 7 bytes per call.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(7).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let header: Header = Header::parse(
            Version::V1_0,
            format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}").as_bytes(),
        )
        .unwrap();
        let (_, mut out) = header.encode(None).unwrap();
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_from_a_trickling_stream() {
        let data: Vec<u8> = (1..=5i32).flat_map(|v| v.to_be_bytes()).collect();
        let file = npy("'>i4'", "(5,)", &data);
        let v = NpyReader::from_reader(Trickle(&file)).unwrap().read::<Vec<i32>>().unwrap();
        assert_eq!(v, [1, 2, 3, 4, 5]);
        let wide = NpyReader::from_reader(Trickle(&file)).unwrap().read::<Vec<f64>>().unwrap();
        assert_eq!(wide, [1.0, 2.0, 3.0, 4.0, 5.0]);
    }

    #[test]
    fn truncated_stream_is_an_error_not_a_big_allocation() {
        // Claims 2^40 f8 elements (8 TiB); the stream has 16 bytes.
        let file = npy("'<f8'", "(1099511627776,)", &[0u8; 16]);
        let e = NpyReader::from_reader(&file[..]).unwrap().read::<Vec<f64>>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { found: 16, .. }), "{e}");
        let e = NpyReader::from_reader(&file[..]).unwrap().read::<DynArray>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
    }

    #[test]
    fn header_limit_is_checked_before_reading() {
        let mut file = b"\x93NUMPY\x02\x00".to_vec();
        file.extend_from_slice(&u32::MAX.to_le_bytes());
        let e = NpyReader::from_reader(&file[..]).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::HeaderTooLarge { limit: crate::header::DEFAULT_MAX_HEADER_SIZE, .. }),
            "{e}"
        );
    }

    #[test]
    fn invalid_chars_and_bools_are_errors() {
        let file = npy("'<U1'", "(2,)", &[0x41, 0, 0, 0, 0, 0xd8, 0, 0]);
        let e = NpyReader::from_reader(&file[..]).unwrap().read::<Vec<char>>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
        let file = npy("'|b1'", "(3,)", &[1, 0, 7]);
        let e = NpyReader::from_reader(&file[..]).unwrap().read::<Vec<bool>>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 2, .. }), "{e}");
        let file = npy("'|b1'", "(3,)", &[1, 0, 1]);
        assert_eq!(NpyReader::from_reader(&file[..]).unwrap().read::<Vec<bool>>().unwrap(), [true, false, true]);
    }

    #[test]
    fn short_inputs_are_format_errors() {
        for input in [&b""[..], b"\x93NUMPY", b"\x93NUMPY\x01\x00\x05", b"\x93NUMPY\x01\x00\x10\x00{'descr'"] {
            let e = NpyReader::from_reader(input).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Format { .. }), "{e}");
        }
    }

    /// Reads of over 64 MiB from a file get every value: typed and dynamic ones (with
    /// `buffer::prefaulting`'s second thread), and a conversion (split between two
    /// threads, `convert_split`).
    #[test]
    #[cfg_attr(miri, ignore = "72 MB of data: far too slow under Miri")]
    fn large_reads_with_pages_faulted_in_beside_them_are_exact() {
        let n = 9_000_000;
        let data: Vec<i64> = (0..n as i64).map(|i| i * 3 - 7).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.npy");
        data.write_npy(&path).unwrap();
        assert!(n * 8 >= 64 << 20);
        assert_eq!(Vec::<i64>::read_npy(&path).unwrap(), data);
        let wide: Vec<f64> = Vec::read_npy(&path).unwrap();
        assert!(wide.iter().zip(&data).all(|(&w, &d)| w == d as f64));
        let dynamic = DynArray::read_npy(&path).unwrap();
        assert_eq!(dynamic.data().len(), n * 8);
        assert!(dynamic
            .data()
            .chunks_exact(8)
            .zip(&data)
            .all(|(b, &d)| i64::from_ne_bytes(b.try_into().unwrap()) == d));
    }

    /// `convert_split` (used for conversions of 64 MiB or more from a file) on a small
    /// file: each of two threads converts its half, read at its position; a file that
    /// shrank after its header was read is a truncation error, with nothing claimed.
    #[test]
    fn split_conversions_of_a_small_file_are_exact() {
        let data: Vec<i32> = (0..1001).map(|i| i * 7 - 300).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.npy");
        data.write_npy(&path).unwrap();
        let convert = |reader: &mut NpyReader<_>| {
            let file = reader.positional_file().unwrap();
            let plan = reader.plan::<f64>().unwrap();
            assert!(!plan.in_place());
            let mut out = Buffer::<f64>::zeroed(data.len()).unwrap();
            reader.convert_split(&file, &plan, &mut out, data.len()).map(|()| out.into_vec())
        };
        let out = convert(&mut NpyReader::from_path(&path).unwrap()).unwrap();
        assert_eq!(out, data.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
        let mut reader = NpyReader::from_path(&path).unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len - 6).unwrap();
        let e = convert(&mut reader).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
    }

    /// Skipped fields are initialized (`fill_skipped`) when records are converted
    /// (`fill_converted`): into a buffer sized by the header, from a stream of unknown
    /// length, and in chunks (`records`).
    #[cfg(feature = "derive")]
    #[test]
    fn skipped_fields_are_filled_when_records_are_converted() {
        #[derive(crate::NpyRecord, Debug, Clone, PartialEq)]
        #[npy(crate = "crate")]
        struct Noted {
            id: i32,
            #[npy(skip)]
            note: String,
            value: f64,
        }
        let v: Vec<Noted> = (0..9).map(|i| Noted { id: i, note: format!("n{i}"), value: f64::from(i) / 2.0 }).collect();
        let bytes = v.write_npy_to(Vec::new()).unwrap();
        let want: Vec<Noted> = v.iter().map(|r| Noted { note: String::new(), ..r.clone() }).collect();
        assert_eq!(DynArray::read_npy_from(&bytes[..]).unwrap().to_vec::<Noted>().unwrap(), want);
        assert_eq!(Vec::<Noted>::read_npy_from(Trickle(&bytes)).unwrap(), want);
        let chunks: Vec<Vec<Noted>> =
            NpyReader::from_reader(&bytes[..]).unwrap().chunks::<Noted>(4).unwrap().map(Result::unwrap).collect();
        assert_eq!(chunks.concat(), want);
    }

    /// A `#[repr(C, packed)]` record: its stored fields read in one copy (the file's
    /// layout is its memory), its skipped field, unaligned, filled in place.
    #[cfg(feature = "derive")]
    #[test]
    fn packed_records_read_in_place_and_fill_skipped_fields_unaligned() {
        #[derive(crate::NpyRecord)]
        #[npy(crate = "crate")]
        #[repr(C, packed)]
        struct Tagged {
            flag: u8,
            value: f64,
            #[npy(skip)]
            note: String,
        }
        let v: Vec<Tagged> =
            (0..9).map(|i| Tagged { flag: i as u8, value: f64::from(i) / 4.0, note: "x".into() }).collect();
        let bytes = v.write_npy_to(Vec::new()).unwrap();
        assert_eq!(bytes.len(), 128 + 9 * 9);
        for back in
            [Vec::<Tagged>::read_npy_from(&bytes[..]).unwrap(), Vec::<Tagged>::read_npy_from(Trickle(&bytes)).unwrap()]
        {
            let got: Vec<(u8, f64, String)> = back.into_iter().map(|r| ({ r.flag }, { r.value }, r.note)).collect();
            assert_eq!(got, (0..9).map(|i| (i as u8, f64::from(i) / 4.0, String::new())).collect::<Vec<_>>());
        }
    }
}
