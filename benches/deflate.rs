//! `cargo bench --bench deflate`: one deflated member of each kind of array people save,
//! written by npy's `npz::Writer` and by `np.savez_compressed`, for time and for size, and
//! NumPy's member read back by npy's `npz::Reader` and by `np.load`.
//!
//! NumPy makes the corpus: this target starts `xtask/bench.py serve deflate` (`--peer
//! PYTHON`, required), which writes one array of each kind (`deflate_corpus` there: the
//! traces' `trace_id`, `t0`, `flags` and `samples` columns, random floats, small integers,
//! words, zeros, a random walk, integers 0-49, an image) as `DIR/deflate/KIND.npy`, and NumPy's archive of it as
//! `np-KIND.npz`. Arguments (after `--`): `--dir DIR` (default `target/bench`), `--traces N`
//! (default 100,000; the other kinds have 20 times as many elements), `--repeat K`
//! (default 3), `--peer PYTHON`.
//!
//! For each kind, in rounds of their own, each run once untimed and then `K` times, with
//! dirty pages flushed and memory heated before each run (`common::run_rounds`):
//!
//! - `deflate_KIND`: the array, read into memory first, into a new archive at level 6
//!   (`npz::Writer::create`, `compression(Compression::deflated())`, `add`, `sync(false)`,
//!   `finish`), threads as many as CPUs (the default);
//! - `deflate1_KIND`: the same on one thread (`threads(1)`);
//! - `inflate1_KIND`: NumPy's archive's member read (`npz::Reader::from_path_with`, options
//!   `threads(1)`, `read::<DynArray>`) on one thread;
//! - `np_deflate_KIND`: `np.savez_compressed` of the same array (the peer's);
//! - `np_inflate_KIND`: `np.load` of NumPy's archive, the member read (the peer's).
//!
//! Each prints `bench <name> best=<s> median=<s> bytes=<data bytes>`; then two size lines a
//! kind, times 0: `size_KIND`, the member npy wrote (its compressed size), and
//! `np_size_KIND`, the member in NumPy's archive. Each write is read back, and each read
//! compared, with the array after the clock stops.

mod common;

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{remove_if_present, run_rounds, sync, Args, Measure, Peer, Result};
use npy_core::npz::{self, Compression};
use npy_core::prelude::*;

/// The kinds, in `bench.py`'s `DEFLATE_KINDS` order: kind, then our rows (written on every
/// CPU, written on one thread, NumPy's archive read on one thread) and NumPy's (written,
/// read).
macro_rules! kinds {
    ($($kind:literal),* $(,)?) => {
        [$(Kind {
            kind: $kind,
            write: concat!("deflate_", $kind),
            write_one: concat!("deflate1_", $kind),
            read_one: concat!("inflate1_", $kind),
            np_write: concat!("np_deflate_", $kind),
            np_read: concat!("np_inflate_", $kind),
        }),*]
    };
}

/// A kind's name and its rows' names.
struct Kind {
    kind: &'static str,
    write: &'static str,
    write_one: &'static str,
    read_one: &'static str,
    np_write: &'static str,
    np_read: &'static str,
}

const KINDS: [Kind; 11] = kinds![
    "trace_id",
    "t0",
    "flags",
    "samples",
    "random_f8",
    "small_i8",
    "text_U",
    "zeros",
    "walk_f8",
    "ints_0_49",
    "image_u1",
];

/// One kind's array and where it is written.
struct Ctx {
    kind: &'static str,
    array: DynArray,
    out: PathBuf,
    /// NumPy's archive of the array.
    numpy: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse("deflate", &[("--traces", 100_000)])?;
    let python = args.peer.clone().ok_or("the deflate bench needs --peer PYTHON: NumPy makes its corpus")?;
    let traces = args.number("--traces");
    fs::create_dir_all(&args.dir)?;
    let mut peer = Some(Peer::start(&python, "deflate", &args.dir, traces)?);
    let dir = args.dir.join("deflate");
    eprintln!("deflate bench: {traces} traces, {} runs each, in {}", args.repeat, dir.display());
    let mut sizes = Vec::new();
    for Kind { kind, write: ours, write_one, read_one, np_write, np_read } in KINDS {
        let array = DynArray::read_npy(dir.join(format!("{kind}.npy")))?;
        let numpy = dir.join(format!("np-{kind}.npz"));
        let ctx = Ctx { kind, array, out: dir.join("out.npz"), numpy };
        let bytes = ctx.array.data().len();
        // The run allocates the member's bytes staged and deflated, under twice the data.
        let hot = 2 * bytes + (16 << 20);
        let measures = [
            Measure::new(ours, bytes, write),
            Measure::new(write_one, bytes, write_on_one_thread),
            Measure::new(read_one, bytes, read_on_one_thread),
            Measure::peer(np_write, bytes),
            Measure::peer(np_read, bytes),
        ];
        run_rounds(&ctx, &measures, args.repeat, hot, &mut peer)?;
        write(&ctx)?;
        let ours = member_size(&ctx.out, kind)?;
        remove_if_present(&ctx.out)?;
        sizes.push((kind, ours, member_size(&ctx.numpy, kind)?));
    }
    for (kind, ours, theirs) in sizes {
        println!("bench size_{kind} best=0 median=0 bytes={ours}");
        println!("bench np_size_{kind} best=0 median=0 bytes={theirs}");
    }
    Ok(())
}

/// Writes the kind's array as the archive's one member, on as many threads as CPUs, and
/// times it; checks it after.
fn write(c: &Ctx) -> Result<Duration> {
    write_on(c, None)
}

/// As [`write`], on one thread.
fn write_on_one_thread(c: &Ctx) -> Result<Duration> {
    write_on(c, Some(1))
}

fn write_on(c: &Ctx, threads: Option<usize>) -> Result<Duration> {
    remove_if_present(&c.out)?;
    sync();
    let started = Instant::now();
    let mut npz = npz::Writer::create(&c.out)?;
    npz.sync(false).compression(Compression::deflated());
    if let Some(threads) = threads {
        npz.threads(threads);
    }
    npz.add(c.kind, black_box(&c.array))?;
    npz.finish()?;
    let elapsed = started.elapsed();
    let back: DynArray = npz::Reader::from_path(&c.out)?.read(c.kind)?;
    if back.header() != c.array.header() || back.data() != c.array.data() {
        return Err(format!("{}: the {} member is not the array written", c.out.display(), c.kind).into());
    }
    Ok(elapsed)
}

/// Reads the member of NumPy's archive on one thread and times it; checks it after.
fn read_on_one_thread(c: &Ctx) -> Result<Duration> {
    let mut options = npz::ReaderOptions::default();
    options.threads(1);
    let started = Instant::now();
    let back: DynArray = npz::Reader::from_path_with(&c.numpy, &options)?.read(c.kind)?;
    let elapsed = started.elapsed();
    if back.header() != c.array.header() || back.data() != c.array.data() {
        return Err(format!("{}: the {} member is not the array", c.numpy.display(), c.kind).into());
    }
    Ok(elapsed)
}

/// The compressed size of member `kind` of the archive at `path`.
fn member_size(path: &Path, kind: &str) -> Result<u64> {
    let npz = npz::Reader::from_path(path)?;
    let member = format!("{kind}.npy");
    let info = npz.members().iter().find(|m| m.member == member);
    Ok(info.ok_or_else(|| format!("{}: no member {member}", path.display()))?.compressed_size)
}
