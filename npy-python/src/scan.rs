//! `npy.scan`: `.npy` files or `.npz` archives as one table of Arrow record batches, handed
//! to DuckDB, polars, pyarrow and pandas through the Arrow PyCapsule interface
//! (`__arrow_c_stream__`, by pyo3-arrow).
//!
//! Rows come from npy-store's scans (npy-arrow's columns): `.npy` files by
//! [`npy_store::RowScan`], archives by [`npy_store::RemoteNpz::checked_table_batches`] (no
//! row before its member's CRC-32 passed), object arrays (text, ragged arrays) from
//! [`npy_arrow::object_batches_with`], decoded whole when the table opens and held. A stream's rows are made by threads of their
//! own, a few batches ahead of its consumer, in pieces made side by side and given out in
//! row order; the consumer waits on channels only (no GIL, no runtime of its own), and
//! either side ending ends the other. Local files are read, not mapped,
//! and each batch is given out only once its file is seen unchanged since the scan opened
//! it: a file rewritten or truncated under a stream fails the stream, never answers wrong.

use std::collections::VecDeque;
use std::ops::Range;
use std::path::{Path as FsPath, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, Field, Schema, SchemaRef};
use futures::StreamExt;
use npy_arrow::{ConvertOptions, Layout};
use npy_core::mmap::MapContract;
use npy_core::{Error, ErrorKind};
use npy_store::filter::{Kept, RowFilter};
use npy_store::{RemoteNpz, RowScan, StoreLocation};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use pyo3_arrow::ffi::{to_schema_pycapsule, to_stream_pycapsule, ArrayIterator};
use pyo3_arrow::{PyRecordBatch, PySchema};

use crate::errors::to_python;

/// Batches a stream makes ahead of its consumer.
const AHEAD: usize = 2;

/// One file of a table.
struct Part {
    /// The file as the user named it (or as found under their directory or pattern).
    name: String,
    at: StoreLocation,
    /// The file's identity when the table was opened, for local files (objects at URLs
    /// are read by ranged GETs of the rows asked, as they are then).
    stamp: Option<Stamp>,
    rows: usize,
    kind: PartKind,
}

enum PartKind {
    Npy {
        data_offset: u64,
        layout: Arc<Layout>,
    },
    Npz {
        npz: RemoteNpz,
    },
    /// An object array (text, or a ragged array's rows), decoded whole when the table was
    /// opened: its one column.
    Objects {
        column: ArrayRef,
    },
}

/// What says a local file is the one a table opened: size, modification time, inode.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

impl Stamp {
    fn of(path: &FsPath) -> std::io::Result<Stamp> {
        let meta = std::fs::metadata(path)?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Ok(Stamp { len: meta.len(), modified: meta.modified().ok(), inode })
    }
}

/// A table: its files, all their columns, and the columns and rows asked of it.
struct Plan {
    parts: Vec<Part>,
    /// Every column of the files.
    full: SchemaRef,
    /// The columns given, as indices of `full`.
    columns: Vec<usize>,
    /// The rows given, numbered across the files in order.
    rows: Range<usize>,
    convert: ConvertOptions,
    /// Rows per batch, when the caller said.
    batch_rows: Option<usize>,
    /// The caller's acceptance of the maps' contract for the table's local `.npy` files
    /// (`map_local_files=True`): their rows are mapped, not read.
    map: Option<MapContract>,
}

impl Plan {
    fn schema(&self) -> SchemaRef {
        Arc::new(self.full.project(&self.columns).expect("columns index the schema"))
    }

    fn total_rows(&self) -> usize {
        self.parts.iter().map(|p| p.rows).sum()
    }

    /// The indices of columns `names`, failing on an unknown one with the names there are.
    fn indices(&self, names: &[String]) -> PyResult<Vec<usize>> {
        (names.iter())
            .map(|name| {
                self.full.index_of(name).map_err(|_| {
                    let known: Vec<&str> = self.full.fields().iter().map(|f| f.name().as_str()).collect();
                    PyKeyError::new_err(format!("no column {name:?} in {}: its columns are {known:?}", self.title()))
                })
            })
            .collect()
    }

    fn title(&self) -> String {
        match self.parts.as_slice() {
            [one] => format!("'{}'", one.name),
            parts => format!("'{}' and {} more files", parts[0].name, parts.len() - 1),
        }
    }
}

/// A table over NumPy files, given to Arrow consumers as fresh, independent streams.
#[pyclass(module = "npy._npy", name = "Scan", frozen)]
pub(crate) struct Scan {
    plan: Arc<Plan>,
}

#[pymethods]
impl Scan {
    /// The Arrow schema of the rows given (a pyo3-arrow `Schema`; `pyarrow.schema(s)`
    /// takes it).
    #[getter]
    fn schema(&self) -> PySchema {
        PySchema::new(self.plan.schema())
    }

    /// The rows given (before any filter of a consumer).
    #[getter]
    fn num_rows(&self) -> usize {
        self.plan.rows.len()
    }

    /// The names of the columns given.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.plan.columns.iter().map(|&i| self.plan.full.field(i).name().clone()).collect()
    }

    /// The files read, in row order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.plan.parts.iter().map(|p| p.name.clone()).collect()
    }

    /// The same files with other columns and rows (`None`: all columns; rows `start..stop`
    /// of all the files' rows, already clamped by the caller), and rows per batch
    /// (`None`: as before).
    #[pyo3(signature = (columns, start, stop, batch_rows = None))]
    fn select(
        &self,
        columns: Option<Vec<String>>,
        start: usize,
        stop: usize,
        batch_rows: Option<usize>,
    ) -> PyResult<Scan> {
        if batch_rows == Some(0) {
            return Err(PyValueError::new_err("batch_rows must be at least 1"));
        }
        let plan = &self.plan;
        let columns = match columns {
            Some(names) => plan.indices(&names)?,
            None => (0..plan.full.fields().len()).collect(),
        };
        let total = plan.total_rows();
        let rows = start.min(total)..stop.clamp(start.min(total), total);
        let plan = Plan {
            parts: plan.parts.iter().map(Part::share).collect(),
            full: plan.full.clone(),
            columns,
            rows,
            convert: plan.convert.clone(),
            batch_rows: batch_rows.or(plan.batch_rows),
            map: plan.map,
        };
        Ok(Scan { plan: Arc::new(plan) })
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        Ok(to_schema_pycapsule(py, self.plan.schema().as_ref())?)
    }

    /// A new stream of the rows, independent of every other (consumers may ask more than
    /// once); `requested_schema` casts where Arrow can, as the PyCapsule interface says.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let batches = Batches::start(self.plan.clone(), None);
        let schema = batches.schema.clone();
        let arrays = batches.map(|batch| Ok(Arc::new(StructArray::from(batch?)) as ArrayRef));
        let field = Field::new_struct("", schema.fields().clone(), false).with_metadata(schema.metadata().clone());
        let reader = Box::new(ArrayIterator::new(arrays, Arc::new(field)));
        Ok(to_stream_pycapsule(py, reader, requested_schema)?)
    }

    /// The rows as an iterator of record batches (each has `__arrow_c_array__`), waiting
    /// for them with the GIL released. With `predicate`, a callable given a record batch
    /// of columns `predicate_columns` (read first) that returns a NumPy bool array, only
    /// the rows it keeps are given, their other columns read at those rows only.
    #[pyo3(signature = (predicate_columns = None, predicate = None))]
    fn batches(&self, predicate_columns: Option<Vec<String>>, predicate: Option<Py<PyAny>>) -> PyResult<BatchIter> {
        let judge = match predicate {
            Some(callable) => {
                let columns = self.plan.indices(&predicate_columns.unwrap_or_default())?;
                Some(Judge { columns, callable: Arc::new(callable) })
            }
            None => None,
        };
        Ok(BatchIter { batches: std::sync::Mutex::new(Some(Batches::start(self.plan.clone(), judge))) })
    }

    fn __len__(&self) -> usize {
        self.plan.rows.len()
    }

    fn __repr__(&self) -> String {
        let columns: Vec<String> = (self.plan.columns.iter())
            .map(|&i| {
                let f = self.plan.full.field(i);
                format!("{}: {}", f.name(), f.data_type())
            })
            .collect();
        format!("npy.Scan({}, {} rows, columns [{}])", self.plan.title(), self.plan.rows.len(), columns.join(", "))
    }
}

impl Part {
    /// The same file (its store and archive handles are shared).
    fn share(&self) -> Part {
        let kind = match &self.kind {
            PartKind::Npy { data_offset, layout } => {
                PartKind::Npy { data_offset: *data_offset, layout: layout.clone() }
            }
            PartKind::Npz { npz } => PartKind::Npz { npz: npz.clone() },
            PartKind::Objects { column } => PartKind::Objects { column: column.clone() },
        };
        Part { name: self.name.clone(), at: self.at.clone(), stamp: self.stamp, rows: self.rows, kind }
    }

    /// Fails unless the file is still the one the table opened.
    fn unchanged(&self) -> npy_core::Result<()> {
        let Some(then) = self.stamp else { return Ok(()) };
        let now = Stamp::of(&local_path(&self.at)).map_err(|e| Error::from(e).reading(&self.name))?;
        if now == then {
            return Ok(());
        }
        let reason = "the file changed while it was scanned (its size, time or inode is not what the scan opened)";
        Err(Error::from(ErrorKind::Usage { reason: reason.into() }).reading(&self.name))
    }
}

/// The predicate of a filtered stream: Python's callable over some columns.
#[derive(Clone)]
struct Judge {
    columns: Vec<usize>,
    callable: Arc<Py<PyAny>>,
}

impl Judge {
    /// The rows `batch` (of the predicate's columns) keeps.
    fn keep(&self, batch: RecordBatch) -> Result<BooleanArray, PyErr> {
        let batch_rows = batch.num_rows();
        Python::attach(|py| {
            let out = self.callable.call1(py, (PyRecordBatch::new(batch),))?;
            let mask: PyReadonlyArray1<'_, bool> = out.extract(py)?;
            if mask.len()? != batch_rows {
                let message = format!("the predicate gave {} values for {batch_rows} rows", mask.len()?);
                return Err(PyValueError::new_err(message));
            }
            Ok(BooleanArray::from(mask.as_slice()?.to_vec()))
        })
    }
}

/// A stream's receiving end. Its rows are cut into pieces (a file's rows, split into runs
/// of whole batches of about [`PIECE_BYTES`]); up to [`threads`] pieces are made at once,
/// each on a thread of its own into a channel of its own, and their batches given out in
/// row order. A piece's thread starts only when the consumer asks for rows (in
/// `next_batch`), so a stream left unread makes nothing.
struct Batches {
    schema: SchemaRef,
    plan: Arc<Plan>,
    judge: Option<Judge>,
    pieces: std::vec::IntoIter<Piece>,
    running: VecDeque<Receiver<npy_core::Result<RecordBatch>>>,
    /// Pieces made at once ([`threads`], asked once: it reads the cgroup's quota).
    threads: usize,
}

/// Rows `rows` of file `part` of a plan.
struct Piece {
    part: usize,
    rows: Range<usize>,
}

/// Bytes of rows per piece of a stream, at least (a piece is whole batches).
const PIECE_BYTES: usize = 16 << 20;

/// Pieces made at once: the machine's cores, at most 8.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}

impl Batches {
    /// The stream of `plan`'s batches (filtered by `judge`).
    fn start(plan: Arc<Plan>, judge: Option<Judge>) -> Batches {
        let pieces = pieces(&plan);
        let pieces = pieces.into_iter();
        Batches { schema: plan.schema(), plan, judge, pieces, running: VecDeque::new(), threads: threads() }
    }

    fn next_batch(&mut self) -> Option<npy_core::Result<RecordBatch>> {
        loop {
            while self.running.len() < self.threads {
                let Some(piece) = self.pieces.next() else { break };
                self.running.push_back(self.spawn(piece));
            }
            let rx = self.running.front()?;
            match rx.recv() {
                Ok(Ok(batch)) => return Some(Ok(batch)),
                Ok(Err(e)) => {
                    // The stream ends at its first error: the other pieces' threads end as
                    // their channels close.
                    self.running.clear();
                    self.pieces = Vec::new().into_iter();
                    return Some(Err(e));
                }
                Err(_) => {
                    self.running.pop_front();
                }
            }
        }
    }

    /// A thread making `piece`'s batches into a new channel.
    fn spawn(&self, piece: Piece) -> Receiver<npy_core::Result<RecordBatch>> {
        let (tx, rx) = sync_channel(AHEAD);
        let (plan, judge) = (self.plan.clone(), self.judge.clone());
        let spawned = std::thread::Builder::new().name("npy-scan".into()).spawn({
            let tx = tx.clone();
            move || produce(&plan, piece, judge.as_ref(), &tx)
        });
        if let Err(e) = spawned {
            let _ = tx.send(Err(Error::from(e).reading(self.plan.title())));
        }
        rx
    }
}

/// `plan`'s rows as pieces, in row order: each file's rows of the window, `.npy` files'
/// cut into runs of whole batches of at least [`PIECE_BYTES`] (archives are one piece:
/// their members are checked to their ends).
fn pieces(plan: &Plan) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut first = 0usize;
    for (index, part) in plan.parts.iter().enumerate() {
        let rows = plan.rows.start.max(first) - first..plan.rows.end.min(first + part.rows).max(first) - first;
        first += part.rows;
        if rows.is_empty() {
            continue;
        }
        let PartKind::Npy { layout, .. } = &part.kind else {
            pieces.push(Piece { part: index, rows });
            continue;
        };
        let batch = plan.batch_rows.unwrap_or_else(|| {
            let per_batch = npy_arrow::read::DEFAULT_BATCH_BYTES / layout.row_bytes().max(1);
            npy_arrow::read::DEFAULT_BATCH_ROWS.min(per_batch).max(1)
        });
        let per_piece = (PIECE_BYTES / layout.row_bytes().max(1)).div_ceil(batch).max(1).saturating_mul(batch);
        let mut at = rows.start;
        while at < rows.end {
            let end = at.saturating_add(per_piece).min(rows.end);
            pieces.push(Piece { part: index, rows: at..end });
            at = end;
        }
    }
    pieces
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map(|b| b.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for Batches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The Python iterator of [`Scan::batches`].
#[pyclass(module = "npy._npy", name = "ScanBatches")]
pub(crate) struct BatchIter {
    batches: std::sync::Mutex<Option<Batches>>,
}

#[pymethods]
impl BatchIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyRecordBatch>> {
        let mut guard = self.batches.lock().map_err(|_| PyValueError::new_err("the scan's iterator failed before"))?;
        let Some(batches) = guard.as_mut() else { return Ok(None) };
        match py.detach(|| batches.next_batch()) {
            Some(Ok(batch)) => Ok(Some(PyRecordBatch::new(batch))),
            Some(Err(e)) => {
                *guard = None;
                Err(to_python(e))
            }
            None => {
                *guard = None;
                Ok(None)
            }
        }
    }
}

/// Makes `piece`'s batches into `tx` until done, failed, or the consumer has gone. A panic
/// of a dependency becomes an error of the scan.
fn produce(plan: &Plan, piece: Piece, judge: Option<&Judge>, tx: &SyncSender<npy_core::Result<RecordBatch>>) {
    let part = &plan.parts[piece.part];
    let run = || -> npy_core::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(send_part(plan, part, piece.rows, judge, tx))
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|panic| {
        let what =
            panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
        let reason = format!("the scan failed: {}", what.unwrap_or_else(|| "a panic".into()));
        Err(Error::from(ErrorKind::Usage { reason }).reading(&part.name))
    });
    if let Err(e) = outcome {
        let _ = tx.send(Err(named(e, &part.name)));
    }
}

/// Sends rows `rows` of `part` until done, failed (the error sent), or the consumer has gone.
async fn send_part(
    plan: &Plan,
    part: &Part,
    rows: Range<usize>,
    judge: Option<&Judge>,
    tx: &SyncSender<npy_core::Result<RecordBatch>>,
) -> npy_core::Result<()> {
    let schema = plan.schema();
    let reading = |e: Error| named(e, &part.name);
    let mut stream = match &part.kind {
        PartKind::Npy { data_offset, layout } => {
            let projected = Arc::new(layout.project(&plan.columns).map_err(reading)?);
            let mut scan = RowScan::new(part.at.store.clone(), part.at.path.clone(), *data_offset, projected);
            scan.rows(rows);
            if let Some(rows) = plan.batch_rows {
                scan.batch_rows(rows);
            }
            if let Some(contract) = plan.map {
                scan.map(contract);
            }
            if let Some(judge) = judge {
                let judged = Arc::new(layout.project(&judge.columns).map_err(reading)?);
                let judge = judge.clone();
                scan.filter(RowFilter::new(judged, move |batch| Ok(Kept::of(&judge.keep(batch.clone())?))));
            }
            scan.batches().into_inner()
        }
        PartKind::Objects { column } => {
            let per_batch = plan.batch_rows.unwrap_or(npy_arrow::read::DEFAULT_BATCH_ROWS).max(1);
            let (full, columns, judge) = (plan.full.clone(), plan.columns.clone(), judge.cloned());
            let batches: Vec<npy_core::Result<RecordBatch>> = (rows.start..rows.end)
                .step_by(per_batch)
                .map(|start| {
                    let len = per_batch.min(rows.end - start);
                    let batch = RecordBatch::try_new(full.clone(), vec![column.slice(start, len)])
                        .map_err(|e| Error::from(std::io::Error::other(e)))?;
                    let batch = match &judge {
                        None => batch,
                        Some(judge) => {
                            let judged = columns_of(&batch, &full, &judge.columns, None)?;
                            let keep = judge.keep(judged).map_err(|e| Error::from(std::io::Error::other(e)))?;
                            arrow_select::filter::filter_record_batch(&batch, &keep)
                                .map_err(|e| Error::from(std::io::Error::other(e)))?
                        }
                    };
                    columns_of(&batch, &full, &columns, None)
                })
                .collect();
            futures::stream::iter(batches).boxed()
        }
        PartKind::Npz { npz } => {
            let mut wanted: Vec<usize> = plan.columns.clone();
            if let Some(judge) = judge {
                wanted.extend(judge.columns.iter().filter(|c| !plan.columns.contains(c)));
            }
            let names: Vec<&str> = member_names(&plan.full, &wanted, npz);
            let stream = npz.checked_table_batches_with(Some(&names), rows, &plan.convert).await.map_err(reading)?;
            let judge = judge.cloned();
            let full = plan.full.clone();
            stream
                .into_inner()
                .map(move |batch| {
                    let batch = batch?;
                    match &judge {
                        None => Ok(batch),
                        Some(judge) => {
                            let judged = columns_of(&batch, &full, &judge.columns, None)?;
                            let keep = judge.keep(judged).map_err(|e| Error::from(std::io::Error::other(e)))?;
                            arrow_select::filter::filter_record_batch(&batch, &keep)
                                .map_err(|e| Error::from(std::io::Error::other(e)))
                        }
                    }
                })
                .boxed()
        }
    };
    while let Some(batch) = stream.next().await {
        let batch = batch.and_then(|b| {
            part.unchanged()?;
            match &part.kind {
                PartKind::Npy { .. } => retyped(b, &schema),
                PartKind::Npz { .. } => columns_of(&b, &plan.full, &plan.columns, Some(&schema)),
                PartKind::Objects { .. } => retyped(b, &schema),
            }
        });
        let failed = batch.is_err();
        if tx.send(batch.map_err(reading)).is_err() || failed {
            return Ok(());
        }
    }
    Ok(())
}

/// `batch`'s columns under `schema` (the table's, whose metadata may differ from a file's).
fn retyped(batch: RecordBatch, schema: &SchemaRef) -> npy_core::Result<RecordBatch> {
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(schema.clone(), batch.columns().to_vec(), &options)
        .map_err(|e| Error::from(std::io::Error::other(e)))
}

/// The columns `indices` of `full`, found by name in `batch`, as a batch (of `schema`, or
/// of those columns' fields).
fn columns_of(
    batch: &RecordBatch,
    full: &SchemaRef,
    indices: &[usize],
    schema: Option<&SchemaRef>,
) -> npy_core::Result<RecordBatch> {
    let missing = || Error::from(ErrorKind::Usage { reason: "a member column is missing".into() });
    let columns = (indices.iter())
        .map(|&i| batch.column_by_name(full.field(i).name()).cloned().ok_or_else(missing))
        .collect::<npy_core::Result<Vec<_>>>()?;
    let schema = match schema {
        Some(schema) => schema.clone(),
        None => Arc::new(full.project(indices).map_err(|e| Error::from(std::io::Error::other(e)))?),
    };
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(schema, columns, &options).map_err(|e| Error::from(std::io::Error::other(e)))
}

/// The members of an archive holding columns `indices` of its table `full`.
fn member_names<'a>(full: &SchemaRef, indices: &[usize], npz: &'a RemoteNpz) -> Vec<&'a str> {
    let mut names: Vec<&str> = Vec::new();
    for member in npz.names().iter().map(String::as_str) {
        // A member's column has its name (tables here have no residue columns).
        if indices.iter().any(|&i| full.field(i).name() == member) && !names.contains(&member) {
            names.push(member);
        }
    }
    names
}

/// `e` naming file `name` (as the user named it; the store names it by its path there).
fn named(e: Error, name: &str) -> Error {
    e.renamed(name).reading(name)
}

/// The maps' contract, accepted for the caller who asked for maps.
#[allow(unsafe_code)]
fn maps_accepted() -> MapContract {
    // SAFETY: only for `npy.scan(..., map_local_files=True)`, whose documentation gives the
    // contract (as np.load's mmap_mode does): nothing modifies or truncates the table's
    // files while a stream reads them, or the process may die of SIGBUS. A change that
    // does happen is still reported after the batch that saw it (the file's stamp).
    unsafe { MapContract::accept() }
}

/// The local file of a location in a local store.
fn local_path(at: &StoreLocation) -> PathBuf {
    PathBuf::from(format!("/{}", at.path.as_ref()))
}

/// Opens `source` (a `.npy` or `.npz` file, a directory, or a glob pattern) as a table.
#[pyfunction]
#[pyo3(signature = (source, members = None, batch_rows = None, days_as_int64 = false, map_local_files = false))]
pub(crate) fn open_scan(
    py: Python<'_>,
    source: String,
    members: Option<Vec<String>>,
    batch_rows: Option<usize>,
    days_as_int64: bool,
    map_local_files: bool,
) -> PyResult<Scan> {
    let mut convert = ConvertOptions::new();
    convert.days_as_int64(days_as_int64);
    if let Some(rows) = batch_rows {
        if rows == 0 {
            return Err(PyValueError::new_err("batch_rows must be at least 1"));
        }
        convert.batch_rows(rows);
    }
    let mut plan = py.detach(|| open_plan(&source, members.as_deref(), convert)).map_err(to_python)?;
    plan.batch_rows = batch_rows;
    plan.map = map_local_files.then(maps_accepted);
    Ok(Scan { plan: Arc::new(plan) })
}

fn open_plan(source: &str, members: Option<&[String]>, convert: ConvertOptions) -> npy_core::Result<Plan> {
    // A URL is one object (listing a bucket's prefix is not done here).
    let url = source.contains("://");
    let files = if url { vec![PathBuf::from(source)] } else { find_files(source)? };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut parts = Vec::with_capacity(files.len());
    let mut full: Option<(SchemaRef, String)> = None;
    for file in files {
        let name = file.to_string_lossy().into_owned();
        let stamp = if url { None } else { Some(Stamp::of(&file).map_err(|e| Error::from(e).reading(&name))?) };
        let at = npy_store::store_for(&name)?;
        let npz = file.extension().is_some_and(|e| e.eq_ignore_ascii_case("npz"));
        if members.is_some() && !npz {
            let reason = "members= names members of .npz archives; this is a .npy file".into();
            return Err(Error::from(ErrorKind::Usage { reason }).reading(&name));
        }
        let (schema, rows, kind) = runtime
            .block_on(async {
                if npz {
                    let archive = RemoteNpz::from_store(at.store.clone(), &at.path).await?;
                    let names: Option<Vec<&str>> = members.map(|m| m.iter().map(String::as_str).collect());
                    let (schema, rows) = archive.table_schema_with(names.as_deref(), &convert).await?;
                    Ok::<_, Error>((schema, rows, PartKind::Npz { npz: archive }))
                } else {
                    let object = npy_store::fetch_header(at.store.as_ref(), &at.path).await?;
                    if object.header.dtype.has_object() {
                        return objects_part(&at, &convert).await;
                    }
                    let layout = Layout::new_with(&object.header, None, &convert)?;
                    let kind = PartKind::Npy { data_offset: object.data_offset, layout: Arc::new(layout) };
                    let PartKind::Npy { layout, .. } = &kind else { unreachable!() };
                    Ok((layout.schema(), layout.rows(), kind))
                }
            })
            .map_err(|e| named(e, &name))?;
        match &full {
            None => full = Some((schema, name.clone())),
            Some((first, first_name)) => {
                if !same_columns(first, &schema) {
                    let reason = format!(
                        "its columns ({}) are not those of '{first_name}' ({}): a table's files share one dtype",
                        describe(&schema),
                        describe(first)
                    );
                    return Err(Error::from(ErrorKind::Usage { reason }).reading(&name));
                }
            }
        }
        parts.push(Part { name, at, stamp, rows, kind });
    }
    let (full, _) = full.expect("find_files gives a file or fails");
    let columns = (0..full.fields().len()).collect();
    let total = parts.iter().map(|p| p.rows).sum();
    Ok(Plan { parts, full, columns, rows: 0..total, convert, batch_rows: None, map: None })
}

/// An object array's part: the file read whole and decoded by npy-arrow's
/// [`object_batches_with`](npy_arrow::object_batches_with) (text as Utf8, a ragged array
/// as a List column; other object arrays refused, naming the element).
async fn objects_part(at: &StoreLocation, convert: &ConvertOptions) -> npy_core::Result<(SchemaRef, usize, PartKind)> {
    use object_store::ObjectStoreExt;
    let got = at.store.get(&at.path).await.map_err(std::io::Error::other)?;
    let bytes = got.bytes().await.map_err(std::io::Error::other)?;
    let reader = npy_core::NpyReader::from_reader(std::io::Cursor::new(bytes))?;
    let mut whole = convert.clone();
    whole.batch_rows(usize::MAX);
    // A value with no Arrow form is named by NumPy's name for the dtype, `object`: `|O` in
    // an UnsupportedDtype is the package's sign of a dtype NumPy pickles (records with
    // object fields), said in other words (`errors::holds_objects`).
    let mut batches = npy_arrow::object_batches_with(reader, &whole).map_err(|e| match e.kind() {
        ErrorKind::UnsupportedDtype { descr, reason } if descr == "|O" => {
            Error::from(ErrorKind::UnsupportedDtype { descr: "object".into(), reason: reason.clone() })
        }
        _ => e,
    })?;
    let schema = batches.schema();
    let column = match batches.next() {
        Some(batch) => batch.map_err(|e| Error::from(std::io::Error::other(e)))?.column(0).clone(),
        None => arrow_array::new_empty_array(schema.field(0).data_type()),
    };
    Ok((schema, column.len(), PartKind::Objects { column }))
}

fn same_columns(a: &Schema, b: &Schema) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields().iter().zip(b.fields()).all(|(x, y)| x.name() == y.name() && x.data_type() == y.data_type())
}

fn describe(schema: &Schema) -> String {
    let fields: Vec<String> = schema.fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect();
    fields.join(", ")
}

/// The files of `source`: itself, the `.npy` (or `.npz`) files under a directory, or those
/// a glob pattern matches; sorted by path, one kind only.
fn find_files(source: &str) -> npy_core::Result<Vec<PathBuf>> {
    let usage = |reason: String| Error::from(ErrorKind::Usage { reason }).reading(source);
    let path = FsPath::new(source);
    let found: Vec<PathBuf> = if source.contains(['*', '?', '[']) && !path.exists() {
        let paths = glob::glob(source).map_err(|e| usage(format!("not a glob pattern: {e}")))?;
        let mut found = Vec::new();
        for path in paths {
            let path = path.map_err(|e| usage(format!("cannot list {}: {}", e.path().display(), e.error())))?;
            if path.is_file() {
                found.push(path);
            }
        }
        found
    } else if path.is_dir() {
        let mut found = Vec::new();
        walk(path, &mut found).map_err(|e| Error::from(e).reading(source))?;
        found.retain(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy") || e.eq_ignore_ascii_case("npz")));
        found
    } else {
        // A file (a missing one fails as it is opened, naming it).
        std::fs::metadata(path).map_err(|e| Error::from(e).reading(source))?;
        return Ok(vec![path.to_path_buf()]);
    };
    let mut found = found;
    found.sort();
    let is_npz = |p: &PathBuf| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npz"));
    match (found.iter().find(|p| is_npz(p)), found.iter().find(|p| !is_npz(p))) {
        (None, None) => Err(usage("no .npy or .npz file there".into())),
        (Some(a), Some(b)) => Err(usage(format!(
            "it holds .npz archives ({}) and .npy files ({}): a table is one kind",
            a.display(),
            b.display()
        ))),
        _ => Ok(found),
    }
}

/// Every file under `dir`, recursively.
fn walk(dir: &FsPath, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), found)?;
        } else if kind.is_file() {
            found.push(entry.path());
        }
    }
    Ok(())
}
