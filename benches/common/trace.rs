//! Simon's seismic `Trace` records (the `npy-seismic` crate, which the main job writes too)
//! as the `records` and `arrow` benches write them: the two files, and the SQL benches'
//! table of 16 files.
//!
//! The record: `trace_id: i32`, a nested `receiver {x: f64, y: f64, z: f32}`, `t0: f64`,
//! `dt: f32`, `flags: u8`, `samples: [f32; 64]`. `xtask/bench.py` knows the same record
//! (`TRACE`, `trace(i)`) and checks what NumPy loads against it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use npy_core::prelude::*;

use super::{sync, Result};

pub use npy_seismic::{trace, Trace, TraceAligned, TracePacked, ALIGNED_SIZE, PACKED_SIZE, SAMPLES};

/// Bytes of the samples of a record: both files end with the last record's.
pub const TAIL: usize = SAMPLES * 4;

/// Record `i` in NumPy's packed layout, Rust's memory layout (reads and writes convert).
pub fn packed(t: &TraceAligned) -> Trace {
    Trace::from(*t)
}

/// Record `i` in NumPy's packed layout, which is also its memory (bulk copies).
pub fn packed_mem(t: &TraceAligned) -> TracePacked {
    TracePacked::from(Trace::from(*t))
}

/// Fails unless `n` (the `--records` option) is between 1 and `i32::MAX`.
pub fn check_count(n: usize) -> Result<()> {
    if n == 0 || n > i32::MAX as usize {
        return Err(format!("--records must be between 1 and {} (got {n})", i32::MAX).into());
    }
    Ok(())
}

/// The records checked in results of `n` records: both ends and 63 points between.
pub fn checkpoints(n: usize) -> impl Iterator<Item = usize> {
    (0..64).map(move |k| k * (n / 64)).chain([n - 1])
}

/// `traces_aligned.npy` and `traces_packed.npy`, as written by [`write_files`].
#[derive(Debug)]
pub struct Files {
    pub aligned_path: PathBuf,
    pub packed_path: PathBuf,
    /// The files' bytes (what the limit writes write, and what writes are checked against),
    /// read as the limit reads ([`read_bytes`]).
    pub aligned_file: FileBytes,
    pub packed_file: FileBytes,
    /// The samples of the last record as little-endian bytes: the last 256 bytes of every
    /// file of these records, whatever its layout.
    pub tail: Vec<u8>,
}

/// Writes `aligned` and `packed` (the same records) with npy to `traces_aligned.npy` and
/// `traces_packed.npy` in `dir`, reads their bytes back, checks their sizes and ends, and
/// flushes them to disk so their writeback does not run during the measurements. `bench`
/// names the bench in the message.
pub fn write_files(dir: &Path, aligned: &[TraceAligned], packed: &[Trace], bench: &str) -> Result<Files> {
    let started = Instant::now();
    let n = aligned.len();
    let tail: Vec<u8> = aligned[n - 1].samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    let aligned_path = dir.join("traces_aligned.npy");
    let packed_path = dir.join("traces_packed.npy");
    aligned.write_npy(&aligned_path)?;
    packed.write_npy(&packed_path)?;
    let aligned_file = read_bytes(&aligned_path)?;
    let packed_file = read_bytes(&packed_path)?;
    for (file, size, path) in [(&aligned_file, ALIGNED_SIZE, &aligned_path), (&packed_file, PACKED_SIZE, &packed_path)]
    {
        let file = file.as_slice();
        check_file(file.len() as u64, &file[file.len().saturating_sub(TAIL)..], n * size, &tail, path)?;
    }
    sync();
    eprintln!(
        "{bench} bench: wrote {} and {} in {:.2} s",
        aligned_path.display(),
        packed_path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(Files { aligned_path, packed_path, aligned_file, packed_file, tail })
}

/// A file's bytes in memory: on Linux in a buffer on transparent huge pages, as NumPy's
/// arrays and npy's reads are (the best case for the limit writes that write them).
#[cfg(target_os = "linux")]
pub type FileBytes = crate::common::limit::HugeBuffer;
#[cfg(not(target_os = "linux"))]
pub type FileBytes = Vec<u8>;

/// The bytes of the file at `path` ([`FileBytes`]).
fn read_bytes(path: &Path) -> Result<FileBytes> {
    #[cfg(target_os = "linux")]
    return Ok(crate::common::limit::read(path)?.1);
    #[cfg(not(target_os = "linux"))]
    return Ok(std::fs::read(path)?);
}

/// Fails unless a file of `len` bytes ending in `end` holds at least `data` bytes and ends
/// with the last record's samples (`tail`).
pub fn check_file(len: u64, end: &[u8], data: usize, tail: &[u8], path: &Path) -> Result<()> {
    if len < data as u64 || end != tail {
        return Err(
            format!("{}: {len} bytes, expected {data} data bytes ending in the last samples", path.display()).into()
        );
    }
    Ok(())
}

/// The SQL benches' `--records N` (default 4,000,000), at least one per file of `files`,
/// and their parsed arguments.
pub fn sql_args(bench: &str, files: usize) -> Result<(super::Args, usize)> {
    let args = super::Args::parse(bench, &[("--records", 4_000_000)])?;
    let n = args.number("--records");
    check_count(n)?;
    if n < files {
        return Err(format!("--records must be at least {files}").into());
    }
    Ok((args, n))
}

/// Writes `dir/sql_answer.json`: the answer `(avg(t0), max(samples[1]))` NumPy must match.
pub fn write_sql_answer(dir: &Path, (avg, max): (f64, f32)) -> Result<()> {
    let json = format!("{{\"avg_t0\": {avg:?}, \"max_samples_1\": {max:?}}}\n");
    std::fs::write(dir.join("sql_answer.json"), json)?;
    Ok(())
}

/// The SQL benches' table: records `0..n` ([`trace`], packed) in `files` files
/// `dir/traces/part-00.npy`, ... (record `i` in file `i * files / n`), flushed to disk.
/// Returns the files and the answer of `SELECT avg(t0), max(samples[1])` over them.
pub fn write_sql_table(dir: &Path, n: usize, files: usize) -> Result<(Vec<PathBuf>, (f64, f32))> {
    let table = dir.join("traces");
    if table.exists() {
        std::fs::remove_dir_all(&table)?;
    }
    std::fs::create_dir_all(&table)?;
    let mut paths = Vec::with_capacity(files);
    let (mut sum, mut max) = (0f64, f32::MIN);
    for k in 0..files {
        let range = k * n / files..(k + 1) * n / files;
        let records: Vec<Trace> = range.map(|i| packed(&trace(i))).collect();
        for r in &records {
            sum += r.t0;
            max = max.max(r.samples[0]);
        }
        let path = table.join(format!("part-{k:02}.npy"));
        records.write_npy(&path)?;
        paths.push(path);
    }
    sync();
    Ok((paths, (sum / n as f64, max)))
}
