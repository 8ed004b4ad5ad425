//! `cargo bench --bench deflate`: one deflated member of each kind of array people save,
//! written by npy's `npz::Writer` and by `np.savez_compressed`, for time and for size.
//!
//! NumPy makes the corpus: this target starts `xtask/bench.py serve deflate` (`--peer
//! PYTHON`, required), which writes one array of each kind (`deflate_corpus` there: the
//! traces' `trace_id`, `t0`, `flags` and `samples` columns, random floats, small integers,
//! words, zeros, a random walk) as `DIR/deflate/KIND.npy`, and NumPy's archive of it as
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
//! - `np_deflate_KIND`: `np.savez_compressed` of the same array (the peer's).
//!
//! Each prints `bench <name> best=<s> median=<s> bytes=<data bytes>`; then two size lines a
//! kind, times 0: `size_KIND`, the member npy wrote (its compressed size), and
//! `np_size_KIND`, the member in NumPy's archive. Each write is read back and compared with
//! the array after the clock stops.

mod common;

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{remove_if_present, run_rounds, sync, Args, Measure, Peer, Result};
use npy_core::npz::{self, Compression};
use npy_core::prelude::*;

/// The kinds, in `bench.py`'s `DEFLATE_KINDS` order: kind, our row, NumPy's row.
const KINDS: [(&str, &str, &str); 9] = [
    ("trace_id", "deflate_trace_id", "np_deflate_trace_id"),
    ("t0", "deflate_t0", "np_deflate_t0"),
    ("flags", "deflate_flags", "np_deflate_flags"),
    ("samples", "deflate_samples", "np_deflate_samples"),
    ("random_f8", "deflate_random_f8", "np_deflate_random_f8"),
    ("small_i8", "deflate_small_i8", "np_deflate_small_i8"),
    ("text_U", "deflate_text_U", "np_deflate_text_U"),
    ("zeros", "deflate_zeros", "np_deflate_zeros"),
    ("walk_f8", "deflate_walk_f8", "np_deflate_walk_f8"),
];

/// One kind's array and where it is written.
struct Ctx {
    kind: &'static str,
    array: DynArray,
    out: PathBuf,
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
    for (kind, ours, theirs) in KINDS {
        let array = DynArray::read_npy(dir.join(format!("{kind}.npy")))?;
        let ctx = Ctx { kind, array, out: dir.join("out.npz") };
        let bytes = ctx.array.data().len();
        // The run allocates the member's bytes staged and deflated, under twice the data.
        let hot = 2 * bytes + (16 << 20);
        run_rounds(
            &ctx,
            &[Measure::new(ours, bytes, write), Measure::peer(theirs, bytes)],
            args.repeat,
            hot,
            &mut peer,
        )?;
        write(&ctx)?;
        let ours = member_size(&ctx.out, kind)?;
        remove_if_present(&ctx.out)?;
        sizes.push((kind, ours, member_size(&dir.join(format!("np-{kind}.npz")), kind)?));
    }
    for (kind, ours, theirs) in sizes {
        println!("bench size_{kind} best=0 median=0 bytes={ours}");
        println!("bench np_size_{kind} best=0 median=0 bytes={theirs}");
    }
    Ok(())
}

/// Writes the kind's array as the archive's one member and times it; checks it after.
fn write(c: &Ctx) -> Result<Duration> {
    remove_if_present(&c.out)?;
    sync();
    let started = Instant::now();
    let mut npz = npz::Writer::create(&c.out)?;
    npz.sync(false).compression(Compression::deflated());
    npz.add(c.kind, black_box(&c.array))?;
    npz.finish()?;
    let elapsed = started.elapsed();
    let back: DynArray = npz::Reader::from_path(&c.out)?.read(c.kind)?;
    if back.header() != c.array.header() || back.data() != c.array.data() {
        return Err(format!("{}: the {} member is not the array written", c.out.display(), c.kind).into());
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
