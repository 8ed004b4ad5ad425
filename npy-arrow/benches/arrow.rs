//! `cargo bench --bench arrow`: npy-arrow turning Simon's seismic `Trace` records
//! (`examples/seismic.rs`) into Arrow record batches and back, next to the machine limit.
//!
//! `cargo xtask bench` runs this, then times pyarrow on the same files (`xtask/bench.py
//! arrow`: `np.load` + `pa.Table.from_arrays`, `pyarrow.parquet`, and the `npy convert`
//! command to Parquet), and prints the ratios the speed goals name. Arguments (after `--`):
//!
//! - `--dir DIR`: scratch directory (default `target/bench`);
//! - `--records N`: records per file (default 4,000,000: 1.13 GiB aligned, 1.09 GiB packed);
//! - `--repeat K`: runs per measurement (default 3);
//! - `--keep`: leave `traces_aligned.npy`, `traces_packed.npy` and `npy_batches.arrow` in
//!   `DIR` (for pyarrow) instead of deleting them.
//!
//! The files are those of the `records` bench ([`common::trace`]), written by npy:
//! `traces_aligned.npy` (NumPy's `align=True` layout, 304 bytes a record) and
//! `traces_packed.npy` (NumPy's default packed layout, 293 bytes). Both become the same
//! batches: six columns, `trace_id` Int32, `receiver` Struct{x Float64, y Float64,
//! z Float32}, `t0` Float64, `dt` Float32, `flags` UInt8, `samples` FixedSizeList<Float32, 64>
//! (293 bytes of Arrow data a row).
//!
//! Setup, once: the packed file is read into batches (kept for the writes), compared with the
//! aligned file's batches column by column, checked against the records, and with `--keep`
//! written as an Arrow IPC file, `npy_batches.arrow` (arrow-rs's `FileWriter`), which
//! `bench.py` compares with the table pyarrow makes: so the values npy gives and those
//! pyarrow gives are the same, checked once a run.
//!
//! Measurements, each run once untimed and then `K` times in interleaved rounds (reads and
//! writes in two groups), with the page cache warm for reads, dirty pages flushed before each
//! write and memory touched right before each run, as in the `records` bench
//! (`common::heat`):
//!
//! - `limit_read_aligned`, `limit_read_packed`: the machine limit: the page cache copied
//!   by `read()` into a fresh huge-page buffer (`common::limit::read`);
//! - `read_aligned`, `read_packed`: `npy_arrow::BatchReader::from_path(file)`
//!   (default options: batches of 65,536 rows), every batch collected into a `Vec` (all in
//!   memory, as pyarrow's table is);
//! - `convert_aligned`, `convert_packed`: the conversion alone, like for like with pyarrow's
//!   `pa.Table.from_arrays` over an array in memory: the file read into a `DynArray` before
//!   the clock starts, then `BatchReader::from_dyn(array)`, every
//!   batch collected;
//! - `map_aligned`, `map_packed`: the same through a map: `NpyMap::from_path` +
//!   `BatchReader::from_map` (records are converted in place from the page cache, with no
//!   `read()` copy), for context;
//! - `limit_write_aligned`, `limit_write_packed`: the machine limit: create, `fallocate`,
//!   one `write()` of the file's bytes, close (`common::limit::write`);
//! - `write_aligned`, `write_packed`: the batches into a `.npy` file: `BatchWriter` over a
//!   1 MiB `BufWriter` of an `AtomicFile`, committed with `commit(false)` (moved into
//!   place, not synced, as the other benches' writes with `sync(false)`, `np.save` and the
//!   limit), the schema's metadata giving the aligned or the packed file. The result must
//!   be the original file byte for byte.
//!
//! Each prints one line to stdout: `bench <name> best=<seconds> median=<seconds> bytes=<n>`
//! (`bytes` is the data size of the file read or written). Times cover the operation only:
//! checking the result (batches: row count, no nulls, and every field of 65 records against
//! the records written; files: every byte) and freeing it come after the clock stops.

#[path = "../../benches/common/mod.rs"]
mod common;

use std::fs::{self, File};
use std::hint::black_box;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, UInt8Type};
use arrow_array::{Array, RecordBatch};
use arrow_ipc::writer::FileWriter;
use common::trace::{
    check_count, checkpoints, packed, trace, write_files, Files, Trace, TraceAligned, ALIGNED_SIZE, PACKED_SIZE,
    SAMPLES,
};
use common::{remove_if_present, run_rounds, sync, warm, Args, Measure, Result};
use npy_arrow::{BatchReader, BatchWriter};
use npy_core::atomic::AtomicFile;
use npy_core::mmap::NpyMap;
use npy_core::prelude::*;
use npy_core::DynArray;
use npy_seismic::ReceiverAligned;

/// What the measurements share.
#[derive(Debug)]
struct Ctx {
    /// Number of records.
    n: usize,
    /// The two files and their bytes.
    files: Files,
    /// The packed file's batches, with the aligned file's schema (so they write the aligned
    /// file) and with the packed file's (the same columns).
    aligned_batches: Vec<RecordBatch>,
    packed_batches: Vec<RecordBatch>,
    out: PathBuf,
    limit_out: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse("arrow", &[("--records", 4_000_000)])?;
    let n = args.number("--records");
    check_count(n)?;
    fs::create_dir_all(&args.dir)?;
    let ctx = setup(&args.dir, n, args.keep)?;
    let (aligned, packed) = (n * ALIGNED_SIZE, n * PACKED_SIZE);
    eprintln!(
        "arrow bench: {n} records ({aligned} bytes aligned, {packed} packed), {} runs each, in {}",
        args.repeat,
        args.dir.display()
    );

    let mut reads: Vec<Measure<Ctx>> = vec![
        Measure::new("read_aligned", aligned, read_aligned),
        Measure::new("read_packed", packed, read_packed),
        Measure::new("convert_aligned", aligned, convert_aligned),
        Measure::new("convert_packed", packed, convert_packed),
        Measure::new("map_aligned", aligned, map_aligned),
        Measure::new("map_packed", packed, map_packed),
    ];
    let mut writes: Vec<Measure<Ctx>> =
        vec![Measure::new("write_aligned", aligned, write_aligned), Measure::new("write_packed", packed, write_packed)];
    #[cfg(target_os = "linux")]
    {
        reads.insert(0, Measure::new("limit_read_aligned", aligned, limit_read_aligned));
        reads.insert(1, Measure::new("limit_read_packed", packed, limit_read_packed));
        writes.insert(0, Measure::new("limit_write_aligned", aligned, limit_write_aligned));
        writes.insert(1, Measure::new("limit_write_packed", packed, limit_write_packed));
    }

    for path in [&ctx.files.aligned_path, &ctx.files.packed_path] {
        warm(path)?;
    }
    // No run allocates more than two files' worth (an array in memory and its batches).
    let hot = 2 * aligned + aligned / 2;
    run_rounds(&ctx, &reads, args.repeat, hot, &mut None)?;
    run_rounds(&ctx, &writes, args.repeat, hot, &mut None)?;

    if !args.keep {
        fs::remove_file(&ctx.files.aligned_path)?;
        fs::remove_file(&ctx.files.packed_path)?;
    }
    Ok(())
}

/// Writes the two files ([`common::trace::write_files`]), reads the packed one into
/// batches, checks them against the records and the aligned file's batches, and with `keep`
/// writes them to `npy_batches.arrow` for `bench.py`.
fn setup(dir: &Path, n: usize, keep: bool) -> Result<Ctx> {
    let files = {
        let aligned: Vec<TraceAligned> = (0..n).map(trace).collect();
        let packed: Vec<Trace> = aligned.iter().map(packed).collect();
        write_files(dir, &aligned, &packed, "arrow")?
    };
    let started = Instant::now();
    let packed_batches = read_all(&files.packed_path)?;
    check_batches(&packed_batches, n)?;
    let from_aligned = read_all(&files.aligned_path)?;
    if from_aligned.len() != packed_batches.len()
        || from_aligned.iter().zip(&packed_batches).any(|(a, p)| a.columns() != p.columns())
    {
        return Err("the aligned and the packed file give different batches".into());
    }
    let aligned_schema = from_aligned[0].schema();
    drop(from_aligned);
    let aligned_batches = packed_batches
        .iter()
        .map(|b| RecordBatch::try_new(aligned_schema.clone(), b.columns().to_vec()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let ipc = dir.join("npy_batches.arrow");
    remove_if_present(&ipc)?;
    if keep {
        let mut writer = FileWriter::try_new(BufWriter::new(File::create(&ipc)?), &packed_batches[0].schema())?;
        for batch in &packed_batches {
            writer.write(batch)?;
        }
        writer.into_inner()?.into_inner().map_err(|e| e.into_error())?;
    }
    sync();
    eprintln!(
        "arrow bench: batches of both files checked{} in {:.2} s",
        if keep { format!(", written to {}", ipc.display()) } else { String::new() },
        started.elapsed().as_secs_f64()
    );
    Ok(Ctx {
        n,
        files,
        aligned_batches,
        packed_batches,
        out: dir.join("out.npy"),
        limit_out: dir.join("limit-out.bin"),
    })
}

/// Every batch of `path`, read with the default options.
fn read_all(path: &Path) -> Result<Vec<RecordBatch>> {
    collect(BatchReader::from_path(path)?)
}

fn collect<R: Read>(mut reader: BatchReader<R>) -> Result<Vec<RecordBatch>> {
    let mut batches = Vec::new();
    while let Some(batch) = reader.next_batch()? {
        batches.push(batch);
    }
    Ok(batches)
}

/// Fails unless `batches` hold `n` rows, no nulls, and the records of [`trace`] at the
/// [`checkpoints`], every field compared.
fn check_batches(batches: &[RecordBatch], n: usize) -> Result<()> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows != n {
        return Err(format!("got {rows} rows, expected {n}").into());
    }
    let mut starts = Vec::with_capacity(batches.len());
    let mut start = 0;
    for batch in batches {
        let names: Vec<&str> = batch.schema_ref().fields().iter().map(|f| f.name().as_str()).collect();
        if names != ["trace_id", "receiver", "t0", "dt", "flags", "samples"] {
            return Err(format!("columns {names:?}").into());
        }
        if let Some(c) = batch.columns().iter().find(|c| c.logical_null_count() != 0) {
            return Err(format!("a column of {} has nulls", c.data_type()).into());
        }
        starts.push(start);
        start += batch.num_rows();
    }
    for i in checkpoints(n) {
        let k = starts.partition_point(|&s| s <= i) - 1;
        let got = record(&batches[k], i - starts[k]).ok_or_else(|| format!("row {i}: columns of unexpected types"))?;
        let want = trace(i);
        if got != want {
            return Err(format!("row {i} is {got:?}, expected {want:?}").into());
        }
    }
    Ok(())
}

/// Row `r` of a batch as a record; `None` when a column has another type.
fn record(batch: &RecordBatch, r: usize) -> Option<TraceAligned> {
    let receiver = batch.column(1).as_struct_opt()?;
    let samples = batch.column(5).as_fixed_size_list_opt()?.value(r);
    let samples: [f32; SAMPLES] = samples.as_primitive_opt::<Float32Type>()?.values().as_ref().try_into().ok()?;
    Some(TraceAligned {
        trace_id: batch.column(0).as_primitive_opt::<Int32Type>()?.value(r),
        receiver: ReceiverAligned {
            x: receiver.column_by_name("x")?.as_primitive_opt::<Float64Type>()?.value(r),
            y: receiver.column_by_name("y")?.as_primitive_opt::<Float64Type>()?.value(r),
            z: receiver.column_by_name("z")?.as_primitive_opt::<Float32Type>()?.value(r),
        },
        t0: batch.column(2).as_primitive_opt::<Float64Type>()?.value(r),
        dt: batch.column(3).as_primitive_opt::<Float32Type>()?.value(r),
        flags: batch.column(4).as_primitive_opt::<UInt8Type>()?.value(r),
        samples,
    })
}

/// Times one read (the clock stops before the batches are checked and freed).
fn timed_read(n: usize, read: impl FnOnce() -> Result<Vec<RecordBatch>>) -> Result<Duration> {
    timed_conversion(n, (), |()| read())
}

/// Times `convert(input)` (the clock stops before the batches are checked and freed).
fn timed_conversion<I>(n: usize, input: I, convert: impl FnOnce(I) -> Result<Vec<RecordBatch>>) -> Result<Duration> {
    let started = Instant::now();
    let batches = black_box(convert(black_box(input))?);
    let elapsed = started.elapsed();
    check_batches(&batches, n)?;
    drop(batches);
    Ok(elapsed)
}

fn read_aligned(c: &Ctx) -> Result<Duration> {
    timed_read(c.n, || read_all(&c.files.aligned_path))
}

fn read_packed(c: &Ctx) -> Result<Duration> {
    timed_read(c.n, || read_all(&c.files.packed_path))
}

/// Times converting the array of `path`, read into memory first (untimed), to batches.
fn timed_from_dyn(n: usize, path: &Path) -> Result<Duration> {
    let array = DynArray::read_npy(path)?;
    timed_conversion(n, array, |array| collect(BatchReader::from_dyn(array)?))
}

fn convert_aligned(c: &Ctx) -> Result<Duration> {
    timed_from_dyn(c.n, &c.files.aligned_path)
}

fn convert_packed(c: &Ctx) -> Result<Duration> {
    timed_from_dyn(c.n, &c.files.packed_path)
}

/// `path` mapped, as batches.
fn read_mapped(path: &Path) -> Result<Vec<RecordBatch>> {
    // SAFETY: the bench's own scratch file; nothing modifies or truncates it while it is
    // mapped (the writes go to other paths).
    let map = unsafe { NpyMap::from_path(path)? };
    collect(BatchReader::from_map(Arc::new(map))?)
}

fn map_aligned(c: &Ctx) -> Result<Duration> {
    timed_read(c.n, || read_mapped(&c.files.aligned_path))
}

fn map_packed(c: &Ctx) -> Result<Duration> {
    timed_read(c.n, || read_mapped(&c.files.packed_path))
}

/// Times writing `batches` to `c.out` (after removing any old file and flushing dirty
/// pages) with a `BatchWriter`, not synced; then checks that the file is `want`, byte for
/// byte, and removes it.
fn timed_write(c: &Ctx, batches: &[RecordBatch], want: &[u8]) -> Result<Duration> {
    remove_if_present(&c.out)?;
    sync();
    let started = Instant::now();
    let file = BufWriter::with_capacity(1 << 20, AtomicFile::create(&c.out)?);
    let mut writer = BatchWriter::new(file, batches[0].schema())?;
    for batch in black_box(batches) {
        writer.write(batch)?;
    }
    writer.finish()?.into_inner().map_err(|e| e.into_error())?.commit(false)?;
    let elapsed = started.elapsed();
    same_bytes(&c.out, want)?;
    fs::remove_file(&c.out)?;
    Ok(elapsed)
}

/// Fails unless the file at `path` holds exactly `want`.
fn same_bytes(path: &Path, want: &[u8]) -> Result<()> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len != want.len() as u64 {
        return Err(format!("{}: {len} bytes, expected {}", path.display(), want.len()).into());
    }
    let mut buf = vec![0u8; 16 << 20];
    for (k, chunk) in want.chunks(buf.len()).enumerate() {
        let got = &mut buf[..chunk.len()];
        file.read_exact(got)?;
        if got != chunk {
            let at = k * (16 << 20) + got.iter().zip(chunk).position(|(a, b)| a != b).unwrap_or(0);
            return Err(format!("{}: byte {at} differs from the original file's", path.display()).into());
        }
    }
    Ok(())
}

fn write_aligned(c: &Ctx) -> Result<Duration> {
    timed_write(c, &c.aligned_batches, c.files.aligned_file.as_slice())
}

fn write_packed(c: &Ctx) -> Result<Duration> {
    timed_write(c, &c.packed_batches, c.files.packed_file.as_slice())
}

/// The machine limit read ([`common::limit::read`]) of `traces_aligned.npy`.
#[cfg(target_os = "linux")]
fn limit_read_aligned(c: &Ctx) -> Result<Duration> {
    common::limit::checked_read(common::limit::read, &c.files.aligned_path, c.files.aligned_file.as_slice())
}

/// The machine limit read of `traces_packed.npy`.
#[cfg(target_os = "linux")]
fn limit_read_packed(c: &Ctx) -> Result<Duration> {
    common::limit::checked_read(common::limit::read, &c.files.packed_path, c.files.packed_file.as_slice())
}

/// The machine limit write ([`common::limit::write`]) of the aligned file's bytes.
#[cfg(target_os = "linux")]
fn limit_write_aligned(c: &Ctx) -> Result<Duration> {
    common::limit::write(&c.limit_out, c.files.aligned_file.as_slice(), false)
}

/// The machine limit write of the packed file's bytes.
#[cfg(target_os = "linux")]
fn limit_write_packed(c: &Ctx) -> Result<Duration> {
    common::limit::write(&c.limit_out, c.files.packed_file.as_slice(), false)
}
