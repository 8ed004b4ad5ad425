//! Scans of a [`Table`]: which parts, rows and filter ([`TableScan`]), each file's batches
//! (an async stream), and all of them in row order from threads of their own
//! ([`TableBatchReader`]).

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use futures::stream::{self, BoxStream, StreamExt};
use npy_arrow::Part;
use npy_core::{Error, ErrorKind, Result};

use super::{files, parts_schema, Contents, MemberReads, Table, TableFile};
use crate::filter::{Filter, Keep, Kept};
use crate::rows::RowScan;
use crate::stream::BatchStream;

/// A scan of a [`Table`]: the parts of its columns given (default: every column whole),
/// its rows (default: all, numbered across the files in order), rows per batch and a
/// filter. Cheap to clone; every [`TableScan::batches`] is a fresh, independent stream.
#[derive(Clone, Debug)]
pub struct TableScan {
    table: Table,
    parts: Vec<Part>,
    rows: Range<usize>,
    batch_rows: Option<usize>,
    filter: Option<Filter>,
}

impl TableScan {
    pub(super) fn new(table: Table) -> TableScan {
        let parts = (0..table.inner.schema.fields().len()).map(Part::whole).collect();
        let rows = 0..table.rows();
        TableScan { table, parts, rows, batch_rows: None, filter: None }
    }

    /// The table scanned.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Decodes `parts` of the table's columns as the scan's columns, in that order.
    pub fn parts(&mut self, parts: Vec<Part>) -> &mut Self {
        self.parts = parts;
        self
    }

    /// Decodes the columns or parts of columns `names` ([`Table::part`]'s), in that order.
    ///
    /// # Errors
    /// As [`Table::part`].
    pub fn columns(&mut self, names: &[&str]) -> Result<&mut Self> {
        self.parts = names.iter().map(|n| self.table.part(n)).collect::<Result<_>>()?;
        Ok(self)
    }

    /// Rows `rows` of the table's (numbered across its files), clamped to its end.
    pub fn rows(&mut self, rows: Range<usize>) -> &mut Self {
        let total = self.table.rows();
        self.rows = rows.start.min(total)..rows.end.clamp(rows.start.min(total), total);
        self
    }

    /// Rows per batch (at least 1). Default: as npy-arrow sizes them for each file.
    pub fn batch_rows(&mut self, rows: usize) -> &mut Self {
        self.batch_rows = Some(rows.max(1));
        self
    }

    /// Keeps only the rows `filter` keeps, its parts of the table's columns: in `.npy`
    /// files and in archives they are decoded first and the others only at the kept rows
    /// (a filter over a record member's columns judges rows after they are decoded).
    pub fn filter(&mut self, filter: Filter) -> &mut Self {
        self.filter = Some(filter);
        self
    }

    /// The parts decoded.
    pub fn selected(&self) -> &[Part] {
        &self.parts
    }

    /// The rows scanned (before any filter).
    pub fn row_range(&self) -> Range<usize> {
        self.rows.clone()
    }

    /// The schema of the batches: a field for each part.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for a part the table's columns have not.
    pub fn schema(&self) -> Result<SchemaRef> {
        parts_schema(&self.table.inner.schema, &self.parts).map_err(|e| e.reading(self.table.title()))
    }

    /// The batches, in row order, made by threads of their own a few batches ahead of the
    /// consumer: the rows cut into pieces (a file's rows, `.npy` files' split into runs of
    /// whole batches of about 16 MiB), up to as many pieces made at once as there are cores
    /// (at most 8), each on its own thread. A piece starts only when the consumer asks for
    /// rows, and dropping the stream ends its threads. Each batch is given out only once its
    /// local file is seen unchanged since the table opened it; the stream ends at its first
    /// error, naming the file.
    ///
    /// # Errors
    /// As [`TableScan::schema`]; the others are items of the stream.
    pub fn batches(&self) -> Result<TableBatchReader> {
        let schema = self.schema()?;
        let pieces = self.pieces().into_iter();
        Ok(TableBatchReader {
            schema,
            scan: Arc::new(self.clone()),
            pieces,
            running: VecDeque::new(),
            threads: threads(),
        })
    }

    /// File `file`'s rows `rows` (numbered in the file) of the scan, as an async stream of
    /// batches of [`TableScan::schema`].
    ///
    /// # Errors
    /// As [`TableScan::schema`]; reading errors, naming the file, as the stream's items.
    pub async fn file_batches(&self, file: usize, rows: Range<usize>) -> Result<BatchStream> {
        let schema = self.schema()?;
        let Some(part) = self.table.inner.files.get(file) else {
            let reason = format!("no file {file} in a table of {} files", self.table.inner.files.len());
            return Err(Error::from(ErrorKind::Usage { reason }));
        };
        let stream = self.read(part, rows, &schema).await.map_err(|e| files::named(e, &part.name))?;
        let (table, name) = (self.table.clone(), part.name.clone());
        let checked = stream.map(move |batch| {
            let batch = batch.and_then(|b| table.inner.files[file].unchanged().map(|()| b));
            batch.map_err(|e| files::named(e, &name))
        });
        Ok(BatchStream::new(schema, checked.boxed()))
    }

    /// The batches of rows `rows` of file `part`, of `schema`.
    async fn read(
        &self,
        part: &TableFile,
        rows: Range<usize>,
        schema: &SchemaRef,
    ) -> Result<BoxStream<'static, Result<RecordBatch>>> {
        let table = &self.table.inner;
        let filter = self.filter.as_ref();
        let stream = match &part.kind {
            Contents::Npy { data_offset, layout } => {
                let selected = Arc::new(layout.select(&self.parts)?);
                let mut scan = RowScan::new(part.source.clone(), *data_offset, selected);
                scan.rows(rows);
                if let Some(rows) = self.batch_rows {
                    scan.batch_rows(rows);
                }
                if let Some(contract) = table.map {
                    scan.map(contract);
                }
                if let Some(filter) = filter {
                    scan.filter(filter.clone(), layout)?;
                }
                scan.batches().into_inner()
            }
            Contents::Objects { column } => {
                let batch_rows = self.batch_rows.unwrap_or(npy_arrow::read::DEFAULT_BATCH_ROWS);
                let batches = objects(column, &table.schema, &self.parts, filter, rows, batch_rows);
                stream::iter(batches).boxed()
            }
            Contents::Npz { npz } => {
                let mut convert = table.convert.clone();
                if let Some(rows) = self.batch_rows {
                    convert.batch_rows(rows);
                }
                let in_scan = filter.filter(|f| MemberReads::filterable(&table.schema, f.parts()));
                // A filter judged after decoding reads its parts with the scan's.
                let after = filter.filter(|_| in_scan.is_none());
                let mut decoded = self.parts.clone();
                decoded.extend(after.map_or(&[][..], |f| f.parts()).iter().cloned());
                let reads = MemberReads::new(&table.schema, &decoded);
                let request: Vec<(&str, Option<&[Part]>)> =
                    reads.members.iter().map(|(m, parts)| (m.as_str(), parts.as_deref())).collect();
                let stream = npz.checked_part_batches_with(&request, in_scan, rows, &convert).await?;
                let (n, after, out) = (self.parts.len(), after.cloned(), schema.clone());
                let filter_schema = after.as_ref().map(|f| parts_schema(&table.schema, f.parts())).transpose()?;
                let pick = move |batch: RecordBatch| -> Result<RecordBatch> {
                    let columns: Vec<ArrayRef> = (reads.at.iter())
                        .map(|&i| batch.columns().get(i).cloned())
                        .collect::<Option<_>>()
                        .ok_or_else(|| usage("a member column is missing"))?;
                    let rows = batch.num_rows();
                    let (columns, rows) = match (&after, &filter_schema) {
                        (Some(f), Some(fs)) => {
                            let judged = batch_of(fs.clone(), columns[n..].to_vec(), rows)?;
                            cut(columns[..n].to_vec(), rows, kept(f.keep().as_ref(), &judged)?)?
                        }
                        _ => (columns, rows),
                    };
                    batch_of(out.clone(), columns, rows)
                };
                stream.into_inner().map(move |batch| batch.and_then(&pick)).boxed()
            }
        };
        let schema = schema.clone();
        Ok(stream.map(move |b| b.and_then(|b| batch_of(schema.clone(), b.columns().to_vec(), b.num_rows()))).boxed())
    }

    /// The scan's rows as pieces, in row order: each file's rows of the window, `.npy`
    /// files' cut into runs of whole batches of at least [`PIECE_BYTES`] (archives and
    /// object arrays are one piece: members are checked to their ends).
    fn pieces(&self) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut first = 0usize;
        for (index, part) in self.table.inner.files.iter().enumerate() {
            let rows = self.rows.start.max(first) - first..self.rows.end.min(first + part.rows).max(first) - first;
            first += part.rows;
            if rows.is_empty() {
                continue;
            }
            let Contents::Npy { layout, .. } = &part.kind else {
                pieces.push(Piece { file: index, rows });
                continue;
            };
            let batch = self.batch_rows.unwrap_or_else(|| {
                let per_batch = npy_arrow::read::DEFAULT_BATCH_BYTES / layout.row_bytes().max(1);
                npy_arrow::read::DEFAULT_BATCH_ROWS.min(per_batch).max(1)
            });
            let per_piece = (PIECE_BYTES / layout.row_bytes().max(1)).div_ceil(batch).max(1).saturating_mul(batch);
            let mut at = rows.start;
            while at < rows.end {
                let end = at.saturating_add(per_piece).min(rows.end);
                pieces.push(Piece { file: index, rows: at..end });
                at = end;
            }
        }
        pieces
    }
}

/// An object array's column, rows `rows`, as batches of the parts `parts` (whole: an
/// object column has no parts) under `filter`.
fn objects(
    column: &ArrayRef,
    table: &SchemaRef,
    parts: &[Part],
    filter: Option<&Filter>,
    rows: Range<usize>,
    batch_rows: usize,
) -> Vec<Result<RecordBatch>> {
    let of_parts = |parts: &[Part], slice: &ArrayRef| -> Result<RecordBatch> {
        let schema = parts_schema(table, parts)?;
        let columns = vec![slice.clone(); parts.len()];
        batch_of(schema, columns, slice.len())
    };
    (rows.start..rows.end)
        .step_by(batch_rows.max(1))
        .map(|start| {
            let slice = column.slice(start, batch_rows.max(1).min(rows.end - start));
            let batch = of_parts(parts, &slice)?;
            match filter {
                None => Ok(batch),
                Some(f) => {
                    let kept = kept(f.keep().as_ref(), &of_parts(f.parts(), &slice)?)?;
                    let (columns, rows) = cut(batch.columns().to_vec(), batch.num_rows(), kept)?;
                    batch_of(batch.schema(), columns, rows)
                }
            }
        })
        .collect()
}

/// What `keep` keeps of `batch`, its failure an error of the scan.
fn kept(keep: &Keep, batch: &RecordBatch) -> Result<Kept> {
    keep(batch).map_err(|e| Error::from(std::io::Error::other(e)))
}

/// `columns` (of `rows` rows) at the rows `kept` keeps.
fn cut(columns: Vec<ArrayRef>, rows: usize, kept: Kept) -> Result<(Vec<ArrayRef>, usize)> {
    let mask = match kept {
        Kept::All => return Ok((columns, rows)),
        Kept::None => arrow_array::BooleanArray::from(vec![false; rows]),
        Kept::Rows(bits) => arrow_array::BooleanArray::new(bits, None),
    };
    if mask.len() != rows {
        return Err(usage(&format!("the filter gave {} values for {rows} rows", mask.len())));
    }
    let kept = mask.true_count();
    let columns = (columns.iter())
        .map(|c| arrow_select::filter::filter(c, &mask))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::from(std::io::Error::other(e)))?;
    Ok((columns, kept))
}

/// A batch of `schema` of `rows` rows of `columns`.
fn batch_of(schema: SchemaRef, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(schema, columns, &options).map_err(|e| Error::from(std::io::Error::other(e)))
}

fn usage(reason: &str) -> Error {
    Error::from(ErrorKind::Usage { reason: reason.to_string() })
}

/// Batches a piece makes ahead of its consumer.
const AHEAD: usize = 2;

/// Bytes of rows per piece of a stream, at least (a piece is whole batches).
const PIECE_BYTES: usize = 16 << 20;

/// Pieces made at once: the machine's cores, at most 8.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}

/// Rows `rows` of file `file` of a table.
struct Piece {
    file: usize,
    rows: Range<usize>,
}

/// A piece being made on its thread: its batches as they come, and whether the thread
/// said all it had to say (its last batch, or its error) before its channel closed.
struct Running {
    batches: Receiver<Result<RecordBatch>>,
    ended: Arc<AtomicBool>,
    piece: Piece,
}

/// A scan's batches in row order ([`TableScan::batches`]): a blocking iterator and Arrow
/// `RecordBatchReader`.
pub struct TableBatchReader {
    schema: SchemaRef,
    scan: Arc<TableScan>,
    pieces: std::vec::IntoIter<Piece>,
    running: VecDeque<Running>,
    /// Pieces made at once ([`threads`], asked once: it reads the cgroup's quota).
    threads: usize,
}

impl std::fmt::Debug for TableBatchReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBatchReader").field("schema", &self.schema).finish_non_exhaustive()
    }
}

impl TableBatchReader {
    /// The next batch, waiting for it; `None` at the end (and after an error).
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            while self.running.len() < self.threads {
                let Some(piece) = self.pieces.next() else { break };
                self.running.push_back(self.spawn(piece));
            }
            let running = self.running.front()?;
            match running.batches.recv() {
                Ok(Ok(batch)) => return Some(Ok(batch)),
                Ok(Err(e)) => return Some(Err(self.stop(e))),
                Err(_) if running.ended.load(Ordering::Acquire) => {
                    self.running.pop_front();
                }
                Err(_) => {
                    // The thread went without a word (a panic outside its guard): its
                    // rows are not all here, so the scan fails rather than lose them.
                    let Piece { file, ref rows } = running.piece;
                    let name = self.scan.table.inner.files[file].name.clone();
                    let reason =
                        format!("the thread reading rows {}..{} stopped before it finished", rows.start, rows.end);
                    return Some(Err(self.stop(files::named(usage(&reason), &name))));
                }
            }
        }
    }

    /// Ends the stream at its first error, `e`: the other pieces' threads end as their
    /// channels close.
    fn stop(&mut self, e: Error) -> Error {
        self.running.clear();
        self.pieces = Vec::new().into_iter();
        e
    }

    /// A thread making `piece`'s batches into a new channel.
    fn spawn(&self, piece: Piece) -> Running {
        let (tx, rx) = sync_channel(AHEAD);
        let ended = Arc::new(AtomicBool::new(false));
        let scan = self.scan.clone();
        let spawned = std::thread::Builder::new().name("npy-scan".into()).spawn({
            let (tx, ended) = (tx.clone(), Arc::clone(&ended));
            let (file, rows) = (piece.file, piece.rows.clone());
            move || {
                #[cfg(test)]
                inject::escape(&scan.table.inner.files[file].name);
                produce(&scan, file, rows, &tx);
                ended.store(true, Ordering::Release);
            }
        });
        if let Err(e) = spawned {
            ended.store(true, Ordering::Release);
            let _ = tx.send(Err(Error::from(e).reading(self.scan.table.title())));
        }
        Running { batches: rx, ended, piece }
    }
}

/// Makes the batches of file `file`'s rows `rows` into `tx` until done, failed (the error
/// sent), or the consumer has gone. A panic of a dependency becomes an error of the scan.
fn produce(scan: &TableScan, file: usize, rows: Range<usize>, tx: &SyncSender<Result<RecordBatch>>) {
    let name = scan.table.inner.files[file].name.clone();
    let run = || -> Result<()> {
        #[cfg(test)]
        inject::panic(&name);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(async {
            let mut stream = scan.file_batches(file, rows).await?;
            while let Some(batch) = stream.next().await {
                let failed = batch.is_err();
                if tx.send(batch).is_err() || failed {
                    break;
                }
            }
            Ok(())
        })
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|panic| {
        let what =
            panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
        let reason = format!("the scan failed: {}", what.unwrap_or_else(|| "a panic".into()));
        Err(Error::from(ErrorKind::Usage { reason }).reading(&name))
    });
    if let Err(e) = outcome {
        let _ = tx.send(Err(files::named(e, &name)));
    }
}

/// Test builds only: panics where a piece's thread can fail, in files whose name says so,
/// so tests show the caller gets an error, not a hang or fewer rows.
#[cfg(test)]
mod inject {
    /// Inside the piece's guard (a dependency's panic).
    pub(super) fn panic(name: &str) {
        assert!(!name.contains("inject-panic"), "injected into the piece of {name}");
    }

    /// Outside it, before the piece is read (a thread that dies without a word).
    pub(super) fn escape(name: &str) {
        assert!(!name.contains("inject-escape"), "injected before the piece of {name} is read");
    }
}

impl Iterator for TableBatchReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map(|b| b.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for TableBatchReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use npy_core::prelude::*;

    use crate::{Table, TableOptions};

    /// Every batch of a scan of the `.npy` files `names` (each of 1,000 `f8` rows) in a
    /// new directory, or the first error, within a minute.
    fn scan(names: &[&str]) -> std::result::Result<usize, String> {
        let dir = tempfile::tempdir().unwrap();
        for name in names {
            (0..1000).map(f64::from).collect::<Vec<_>>().write_npy(dir.path().join(name)).unwrap();
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let table = runtime.block_on(Table::open_with(dir.path().to_str().unwrap(), &TableOptions::new())).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rows = || -> std::result::Result<usize, String> {
                let mut rows = 0;
                for batch in table.scan().batches().map_err(|e| e.to_string())? {
                    rows += batch.map_err(|e| e.to_string())?.num_rows();
                }
                Ok(rows)
            };
            let _ = tx.send(rows());
        });
        rx.recv_timeout(Duration::from_secs(60)).expect("the scan did not end within a minute")
    }

    /// A panic in a piece's thread, inside its guard or outside it, fails the scan naming
    /// the file: never a hang, never a scan that ends with fewer rows.
    #[test]
    fn a_panic_in_a_piece_fails_the_scan_naming_the_file() {
        assert_eq!(scan(&["a.npy", "b.npy", "c.npy"]), Ok(3000));
        let e = scan(&["a.npy", "b-inject-panic.npy", "c.npy"]).unwrap_err();
        assert!(e.contains("b-inject-panic.npy") && e.contains("injected into the piece"), "{e}");
        let e = scan(&["a.npy", "b-inject-escape.npy", "c.npy"]).unwrap_err();
        assert!(e.contains("b-inject-escape.npy") && e.contains("stopped before it finished"), "{e}");
    }
}
