//! `cargo bench -p npy-ballista --features cluster --bench cluster`: the seismic question
//! of the `sql` bench on a Ballista cluster of processes (one `npy-ballista-scheduler`, two
//! `npy-ballista-executor`s, release builds, started as the process tests start them) next
//! to plain DataFusion in this process and NumPy, in the same rounds.
//!
//! `cargo xtask bench --only cluster` runs this. Arguments (after `--`):
//!
//! - `--dir DIR`: scratch directory;
//! - `--records N`: records in all (default 4,000,000: 1.09 GiB), in 16 files
//!   `DIR/traces/part-00.npy` ... `part-15.npy` of NumPy's packed layout, as the `sql`
//!   bench writes them;
//! - `--repeat K`: runs per measurement (default 3);
//! - `--peer PYTHON`: NumPy (`xtask/bench.py serve sql`) times `np_query`, `np.load` of each
//!   file and the reduction, in the same rounds;
//! - `--keep`: leave the files.
//!
//! Measurements, each run once untimed and then `K` times in interleaved rounds, the page
//! cache warm:
//!
//! - `cluster_query`: `SELECT avg(t0), max(samples[1]) FROM traces` sent to the cluster's
//!   scheduler (`npy_ballista::remote`), collected, the answer checked: planning, two
//!   stages on the executors, the result fetched over Arrow Flight;
//! - `local_query`: the same on a plain DataFusion context of this process;
//! - `np_query`: NumPy's answer (the peer's);
//! - `limit_read`: the machine limit: each file's bytes read into a fresh huge-page buffer.
//!
//! On this 2-core machine a cluster cannot be faster than one process: `cluster_query /
//! local_query` is the overhead of its processes, plans and network hops.

#[path = "../../benches/common/mod.rs"]
mod common;
#[path = "../tests/ballista/support/processes.rs"]
mod processes;

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::trace::{sql_args, write_sql_answer, write_sql_table, PACKED_SIZE};
use common::{run_rounds, warm, Measure, Peer, Result};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{Float32Type, Float64Type};
use datafusion::prelude::{SessionConfig, SessionContext};
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};
use processes::Cluster;

/// Files of the table.
const FILES: usize = 16;
/// The question of the `sql` bench.
const QUERY: &str = "SELECT avg(t0), max(samples[1]) FROM traces";

/// What the measurements share.
struct Ctx {
    files: Vec<PathBuf>,
    runtime: tokio::runtime::Runtime,
    local: SessionContext,
    remote: SessionContext,
    /// The expected answer: the average of t0 and the maximum of the first sample.
    expected: (f64, f32),
    /// Kept alive for the measurements; its drop stops the processes.
    _cluster: Cluster,
}

fn main() -> Result<()> {
    let (args, n) = sql_args("cluster", FILES)?;
    let ctx = setup(&args.dir, n)?;
    let bytes = n * PACKED_SIZE;
    eprintln!("cluster bench: {n} records in {FILES} files ({bytes} bytes), {} runs each", args.repeat);
    let mut peer = match &args.peer {
        Some(python) => Some(Peer::start(python, "sql", &args.dir, n)?),
        None => None,
    };
    let mut measures: Vec<Measure<Ctx>> =
        vec![Measure::new("cluster_query", bytes, cluster_query), Measure::new("local_query", bytes, local_query)];
    if peer.is_some() {
        measures.push(Measure::peer("np_query", bytes));
    }
    #[cfg(target_os = "linux")]
    measures.insert(0, Measure::new("limit_read", bytes, limit_read));
    for path in &ctx.files {
        warm(path)?;
    }
    run_rounds(&ctx, &measures, args.repeat, bytes / FILES * 2, &mut peer)?;
    drop(peer);
    drop(ctx);
    if !args.keep {
        fs::remove_dir_all(args.dir.join("traces"))?;
    }
    Ok(())
}

/// Writes the files and the answer for NumPy, starts the cluster, registers the table on
/// both contexts and checks both answers once.
fn setup(dir: &std::path::Path, n: usize) -> Result<Ctx> {
    let started = Instant::now();
    let (files, expected) = write_sql_table(dir, n, FILES)?;
    let table = dir.join("traces");
    write_sql_answer(dir, expected)?;

    let cluster = Cluster::start(2)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let remote = runtime.block_on(cluster.context(SessionConfig::new()))?;
    let local = SessionContext::new();
    let location = table.to_str().ok_or("a non-UTF-8 path")?;
    for ctx in [&local, &remote] {
        runtime.block_on(ctx.register_npy("traces", location, &NpyReadOptions::new()))?;
    }
    let ctx = Ctx { files, runtime, local, remote, expected, _cluster: cluster };
    cluster_query(&ctx)?;
    local_query(&ctx)?;
    eprintln!("cluster bench: files written, cluster up, answers checked in {:.2} s", started.elapsed().as_secs_f64());
    Ok(ctx)
}

/// [`QUERY`] on `sql`, timed; the answer checked.
fn query_on(ctx: &Ctx, sql: &SessionContext) -> Result<Duration> {
    let t = Instant::now();
    let batches = ctx.runtime.block_on(async { sql.sql(QUERY).await?.collect().await })?;
    let elapsed = t.elapsed();
    let [batch] = &batches[..] else { return Err(format!("{} batches, expected 1", batches.len()).into()) };
    let avg = batch.column(0).as_primitive::<Float64Type>();
    let max = batch.column(1).as_primitive::<Float32Type>();
    if avg.len() != 1 || avg.is_null(0) || max.is_null(0) {
        return Err(format!("unexpected answer {batch:?}").into());
    }
    let (want_avg, want_max) = ctx.expected;
    let (avg, max) = (avg.value(0), max.value(0));
    if (avg - want_avg).abs() > 1e-12 * want_avg.abs() || max != want_max {
        return Err(format!("answer ({avg}, {max}), expected ({want_avg}, {want_max})").into());
    }
    Ok(elapsed)
}

fn cluster_query(ctx: &Ctx) -> Result<Duration> {
    query_on(ctx, &ctx.remote)
}

fn local_query(ctx: &Ctx) -> Result<Duration> {
    query_on(ctx, &ctx.local)
}

#[cfg(target_os = "linux")]
fn limit_read(ctx: &Ctx) -> Result<Duration> {
    common::limit::read_files(&ctx.files)
}
