//! `npy sql "SELECT ..." --table NAME=LOCATION`: SQL over `.npy`/`.npz` files, directories
//! and buckets, through Apache DataFusion (npy-datafusion). Built with feature `sql`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::ScalarValue;
use datafusion::error::DataFusionError;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::{Expr, LogicalPlan, Projection};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use npy_arrow::formats::Sink;
use npy_core::header::FileKind;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::render::{self, NonFinite};
use crate::{report, sql_text};

/// The long help of `npy sql`.
pub const HELP: &str = "\
Run one SQL query (Apache DataFusion's dialect) over tables of .npy or .npz files, each
given as --table NAME=LOCATION: a .npy file, a .npz file (a column per member), a
directory of .npy files or of .npz files (in its folders too, sorted by path: the files
npy.open and npy.scan read there), a glob pattern, or a URL (s3://bucket/dir/, a folder
of archives when its name ends in .npz/, gs://, az://, http(s)://; credentials and
endpoints from the environment, as AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL,
GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT_NAME). A table's columns are its
records' fields (nested records as structs, subarrays as lists), or `values` for an
array of scalars.

Values print as `npy dump` writes them: NumPy's text for each value (0.004, nan, b'ab',
2020-01-01), JSON lines with NaN, Infinity, -Infinity; CSV and table cells flattened as
`npy dump --format csv` names them (receiver.x, samples[0]: NumPy's index from 0, where
SQL's samples[1] is the first item); a null is an empty cell, or null in JSON. Result
columns of field accesses and indexing are named as DuckDB names them: receiver.x and
t.receiver.x are x, samples[1] is samples[1] (an AS names a column as it says).

The result goes to stdout as a table (held whole to size the columns), CSV or JSON lines
(streamed), or with --out to a file written atomically, its format by extension: .npy,
.npz (a member per column), .parquet, .arrow. `COPY (...) TO 'out.npy'` and `INSERT INTO`
also work in the query. --option KEY=VALUE sets a read setting for every table, as the
OPTIONS of CREATE EXTERNAL TABLE ... STORED AS NPY do (batch_rows=N, days_as_int64=true,
residue=true).

--map-local-files maps local .npy files into memory instead of reading them, so that a
query touches only the bytes of the fields it uses: filters, top-k (ORDER BY ... LIMIT)
and queries of a few fields of wide records run several times faster. It is your promise
that nothing modifies or truncates the files while the query runs. If something does, a
file cut shorter fails the query, or kills the tool with SIGBUS when it is cut while being
read (no --out file is left behind), and a file written over in place can give a wrong
answer without an error. Replacing a file by
renaming another over it, as npy and most tools write, keeps the promise.

With --ballista df://HOST:PORT (feature ballista) the query runs on an Apache Ballista
cluster of npy-ballista-scheduler and npy-ballista-executor processes: local tables must
be at the same paths on its machines, or in a bucket; COPY, INSERT INTO and --out work
there too (--out writes here, COPY and INSERT where the executors run). --ballista alone
starts a one-executor cluster inside this process.

Example:
  npy sql \"SELECT sensor, avg(value) FROM r GROUP BY sensor ORDER BY sensor\" --table r=readings/";

/// How the result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table, as DataFusion's CLI prints it.
    Table,
    /// CSV with a header line.
    Csv,
    /// One JSON object per row.
    Json,
}

/// Run SQL over .npy/.npz files, directories and buckets (Apache DataFusion); print
/// the result as a table, CSV or JSON lines, or write it to a file.
#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// The query, e.g. "SELECT count(*) FROM t".
    query: String,
    /// A table: NAME=LOCATION, a .npy or .npz file, a directory, or a URL (s3://...).
    /// Repeat for more tables.
    #[arg(long = "table", value_name = "NAME=LOCATION", value_parser = table_arg)]
    tables: Vec<(String, String)>,
    /// A read setting for every table, as the OPTIONS of CREATE EXTERNAL TABLE ...
    /// STORED AS NPY: batch_rows=N, days_as_int64=true, residue=true. Repeat for more.
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = option_arg)]
    options: Vec<(String, String)>,
    /// Map local .npy files instead of reading them: faster filters, top-k and narrow
    /// queries. Your promise that nothing modifies or truncates the files while the query
    /// runs (breaking it can kill the tool or give wrong answers; see --help).
    #[arg(long)]
    #[cfg_attr(feature = "ballista", arg(conflicts_with = "ballista"))]
    map_local_files: bool,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the result to this file instead (atomically; format by extension: .npy,
    /// .npz, .parquet, .arrow).
    #[arg(long, value_name = "FILE", conflicts_with = "format")]
    out: Option<PathBuf>,
    /// Run the query on an Apache Ballista cluster instead of in plain DataFusion: the one
    /// whose npy-ballista-scheduler listens at df://HOST:PORT, or without a value one
    /// started in this process (a scheduler and an executor on loopback).
    #[cfg(feature = "ballista")]
    #[arg(long, value_name = "df://HOST:PORT", num_args = 0..=1, default_missing_value = "", value_parser = cluster_arg)]
    ballista: Option<String>,
}

/// Parses `--ballista`'s value: a scheduler's `df://HOST[:PORT]`, or nothing.
#[cfg(feature = "ballista")]
fn cluster_arg(arg: &str) -> Result<String, String> {
    if arg.is_empty() || (arg.starts_with("df://") && arg.len() > "df://".len()) {
        Ok(arg.to_string())
    } else {
        Err("not a scheduler's df://HOST:PORT (for a cluster in this process, give --ballista after the query \
             with no value)"
            .to_string())
    }
}

/// Parses `NAME=LOCATION`.
fn table_arg(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((name, location)) if !name.is_empty() && !location.is_empty() => {
            Ok((name.to_string(), location.to_string()))
        }
        _ => Err(format!("'{arg}' is not NAME=LOCATION (a file, a directory or a URL)")),
    }
}

/// Parses `KEY=VALUE` (the value may be empty; the key may not).
fn option_arg(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => Ok((key.trim().to_string(), value.to_string())),
        _ => Err(format!("'{arg}' is not KEY=VALUE (batch_rows=N, days_as_int64=true, residue=true)")),
    }
}

/// Runs the query and reports its error as the tool does; the exit code.
///
/// Exit code 2 only for a usage error of the command line (a bad `--option`, an `--out`
/// of no known format), found before the query runs; every error while it runs, whatever
/// its kind, is about the tables or the query (1).
pub fn run(args: &Args) -> ExitCode {
    let places = Places::of(&args.tables);
    let mut read = match NpyReadOptions::from_table_options(&args.options.iter().cloned().collect()) {
        Ok(read) => read,
        Err(e) => return error(e, &places, report::USAGE),
    };
    if args.map_local_files {
        read.map_local_files(promised());
    }
    if let Some(out) = &args.out {
        if let Err(e) = npy_arrow::formats::Format::of(out) {
            return report::error(&e.writing(out));
        }
    }
    // Few blocking threads: each table's files have their headers read at once, and a
    // thread started for each read costs more than the read (39 threads for 16 files).
    let blocking = std::thread::available_parallelism().map_or(2, |n| n.get()) * 2;
    let runtime = tokio::runtime::Builder::new_multi_thread().max_blocking_threads(blocking).enable_all().build();
    let result = match runtime {
        Ok(runtime) => runtime.block_on(query(args, read)),
        Err(e) => Err(DataFusionError::IoError(e)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => error(e, &places, report::FAILURE),
    }
}

/// The maps' contract, accepted for the person running the tool: the tool's one `unsafe`.
#[allow(unsafe_code)]
fn promised() -> npy_core::mmap::MapContract {
    // SAFETY: only called for `--map-local-files`, whose help states the promise the
    // contract asks for: nothing modifies or truncates the tables' files while the query
    // runs. The maps live no longer than the query (its scans own them).
    unsafe { npy_core::mmap::MapContract::accept() }
}

/// Prints a query's error in the tool's style: npy's own errors as [`report`] does (where,
/// then what, the file as the user named it), the others with DataFusion's message; exit
/// code `code`. A reader that stopped early (`npy sql ... | head`) is not an error.
fn error(e: DataFusionError, places: &Places, code: u8) -> ExitCode {
    let text = match e.find_root() {
        DataFusionError::External(inner) => match inner.downcast_ref::<npy_core::Error>() {
            Some(npy) if matches!(npy.kind(), npy_core::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe) => {
                return ExitCode::SUCCESS
            }
            Some(npy) => places.user_paths(npy, report::line(npy)),
            None => e.to_string(),
        },
        DataFusionError::IoError(io) if io.kind() == std::io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
        DataFusionError::ArrowError(a, _) if matches!(&**a, ArrowError::IoError(_, io) if io.kind() == std::io::ErrorKind::BrokenPipe) => {
            return ExitCode::SUCCESS
        }
        _ => e.to_string(),
    };
    report::text(&sql_flags(&text), code)
}

/// The tool's hints as `npy sql` spells the options: `--option KEY=VALUE`.
fn sql_flags(text: &str) -> String {
    text.replace("(rerun with --days-as-int64)", "(rerun with --option days_as_int64=true)")
        .replace("--residue keeps such text", "--option residue=true keeps such text")
}

/// Where each table's files are in their object stores, to name a file in an error as the
/// user would: object store paths have no leading `/` and no bucket.
struct Places(Vec<(String, String)>);

impl Places {
    /// The store path prefix of every table's location, and what stands before a path
    /// in it for the user: `/` for local files, the bucket's URL for others.
    fn of(tables: &[(String, String)]) -> Places {
        let mut places = Vec::new();
        for (_, raw) in tables {
            if npy_store::is_url(raw) {
                if let Ok(at) = npy_store::store_for(raw) {
                    places.push((at.path.to_string(), at.base.to_string()));
                }
            } else if let Some(path) = std::fs::canonicalize(raw).ok().as_deref().and_then(Path::to_str) {
                // DataFusion lists a local table at its canonical path.
                places.push((path.trim_start_matches('/').to_string(), "/".to_string()));
            }
        }
        Places(places)
    }

    /// `line`, the one-line report of `e`, with the file `e` names as the user knows it.
    fn user_paths(&self, e: &npy_core::Error, line: String) -> String {
        let Some(path) = e.path().and_then(Path::to_str) else { return line };
        let Some((_, before)) =
            self.0.iter().find(|(prefix, _)| !path.starts_with('/') && path.starts_with(prefix.as_str()))
        else {
            return line;
        };
        let user = format!("{before}{path}");
        line.replacen(&format!("'{path}'"), &format!("'{user}'"), 1)
    }
}

/// Whether the table at `raw` is of `.npz` archives: whether the files npy-store finds
/// there are (a directory's, a pattern's or a URL prefix's are all of one kind); for any
/// other URL, or a prefix with nothing under it, whether its name ends in `.npz` (a
/// bucket folder of archives: `s3://b/runs.npz/`).
async fn holds_archives(raw: &str) -> Result<bool, DataFusionError> {
    let ends_npz = |p: &str| FileKind::of_name(p.trim_end_matches('/')) == Some(FileKind::Zip);
    if npy_store::is_url(raw) {
        if ends_npz(raw) || !raw.ends_with('/') {
            return Ok(ends_npz(raw));
        }
        return Ok(match npy_store::find_files(raw).await {
            Ok(found) => found.first().is_some_and(|f| ends_npz(f)),
            Err(_) => false,
        });
    }
    let found = npy_store::find(raw).map_err(npy_error)?;
    Ok(found.first().and_then(|p| p.to_str()).is_some_and(ends_npz))
}

async fn query(args: &Args, read: NpyReadOptions) -> Result<(), DataFusionError> {
    let ctx = context(args).await?;
    for (name, raw) in &args.tables {
        let npz = holds_archives(raw).await?;
        // A FIFO given as a table would hang the scan's open (it waits for a writer):
        // refused by name, never opened (a directory's listing skips FIFOs).
        if !npy_store::is_url(raw) && std::fs::metadata(raw).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            npy_core::open_file(raw).map_err(npy_error)?;
        }
        if npy_store::is_url(raw) {
            // The bucket's (or host's) store, as npy-store makes it from the URL and the
            // environment; local files are DataFusion's own.
            let at = npy_store::store_for(raw).map_err(npy_error)?;
            ctx.register_object_store(&at.base, at.store);
        }
        if npz {
            ctx.register_npz(name.as_str(), raw, &read).await?;
        } else {
            ctx.register_npy(name.as_str(), raw, &read).await?;
        }
    }
    let frame = ctx.sql(&args.query).await?;
    let names = result_names(frame.logical_plan());
    let stream = renamed(frame.execute_stream().await?, names)?;
    match &args.out {
        Some(path) => write_file(stream, path).await,
        None => print(stream, args.format).await,
    }
}

/// The result's column names as DuckDB gives them where DataFusion's differ, for the
/// final projection's field accesses and indexing: `x` for `receiver.x` or
/// `t.receiver.x` (DataFusion: `t.receiver[x]`), `samples[1]` for `samples[1]`
/// (`t.samples[Int64(1)]`), `samples[1:2]` for a slice. An explicit `AS` and every other
/// expression keep their names, as does a name that would then be given twice. `None`
/// where nothing changes (or the plan ends in no projection: DML, COPY, EXPLAIN).
fn result_names(plan: &LogicalPlan) -> Option<Vec<String>> {
    let projection = top_projection(plan)?;
    let schema = plan.schema();
    let old: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut new: Vec<String> = (projection.expr.iter().zip(&old))
        .map(|(e, name)| duckdb_name(below(e, projection)).unwrap_or_else(|| name.clone()))
        .collect();
    for i in 0..new.len() {
        let clash = (new.iter().enumerate()).any(|(j, n)| j != i && *n == new[i])
            || (new[i] != old[i] && old.contains(&new[i]));
        if clash {
            new[i] = old[i].clone();
        }
    }
    (new.len() == old.len() && new != old).then_some(new)
}

/// The projection whose expressions name the plan's output: the plan, or below it through
/// nodes that keep their input's columns (ORDER BY, LIMIT, DISTINCT, UNION's first input).
fn top_projection(plan: &LogicalPlan) -> Option<&Projection> {
    match plan {
        LogicalPlan::Projection(p) => Some(p),
        other => {
            let first = *other.inputs().first()?;
            let names = |p: &LogicalPlan| p.schema().fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
            (names(other) == names(first)).then(|| top_projection(first)).flatten()
        }
    }
}

/// The expression a column of `projection` is computed by in a projection below it (an
/// ORDER BY of a column not selected puts the accesses in a projection under the sort),
/// or `e` itself.
fn below<'a>(e: &'a Expr, projection: &'a Projection) -> &'a Expr {
    let Expr::Column(c) = e else { return e };
    let mut plan = projection.input.as_ref();
    loop {
        match plan {
            LogicalPlan::Projection(p) => {
                let at = p.schema.fields().iter().position(|f| f.name() == &c.name);
                return at.and_then(|i| p.expr.get(i)).unwrap_or(e);
            }
            LogicalPlan::Sort(_) | LogicalPlan::Limit(_) | LogicalPlan::Filter(_) => match plan.inputs().first() {
                Some(input) => plan = input,
                None => return e,
            },
            _ => return e,
        }
    }
}

/// DuckDB's name for a projected expression that is a field access or an index.
fn duckdb_name(e: &Expr) -> Option<String> {
    match e {
        Expr::ScalarFunction(f) if f.func.name() == "get_field" => match f.args.last()? {
            Expr::Literal(ScalarValue::Utf8(Some(name)) | ScalarValue::Utf8View(Some(name)), _) => Some(name.clone()),
            _ => None,
        },
        Expr::ScalarFunction(f) if matches!(f.func.name(), "array_element" | "array_slice") => access_text(e),
        _ => None,
    }
}

/// A field access or index as written in SQL, without the table's name: `receiver.x`,
/// `samples[1]`, `grid[1][2]`, `samples[1:2]`.
fn access_text(e: &Expr) -> Option<String> {
    let literal = |e: &Expr| match e {
        Expr::Literal(v, _) if !v.is_null() => Some(v.to_string()),
        _ => None,
    };
    match e {
        Expr::Column(c) => Some(c.name.clone()),
        Expr::Cast(c) => access_text(&c.expr),
        Expr::ScalarFunction(f) => {
            let (base, rest) = f.args.split_first()?;
            let base = access_text(base)?;
            match (f.func.name(), rest) {
                ("get_field", fields) => {
                    let names: Option<Vec<String>> = fields.iter().map(literal).collect();
                    Some(format!("{base}.{}", names?.join(".")))
                }
                ("array_element", [i]) => Some(format!("{base}[{}]", literal(i)?)),
                ("array_slice", [from, to]) => Some(format!("{base}[{}:{}]", literal(from)?, literal(to)?)),
                ("array_slice", [from, to, stride]) => match literal(stride)?.as_str() {
                    "1" => Some(format!("{base}[{}:{}]", literal(from)?, literal(to)?)),
                    stride => Some(format!("{base}[{}:{}:{stride}]", literal(from)?, literal(to)?)),
                },
                _ => None,
            }
        }
        _ => None,
    }
}

/// `stream` with its columns named `names` (when given).
fn renamed(
    stream: SendableRecordBatchStream,
    names: Option<Vec<String>>,
) -> Result<SendableRecordBatchStream, DataFusionError> {
    let Some(names) = names else { return Ok(stream) };
    let old = stream.schema();
    let fields: Vec<Field> =
        old.fields().iter().zip(names).map(|(f, name)| f.as_ref().clone().with_name(name)).collect();
    let schema = Arc::new(Schema::new_with_metadata(fields, old.metadata().clone()));
    let to = Arc::clone(&schema);
    let batches = stream.map(move |batch| Ok(RecordBatch::try_new(Arc::clone(&to), batch?.columns().to_vec())?));
    Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
}

/// The session the query runs in, knowing npy's formats (so that `COPY ... TO 'x.npy'`
/// and `STORED AS NPY` work): plain DataFusion, or with `--ballista` (feature `ballista`) a
/// session on the cluster at its `df://` URL, or on a standalone cluster started here,
/// which ends with the tool.
async fn context(_args: &Args) -> Result<SessionContext, DataFusionError> {
    #[cfg(feature = "ballista")]
    if let Some(url) = &_args.ballista {
        let state = npy_ballista::ballista_state(datafusion::prelude::SessionConfig::new())?;
        return match url.as_str() {
            "" => npy_ballista::standalone(state, CLUSTER_START).await,
            url => npy_ballista::remote(url, state).await,
        };
    }
    let mut state = datafusion::execution::session_state::SessionStateBuilder::new().with_default_features().build();
    npy_datafusion::register(&mut state)?;
    Ok(SessionContext::new_with_state(state))
}

/// How long `--ballista` waits for its cluster to start (it takes well under a second).
#[cfg(feature = "ballista")]
const CLUSTER_START: std::time::Duration = std::time::Duration::from_secs(60);

fn npy_error(e: npy_core::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Writes the result to `path` through npy-arrow's one writer of every format (atomic),
/// from the result's own columns: a table's NumPy header in the schema's metadata is kept
/// only when it is exactly the result's columns, and never its shape
/// ([`npy_arrow::schema::derived_schema`]).
async fn write_file(mut stream: SendableRecordBatchStream, path: &Path) -> Result<(), DataFusionError> {
    let schema = npy_arrow::schema::derived_schema(&stream.schema());
    let mut sink = Sink::create(path, schema.clone()).map_err(npy_error)?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        let batch = RecordBatch::try_new_with_options(schema.clone(), batch.columns().to_vec(), &options)?;
        sink.write(&batch).map_err(npy_error)?;
    }
    sink.finish().map_err(npy_error)
}

/// Prints the result as `npy dump` and `npy head` write values ([`sql_text`]): a table
/// (held whole to size its columns), CSV or JSON lines (streamed).
async fn print(mut stream: SendableRecordBatchStream, format: Format) -> Result<(), DataFusionError> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let schema = plain_schema(&stream.schema());
    let mut text = String::new();
    match format {
        Format::Table => {
            let names = sql_text::column_names(&schema);
            let mut rows: Vec<Vec<String>> = Vec::new();
            while let Some(batch) = stream.next().await {
                let columns = plain_columns(&batch?, &schema)?;
                for i in 0..columns.first().map_or(0, |c| c.len()) {
                    let mut row = Vec::with_capacity(names.len());
                    for (field, column) in schema.fields().iter().zip(&columns) {
                        sql_text::cells(field, column.as_ref(), i, &mut row);
                    }
                    rows.push(row);
                }
            }
            writeln!(out, "{}", boxed(&names, &rows))?;
        }
        Format::Csv => {
            let names = sql_text::column_names(&schema);
            let header: Vec<_> = names.iter().map(|n| render::csv_field(n)).collect();
            writeln!(out, "{}", header.join(","))?;
            let mut row = Vec::new();
            while let Some(batch) = stream.next().await {
                let columns = plain_columns(&batch?, &schema)?;
                for i in 0..columns.first().map_or(0, |c| c.len()) {
                    row.clear();
                    for (field, column) in schema.fields().iter().zip(&columns) {
                        sql_text::cells(field, column.as_ref(), i, &mut row);
                    }
                    let cells: Vec<_> = row.iter().map(|c| render::csv_field(c)).collect();
                    writeln!(out, "{}", cells.join(","))?;
                }
            }
        }
        Format::Json => {
            while let Some(batch) = stream.next().await {
                let columns = plain_columns(&batch?, &schema)?;
                for i in 0..columns.first().map_or(0, |c| c.len()) {
                    text.clear();
                    sql_text::json_row(&schema, &columns, i, NonFinite::Python, &mut text);
                    writeln!(out, "{text}")?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// `schema` with dictionary columns as their values' type (as they are printed).
fn plain_schema(schema: &Schema) -> Schema {
    let fields: Vec<Field> = (schema.fields().iter())
        .map(|f| match f.data_type() {
            DataType::Dictionary(_, values) => f.as_ref().clone().with_data_type(values.as_ref().clone()),
            _ => f.as_ref().clone(),
        })
        .collect();
    Schema::new(fields)
}

/// The columns of `batch` as `plain_schema` types them.
fn plain_columns(batch: &RecordBatch, schema: &Schema) -> Result<Vec<ArrayRef>, DataFusionError> {
    (batch.columns().iter().zip(schema.fields()))
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(Arc::clone(c))
            } else {
                Ok(datafusion::arrow::compute::cast(c, f.data_type())?)
            }
        })
        .collect()
}

/// A table as DataFusion's CLI draws one: a row of names and rows of cells, left-aligned
/// in boxes (a line break in a cell shown as `\n`).
fn boxed(names: &[String], rows: &[Vec<String>]) -> String {
    let one_line = |s: &str| s.replace('\n', "\\n").replace('\r', "\\r");
    let names: Vec<String> = names.iter().map(|n| one_line(n)).collect();
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(|c| one_line(c)).collect()).collect();
    let mut widths: Vec<usize> = names.iter().map(|n| n.chars().count()).collect();
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let rule: String = widths.iter().map(|w| format!("+{}", "-".repeat(w + 2))).collect::<String>() + "+";
    let line = |cells: &[String]| {
        let mut line = String::new();
        for (c, &w) in cells.iter().zip(&widths) {
            line.push_str("| ");
            render::push_padded(&mut line, c, w, false);
            line.push(' ');
        }
        line.push('|');
        line
    };
    let mut out = vec![rule.clone(), line(&names), rule.clone()];
    out.extend(rows.iter().map(|r| line(r)));
    out.push(rule);
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_args_need_a_name_and_a_location() {
        assert_eq!(table_arg("t=data/").unwrap(), ("t".to_string(), "data/".to_string()));
        assert_eq!(table_arg("t=s3://b/k=v/").unwrap(), ("t".to_string(), "s3://b/k=v/".to_string()));
        assert!(table_arg("t").unwrap_err().contains("'t' is not NAME=LOCATION"));
        assert!(table_arg("=x").is_err());
        assert!(table_arg("t=").is_err());
    }
}
