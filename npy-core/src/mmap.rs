//! Memory maps of `.npy` files: the data viewed in place as `&[T]` or `&mut [T]` without
//! reading it, or decoded element by element where it cannot be viewed.
//!
//! [`NpyMap`] maps a file read-only; [`NpyMapMut`] maps one read-write, and creates files
//! of a dtype and shape without writing their data. Opening parses the header with the
//! crate's one reader and maps the file: its cost does not depend on the data's size, and
//! no data page is touched until it is used.
//!
//! A view is zero-copy when the file holds exactly `T`'s memory: the same fields at the
//! same offsets with the same sizes, in native byte order, at an address aligned for `T`.
//! Files written for `T` on this machine (by this crate or by NumPy, which aligns data to
//! 64 bytes, 16 in old versions) view in place. Where a file does not (another byte order,
//! another layout, data at an offset another writer left unaligned), a view fails with
//! [`ErrorKind::NotViewable`] saying why, and [`NpyMap::decode`] converts on the fly.
//! `bool` and `char` data, and types with [`NpyRecord::NEEDS_CHECK`], are validated before
//! they are viewed, never transmuted blindly. Array element types take the file's last
//! dims, as reads do: `'<f4'` data of shape `(n, 3)` views as `n` elements `[f32; 3]`, and
//! element ranges count those.
//!
//! [`MappedRange`] maps a byte range of an open file for engines that decode rows from it
//! (npy-store's scans of local files), made in safe code with a [`MapContract`], the
//! caller's `unsafe` acceptance of the contract.
//!
//! The safety contract of all maps is stated once, at [`NpyMap`](NpyMap#safety).

use std::borrow::Cow;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::iter::FusedIterator;
use std::marker::PhantomData;
use std::ops::Range;
use std::path::Path;

use memmap2::{MmapOptions, MmapRaw};

use crate::atomic::AtomicFile;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::header::{Header, Version};
use crate::options::ReadOptions;
use crate::plan::Plan;
use crate::read::build_vec;
use crate::record::{native_dtype_of, NpyRecord};

mod range;
mod view;
pub use range::{MapContract, MappedRange};
pub use view::view_bytes;
use view::{cast, cast_mut, validate, view_plan, Access};

/// Bytes of elements decoded per step by [`Decoded::iter`].
const ITER_CHUNK: usize = 64 << 10;

/// The accessors [`NpyMap`] and [`NpyMapMut`] share, written once for both: each holds its
/// mapping and layout in a [`MapCore`] named `core`.
macro_rules! map_accessors {
    () => {
        /// The parsed header.
        pub fn header(&self) -> &Header {
            &self.core.layout.header
        }

        /// The file's dtype.
        pub fn dtype(&self) -> &DType {
            &self.core.layout.header.dtype
        }

        /// The array's shape; empty for a 0-d array.
        pub fn shape(&self) -> &[usize] {
            &self.core.layout.header.shape
        }

        /// True when the data is in Fortran (column-major) order.
        pub fn fortran_order(&self) -> bool {
            self.core.layout.header.fortran_order
        }

        /// The file's format version.
        pub fn version(&self) -> Version {
            self.core.layout.version
        }

        /// Byte offset of the data from the start of the file.
        pub fn data_offset(&self) -> usize {
            self.core.layout.data_offset
        }

        /// Number of elements (the product of the shape).
        pub fn len(&self) -> usize {
            self.core.layout.len
        }

        /// True when the array has no elements.
        pub fn is_empty(&self) -> bool {
            self.core.layout.len == 0
        }

        /// The data as bytes, in the file's dtype and storage order: the map of an array
        /// of any dtype.
        pub fn data(&self) -> &[u8] {
            self.core.bytes(0..self.core.layout.data_len)
        }
    };
}

/// A read-only memory map of a `.npy` file: its header, and its data as bytes
/// ([`NpyMap::data`]), viewed in place as `&[T]` ([`NpyMap::view`]), or decoded on the fly
/// ([`NpyMap::decode`]).
///
/// Views are in storage order: for a Fortran-order file ([`NpyMap::fortran_order`]) the
/// first index varies fastest.
///
/// # Safety
/// A memory map is memory the operating system shares with everyone who can write the
/// file. The constructors of [`NpyMap`] and [`NpyMapMut`] are `unsafe` because the caller
/// must ensure that, for as long as a slice borrowed from a map is alive (from `view`,
/// `view_range`, `data`, `decode`, their `_mut` forms, ...), none of the bytes it covers is
/// changed by anything other than that borrow, and the file is not truncated below them:
/// not by another process, nor by a [`File`] or another map of the same file in this
/// program. Otherwise the behavior is undefined: a `&[T]` whose contents change under it,
/// values that are not valid `T`s (a `bool` of 2), or `SIGBUS` when a page past the end of
/// a truncated file is touched.
///
/// This is memmap2's contract, narrowed to the bytes actually borrowed: the maps never
/// reference any other byte of the file, so several processes may fill disjoint parts of
/// one file at once, each borrowing only its own part with [`NpyMapMut::view_range_mut`]
/// (as `examples/parallel_fill.rs` does). Within one program, write through one
/// [`NpyMapMut`] and let borrows order the reads and writes.
///
/// # Examples
/// ```
/// use npy_core::mmap::NpyMap;
/// use npy_core::prelude::*;
/// use npy_core::ErrorKind;
///
/// let path = std::env::temp_dir().join("depths.npy");
/// vec![1.5f32, 2.5, 4.0].write_npy(&path)?;
///
/// // SAFETY: nothing modifies or truncates the file while it is mapped.
/// let map = unsafe { NpyMap::from_path(&path)? };
/// assert_eq!(map.shape(), [3]);
/// let depths: &[f32] = map.view()?; // no copy: the slice points into the map
/// assert_eq!(depths, [1.5, 2.5, 4.0]);
///
/// // '<f4' is not f64's memory: no view, but a decoding view widens on the fly.
/// let e = map.view::<f64>().unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::NotViewable { .. }), "{e}");
/// assert_eq!(map.decode::<f64>()?.get(2)?, 4.0);
/// // '<f4' cannot be read as i32 at all.
/// let e = map.view::<i32>().unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NpyMap {
    core: MapCore,
}

impl NpyMap {
    /// Opens and maps a `.npy` file read-only, with default [`ReadOptions`].
    ///
    /// Reads only the header (a few hundred bytes) and maps the file: the time taken does
    /// not depend on the size of the data.
    ///
    /// # Safety
    /// The contract of [`NpyMap`](NpyMap#safety): while a slice borrowed from the map
    /// lives, nothing else modifies its bytes or truncates the file.
    ///
    /// # Errors
    /// As [`NpyReader::from_path_with`](crate::NpyReader::from_path_with): [`ErrorKind::Io`] when the file cannot be opened or
    /// mapped; [`ErrorKind::Format`], [`ErrorKind::Header`], [`ErrorKind::Dtype`] and the
    /// like for a bad header; [`ErrorKind::Truncated`] when the file is shorter than the
    /// header says; [`ErrorKind::UnsupportedDtype`] for an object array (its data is a
    /// pickle, which cannot be mapped: see [`crate::object`]).
    ///
    /// # Examples
    /// ```
    /// use npy_core::mmap::NpyMap;
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("counts.npy");
    /// Array::from_shape_vec(vec![2, 3], (0..6u32).collect())?.write_npy(&path)?;
    /// // SAFETY: nothing modifies or truncates the file while it is mapped.
    /// let map = unsafe { NpyMap::from_path(&path)? };
    /// assert_eq!((map.shape(), map.len(), map.data_offset()), (&[2, 3][..], 6, 128));
    /// assert_eq!(map.view::<u32>()?[4], 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn from_path(path: impl AsRef<Path>) -> Result<NpyMap> {
        // SAFETY:
        // - the caller upholds the contract of `NpyMap`, which `from_path_with` shares.
        unsafe { NpyMap::from_path_with(path, &ReadOptions::default()) }
    }

    /// Opens and maps a `.npy` file read-only, with `options` (e.g. a larger header limit).
    ///
    /// # Safety
    /// As [`NpyMap::from_path`].
    ///
    /// # Errors
    /// As [`NpyMap::from_path`]; [`ErrorKind::HeaderTooLarge`] over the header limit.
    pub unsafe fn from_path_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<NpyMap> {
        let path = path.as_ref();
        let open = || {
            let file = crate::file::open_file(path)?;
            let layout = Located::read(&file, options)?;
            let map = MmapOptions::new().len(layout.map_len()?).map_raw_read_only(&file)?;
            Ok(NpyMap { core: MapCore { map, layout } })
        };
        open().map_err(|e: Error| e.reading(path))
    }

    /// Maps member `name` of an `.npz` archive read-only. The member must be stored (not
    /// compressed); [`npz::Writer`](crate::npz::Writer) aligns stored members' data to 64
    /// bytes, so their views are zero-copy (NumPy's `np.savez` does not align: its
    /// members may need [`NpyMap::decode`]). The member's CRC is not checked: a map reads
    /// only what is looked at.
    ///
    /// # Safety
    /// As [`NpyMap::from_path`], for the archive file.
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] for an unknown or compressed member, or a member that runs past
    /// the end of the file; as [`NpyMap::from_path`] for its header.
    ///
    /// # Examples
    /// ```
    /// use npy_core::mmap::NpyMap;
    /// use npy_core::npz::Writer;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("run.npz");
    /// let mut w = Writer::create(&path)?;
    /// w.add("label", &[7u8])?;
    /// w.add("gain", &[0.5f64, 0.25])?;
    /// w.finish()?;
    /// // SAFETY: nothing modifies or truncates the archive while it is mapped.
    /// let map = unsafe { NpyMap::from_npz_member(&path, "gain")? };
    /// assert_eq!(map.view::<f64>()?, [0.5, 0.25]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn from_npz_member(path: impl AsRef<Path>, name: &str) -> Result<NpyMap> {
        // SAFETY:
        // - the caller upholds the contract of `NpyMap`, which this shares.
        unsafe { NpyMap::from_npz_member_with(path, name, &ReadOptions::default()) }
    }

    /// As [`NpyMap::from_npz_member`], with `options` for the member's header.
    ///
    /// # Safety
    /// As [`NpyMap::from_path`], for the archive file.
    ///
    /// # Errors
    /// As [`NpyMap::from_npz_member`].
    pub unsafe fn from_npz_member_with(path: impl AsRef<Path>, name: &str, options: &ReadOptions) -> Result<NpyMap> {
        let path = path.as_ref();
        let open = || {
            let reader = crate::npz::Reader::from_path(path)?;
            let member = crate::npz::MemberInfo::find(reader.members(), name)
                .cloned()
                .ok_or_else(|| Error::npz(Some(name), "no such member"))?;
            if member.compression != Some(crate::npz::Method::Stored) {
                return Err(Error::npz(Some(&member.member), "only stored (uncompressed) members can be mapped"));
            }
            let at_member = |e: Error| e.in_member(&member.member);
            let start =
                member.data_start.ok_or_else(|| Error::npz(Some(&member.member), "member data offset unknown"))?;
            let file = crate::file::open_file(path)?;
            let file_len = file.metadata()?.len();
            if start.checked_add(member.size).is_none_or(|end| end > file_len) {
                return Err(Error::npz(Some(&member.member), "member runs past the end of the file"));
            }
            let layout = Located::read_at(&file, start, member.size, options).map_err(at_member)?;
            let map = MmapOptions::new().len(layout.map_len().map_err(at_member)?).map_raw_read_only(&file)?;
            Ok(NpyMap { core: MapCore { map, layout } })
        };
        open().map_err(|e| e.reading(path))
    }

    map_accessors!();

    /// The data viewed in place as `&[T]`, in storage order, without copying.
    ///
    /// Takes time proportional to the data only when values must be validated: files
    /// with `b1` fields, and types whose [`NpyRecord::NEEDS_CHECK`] is set (`char`,
    /// enums), are checked element by element before the view is returned (every call);
    /// other views cost nothing.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] when the file's dtype cannot be read as `T` at all;
    /// [`ErrorKind::NotViewable`] when it can but not in place: the byte order or the
    /// layout differs, `T` has `#[npy(skip)]` fields, or the data is not aligned for `T`
    /// (use [`NpyMap::decode`]); [`ErrorKind::InvalidValue`] for a `bool` byte other than
    /// 0 or 1, or a value [`NpyRecord::check`] refuses; [`ErrorKind::Usage`] for a
    /// zero-sized `T`.
    ///
    /// # Examples
    /// ```
    /// use npy_core::mmap::NpyMap;
    /// use npy_core::prelude::*;
    ///
    /// #[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
    /// #[npy(align)]
    /// #[repr(C)]
    /// struct Pick {
    ///     trace: u32,
    ///     time: f64,
    ///     good: bool,
    /// }
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("picks.npy");
    /// let picks = vec![Pick { trace: 7, time: 0.25, good: true }, Pick { trace: 9, time: 0.5, good: false }];
    /// picks.write_npy(&path)?;
    /// // SAFETY: nothing modifies or truncates the file while it is mapped.
    /// let map = unsafe { NpyMap::from_path(&path)? };
    /// let view: &[Pick] = map.view()?; // the `good` bytes were checked to be 0 or 1
    /// assert_eq!(view, picks);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view<T: NpyRecord>(&self) -> Result<&[T]> {
        self.core.view_range(0..self.core.layout.grouped::<T>().len)
    }

    /// Elements `range` (in storage order) viewed in place as `&[T]`; only they are
    /// validated.
    ///
    /// # Errors
    /// As [`NpyMap::view`]; [`ErrorKind::Usage`] when `range` is out of bounds.
    pub fn view_range<T: NpyRecord>(&self, range: Range<usize>) -> Result<&[T]> {
        self.core.view_range(range)
    }

    /// A decoding view: elements converted to `T` on the fly, through a conversion plan
    /// compiled once, for files that cannot be viewed in place (another byte order or
    /// layout, widening, misaligned data).
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] when the file's dtype cannot be read as `T`.
    ///
    /// # Examples
    /// ```
    /// use npy_core::mmap::NpyMap;
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("small.npy");
    /// vec![1i16, -2, 3].write_npy(&path)?;
    /// // SAFETY: nothing modifies or truncates the file while it is mapped.
    /// let map = unsafe { NpyMap::from_path(&path)? };
    /// let wide = map.decode::<i64>()?; // '<i2' widens to i64
    /// assert_eq!(wide.get(1)?, -2);
    /// assert_eq!(wide.rows(1..3)?, [-2, 3]);
    /// assert_eq!(wide.iter().collect::<Result<Vec<_>, _>>()?, [1, -2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode<T: NpyRecord>(&self) -> Result<Decoded<'_, T>> {
        self.core.decode()
    }
}

/// A read-write memory map of a `.npy` file, shared with the file (writes reach the file
/// and every other map of it): [`NpyMapMut::create`] makes a file of a dtype and shape
/// without writing its data; [`NpyMapMut::view_mut`] fills it in place.
///
/// Its safety contract is [`NpyMap`'s](NpyMap#safety).
///
/// # Examples
/// ```
/// use npy_core::mmap::NpyMapMut;
/// use npy_core::prelude::*;
///
/// // A name of this process's own, so no other program replaces the file while it is filled.
/// let path = std::env::temp_dir().join(format!("grid-{}.npy", std::process::id()));
/// // SAFETY: nothing else modifies or truncates the file while it is mapped.
/// let mut map = unsafe { NpyMapMut::create::<f32>(&path, vec![2, 3])? };
/// for (i, v) in map.view_mut::<f32>()?.iter_mut().enumerate() {
///     *v = i as f32 * 0.5;
/// }
/// map.flush()?;
/// drop(map);
/// let grid = Array::<f32>::read_npy(&path)?;
/// assert_eq!((grid.shape(), grid.as_slice()), (&[2, 3][..], &[0.0, 0.5, 1.0, 1.5, 2.0, 2.5][..]));
/// std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NpyMapMut {
    core: MapCore,
}

impl NpyMapMut {
    /// Creates (or replaces) a file for an array of `T` of `shape` in C order, writes its
    /// header exactly as `np.save` and `np.lib.format.open_memmap` write it, and maps it.
    ///
    /// The data is not written, but the disk space for it is reserved before the file is
    /// mapped (`posix_fallocate`; where a file system cannot reserve, the C library
    /// writes zeros instead), so a full disk is an [`ErrorKind::Io`] error here, never a
    /// `SIGBUS` on the first store. The data reads as zeros until filled.
    ///
    /// Creating is atomic (see [`crate::atomic`]): the file is made and reserved under no
    /// name, then moved to `path`, so a failed create leaves any old file there whole and
    /// nothing beside it. From then on the map writes into the file in place: a program
    /// stopped before filling leaves a valid file of zeros (or partly filled).
    ///
    /// Concurrent creates of one path each make a file of their own, and the last to
    /// finish replaces the others at `path`: a map from an earlier create then belongs to
    /// a file no longer at `path`, and what is stored through it is lost. Several
    /// processes filling one file should let one create it and the others
    /// [`NpyMapMut::from_path`] it (as `examples/parallel_fill.rs` does), or all call
    /// [`NpyMapMut::create_new`], of which exactly one succeeds.
    ///
    /// # Safety
    /// The contract of [`NpyMap`](NpyMap#safety).
    ///
    /// # Errors
    /// [`ErrorKind::Shape`] when the byte count overflows; [`ErrorKind::Io`] naming `path`
    /// when the file cannot be created, reserved (`StorageFull` on a full disk) or mapped.
    pub unsafe fn create<T: NpyRecord>(path: impl AsRef<Path>, shape: Vec<usize>) -> Result<NpyMapMut> {
        // SAFETY:
        // - the caller upholds the contract of `NpyMap`, which `create_dyn` shares.
        unsafe { NpyMapMut::create_dyn(path, &Header::new(T::dtype(), shape)) }
    }

    /// As [`NpyMapMut::create`], but only when no file exists at `path`: otherwise an
    /// [`ErrorKind::Io`] error of kind `AlreadyExists`, and the file there is left alone.
    /// Of several processes calling it for one path at once, exactly one succeeds.
    ///
    /// # Safety
    /// The contract of [`NpyMap`](NpyMap#safety).
    ///
    /// # Errors
    /// As [`NpyMapMut::create`]; `AlreadyExists` when a file is at `path`.
    ///
    /// # Examples
    /// ```
    /// use npy_core::mmap::NpyMapMut;
    /// use npy_core::ErrorKind;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("once.npy");
    /// // SAFETY: nothing else modifies or truncates the file while it is mapped.
    /// let first = unsafe { NpyMapMut::create_new::<u8>(&path, vec![4])? };
    /// let e = unsafe { NpyMapMut::create_new::<u8>(&path, vec![4]) }.unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::AlreadyExists));
    /// assert_eq!(first.shape(), [4]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn create_new<T: NpyRecord>(path: impl AsRef<Path>, shape: Vec<usize>) -> Result<NpyMapMut> {
        let header = Header::new(T::dtype(), shape);
        NpyMapMut::create_mapped(path.as_ref(), &header, false)
    }

    /// Creates (or replaces) a file for an array described by `header` (any dtype, C or
    /// Fortran order) and maps it, as [`NpyMapMut::create`].
    ///
    /// # Safety
    /// The contract of [`NpyMap`](NpyMap#safety).
    ///
    /// # Errors
    /// As [`NpyMapMut::create`]; [`ErrorKind::Usage`] when the header is too long for any
    /// `.npy` version.
    ///
    /// # Examples
    /// ```
    /// use npy_core::header::Header;
    /// use npy_core::mmap::NpyMapMut;
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("flags.npy");
    /// let header = Header { dtype: "'|b1'".parse()?, fortran_order: true, shape: vec![2, 2] };
    /// // SAFETY: nothing else modifies or truncates the file while it is mapped.
    /// let mut map = unsafe { NpyMapMut::create_dyn(&path, &header)? };
    /// map.view_mut::<bool>()?[1] = true; // storage order: element (1, 0)
    /// drop(map);
    /// let a = Array::<bool>::read_npy(&path)?;
    /// assert_eq!((a.fortran_order(), a.as_slice()), (true, &[false, true, false, false][..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn create_dyn(path: impl AsRef<Path>, header: &Header) -> Result<NpyMapMut> {
        NpyMapMut::create_mapped(path.as_ref(), header, true)
    }

    /// Makes the file (reserved, under no name), moves it to `path` (replacing a file
    /// there only when `replace`) and maps it.
    fn create_mapped(path: &Path, header: &Header, replace: bool) -> Result<NpyMapMut> {
        let create = || {
            crate::dtype::refuse_objects(&header.dtype)?;
            let data_len = header.data_len()?;
            let len = header.element_count()?;
            let (version, bytes) = header.encode(None)?;
            let layout = Located { header: header.clone(), version, data_offset: bytes.len(), data_len, len };
            let total = layout.map_len()?;
            let mut file = AtomicFile::create(path)?;
            file.write_all(&bytes)?;
            crate::atomic::reserve(file.as_file(), 0, total as u64).map_err(|e| file.error(e))?;
            let file = file.commit_file(true, replace)?;
            let map = MmapOptions::new().len(total).map_raw(&file)?;
            Ok(NpyMapMut { core: MapCore { map, layout } })
        };
        create().map_err(|e: Error| e.writing(path))
    }

    /// Opens and maps an existing `.npy` file read-write, with default [`ReadOptions`].
    ///
    /// # Safety
    /// The contract of [`NpyMap`](NpyMap#safety).
    ///
    /// # Errors
    /// As [`NpyMap::from_path`]; [`ErrorKind::Io`] also when the file is not writable.
    pub unsafe fn from_path(path: impl AsRef<Path>) -> Result<NpyMapMut> {
        // SAFETY:
        // - the caller upholds the contract of `NpyMap`, which `from_path_with` shares.
        unsafe { NpyMapMut::from_path_with(path, &ReadOptions::default()) }
    }

    /// Opens and maps an existing `.npy` file read-write, with `options`.
    ///
    /// # Safety
    /// The contract of [`NpyMap`](NpyMap#safety).
    ///
    /// # Errors
    /// As [`NpyMapMut::from_path`]; [`ErrorKind::HeaderTooLarge`] over the header limit.
    pub unsafe fn from_path_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<NpyMapMut> {
        let path = path.as_ref();
        let open = || {
            let file = OpenOptions::new().read(true).write(true).open(path)?;
            let layout = Located::read(&file, options)?;
            let map = MmapOptions::new().len(layout.map_len()?).map_raw(&file)?;
            Ok(NpyMapMut { core: MapCore { map, layout } })
        };
        open().map_err(|e: Error| e.reading(path))
    }

    map_accessors!();

    /// The data as mutable bytes, in the file's dtype and storage order. Any bytes may be
    /// written: views validate what they need to each time they are made.
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.bytes_mut(0..self.core.layout.data_len)
    }

    /// The data viewed in place as `&[T]`, as [`NpyMap::view`].
    ///
    /// # Errors
    /// As [`NpyMap::view`].
    pub fn view<T: NpyRecord>(&self) -> Result<&[T]> {
        self.core.view_range(0..self.core.layout.grouped::<T>().len)
    }

    /// Elements `range` viewed in place as `&[T]`, as [`NpyMap::view_range`].
    ///
    /// # Errors
    /// As [`NpyMap::view_range`].
    pub fn view_range<T: NpyRecord>(&self, range: Range<usize>) -> Result<&[T]> {
        self.core.view_range(range)
    }

    /// The data viewed in place as `&mut [T]`, in storage order, for filling or updating
    /// the file without copies.
    ///
    /// On top of [`NpyMap::view`]'s conditions, every byte of the file's elements must be
    /// a byte of a field of `T`: a `T` with padding (an `#[npy(align)]` record), or one
    /// lacking some of the file's fields, would leave those bytes undefined when written
    /// whole. Write such types with [`NpyMapMut::write`]. Validation of `bool` and checked
    /// data costs time proportional to the data, on every call.
    ///
    /// # Errors
    /// As [`NpyMap::view`]; [`ErrorKind::NotViewable`] also when `T` does not cover every
    /// byte of the file's elements.
    pub fn view_mut<T: NpyRecord>(&mut self) -> Result<&mut [T]> {
        self.view_range_mut(0..self.core.layout.grouped::<T>().len)
    }

    /// Elements `range` (in storage order) viewed in place as `&mut [T]`: for filling
    /// part of a file while other processes fill other parts. No byte outside `range` is
    /// borrowed.
    ///
    /// # Errors
    /// As [`NpyMapMut::view_mut`]; [`ErrorKind::Usage`] when `range` is out of bounds.
    ///
    /// # Examples
    /// ```
    /// use npy_core::mmap::NpyMapMut;
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("rows.npy");
    /// // SAFETY: nothing else modifies or truncates the file while it is mapped.
    /// let mut map = unsafe { NpyMapMut::create::<u16>(&path, vec![3, 2])? };
    /// map.view_range_mut::<u16>(2..4)?.copy_from_slice(&[7, 8]); // row 1
    /// map.flush_range(2..4)?;
    /// assert_eq!(map.view::<u16>()?, [0, 0, 7, 8, 0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view_range_mut<T: NpyRecord>(&mut self, range: Range<usize>) -> Result<&mut [T]> {
        let layout = self.core.layout.grouped::<T>();
        let bools = view_plan::<T>(&layout, self.core.data_ptr(), Access::Write)?;
        let bytes = self.bytes_mut(layout.byte_range(&range)?);
        validate::<T>(bytes, &bools, range.start)?;
        // SAFETY:
        // - `bytes` is data of this map, which passed `view_plan` for writing and
        //   `validate` for `T`.
        Ok(unsafe { cast_mut::<T>(bytes) })
    }

    /// A decoding view of the data, as [`NpyMap::decode`].
    ///
    /// # Errors
    /// As [`NpyMap::decode`].
    pub fn decode<T: NpyRecord>(&self) -> Result<Decoded<'_, T>> {
        self.core.decode()
    }

    /// Writes `values` as elements `start..start + values.len()`, converted to the file's
    /// dtype (fields matched by name, byte order swapped, NumPy's safe casts), touching
    /// only the bytes of the file's fields: for types [`NpyMapMut::view_mut`] refuses.
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] when `T` cannot be written as the file's dtype (a
    /// field of the file that `T` lacks, or a narrowing); [`ErrorKind::Usage`] when the
    /// elements are out of bounds.
    ///
    /// # Examples
    /// ```
    /// use npy_core::mmap::NpyMapMut;
    /// use npy_core::prelude::*;
    ///
    /// #[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
    /// #[npy(align)]
    /// #[repr(C)]
    /// struct Shot {
    ///     id: u16,
    ///     x: f64,
    /// }
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("shots.npy");
    /// // SAFETY: nothing else modifies or truncates the file while it is mapped.
    /// let mut map = unsafe { NpyMapMut::create::<Shot>(&path, vec![3])? };
    /// assert!(map.view_mut::<Shot>().is_err()); // 6 padding bytes per Shot
    /// map.write(1, &[Shot { id: 4, x: 2.5 }, Shot { id: 5, x: 3.5 }])?;
    /// assert_eq!(map.view::<Shot>()?[2], Shot { id: 5, x: 3.5 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write<T: NpyRecord>(&mut self, start: usize, values: &[T]) -> Result<()> {
        let layout = self.core.layout.grouped::<T>();
        let plan = Plan::new(&native_dtype_of::<T>()?, &layout.header.dtype)?;
        let end = start.checked_add(values.len()).ok_or_else(|| Error::usage("element range overflows"))?;
        let dst = self.bytes_mut(layout.byte_range(&(start..end))?);
        // SAFETY:
        // - `values` is a live slice of `values.len()` elements of `size_of::<T>()` bytes,
        //   the plan's source element size (`native_dtype` checked it is the itemsize of
        //   `T::native_dtype()`);
        // - the bytes of every field of `T::native_dtype()` are initialized: they hold
        //   fields of valid `T` values (padding, which may not be, is never read).
        unsafe { plan.run_raw(values.as_ptr().cast::<u8>(), values.len(), dst, start) }
    }

    /// Flushes written data to the file on disk (`msync`). Other processes mapping or
    /// reading the file see writes at once, flushed or not; flushing makes them durable.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] from the operating system.
    pub fn flush(&self) -> Result<()> {
        Ok(self.core.map.flush()?)
    }

    /// Flushes the data of elements `range` to disk (whole pages around them, perhaps
    /// more).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] when `range` is out of bounds; [`ErrorKind::Io`] from the
    /// operating system.
    pub fn flush_range(&self, range: Range<usize>) -> Result<()> {
        let bytes = self.core.layout.byte_range(&range)?;
        if bytes.is_empty() {
            return Ok(());
        }
        Ok(self.core.map.flush_range(self.core.layout.data_offset + bytes.start, bytes.len())?)
    }

    /// The data bytes `range` (relative to the start of the data), mutably: only a
    /// read-write map lends them.
    fn bytes_mut(&mut self, range: Range<usize>) -> &mut [u8] {
        let layout = &self.core.layout;
        assert!(range.start <= range.end && range.end <= layout.data_len, "byte range out of the data");
        let ptr = self.core.map.as_mut_ptr().wrapping_add(layout.data_offset + range.start);
        // SAFETY:
        // - the map is `data_offset + data_len` bytes long, readable and writable (the
        //   constructors of `NpyMapMut` map read-write), and `range` lies in its data part
        //   (asserted above), so the slice is inside the mapping;
        // - the bytes are initialized (as in `MapCore::bytes`);
        // - the slice borrows `self` exclusively, so no other slice of this map is alive,
        //   and the contract of the unsafe constructors excludes every other access to
        //   these bytes while it lives;
        // - `u8` has alignment 1 and no invalid values.
        unsafe { std::slice::from_raw_parts_mut(ptr, range.len()) }
    }
}

/// Elements of a mapped file converted to `T` on the fly, from [`NpyMap::decode`] or
/// [`NpyMapMut::decode`]: the conversion plan is compiled once; each call converts only the
/// elements asked for.
pub struct Decoded<'a, T> {
    data: &'a [u8],
    plan: Plan,
    len: usize,
    _marker: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Decoded<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoded")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("plan", &self.plan)
            .finish_non_exhaustive()
    }
}

impl<'a, T: NpyRecord> Decoded<'a, T> {
    fn new(data: &'a [u8], layout: &Located) -> Result<Self> {
        let plan = Plan::new(&layout.header.dtype, &native_dtype_of::<T>()?)?;
        Ok(Decoded { data, plan, len: layout.len, _marker: PhantomData })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index` (in storage order), converted.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] when `index` is out of bounds; [`ErrorKind::InvalidValue`] for
    /// an invalid value (`bool`, `char`, enum discriminant).
    pub fn get(&self, index: usize) -> Result<T> {
        if index >= self.len {
            return Err(Error::usage(format!("index {index} is out of bounds for {} elements", self.len)));
        }
        let mut one = self.rows(index..index + 1)?;
        one.pop().ok_or_else(|| Error::usage("no element decoded"))
    }

    /// Elements `range` (in storage order), converted.
    ///
    /// # Errors
    /// As [`Decoded::get`], for the first invalid element (its index counts from the
    /// start of the array).
    pub fn rows(&self, range: Range<usize>) -> Result<Vec<T>> {
        if range.start > range.end || range.end > self.len {
            return Err(Error::usage(format!(
                "element range {}..{} is out of bounds for {} elements",
                range.start, range.end, self.len
            )));
        }
        let size = self.plan.src_size();
        let src = &self.data[range.start * size..range.end * size];
        build_vec::<T>(range.len(), |dst| self.plan.run(src, dst, 0)).map_err(|e| from_index(e, range.start))
    }

    /// Iterates over the elements, converted, in storage order: decoded in chunks of
    /// about 64 KiB, so only one chunk is in memory. After an error, iteration stops.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { decoded: self, next: 0, chunk: Vec::new().into_iter(), error: None }
    }
}

impl<'d, T: NpyRecord> IntoIterator for &'d Decoded<'_, T> {
    type Item = Result<T>;
    type IntoIter = Iter<'d, T>;

    fn into_iter(self) -> Iter<'d, T> {
        self.iter()
    }
}

/// The elements of a [`Decoded`], converted, from [`Decoded::iter`].
pub struct Iter<'d, T> {
    decoded: &'d Decoded<'d, T>,
    /// The first element not decoded yet.
    next: usize,
    chunk: std::vec::IntoIter<T>,
    /// An error to yield once `chunk`, the elements before it, is exhausted.
    error: Option<Error>,
}

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter").field("next", &self.next).field("buffered", &self.chunk.len()).finish_non_exhaustive()
    }
}

impl<T: NpyRecord> Iterator for Iter<'_, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        if let Some(v) = self.chunk.next() {
            return Some(Ok(v));
        }
        if let Some(e) = self.error.take() {
            return Some(Err(e));
        }
        let len = self.decoded.len;
        if self.next >= len {
            return None;
        }
        let size = self.decoded.plan.src_size().max(self.decoded.plan.dst_size()).max(1);
        let end = self.next.saturating_add((ITER_CHUNK / size).max(1)).min(len);
        let start = std::mem::replace(&mut self.next, end);
        match self.decoded.rows(start..end) {
            Ok(v) => self.chunk = v.into_iter(),
            Err(e) => {
                // Yield the good elements before an invalid one, then the error, then stop.
                self.next = len;
                let bad = match e.kind() {
                    ErrorKind::InvalidValue { index, .. } if (start..end).contains(index) => *index,
                    _ => start,
                };
                match self.decoded.rows(start..bad) {
                    Ok(v) if !v.is_empty() => {
                        self.chunk = v.into_iter();
                        self.error = Some(e);
                    }
                    _ => return Some(Err(e)),
                }
            }
        }
        self.chunk.next().map(Ok)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let buffered = self.chunk.len();
        (buffered, Some(buffered + (self.decoded.len - self.next) + usize::from(self.error.is_some())))
    }
}

impl<T: NpyRecord> FusedIterator for Iter<'_, T> {}

/// What both maps hold, and what they do alike: the mapping (read-only for an
/// [`NpyMap`], read-write for an [`NpyMapMut`], which alone lends bytes mutably) and where
/// the header says the data lies.
#[derive(Debug)]
struct MapCore {
    map: MmapRaw,
    layout: Located,
}

impl MapCore {
    fn data_ptr(&self) -> *const u8 {
        self.map.as_ptr().wrapping_add(self.layout.data_offset)
    }

    /// The data bytes `range` (relative to the start of the data).
    fn bytes(&self, range: Range<usize>) -> &[u8] {
        assert!(range.start <= range.end && range.end <= self.layout.data_len, "byte range out of the data");
        // SAFETY:
        // - the map is `data_offset + data_len` bytes long and readable, and `range` lies
        //   in its data part (asserted above), so the slice is inside the mapping;
        // - mapped file bytes are initialized (holes in a sparse file read as zeros), and
        //   writes through an `NpyMapMut` keep them so (`view_range_mut` only lends types
        //   without padding; `write` writes field bytes);
        // - nothing changes them while the slice, which borrows the map shared, lives:
        //   writes through an `NpyMapMut` need `&mut` to it, and the contract of the
        //   unsafe constructors excludes everything else (see `NpyMap`'s safety section);
        // - `u8` has alignment 1 and no invalid values.
        unsafe { std::slice::from_raw_parts(self.data_ptr().wrapping_add(range.start), range.len()) }
    }

    /// Elements `range` viewed in place as `&[T]`: [`NpyMap::view_range`].
    fn view_range<T: NpyRecord>(&self, range: Range<usize>) -> Result<&[T]> {
        let layout = self.layout.grouped::<T>();
        let bools = view_plan::<T>(&layout, self.data_ptr(), Access::Read)?;
        let bytes = self.bytes(layout.byte_range(&range)?);
        validate::<T>(bytes, &bools, range.start)?;
        // SAFETY:
        // - `bytes` is data of this map, which passed `view_plan` and `validate` for `T`.
        Ok(unsafe { cast::<T>(bytes) })
    }

    /// A decoding view of the data: [`NpyMap::decode`].
    fn decode<T: NpyRecord>(&self) -> Result<Decoded<'_, T>> {
        Decoded::new(self.bytes(0..self.layout.data_len), &self.layout.grouped::<T>())
    }
}

/// What a header says and where the data lies in the file.
#[derive(Debug, Clone)]
struct Located {
    header: Header,
    version: Version,
    data_offset: usize,
    data_len: usize,
    /// Number of elements.
    len: usize,
}

impl Located {
    /// Reads the header at the start of `file` with the crate's reader, which checks the
    /// file holds all the data the header calls for.
    fn read(file: &File, options: &ReadOptions) -> Result<Located> {
        let file_len = file.metadata()?.len();
        let reader = options.open_sized(file, file_len)?;
        crate::dtype::refuse_objects(&reader.header().dtype)?;
        Ok(Located {
            header: reader.header().clone(),
            version: reader.version(),
            data_offset: reader.data_offset(),
            data_len: reader.data_len(),
            len: reader.len(),
        })
    }

    /// Reads the header of a `.npy` stored at `offset` of `file` and `len` bytes long
    /// (an npz member); offsets in the layout count from the start of the file.
    fn read_at(mut file: &File, offset: u64, len: u64, options: &ReadOptions) -> Result<Located> {
        file.seek(SeekFrom::Start(offset))?;
        let reader = options.open_sized(file.take(len), len)?;
        crate::dtype::refuse_objects(&reader.header().dtype)?;
        let start = usize::try_from(offset).map_err(|_| Error::npz(None, "member offset exceeds the address space"))?;
        Ok(Located {
            header: reader.header().clone(),
            version: reader.version(),
            data_offset: start + reader.data_offset(),
            data_len: reader.data_len(),
            len: reader.len(),
        })
    }

    /// This layout as an array of `T`s when `T` is an array type (`[U; N]`, nested) whose
    /// dims are the file's last ones ([`Header::grouped`], as reads regroup); itself
    /// otherwise.
    fn grouped<T: NpyRecord>(&self) -> Cow<'_, Located> {
        let Some(header) = self.header.grouped(&T::dtype()) else { return Cow::Borrowed(self) };
        // `grouped` refuses subarrays of no elements: `per` is not zero.
        let per: usize = self.header.shape[header.shape.len()..].iter().product();
        Cow::Owned(Located { len: self.len / per.max(1), header, ..self.clone() })
    }

    /// Bytes to map: header and data.
    fn map_len(&self) -> Result<usize> {
        self.data_offset
            .checked_add(self.data_len)
            .ok_or_else(|| Error::shape(&self.header.shape, "header and data exceed the address space"))
    }

    /// The data bytes of elements `range`.
    fn byte_range(&self, range: &Range<usize>) -> Result<Range<usize>> {
        if range.start > range.end || range.end > self.len {
            return Err(Error::usage(format!(
                "element range {}..{} is out of bounds for {} elements",
                range.start, range.end, self.len
            )));
        }
        let size = self.header.dtype.itemsize();
        Ok(range.start * size..range.end * size)
    }
}

/// `e` with an element index counted from `first`.
fn from_index(e: Error, first: usize) -> Error {
    match e.into_kind() {
        ErrorKind::InvalidValue { index, reason } => ErrorKind::InvalidValue { index: first + index, reason }.into(),
        other => other.into(),
    }
}
