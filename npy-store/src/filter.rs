//! Filtered scans: a predicate judged on the few columns it reads, block by block, before
//! the scan's other columns are decoded, and those decoded only at the rows it kept
//! ([`RowFilter`], given to [`RowScan::filter`](crate::RowScan::filter)).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_buffer::BooleanBuffer;
use npy_arrow::Layout;
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

/// The predicate of every filter ([`RowFilter`], [`crate::NpzFilter`],
/// [`crate::table::TableFilter`]): given a block's rows of the columns or parts it reads,
/// it says which rows to keep.
pub(crate) type Keep = dyn Fn(&RecordBatch) -> std::result::Result<Kept, KeepError> + Send + Sync;

/// A predicate over some columns of a scan's rows ([`RowScan::filter`](crate::RowScan::filter)):
/// each block of rows has those columns decoded first and judged, and the scan's other
/// columns are decoded only at the rows kept. A block with no row kept gives no batch.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use arrow_array::{cast::AsArray, types::Int64Type, BooleanArray};
/// use futures::TryStreamExt;
/// use npy_core::prelude::*;
/// use npy_store::filter::{Kept, RowFilter};
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
/// let odd = RowFilter::new(layout.clone(), |batch| {
///     let values = batch.column(0).as_primitive::<Int64Type>();
///     Ok(Kept::of(&values.iter().map(|v| v.map(|v| v % 3 == 0)).collect::<BooleanArray>()))
/// });
/// let mut scan = npy_store::RowScan::new(object.source, object.data_offset, layout);
/// scan.batch_rows(4).filter(odd);
/// let batches: Vec<_> = scan.batches().try_collect().await?;
/// let kept: Vec<i64> = batches.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect();
/// assert_eq!(kept, [0, 3, 6, 9]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RowFilter {
    layout: Arc<Layout>,
    keep: Arc<Keep>,
}

impl std::fmt::Debug for RowFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let schema = self.layout.schema();
        let names: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
        f.debug_struct("RowFilter").field("columns", &names).finish_non_exhaustive()
    }
}

impl RowFilter {
    /// A predicate over the columns of `layout` (the file's layout projected to the columns
    /// the predicate reads, [`Layout::project`]); `keep` gets each block's rows of them.
    pub fn new(
        layout: Arc<Layout>,
        keep: impl Fn(&RecordBatch) -> std::result::Result<Kept, KeepError> + Send + Sync + 'static,
    ) -> RowFilter {
        RowFilter { layout, keep: Arc::new(keep) }
    }

    /// This filter over the rows of a Fortran-order array put into C order, as a scan that
    /// reads them a block at a time decodes its blocks ([`Layout::c_ordered`]).
    pub(crate) fn c_ordered(self) -> RowFilter {
        RowFilter { layout: Arc::new(self.layout.c_ordered()), keep: self.keep }
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
    filter: RowFilter,
    /// The output columns the filter does not decode, decoded at the kept rows.
    rest: Layout,
    /// For each output column: whether it is the filter's, and its index there or in `rest`.
    from: Vec<(bool, usize)>,
}

impl Filtered {
    /// The decoding of `output`'s columns (a projection of the same file's layout as the
    /// filter's) under `filter`.
    pub(crate) fn new(output: &Layout, filter: RowFilter) -> Result<Filtered> {
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
