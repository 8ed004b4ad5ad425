//! The settings of every read and write: [`ReadOptions`], [`WriteOptions`] and Dask
//! stacks' [`StackOptions`], each with its defaults documented. Plain data, below the reader, the writer and the object codec;
//! options never open anything: readers and writers take them as their last argument
//! ([`crate::NpyReader::from_path_with`], [`crate::WriteNpy::write_npy_with`]).
#![forbid(unsafe_code)]

use crate::dtype::{ByteOrder, DType};
use crate::header::{Version, DEFAULT_MAX_HEADER_SIZE};

/// How to read `.npy` data. Every setting has a documented default.
///
/// # Examples
/// ```
/// use npy_core::{NpyReader, ReadOptions};
/// use npy_core::prelude::*;
///
/// let mut bytes = Vec::new();
/// [1.0f64, 2.0].write_npy_to(&mut bytes)?;
/// let reader = NpyReader::from_reader_with(&bytes[..], ReadOptions::new().max_header_size(100_000))?;
/// assert_eq!(reader.header().shape, [2]);
/// assert_eq!(reader.read::<Vec<f64>>()?, [1.0, 2.0]);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    max_header_size: usize,
    max_object_bytes: Option<usize>,
    python2_strings: Python2Strings,
    safe_globals: Vec<(String, String)>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_header_size: DEFAULT_MAX_HEADER_SIZE,
            max_object_bytes: None,
            python2_strings: Python2Strings::Ascii,
            safe_globals: Vec::new(),
        }
    }
}

/// What the Python 2 `str`s in an object array's pickle (`SHORT_BINSTRING`, `BINSTRING`:
/// byte strings with no encoding) decode to, as `np.load`'s `encoding` argument says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Python2Strings {
    /// `str`s of ASCII text; any other byte is an error (`np.load`'s default, `'ASCII'`).
    #[default]
    Ascii,
    /// `str`s, each byte the character of that code point (`'latin1'`): never fails, and
    /// keeps the bytes of NumPy scalars pickled on Python 2.
    Latin1,
    /// `bytes` (`'bytes'`), also where the pickle's own structure has them (dtype
    /// strings), which NumPy reads as the text they spell.
    Bytes,
}

impl ReadOptions {
    /// Default options: header size limit 16 MiB ([`DEFAULT_MAX_HEADER_SIZE`] says why);
    /// object arrays decoded within 128 MiB plus 4 bytes per byte of their pickle
    /// ([`max_object_bytes`](Self::max_object_bytes)).
    pub fn new() -> Self {
        Self::default()
    }

    /// Largest header length accepted, checked on the length field before anything is
    /// allocated. Default 16 MiB ([`DEFAULT_MAX_HEADER_SIZE`]): every header NumPy writes
    /// for a record of up to hundreds of thousands of fields. NumPy's `np.load` defaults to
    /// 10,000 bytes; set that to refuse what NumPy refuses.
    pub fn max_header_size(&mut self, bytes: usize) -> &mut Self {
        self.max_header_size = bytes;
        self
    }

    /// Most memory an object array may take to decode (see [`crate::object`]): its
    /// pickle's working state (stack, memo, values) and the resulting
    /// [`Object`](crate::Object)s, counted as they grow; over it, decoding stops
    /// with [`ErrorKind::Pickle`](crate::ErrorKind::Pickle). Default: 128 MiB plus 4 bytes
    /// per byte of the pickle, which bounds what a hostile pickle can take; an array of
    /// millions of small values (32 bytes each as `Object`s) or a value that the pickle
    /// shares many times (copied each time) may need more. The process keeps up to 64 MiB
    /// of one decode's working buffers for the next; each decode is charged as if its
    /// buffers grew from empty.
    ///
    /// # Examples
    /// ```
    /// use npy_core::object::Object;
    /// use npy_core::prelude::*;
    /// use npy_core::{ErrorKind, NpyReader, ReadOptions};
    ///
    /// let file = vec![Object::from("x".repeat(1000)); 10].write_npy_to(Vec::new())?;
    /// let e = NpyReader::from_reader_with(&file[..], ReadOptions::new().max_object_bytes(5000))?.read::<Array<Object>>().unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::Pickle { .. }), "{e}");
    /// let a = NpyReader::from_reader_with(&file[..], ReadOptions::new().max_object_bytes(1 << 20))?.read::<Array<Object>>()?;
    /// assert_eq!(a.shape(), [10]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn max_object_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_object_bytes = Some(bytes);
        self
    }

    /// What Python 2 `str`s in object arrays' pickles become ([`Python2Strings`]; default
    /// ASCII text, as `np.load`).
    ///
    /// # Examples
    /// ```
    /// use npy_core::object::{from_pickle, from_pickle_with, Object};
    /// use npy_core::{Python2Strings, ReadOptions};
    ///
    /// // A Python 2 pickle of an object array holding the str '\xe4' (one byte).
    /// let pickle = b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R(K\x01K\x01\x85cnumpy\ndtype\nU\x02O8K\x00K\x01\x87R(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89]U\x01\xe4atb.";
    /// assert!(from_pickle(pickle).is_err());
    /// let latin1 = from_pickle_with(pickle, ReadOptions::new().python2_strings(Python2Strings::Latin1))?;
    /// assert_eq!(latin1.as_slice(), [Object::from("ä")]);
    /// let bytes = from_pickle_with(pickle, ReadOptions::new().python2_strings(Python2Strings::Bytes))?;
    /// assert_eq!(bytes.as_slice(), [Object::from(&b"\xe4"[..])]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn python2_strings(&mut self, strings: Python2Strings) -> &mut Self {
        self.python2_strings = strings;
        self
    }

    /// Classes of the caller's own, by `(module, qualified name)`, that a pickle's check
    /// ([`crate::object::check_pickle_with`]) lets through, for callers whose unpickler
    /// builds the values: an instance made by calling one of them (`REDUCE`, `NEWOBJ`,
    /// then any `BUILD`) passes with any arguments, which are checked as any value is.
    /// Building one runs that class's code, so name only classes you trust with the files
    /// you read. Decoding into [`crate::Object`]s cannot build them and refuses them. Default:
    /// none (the Python package's `npy.add_safe_globals` and `npy.safe_globals` set it).
    ///
    /// # Examples
    /// ```
    /// use npy_core::object::check_pickle_with;
    /// use npy_core::ReadOptions;
    ///
    /// // np.array([Point(1, 2)], dtype=object) pickled by np.save, Point a namedtuple of
    /// // module `geo`: its pickle calls geo.Point(1, 2).
    /// let pickle = b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x8c\x0c_reconstruct\x93\x8c\x05numpy\x8c\x07ndarray\x93K\x00\x85C\x01b\x87R(K\x01K\x01\x85\x8c\x05numpy\x8c\x05dtype\x93\x8c\x02O8\x89\x88\x87R(K\x03\x8c\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89]\x8c\x03geo\x8c\x05Point\x93K\x01K\x02\x86Ratb.";
    /// assert!(check_pickle_with(pickle, &ReadOptions::new()).is_err());
    /// let trusted = ReadOptions::new().safe_globals([("geo", "Point")]).clone();
    /// assert_eq!(check_pickle_with(pickle, &trusted)?, [1]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn safe_globals<M: Into<String>, N: Into<String>>(
        &mut self,
        globals: impl IntoIterator<Item = (M, N)>,
    ) -> &mut Self {
        self.safe_globals = globals.into_iter().map(|(m, n)| (m.into(), n.into())).collect();
        self
    }

    pub(crate) fn safe_global_names(&self) -> &[(String, String)] {
        &self.safe_globals
    }

    pub(crate) fn object_limit(&self) -> Option<usize> {
        self.max_object_bytes
    }

    pub(crate) fn strings(&self) -> Python2Strings {
        self.python2_strings
    }

    pub(crate) fn header_limit(&self) -> usize {
        self.max_header_size
    }
}

/// How to write `.npy` files. Every setting has a documented default.
///
/// # Examples
/// ```
/// use npy_core::header::Version;
/// use npy_core::{prelude::*, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("v2.npy");
/// [1u8, 2].write_npy_with(&path, WriteOptions::new().version(Version::V2_0))?;
/// assert_eq!(&std::fs::read(&path)?[6..8], &[2, 0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    version: Option<Version>,
    no_sync: bool,
    byte_order: Option<ByteOrder>,
}

impl WriteOptions {
    /// Default options: the oldest format version that fits the header, as `np.save`;
    /// path writes synced before they replace the target.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forces a format version (as `numpy.lib.format.write_array(version=...)`); writing
    /// fails if the header does not fit it. Default: chosen as NumPy chooses.
    pub fn version(&mut self, version: Version) -> &mut Self {
        self.version = Some(version);
        self
    }

    /// Whether a path write is synced to disk before it replaces the target (and the
    /// directory after). Default: `true`, so a crash never leaves a half-written file in
    /// place of the old one. `false` skips the syncs (the rename stays atomic for
    /// running programs) — NumPy's `np.save` does not sync either — for scratch files
    /// where speed matters more than surviving a power cut.
    pub fn sync(&mut self, sync: bool) -> &mut Self {
        self.no_sync = !sync;
        self
    }

    /// Writes every multi-byte scalar of the array in `order`, converted as it is written:
    /// `ByteOrder::Big` saves a `Vec<f64>` as `'>f8'`, a record's fields (nested ones
    /// included) all big-endian. Default: the order the data has, which for typed data is
    /// the element type's (`T::dtype()`: the machine's for primitives, a derived struct's
    /// `endian` attributes). [`ByteOrder::NotApplicable`] means the machine's order.
    /// One-byte types have no byte order; object arrays (pickles) are not affected.
    ///
    /// The swap is fused with the copy that writing makes anyway, on a second thread for
    /// large arrays, so it costs about nothing next to the write.
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::ByteOrder;
    /// use npy_core::{prelude::*, WriteOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("be.npy");
    /// vec![1.5f64, -2.0].write_npy_with(&path, WriteOptions::new().byte_order(ByteOrder::Big))?;
    /// let array = DynArray::read_npy(&path)?;
    /// assert_eq!(array.header().dtype.descr(), "'>f8'");
    /// assert_eq!(&array.data()[..8], &1.5f64.to_be_bytes());
    /// assert_eq!(array.to_vec::<f64>()?, [1.5, -2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn byte_order(&mut self, order: ByteOrder) -> &mut Self {
        self.byte_order = Some(order);
        self
    }

    /// The dtype written for data of `dtype`: in the byte order asked for, if any.
    pub(crate) fn written_dtype(&self, dtype: &DType) -> DType {
        match self.byte_order {
            Some(order) => dtype.with_byte_order(order),
            None => dtype.clone(),
        }
    }

    pub(crate) fn forced_version(&self) -> Option<Version> {
        self.version
    }

    pub(crate) fn syncs(&self) -> bool {
        !self.no_sync
    }
}

/// How a Dask npy stack is laid out: the axis its blocks follow one another on and their
/// length along it. Taken by [`crate::stack::Stack::from_path_with`] (the axis only),
/// [`crate::stack::split_with`] and [`crate::stack::write_stack_with`].
///
/// # Examples
/// ```
/// use npy_core::stack::{write_stack_with, Stack, StackOptions};
/// use npy_core::Array;
///
/// let dir = tempfile::tempdir()?;
/// let grid = Array::from_shape_vec(vec![2, 6], (0..12u8).collect())?;
/// let info = write_stack_with(&grid, dir.path().join("s"), StackOptions::new().axis(1).block_len(4))?;
/// assert_eq!(info.chunks, [vec![2], vec![4, 2]]);
/// assert_eq!(Stack::from_path(dir.path().join("s"))?.axis(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct StackOptions {
    axis: Option<usize>,
    block_len: Option<usize>,
}

impl StackOptions {
    /// Default of the block length: blocks of about 128 MiB, Dask's default chunk size
    /// (`array.chunk-size`).
    pub const DEFAULT_BLOCK_BYTES: usize = 128 << 20;

    /// Default options: along the first axis when writing (when reading, the axis `info`
    /// says, else the one the blocks' lengths differ on), blocks of about
    /// [`StackOptions::DEFAULT_BLOCK_BYTES`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The axis the blocks follow one another on. Writing: the axis split (default 0).
    /// Reading: for a stack without `info` whose blocks could stack on several axes (all
    /// one shape); a stack whose `info` says another axis is an error. Default: the axis
    /// `info` says, else the one axis the blocks' lengths differ on, else the first.
    pub fn axis(&mut self, axis: usize) -> &mut Self {
        self.axis = Some(axis);
        self
    }

    /// Writing only: the length of each block along the axis (the last one shorter); 0 is
    /// an error. Default: as many slices along the axis as fit in
    /// [`StackOptions::DEFAULT_BLOCK_BYTES`], at least one.
    pub fn block_len(&mut self, len: usize) -> &mut Self {
        self.block_len = Some(len);
        self
    }

    /// The axis set, if any.
    pub(crate) fn axis_set(&self) -> Option<usize> {
        self.axis
    }

    /// The block length for an array of `dtype` and `shape` split along `axis`: the one
    /// set, else the default's.
    pub(crate) fn block_len_for(&self, dtype: &DType, shape: &[usize], axis: usize) -> usize {
        self.block_len.unwrap_or_else(|| {
            let slice = shape
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != axis)
                .fold(dtype.itemsize(), |n, (_, &d)| n.saturating_mul(d));
            match slice {
                0 => shape.get(axis).copied().unwrap_or(1).max(1),
                n => (StackOptions::DEFAULT_BLOCK_BYTES / n).max(1),
            }
        })
    }
}
