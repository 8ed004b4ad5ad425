//! `cargo bench --bench io`: npy reading and writing a big `<f8` file, next to what the
//! machine can do at best.
//!
//! `cargo xtask bench` runs this, then times NumPy on the same files, and prints the ratios
//! the speed goals name. Arguments (after `--`):
//!
//! - `--dir DIR`: scratch directory (default `target/bench`);
//! - `--bytes N`: data bytes per file, a multiple of 8 (default 1 GiB = 2^27 `f64`s);
//! - `--repeat K`: runs per measurement (default 3);
//! - `--keep`: leave `le.npy` and `be.npy` in `DIR` (for NumPy) instead of deleting them;
//! - `--peer PYTHON`: time NumPy's loads and saves of the same files (`xtask/bench.py`'s
//!   `np_load_le`, `np_load_be`, `np_load_be_astype`, `np_save`, `np_save_be`) in the
//!   same rounds as the reads and writes, in a `PYTHON` process started once
//!   ([`common::Peer`]), and print their lines too (`cargo xtask bench` does).
//!
//! Measurements, each run once untimed and then `K` times in interleaved rounds (so noise on
//! this shared machine hits them alike; each round starts one measurement later), with the
//! page cache warm for reads, dirty pages flushed before each write, and 1.5 times the data
//! size of memory touched and freed right before each run (`common::heat`: this VM hands
//! memory that sat free back to its host, and touching it again costs seconds per GiB):
//!
//! - `read_le`: `Vec::<f64>::read_npy` of a `<f8` file;
//! - `read_be`: the same values from a `>f8` file (byte-swapped into native `f64`s);
//! - `fs_read`: `std::fs::read` of the `<f8` file (context: a plain `Vec` of 4 KiB pages);
//! - `limit_read`: the machine limit: the page cache copied by `read()` into a fresh
//!   anonymous mapping advised to use transparent huge pages;
//! - `limit_read_2cpu`: the same with a second thread faulting the mapping's pages in
//!   meanwhile (`common::limit::read_two_cpus`), as npy's large reads do: the limit for
//!   them when a CPU is free;
//! - `write`: `data.write_npy_with(out.npy, WriteOptions::new().sync(false))`, atomic
//!   rename included: not synced to disk, like `np.save` and `limit_write`;
//! - `write_be`: the same `Vec<f64>` saved as `>f8` (`WriteOptions::byte_order(Big)`), the
//!   swap fused with the write (`np.save` of a `>f8` array is its peer);
//! - `limit_write`: the machine limit: create a file, `fallocate` it, `write()` an in-memory
//!   buffer of the same size, close;
//! - `write_synced`: `data.write_npy(out.npy)` with the default options, which sync the file
//!   and its directory before and after the rename;
//! - `limit_write_synced`: `limit_write` with an `fsync` before the close;
//! - `write_over` and `np_save_over` (with `--peer`): `write` and `np.save` as a user times
//!   them ([`common::run_user_loops`]): each in a loop of its own, over the file its last
//!   run wrote (`over.npy`, `np-over.npy`), nothing removed, flushed or
//!   touched in between, so each pays for freeing its old file and for the page cache it
//!   fills, as in a script's loop.
//!
//! Each prints one line to stdout: `bench <name> best=<seconds> median=<seconds> bytes=<n>`
//! (`bytes` is the data size). Times cover the operation only: freeing the result and
//! checking it (first and last value, so nothing can be skipped and a wrong result fails
//! the bench) come after the clock stops.

mod common;

use std::fs::{self, File};
use std::hint::black_box;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{remove_if_present, run_rounds, run_user_loops, secs, sync, warm, Args, Measure, Peer, Result};
use npy_core::dtype::ByteOrder;
use npy_core::prelude::*;
use npy_core::{DynArray, WriteOptions};

/// The value stored at index `i`: exact in `f64` for any index below 2^50, and different
/// in every byte position from its byte-swapped self, so a missed swap shows.
fn value(i: usize) -> f64 {
    i as f64 + 0.25
}

/// What the measurements share.
#[derive(Debug)]
struct Ctx {
    /// Number of `f64`s.
    n: usize,
    /// The values, in memory (written by `write`), as read from `le.npy`.
    data: Vec<f64>,
    /// The same values as big-endian bytes, as read from `be.npy`; its data is also the
    /// buffer `limit_write` writes.
    be_array: DynArray,
    le: PathBuf,
    be: PathBuf,
    out: PathBuf,
    /// What `write_over` writes over, round after round.
    over: PathBuf,
    limit_out: PathBuf,
}

impl Ctx {
    fn data_bytes(&self) -> usize {
        self.n * 8
    }
}

fn main() -> Result<()> {
    let args = Args::parse("io", &[("--bytes", 1 << 30)])?;
    let data_bytes = args.number("--bytes");
    if data_bytes < 16 || !data_bytes.is_multiple_of(8) {
        return Err(format!("--bytes must be a multiple of 8, at least 16 (got {data_bytes})").into());
    }
    fs::create_dir_all(&args.dir)?;
    let n = data_bytes / 8;
    let ctx = setup(&args.dir, n)?;
    eprintln!("io bench: {data_bytes} bytes of data per file, {} runs each, in {}", args.repeat, args.dir.display());

    let bytes = ctx.data_bytes();
    let mut reads: Vec<Measure<Ctx>> = vec![
        Measure::new("read_le", bytes, read_le),
        Measure::new("read_be", bytes, read_be),
        Measure::new("fs_read", bytes, fs_read),
    ];
    let mut writes: Vec<Measure<Ctx>> =
        vec![Measure::new("write", bytes, write), Measure::new("write_be", bytes, write_be)];
    // Synced writes wait for the disk (seconds per GiB here): a group of their own.
    let mut synced: Vec<Measure<Ctx>> = vec![Measure::new("write_synced", bytes, write_synced)];
    #[cfg(target_os = "linux")]
    {
        reads.insert(0, Measure::new("limit_read", bytes, limit_read));
        reads.insert(1, Measure::new("limit_read_2cpu", bytes, limit_read_2cpu));
        writes.insert(0, Measure::new("limit_write", bytes, limit_write));
        synced.insert(0, Measure::new("limit_write_synced", bytes, limit_write_synced));
    }

    // NumPy's loads and saves of the same files, in the same rounds as ours.
    let mut peer = args.peer.as_deref().map(|python| Peer::start(python, "f8", &args.dir, bytes)).transpose()?;
    if peer.is_some() {
        reads.extend(["np_load_le", "np_load_be", "np_load_be_astype"].map(|name| Measure::peer(name, bytes)));
        writes.extend(["np_save", "np_save_be"].map(|name| Measure::peer(name, bytes)));
    }

    for path in [&ctx.le, &ctx.be] {
        warm(path)?;
    }
    // No run allocates more than the file (or its page cache) and a little.
    let hot = bytes + bytes / 2;
    run_rounds(&ctx, &reads, args.repeat, hot, &mut peer)?;
    run_rounds(&ctx, &writes, args.repeat, hot, &mut peer)?;
    run_rounds(&ctx, &synced, args.repeat, hot, &mut peer)?;
    if peer.is_some() {
        let pair = [Measure::new("write_over", bytes, write_over), Measure::peer("np_save_over", bytes)];
        run_user_loops(&ctx, &pair, args.repeat, &mut peer, || {
            remove_if_present(&ctx.over)?;
            remove_if_present(&args.dir.join("np-over.npy"))
        })?;
    }
    drop(peer);

    if !args.keep {
        fs::remove_file(&ctx.le)?;
        fs::remove_file(&ctx.be)?;
    }
    Ok(())
}

/// Makes the values and writes `le.npy` and `be.npy`, then flushes them to disk so their
/// writeback does not run during the measurements. The values the writes write are those
/// files read back with npy, as NumPy's side saves the arrays `np.load` gave it: memory
/// the reading library allocated (both advise transparent huge pages for it).
fn setup(dir: &Path, n: usize) -> Result<Ctx> {
    let started = Instant::now();
    let (le, be) = (dir.join("le.npy"), dir.join("be.npy"));
    let made: Vec<f64> = (0..n).map(value).collect();
    made.write_npy(&le)?;
    made.write_npy_with(&be, WriteOptions::new().byte_order(ByteOrder::Big))?;
    drop(made);
    let data = Vec::<f64>::read_npy(&le)?;
    check_values(&data, n)?;
    let be_array = DynArray::read_npy(&be)?;
    if be_array.header().dtype != ">f8".parse()? || be_array.to_vec::<f64>()? != data {
        return Err(format!("{} does not hold the values of {} as >f8", be.display(), le.display()).into());
    }
    let (out, over, limit_out) = (dir.join("out.npy"), dir.join("over.npy"), dir.join("limit-out.bin"));
    let ctx = Ctx { n, data, be_array, le, be, out, over, limit_out };
    sync();
    eprintln!("io bench: wrote {} and {} in {:.2} s", ctx.le.display(), ctx.be.display(), secs(started.elapsed()));
    Ok(ctx)
}

/// Fails unless `v` holds the `n` values of [`value`] (checked at both ends and the middle).
fn check_values(v: &[f64], n: usize) -> Result<()> {
    if v.len() != n {
        return Err(format!("got {} values, expected {n}", v.len()).into());
    }
    for i in [0, n / 2, n - 1] {
        if v[i] != value(i) {
            return Err(format!("value {i} is {}, expected {}", v[i], value(i)).into());
        }
    }
    Ok(())
}

/// Fails unless `file` is a whole `.npy` file of `n` `f64`s whose last value is right,
/// in little-endian (`<f8`) bytes.
fn check_file_tail(file: &[u8], n: usize) -> Result<()> {
    let expect = value(n - 1).to_le_bytes();
    if file.len() < n * 8 || file[file.len() - 8..] != expect {
        return Err(format!("file of {} bytes does not end with value {}", file.len(), value(n - 1)).into());
    }
    Ok(())
}

fn read_le(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let v = black_box(Vec::<f64>::read_npy(&c.le)?);
    let elapsed = started.elapsed();
    check_values(&v, c.n)?;
    Ok(elapsed)
}

fn read_be(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let v = black_box(Vec::<f64>::read_npy(&c.be)?);
    let elapsed = started.elapsed();
    check_values(&v, c.n)?;
    Ok(elapsed)
}

fn fs_read(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let bytes = black_box(fs::read(&c.le)?);
    let elapsed = started.elapsed();
    check_file_tail(&bytes, c.n)?;
    Ok(elapsed)
}

fn write(c: &Ctx) -> Result<Duration> {
    timed_write(c, |path| black_box(&c.data).write_npy_with(path, WriteOptions::new().sync(false)))
}

fn write_be(c: &Ctx) -> Result<Duration> {
    let mut options = WriteOptions::new();
    options.sync(false).byte_order(ByteOrder::Big);
    timed_write_as(c, value(c.n - 1).to_be_bytes(), |path| black_box(&c.data).write_npy_with(path, &options))
}

fn write_synced(c: &Ctx) -> Result<Duration> {
    timed_write(c, |path| black_box(&c.data).write_npy(path))
}

/// Times `write` of `c.out` (after removing any old file and flushing dirty pages), then
/// checks the file's size and last value, and removes it.
fn timed_write(c: &Ctx, write: impl FnOnce(&Path) -> npy_core::Result<()>) -> Result<Duration> {
    timed_write_as(c, value(c.n - 1).to_le_bytes(), write)
}

/// [`timed_write`] of a file whose last 8 bytes must be `last`.
fn timed_write_as(c: &Ctx, last: [u8; 8], write: impl FnOnce(&Path) -> npy_core::Result<()>) -> Result<Duration> {
    remove_if_present(&c.out)?;
    sync();
    let started = Instant::now();
    write(&c.out)?;
    let elapsed = started.elapsed();
    check_written(c, &c.out, last)?;
    fs::remove_file(&c.out)?;
    Ok(elapsed)
}

/// Fails unless `path` holds at least the data's bytes and ends with `last`.
fn check_written(c: &Ctx, path: &Path, last: [u8; 8]) -> Result<()> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut tail = [0u8; 8];
    file.seek(SeekFrom::End(-8))?;
    file.read_exact(&mut tail)?;
    if len < c.data_bytes() as u64 || tail != last {
        return Err(format!("{}: {len} bytes, last value wrong", path.display()).into());
    }
    Ok(())
}

/// `write` over the file the last run wrote, as a user's loop saves: nothing removed or
/// flushed first ([`common::run_user_loops`]).
fn write_over(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    black_box(&c.data).write_npy_with(&c.over, WriteOptions::new().sync(false))?;
    let elapsed = started.elapsed();
    check_written(c, &c.over, value(c.n - 1).to_le_bytes())?;
    Ok(elapsed)
}

/// The machine limit read ([`common::limit::read`]) of the `<f8` file.
#[cfg(target_os = "linux")]
fn limit_read(c: &Ctx) -> Result<Duration> {
    let (elapsed, buffer) = common::limit::read(&c.le)?;
    check_file_tail(buffer.as_slice(), c.n)?;
    Ok(elapsed)
}

/// The two-CPU limit read ([`common::limit::read_two_cpus`]) of the `<f8` file.
#[cfg(target_os = "linux")]
fn limit_read_2cpu(c: &Ctx) -> Result<Duration> {
    let (elapsed, buffer) = common::limit::read_two_cpus(&c.le)?;
    check_file_tail(buffer.as_slice(), c.n)?;
    Ok(elapsed)
}

/// The machine limit write ([`common::limit::write`]) of the `>f8` data bytes.
#[cfg(target_os = "linux")]
fn limit_write(c: &Ctx) -> Result<Duration> {
    common::limit::write(&c.limit_out, c.be_array.data(), false)
}

/// The machine limit write, synced to disk before the close.
#[cfg(target_os = "linux")]
fn limit_write_synced(c: &Ctx) -> Result<Duration> {
    common::limit::write(&c.limit_out, c.be_array.data(), true)
}
