//! [`ConvertOptions`]: how `.npy` data becomes record batches.

/// Rows per batch by default: 65,536.
pub const DEFAULT_BATCH_ROWS: usize = 1 << 16;
/// Bytes of data per batch at most by default (fewer rows when rows are wide): 64 MiB.
pub const DEFAULT_BATCH_BYTES: usize = 64 << 20;

/// Settings of a conversion. Defaults: batches of [`DEFAULT_BATCH_ROWS`] rows (fewer
/// when those would be over [`DEFAULT_BATCH_BYTES`] of data), `M8[D]` as Date32, no
/// residue column.
///
/// Set with `&mut self` setters, as npy-core's [`ReadOptions`](npy_core::ReadOptions), and
/// given by reference to the readers.
///
/// # Examples
/// ```
/// use npy_core::prelude::*;
///
/// let file = (0..10i64).collect::<Vec<_>>().write_npy_to(Vec::new())?;
/// let mut options = npy_arrow::ConvertOptions::new();
/// options.batch_rows(4).residue(true);
/// let reader = npy_arrow::BatchReader::from_npy_reader_with(npy_core::NpyReader::from_reader(&file[..])?, &options)?;
/// let rows: Vec<usize> = reader.map(|b| b.map(|b| b.num_rows())).collect::<Result<_, _>>()?;
/// assert_eq!(rows, [4, 4, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    pub(crate) batch_rows: Option<usize>,
    pub(crate) days_as_int64: bool,
    pub(crate) residue: bool,
}

impl ConvertOptions {
    /// The defaults.
    pub fn new() -> Self {
        ConvertOptions::default()
    }

    /// Rows per batch (at least 1). Default: [`DEFAULT_BATCH_ROWS`], or as many rows
    /// as fit in [`DEFAULT_BATCH_BYTES`] of data when that is fewer (wide rows).
    pub fn batch_rows(&mut self, rows: usize) -> &mut Self {
        self.batch_rows = Some(rows);
        self
    }

    /// Whether `datetime64[D]` becomes Int64 (days, the unit in the field's `numpy.dtype`
    /// metadata) instead of Date32. Date32 holds ±2^31 days; NumPy's days go to ±2^63, so
    /// an array with days outside Date32 fails to convert without this. Default: `false`.
    pub fn days_as_int64(&mut self, yes: bool) -> &mut Self {
        self.days_as_int64 = yes;
        self
    }

    /// Whether batches get one more column, [`RESIDUE`](crate::schema::RESIDUE) (FixedSizeBinary), holding
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
    pub fn residue(&mut self, yes: bool) -> &mut Self {
        self.residue = yes;
        self
    }

    /// Rows per batch for rows of `row_bytes` bytes: [`ConvertOptions::batch_rows`] when
    /// set, else the default (fewer rows when they are wide), at least 1. What the readers
    /// of this crate and npy-store's use.
    ///
    /// # Examples
    /// ```
    /// let mut options = npy_arrow::ConvertOptions::new();
    /// assert_eq!(options.batch_rows_for(8), npy_arrow::read::DEFAULT_BATCH_ROWS);
    /// assert_eq!(options.batch_rows_for(64 << 20), 1); // one row of 64 MiB
    /// assert_eq!(options.batch_rows(100).batch_rows_for(64 << 20), 100);
    /// ```
    pub fn batch_rows_for(&self, row_bytes: usize) -> usize {
        let default = || DEFAULT_BATCH_ROWS.min(DEFAULT_BATCH_BYTES / row_bytes.max(1));
        self.batch_rows.unwrap_or_else(default).max(1)
    }
}
