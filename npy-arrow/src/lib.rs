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
//! let reader = npy_arrow::BatchReader::new(npy_core::NpyReader::from_reader(&file[..])?, 2)?;
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

mod convert;
pub mod foreign;
#[cfg(feature = "formats")]
pub mod formats;
#[cfg(feature = "formats")]
pub mod guard;
pub mod npz;
#[cfg(feature = "formats")]
mod objects;
#[cfg(feature = "formats")]
mod parquet_write;
mod pos;
pub mod read;
pub mod schema;
#[cfg(feature = "formats")]
mod text_spool;
pub mod write;

pub use npz::{NpzBatchReader, NpzBatchWriter};
pub use read::{mapped_array, BatchReader};
pub use schema::{header_of, natural_dtype, schema_of, Layout};
pub use write::{BatchFileWriter, BatchWriter};

/// Settings of a conversion. Defaults: batches of [`read::DEFAULT_BATCH_ROWS`] rows (fewer
/// when those would be over [`read::DEFAULT_BATCH_BYTES`] of data), `M8[D]` as Date32, no
/// residue column.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    batch_rows: Option<usize>,
    days_as_int64: bool,
    residue: bool,
}

impl ConvertOptions {
    /// The defaults.
    pub fn new() -> Self {
        ConvertOptions::default()
    }

    /// Rows per batch (at least 1). Default: [`read::DEFAULT_BATCH_ROWS`], or as many rows
    /// as fit in [`read::DEFAULT_BATCH_BYTES`] of data when that is fewer (wide rows).
    pub fn batch_rows(mut self, rows: usize) -> Self {
        self.batch_rows = Some(rows);
        self
    }

    /// Whether `datetime64[D]` becomes Int64 (days, the unit in the field's `numpy.dtype`
    /// metadata) instead of Date32. Date32 holds ±2^31 days; NumPy's days go to ±2^63, so
    /// an array with days outside Date32 fails to convert without this. Default: `false`.
    pub fn days_as_int64(mut self, yes: bool) -> Self {
        self.days_as_int64 = yes;
        self
    }

    /// Whether batches get one more column, [`schema::RESIDUE`] (FixedSizeBinary), holding
    /// each row's bytes that the other columns may not carry: the padding of records, the
    /// bytes of `b1` values, and `U` elements that are not valid text. NumPy writes padding
    /// as zeros when it makes an array, but a file's padding may hold anything, a `b1` byte
    /// anything nonzero for True, and a `U` element lone surrogates or code units past
    /// U+10FFFF (which Utf8 cannot hold: the column then has U+FFFD for each, and the
    /// residue the element's bytes; valid text is zeros there). With this column the file
    /// comes back byte for byte whatever they hold. Added only to dtypes with padding, `b1`
    /// or `U` values. Default: `false` (the columns alone; the file comes back with zero
    /// padding and `b1` bytes 0 or 1, and `U` text that is not valid is an error naming
    /// the element).
    pub fn residue(mut self, yes: bool) -> Self {
        self.residue = yes;
        self
    }

    /// Rows per batch for rows of `row_bytes` bytes.
    fn rows(&self, row_bytes: usize) -> usize {
        let default = || read::DEFAULT_BATCH_ROWS.min(read::DEFAULT_BATCH_BYTES / row_bytes.max(1));
        self.batch_rows.unwrap_or_else(default).max(1)
    }
}
