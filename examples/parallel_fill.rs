//! Polly's parallel fill: several processes fill one memory-mapped `.npy` file.
//!
//! The parent creates `target/parallel_fill/grid.npy`, a (16384, 8192) `<f64` array
//! (1 GiB), writing only its header and reserving the data's blocks (a full disk fails here,
//! not in a child). It then starts 4 child processes
//! of this same program; each maps the file read-write and fills its own range of rows,
//! element `(row, col)` getting the value `row * cols + col`, borrowing no byte outside
//! its rows. The parent waits for them, checks every element through a read-only map,
//! has NumPy check the file with `np.load(..., mmap_mode='r')` when python3 with NumPy is
//! present (required under `NPY_CI`), prints timings and deletes the file.
//!
//! Run: `cargo run --release --example parallel_fill [-- <rows> <cols> <workers>]`.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use npy_core::mmap::{NpyMap, NpyMapMut};

type Result<T, E = Box<dyn Error>> = std::result::Result<T, E>;

const ROWS: usize = 16384;
const COLS: usize = 8192;
const WORKERS: usize = 4;

/// What NumPy checks: rows, columns and a strided sample against the formula, and the
/// sample's sum against ours (exact: the values are integers far below 2^53).
const NUMPY_CHECK: &str = r#"
import sys
import numpy as np
path, rows, cols, want_sum = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
a = np.load(path, mmap_mode='r')
assert a.shape == (rows, cols) and a.dtype == np.dtype('<f8'), (a.shape, a.dtype)
for r in sorted({0, 1, rows // 2, rows - 1}):
    assert np.array_equal(a[r], r * cols + np.arange(cols, dtype=np.float64)), f'row {r}'
for c in sorted({0, cols // 3, cols - 1}):
    assert np.array_equal(a[:, c], np.arange(rows, dtype=np.float64) * cols + c), f'column {c}'
sample = a[::97, ::89]
want = np.arange(0, rows, 97, dtype=np.float64)[:, None] * cols + np.arange(0, cols, 89, dtype=np.float64)[None, :]
assert np.array_equal(sample, want), 'strided sample'
got_sum = float(sample.sum())
assert got_sum == want_sum, (got_sum, want_sum)
print(f'numpy agrees: np.load(mmap_mode="r") sees {a.dtype} {a.shape}, strided sample sum {got_sum:.0f}')
"#;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("child") => child(&args[1..]),
        _ => parent(&args),
    }
}

/// A child: `child <path> <first row> <end row>` fills rows `first..end`.
fn child(args: &[String]) -> Result<()> {
    let [path, first, end] = args else {
        return Err("usage: parallel_fill child <path> <first row> <end row>".into());
    };
    let (first, end): (usize, usize) = (first.parse()?, end.parse()?);
    // SAFETY: while this map lives, the other children write only their own rows, and
    // this child borrows only its rows (`view_range_mut`); nothing truncates the file.
    let mut map = unsafe { NpyMapMut::from_path(path)? };
    let cols = match map.shape() {
        [_, cols] => *cols,
        shape => return Err(format!("expected a 2-D array, found shape {shape:?}").into()),
    };
    let elements = first * cols..end * cols;
    let rows = map.view_range_mut::<f64>(elements.clone())?;
    for (v, i) in rows.iter_mut().zip(elements.clone()) {
        *v = i as f64; // row * cols + col
    }
    map.flush_range(elements)?;
    Ok(())
}

/// Deletes the file when dropped, so that a failed run leaves no gigabyte behind.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.0) {
            eprintln!("warning: could not delete {}: {e}", self.0.display());
        }
    }
}

fn parent(args: &[String]) -> Result<()> {
    let num = |i: usize, default: usize| args.get(i).map_or(Ok(default), |s| s.parse::<usize>());
    let (rows, cols, workers) = (num(0, ROWS)?, num(1, COLS)?, num(2, WORKERS)?.max(1));
    let dir = workspace_target().join("parallel_fill");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("grid.npy");
    let gib = (rows * cols * 8) as f64 / (1u64 << 30) as f64;

    let start = Instant::now();
    // SAFETY: the map is dropped before any child starts; nothing else touches the file.
    let map = unsafe { NpyMapMut::create::<f64>(&path, vec![rows, cols])? };
    let _remove = RemoveOnDrop(path.clone());
    let data_offset = map.data_offset();
    drop(map);
    let create_secs = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let exe = std::env::current_exe()?;
    let per = rows.div_ceil(workers);
    let mut children = Vec::new();
    for w in 0..workers {
        let (first, end) = ((w * per).min(rows), ((w + 1) * per).min(rows));
        let child = Command::new(&exe).arg("child").arg(&path).arg(first.to_string()).arg(end.to_string()).spawn()?;
        children.push((w, first..end, child));
    }
    let mut failed = Vec::new();
    for (w, range, mut child) in children {
        let status = child.wait()?;
        if !status.success() {
            failed.push(format!("child {w} (rows {range:?}) {status}"));
        }
    }
    if !failed.is_empty() {
        return Err(format!("children failed: {}", failed.join("; ")).into());
    }
    let fill_secs = start.elapsed().as_secs_f64();

    let start = Instant::now();
    // SAFETY: every child has exited; nothing modifies or truncates the file while mapped.
    let map = unsafe { NpyMap::from_path(&path)? };
    let view = map.view::<f64>()?;
    if map.shape() != [rows, cols] || view.len() != rows * cols {
        return Err(format!("reopened shape {:?}, expected ({rows}, {cols})", map.shape()).into());
    }
    if let Some(bad) = view.iter().enumerate().position(|(i, &v)| v != i as f64) {
        let (r, c) = (bad / cols, bad % cols);
        return Err(format!("element ({r}, {c}) is {}, expected {}", view[bad], bad).into());
    }
    let sample_sum: f64 = (0..rows)
        .step_by(97)
        .flat_map(|r| (0..cols).step_by(89).map(move |c| (r, c)))
        .map(|(r, c)| view[r * cols + c])
        .sum();
    let check_secs = start.elapsed().as_secs_f64();

    println!("{rows} x {cols} <f8 ({gib:.2} GiB, data at byte {data_offset}) in {}", path.display());
    println!("{:<31}{create_secs:.3} s", "create (header, reserved):");
    println!(
        "{:<31}{fill_secs:.3} s ({:.0} MiB/s), flush included",
        format!("fill with {workers} processes:"),
        gib * 1024.0 / fill_secs
    );
    println!(
        "{:<31}{check_secs:.3} s ({:.0} MiB/s), all {} equal row * cols + col",
        "check every element:",
        gib * 1024.0 / check_secs,
        rows * cols
    );

    let python = std::env::var_os("NPY_PYTHON").map_or_else(|| PathBuf::from("python3"), PathBuf::from);
    let required = std::env::var_os("NPY_CI").is_some();
    let start = Instant::now();
    let out = Command::new(&python)
        .args(["-c", NUMPY_CHECK])
        .arg(&path)
        .args([rows.to_string(), cols.to_string(), sample_sum.to_string()])
        .output();
    match out {
        Ok(out) if out.status.success() => {
            print!("{}", String::from_utf8_lossy(&out.stdout));
            println!("{:<31}{:.3} s", "numpy check:", start.elapsed().as_secs_f64());
        }
        Ok(out) if required || !String::from_utf8_lossy(&out.stderr).contains("No module named 'numpy'") => {
            return Err(format!("numpy check failed: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        Err(e) if required => return Err(format!("cannot run {}: {e}", python.display()).into()),
        _ => println!("(python3 with numpy not found: skipped the NumPy check)"),
    }
    Ok(())
}

/// The workspace's `target/` directory (this example is built from `npy-seismic`, one
/// directory down).
fn workspace_target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new(".")).join("target")
}
