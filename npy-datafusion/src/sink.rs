//! Writing tables: `COPY (...) TO 'out.npy'`, `COPY ... TO 'dir/' STORED AS NPY` and
//! `INSERT INTO npy_table SELECT ...`.
//!
//! DataFusion's demuxer splits the rows into output files; each file is written through
//! npy-arrow (the project's one Arrow → NumPy path: [`npy_arrow::BatchWriter`] for `.npy`,
//! [`npy_arrow::NpzBatchWriter`] for `.npz`, a member per column) into a spool, since a
//! `.npy` header (its row count) is only known at the end. When every file is spooled and
//! the input has ended without error, the spools are moved to their targets; files of the
//! same statement already moved when another one fails are deleted. A failed write leaves
//! neither a half file nor a temporary, and an old file at a target stays whole.
//!
//! - **Local files** (the store is DataFusion's `LocalFileSystem` at `file:///`): a `.npy`
//!   is spooled in its target's directory as a file with no name
//!   ([`npy_core::atomic::AtomicFile`], `O_TMPFILE`), linked to the target's name once the
//!   input has ended well; a `.npz` archive is spooled in a hidden directory beside the
//!   target, `.{name}.npy-sql.XXXXXX` ([`npy_core::pending`]), and renamed over the target.
//!   A killed statement leaves no name beside a `.npy` target; beside a `.npz` target it
//!   can leave that directory, which the next local `.npz` write into the same directory
//!   removes (its lock proves its writer gone). Where the target's directory does not exist
//!   yet, the file is spooled as for a store and copied in.
//! - **Object stores** (S3, ...): the spool is an unnamed temporary file (a `.npz` is
//!   assembled in a hidden directory `.{name}.npy-sql.XXXXXX` of the temporary directory,
//!   removed as for local files), uploaded with one `put` when small, else a multipart
//!   upload in parts (aborted on error).
//!
//! Text columns (Utf8, Binary) become NumPy `U`/`S` items as wide as their longest value.
//! Unless the schema carries a table's dtype, that width is only known at the end: such a
//! file's batches are first spooled as an Arrow IPC stream (an unnamed temporary file) while
//! the widths are measured ([`npy_arrow::formats::TextSpool`]), then written with them
//! ([`npy_arrow::BatchWriter::text_widths`]). Tables without text are written as they
//! come.

use std::fmt;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::runtime::{JoinSet, SpawnedTask};
use datafusion::common::{not_impl_err, DataFusionError, Result};
use datafusion::datasource::file_format::write::demux::DemuxedStreamReceiver;
use datafusion::datasource::file_format::write::get_writer_schema;
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_expr_common::sort_expr::LexRequirement;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};
use futures::StreamExt;
use npy_arrow::formats::{SpooledBatchReader, TextSpool};
use npy_core::atomic::AtomicFile;
use npy_core::pending::PendingDir;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use tokio::sync::mpsc::Receiver;

use crate::error::npy_error as external;
use crate::kind::Kind;
use crate::options::NpyReadOptions;

/// Files uploaded at once.
const FILES_IN_FLIGHT: usize = 4;

/// The infix of the hidden directories `.npz` archives are assembled in (see
/// [`npy_core::pending`]).
const PENDING_INFIX: &str = ".npy-sql.";

/// The [`DataSink`] of npy tables and of `COPY ... TO` a `.npy`/`.npz` location: every
/// output file is written by npy-arrow into a spool, then moved to its local target or
/// uploaded to the object store (see the [module docs](self)).
///
/// Only appending is supported (`INSERT INTO` adds a new file to the table's directory;
/// `INSERT OVERWRITE` is refused, as DataFusion's own formats do).
///
/// # Examples
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use datafusion::prelude::SessionContext;
/// use npy_core::prelude::*;
///
/// let dir = tempfile::tempdir()?;
/// let ctx = SessionContext::new();
/// npy_datafusion::register(&mut ctx.state_ref().write())?;
/// let out = dir.path().join("out.npy");
/// // One column named `values` is an array of scalars; other columns are record fields.
/// let sql = format!(
///     "COPY (SELECT CAST(x AS DOUBLE) AS \"values\" FROM (VALUES (1), (2), (3)) t(x)) TO '{}'",
///     out.display()
/// );
/// ctx.sql(&sql).await?.collect().await?;
/// assert_eq!(Vec::<f64>::read_npy(&out)?, [1.0, 2.0, 3.0]);
/// # Ok(())
/// # }
/// ```
pub struct NpySink {
    config: FileSinkConfig,
    kind: Kind,
}

impl NpySink {
    /// A sink writing the files `config` describes, `.npy` or `.npz` by `kind`.
    pub fn new(config: FileSinkConfig, kind: Kind) -> Self {
        NpySink { config, kind }
    }

    /// Whether it writes `.npy` or `.npz` files.
    pub fn kind(&self) -> Kind {
        self.kind
    }
}

/// The plan writing `input` as `conf` says (`NpyFormat::create_writer_physical_plan`).
/// Reading options do not change what is written.
pub(crate) fn writer_plan(
    input: Arc<dyn ExecutionPlan>,
    conf: FileSinkConfig,
    order: Option<LexRequirement>,
    kind: Kind,
    _options: &NpyReadOptions,
) -> Result<Arc<dyn ExecutionPlan>> {
    if conf.insert_op != InsertOp::Append {
        return not_impl_err!("{:?} into npy tables: only appending (INSERT INTO) is supported", conf.insert_op);
    }
    let sink = Arc::new(NpySink::new(conf, kind));
    Ok(Arc::new(DataSinkExec::new(input, sink, order)))
}

impl fmt::Debug for NpySink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NpySink").field("kind", &self.kind).field("url", &self.config.original_url).finish()
    }
}

impl DisplayAs for NpySink {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(f, "NpySink(format={}, url={})", ext(self.kind), self.config.original_url)
            }
            DisplayFormatType::TreeRender => {
                writeln!(f, "format: {}", ext(self.kind))?;
                write!(f, "file={}", self.config.original_url)
            }
        }
    }
}

#[async_trait]
impl DataSink for NpySink {
    fn schema(&self) -> &SchemaRef {
        self.config.output_schema()
    }

    async fn write_all(&self, data: SendableRecordBatchStream, context: &Arc<TaskContext>) -> Result<u64> {
        FileSink::write_all(self, data, context).await
    }
}

#[async_trait]
impl FileSink for NpySink {
    fn config(&self) -> &FileSinkConfig {
        &self.config
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        _context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        mut file_stream_rx: DemuxedStreamReceiver,
        object_store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let schema = get_writer_schema(&self.config);
        let local = is_local(object_store.as_ref(), &self.config);
        // A blocking task per file: npy-arrow's writers do file I/O.
        let mut writers: JoinSet<Result<(Path, Spool)>> = JoinSet::new();
        while let Some((location, rx)) = file_stream_rx.recv().await {
            let (schema, kind) = (Arc::clone(&schema), self.kind);
            let target = if local { local_path(&location).map(Some)? } else { None };
            writers.spawn_blocking(move || {
                let spool = spool(kind, &location, target, schema, rx)?;
                Ok((location, spool))
            });
        }
        let mut spools = Vec::new();
        let mut failed = None;
        while let Some(joined) = writers.join_next().await {
            match joined {
                Ok(Ok(spool)) => spools.push(spool),
                Ok(Err(e)) => {
                    failed.get_or_insert(e);
                }
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => {
                    failed.get_or_insert(DataFusionError::ExecutionJoin(Box::new(e)));
                }
            }
        }
        // An input error ends the files' streams as their end does: nothing is uploaded
        // before the demuxer says the input ended well. A writer's error comes first (the
        // demuxer then fails only because that writer stopped listening).
        let demuxed = demux_task.join_unwind().await.map_err(|e| DataFusionError::ExecutionJoin(Box::new(e)));
        if let Some(e) = failed {
            return Err(e);
        }
        demuxed??;
        let rows = spools.iter().map(|(_, s)| s.rows).sum();
        let uploads = futures::stream::iter(spools)
            .map(|(location, spool)| {
                let store = Arc::clone(&object_store);
                async move {
                    let done = upload(&store, &location, spool).await;
                    (location, done)
                }
            })
            .buffer_unordered(FILES_IN_FLIGHT)
            .collect::<Vec<_>>()
            .await;
        let mut first_error = None;
        let mut uploaded = Vec::new();
        for (location, done) in uploads {
            match done {
                Ok(()) => uploaded.push(location),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            // The statement failed: its other files go too (best effort; the error that
            // matters is the first one).
            for location in uploaded {
                match local.then(|| local_path(&location)) {
                    Some(Ok(path)) => drop(std::fs::remove_file(path)),
                    Some(Err(_)) => {}
                    None => drop(object_store.delete(&location).await),
                }
            }
            return Err(e);
        }
        Ok(rows)
    }
}

/// Whether `store` is the local file system at its root, as DataFusion registers it for
/// `file://` (and npy-cli uses it for local paths): then an object's path is a file's path.
/// object_store offers no downcast; a `LocalFileSystem` shows its root when displayed.
fn is_local(store: &dyn ObjectStore, config: &FileSinkConfig) -> bool {
    config.object_store_url.as_str() == "file:///" && store.to_string() == "LocalFileSystem(file:///)"
}

/// The file of the local object `location`.
fn local_path(location: &Path) -> Result<PathBuf> {
    let root = object_store::local::LocalFileSystem::new();
    root.path_to_filesystem(location).map_err(|e| io_error(std::io::Error::other(e), location))
}

/// A written file waiting for the statement's input to end well.
struct Spool {
    body: Body,
    rows: u64,
}

/// Where a spooled file's bytes are.
enum Body {
    /// An unnamed temporary file, rewound, to upload (or to copy to a local target whose
    /// directory did not exist).
    Upload { file: std::fs::File, size: u64, target: Option<PathBuf> },
    /// A local target's `.npy`: an unnamed file in its directory.
    Local(AtomicFile),
    /// A local target's `.npz`: an archive in a pending directory beside it.
    LocalNpz { dir: PendingDir, archive: PathBuf, target: PathBuf },
}

fn ext(kind: Kind) -> &'static str {
    kind.ext()
}

/// An I/O error while writing the object `location`.
fn io_error(e: std::io::Error, location: &Path) -> DataFusionError {
    external(npy_core::Error::from(e).writing(location.as_ref()))
}

/// The batches of one output file: as they come, or replayed from a
/// [`TextSpool`] after a first pass measured their text.
enum Input {
    Live(Receiver<RecordBatch>),
    Spooled(Box<SpooledBatchReader>),
}

impl Input {
    /// The batches of `rx`, and the text widths they need when `schema` leaves them to the
    /// data ([`npy_arrow::write::needs_text_widths`]): then every batch is spooled first,
    /// and the widths are the longest values of all of them. Blocks on `rx`.
    fn new(schema: &SchemaRef, mut rx: Receiver<RecordBatch>) -> npy_core::Result<(Input, Option<Vec<usize>>)> {
        if !npy_arrow::write::needs_text_widths(schema) {
            return Ok((Input::Live(rx), None));
        }
        let mut spool = TextSpool::new(schema)?;
        while let Some(batch) = rx.blocking_recv() {
            spool.write(&batch)?;
        }
        let (widths, batches) = spool.finish()?;
        Ok((Input::Spooled(Box::new(batches)), Some(widths)))
    }

    /// The next batch, `None` after the last. Blocks.
    fn next(&mut self) -> npy_core::Result<Option<RecordBatch>> {
        match self {
            Input::Live(rx) => Ok(rx.blocking_recv()),
            Input::Spooled(batches) => batches.next_batch(),
        }
    }
}

/// Writes the batches `rx` brings into a spool, through npy-arrow: beside `target`, the
/// local file of `location` (if local and its directory exists), else in the temporary
/// directory. Runs on a blocking thread (it waits for batches with `blocking_recv`).
fn spool(
    kind: Kind,
    location: &Path,
    target: Option<PathBuf>,
    schema: SchemaRef,
    rx: Receiver<RecordBatch>,
) -> Result<Spool> {
    // Errors name the object, never a spool.
    let named = |e: npy_core::Error| external(e.renamed(location.as_ref()).writing(location.as_ref()));
    // The query's columns, with a table's NumPy header only when it is exactly them (so
    // `SELECT *` keeps the table's dtype) and never its shape.
    let schema = npy_arrow::schema::derived_schema(&schema);
    let (mut input, widths) = Input::new(&schema, rx).map_err(named)?;
    let beside = target.clone().filter(|t| t.parent().is_some_and(std::path::Path::is_dir));
    match (kind, beside) {
        (Kind::Npy, Some(target)) => {
            let file = AtomicFile::create(target).map_err(named)?;
            let (file, rows) = write_npy(file, schema, widths, &mut input).map_err(named)?;
            Ok(Spool { body: Body::Local(file), rows })
        }
        (Kind::Npy, None) => {
            let file = tempfile::tempfile().map_err(|e| io_error(e, location))?;
            let (mut file, rows) = write_npy(file, schema, widths, &mut input).map_err(named)?;
            let size = file.stream_position().map_err(|e| io_error(e, location))?;
            file.seek(SeekFrom::Start(0)).map_err(|e| io_error(e, location))?;
            Ok(Spool { body: Body::Upload { file, size, target }, rows })
        }
        (Kind::Npz, beside) => {
            // NpzBatchWriter writes a named archive (its members' spools unnamed) in a
            // directory: a pending one, beside a local target or in the temporary
            // directory, so that a killed statement's is removed by a later one.
            let name = location.filename().unwrap_or("out.npz");
            let near = beside.clone().unwrap_or_else(|| std::env::temp_dir().join(name));
            let dir = PendingDir::create(near, PENDING_INFIX).map_err(named)?;
            let archive = dir.path().join(name);
            let mut writer = npy_arrow::NpzBatchWriter::create(&archive, schema).map_err(named)?;
            if let Some(widths) = &widths {
                writer.text_widths(widths).map_err(named)?;
            }
            let mut rows = 0u64;
            while let Some(batch) = input.next().map_err(named)? {
                writer.write(&batch).map_err(named)?;
                rows += batch.num_rows() as u64;
            }
            writer.finish().map_err(named)?;
            if let Some(target) = beside {
                return Ok(Spool { body: Body::LocalNpz { dir, archive, target }, rows });
            }
            // The open archive stays readable once its directory is gone.
            let file = std::fs::File::open(&archive).map_err(|e| io_error(e, location))?;
            let size = file.metadata().map_err(|e| io_error(e, location))?.len();
            drop(dir);
            Ok(Spool { body: Body::Upload { file, size, target }, rows })
        }
    }
}

/// Writes `input` as one `.npy` into `out` (text as wide as `widths` says, if given):
/// returns `out` and the rows written.
fn write_npy<W: Write + Seek>(
    out: W,
    schema: SchemaRef,
    widths: Option<Vec<usize>>,
    input: &mut Input,
) -> npy_core::Result<(W, u64)> {
    let mut writer = npy_arrow::BatchWriter::new(BufWriter::with_capacity(1 << 20, out), schema)?;
    if let Some(widths) = &widths {
        writer.text_widths(widths)?;
    }
    let mut rows = 0u64;
    while let Some(batch) = input.next()? {
        writer.write(&batch)?;
        rows += batch.num_rows() as u64;
    }
    let out = writer.finish()?.into_inner().map_err(|e| npy_core::Error::from(e.into_error()))?;
    Ok((out, rows))
}

/// Runs `work` on a blocking thread; its error names the object `location`.
async fn blocking(location: &Path, work: impl FnOnce() -> npy_core::Result<()> + Send + 'static) -> Result<()> {
    match SpawnedTask::spawn_blocking(work).join_unwind().await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(external(e.renamed(location.as_ref()).writing(location.as_ref()))),
        Err(e) => Err(DataFusionError::ExecutionJoin(Box::new(e))),
    }
}

/// Moves a spool to `location`: a local one into place, else an upload.
async fn upload(store: &Arc<dyn ObjectStore>, location: &Path, spool: Spool) -> Result<()> {
    match spool.body {
        Body::Local(file) => blocking(location, move || file.commit(true)).await,
        Body::LocalNpz { dir, archive, target } => {
            blocking(location, move || {
                let writing = |e: std::io::Error| npy_core::Error::from(e).writing(&target);
                std::fs::rename(&archive, &target).map_err(writing)?;
                drop(dir);
                let parent = target.parent().unwrap_or(std::path::Path::new("."));
                std::fs::File::open(parent).and_then(|d| d.sync_all()).map_err(writing)
            })
            .await
        }
        Body::Upload { mut file, target: Some(target), .. } => {
            // The target's directory did not exist when the file was spooled.
            blocking(location, move || {
                let writing = |e: std::io::Error| npy_core::Error::from(e).writing(&target);
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent).map_err(writing)?;
                }
                let mut out = AtomicFile::create(&target)?;
                std::io::copy(&mut file, &mut out).map_err(writing)?;
                out.commit(true)
            })
            .await
        }
        Body::Upload { file, size, target: None } => put(store, location, file, size).await,
    }
}

/// Uploads a spool of `size` bytes to `location` ([`npy_store::upload`]).
async fn put(store: &Arc<dyn ObjectStore>, location: &Path, file: std::fs::File, size: u64) -> Result<()> {
    npy_store::upload(store.clone(), location, file, size).await.map_err(external)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
    use datafusion::datasource::listing::ListingTableUrl;
    use datafusion::datasource::physical_plan::{FileGroup, FileOutputMode};
    use datafusion::execution::object_store::ObjectStoreUrl;
    use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
    use datafusion::prelude::SessionContext;
    use npy_core::prelude::*;
    use npy_core::types::Ucs4;

    fn batch(ids: std::ops::Range<i64>, text: &str) -> RecordBatch {
        let x: Vec<f64> = ids.clone().map(|i| i as f64 / 4.0).collect();
        let names: Vec<String> = ids.clone().map(|i| format!("{text}{i}")).collect();
        RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from_iter_values(ids)) as ArrayRef),
            ("x", Arc::new(Float64Array::from(x)) as ArrayRef),
            ("name", Arc::new(StringArray::from(names)) as ArrayRef),
        ])
        .unwrap()
    }

    fn config(target: &std::path::Path, kind: Kind, schema: SchemaRef) -> FileSinkConfig {
        let url = target.to_str().unwrap().to_string();
        FileSinkConfig {
            original_url: url.clone(),
            object_store_url: ObjectStoreUrl::local_filesystem(),
            file_group: FileGroup::default(),
            table_paths: vec![ListingTableUrl::parse(&url).unwrap()],
            output_schema: schema,
            table_partition_cols: vec![],
            insert_op: InsertOp::Append,
            keep_partition_by_columns: false,
            file_extension: ext(kind).to_string(),
            file_output_mode: FileOutputMode::SingleFile,
        }
    }

    /// Writes `batches` (then `Err(error)` if given) through an `NpySink` to `target`.
    async fn write(
        target: &std::path::Path,
        kind: Kind,
        batches: Vec<RecordBatch>,
        error: Option<&str>,
    ) -> Result<u64> {
        let schema = batches[0].schema();
        let mut items: Vec<Result<RecordBatch>> = batches.into_iter().map(Ok).collect();
        if let Some(e) = error {
            items.push(Err(DataFusionError::Execution(e.to_string())));
        }
        let stream = RecordBatchStreamAdapter::new(Arc::clone(&schema), futures::stream::iter(items));
        let sink = NpySink::new(config(target, kind, schema), kind);
        let ctx = SessionContext::new();
        DataSink::write_all(&sink, Box::pin(stream), &ctx.task_ctx()).await
    }

    fn listing(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[derive(Debug, PartialEq, NpyRecord)]
    struct Row {
        id: i64,
        x: f64,
    }

    #[derive(Debug, PartialEq, NpyRecord)]
    struct Named {
        id: i64,
        x: f64,
        name: Ucs4<7>,
    }

    #[tokio::test]
    async fn a_npy_file_holds_every_batch() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.npy");
        let rows = write(&out, Kind::Npy, vec![batch(0..3, "ab"), batch(3..5, "cd")], None).await.unwrap();
        assert_eq!(rows, 5);
        let array = npy_core::DynArray::read_npy(&out).unwrap();
        assert_eq!(array.dtype().descr(), "[('id', '<i8'), ('x', '<f8'), ('name', '<U3')]");
        assert_eq!(array.shape(), [5]);
        assert_eq!(listing(dir.path()), ["out.npy"]);
    }

    #[tokio::test]
    async fn a_npz_file_has_a_member_per_column() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.npz");
        write(&out, Kind::Npz, vec![batch(0..3, "ab"), batch(3..4, "cd")], None).await.unwrap();
        let mut archive = npy_core::npz::Reader::from_path(&out).unwrap();
        assert_eq!(archive.names(), ["id", "x", "name"]);
        assert_eq!(archive.read::<Vec<i64>>("id").unwrap(), [0, 1, 2, 3]);
        assert_eq!(archive.read::<Vec<f64>>("x").unwrap(), [0.0, 0.25, 0.5, 0.75]);
        assert_eq!(listing(dir.path()), ["out.npz"]);
    }

    #[tokio::test]
    async fn an_input_error_leaves_no_file() {
        for kind in [Kind::Npy, Kind::Npz] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join(format!("out.{}", ext(kind)));
            let e = write(&out, kind, vec![batch(0..3, "ab")], Some("the input broke")).await.unwrap_err();
            assert!(e.to_string().contains("the input broke"), "{e}");
            assert!(listing(dir.path()).is_empty(), "{kind:?}: {:?}", listing(dir.path()));
        }
    }

    #[tokio::test]
    async fn the_longest_text_of_any_batch_sets_the_width() {
        // "ab0".."ab2", then "longer3", "longer4": U7, though the first batch needs U3.
        let names: Vec<String> = (0..5).map(|i| format!("{}{i}", if i < 3 { "ab" } else { "longer" })).collect();
        for kind in [Kind::Npy, Kind::Npz] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join(format!("out.{}", ext(kind)));
            write(&out, kind, vec![batch(0..3, "ab"), batch(3..5, "longer")], None).await.unwrap();
            let got: Vec<String> = match kind {
                Kind::Npy => {
                    let array = npy_core::DynArray::read_npy(&out).unwrap();
                    assert_eq!(array.dtype().descr(), "[('id', '<i8'), ('x', '<f8'), ('name', '<U7')]");
                    let rows: Vec<Named> = Vec::read_npy(&out).unwrap();
                    assert!(rows.iter().enumerate().all(|(i, r)| r.id == i as i64 && r.x == i as f64 / 4.0));
                    rows.iter().map(|r| r.name.to_string()).collect()
                }
                Kind::Npz => {
                    let mut archive = npy_core::npz::Reader::from_path(&out).unwrap();
                    assert_eq!(archive.read::<DynArray>("name").unwrap().dtype().descr(), "'<U7'");
                    archive.read::<Vec<Ucs4<7>>>("name").unwrap().iter().map(ToString::to_string).collect()
                }
            };
            assert_eq!(got, names, "{kind:?}");
            // The IPC spool and the npy spools are unnamed: only the output is left.
            assert_eq!(listing(dir.path()), [format!("out.{}", ext(kind))]);
        }
    }

    #[tokio::test]
    async fn a_value_the_dtype_cannot_hold_leaves_no_file_and_names_it() {
        // A null id: an integer column has no null.
        let with_null = RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(vec![Some(7), None])) as ArrayRef),
            ("x", Arc::new(Float64Array::from(vec![0.5, 1.5])) as ArrayRef),
            ("name", Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef),
        ])
        .unwrap();
        for kind in [Kind::Npy, Kind::Npz] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join(format!("out.{}", ext(kind)));
            let e = write(&out, kind, vec![batch(0..3, "ab"), with_null.clone()], None).await.unwrap_err();
            let message = e.to_string();
            let object = out.to_str().unwrap().trim_start_matches('/');
            assert!(message.contains(&format!("writing '{object}'")), "{message}");
            assert!(message.contains("null"), "{message}");
            assert!(listing(dir.path()).is_empty(), "{kind:?}: {:?}", listing(dir.path()));
        }
    }

    /// Batches of ids (nullable) and x, no text: written as they come.
    fn numbers(ids: std::ops::Range<i64>, null_at: Option<i64>) -> RecordBatch {
        let id: Int64Array = ids.clone().map(|i| (Some(i) != null_at).then_some(i)).collect();
        let x: Vec<f64> = ids.map(|i| i as f64).collect();
        RecordBatch::try_from_iter([
            ("id", Arc::new(id) as ArrayRef),
            ("x", Arc::new(Float64Array::from(x)) as ArrayRef),
        ])
        .unwrap()
    }

    /// Many more batches than the channels between the demuxer and the writer hold, with
    /// the writer failing on the second (a null id), or the input failing after the last:
    /// the statement ends with the error, whether the batches are written as they come or
    /// spooled for their text first, and leaves no file. A side left waiting on the other
    /// would hang: the timeout turns that into a failure.
    #[tokio::test]
    async fn a_failing_writer_or_input_amid_many_batches_ends_the_statement() {
        let limit = std::time::Duration::from_secs(60);
        for (kind, text) in [(Kind::Npy, false), (Kind::Npz, false), (Kind::Npy, true), (Kind::Npz, true)] {
            let make = |k: i64, null_at| {
                let ids = k * 10..k * 10 + 10;
                if text {
                    let names: Vec<String> = ids.clone().map(|i| format!("t{i}")).collect();
                    let plain = numbers(ids, null_at);
                    RecordBatch::try_from_iter([
                        ("id", plain.column(0).clone()),
                        ("x", plain.column(1).clone()),
                        ("name", Arc::new(StringArray::from(names)) as ArrayRef),
                    ])
                    .unwrap()
                } else {
                    numbers(ids, null_at)
                }
            };
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join(format!("out.{}", ext(kind)));
            // The writer fails on batch 1 of 300.
            let batches: Vec<RecordBatch> = (0..300).map(|k| make(k, Some(15))).collect();
            let e = tokio::time::timeout(limit, write(&out, kind, batches, None)).await.expect("hung").unwrap_err();
            assert!(e.to_string().contains("null"), "{kind:?} text {text}: {e}");
            assert!(listing(dir.path()).is_empty(), "{kind:?}: {:?}", listing(dir.path()));
            // The input fails after 300 good batches.
            let batches: Vec<RecordBatch> = (0..300).map(|k| make(k, None)).collect();
            let e = tokio::time::timeout(limit, write(&out, kind, batches, Some("the input broke late")))
                .await
                .expect("hung")
                .unwrap_err();
            assert!(e.to_string().contains("the input broke late"), "{kind:?} text {text}: {e}");
            assert!(listing(dir.path()).is_empty(), "{kind:?}: {:?}", listing(dir.path()));
        }
    }

    #[tokio::test]
    async fn the_rows_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rows.npy");
        let batches = [batch(0..4, "a"), batch(4..9, "b")];
        let projected: Vec<RecordBatch> = batches.iter().map(|b| b.project(&[0, 1]).unwrap()).collect();
        write(&out, Kind::Npy, projected, None).await.unwrap();
        let rows: Vec<Row> = Vec::read_npy(&out).unwrap();
        let want: Vec<Row> = (0..9).map(|i| Row { id: i, x: i as f64 / 4.0 }).collect();
        assert_eq!(rows, want);
    }

    #[tokio::test]
    async fn overwrites_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let b = batch(0..1, "a");
        let input =
            datafusion::datasource::memory::MemorySourceConfig::try_new_exec(&[vec![b.clone()]], b.schema(), None)
                .unwrap();
        let mut conf = config(&dir.path().join("o.npy"), Kind::Npy, b.schema());
        conf.insert_op = InsertOp::Overwrite;
        let e = writer_plan(input, conf, None, Kind::Npy, &NpyReadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("only appending"), "{e}");
    }

    #[tokio::test]
    async fn the_local_file_system_is_recognised_and_nothing_else() {
        let ctx = SessionContext::new();
        let b = batch(0..1, "a");
        let conf = config(std::path::Path::new("/tmp/x.npy"), Kind::Npy, b.schema());
        let local = ctx.runtime_env().object_store(ObjectStoreUrl::local_filesystem()).unwrap();
        assert!(is_local(local.as_ref(), &conf));
        let memory = object_store::memory::InMemory::new();
        assert!(!is_local(&memory, &conf));
        let prefixed = object_store::local::LocalFileSystem::new_with_prefix("/tmp").unwrap();
        assert!(!is_local(&prefixed, &conf));
        let location = Path::from("tmp/a b/x.npy");
        assert_eq!(local_path(&location).unwrap(), std::path::Path::new("/tmp/a b/x.npy"));
    }

    /// A target whose directory does not exist yet: the directory is made at the end, and
    /// holds the file alone.
    #[tokio::test]
    async fn a_target_in_a_new_directory_is_written_whole() {
        for kind in [Kind::Npy, Kind::Npz] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("new/sub").join(format!("out.{}", ext(kind)));
            write(&out, kind, vec![batch(0..3, "ab")], None).await.unwrap();
            assert_eq!(listing(&dir.path().join("new/sub")), [format!("out.{}", ext(kind))]);
        }
    }

    /// A killed statement's archive directory beside a `.npz` target (its lock gone with
    /// it) is removed by the next write there; a new `.npy` replaces an old one.
    #[tokio::test]
    async fn a_killed_statements_directory_is_removed_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let left = dir.path().join(".out.npz.npy-sql.Ab12Cd");
        std::fs::create_dir(&left).unwrap();
        std::fs::write(left.join("out.npz"), b"half").unwrap();
        let out = dir.path().join("other.npz");
        write(&out, Kind::Npz, vec![batch(0..3, "ab")], None).await.unwrap();
        assert_eq!(listing(dir.path()), ["other.npz"]);
        let npy = dir.path().join("other.npy");
        std::fs::write(&npy, b"old").unwrap();
        write(&npy, Kind::Npy, vec![batch(0..2, "ab")], None).await.unwrap();
        assert_eq!(npy_core::DynArray::read_npy(&npy).unwrap().shape(), [2]);
        assert_eq!(listing(dir.path()), ["other.npy", "other.npz"]);
    }
}
