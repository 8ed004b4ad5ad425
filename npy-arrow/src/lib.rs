//! NumPy `.npy` arrays as Apache Arrow record batches, and back, on arrow-rs.
//!
//! - [`schema`]: the dtype model ↔ Arrow schemas ([`schema_of`], [`header_of`],
//!   [`Layout`]). A 1-D array of records has one column per top-level field (nested records
//!   are `Struct`s, subarray fields `FixedSizeList`s, padding and titles are not columns);
//!   an array of scalars has one column, `values`; an N-d array has rows along its first
//!   axis, each a `FixedSizeList` with the `arrow.fixed_shape_tensor` extension; a 0-d
//!   array is one row. The schema's metadata keeps the header, so that writing the batches
//!   back gives the original file, byte for byte.
//! - [`BatchReader`]: a [`RecordBatchReader`](arrow_array::RecordBatchReader) over a file
//!   of any size, in batches of a chosen row count, from an
//!   [`NpyReader`](npy_core::NpyReader), a [`DynArray`](npy_core::DynArray) or a map (with
//!   no copy for 1-D native primitive arrays: [`mapped_array`]).
//! - [`BatchWriter`], [`BatchFileWriter`]: batches in, a `.npy` out, streamed.
//! - [`foreign`]: the Arrow types other tools write (large and view strings, dictionaries,
//!   variable-length lists, Date64, times, decimals) and the NumPy dtype each becomes.
//! - [`npz`]: an `.npz` archive whose members share a length as one table, one column per
//!   member ([`NpzBatchReader`]), and batches back to such an archive ([`NpzBatchWriter`]),
//!   each member byte for byte.
//! - `formats` (feature `formats`): `.npy`, `.npz` members, Arrow IPC and Parquet files
//!   opened as batches, written from batches atomically, converted one into another.
//! - [`ConvertOptions`]: rows per batch, `datetime64[D]` as Int64 days, and the residue
//!   column that carries padding, `b1` bytes and invalid `U` text for files that must come back byte for
//!   byte whatever those hold.
//!
//! # Examples
//! ```
//! use npy_core::prelude::*;
//!
//! let file = vec![1.0f32, 2.0, 3.0].write_npy_to(Vec::new())?;
//! let reader = npy_arrow::BatchReader::from_npy_reader(npy_core::NpyReader::from_reader(&file[..])?)?;
//! let schema = arrow_array::RecordBatchReader::schema(&reader);
//! let mut writer = npy_arrow::BatchWriter::new(std::io::Cursor::new(Vec::new()), schema)?;
//! for batch in reader {
//!     writer.write(&batch?)?;
//! }
//! assert_eq!(writer.finish()?.into_inner(), file);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod foreign;
#[cfg(feature = "formats")]
pub mod formats;
#[cfg(feature = "formats")]
pub mod guard;
mod layout;
pub mod npz;
mod objects;
mod options;
#[cfg(feature = "formats")]
mod parquet_write;
mod pos;
pub mod read;
pub mod schema;
#[cfg(feature = "formats")]
mod text_spool;
pub mod write;

pub use layout::{Layout, Part, Step};
pub use npz::{NpzBatchReader, NpzBatchWriter, NpzTableOptions};
pub use objects::object_batches_with;
pub use options::ConvertOptions;
pub use read::{mapped_array, BatchReader};
pub use schema::{header_of, natural_dtype, schema_of};
pub use write::{BatchFileWriter, BatchWriter};
