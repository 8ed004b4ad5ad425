//! `cargo bench --bench header`: parsing big record headers (issue 19, item 5).
//!
//! `cargo xtask bench` runs this, then times NumPy's header read of the same files
//! (`xtask/bench.py header`), and prints the ratios the speed goals name. Arguments (after
//! `--`):
//!
//! - `--dir DIR`: scratch directory (default `target/bench`);
//! - `--fields N`: fields of each record dtype (default 2,000);
//! - `--parses P`: parses (or opens) per run, whose time is the median of one (default 300);
//! - `--repeat K`: runs per measurement (default 3);
//! - `--keep`: leave `header_long.npy`, `header_f8.npy` and `header_mixed.npy` in `DIR` (for
//!   NumPy) instead of deleting them.
//!
//! The files, written by npy (`DynArray::write_npy_with`, which writes the header byte for
//! byte as `np.save` does), hold 2 zeroed records of:
//!
//! - `header_long.npy`: `np.dtype([(f'receiver_channel_amplitude_{i:04d}', '<f8') for i in
//!   range(N)])`, a header like the (88 KB of header text for 2,000 fields, a
//!   version 2.0 file): the one the goals are measured on;
//! - `header_f8.npy`: `np.dtype([(f'f{i}', '<f8') for i in range(N)])`, short names (35 KB
//!   of header text for 2,000 fields);
//! - `header_mixed.npy`: N fields cycling through a plain `<f8`, a titled big-endian `>i4`,
//!   a `<f4` subarray of 3, a nested record (`<f8`, an `<i2` subarray of (2, 2), 4 bytes of
//!   padding, `|S8`, `<M8[us]`) and a `<U16` (79 KB of header text for 2,000 fields, a
//!   version 2.0 file past 65,535 bytes).
//!
//! Measurements, each run once untimed and then `K` times in interleaved rounds, the files
//! in the page cache:
//!
//! - `parse_long`, `parse_f8`, `parse_mixed`: `Header::parse` of the header text (in
//!   memory, after the preamble), `P` times; the median time of one;
//! - `open_long`, `open_f8`, `open_mixed`: `NpyReader::from_path` (default options:
//!   open the file, read the preamble and header, parse it), `P` times; the median time of
//!   one;
//! - `budget_quarter_ms`, `budget_long_400mbs`, `budget_f8_400mbs`, `budget_mixed_400mbs`:
//!   not measurements but the goals' budgets as times, for the report's ratios: 0.25 ms,
//!   and each header's text at 400 MB/s.
//!
//! Each prints one line: `bench <name> best=<seconds> median=<seconds> bytes=<n>`
//! (`bytes`: the header text's length, the preamble's 10 or 12 bytes included).

mod common;

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{run_rounds, warm, Args, Measure, Result};
use npy_core::header::{Header, Version};
use npy_core::prelude::*;
use npy_core::{DType, WriteOptions};

/// The goal: one parse of the 2,000-field header in a quarter of a millisecond.
const BUDGET: Duration = Duration::from_micros(250);
/// The goal as a rate: header bytes per second.
const RATE: f64 = 400e6;

/// One file: its path, its header (as written) and its header text.
#[derive(Debug)]
struct File {
    path: PathBuf,
    header: Header,
    version: Version,
    /// The header text after the preamble (dict, padding, `\n`).
    text: Vec<u8>,
    /// Preamble and text: the bytes before the data.
    header_bytes: usize,
}

#[derive(Debug)]
struct Ctx {
    long: File,
    f8: File,
    mixed: File,
    parses: usize,
}

fn main() -> Result<()> {
    let args = Args::parse("header", &[("--fields", 2_000), ("--parses", 300)])?;
    let (fields, parses) = (args.number("--fields"), args.number("--parses"));
    if fields == 0 || parses == 0 {
        return Err("--fields and --parses must be at least 1".into());
    }
    fs::create_dir_all(&args.dir)?;
    let long: Vec<String> = (0..fields).map(|i| format!("('receiver_channel_amplitude_{i:04}', '<f8')")).collect();
    let f8: Vec<String> = (0..fields).map(|i| format!("('f{i}', '<f8')")).collect();
    let mixed: Vec<String> = (0..fields).map(mixed_field).collect();
    let ctx = Ctx {
        long: write(&args.dir.join("header_long.npy"), &long)?,
        f8: write(&args.dir.join("header_f8.npy"), &f8)?,
        mixed: write(&args.dir.join("header_mixed.npy"), &mixed)?,
        parses,
    };
    for file in [&ctx.long, &ctx.f8, &ctx.mixed] {
        eprintln!(
            "header bench: {} fields, {} bytes of header (version {}.0) in {}",
            fields,
            file.header_bytes,
            file.version.number().0,
            file.path.display()
        );
        warm(&file.path)?;
    }
    eprintln!("header bench: {parses} parses a run, {} runs each", args.repeat);
    let measures: Vec<Measure<Ctx>> = vec![
        Measure::new("parse_long", ctx.long.header_bytes, |c| parses_of(c, &c.long)),
        Measure::new("open_long", ctx.long.header_bytes, |c| opens_of(c, &c.long)),
        Measure::new("parse_f8", ctx.f8.header_bytes, |c| parses_of(c, &c.f8)),
        Measure::new("parse_mixed", ctx.mixed.header_bytes, |c| parses_of(c, &c.mixed)),
        Measure::new("open_f8", ctx.f8.header_bytes, |c| opens_of(c, &c.f8)),
        Measure::new("open_mixed", ctx.mixed.header_bytes, |c| opens_of(c, &c.mixed)),
    ];
    run_rounds(&ctx, &measures, args.repeat, 0, &mut None)?;
    budget("budget_quarter_ms", BUDGET.as_secs_f64(), 0);
    budget("budget_long_400mbs", ctx.long.header_bytes as f64 / RATE, ctx.long.header_bytes);
    budget("budget_f8_400mbs", ctx.f8.header_bytes as f64 / RATE, ctx.f8.header_bytes);
    budget("budget_mixed_400mbs", ctx.mixed.header_bytes as f64 / RATE, ctx.mixed.header_bytes);
    if !args.keep {
        for file in [&ctx.long, &ctx.f8, &ctx.mixed] {
            fs::remove_file(&file.path)?;
        }
    }
    Ok(())
}

/// Field `i` of the mixed dtype (see the module docs).
fn mixed_field(i: usize) -> String {
    match i % 5 {
        0 => format!("('a{i}', '<f8')"),
        1 => format!("(('Title of field {i}', 't{i}'), '>i4')"),
        2 => format!("('v{i}', '<f4', (3,))"),
        3 => format!("('r{i}', [('x', '<f8'), ('y', '<i2', (2, 2)), ('', '|V4'), ('s', '|S8'), ('when', '<M8[us]')])"),
        _ => format!("('u{i}', '<U16')"),
    }
}

/// Writes 2 zeroed records of the dtype of `fields` to `path` and reads its header back.
fn write(path: &Path, fields: &[String]) -> Result<File> {
    let dtype: DType = format!("[{}]", fields.join(", ")).parse()?;
    let header = Header::new(dtype, vec![2]);
    let data = vec![0u8; header.data_len()?];
    DynArray::new(header.clone(), data)?.write_npy_with(path, WriteOptions::new().sync(false))?;
    let bytes = fs::read(path)?;
    let version = Version::from_magic(&bytes)?;
    let preamble = version.preamble_len();
    let len = version.decode_header_len(&bytes[8..preamble])?;
    let text = bytes[preamble..preamble + len].to_vec();
    let file = File { path: path.to_path_buf(), header, version, text, header_bytes: preamble + len };
    check(&file, &Header::parse(version, &file.text)?)?;
    Ok(file)
}

/// Fails unless `parsed` is the header `file` was written with.
fn check(file: &File, parsed: &Header) -> Result<()> {
    if *parsed != file.header {
        return Err(format!("{}: the header parses to another header", file.path.display()).into());
    }
    Ok(())
}

/// The median of `times`.
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    let mid = times.len() / 2;
    if times.len() % 2 == 1 {
        times[mid]
    } else {
        (times[mid - 1] + times[mid]) / 2
    }
}

/// `Header::parse` of the file's text, `c.parses` times; the median time of one, after
/// checking the last header.
fn parses_of(c: &Ctx, file: &File) -> Result<Duration> {
    let mut times = Vec::with_capacity(c.parses);
    let mut last = None;
    for _ in 0..c.parses {
        let started = Instant::now();
        let header = black_box(Header::parse(file.version, black_box(&file.text))?);
        times.push(started.elapsed());
        last = Some(header);
    }
    if let Some(header) = &last {
        check(file, header)?;
    }
    Ok(median(times))
}

/// `NpyReader::from_path` of the file, `c.parses` times; the median time of one,
/// after checking the last header.
fn opens_of(c: &Ctx, file: &File) -> Result<Duration> {
    let mut times = Vec::with_capacity(c.parses);
    let mut last = None;
    for _ in 0..c.parses {
        let started = Instant::now();
        let reader = black_box(npy_core::NpyReader::from_path(&file.path)?);
        times.push(started.elapsed());
        last = Some(reader);
    }
    if let Some(reader) = &last {
        check(file, reader.header())?;
    }
    Ok(median(times))
}

/// Prints a budget as a bench line: the time a goal allows.
fn budget(name: &str, seconds: f64, bytes: usize) {
    println!("bench {name} best={seconds:.9} median={seconds:.9} bytes={bytes}");
}
