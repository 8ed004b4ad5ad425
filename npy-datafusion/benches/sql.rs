//! `cargo bench -p npy-datafusion --bench sql`: SQL over a directory of `.npy` files of
//! Simon's seismic `Trace` records (`examples/seismic.rs`), through npy-datafusion, next to
//! the machine limit.
//!
//! `cargo xtask bench --only sql` runs this, then has NumPy answer the same question over
//! the same files (`xtask/bench.py sql`: `np.load` + the reduction, file by file), and prints
//! the ratios the goals name. Arguments (after `--`):
//!
//! - `--dir DIR`: scratch directory (default `target/bench`);
//! - `--records N`: records in all (default 4,000,000: 1.09 GiB), in 16 files
//!   `DIR/traces/part-00.npy` ... `part-15.npy` of NumPy's packed layout (293 bytes a
//!   record), record `i` as [`common::trace::trace`] makes it;
//! - `--repeat K`: runs per measurement (default 3);
//! - `--keep`: leave the files (for NumPy) instead of deleting them.
//!
//! The table is registered once (`register_npy`, default options; a `SessionContext` with
//! DataFusion's defaults: as many partitions as CPUs), and once more as `traces_mapped`. Measurements, each run once untimed
//! and then `K` times in interleaved rounds, the page cache warm:
//!
//! - `sql_query`: `SELECT avg(t0), max(samples[1]) FROM traces`, collected; the answer is
//!   checked against the records (the average within 1e-12 relative, the maximum exactly)
//!   and written to `DIR/sql_answer.json` for NumPy to match;
//! - `scan_t0`: `SELECT t0 FROM traces`, every batch taken and dropped (the rows counted):
//!   the projection of one field;
//! - `scan_all`: `SELECT * FROM traces` likewise: every field decoded;
//! - `scan_t0_mapped`, `scan_all_mapped`, `sql_query_mapped`: the same over the table
//!   `traces_mapped`, the same files with `NpyReadOptions::map_local_files` (scanned through
//!   memory maps instead of reads);
//! - `limit_read`: the machine limit: each file's bytes copied by `read()` into a fresh
//!   huge-page buffer, one file after the other (`common::limit::read`).
//!
//! Each prints one line to stdout: `bench <name> best=<seconds> median=<seconds> bytes=<n>`
//! (`bytes`: the files' data size).

#[path = "../../benches/common/mod.rs"]
mod common;

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::trace::{sql_args, write_sql_answer, write_sql_table, PACKED_SIZE, SAMPLES};
use common::{run_rounds, warm, Measure, Result};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Float64Type;
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use npy_core::mmap::MapContract;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

/// Files of the table.
const FILES: usize = 16;
/// The question of the issue.
const QUERY: &str = "SELECT avg(t0), max(samples[1]) FROM traces";

/// What the measurements share.
struct Ctx {
    n: usize,
    files: Vec<PathBuf>,
    runtime: tokio::runtime::Runtime,
    sql: SessionContext,
    /// The expected answer: the average of t0 and the maximum of the first sample.
    expected: (f64, f32),
}

fn main() -> Result<()> {
    let (args, n) = sql_args("sql", FILES)?;
    let ctx = setup(&args.dir, n)?;
    let bytes = n * PACKED_SIZE;
    eprintln!(
        "sql bench: {n} records in {FILES} files ({bytes} bytes), {} runs each, in {}",
        args.repeat,
        args.dir.display()
    );
    let mut measures: Vec<Measure<Ctx>> = vec![
        Measure::new("sql_query", bytes, sql_query),
        Measure::new("scan_t0", bytes, scan_t0),
        Measure::new("scan_all", bytes, scan_all),
        Measure::new("sql_query_mapped", bytes, sql_query_mapped),
        Measure::new("scan_t0_mapped", bytes, scan_t0_mapped),
        Measure::new("scan_all_mapped", bytes, scan_all_mapped),
    ];
    #[cfg(target_os = "linux")]
    measures.insert(0, Measure::new("limit_read", bytes, limit_read));
    for path in &ctx.files {
        warm(path)?;
    }
    // The largest allocation: one batch per partition of all columns, and NumPy-sized slack.
    run_rounds(&ctx, &measures, args.repeat, bytes / FILES * 2, &mut None)?;

    // The answer, for NumPy to match.
    write_sql_answer(&args.dir, ctx.runtime.block_on(answer(&ctx.sql, "traces"))?)?;
    if !args.keep {
        fs::remove_dir_all(args.dir.join("traces"))?;
    }
    Ok(())
}

/// Writes the files (record `i` of the whole in the file `i * FILES / n`), registers the
/// table and checks the answer once.
fn setup(dir: &std::path::Path, n: usize) -> Result<Ctx> {
    let started = Instant::now();
    let (files, expected) = write_sql_table(dir, n, FILES)?;
    let table = dir.join("traces");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let sql = SessionContext::new();
    let location = table.to_str().ok_or("a non-UTF-8 path")?;
    runtime.block_on(sql.register_npy("traces", location, &NpyReadOptions::new()))?;
    // SAFETY: the bench's files are written above and not changed until they are deleted
    // at the end, after the last query.
    let contract = unsafe { MapContract::accept() };
    let mut mapped = NpyReadOptions::new();
    mapped.map_local_files(contract);
    runtime.block_on(sql.register_npy("traces_mapped", location, &mapped))?;
    let ctx = Ctx { n, files, runtime, sql, expected };
    for table in ["traces", "traces_mapped"] {
        let got = ctx.runtime.block_on(answer(&ctx.sql, table))?;
        check_answer(&ctx, got)?;
    }
    eprintln!("sql bench: {FILES} files written and the answer checked in {:.2} s", started.elapsed().as_secs_f64());
    let _ = SAMPLES;
    Ok(ctx)
}

/// [`QUERY`] over `table`.
async fn answer(sql: &SessionContext, table: &str) -> Result<(f64, f32)> {
    let batches = sql.sql(&QUERY.replace("traces", table)).await?.collect().await?;
    let [batch] = &batches[..] else { return Err(format!("{} batches, expected 1", batches.len()).into()) };
    let avg = batch.column(0).as_primitive::<Float64Type>();
    let max = batch.column(1).as_primitive::<datafusion::arrow::datatypes::Float32Type>();
    if avg.len() != 1 || avg.is_null(0) || max.is_null(0) {
        return Err(format!("unexpected answer {batch:?}").into());
    }
    Ok((avg.value(0), max.value(0)))
}

fn check_answer(ctx: &Ctx, (avg, max): (f64, f32)) -> Result<()> {
    let (want_avg, want_max) = ctx.expected;
    if (avg - want_avg).abs() > 1e-12 * want_avg.abs() || max != want_max {
        return Err(format!("answer ({avg}, {max}), expected ({want_avg}, {want_max})").into());
    }
    Ok(())
}

fn sql_query(ctx: &Ctx) -> Result<Duration> {
    query_of(ctx, "traces")
}

fn sql_query_mapped(ctx: &Ctx) -> Result<Duration> {
    query_of(ctx, "traces_mapped")
}

/// [`QUERY`] over `table`, timed; the answer checked.
fn query_of(ctx: &Ctx, table: &str) -> Result<Duration> {
    let t = Instant::now();
    let got = ctx.runtime.block_on(answer(&ctx.sql, table))?;
    let elapsed = t.elapsed();
    check_answer(ctx, got)?;
    Ok(elapsed)
}

/// Runs `query`, taking and dropping every batch; checks the row count.
fn scan(ctx: &Ctx, query: &str, columns: usize) -> Result<Duration> {
    let t = Instant::now();
    let rows = ctx.runtime.block_on(async {
        let mut stream = ctx.sql.sql(query).await?.execute_stream().await?;
        let mut rows = 0;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            if batch.num_columns() != columns {
                return Err(format!("{query}: {} columns, expected {columns}", batch.num_columns()).into());
            }
            rows += batch.num_rows();
        }
        Ok::<_, Box<dyn std::error::Error>>(rows)
    })?;
    let elapsed = t.elapsed();
    if rows != ctx.n {
        return Err(format!("{query}: {rows} rows, expected {}", ctx.n).into());
    }
    Ok(elapsed)
}

fn scan_t0(ctx: &Ctx) -> Result<Duration> {
    scan(ctx, "SELECT t0 FROM traces", 1)
}

fn scan_all(ctx: &Ctx) -> Result<Duration> {
    scan(ctx, "SELECT * FROM traces", 6)
}

fn scan_t0_mapped(ctx: &Ctx) -> Result<Duration> {
    scan(ctx, "SELECT t0 FROM traces_mapped", 1)
}

fn scan_all_mapped(ctx: &Ctx) -> Result<Duration> {
    scan(ctx, "SELECT * FROM traces_mapped", 6)
}

#[cfg(target_os = "linux")]
fn limit_read(ctx: &Ctx) -> Result<Duration> {
    common::limit::read_files(&ctx.files)
}
