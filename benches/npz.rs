//! `cargo bench --bench npz`: npy writing and reading `.npz` archives of several arrays,
//! next to the same arrays as plain `.npy` files.
//!
//! `cargo xtask bench` runs this, then times NumPy (`np.savez`, `np.savez_compressed`,
//! `np.load`) on the same data, and prints the ratios the speed goals name. Arguments
//! (after `--`):
//!
//! - `--dir DIR`: scratch directory (default `target/bench`);
//! - `--arrays M`: arrays (members) per archive (default 8);
//! - `--elements N`: `f64`s per array (default 4,000,000: 32 MB, 256 MB for 8 arrays);
//! - `--repeat K`: runs per measurement (default 3);
//! - `--keep`: leave `a0.npy` … (plain files), `stored.npz` and `deflated.npz` in `DIR`
//!   (for NumPy) instead of deleting them.
//!
//! Array `k` holds `value(k, i)` (see [`value`]): steps of 0.5 that repeat every 10,000
//! values, offset by `k`, so deflate finds something to do, as in real data.
//!
//! Measurements, each run once untimed and then `K` times in interleaved rounds (writes and
//! reads in two groups), with the page cache warm for reads, dirty pages flushed before each
//! write, and 1.5 times the data size of memory touched and freed right before each run (as
//! the other benches, see `common::heat`):
//!
//! - `npy_write`: each array to its own `.npy` file (`write_npy_with`, `sync(false)`);
//! - `npz_write`: all arrays into one archive of stored members (`npz::Writer::create`,
//!   `add`, `sync(false)`, `finish`): what `np.savez` writes;
//! - `npz_write_deflate`: the same with deflate at level 6, as `np.savez_compressed`, the
//!   members compressed on worker threads (one per CPU, the default);
//! - `npy_read`: each `.npy` file into a `Vec<f64>`;
//! - `npz_read`: every member of the stored archive into a `Vec<f64>`
//!   (`npz::Reader::from_path`, `read::<f64>` of each name; CRCs checked);
//! - `npz_read_all`: every member of the stored archive at once (`read_all::<f64>`, members
//!   read on worker threads, one per CPU);
//! - `npz_read_deflate`: every member of the deflated archive at once
//!   (`npz::Reader::from_path`, `read_all::<f64>`: members inflating on worker threads, one per
//!   CPU; CRCs checked): npy's fastest read of the archive, the one compared with `np.load`;
//! - `npz_read_deflate_each`: the deflated archive read as `npz_read` reads the stored one,
//!   one member after another by name.
//!
//! None of the writes syncs to disk, like `np.save` and `np.savez`. Each prints one line:
//! `bench <name> best=<seconds> median=<seconds> bytes=<n>` (`bytes`: the data size of all
//! arrays). Results are checked after the clock stops: every array's length and values at
//! both ends and in the middle, every member name.

mod common;

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{remove_if_present, run_rounds, secs, sync, warm, Args, Measure, Result};
use npy_core::npz::{self, Compression};
use npy_core::prelude::*;
use npy_core::WriteOptions;

/// The value of array `k` at index `i`.
fn value(k: usize, i: usize) -> f64 {
    (i % 10_000) as f64 * 0.5 + k as f64
}

/// What the measurements share.
#[derive(Debug)]
struct Ctx {
    /// The arrays, in memory (written by the writes).
    arrays: Vec<Vec<f64>>,
    /// Member names: `a0`, `a1`, …
    names: Vec<String>,
    /// The plain files, one per array.
    npy: Vec<PathBuf>,
    stored: PathBuf,
    deflated: PathBuf,
    /// Where the writes write (removed after each run).
    out_npy: Vec<PathBuf>,
    out_npz: PathBuf,
}

impl Ctx {
    fn data_bytes(&self) -> usize {
        self.arrays.iter().map(|a| a.len() * 8).sum()
    }
}

fn main() -> Result<()> {
    let args = Args::parse("npz", &[("--arrays", 8), ("--elements", 4_000_000)])?;
    let (arrays, elements) = (args.number("--arrays"), args.number("--elements"));
    if arrays == 0 || elements == 0 {
        return Err("--arrays and --elements must be at least 1".into());
    }
    fs::create_dir_all(&args.dir)?;
    let ctx = setup(&args.dir, arrays, elements)?;
    eprintln!(
        "npz bench: {} arrays of {} f64 ({} bytes), {} runs each, in {}",
        arrays,
        elements,
        ctx.data_bytes(),
        args.repeat,
        args.dir.display()
    );
    let bytes = ctx.data_bytes();
    let writes: Vec<Measure<Ctx>> = vec![
        Measure::new("npy_write", bytes, npy_write),
        Measure::new("npz_write", bytes, npz_write),
        Measure::new("npz_write_deflate", bytes, npz_write_deflate),
    ];
    let reads: Vec<Measure<Ctx>> = vec![
        Measure::new("npy_read", bytes, npy_read),
        Measure::new("npz_read", bytes, npz_read),
        Measure::new("npz_read_all", bytes, npz_read_all),
        Measure::new("npz_read_deflate", bytes, npz_read_deflate),
        Measure::new("npz_read_deflate_each", bytes, npz_read_deflate_each),
    ];
    for path in ctx.npy.iter().chain([&ctx.stored, &ctx.deflated]) {
        warm(path)?;
    }
    let hot = bytes + bytes / 2;
    run_rounds(&ctx, &writes, args.repeat, hot, &mut None)?;
    run_rounds(&ctx, &reads, args.repeat, hot, &mut None)?;

    if !args.keep {
        for path in ctx.npy.iter().chain([&ctx.stored, &ctx.deflated]) {
            fs::remove_file(path)?;
        }
    }
    Ok(())
}

/// Makes the arrays and writes the plain files and both archives, then flushes them to
/// disk so their writeback does not run during the measurements.
fn setup(dir: &Path, count: usize, elements: usize) -> Result<Ctx> {
    let started = Instant::now();
    let arrays: Vec<Vec<f64>> = (0..count).map(|k| (0..elements).map(|i| value(k, i)).collect()).collect();
    let names: Vec<String> = (0..count).map(|k| format!("a{k}")).collect();
    let ctx = Ctx {
        npy: names.iter().map(|n| dir.join(format!("{n}.npy"))).collect(),
        out_npy: names.iter().map(|n| dir.join(format!("out-{n}.npy"))).collect(),
        stored: dir.join("stored.npz"),
        deflated: dir.join("deflated.npz"),
        out_npz: dir.join("out.npz"),
        arrays,
        names,
    };
    for (array, path) in ctx.arrays.iter().zip(&ctx.npy) {
        array.write_npy(path)?;
    }
    write_archive(&ctx, &ctx.stored, Compression::Stored)?;
    write_archive(&ctx, &ctx.deflated, Compression::deflated())?;
    sync();
    let (stored, deflated) = (fs::metadata(&ctx.stored)?.len(), fs::metadata(&ctx.deflated)?.len());
    eprintln!(
        "npz bench: wrote the plain files, {} ({stored} bytes) and {} ({deflated} bytes, {:.1}% of stored) in {:.2} s",
        ctx.stored.display(),
        ctx.deflated.display(),
        100.0 * deflated as f64 / stored as f64,
        secs(started.elapsed())
    );
    Ok(ctx)
}

/// Writes every array into the archive `path` with `compression`, not synced.
fn write_archive(c: &Ctx, path: &Path, compression: Compression) -> npy_core::Result<()> {
    let mut npz = npz::Writer::create(path)?;
    npz.sync(false).compression(compression);
    for (name, array) in c.names.iter().zip(&c.arrays) {
        npz.add(name, black_box(array))?;
    }
    npz.finish()
}

/// Fails unless `arrays` are the bench's arrays (lengths; values at both ends and the middle).
fn check_arrays(c: &Ctx, arrays: &[Vec<f64>]) -> Result<()> {
    if arrays.len() != c.arrays.len() {
        return Err(format!("got {} arrays, expected {}", arrays.len(), c.arrays.len()).into());
    }
    for (k, (got, want)) in arrays.iter().zip(&c.arrays).enumerate() {
        let n = want.len();
        if got.len() != n {
            return Err(format!("array {k}: {} values, expected {n}", got.len()).into());
        }
        for i in [0, n / 2, n - 1] {
            if got[i] != value(k, i) {
                return Err(format!("array {k} value {i} is {}, expected {}", got[i], value(k, i)).into());
            }
        }
    }
    Ok(())
}

/// Times `write` (after removing old outputs and flushing dirty pages), then checks what
/// it wrote with `read` and removes it.
fn timed_write(
    c: &Ctx,
    write: impl FnOnce() -> npy_core::Result<()>,
    read: impl FnOnce() -> Result<Vec<Vec<f64>>>,
) -> Result<Duration> {
    for path in c.out_npy.iter().chain([&c.out_npz]) {
        remove_if_present(path)?;
    }
    sync();
    let started = Instant::now();
    write()?;
    let elapsed = started.elapsed();
    check_arrays(c, &read()?)?;
    for path in c.out_npy.iter().chain([&c.out_npz]) {
        remove_if_present(path)?;
    }
    Ok(elapsed)
}

fn npy_write(c: &Ctx) -> Result<Duration> {
    timed_write(
        c,
        || {
            for (array, path) in c.arrays.iter().zip(&c.out_npy) {
                black_box(array).write_npy_with(path, WriteOptions::new().sync(false))?;
            }
            Ok(())
        },
        || read_npy_files(&c.out_npy),
    )
}

fn npz_write(c: &Ctx) -> Result<Duration> {
    timed_write(c, || write_archive(c, &c.out_npz, Compression::Stored), || read_archive(c, &c.out_npz))
}

fn npz_write_deflate(c: &Ctx) -> Result<Duration> {
    timed_write(c, || write_archive(c, &c.out_npz, Compression::deflated()), || read_archive(c, &c.out_npz))
}

fn read_npy_files(paths: &[PathBuf]) -> Result<Vec<Vec<f64>>> {
    Ok(paths.iter().map(Vec::<f64>::read_npy).collect::<npy_core::Result<_>>()?)
}

/// Opens the archive at `path`, checking the names are the bench's.
fn open_archive(c: &Ctx, path: &Path) -> Result<npz::Reader<std::io::BufReader<fs::File>>> {
    let npz = npz::Reader::from_path(path)?;
    if npz.names() != c.names.as_slice() {
        return Err(format!("{}: members {:?}, expected {:?}", path.display(), npz.names(), c.names).into());
    }
    Ok(npz)
}

/// Reads every member of the archive at `path` by name, one after another.
fn read_archive(c: &Ctx, path: &Path) -> Result<Vec<Vec<f64>>> {
    let mut npz = open_archive(c, path)?;
    Ok(c.names.iter().map(|name| npz.read::<Vec<f64>>(name)).collect::<npy_core::Result<_>>()?)
}

/// Reads every member of the archive at `path` at once (`read_all`).
fn read_archive_all(c: &Ctx, path: &Path) -> Result<Vec<Vec<f64>>> {
    Ok(open_archive(c, path)?.read_all::<Vec<f64>>()?)
}

/// Times `read`, then checks its result.
fn timed_read(c: &Ctx, read: impl FnOnce() -> Result<Vec<Vec<f64>>>) -> Result<Duration> {
    let started = Instant::now();
    let arrays = black_box(read()?);
    let elapsed = started.elapsed();
    check_arrays(c, &arrays)?;
    Ok(elapsed)
}

fn npy_read(c: &Ctx) -> Result<Duration> {
    timed_read(c, || read_npy_files(&c.npy))
}

fn npz_read(c: &Ctx) -> Result<Duration> {
    timed_read(c, || read_archive(c, &c.stored))
}

fn npz_read_all(c: &Ctx) -> Result<Duration> {
    timed_read(c, || read_archive_all(c, &c.stored))
}

fn npz_read_deflate(c: &Ctx) -> Result<Duration> {
    timed_read(c, || read_archive_all(c, &c.deflated))
}

fn npz_read_deflate_each(c: &Ctx) -> Result<Duration> {
    timed_read(c, || read_archive(c, &c.deflated))
}
