//! `cargo bench --bench mmap`: opening `.npy` files as memory maps and reading scattered
//! elements through a zero-copy view.
//!
//! `cargo xtask bench` runs this, then times NumPy's `np.load(path, mmap_mode='r')` on the
//! same files, and prints the ratios the speed goals name. Arguments (after `--`):
//!
//! - `--dir DIR`: scratch directory (default `target/bench`);
//! - `--bytes N`: data bytes of the big file, a multiple of 8 (default 4 GiB = 2^29 `f64`s);
//! - `--picks P`: random elements summed (default 1,000,000);
//! - `--opens O`: opens per open measurement, whose time is the mean of one (default 1,000);
//! - `--repeat K`: runs per measurement (default 3);
//! - `--keep`: leave `big.npy`, `small.npy` (1 MiB of data) and `picks.npy` (the indices,
//!   `<i8`) in `DIR` (for NumPy) instead of deleting them.
//!
//! Element `i` of both files is `i + 0.25`. The picks are uniform over the big file, drawn
//! by a seeded xorshift. With these values every partial sum is exact in `f64`, so any
//! order of summing gives the same, checked, total.
//!
//! Measurements, each run once untimed and then `K` times in interleaved rounds, with both
//! files in the page cache (read through once before):
//!
//! - `open_small`, `open_big`: `NpyMap::from_path` (header read and parsed, file mapped) and the
//!   map dropped, `O` times; the time of one;
//! - `random_sum`: `NpyMap::from_path(big.npy)`, `view::<f64>()` (no copy), and the sum of the
//!   `P` picked elements in the picks' order, map dropped: the first touch of each page is
//!   a page fault, as for NumPy.
//!
//! Each prints one line: `bench <name> best=<seconds> median=<seconds> bytes=<n>`
//! (`bytes`: the data bytes touched: the picks' 8 bytes each for the sum, 0 for opens).

mod common;

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{run_rounds, secs, sync, warm, Args, Measure, Result};
use npy_core::mmap::NpyMap;
use npy_core::prelude::*;
use npy_core::NpyFileWriter;

/// Elements of the small file: 1 MiB of data.
const SMALL: usize = (1 << 20) / 8;

/// What the measurements share.
#[derive(Debug)]
struct Ctx {
    big: PathBuf,
    small: PathBuf,
    picks_path: PathBuf,
    /// Elements of the big file.
    n: usize,
    picks: Vec<usize>,
    /// The sum of the picked elements.
    expected_sum: f64,
    opens: usize,
}

fn main() -> Result<()> {
    let args = Args::parse("mmap", &[("--bytes", 4 << 30), ("--picks", 1_000_000), ("--opens", 1_000)])?;
    let (data_bytes, picks, opens) = (args.number("--bytes"), args.number("--picks"), args.number("--opens"));
    if data_bytes < 16 || !data_bytes.is_multiple_of(8) {
        return Err(format!("--bytes must be a multiple of 8, at least 16 (got {data_bytes})").into());
    }
    if picks == 0 || opens == 0 {
        return Err("--picks and --opens must be at least 1".into());
    }
    fs::create_dir_all(&args.dir)?;
    let ctx = setup(&args.dir, data_bytes, picks, opens)?;
    eprintln!(
        "mmap bench: {} bytes of data, {} picks, {} opens a measurement, {} runs each, in {}",
        data_bytes,
        picks,
        opens,
        args.repeat,
        args.dir.display()
    );
    let measures: Vec<Measure<Ctx>> = vec![
        Measure::new("open_small", 0, open_small),
        Measure::new("open_big", 0, open_big),
        Measure::new("random_sum", picks * 8, random_sum),
    ];
    for path in [&ctx.small, &ctx.big] {
        warm(path)?;
    }
    // Nothing here allocates more than the picks' few megabytes.
    run_rounds(&ctx, &measures, args.repeat, 0, &mut None)?;
    if !args.keep {
        for path in [&ctx.big, &ctx.small, &ctx.picks_path] {
            fs::remove_file(path)?;
        }
    }
    Ok(())
}

/// Writes the two files and the picks, then flushes them to disk.
fn setup(dir: &Path, data_bytes: usize, count: usize, opens: usize) -> Result<Ctx> {
    let started = Instant::now();
    let n = data_bytes / 8;
    let ctx = Ctx {
        big: dir.join("big.npy"),
        small: dir.join("small.npy"),
        picks_path: dir.join("picks.npy"),
        n,
        picks: picks(count, n),
        expected_sum: 0.0,
        opens,
    };
    let expected_sum = ctx.picks.iter().map(|&i| i as f64 + 0.25).sum();
    write_values(&ctx.big, n)?;
    write_values(&ctx.small, SMALL)?;
    let picks: Vec<i64> = ctx.picks.iter().map(|&i| i64::try_from(i)).collect::<std::result::Result<_, _>>()?;
    picks.write_npy(&ctx.picks_path)?;
    sync();
    eprintln!(
        "mmap bench: wrote {} and {} in {:.2} s",
        ctx.big.display(),
        ctx.small.display(),
        secs(started.elapsed())
    );
    Ok(Ctx { expected_sum, ..ctx })
}

/// Writes `i + 0.25` for `i` in `0..n` to `path`, streaming in 8 MiB pieces.
fn write_values(path: &Path, n: usize) -> Result<()> {
    let mut writer = NpyFileWriter::<f64>::create(path)?;
    writer.sync(false);
    let mut piece = Vec::with_capacity(1 << 20);
    for start in (0..n).step_by(1 << 20) {
        piece.clear();
        piece.extend((start..n.min(start + (1 << 20))).map(|i| i as f64 + 0.25));
        writer.extend(&piece)?;
    }
    writer.finish()?;
    Ok(())
}

/// `count` indices below `n`, uniform, from a fixed seed (xorshift64*).
fn picks(count: usize, n: usize) -> Vec<usize> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
            // The high 64 bits of r * n: uniform in 0..n.
            ((u128::from(r) * n as u128) >> 64) as usize
        })
        .collect()
}

/// Opens and drops a map of `path` `c.opens` times; the time of one, after checking the
/// last map's length.
fn opens(c: &Ctx, path: &Path, len: usize) -> Result<Duration> {
    let started = Instant::now();
    let mut last = 0;
    for _ in 0..c.opens {
        // SAFETY: nothing modifies or truncates the bench's files while they are mapped.
        let map = black_box(unsafe { NpyMap::from_path(path)? });
        last = map.len();
    }
    let elapsed = started.elapsed();
    if last != len {
        return Err(format!("{}: {last} elements, expected {len}", path.display()).into());
    }
    Ok(elapsed / u32::try_from(c.opens)?)
}

fn open_small(c: &Ctx) -> Result<Duration> {
    opens(c, &c.small, SMALL)
}

fn open_big(c: &Ctx) -> Result<Duration> {
    opens(c, &c.big, c.n)
}

fn random_sum(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    // SAFETY: nothing modifies or truncates the bench's files while they are mapped.
    let map = unsafe { NpyMap::from_path(&c.big)? };
    let values = map.view::<f64>()?;
    let sum: f64 = black_box(&c.picks).iter().map(|&i| values[i]).sum();
    drop(map);
    let elapsed = started.elapsed();
    if black_box(sum) != c.expected_sum {
        return Err(format!("sum of the picks is {sum}, expected {}", c.expected_sum).into());
    }
    Ok(elapsed)
}
