//! `cargo bench --bench records`: npy reading and writing Simon's seismic `Trace` records
//! (`examples/seismic.rs`), next to the machine limit and npyz.
//!
//! `cargo xtask bench` runs this, then times NumPy on the same files, and prints the ratios
//! the speed goals name. Arguments (after `--`):
//!
//! - `--dir DIR`: scratch directory (default `target/bench`);
//! - `--records N`: records per file (default 4,000,000: 1.13 GiB aligned, 1.09 GiB packed);
//! - `--repeat K`: runs per measurement (default 3);
//! - `--keep`: leave `traces_aligned.npy` and `traces_packed.npy` in `DIR` (for NumPy)
//!   instead of deleting them;
//! - `--peer PYTHON`: time NumPy's `np.load` and `np.save` of the same files
//!   (`xtask/bench.py`'s `np_load_aligned`, `np_load_packed`, `np_save_aligned`,
//!   `np_save_packed`) in the same rounds as the reads and writes, in a `PYTHON` process
//!   started once ([`common::Peer`]), and print their lines too (`cargo xtask bench` does).
//!
//! The record: `trace_id: i32`, a nested `receiver {x: f64, y: f64, z: f32}`, `t0: f64`,
//! `dt: f32`, `flags: u8`, `samples: [f32; 64]`, in two layouts, both files written by npy:
//!
//! - `traces_aligned.npy`: NumPy's `align=True` layout, 304 bytes a record, which
//!   `TraceAligned` (`#[npy(align)] #[repr(C)]`) matches in memory: reads and writes are
//!   bulk copies;
//! - `traces_packed.npy`: NumPy's default packed layout, 293 bytes a record (`Trace`,
//!   a plain derive, whose memory layout Rust chooses).
//!
//! Measurements, each run once untimed and then `K` times in interleaved rounds (each round
//! starting one measurement later; the reads, the writes, npyz's two and the synced writes
//! in four groups), with the page cache warm for reads, dirty pages flushed before each
//! write, and 1.5 times the aligned file's size of memory touched and freed right before
//! each run (`common::heat`: this VM hands memory that sat free back to its host, and
//! touching it again costs seconds per GiB):
//!
//! - `limit_read_aligned`, `limit_read_packed`: the machine limit: the page cache copied
//!   by `read()` into a fresh anonymous mapping advised to use transparent huge pages;
//! - `limit_read_aligned_2cpu`, `limit_read_packed_2cpu`: the same with a second thread
//!   faulting the buffer's pages in meanwhile (`common::limit::read_two_cpus`), as npy's
//!   large reads do: the limit for them when a CPU is free;
//! - `read_aligned`: `Vec::<TraceAligned>::read_npy(traces_aligned.npy)` (matched layout);
//! - `read_packed_to_aligned`: `Vec::<TraceAligned>::read_npy(traces_packed.npy)` (the
//!   conversion path: packed file into the aligned struct);
//! - `read_packed`: `Vec::<Trace>::read_npy(traces_packed.npy)` (context);
//! - `read_packed_mem`: `Vec::<TracePacked>::read_npy(traces_packed.npy)`, the struct
//!   whose memory is the packed layout (`#[repr(C, packed)]`): a bulk copy;
//! - `npyz_read`: npyz 0.8's derive read of `traces_packed.npy`
//!   (`NpyFile::new(BufReader<File>)?.data::<NpyzTrace>()?` collected into a `Vec`; npyz
//!   cannot read padded records, so only the packed file);
//! - `limit_write_aligned`, `limit_write_packed`: the machine limit: create a file,
//!   `fallocate` it, `write()` an in-memory buffer of the file's size (its bytes), close;
//! - `write_aligned`: `traces.write_npy_with(out.npy, WriteOptions::new().sync(false))` of
//!   `TraceAligned`s (matched layout), atomic rename included: not synced to disk, like
//!   `np.save`, npyz and the limit;
//! - `write_packed`: the same of `Trace`s (the conversion path: Rust's layout to the
//!   packed file layout);
//! - `write_packed_mem`: the same of `TracePacked`s (a bulk copy);
//! - `npyz_write`: npyz's derive write of the packed records
//!   (`WriteOptions::new().default_dtype().shape(&[n]).writer(BufWriter<File>).begin_nd()?`,
//!   `push` each, `finish`);
//! - `write_aligned_synced`: `traces.write_npy(out.npy)` with the default options, which
//!   sync the file and its directory; `limit_write_aligned_synced`: the limit write of the
//!   aligned file's bytes with an `fsync` before the close;
//! - as a user times them ([`common::run_user_loops`]: each in a loop of its own, two
//!   untimed runs and then the timed ones, nothing flushed or touched in between), with
//!   `--peer`, like for like, `sync(false)` against `np.save`:
//!   - over the file the same write's last run left: `write_aligned_over`,
//!     `write_aligned_in_place` (not atomic: `write_npy_to(File::create(path))`, the file
//!     truncated and written through, as `np.save` writes) and `np_save_aligned_over`;
//!     `write_packed_over` (the plain derive's `Trace`s, the conversion path),
//!     `write_packed_mem_over` and `np_save_packed_over`;
//!   - to a new file each run (two names in turn, the older file removed first, untimed):
//!     `write_aligned_new` and `np_save_aligned_new`, `write_packed_new`
//!     (`Trace`s) and `np_save_packed_new`.
//!
//! Each prints one line to stdout: `bench <name> best=<seconds> median=<seconds> bytes=<n>`
//! (`bytes` is the data size of the file read or written). Times cover the operation only:
//! freeing the result and checking it (records at both ends and in between, compared field
//! by field, so nothing can be skipped and a wrong result fails the bench) come after the
//! clock stops.

mod common;

use std::fs::{self, File};
use std::hint::black_box;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::trace::{
    check_count, check_file, checkpoints, packed, packed_mem, trace, write_files, Files, Trace, TraceAligned,
    TracePacked, ALIGNED_SIZE, PACKED_SIZE, SAMPLES, TAIL,
};
use common::{remove_if_present, run_rounds, run_user_loops, sync, warm, Args, Measure, Peer, Result};
use npy_core::prelude::*;
use npy_core::WriteOptions;

#[derive(npyz::Deserialize, npyz::Serialize, npyz::AutoSerialize, Debug, Clone, Copy, PartialEq)]
struct NpyzReceiver {
    x: f64,
    y: f64,
    z: f32,
}

/// The packed record as npyz derives it (npyz handles the nested record and the subarray).
#[derive(npyz::Deserialize, npyz::Serialize, npyz::AutoSerialize, Debug, Clone, Copy, PartialEq)]
struct NpyzTrace {
    trace_id: i32,
    receiver: NpyzReceiver,
    t0: f64,
    dt: f32,
    flags: u8,
    samples: [f32; SAMPLES],
}

fn npyz_trace(t: &TraceAligned) -> NpyzTrace {
    let r = t.receiver;
    NpyzTrace {
        trace_id: t.trace_id,
        receiver: NpyzReceiver { x: r.x, y: r.y, z: r.z },
        t0: t.t0,
        dt: t.dt,
        flags: t.flags,
        samples: t.samples,
    }
}

/// What the measurements share.
#[derive(Debug)]
struct Ctx {
    /// Number of records.
    n: usize,
    /// The records, in memory, in each form the writes write.
    aligned: Vec<TraceAligned>,
    packed: Vec<Trace>,
    packed_mem: Vec<TracePacked>,
    npyz: Vec<NpyzTrace>,
    /// `traces_aligned.npy` and `traces_packed.npy`, and their bytes.
    files: Files,
    out: PathBuf,
    limit_out: PathBuf,
    /// Runs so far of `write_aligned_new` and `write_packed_new` ([`timed_new`]).
    new_runs: [std::cell::Cell<usize>; 2],
}

fn main() -> Result<()> {
    let args = Args::parse("records", &[("--records", 4_000_000)])?;
    let records = args.number("--records");
    check_count(records)?;
    fs::create_dir_all(&args.dir)?;
    let ctx = setup(&args.dir, records)?;
    let (aligned, packed) = (ctx.n * ALIGNED_SIZE, ctx.n * PACKED_SIZE);
    eprintln!(
        "records bench: {} records ({aligned} bytes aligned, {packed} packed), {} runs each, in {}",
        ctx.n,
        args.repeat,
        args.dir.display()
    );

    let mut reads: Vec<Measure<Ctx>> = vec![
        Measure::new("read_aligned", aligned, read_aligned),
        Measure::new("read_packed_to_aligned", packed, read_packed_to_aligned),
        Measure::new("read_packed", packed, read_packed),
        Measure::new("read_packed_mem", packed, read_packed_mem),
    ];
    let mut writes: Vec<Measure<Ctx>> = vec![
        Measure::new("write_aligned", aligned, write_aligned),
        Measure::new("write_packed", packed, write_packed),
        Measure::new("write_packed_mem", packed, write_packed_mem),
    ];
    // npyz takes seconds: a group of its own, so no fast measurement always runs right
    // after it (the one that did, the aligned limit read, was 25-35% slower for it).
    let npyz: Vec<Measure<Ctx>> =
        vec![Measure::new("npyz_read", packed, npyz_read), Measure::new("npyz_write", packed, npyz_write)];
    // Synced writes wait for the disk (seconds per GiB here): a group of their own.
    let mut synced: Vec<Measure<Ctx>> = vec![Measure::new("write_aligned_synced", aligned, write_aligned_synced)];
    #[cfg(target_os = "linux")]
    {
        reads.insert(0, Measure::new("limit_read_aligned", aligned, limit_read_aligned));
        reads.insert(1, Measure::new("limit_read_packed", packed, limit_read_packed));
        reads.insert(2, Measure::new("limit_read_aligned_2cpu", aligned, limit_read_aligned_2cpu));
        reads.insert(3, Measure::new("limit_read_packed_2cpu", packed, limit_read_packed_2cpu));
        writes.insert(0, Measure::new("limit_write_aligned", aligned, limit_write_aligned));
        writes.insert(1, Measure::new("limit_write_packed", packed, limit_write_packed));
        synced.insert(0, Measure::new("limit_write_aligned_synced", aligned, limit_write_aligned_synced));
    }

    // NumPy's loads and saves of the same files, in the same rounds as ours.
    let mut peer = args.peer.as_deref().map(|python| Peer::start(python, "records", &args.dir, ctx.n)).transpose()?;
    if peer.is_some() {
        reads.push(Measure::peer("np_load_aligned", aligned));
        reads.push(Measure::peer("np_load_packed", packed));
        writes.push(Measure::peer("np_save_aligned", aligned));
        writes.push(Measure::peer("np_save_packed", packed));
    }

    for path in [&ctx.files.aligned_path, &ctx.files.packed_path] {
        warm(path)?;
    }
    // No run allocates more than 1.25 files' worth (npyz's read grows its `Vec` by doubling).
    let hot = aligned + aligned / 2;
    run_rounds(&ctx, &reads, args.repeat, hot, &mut peer)?;
    run_rounds(&ctx, &writes, args.repeat, hot, &mut peer)?;
    run_rounds(&ctx, &npyz, args.repeat, hot, &mut peer)?;
    run_rounds(&ctx, &synced, args.repeat, hot, &mut peer)?;
    if peer.is_some() {
        let loops = [
            Measure::new("write_aligned_over", aligned, write_aligned_over),
            Measure::peer("np_save_aligned_over", aligned),
            Measure::new("write_aligned_in_place", aligned, write_aligned_in_place),
            Measure::new("write_packed_over", packed, write_packed_over),
            Measure::new("write_packed_mem_over", packed, write_packed_mem_over),
            Measure::peer("np_save_packed_over", packed),
            Measure::new("write_aligned_new", aligned, write_aligned_new),
            Measure::peer("np_save_aligned_new", aligned),
            Measure::new("write_packed_new", packed, write_packed_new),
            Measure::peer("np_save_packed_new", packed),
        ];
        // Each loop's files are removed after it: all of them at once would take 14 GB.
        run_user_loops(&ctx, &loops, args.repeat, &mut peer, || remove_loop_files(&args.dir, &ctx.out))?;
    }
    drop(peer);

    if !args.keep {
        fs::remove_file(&ctx.files.aligned_path)?;
        fs::remove_file(&ctx.files.packed_path)?;
    }
    Ok(())
}

/// Removes every file the loops of saves ([`common::run_user_loops`]) leave: npy's beside
/// `out`, NumPy's in `dir`.
fn remove_loop_files(dir: &Path, out: &Path) -> Result<()> {
    for stem in ["aligned", "in-place", "packed", "packed-mem"] {
        remove_if_present(&out.with_extension(format!("{stem}.npy")))?;
    }
    for stem in ["aligned", "packed"] {
        remove_if_present(&dir.join(format!("np-over.{stem}.npy")))?;
        for k in 0..2 {
            remove_if_present(&out.with_extension(format!("{stem}.new{k}.npy")))?;
            remove_if_present(&dir.join(format!("np-new.{stem}.new{k}.npy")))?;
        }
    }
    Ok(())
}

/// Makes the records and writes `traces_aligned.npy` and `traces_packed.npy` with npy
/// ([`common::trace::write_files`]). The records the writes write are those files read
/// back with npy, as NumPy's side saves the arrays `np.load` gave it: memory the reading
/// library allocated (both advise transparent huge pages for it). npyz's are converted
/// from them.
fn setup(dir: &Path, n: usize) -> Result<Ctx> {
    let made: Vec<TraceAligned> = (0..n).map(trace).collect();
    let made_packed: Vec<Trace> = made.iter().map(packed).collect();
    let files = write_files(dir, &made, &made_packed, "records")?;
    drop((made, made_packed));
    let aligned = Vec::<TraceAligned>::read_npy(&files.aligned_path)?;
    check_records(&aligned, n, |t| *t)?;
    let packed = Vec::<Trace>::read_npy(&files.packed_path)?;
    check_records(&packed, n, common::trace::packed)?;
    let packed_mem = Vec::<TracePacked>::read_npy(&files.packed_path)?;
    check_records(&packed_mem, n, common::trace::packed_mem)?;
    let npyz: Vec<NpyzTrace> = aligned.iter().map(npyz_trace).collect();
    let (out, limit_out) = (dir.join("out.npy"), dir.join("limit-out.bin"));
    Ok(Ctx { n, aligned, packed, packed_mem, npyz, files, out, limit_out, new_runs: Default::default() })
}

/// Fails unless `v` holds the `n` records of [`trace`] (as `expect` converts them),
/// checked at both ends and at 63 points between.
fn check_records<T: PartialEq + std::fmt::Debug>(v: &[T], n: usize, expect: impl Fn(&TraceAligned) -> T) -> Result<()> {
    if v.len() != n {
        return Err(format!("got {} records, expected {n}", v.len()).into());
    }
    for i in checkpoints(n) {
        let want = expect(&trace(i));
        if v[i] != want {
            return Err(format!("record {i} is {:?}, expected {want:?}", v[i]).into());
        }
    }
    Ok(())
}

/// Times one `read` (the clock stops before the result is checked and freed).
fn timed<T>(read: impl FnOnce() -> Result<T>, check: impl FnOnce(&T) -> Result<()>) -> Result<Duration> {
    let started = Instant::now();
    let v = black_box(read()?);
    let elapsed = started.elapsed();
    check(&v)?;
    drop(v);
    Ok(elapsed)
}

fn read_aligned(c: &Ctx) -> Result<Duration> {
    timed(|| Ok(Vec::<TraceAligned>::read_npy(&c.files.aligned_path)?), |v| check_records(v, c.n, |t| *t))
}

fn read_packed_to_aligned(c: &Ctx) -> Result<Duration> {
    timed(|| Ok(Vec::<TraceAligned>::read_npy(&c.files.packed_path)?), |v| check_records(v, c.n, |t| *t))
}

fn read_packed(c: &Ctx) -> Result<Duration> {
    timed(|| Ok(Vec::<Trace>::read_npy(&c.files.packed_path)?), |v| check_records(v, c.n, packed))
}

fn read_packed_mem(c: &Ctx) -> Result<Duration> {
    timed(|| Ok(Vec::<TracePacked>::read_npy(&c.files.packed_path)?), |v| check_records(v, c.n, packed_mem))
}

fn npyz_read(c: &Ctx) -> Result<Duration> {
    timed(
        || {
            let file = npyz::NpyFile::new(BufReader::new(File::open(&c.files.packed_path)?))?;
            let records = file.data::<NpyzTrace>().map_err(|e| format!("npyz: {e}"))?;
            Ok(records.collect::<std::io::Result<Vec<NpyzTrace>>>()?)
        },
        |v| check_records(v, c.n, npyz_trace),
    )
}

/// Times one `write` to `c.out` (after removing any old file and flushing dirty pages),
/// then checks that the file has the data bytes and ends with the last record's samples,
/// and removes it.
fn timed_write(c: &Ctx, data: usize, write: impl FnOnce(&Path) -> Result<()>) -> Result<Duration> {
    remove_if_present(&c.out)?;
    sync();
    let started = Instant::now();
    write(&c.out)?;
    let elapsed = started.elapsed();
    check_written(c, data, &c.out)?;
    fs::remove_file(&c.out)?;
    Ok(elapsed)
}

/// Fails unless `path` has `data` data bytes and ends with the last record's samples.
fn check_written(c: &Ctx, data: usize, path: &Path) -> Result<()> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut end = vec![0u8; TAIL];
    file.seek(SeekFrom::End(-(TAIL as i64)))?;
    file.read_exact(&mut end)?;
    check_file(len, &end, data, &c.files.tail, path)
}

/// One `write` over the file the last run of the same write left at `path`, as a user's
/// loop saves: nothing removed or flushed first ([`common::run_user_loops`]).
fn timed_over(c: &Ctx, data: usize, path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<Duration> {
    let started = Instant::now();
    write(path)?;
    let elapsed = started.elapsed();
    check_written(c, data, path)?;
    Ok(elapsed)
}

fn write_aligned_over(c: &Ctx) -> Result<Duration> {
    timed_over(c, c.n * ALIGNED_SIZE, &c.out.with_extension("aligned.npy"), |path| {
        Ok(black_box(&c.aligned).write_npy_with(path, WriteOptions::new().sync(false))?)
    })
}

/// As [`write_aligned_over`], but in place, as `np.save` writes: the file truncated and
/// written through (`write_npy_to(File::create(path))`), not atomic.
fn write_aligned_in_place(c: &Ctx) -> Result<Duration> {
    timed_over(c, c.n * ALIGNED_SIZE, &c.out.with_extension("in-place.npy"), |path| {
        black_box(&c.aligned).write_npy_to(File::create(path)?)?;
        Ok(())
    })
}

fn write_packed_over(c: &Ctx) -> Result<Duration> {
    timed_over(c, c.n * PACKED_SIZE, &c.out.with_extension("packed.npy"), |path| {
        Ok(black_box(&c.packed).write_npy_with(path, WriteOptions::new().sync(false))?)
    })
}

fn write_packed_mem_over(c: &Ctx) -> Result<Duration> {
    timed_over(c, c.n * PACKED_SIZE, &c.out.with_extension("packed-mem.npy"), |path| {
        Ok(black_box(&c.packed_mem).write_npy_with(path, WriteOptions::new().sync(false))?)
    })
}

/// One `write` to a new file, as a user's loop that saves each result under a new name:
/// `<out>.<stem>.new<k>.npy`, `k` alternating between runs, the file the run before last
/// left there removed first (untimed), so it is always created; the last run's file stays.
fn timed_new(
    c: &Ctx,
    data: usize,
    stem: &str,
    runs: &std::cell::Cell<usize>,
    write: impl FnOnce(&Path) -> Result<()>,
) -> Result<Duration> {
    let k = runs.get() % 2;
    runs.set(runs.get() + 1);
    let path = c.out.with_extension(format!("{stem}.new{k}.npy"));
    remove_if_present(&path)?;
    let started = Instant::now();
    write(&path)?;
    let elapsed = started.elapsed();
    check_written(c, data, &path)?;
    Ok(elapsed)
}

fn write_aligned_new(c: &Ctx) -> Result<Duration> {
    timed_new(c, c.n * ALIGNED_SIZE, "aligned", &c.new_runs[0], |path| {
        Ok(black_box(&c.aligned).write_npy_with(path, WriteOptions::new().sync(false))?)
    })
}

fn write_packed_new(c: &Ctx) -> Result<Duration> {
    timed_new(c, c.n * PACKED_SIZE, "packed", &c.new_runs[1], |path| {
        Ok(black_box(&c.packed).write_npy_with(path, WriteOptions::new().sync(false))?)
    })
}

fn write_aligned(c: &Ctx) -> Result<Duration> {
    timed_write(c, c.n * ALIGNED_SIZE, |path| {
        Ok(black_box(&c.aligned).write_npy_with(path, WriteOptions::new().sync(false))?)
    })
}

fn write_packed(c: &Ctx) -> Result<Duration> {
    timed_write(c, c.n * PACKED_SIZE, |path| {
        Ok(black_box(&c.packed).write_npy_with(path, WriteOptions::new().sync(false))?)
    })
}

fn write_packed_mem(c: &Ctx) -> Result<Duration> {
    timed_write(c, c.n * PACKED_SIZE, |path| {
        Ok(black_box(&c.packed_mem).write_npy_with(path, WriteOptions::new().sync(false))?)
    })
}

fn write_aligned_synced(c: &Ctx) -> Result<Duration> {
    timed_write(c, c.n * ALIGNED_SIZE, |path| Ok(black_box(&c.aligned).write_npy(path)?))
}

fn npyz_write(c: &Ctx) -> Result<Duration> {
    use npyz::WriterBuilder;
    timed_write(c, c.n * PACKED_SIZE, |path| {
        let mut writer = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[c.n as u64])
            .writer(BufWriter::new(File::create(path)?))
            .begin_nd()?;
        for record in black_box(&c.npyz) {
            writer.push(record)?;
        }
        writer.finish()?;
        Ok(())
    })
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

/// The two-CPU limit read ([`common::limit::read_two_cpus`]) of `traces_aligned.npy`.
#[cfg(target_os = "linux")]
fn limit_read_aligned_2cpu(c: &Ctx) -> Result<Duration> {
    common::limit::checked_read(common::limit::read_two_cpus, &c.files.aligned_path, c.files.aligned_file.as_slice())
}

/// The two-CPU limit read of `traces_packed.npy`.
#[cfg(target_os = "linux")]
fn limit_read_packed_2cpu(c: &Ctx) -> Result<Duration> {
    common::limit::checked_read(common::limit::read_two_cpus, &c.files.packed_path, c.files.packed_file.as_slice())
}

/// The machine limit write ([`common::limit::write`]) of as many bytes as
/// `traces_aligned.npy` (its bytes).
#[cfg(target_os = "linux")]
fn limit_write_aligned(c: &Ctx) -> Result<Duration> {
    common::limit::write(&c.limit_out, c.files.aligned_file.as_slice(), false)
}

/// The machine limit write of the aligned file's bytes, synced to disk before the close.
#[cfg(target_os = "linux")]
fn limit_write_aligned_synced(c: &Ctx) -> Result<Duration> {
    common::limit::write(&c.limit_out, c.files.aligned_file.as_slice(), true)
}

/// The machine limit write of as many bytes as `traces_packed.npy`.
#[cfg(target_os = "linux")]
fn limit_write_packed(c: &Ctx) -> Result<Duration> {
    common::limit::write(&c.limit_out, c.files.packed_file.as_slice(), false)
}
