//! Filtered scans: a predicate judged on the few columns it reads, block by block, before
//! the scan's other columns are decoded, and those decoded only at the rows it kept
//! ([`Filter`], given to [`RowScan::filter`](crate::RowScan::filter), to an archive's scan
//! and to a [`TableScan`](crate::table::TableScan)).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_buffer::BooleanBuffer;
use npy_arrow::{Layout, Part};
use npy_core::{Error, ErrorKind, Result};

/// What a predicate kept of a block of rows.
#[derive(Debug, Clone)]
pub enum Kept {
    /// Every row.
    All,
    /// No row.
    None,
    /// The rows whose bit is set.
    Rows(BooleanBuffer),
}

impl Kept {
    /// The rows a predicate's values keep: those that are true (a null keeps no row, as in
    /// SQL's `WHERE`).
    pub fn of(values: &BooleanArray) -> Kept {
        let kept = match values.nulls() {
            Some(nulls) => values.values() & nulls.inner(),
            None => values.values().clone(),
        };
        Kept::Rows(kept)
    }
}

/// The error a predicate may fail with; the scan reports it as an error of the file.
pub type KeepError = Box<dyn std::error::Error + Send + Sync>;

/// The predicate of a [`Filter`]: given a block's rows of the parts it reads, it says
/// which rows to keep.
pub(crate) type Keep = dyn Fn(&RecordBatch) -> std::result::Result<Kept, KeepError> + Send + Sync;

/// A predicate over some parts of the columns of what a scan reads: of a `.npy` file's
/// layout ([`RowScan::filter`](crate::RowScan::filter)), of an archive's table, each part of
/// a member that is not a record
/// ([`RemoteNpz::checked_part_batches_with`](crate::RemoteNpz::checked_part_batches_with)),
/// or of a [`Table`](crate::table::Table)'s columns
/// ([`TableScan::filter`](crate::table::TableScan::filter)). Each block of rows has those
/// parts decoded first and judged, and the scan's other columns decoded only at the rows
/// kept; a block with no row kept gives no batch.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use arrow_array::{cast::AsArray, types::Int64Type, BooleanArray};
/// use futures::TryStreamExt;
/// use npy_arrow::Part;
/// use npy_core::prelude::*;
/// use npy_store::filter::{Filter, Kept};
/// use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
/// let location = Path::from("x.npy");
/// let file = (0..10i64).collect::<Vec<_>>().write_npy_to(Vec::new())?;
/// store.put(&location, file.into()).await?;
/// let object = npy_store::fetch_header(&store, &location).await?;
/// let layout = Arc::new(npy_arrow::Layout::new(&object.header, None)?);
/// // Keep the multiples of 3.
/// let thirds = Filter::new(vec![Part::whole(0)], |batch| {
///     let values = batch.column(0).as_primitive::<Int64Type>();
///     Ok(Kept::of(&values.iter().map(|v| v.map(|v| v % 3 == 0)).collect::<BooleanArray>()))
/// });
/// let mut scan = npy_store::RowScan::new(object.source, object.data_offset, layout.clone());
/// scan.batch_rows(4).filter(thirds, &layout)?;
/// let batches: Vec<_> = scan.batches().try_collect().await?;
/// let kept: Vec<i64> = batches.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect();
/// assert_eq!(kept, [0, 3, 6, 9]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Filter {
    parts: Vec<Part>,
    keep: Arc<Keep>,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter").field("parts", &self.parts).finish_non_exhaustive()
    }
}

impl Filter {
    /// A predicate over `parts` of the columns scanned; `keep` gets each block's rows of
    /// them, in that order, each named by [`Part::name`].
    pub fn new(
        parts: Vec<Part>,
        keep: impl Fn(&RecordBatch) -> std::result::Result<Kept, KeepError> + Send + Sync + 'static,
    ) -> Filter {
        Filter { parts, keep: Arc::new(keep) }
    }

    /// The parts it reads.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Its predicate.
    pub(crate) fn keep(&self) -> &Arc<Keep> {
        &self.keep
    }

    /// This filter judged on the parts of `layout` (a `.npy` file's, all its columns) it
    /// reads.
    pub(crate) fn over(&self, layout: &Layout) -> Result<Judged> {
        Ok(Judged { layout: Arc::new(layout.select(&self.parts)?), keep: Arc::clone(&self.keep) })
    }
}

/// A [`Filter`] over a `.npy` file's rows: the layout of the parts it reads, which decodes
/// them from the rows' bytes, and its predicate.
#[derive(Clone)]
pub(crate) struct Judged {
    layout: Arc<Layout>,
    keep: Arc<Keep>,
}

impl Judged {
    /// A predicate judged on the columns of `layout` (reading none: on no bytes).
    pub(crate) fn new(layout: Arc<Layout>, keep: Arc<Keep>) -> Judged {
        Judged { layout, keep }
    }

    /// This filter over the rows of a Fortran-order array put into C order, as a scan that
    /// reads them a block at a time decodes its blocks ([`Layout::c_ordered`]).
    pub(crate) fn c_ordered(self) -> Judged {
        Judged { layout: Arc::new(self.layout.c_ordered()), keep: self.keep }
    }
}

/// An Arrow error of cutting a block's columns (which have the block's length, so it does
/// not happen) as npy's.
fn arrow_error(e: arrow_schema::ArrowError) -> Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("arrow: {e}")).into()
}

/// Kept rows up to which a block's other columns are decoded row by row (one in `SPARSE`);
/// above, the whole block is decoded and cut. Measured on blocks of 8,192 of the SQL bench's
/// records: one in 4 is where the two cost the same for its 64-sample subarray; for plain
/// fields row by row is cheaper even at one in 2.
const SPARSE: usize = 4;

/// A filtered scan's decoding: its filter, and where each output column comes from.
pub(crate) struct Filtered {
    filter: Judged,
    /// The output columns the filter does not decode, decoded at the kept rows.
    rest: Layout,
    /// For each output column: whether it is the filter's, and its index there or in `rest`.
    from: Vec<(bool, usize)>,
}

impl Filtered {
    /// The decoding of `output`'s columns (a projection of the same file's layout as the
    /// filter's) under `filter`.
    pub(crate) fn new(output: &Layout, filter: Judged) -> Result<Filtered> {
        let judged = filter.layout.schema();
        let mut rest_columns = Vec::new();
        let mut from = Vec::new();
        for (i, field) in output.schema().fields().iter().enumerate() {
            match judged.index_of(field.name()) {
                Ok(j) => from.push((true, j)),
                Err(_) => {
                    from.push((false, rest_columns.len()));
                    rest_columns.push(i);
                }
            }
        }
        let rest = output.project(&rest_columns)?;
        Ok(Filtered { filter, rest, from })
    }

    /// Whether judging a block reads its rows' bytes (the predicate reads a column).
    pub(crate) fn reads_rows(&self) -> bool {
        !self.filter.layout.schema().fields().is_empty()
    }

    /// The kept rows of rows `first..first + n`, whose bytes `data` holds (as
    /// [`Layout::decode`] takes them), as a batch of `output`'s columns; `None` when no
    /// row is kept.
    pub(crate) fn decode(&self, output: &Layout, data: &[u8], first: usize, n: usize) -> Result<Option<RecordBatch>> {
        let judged = self.filter.layout.decode(data, first, n)?;
        let kept = (self.filter.keep)(&judged).map_err(|e| Error::from(ErrorKind::Usage { reason: e.to_string() }))?;
        let mask = match kept {
            Kept::Rows(mask) if mask.len() != n => {
                let reason = format!("a filter judged {} rows of a block of {n}", mask.len());
                return Err(ErrorKind::Usage { reason }.into());
            }
            // Every row kept is as `All`: no cut.
            Kept::Rows(mask) => Some((mask.count_set_bits(), mask)).filter(|&(rows, _)| rows < n),
            Kept::All => None,
            Kept::None => return Ok(None),
        };
        let (judged, rest, rows) = match mask {
            Some((0, _)) => return Ok(None),
            None => (judged.columns().to_vec(), self.rest.decode(data, first, n)?, n),
            Some((rows, mask)) => {
                let mask = BooleanArray::new(mask, None);
                let cut = |c: &ArrayRef| arrow_select::filter::filter(c, &mask).map_err(arrow_error);
                let judged = judged.columns().iter().map(cut).collect::<Result<Vec<_>>>()?;
                let rest = if rows * SPARSE <= n {
                    let at: Vec<usize> = mask.values().set_indices().collect();
                    self.rest.decode_at(data, first, &at)?
                } else {
                    let all = self.rest.decode(data, first, n)?;
                    arrow_select::filter::filter_record_batch(&all, &mask).map_err(arrow_error)?
                };
                (judged, rest, rows)
            }
        };
        let columns: Vec<ArrayRef> =
            (self.from.iter()).map(|&(own, i)| if own { judged[i].clone() } else { rest.column(i).clone() }).collect();
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let batch = RecordBatch::try_new_with_options(output.schema(), columns, &options);
        Ok(Some(batch.map_err(arrow_error)?))
    }
}
