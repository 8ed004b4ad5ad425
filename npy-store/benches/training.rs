//! `cargo bench -p npy-store --bench training`: a training loop's reads from Rust, next to
//! NumPy's, as `npy-python/bench.py`'s `small_*` and `shards_*` rows time them from Python.
//!
//! NumPy makes the files: this target starts `xtask/bench.py serve training` (`--peer
//! PYTHON`, required), which writes, in `DIR/training`, `--files N` small files (default
//! 5,000; 240 random `<f8`, 2 KiB each), 16 shards of 100,000 x 64 random `<f4` (25.6 MB
//! each) and `batches.npy`, 20 batches of 256 random rows of the shards joined along axis 0.
//! Arguments (after `--`): `--dir DIR` (default `target/bench`), `--files N`, `--repeat K`
//! (default 3), `--peer PYTHON`.
//!
//! In the same rounds (`common::run_rounds`: each run once untimed, then `K` times, memory
//! heated before each run):
//!
//! - `files_floor`: `std::fs::read` of each small file (the floor);
//! - `files_loader`: one `npy_core::Loader` reading each into a `DynArray`, in a loop;
//! - `files_load_many`: `npy_store::many::load_many`, threads as many as CPUs;
//! - `np_files_load`: `np.load` of each, in a loop (the peer's);
//! - `py_files_load_many`: the Python package's `npy.load_many` of them (the peer's);
//! - `gather_floor`: the 20 batches' rows, each by one `pread` of its bytes from the shards
//!   opened once, in a loop (the floor: the system calls the rows need, nothing else);
//! - `gather_read`: the 20 batches, each one `Shards::gather_raw` (files read by `pread`);
//! - `gather_mapped`: the same through maps (`ShardsOptions::map`);
//! - `np_gather_maps`: the best NumPy code for them (the peer's: maps opened once, rows
//!   grouped by shard, one fancy index per map);
//! - `py_gather_read`: the Python package's `npy.open(shards)[rows]` (the peer's).
//!
//! Each prints `bench <name> best=<s> median=<s> bytes=<data bytes>`. Every result is
//! checked after the clock stops: each small file's array against its data bytes, each
//! batch against the rows read from whole shards.

#[path = "../../benches/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{run_rounds, Args, Measure, Peer, Result};
use npy_core::mmap::MapContract;
use npy_core::prelude::*;
use npy_core::{DynArray, Loader, NpyReader};
use npy_store::{Shards, ShardsOptions};

/// The batches' shape, as `bench.py`'s `BATCHES` and `BATCH_ROWS`.
const BATCHES: usize = 20;
const BATCH_ROWS: usize = 256;

struct Ctx {
    files: Vec<PathBuf>,
    /// Each small file's data bytes (after its header).
    file_data: Vec<Vec<u8>>,
    threads: usize,
    runtime: tokio::runtime::Runtime,
    read: Shards,
    mapped: Shards,
    /// The shards opened once, with each one's first row and data offset, for the floor.
    shard_files: Vec<(std::fs::File, usize, u64)>,
    batches: Vec<Vec<usize>>,
    /// Each batch's bytes, from whole shards.
    batch_data: Vec<Vec<u8>>,
}

fn main() -> Result<()> {
    let args = Args::parse("training", &[("--files", 5_000)])?;
    let python = args.peer.clone().ok_or("the training bench needs --peer PYTHON: NumPy makes its files")?;
    let count = args.number("--files");
    std::fs::create_dir_all(&args.dir)?;
    let mut peer = Some(Peer::start(&python, "training", &args.dir, count)?);
    let dir = args.dir.join("training");
    eprintln!("training bench: {count} small files, 16 shards, {} runs each, in {}", args.repeat, dir.display());

    let files: Vec<PathBuf> = (0..count).map(|i| dir.join("files").join(format!("s{i:05}.npy"))).collect();
    let mut file_data = Vec::with_capacity(count);
    for path in &files {
        let bytes = std::fs::read(path)?;
        let data = NpyReader::from_reader(bytes.as_slice())?.data_offset();
        file_data.push(bytes[data..].to_vec());
    }
    let shard_paths: Vec<String> =
        (0..16).map(|i| dir.join("shards").join(format!("shard{i:02}.npy")).to_string_lossy().into_owned()).collect();
    let sources: Vec<&str> = shard_paths.iter().map(String::as_str).collect();
    let batches: Vec<usize> = Array::<i64>::read_npy(dir.join("batches.npy"))?
        .into_vec()
        .into_iter()
        .map(|r| usize::try_from(r).map_err(|_| format!("row {r} in batches.npy")))
        .collect::<std::result::Result<_, _>>()?;
    let batches: Vec<Vec<usize>> = batches.chunks(BATCH_ROWS).map(<[usize]>::to_vec).collect();
    if batches.len() != BATCHES {
        return Err(format!("batches.npy holds {} batches, not {BATCHES}", batches.len()).into());
    }

    // The rows each batch should give, from the shards read whole.
    let mut whole = Vec::new();
    for path in &shard_paths {
        whole.extend_from_slice(DynArray::read_npy(path)?.data());
    }
    let row_bytes = 64 * 4;
    let batch_data = batches
        .iter()
        .map(|rows| rows.iter().flat_map(|&r| &whole[r * row_bytes..(r + 1) * row_bytes]).copied().collect())
        .collect();
    drop(whole);

    // As `npy.open` runs them: one runtime of two worker threads.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let read = runtime.block_on(Shards::open(&sources))?;
    // SAFETY: the bench's own files, which nothing changes while it runs.
    let contract = unsafe { MapContract::accept() };
    let mapped = runtime.block_on(Shards::open_with(&sources, ShardsOptions::new().map(contract)))?;
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let mut shard_files = Vec::new();
    let mut first = 0;
    for path in &shard_paths {
        let reader = NpyReader::from_path(path)?;
        let (rows, offset) = (reader.header().shape[0], reader.data_offset() as u64);
        shard_files.push((std::fs::File::open(path)?, first, offset));
        first += rows;
    }
    let ctx = Ctx { files, file_data, threads, runtime, read, mapped, shard_files, batches, batch_data };

    let file_bytes = count * 2048;
    let batch_bytes = BATCHES * BATCH_ROWS * row_bytes;
    run_rounds(
        &ctx,
        &[
            Measure::new("files_floor", file_bytes, files_floor),
            Measure::new("files_loader", file_bytes, files_loader),
            Measure::new("files_load_many", file_bytes, files_load_many),
            Measure::peer("np_files_load", file_bytes),
            Measure::peer("py_files_load_many", file_bytes),
            Measure::new("gather_floor", batch_bytes, gather_floor),
            Measure::new("gather_read", batch_bytes, |c| gather(c, &c.read)),
            Measure::new("gather_mapped", batch_bytes, |c| gather(c, &c.mapped)),
            Measure::peer("np_gather_maps", batch_bytes),
            Measure::peer("py_gather_read", batch_bytes),
        ],
        args.repeat,
        64 << 20,
        &mut peer,
    )?;
    Ok(())
}

/// Each small file's bytes, by `std::fs::read`.
fn files_floor(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let got: Vec<Vec<u8>> = c.files.iter().map(std::fs::read).collect::<std::io::Result<_>>()?;
    let elapsed = started.elapsed();
    for ((bytes, want), path) in got.iter().zip(&c.file_data).zip(&c.files) {
        if !bytes.ends_with(want) {
            return Err(format!("{}: not its bytes", path.display()).into());
        }
    }
    Ok(elapsed)
}

/// Each small file by one [`Loader`], in a loop.
fn files_loader(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let mut loader = Loader::new();
    let got: Vec<DynArray> = c.files.iter().map(|p| loader.load(p)).collect::<npy_core::Result<_>>()?;
    let elapsed = started.elapsed();
    check_files(c, got.iter())?;
    Ok(elapsed)
}

/// Every small file by [`npy_store::many::load_many`].
fn files_load_many(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let got = npy_store::many::load_many(black_box(&c.files), c.threads);
    let elapsed = started.elapsed();
    let got: Vec<DynArray> = got.into_iter().collect::<npy_core::Result<_>>()?;
    check_files(c, got.iter())?;
    Ok(elapsed)
}

fn check_files<'a>(c: &Ctx, got: impl ExactSizeIterator<Item = &'a DynArray>) -> Result<()> {
    if got.len() != c.files.len() {
        return Err(format!("{} arrays for {} files", got.len(), c.files.len()).into());
    }
    for ((array, want), path) in got.zip(&c.file_data).zip(&c.files) {
        if array.data() != want.as_slice() || array.shape() != [240] {
            return Err(format!("{}: not its array", path.display()).into());
        }
    }
    Ok(())
}

/// The 20 batches' rows, each by one `pread` from the shard that holds it (opened once):
/// the system calls a batch needs, with nothing around them.
fn gather_floor(c: &Ctx) -> Result<Duration> {
    use std::os::unix::fs::FileExt;
    let row_bytes = 64 * 4;
    let started = Instant::now();
    let mut got = Vec::with_capacity(c.batches.len());
    for rows in &c.batches {
        let mut batch = vec![0u8; rows.len() * row_bytes];
        for (&row, out) in black_box(rows).iter().zip(batch.chunks_exact_mut(row_bytes)) {
            let shard = c.shard_files.partition_point(|&(_, first, _)| first <= row) - 1;
            let (file, first, offset) = &c.shard_files[shard];
            file.read_exact_at(out, offset + ((row - first) * row_bytes) as u64)?;
        }
        got.push(batch);
    }
    let elapsed = started.elapsed();
    if got != c.batch_data {
        return Err("a batch is not its rows".into());
    }
    Ok(elapsed)
}

/// The 20 batches, each one [`Shards::gather_raw`].
fn gather(c: &Ctx, shards: &Shards) -> Result<Duration> {
    let started = Instant::now();
    let mut got = Vec::with_capacity(c.batches.len());
    for rows in &c.batches {
        got.push(c.runtime.block_on(shards.gather_raw(black_box(rows)))?);
    }
    let elapsed = started.elapsed();
    if got != c.batch_data {
        return Err("a batch is not its rows".into());
    }
    Ok(elapsed)
}
