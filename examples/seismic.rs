//! Simon's seismic traces, saved for NumPy and read back.
//!
//! Writes 1,000,000 traces of 64 samples as a (traces, 64) `<f4` array plus per-trace
//! header columns (`trace_id`, `t0`, `dt`, `flags`), reads everything back, checks it,
//! and prints sizes and throughput. When python3 with NumPy is present it also loads the
//! files in NumPy and prints what NumPy sees.
//!
//! Run: `cargo run --release --example seismic` (files go to `target/seismic/`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use npy_core::prelude::*;

const TRACES: usize = 1_000_000;
const SAMPLES: usize = 64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/seismic");
    std::fs::create_dir_all(&dir)?;

    let trace_id: Vec<i32> = (0..TRACES as i32).collect();
    let t0: Vec<f64> = (0..TRACES).map(|i| i as f64 * 0.5).collect();
    let dt: Vec<f32> = vec![0.002; TRACES];
    let flags: Vec<u8> = (0..TRACES).map(|i| (i % 4) as u8).collect();
    let samples = Array::from_shape_vec(
        vec![TRACES, SAMPLES],
        (0..TRACES * SAMPLES).map(|k| ((k % SAMPLES) as f32 * 0.1).sin() * (k / SAMPLES) as f32).collect(),
    )?;

    let path = |name: &str| -> PathBuf { dir.join(format!("{name}.npy")) };
    let start = Instant::now();
    trace_id.write_npy(path("trace_id"))?;
    t0.write_npy(path("t0"))?;
    dt.write_npy(path("dt"))?;
    flags.write_npy(path("flags"))?;
    samples.write_npy(path("samples"))?;
    let write_secs = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let trace_id_back: Vec<i32> = Vec::read_npy(path("trace_id"))?;
    let t0_back: Vec<f64> = Vec::read_npy(path("t0"))?;
    let dt_back: Vec<f32> = Vec::read_npy(path("dt"))?;
    let flags_back: Vec<u8> = Vec::read_npy(path("flags"))?;
    let samples_back: Array<f32> = Array::read_npy(path("samples"))?;
    let read_secs = start.elapsed().as_secs_f64();

    assert_eq!(trace_id_back, trace_id);
    assert_eq!(t0_back, t0);
    assert_eq!(dt_back, dt);
    assert_eq!(flags_back, flags);
    assert_eq!(samples_back, samples);

    let bytes: u64 = ["trace_id", "t0", "dt", "flags", "samples"]
        .iter()
        .map(|n| std::fs::metadata(path(n)).map(|m| m.len()))
        .sum::<Result<u64, _>>()?;
    let mib = bytes as f64 / (1 << 20) as f64;
    println!("{TRACES} traces x {SAMPLES} samples: {mib:.1} MiB in 5 files under {}", dir.display());
    println!("write: {write_secs:.3} s ({:.0} MiB/s)", mib / write_secs);
    println!("read:  {read_secs:.3} s ({:.0} MiB/s), all values equal", mib / read_secs);

    let script = format!(
        "import numpy as np\nfor n in ['trace_id', 't0', 'dt', 'flags', 'samples']:\n    a = np.load(r'{}/' + n + '.npy')\n    print(f'numpy sees {{n}}: dtype={{a.dtype}} shape={{a.shape}}')\n",
        dir.display()
    );
    match Command::new("python3").args(["-c", &script]).output() {
        Ok(out) if out.status.success() => print!("{}", String::from_utf8_lossy(&out.stdout)),
        _ => println!("(python3 with numpy not found: skipped the NumPy check)"),
    }
    Ok(())
}
