//! Opening one file (or one row range of it) of a scan: [`NpyOpener`].

use std::sync::Arc;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::ScalarValue;
use datafusion::datasource::listing::{FileRange, PartitionedFile};
use datafusion::datasource::physical_plan::{FileOpenFuture, FileOpener};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};
use futures::StreamExt;
use npy_arrow::{Layout, Part};
use npy_core::ErrorKind;
use npy_store::filter::{Filter, KeepError, Kept};
use npy_store::table::MemberReads;
use object_store::ObjectStore;

use crate::error::npy_error;
use crate::kind::Kind;
use crate::options::NpyReadOptions;
use crate::parts::{conform, conform_columns};
use crate::schema::{difference, member_schema};

/// What a scan partition counts: rows given out, those a filter kept of the rows decoded
/// (the limit and top-k tests read it).
#[derive(Debug, Clone)]
pub(crate) struct ScanMetrics {
    rows: Count,
}

impl ScanMetrics {
    pub(crate) fn new(metrics: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        ScanMetrics { rows: MetricBuilder::new(metrics).counter("npy_rows_decoded", partition) }
    }
}

/// Opens the files of one scan partition: reads each header, checks it against the table,
/// and streams the rows of the file (or of its range) as batches of the projected columns.
#[derive(Clone)]
pub(crate) struct NpyOpener {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) kind: Kind,
    pub(crate) options: NpyReadOptions,
    pub(crate) batch_rows: usize,
    /// The table's file columns (all of them).
    pub(crate) file_schema: SchemaRef,
    /// The columns decoded: file columns, or parts of them (`.npy` files only).
    pub(crate) decoded: Vec<Part>,
    /// The schema of every batch: a field for each of `decoded`.
    pub(crate) projected: SchemaRef,
    /// The filter the scan evaluates (`.npy` files only), over the fields of a schema whose
    /// each field is the part of the same index ([`crate::parts::ScanParts`]).
    pub(crate) predicate: Option<(Arc<dyn PhysicalExpr>, SchemaRef, Vec<Part>)>,
    /// At most this many rows are needed from each file (of those the filter keeps).
    pub(crate) limit: Option<usize>,
    pub(crate) metrics: ScanMetrics,
}

impl FileOpener for NpyOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        if self.kind == Kind::Npz {
            return self.open_npz(file);
        }
        let NpyOpener {
            store, options, batch_rows, file_schema, decoded, projected, predicate, limit, metrics, ..
        } = self.clone();
        let convert = options.convert_options(batch_rows);
        Ok(Box::pin(async move {
            let location = file.object_meta.location.clone();
            let name = location.to_string();
            let object = npy_store::fetch_header(&store, &location).await.map_err(npy_error)?;
            let layout = Layout::new_with(&object.header, None, &convert).map_err(|e| npy_error(e.reading(&name)))?;
            still_matches(&file_schema, &layout.schema(), &name)?;
            let filter = predicate.map(|(p, schema, parts)| filter(p, &schema, &parts)).transpose()?;
            let file_layout = layout;
            let layout = file_layout.select(&decoded).map_err(|e| npy_error(e.reading(&name)))?;
            let (first, mut end) =
                row_range(file.range.as_ref(), object.data_offset, layout.row_bytes(), layout.rows());
            // A limit counts the rows the filter keeps: with one, the stream is cut above.
            if let (Some(limit), None) = (limit, &filter) {
                end = end.min(first.saturating_add(limit));
            }
            let (layout, range) = (Arc::new(layout), first..end);
            let mut scan = npy_store::RowScan::new(object.source.clone(), object.data_offset, layout);
            scan.rows(range).batch_rows(batch_rows);
            if let Some(contract) = options.map_local_files {
                scan.map(contract);
            }
            if let Some(filter) = filter {
                scan.filter(filter, &file_layout).map_err(npy_error)?;
            }
            let batches = scan.batches();
            let batches = batches.map(move |batch| {
                let batch = batch.map_err(npy_error)?;
                metrics.rows.add(batch.num_rows());
                conform(batch, &projected)
            });
            Ok(batches.boxed())
        }))
    }
}

/// The scan's filter: `predicate`, over `schema` (whose field `i` is part `parts[i]` of the
/// file's columns: a `.npy` file's, or an archive's table's, each a member that is not a
/// record), judged on the parts it reads. A dynamic filter (a top-k's bound, which
/// tightens as the query runs) is read afresh for each block.
fn filter(predicate: Arc<dyn PhysicalExpr>, schema: &SchemaRef, parts: &[Part]) -> Result<Filter> {
    let (columns, predicate) = renumbered(predicate)?;
    let read: Vec<Part> = columns.iter().map(|&i| parts[i].clone()).collect();
    let judged_schema = Arc::new(schema.project(&columns)?);
    Ok(Filter::new(read, move |batch| verdict(&predicate, &conform(batch.clone(), &judged_schema)?)))
}

/// The columns `predicate` reads (sorted), and `predicate` with each renumbered to its
/// index among them: over the batch of those columns a filter judges.
fn renumbered(predicate: Arc<dyn PhysicalExpr>) -> Result<(Vec<usize>, Arc<dyn PhysicalExpr>)> {
    let mut columns: Vec<usize> = collect_columns(&predicate).iter().map(|c| c.index()).collect();
    columns.sort_unstable();
    columns.dedup();
    let predicate = predicate
        .transform(|e| match e.downcast_ref::<Column>() {
            Some(c) => {
                let at = columns.binary_search(&c.index()).map_err(|_| internal("a filter column was not read"))?;
                Ok(Transformed::yes(Arc::new(Column::new(c.name(), at)) as Arc<dyn PhysicalExpr>))
            }
            None => Ok(Transformed::no(e)),
        })
        .data()?;
    Ok((columns, predicate))
}

/// The rows of `batch` that `predicate` keeps.
fn verdict(predicate: &Arc<dyn PhysicalExpr>, batch: &RecordBatch) -> std::result::Result<Kept, KeepError> {
    match predicate.evaluate(batch)? {
        ColumnarValue::Scalar(ScalarValue::Boolean(Some(true))) => Ok(Kept::All),
        ColumnarValue::Scalar(ScalarValue::Boolean(_) | ScalarValue::Null) => Ok(Kept::None),
        ColumnarValue::Scalar(other) => Err(format!("a filter gave {other}, not a boolean").into()),
        ColumnarValue::Array(values) => match values.as_boolean_opt() {
            Some(values) => Ok(Kept::of(values)),
            None => Err(format!("a filter gave values of type {}, not booleans", values.data_type()).into()),
        },
    }
}

fn internal(reason: &str) -> DataFusionError {
    DataFusionError::Internal(reason.to_string())
}

impl NpyOpener {
    /// An archive: its members as columns ([`npy_store::RemoteNpz::table_batches`]), only
    /// the members whose columns are projected read, side by side. Archives are not split
    /// into ranges (a range not at the archive's start scans nothing).
    fn open_npz(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let NpyOpener {
            store, options, batch_rows, file_schema, decoded, projected, predicate, limit, metrics, ..
        } = self.clone();
        let convert = options.convert_options(batch_rows);
        Ok(Box::pin(async move {
            let location = file.object_meta.location.clone();
            let name = location.to_string();
            let npz = npy_store::RemoteNpz::from_store(store, &location).await.map_err(npy_error)?;
            let (schema, _) = npz.table_schema_with(None, &convert).await.map_err(npy_error)?;
            still_matches(&file_schema, &member_schema(&schema), &name)?;
            let reads = MemberReads::new(&file_schema, &decoded);
            let filter = predicate.map(|(p, schema, parts)| filter(p, &schema, &parts)).transpose()?;
            let whole = file.range.as_ref().is_none_or(|r| r.start <= 0);
            // A limit counts the rows the filter keeps: with one, the stream is cut above.
            let left = match (whole, &filter) {
                (false, _) => 0,
                (true, Some(_)) => usize::MAX,
                (true, None) => limit.unwrap_or(usize::MAX),
            };
            let request: Vec<(&str, Option<&[Part]>)> =
                reads.members.iter().map(|(m, parts)| (m.as_str(), parts.as_deref())).collect();
            let stream =
                npz.checked_part_batches_with(&request, filter.as_ref(), 0..left, &convert).await.map_err(npy_error)?;
            let batches = stream.into_inner().map(move |batch| {
                let batch = batch.map_err(npy_error)?;
                let columns = (reads.at.iter()).map(|&i| batch.columns().get(i).cloned()).collect::<Option<Vec<_>>>();
                let columns = columns.ok_or_else(|| internal("a member column is missing"))?;
                conform_columns(&columns, batch.num_rows(), &projected)
            });
            Ok(batches
                .inspect(move |batch| {
                    if let Ok(batch) = batch {
                        metrics.rows.add(batch.num_rows());
                    }
                })
                .boxed())
        }))
    }
}

/// Fails unless file `name`'s schema now is still its table's `file_schema`.
fn still_matches(file_schema: &SchemaRef, now: &SchemaRef, name: &str) -> Result<()> {
    match difference(file_schema, now) {
        Some(how) => {
            let reason = format!("'{name}' no longer matches its table: it {how}");
            Err(npy_error(ErrorKind::Usage { reason }.into()))
        }
        None => Ok(()),
    }
}

/// The rows of a file scanned for a byte range `[start, end)` of it: those whose first
/// byte lies in the range, so that ranges covering a file scan each row once. No range:
/// all rows.
pub(crate) fn row_range(range: Option<&FileRange>, data_offset: u64, row_bytes: usize, rows: usize) -> (usize, usize) {
    let Some(range) = range else { return (0, rows) };
    if row_bytes == 0 {
        // No data: the range holding the file's first byte scans the rows.
        return if range.start <= 0 { (0, rows) } else { (0, 0) };
    }
    let row_at = |byte: i64| -> usize {
        let from_data = (byte.max(0) as u64).saturating_sub(data_offset);
        let row = from_data.div_ceil(row_bytes as u64);
        usize::try_from(row).unwrap_or(usize::MAX).min(rows)
    };
    let first = row_at(range.start);
    (first, row_at(range.end).max(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_each_row_once() {
        // 10 rows of 12 bytes after a 128-byte header: a file of 248 bytes.
        let (offset, row_bytes, rows, size) = (128, 12, 10, 248i64);
        for cuts in [vec![0, size], vec![0, 100, size], vec![0, 129, 140, 141, 200, size], vec![0, 130, 131, size]] {
            let mut covered = Vec::new();
            for pair in cuts.windows(2) {
                let (a, b) = row_range(Some(&FileRange { start: pair[0], end: pair[1] }), offset, row_bytes, rows);
                covered.extend(a..b);
            }
            assert_eq!(covered, (0..rows).collect::<Vec<_>>(), "{cuts:?}");
        }
        assert_eq!(row_range(None, offset, row_bytes, rows), (0, 10));
        assert_eq!(row_range(Some(&FileRange { start: 0, end: 64 }), offset, 0, 5), (0, 5));
        assert_eq!(row_range(Some(&FileRange { start: 64, end: 128 }), offset, 0, 5), (0, 0));
    }
}
