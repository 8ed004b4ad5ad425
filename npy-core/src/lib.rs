//! Read and write NumPy `.npy` and `.npz` files bit-exactly, typed and fast.
//!
//! One dtype model ([`dtype`]) and one header codec ([`header`]) serve every path: typed
//! reads and writes of primitives and records ([`NpyRecord`], with
//! `#[derive(NpyRecord)]`), dynamic arrays of any dtype ([`DynArray`]), streams
//! ([`NpyReader`], [`NpyWriter`]), archives ([`npz`]) and memory maps ([`mmap`]). A file
//! is right when NumPy says so: headers are written byte for byte as `np.save` writes
//! them, and every dtype NumPy saves without pickle is understood — records with padding,
//! titles, offsets, subarrays and nesting included. Object arrays (`dtype=object`) of
//! plain Python values — `None`, `bool`, `int`, `float`, `complex`, `str`, `bytes` and
//! lists, tuples and dicts of them — are read and written too ([`object`]): their pickle
//! is decoded by a restricted decoder that never executes anything.
//!
//! # Which API do I use?
//! One call per need; the rest of the API is for the cases these do not cover.
//!
//! | need | the call |
//! |---|---|
//! | one array, saved or loaded | `data.write_npy(path)`, `Vec::<T>::read_npy(path)` ([`WriteNpy`], [`ReadNpy`]); N-d: [`Array<T>`] |
//! | many arrays in one file (`.npz`) | [`npz::Writer::create`]`(path)?.add(name, &data)`, [`npz::Reader::from_path`]`(path)?.read::<Vec<T>>(name)` |
//! | a file larger than memory | [`NpyReader::from_path`]`(path)?.chunks::<T>(n)` to stream it, [`NpyFileWriter::create`] to write it, [`mmap::NpyMap::from_path`] to map it |
//! | a few rows of a large file | `unsafe { NpyMap::from_path(path) }?.decode::<T>()?.rows(a..b)` ([`mmap::Decoded::rows`]; [`mmap::NpyMap::view_range`] borrows them when the file's layout is `T`'s memory) |
//! | a file of unknown dtype | [`DynArray`]`::read_npy(path)` |
//! | Arrow record batches | `npy_arrow::BatchReader::from_path(path)` (crate `npy-arrow`) |
//! | SQL over files and directories | `ctx.register_npy(name, path, &NpyReadOptions::new())` (crate `npy-datafusion`) |
//!
//! Options are plain settings types with `&mut self` setters ([`ReadOptions`],
//! [`WriteOptions`], [`npz::ReaderOptions`], [`stack::StackOptions`]); the call that takes
//! them is the same name plus `_with`, the options last, and the plain name uses the
//! defaults: [`NpyReader::from_path_with`], [`ReadNpy::read_npy_with`],
//! [`WriteNpy::write_npy_with`], [`npz::Writer::add_with`] (its options a
//! [`npz::Compression`]).
//!
//! Words, one each:
//! - *element*: one value of the array's dtype, a `T:`[`NpyRecord`] (`f64`, a derived
//!   struct, a fixed string, ...);
//! - *record*: an element whose dtype has fields (a struct with `#[derive(NpyRecord)]`);
//! - *row*: a slice along axis 0 (for 1-d arrays, an element), and an Arrow row;
//! - *chunk*: some elements of a stream, in storage order ([`NpyReader::chunks`]);
//! - *member*: an entry of an `.npz` archive; *batch*: an Arrow `RecordBatch`.
//!
//! # More
//! | task | API |
//! |---|---|
//! | N-d arrays, C or Fortran order | [`Array<T>`] |
//! | a struct as a record dtype | `#[derive(NpyRecord)]` ([`NpyRecord`]) |
//! | any dtype, raw bytes | [`DynArray`] |
//! | streams: unknown lengths, arrays one after another | [`NpyReader::from_reader`], [`NpyWriter`] |
//! | a struct's fields as named arrays | [`npz::Writer::add_columns`] |
//! | zero-copy views, many writers | [`mmap::NpyMap`], [`mmap::NpyMapMut`] |
//! | files that appear whole or not at all | [`atomic::AtomicFile`] (every path write uses it) |
//! | grow a file in place, crash-safe | [`append::Appender`] |
//! | Dask npy stacks: a directory of blocks, read and written | [`stack::Stack`], [`stack::write_stack`], [`stack::StackWriter`] |
//! | strings, datetimes, void | [`types`] |
//! | object arrays: str, None, mixed and nested values, without running pickles | [`object`], [`Object`] |
//! | any serde type by field name; files of unknown type as values | `npy_core::serde` (feature `serde`) |
//! | `ndarray` arrays and views: read, write, map, npz, convert | `npy_core::ndarray` (feature `ndarray`) |
//!
//! # Modules
//! | module | what it holds |
//! |---|---|
//! | [`dtype`] | the dtype model: `descr` text ↔ [`DType`] |
//! | [`header`] | the `.npy` header codec, byte for byte as NumPy |
//! | [`literal`] | the Python literal parser and writer under both |
//! | [`plan`] | conversions of whole arrays: one dtype's elements into another's, compiled once |
//! | [`scalar`] | the one scalar codec: one value of any fixed-size kind ↔ its bytes, NumPy's safe casts |
//! | [`types`] | string, void and datetime element types |
//! | [`object`] | Python values and the restricted pickle codec |
//! | [`npz`] | archives |
//! | [`mmap`] | memory maps (native targets) |
//! | [`atomic`] | files that appear whole or not at all |
//! | [`pending`] | directories that appear whole or not at all (native targets) |
//! | [`append`] | growing a file in place, crash-safe; concatenating files (native targets) |
//! | [`stack`] | Dask npy stacks (directories of blocks and their `info`) (native targets) |
//! | `serde` | the serde bridge (feature `serde`) |
//! | `ndarray` | the ndarray bridge (feature `ndarray`) |
//!
//! The crate root re-exports the everyday types: arrays, readers, writers, options and
//! errors. How the modules depend on each other, and where to look for what, is described
//! in the repository's `ARCHITECTURE.md`.
//!
//! # Examples
//! Neville saves a `Vec<f64>` in one line and loads it in NumPy with `np.load`:
//! ```
//! use npy_core::prelude::*;
//!
//! let path = std::env::temp_dir().join("speeds.npy");
//! let speeds = vec![1.5f64, 2.5, 4.0];
//! speeds.write_npy(&path)?; // np.load(path) in Python gives array([1.5, 2.5, 4. ])
//! assert_eq!(Vec::<f64>::read_npy(&path)?, speeds);
//! # Ok::<(), npy_core::Error>(())
//! ```
//!
//! Simon's struct is a NumPy record dtype (the default feature `derive`); files that
//! NumPy wrote with other layouts, byte orders or extra fields read into it by field name:
//! ```
//! use npy_core::prelude::*;
//!
//! #[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
//! struct Trace {
//!     trace_id: i32,
//!     t0: f64,
//!     samples: [f32; 4],
//! }
//!
//! let traces = vec![Trace { trace_id: 7, t0: 0.5, samples: [0.25; 4] }];
//! let file = traces.write_npy_to(Vec::new())?; // the bytes np.save writes
//! assert_eq!(Trace::dtype().descr(), "[('trace_id', '<i4'), ('t0', '<f8'), ('samples', '<f4', (4,))]");
//! assert_eq!(Vec::<Trace>::read_npy_from(&file[..])?, traces);
//! # Ok::<(), npy_core::Error>(())
//! ```
//!
//! Strings saved by NumPy as `np.array(['a', None], dtype=object)`:
//! ```
//! use npy_core::prelude::*;
//!
//! let file = [Some("a"), None].write_npy_to(Vec::new())?; // what np.save writes
//! assert_eq!(Vec::<Option<String>>::read_npy_from(&file[..])?, [Some("a".to_string()), None]);
//! let values = Vec::<Object>::read_npy_from(&file[..])?;
//! assert_eq!(values[1], Object::None);
//! # Ok::<(), npy_core::Error>(())
//! ```
//!
//! Any file, whatever its dtype, through the dynamic API:
//! ```
//! use npy_core::{DynArray, prelude::*};
//!
//! let mut file = Vec::new();
//! Array::from_shape_vec(vec![2, 2], vec![1i16, 2, 3, 4])?.write_npy_to(&mut file)?;
//! let arr = DynArray::read_npy_from(&file[..])?;
//! assert_eq!(arr.dtype().descr(), "'<i2'");
//! assert_eq!(arr.shape(), [2, 2]);
//! assert_eq!(arr.get::<i64>(&[1, 0])?, 3);
//! # Ok::<(), npy_core::Error>(())
//! ```
//!
//! # Speed
//! A read whose file layout is `T`'s memory is one bulk copy into a buffer backed by
//! transparent huge pages; other layouts convert field by field from cache-sized chunks
//! with a plan compiled once per (file dtype, `T`) pair. Data whose memory is its written
//! bytes is written in one `write` from that memory, as `np.save` writes an array. Padded
//! records (with their padding zeroed), converted or swapped records are made in 1 MiB
//! pieces whose writes start and end on 1 MiB offsets of the file (faster than writes
//! that end anywhere).
//!
//! On a machine with a second CPU, large jobs use one more thread, scoped to the call
//! (joined before it returns; none is left running). When either side fails — a full
//! disk, a broken pipe, a reader that errors — the first error is returned and the other
//! thread is stopped and joined; none waits on a peer that has gone:
//! - reads of 32 MiB or more of known length: a second thread faults the new buffer's
//!   pages in while this one fills it; conversions from a file ([`ReadNpy::read_npy`])
//!   are split in two halves, each read at its position and converted by its own thread;
//! - writes of 8 MiB or more of padded, converted or swapped records: pieces are made on
//!   a second thread while this one writes them; a piece that thread has not made in time
//!   (its CPU taken) is made by the writing thread, which never waits long for it;
//! - [`npz`]: stored members' CRC-32 is computed on a second thread while their data is
//!   written (4 MiB or more at a time); deflated members are compressed on worker threads ([`npz::Writer::threads`]);
//!   reads of several members (1 MiB or more) of an archive opened by path run on worker
//!   threads, one per CPU ([`npz::Reader::read_all`], [`npz::ReaderOptions::threads`]), and
//!   a deflated member of 4 MiB or more read alone is inflated on a second thread, a few
//!   pieces ahead of its CRC check and conversion.
//!
//! # Targets
//! On WebAssembly (`target_family = "wasm"`, as the JavaScript package `npy-js` builds it
//! for `wasm32-unknown-unknown`) npy-core is its codecs and its in-memory readers and
//! writers: headers, dtypes, scalars, plans, object arrays, and archives over any `Read +
//! Seek` or `Write + Seek`, deflate and Zstandard included. What needs an operating system
//! stays native: [`mmap`], [`append`], [`stack`] and [`pending`] are not built there,
//! calls that take a path fail with an I/O error naming it, and no thread is ever started
//! (every job runs on the caller's thread, as with one CPU).
#![warn(missing_docs)]
// On WebAssembly the native-only modules are not built, so helpers only they use are
// unused there; the native build, which builds everything, is the one that checks for
// dead code.
#![cfg_attr(target_family = "wasm", allow(dead_code, unused_imports))]

#[cfg(not(target_family = "wasm"))]
pub mod append;
mod array;
pub mod atomic;
mod buffer;
mod cpu;
pub mod dtype;
mod error;
mod file;
pub mod header;
mod io;
pub mod literal;
#[cfg(not(target_family = "wasm"))]
pub mod mmap;
#[cfg(feature = "ndarray")]
pub mod ndarray;
pub mod npz;
pub mod object;
mod options;
#[cfg(not(target_family = "wasm"))]
pub mod pending;
pub mod plan;
mod read;
mod record;
mod repr;
pub mod scalar;
#[cfg(feature = "serde")]
pub mod serde;
mod shape;
#[cfg(not(target_family = "wasm"))]
pub mod stack;
mod stream;
pub mod types;
mod write;

pub use array::{Array, DynArray, DynView};
pub use buffer::{fill_prefaulting, ZeroedBytes};
pub use dtype::DType;
pub use error::{Access, Error, ErrorKind, HeaderPart, Result, ShortHeader};
pub use file::{names_file, open_file};
pub use io::{ReadNpy, WriteNpy};
pub use object::Object;
pub use options::{Python2Strings, ReadOptions, WriteOptions};
pub use read::{Chunks, HeaderPrefix, Loader, NpyReader, Opened};
pub use record::NpyRecord;
pub use write::{NpyFileWriter, NpyWriter};

/// `#[derive(NpyRecord)]`: see the `npy-derive` crate. Enabled by the default feature
/// `derive`.
#[cfg(feature = "derive")]
pub use npy_derive::NpyRecord;

/// Not public API: what `#[derive(NpyRecord)]` expands to uses these.
#[doc(hidden)]
pub mod __private {
    pub use crate::dtype::{ByteOrder, DType, Field, Record};
    pub use crate::literal::Literal;
    pub use crate::record::NpyRecord;
    pub use core::mem::{offset_of, size_of};
    pub use core::ptr::addr_of_mut;
    pub use std::format;
    pub use std::string::String;
    pub use std::vec::Vec;

    /// A struct-level `#[npy(endian = ..)]`: sets the byte order of the field's scalars,
    /// including inside subarrays, but leaves nested records to their own attributes.
    pub fn container_byte_order(dtype: DType, order: ByteOrder) -> DType {
        match dtype {
            DType::Record(_) => dtype,
            DType::SubArray(ref a) if matches!(a.flat_base(), DType::Record(_)) => dtype,
            other => other.with_byte_order(order),
        }
    }

    /// A record from derived fields; the derive guarantees a valid layout.
    pub fn record(fields: Vec<Field>, itemsize: usize) -> DType {
        match Record::new(fields, itemsize) {
            Ok(r) => DType::Record(r),
            Err(e) => panic!("#[derive(NpyRecord)] produced an invalid layout (a bug in npy-derive): {e}"),
        }
    }

    /// A record describing a derived type's memory; the derive guarantees a valid layout.
    ///
    /// Rust may place a zero-sized field (`[T; 0]`) at the offset of a later-declared field,
    /// so fields at the same offset are put smallest first before the stable sort by offset.
    pub fn native_record(mut fields: Vec<Field>, itemsize: usize) -> DType {
        fields.sort_by_key(|f| (f.offset, f.dtype.itemsize()));
        match Record::native_layout(fields, itemsize) {
            Ok(r) => DType::Record(r),
            Err(e) => panic!("#[derive(NpyRecord)] produced an invalid memory layout (a bug in npy-derive): {e}"),
        }
    }
}

/// Everything needed for `Vec::<T>::read_npy(path)` and `data.write_npy(path)`.
pub mod prelude {
    pub use crate::array::{Array, DynArray};
    pub use crate::io::{ReadNpy, WriteNpy};
    pub use crate::object::Object;
    pub use crate::record::NpyRecord;
    #[cfg(feature = "derive")]
    pub use npy_derive::NpyRecord;
}

/// The workspace README's Rust examples, compiled and run as doc-tests (`tests/readme.rs`
/// checks that they, npy-core's README's and the examples above use nothing a user's
/// crate lacks).
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// npy-core's own README (the library's manual): its Rust examples, compiled and run as
/// doc-tests, checked by `tests/readme.rs` as the workspace README's are.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct CoreReadmeDoctests;
