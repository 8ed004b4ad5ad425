//! `cargo bench --bench append`: Simon's intermediate data growing by appends. A file of
//! `Trace` records (`align=True`, 304 bytes a record, `TraceAligned`'s memory) is written
//! in `--batches` batches of 10,000 records (default 1,000: 10,000,000 records, 3.04 GB),
//! next to one `write_npy` of the whole.
//!
//! `cargo xtask bench --only append` runs this, then `xtask/bench.py append` times NumPy and
//! npy-append-array on the same records, and prints the ratios. Arguments (after `--`):
//! `--dir DIR` (default `target/bench`), `--batches N`, `--repeat K` (default 3), `--keep`
//! (leave `traces_whole.npy` for NumPy).
//!
//! Measurements (each run starts with dirty pages flushed), each run once untimed and then
//! `K` times in interleaved rounds:
//!
//! - `write_whole`: `records.write_npy(out.npy)`, default options (atomic, synced);
//! - `append_batches`: the first batch written so, then the further batches appended by
//!   `npy_core::append::Appender::append_batches` (each batch's rows written and synced,
//!   then the header rewritten and synced: two syncs a batch, so that no crash, power cuts
//!   included, tears the file; the next batch made ready meanwhile);
//! - `synced_pieces`: what durable batches cost whoever writes them, with plain file
//!   calls: the whole's header, then per batch its bytes written and synced and the header
//!   rewritten and synced (the records encoded as an append encodes them);
//! - `write_whole_unsynced`, `append_batches_unsynced`: the same two without syncs
//!   (`WriteOptions::sync(false)`, `Appender::sync(false)`), as `np.save` and
//!   npy-append-array write: a killed process still leaves the old or the new array;
//! - `append_each_unsynced`: the unsynced appends made by one `Appender::append` call a
//!   batch (each made ready, then written, on the calling thread), for context.
//!
//! Each result is checked after the clock stops: its size and its last record's samples.

mod common;

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::trace::{trace, TraceAligned, ALIGNED_SIZE, TAIL};
use common::{remove_if_present, run_rounds, sync, Args, Measure, Result};
use npy_core::append::Appender;
use npy_core::prelude::*;

/// Records per batch.
const BATCH: usize = 10_000;

struct Ctx {
    records: Vec<TraceAligned>,
    out: PathBuf,
    /// The last record's samples, little-endian: the last bytes of every result.
    tail: Vec<u8>,
}

fn main() -> Result<()> {
    let args = Args::parse("append", &[("--batches", 1_000)])?;
    let batches = args.number("--batches");
    if batches == 0 || batches.saturating_mul(BATCH) > i32::MAX as usize {
        return Err(format!("--batches must be between 1 and {}", i32::MAX as usize / BATCH).into());
    }
    fs::create_dir_all(&args.dir)?;
    let n = batches * BATCH;
    let records: Vec<TraceAligned> = (0..n).map(trace).collect();
    let tail: Vec<u8> = records[n - 1].samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    let ctx = Ctx { records, out: args.dir.join("append-out.npy"), tail };
    let bytes = n * ALIGNED_SIZE;
    eprintln!("append bench: {batches} batches of {BATCH} records ({bytes} bytes), {} runs each", args.repeat);
    let measures: Vec<Measure<Ctx>> = vec![
        Measure::new("write_whole", bytes, write_whole),
        Measure::new("append_batches", bytes, append_batches),
        Measure::new("synced_pieces", bytes, synced_pieces),
        Measure::new("write_whole_unsynced", bytes, write_whole_unsynced),
        Measure::new("append_batches_unsynced", bytes, append_batches_unsynced),
        Measure::new("append_each_unsynced", bytes, append_each_unsynced),
    ];
    run_rounds(&ctx, &measures, args.repeat, bytes + bytes / 2, &mut None)?;
    if args.keep {
        ctx.records.write_npy(args.dir.join("traces_whole.npy"))?;
    }
    remove_if_present(&ctx.out)?;
    Ok(())
}

/// Removes the output and flushes dirty pages, so a run writes back only its own data.
fn fresh(ctx: &Ctx) -> Result<()> {
    remove_if_present(&ctx.out)?;
    sync();
    Ok(())
}

/// Fails unless the output holds the records: its size and last bytes.
fn check(ctx: &Ctx) -> Result<()> {
    let mut file = File::open(&ctx.out)?;
    let len = file.metadata()?.len();
    let data = (ctx.records.len() * ALIGNED_SIZE) as u64;
    let mut end = vec![0u8; TAIL];
    file.seek(SeekFrom::End(-(TAIL as i64)))?;
    file.read_exact(&mut end)?;
    if len < data || len > data + 4096 || end != ctx.tail {
        return Err(
            format!("{}: {len} bytes, expected {data} of data ending in the last samples", ctx.out.display()).into()
        );
    }
    let rows = npy_core::NpyReader::from_path(&ctx.out)?.header().shape[0];
    if rows != ctx.records.len() {
        return Err(format!("{}: {rows} rows, expected {}", ctx.out.display(), ctx.records.len()).into());
    }
    Ok(())
}

fn write_whole(ctx: &Ctx) -> Result<Duration> {
    fresh(ctx)?;
    let t = Instant::now();
    ctx.records.write_npy(&ctx.out)?;
    let elapsed = t.elapsed();
    check(ctx)?;
    Ok(elapsed)
}

fn write_whole_unsynced(ctx: &Ctx) -> Result<Duration> {
    fresh(ctx)?;
    let t = Instant::now();
    ctx.records.write_npy_with(&ctx.out, npy_core::WriteOptions::new().sync(false))?;
    let elapsed = t.elapsed();
    check(ctx)?;
    Ok(elapsed)
}

fn append_batches(ctx: &Ctx) -> Result<Duration> {
    appends(ctx, true, true)
}

fn append_batches_unsynced(ctx: &Ctx) -> Result<Duration> {
    appends(ctx, false, true)
}

/// The unsynced appends by one `Appender::append` call a batch (each made ready, then
/// written, on this thread).
fn append_each_unsynced(ctx: &Ctx) -> Result<Duration> {
    appends(ctx, false, false)
}

/// The first batch written, the further ones appended, synced or not: by
/// `Appender::append_batches` (each made ready while the last is written) when `batched`,
/// else by one `Appender::append` call a batch.
fn appends(ctx: &Ctx, sync: bool, batched: bool) -> Result<Duration> {
    fresh(ctx)?;
    let t = Instant::now();
    let mut batches = ctx.records.chunks(BATCH);
    let first = batches.next().ok_or("no records")?;
    first.write_npy_with(&ctx.out, npy_core::WriteOptions::new().sync(sync))?;
    let mut appender = Appender::from_path(&ctx.out)?;
    appender.sync(sync);
    if batched {
        appender.append_batches(batches)?;
    } else {
        for batch in batches {
            appender.append(batch)?;
        }
    }
    drop(appender);
    let elapsed = t.elapsed();
    check(ctx)?;
    Ok(elapsed)
}

/// What durable batches cost whoever writes them, with plain file calls: the header of
/// the whole, then per batch its bytes (encoded by `write_npy_to` into a reused buffer, as
/// an append encodes them) written and synced, and the header rewritten and synced.
fn synced_pieces(ctx: &Ctx) -> Result<Duration> {
    fresh(ctx)?;
    let header = npy_core::header::Header::new(TraceAligned::dtype(), vec![ctx.records.len()]);
    let (_, head) = header.encode(None)?;
    let t = Instant::now();
    let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&ctx.out)?;
    file.write_all(&head)?;
    file.sync_data()?;
    let mut buf = Vec::new();
    for batch in ctx.records.chunks(BATCH) {
        buf.clear();
        buf = batch.write_npy_to(buf)?;
        let data = &buf[buf.len() - batch.len() * ALIGNED_SIZE..];
        file.seek(SeekFrom::End(0))?;
        file.write_all(data)?;
        file.sync_data()?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&head)?;
        file.sync_data()?;
    }
    drop(file);
    let elapsed = t.elapsed();
    check(ctx)?;
    Ok(elapsed)
}
