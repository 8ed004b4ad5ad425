//! Simon's seismic traces as a NumPy record array.
//!
//! Writes 1,000,000 `Trace` records (trace id, a nested receiver position, t0, dt, flags
//! and 64 samples) in NumPy's `align=True` layout (`TraceAligned`, whose memory layout is
//! the file's, so reading and writing are single bulk copies), reads them back and checks
//! them, reads the same file into NumPy's default packed layout too (`Trace`: fields are
//! matched by name), and prints sizes and throughput. The records, each a
//! `#[derive(NpyRecord)]` struct, are the `npy-seismic` crate's (`npy-seismic/src/lib.rs`),
//! which the tests and benches share. Then NumPy loads the file and checks it: its dtype, shape, every
//! `trace_id`, and the first and last records field by field against what Rust wrote.
//! The Python is `$NPY_PYTHON` (`cargo xtask ci` sets it to its venv's), else the venv
//! that `cargo xtask venv` (and `cargo xtask ci`) makes at `target/numpy-venv`, else
//! `python3`. Without NumPy in any of them the check is skipped with a message naming the
//! one command that makes the venv, unless `NPY_CI` or `NPY_PYTHON` is set, where it is
//! an error.
//!
//! Run: `cargo run --release --example seismic` (the file goes to `target/seismic/`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use npy_core::prelude::*;
use npy_seismic::{trace, Trace, TraceAligned};

const TRACES: usize = 1_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = workspace_target().join("seismic");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("traces.npy");

    let traces: Vec<TraceAligned> = (0..TRACES).map(trace).collect();

    let start = Instant::now();
    traces.write_npy(&path)?;
    let write_secs = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let back: Vec<TraceAligned> = Vec::read_npy(&path)?;
    let read_secs = start.elapsed().as_secs_f64();
    if back != traces {
        return Err("the records read back differ from those written".into());
    }

    let start = Instant::now();
    let packed: Vec<Trace> = Vec::read_npy(&path)?;
    let convert_secs = start.elapsed().as_secs_f64();
    if !packed.iter().zip(&traces).all(|(p, t)| *p == Trace::from(*t)) {
        return Err("the packed records differ from those written".into());
    }

    let mib = std::fs::metadata(&path)?.len() as f64 / (1 << 20) as f64;
    let size = std::mem::size_of::<TraceAligned>();
    println!("wrote {TRACES} traces of {size} bytes ({mib:.1} MiB) to {}", path.display());
    println!("  write:                     {write_secs:.3} s ({:.0} MiB/s)", mib / write_secs);
    println!("  read back, same layout:    {read_secs:.3} s ({:.0} MiB/s), all records equal", mib / read_secs);
    println!(
        "  read into a packed struct: {convert_secs:.3} s ({:.0} MiB/s), fields matched by name",
        mib / convert_secs
    );
    println!("dtype, as the file's header spells it (NumPy's dtype.descr; '' fields are padding):");
    println!("  {}", TraceAligned::dtype().descr());
    println!("first record: {}", show(&traces[0]));

    numpy_check(&path, &traces)?;
    println!("next: `npy info {}` (README.md says how to install the npy tool)", path.display());
    Ok(())
}

/// A record as one line, in the same words as the NumPy check prints it.
fn show(t: &TraceAligned) -> String {
    let r = &t.receiver;
    format!(
        "trace_id {}, receiver ({:?}, {:?}, {:?}), t0 {:?}, dt {:?}, flags {}, samples[:3] [{:?}, {:?}, {:?}]",
        t.trace_id, r.x, r.y, r.z, t.t0, t.dt, t.flags, t.samples[0], t.samples[1], t.samples[2]
    )
}

/// A record as a Python literal of its values, floats widened to `f64` exactly (so NumPy
/// can compare them with `==`).
fn literal(t: &TraceAligned) -> String {
    let r = &t.receiver;
    let samples: Vec<String> = t.samples.iter().map(|&s| format!("{:?}", f64::from(s))).collect();
    format!(
        "({}, ({:?}, {:?}, {:?}), {:?}, {:?}, {}, [{}])",
        t.trace_id,
        r.x,
        r.y,
        f64::from(r.z),
        t.t0,
        f64::from(t.dt),
        t.flags,
        samples.join(", ")
    )
}

/// NumPy's checks of the file: `argv` is the path, the descr, the count and the first and
/// last records as literals. Prints what it sees; an `AssertionError` says what differs.
const NUMPY_CHECK: &str = r#"
import ast, sys
import numpy as np
path, descr, n = sys.argv[1], ast.literal_eval(sys.argv[2]), int(sys.argv[3])
first, last = ast.literal_eval(sys.argv[4]), ast.literal_eval(sys.argv[5])
a = np.load(path, mmap_mode="r")
print(f"NumPy {np.__version__} ({sys.executable}) loads it:")
print(f"  shape {a.shape}; dtype as NumPy prints it, str(a.dtype): the same layout as names and offsets:")
print(f"  {a.dtype}")
r = a[0]
samples = ", ".join(str(s) for s in r["samples"][:3])
print(f"  first record a[0]: trace_id {r['trace_id']!s}, receiver {r['receiver']!s}, t0 {r['t0']!s}, "
      f"dt {r['dt']!s}, flags {r['flags']!s}, samples[:3] [{samples}]")
assert a.shape == (n,), a.shape
assert a.dtype.descr == descr, a.dtype.descr
assert (a["trace_id"] == np.arange(n, dtype=np.int32)).all(), "trace_id is not 0, 1, 2, ..."
def values(r):
    x, y, z = (float(v) for v in r["receiver"])
    return (int(r["trace_id"]), (x, y, z), float(r["t0"]), float(r["dt"]), int(r["flags"]),
            [float(s) for s in r["samples"]])
assert values(a[0]) == first, (values(a[0]), first)
assert values(a[-1]) == last, (values(a[-1]), last)
print(f"  NumPy agrees: dtype.descr as written, trace_id 0..{n - 1}, first and last records field by field")
"#;

/// The venv `cargo xtask venv` makes, where it exists: in the target directory this
/// example was built into (`target/release/examples/seismic` → `target`), then under the
/// workspace's `target/`.
fn venv_pythons() -> Vec<PathBuf> {
    let built_in = std::env::current_exe().ok().and_then(|exe| exe.ancestors().nth(3).map(Path::to_path_buf));
    let workspace = workspace_target();
    let mut found: Vec<PathBuf> = Vec::new();
    for target in built_in.into_iter().chain([workspace]) {
        let python = target.join("numpy-venv").join("bin").join("python");
        if python.exists() && !found.contains(&python) {
            found.push(python);
        }
    }
    found
}

/// Has NumPy load the file and compare it with `traces`. Skipped, with a message, when no
/// Python with NumPy is found, unless `NPY_PYTHON` or `NPY_CI` asks for it.
fn numpy_check(path: &Path, traces: &[TraceAligned]) -> Result<(), Box<dyn std::error::Error>> {
    let chosen = std::env::var_os("NPY_PYTHON");
    let required = chosen.is_some() || std::env::var_os("NPY_CI").is_some();
    let candidates = match chosen {
        Some(python) => vec![PathBuf::from(python)],
        None => venv_pythons().into_iter().chain([PathBuf::from("python3")]).collect(),
    };
    let has_numpy = |python: &PathBuf| {
        Command::new(python).args(["-c", "import numpy"]).output().is_ok_and(|out| out.status.success())
    };
    let Some(python) = candidates.iter().find(|python| has_numpy(python)) else {
        let tried = candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        if required {
            return Err(format!("no NumPy in {tried} (NPY_PYTHON or NPY_CI asks for NumPy's check)").into());
        }
        println!(
            "NumPy check skipped: no NumPy in {tried}. `cargo xtask venv` makes target/numpy-venv \
             with the pinned NumPy (needs python3 with venv and pip); run this again after it."
        );
        return Ok(());
    };
    let (first, last) = (&traces[0], &traces[traces.len() - 1]);
    let out = Command::new(python)
        .args(["-c", NUMPY_CHECK])
        .arg(path)
        .arg(TraceAligned::dtype().descr())
        .arg(traces.len().to_string())
        .args([literal(first), literal(last)])
        .output()?;
    print!("{}", String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        return Err(format!("NumPy's check of {} failed ({})", path.display(), out.status).into());
    }
    Ok(())
}

/// The workspace's `target/` directory (this example is built from `npy-seismic`, one
/// directory down).
fn workspace_target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new(".")).join("target")
}
