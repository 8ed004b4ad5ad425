#![allow(dead_code)] // Each topic uses part of it.

//! What the cluster tests share: the tables (generated `.npy` and `.npz` files), what
//! npy-core reads from them, the SQL suite with its answers, and a plain DataFusion
//! context to compare with.

use std::path::PathBuf;

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use npy_core::prelude::*;
use npy_core::types::Ucs4;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

#[cfg(feature = "cluster")]
pub mod processes;

/// Longest a query may take before a test calls it a hang.
pub const HANG: std::time::Duration = std::time::Duration::from_secs(120);

// ---- the files ----------------------------------------------------------------------------

/// Where a receiver stood.
#[derive(NpyRecord, Clone, Copy, Debug, PartialEq)]
#[npy(endian = "big")]
pub struct Receiver {
    pub x: f64,
    pub y: f64,
    pub z: f32,
}

/// A trace: big-endian, a nested record, a 4-byte gap after `trace_id`, 3 bytes before
/// `samples` and 4 at the end (`itemsize` 56, fields 49 bytes).
#[derive(NpyRecord, Clone, Copy, Debug, PartialEq)]
#[npy(endian = "big", itemsize = 56)]
pub struct Trace {
    pub trace_id: i32,
    #[npy(offset = 8)]
    pub receiver: Receiver,
    pub t0: f64,
    pub station: u8,
    #[npy(offset = 40)]
    pub samples: [f32; 3],
}

/// A station (little-endian, a text column): the other side of the join.
#[derive(NpyRecord, Clone, Copy, Debug)]
pub struct Station {
    pub id: u8,
    pub name: Ucs4<8>,
}

/// Trace `i`. Every float is a multiple of 1/4 far below 2^53, so sums in any order are
/// exact and both engines' answers compare with `==`.
pub fn trace(i: usize) -> Trace {
    Trace {
        trace_id: i as i32,
        receiver: Receiver { x: (i % 10) as f64 * 2.5, y: -(i as f64), z: (i % 3) as f32 },
        t0: i as f64 * 0.5,
        station: (i % 5) as u8,
        samples: [(i % 13) as f32 * 0.25, -((i % 7) as f32), (i % 4) as f32 + 0.5],
    }
}

/// Files of the traces table: one of 3000 records, the others 0 to 22.
pub const FILES: usize = 40;
/// Stations 0..4; traces at station 4 have none, so the join drops them.
pub const STATIONS: u8 = 4;

/// The generated tables under one temporary directory.
pub struct Data {
    /// Where the tables are (removed on drop).
    pub dir: tempfile::TempDir,
    pub traces: PathBuf,
    /// The large file of `traces`, also a table of its own.
    pub big: PathBuf,
    pub stations: PathBuf,
    /// A directory of `.npz` archives (even ones stored, odd ones deflated), each with a
    /// record member `trace` and a plain member `w`: the `shots` table.
    pub archives: PathBuf,
}

pub fn generate() -> npy_core::Result<Data> {
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
    Ok(Data { dir, traces, big, stations, archives })
}

/// The tables as npy-core reads the files.
pub struct Truth {
    pub traces: Vec<Trace>,
    pub big: Vec<Trace>,
    pub stations: Vec<Station>,
    /// The archives' members, archive after archive.
    pub shots: Vec<(Trace, f64)>,
}

pub fn read(data: &Data) -> npy_core::Result<Truth> {
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
pub enum Cell {
    Int(i128),
    Float(f64),
    Text(String),
}

pub fn cell(array: &dyn Array, row: usize) -> Cell {
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

pub fn rows_of(batches: &[RecordBatch]) -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    for batch in batches {
        for row in 0..batch.num_rows() {
            rows.push(batch.columns().iter().map(|c| cell(c.as_ref(), row)).collect());
        }
    }
    rows
}

/// `sql`'s answer on `ctx`, failing (instead of hanging) after [`HANG`].
pub async fn answer(ctx: &SessionContext, sql: &str) -> Result<Vec<Vec<Cell>>> {
    let run = async { ctx.sql(sql).await?.collect().await };
    let batches =
        tokio::time::timeout(HANG, run).await.unwrap_or_else(|_| panic!("{sql}: no answer after {HANG:?}"))?;
    Ok(rows_of(&batches))
}

/// The queries, each with its answer computed from npy-core's reads.
pub fn queries(truth: &Truth) -> Vec<(&'static str, Vec<Vec<Cell>>)> {
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

    // Subarray items, read in the scan (`parts decoded=[...]`).
    let items = (0..=STATIONS)
        .map(|s| {
            let at: Vec<_> = traces.iter().filter(|t| t.station == s && t.samples[1] > -5.0).collect();
            let peak = at.iter().map(|t| f64::from(t.samples[0])).fold(f64::MIN, f64::max);
            vec![Int(s.into()), Float(peak), Float(at.iter().map(|t| f64::from(t.samples[2])).sum())]
        })
        .collect();

    // The top-k: the scan evaluates the sort's dynamic filter (ties broken by trace_id).
    let mut by_t0: Vec<&Trace> = big.iter().collect();
    by_t0.sort_by(|a, b| b.t0.total_cmp(&a.t0).then(a.trace_id.cmp(&b.trace_id)));
    let top = by_t0.iter().take(5).map(|t| vec![Int(t.trace_id.into()), Float(t.t0)]).collect();

    vec![
        ("SELECT count(*), sum(trace_id), min(t0), max(t0), avg(t0), max(receiver['x']) FROM traces", aggregates),
        ("SELECT trace_id, t0 FROM big ORDER BY t0 DESC, trace_id LIMIT 5", top),
        ("SELECT trace_id, t0, receiver['y'] FROM traces WHERE station = 2 AND t0 >= 10 ORDER BY trace_id", filtered),
        ("SELECT station, count(*), sum(t0) FROM traces GROUP BY station ORDER BY station", grouped),
        (
            "SELECT s.name, count(*), max(t.trace_id) FROM traces t JOIN stations s ON t.station = s.id \
             GROUP BY s.name ORDER BY s.name",
            joined,
        ),
        ("SELECT station, sum(t0), count(*) FROM big WHERE trace_id % 2 = 0 GROUP BY station ORDER BY station", even),
        ("SELECT count(*), sum(w), sum(trace['t0']), max(trace['receiver']['x']) FROM shots", archive),
        (
            "SELECT station, max(samples[1]), sum(samples[-1]) FROM traces WHERE samples[2] > -5 \
             GROUP BY station ORDER BY station",
            items,
        ),
    ]
}

pub async fn register(ctx: &SessionContext, data: &Data) -> Result<()> {
    let options = NpyReadOptions::new();
    ctx.register_npy("traces", format!("{}/", data.traces.display()), &options).await?;
    ctx.register_npy("big", data.big.display().to_string(), &options).await?;
    ctx.register_npy("stations", data.stations.display().to_string(), &options).await?;
    ctx.register_npz("shots", format!("{}/", data.archives.display()), &options).await
}

/// Both engines' settings: three partitions, and files split into row ranges however small
/// (DataFusion splits a scan of more rows than a batch: so plans carry file ranges, and
/// the large file is scanned by several tasks).
pub fn config() -> SessionConfig {
    SessionConfig::new().with_target_partitions(3).with_batch_size(500).with_repartition_file_min_size(1)
}

/// A plain DataFusion context with the npy formats.
pub fn local_context() -> Result<SessionContext> {
    let mut state = SessionStateBuilder::new().with_config(config()).with_default_features().build();
    npy_datafusion::register(&mut state)?;
    Ok(SessionContext::new_with_state(state))
}

/// Registers two tables of three good files each on `ctx`, then corrupts one file of each
/// (after registration: the schema is known): `short/b.npy` loses its last 30 bytes,
/// `junk/c.npy` becomes text. A query of either must fail naming that file.
pub async fn corrupt_files_fail_naming_them(
    ctx: &SessionContext,
) -> std::result::Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (short, junk) = (dir.path().join("short"), dir.path().join("junk"));
    for table in [&short, &junk] {
        std::fs::create_dir(table)?;
        for (f, name) in ["a.npy", "b.npy", "c.npy"].into_iter().enumerate() {
            (f * 50..f * 50 + 50).map(trace).collect::<Vec<_>>().write_npy(table.join(name))?;
        }
    }
    for (name, table) in [("short", &short), ("junk", &junk)] {
        ctx.register_npy(name, format!("{}/", table.display()), &NpyReadOptions::new()).await?;
    }
    let b = short.join("b.npy");
    let len = std::fs::metadata(&b)?.len();
    std::fs::OpenOptions::new().write(true).open(&b)?.set_len(len - 30)?;
    std::fs::write(junk.join("c.npy"), "not an npy file")?;
    for (sql, file) in [("SELECT sum(t0) FROM short", "b.npy"), ("SELECT sum(t0) FROM junk", "c.npy")] {
        let err = answer(ctx, sql).await.expect_err(sql).to_string();
        assert!(err.contains(file), "{sql}: the error does not name {file}: {err}");
    }
    Ok(())
}
