//! npy tables on a standalone Ballista cluster (scheduler + executor in this process, on
//! loopback): the same SQL as a plain DataFusion context over the same files, with the same
//! answers, both equal to what npy-core reads from the files; the codecs' round trips; a
//! scan of a corrupt file failing with an error that names it. Tables of `.npy` files and
//! of `.npz` archives (stored and deflated members).
//!
//! Each `#[tokio::test]` has its own runtime, and a cluster's tasks end with it: one cluster
//! per test.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use npy_ballista::{physical_codec, NpyLogicalCodec};
use npy_core::prelude::*;
use npy_core::types::Ucs4;
use npy_datafusion::{Kind, NpyFormatFactory, NpyReadOptions, SessionContextNpyExt};

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// Start-up takes well under a second; a minute leaves room for a loaded machine.
const START: Duration = Duration::from_secs(60);
/// Longest a query may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(120);

// ---- the files ----------------------------------------------------------------------------

/// Where a receiver stood.
#[derive(NpyRecord, Clone, Copy, Debug, PartialEq)]
#[npy(endian = "big")]
struct Receiver {
    x: f64,
    y: f64,
    z: f32,
}

/// A trace: big-endian, a nested record, a 4-byte gap after `trace_id` and 7 bytes of
/// padding at the end (`itemsize` 48, fields 37 bytes).
#[derive(NpyRecord, Clone, Copy, Debug, PartialEq)]
#[npy(endian = "big", itemsize = 48)]
struct Trace {
    trace_id: i32,
    #[npy(offset = 8)]
    receiver: Receiver,
    t0: f64,
    station: u8,
}

/// A station (little-endian, a text column): the other side of the join.
#[derive(NpyRecord, Clone, Copy, Debug)]
struct Station {
    id: u8,
    name: Ucs4<8>,
}

/// Trace `i`. Every float is a multiple of 1/4 far below 2^53, so sums in any order are
/// exact and both engines' answers compare with `==`.
fn trace(i: usize) -> Trace {
    Trace {
        trace_id: i as i32,
        receiver: Receiver { x: (i % 10) as f64 * 2.5, y: -(i as f64), z: (i % 3) as f32 },
        t0: i as f64 * 0.5,
        station: (i % 5) as u8,
    }
}

/// Files of the traces table: one of 3000 records, the others 0 to 22.
const FILES: usize = 40;
/// Stations 0..4; traces at station 4 have none, so the join drops them.
const STATIONS: u8 = 4;

/// The generated tables under one temporary directory.
struct Data {
    _dir: tempfile::TempDir,
    traces: PathBuf,
    /// The large file of `traces`, also a table of its own.
    big: PathBuf,
    stations: PathBuf,
    /// A directory of `.npz` archives (even ones stored, odd ones deflated), each with a
    /// record member `trace` and a plain member `w`: the `shots` table.
    archives: PathBuf,
}

fn generate() -> npy_core::Result<Data> {
    let dir = tempfile::tempdir()?;
    let traces = dir.path().join("traces");
    std::fs::create_dir(&traces)?;
    let mut next = 0;
    for f in 0..FILES {
        // One large file (split into row ranges across partitions), one empty.
        let rows = if f == 0 { 3000 } else { (f * 7) % 23 };
        let records: Vec<Trace> = (next..next + rows).map(trace).collect();
        next += rows;
        records.write_npy(traces.join(format!("part-{f:03}.npy")))?;
    }
    let stations = dir.path().join("stations.npy");
    let list: Vec<Station> = (0..STATIONS)
        .map(|id| Ok(Station { id, name: Ucs4::new(&format!("st-{id}"))? }))
        .collect::<npy_core::Result<_>>()?;
    list.write_npy(&stations)?;
    let big = traces.join("part-000.npy");
    let archives = dir.path().join("archives");
    std::fs::create_dir(&archives)?;
    for a in 0..12usize {
        let rows = a * 5 + 1;
        let mut w = npy_core::npz::Writer::create(archives.join(format!("a-{a:02}.npz")))?;
        if a % 2 == 1 {
            w.compression(npy_core::npz::Compression::Deflated { level: 6 });
        }
        w.add("trace", &(a * 100..a * 100 + rows).map(trace).collect::<Vec<_>>())?;
        w.add("w", &(0..rows).map(|i| (a * rows + i) as f64 * 0.25).collect::<Vec<f64>>())?;
        w.finish()?;
    }
    Ok(Data { _dir: dir, traces, big, stations, archives })
}

/// The tables as npy-core reads the files.
struct Truth {
    traces: Vec<Trace>,
    big: Vec<Trace>,
    stations: Vec<Station>,
    /// The archives' members, archive after archive.
    shots: Vec<(Trace, f64)>,
}

fn read(data: &Data) -> npy_core::Result<Truth> {
    let mut files: Vec<_> = std::fs::read_dir(&data.traces)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    files.sort();
    let mut traces = Vec::new();
    for file in files {
        traces.extend(Vec::<Trace>::read_npy(&file)?);
    }
    let mut archives: Vec<_> =
        std::fs::read_dir(&data.archives)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    archives.sort();
    let mut shots = Vec::new();
    for archive in archives {
        let mut reader = npy_core::npz::Reader::from_path(&archive)?;
        let (trace, w) = (reader.read::<Vec<Trace>>("trace")?, reader.read::<Vec<f64>>("w")?);
        shots.extend(trace.into_iter().zip(w));
    }
    Ok(Truth { traces, big: Vec::read_npy(&data.big)?, stations: Vec::read_npy(&data.stations)?, shots })
}

// ---- answers ------------------------------------------------------------------------------

/// A cell of an answer, whatever Arrow type the engine chose for it.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Int(i128),
    Float(f64),
    Text(String),
}

fn cell(array: &dyn Array, row: usize) -> Cell {
    match ScalarValue::try_from_array(array, row).unwrap_or_else(|e| panic!("row {row}: {e}")) {
        ScalarValue::Int8(Some(v)) => Cell::Int(v.into()),
        ScalarValue::Int16(Some(v)) => Cell::Int(v.into()),
        ScalarValue::Int32(Some(v)) => Cell::Int(v.into()),
        ScalarValue::Int64(Some(v)) => Cell::Int(v.into()),
        ScalarValue::UInt8(Some(v)) => Cell::Int(v.into()),
        ScalarValue::UInt16(Some(v)) => Cell::Int(v.into()),
        ScalarValue::UInt32(Some(v)) => Cell::Int(v.into()),
        ScalarValue::UInt64(Some(v)) => Cell::Int(v.into()),
        ScalarValue::Float32(Some(v)) => Cell::Float(v.into()),
        ScalarValue::Float64(Some(v)) => Cell::Float(v),
        ScalarValue::Utf8(Some(v)) | ScalarValue::LargeUtf8(Some(v)) | ScalarValue::Utf8View(Some(v)) => Cell::Text(v),
        other => panic!("unexpected cell {other:?}"),
    }
}

fn rows_of(batches: &[RecordBatch]) -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    for batch in batches {
        for row in 0..batch.num_rows() {
            rows.push(batch.columns().iter().map(|c| cell(c.as_ref(), row)).collect());
        }
    }
    rows
}

/// `sql`'s answer on `ctx`, failing (instead of hanging) after [`HANG`].
async fn answer(ctx: &SessionContext, sql: &str) -> Result<Vec<Vec<Cell>>> {
    let run = async { ctx.sql(sql).await?.collect().await };
    let batches =
        tokio::time::timeout(HANG, run).await.unwrap_or_else(|_| panic!("{sql}: no answer after {HANG:?}"))?;
    Ok(rows_of(&batches))
}

/// The queries, each with its answer computed from npy-core's reads.
fn queries(truth: &Truth) -> Vec<(&'static str, Vec<Vec<Cell>>)> {
    use Cell::{Float, Int, Text};
    let Truth { traces, big, stations, shots } = truth;
    let n = traces.len();
    let sum_t0: f64 = traces.iter().map(|t| t.t0).sum();
    let max = |f: fn(&Trace) -> f64| traces.iter().map(f).fold(f64::MIN, f64::max);
    let min = |f: fn(&Trace) -> f64| traces.iter().map(f).fold(f64::MAX, f64::min);
    let aggregates = vec![vec![
        Int(n as i128),
        Int(traces.iter().map(|t| i128::from(t.trace_id)).sum()),
        Float(min(|t| t.t0)),
        Float(max(|t| t.t0)),
        Float(sum_t0 / n as f64),
        Float(max(|t| t.receiver.x)),
    ]];

    let filtered = traces
        .iter()
        .filter(|t| t.station == 2 && t.t0 >= 10.0)
        .map(|t| vec![Int(t.trace_id.into()), Float(t.t0), Float(t.receiver.y)])
        .collect();

    let grouped = (0..=STATIONS)
        .map(|s| {
            let at: Vec<_> = traces.iter().filter(|t| t.station == s).collect();
            vec![Int(s.into()), Int(at.len() as i128), Float(at.iter().map(|t| t.t0).sum())]
        })
        .collect();

    let joined = stations
        .iter()
        .map(|s| {
            let at: Vec<_> = traces.iter().filter(|t| t.station == s.id).collect();
            let last = at.iter().map(|t| t.trace_id).max().expect("every station has traces");
            vec![Text(s.name.to_string()), Int(at.len() as i128), Int(last.into())]
        })
        .collect();

    let even = (0..=STATIONS)
        .map(|s| {
            let at: Vec<_> = big.iter().filter(|t| t.station == s && t.trace_id % 2 == 0).collect();
            vec![Int(s.into()), Float(at.iter().map(|t| t.t0).sum()), Int(at.len() as i128)]
        })
        .filter(|row| row[2] != Int(0))
        .collect();

    let archive = vec![vec![
        Int(shots.len() as i128),
        Float(shots.iter().map(|(_, w)| w).sum()),
        Float(shots.iter().map(|(t, _)| t.t0).sum()),
        Float(shots.iter().map(|(t, _)| t.receiver.x).fold(f64::MIN, f64::max)),
    ]];

    vec![
        ("SELECT count(*), sum(trace_id), min(t0), max(t0), avg(t0), max(receiver['x']) FROM traces", aggregates),
        ("SELECT trace_id, t0, receiver['y'] FROM traces WHERE station = 2 AND t0 >= 10 ORDER BY trace_id", filtered),
        ("SELECT station, count(*), sum(t0) FROM traces GROUP BY station ORDER BY station", grouped),
        (
            "SELECT s.name, count(*), max(t.trace_id) FROM traces t JOIN stations s ON t.station = s.id \
             GROUP BY s.name ORDER BY s.name",
            joined,
        ),
        ("SELECT station, sum(t0), count(*) FROM big WHERE trace_id % 2 = 0 GROUP BY station ORDER BY station", even),
        ("SELECT count(*), sum(w), sum(trace['t0']), max(trace['receiver']['x']) FROM shots", archive),
    ]
}

async fn register(ctx: &SessionContext, data: &Data) -> Result<()> {
    let options = NpyReadOptions::new();
    ctx.register_npy("traces", format!("{}/", data.traces.display()), &options).await?;
    ctx.register_npy("big", data.big.display().to_string(), &options).await?;
    ctx.register_npy("stations", data.stations.display().to_string(), &options).await?;
    ctx.register_npz("shots", format!("{}/", data.archives.display()), &options).await
}

/// Both engines' settings: three partitions, and files split into row ranges however small
/// (DataFusion splits a scan of more rows than a batch: so plans carry file ranges, and
/// the large file is scanned by several tasks).
fn config() -> SessionConfig {
    SessionConfig::new().with_target_partitions(3).with_batch_size(500).with_repartition_file_min_size(1)
}

/// A plain DataFusion context with the npy formats.
fn local_context() -> Result<SessionContext> {
    let mut state = SessionStateBuilder::new().with_config(config()).with_default_features().build();
    npy_datafusion::register(&mut state)?;
    Ok(SessionContext::new_with_state(state))
}

/// A context on a fresh standalone cluster.
async fn cluster_context() -> Result<SessionContext> {
    let state = npy_ballista::ballista_state(config())?;
    npy_ballista::standalone(state, START).await
}

// ---- tests --------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_answers_as_datafusion_and_npy_core() -> TestResult {
    let data = generate()?;
    let truth = read(&data)?;
    assert!(truth.traces.len() > 3400 && truth.traces.iter().any(|t| t.station == STATIONS));

    let local = local_context()?;
    register(&local, &data).await?;
    let cluster = cluster_context().await?;
    register(&cluster, &data).await?;

    for (sql, expected) in queries(&truth) {
        let plan = cluster.sql(sql).await?.create_physical_plan().await?;
        let plan = displayable(plan.as_ref()).indent(true).to_string();
        assert!(plan.contains("DistributedQueryExec"), "{sql}: not sent to the cluster:\n{plan}");
        assert_eq!(answer(&local, sql).await?, expected, "{sql}: datafusion vs npy-core");
        assert_eq!(answer(&cluster, sql).await?, expected, "{sql}: ballista vs npy-core");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_survive_the_codecs() -> TestResult {
    let data = generate()?;
    let ctx = local_context()?;
    register(&ctx, &data).await?;
    let logical = NpyLogicalCodec::default();
    let physical = physical_codec();
    let task = ctx.task_ctx();
    let truth = read(&data)?;

    for (sql, expected) in queries(&truth) {
        // Client → scheduler: the logical plan, npy tables as `NpyTable` blobs.
        let plan = ctx.sql(sql).await?.into_unoptimized_plan();
        let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &logical)?;
        let back = logical_plan_from_bytes_with_extension_codec(&bytes, &task, &logical)?;
        assert_eq!(back.display_indent().to_string(), plan.display_indent().to_string(), "{sql}");
        let batches = ctx.execute_logical_plan(back).await?.collect().await?;
        assert_eq!(rows_of(&batches), expected, "{sql}: logical round trip");

        // Scheduler → executors: the physical plan, npy scans as `NpySource` blobs.
        let plan = ctx.sql(sql).await?.create_physical_plan().await?;
        let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), &physical)?;
        let back = physical_plan_from_bytes_with_extension_codec(&bytes, &task, &physical)?;
        let show = |p: &Arc<dyn ExecutionPlan>| displayable(p.as_ref()).indent(true).to_string();
        assert_eq!(show(&back), show(&plan), "{sql}");
        assert_eq!(rows_of(&collect(back, ctx.task_ctx()).await?), expected, "{sql}: physical round trip");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_files_fail_naming_them() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (short, junk) = (dir.path().join("short"), dir.path().join("junk"));
    for table in [&short, &junk] {
        std::fs::create_dir(table)?;
        for (f, name) in ["a.npy", "b.npy", "c.npy"].into_iter().enumerate() {
            (f * 50..f * 50 + 50).map(trace).collect::<Vec<_>>().write_npy(table.join(name))?;
        }
    }
    let cluster = cluster_context().await?;
    for (name, table) in [("short", &short), ("junk", &junk)] {
        cluster.register_npy(name, format!("{}/", table.display()), &NpyReadOptions::new()).await?;
    }
    // After registration (the schema is known): b.npy loses its last 30 bytes, c.npy
    // becomes text.
    let b = short.join("b.npy");
    let len = std::fs::metadata(&b)?.len();
    std::fs::OpenOptions::new().write(true).open(&b)?.set_len(len - 30)?;
    std::fs::write(junk.join("c.npy"), "not an npy file")?;

    for (sql, file) in [("SELECT sum(t0) FROM short", "b.npy"), ("SELECT sum(t0) FROM junk", "c.npy")] {
        let err = answer(&cluster, sql).await.expect_err(sql).to_string();
        assert!(err.contains(file), "{sql}: the error does not name {file}: {err}");
    }
    Ok(())
}

#[test]
fn file_format_blobs_round_trip_and_foreign_blobs_are_refused() -> TestResult {
    let codec = NpyLogicalCodec::default();
    let ctx = SessionContext::new();
    let task = ctx.task_ctx();
    let decode_table = |buf: &[u8]| {
        let schema = Arc::new(datafusion::arrow::datatypes::Schema::empty());
        codec.try_decode_table_provider(buf, &"t".into(), schema, &task).map(|_| ()).expect_err("not a table blob")
    };
    let mut options = NpyReadOptions::new();
    options.batch_rows(77).days_as_int64(true);
    for kind in [Kind::Npy, Kind::Npz] {
        let mut buf = Vec::new();
        codec.try_encode_file_format(&mut buf, Arc::new(NpyFormatFactory::new_with(kind, &options)))?;
        let back = codec.try_decode_file_format(&buf, &ctx.task_ctx())?;
        let back = back.downcast_ref::<NpyFormatFactory>().expect("an npy format factory");
        assert_eq!((back.kind(), back.options()), (kind, &options));

        let err = decode_table(&buf).to_string();
        assert!(err.contains("holds a file format, not a table"), "{err}");
        // The byte after the magic prefix is the wire version.
        let magic = b"\x93npy-ballista".len();
        let err = decode_table(&buf[..magic]).to_string();
        assert!(err.contains("ends after its magic bytes"), "{err}");
        buf[magic] += 1;
        let err = codec.try_decode_file_format(&buf, &task).expect_err("a newer wire version").to_string();
        assert!(err.contains("wire version 2"), "{err}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_to_writes_on_the_cluster() -> TestResult {
    let data = generate()?;
    let truth = read(&data)?;
    let cluster = cluster_context().await?;
    register(&cluster, &data).await?;
    let out = data.traces.parent().expect("a temporary directory").join("station-1.npy");
    // Every column: the file gets the table's dtype (big-endian, nested, padded) back.
    let sql = format!("COPY (SELECT * FROM big WHERE station = 1 ORDER BY trace_id) TO '{}'", out.display());
    let plan = cluster.sql(&sql).await?.create_physical_plan().await?;
    assert!(displayable(plan.as_ref()).indent(true).to_string().contains("DistributedQueryExec"));
    let expected: Vec<Trace> = truth.big.iter().filter(|t| t.station == 1).copied().collect();
    assert_eq!(answer(&cluster, &sql).await?, [[Cell::Int(expected.len() as i128)]]);
    assert_eq!(Vec::<Trace>::read_npy(&out)?, expected);
    Ok(())
}
