//! Simon's seismic traces as a NumPy record array.
//!
//! Writes 1,000,000 `Trace` records (trace id, a nested receiver position, t0, dt, flags
//! and 64 samples) in NumPy's `align=True` layout, reads them back and checks them, reads
//! the same file into a packed struct too (fields are matched by name), and prints sizes
//! and throughput. When python3 with NumPy is present it loads the file in NumPy and
//! prints the dtype NumPy sees.
//!
//! Run: `cargo run --release --example seismic` (the file goes to `target/seismic/`).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use npy_core::prelude::*;

const TRACES: usize = 1_000_000;

/// Where a receiver stood, in metres.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct Receiver {
    x: f64,
    y: f64,
    z: f32,
}

/// One trace: its header values and 64 samples. With `align` and `repr(C)` the memory
/// layout is NumPy's `align=True` layout, so reading and writing are single bulk copies.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct Trace {
    trace_id: i32,
    receiver: Receiver,
    t0: f64,
    dt: f32,
    flags: u8,
    samples: [f32; 64],
}

/// The same record without padding, as `np.dtype([...])` lays it out by default.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct PackedTrace {
    trace_id: i32,
    receiver: PackedReceiver,
    t0: f64,
    dt: f32,
    flags: u8,
    samples: [f32; 64],
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct PackedReceiver {
    x: f64,
    y: f64,
    z: f32,
}

fn trace(i: usize) -> Trace {
    let mut samples = [0f32; 64];
    for (k, s) in samples.iter_mut().enumerate() {
        *s = ((k as f32) * 0.2 + i as f32 * 0.01).sin() * (-(k as f32) / 32.0).exp();
    }
    Trace {
        trace_id: i as i32,
        receiver: Receiver {
            x: 500_000.0 + (i % 1000) as f64 * 12.5,
            y: 6_200_000.0 + (i / 1000) as f64 * 25.0,
            z: -2.5,
        },
        t0: (i % 1000) as f64 * 0.001,
        dt: 0.004,
        flags: (i % 3) as u8,
        samples,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/seismic");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("traces.npy");

    let traces: Vec<Trace> = (0..TRACES).map(trace).collect();

    let start = Instant::now();
    traces.write_npy(&path)?;
    let write_secs = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let back: Vec<Trace> = Vec::read_npy(&path)?;
    let read_secs = start.elapsed().as_secs_f64();
    assert!(back == traces, "read back differs");

    let start = Instant::now();
    let packed: Vec<PackedTrace> = Vec::read_npy(&path)?;
    let convert_secs = start.elapsed().as_secs_f64();
    assert!(packed
        .iter()
        .zip(&traces)
        .all(|(p, t)| p.trace_id == t.trace_id && p.receiver.x == t.receiver.x && p.samples == t.samples));

    let mib = std::fs::metadata(&path)?.len() as f64 / (1 << 20) as f64;
    println!("{TRACES} traces ({} bytes each): {mib:.1} MiB in {}", std::mem::size_of::<Trace>(), path.display());
    println!("dtype: {}", Trace::dtype());
    println!("write:                {write_secs:.3} s ({:.0} MiB/s)", mib / write_secs);
    println!("read (same layout):   {read_secs:.3} s ({:.0} MiB/s), all records equal", mib / read_secs);
    println!("read into packed:     {convert_secs:.3} s ({:.0} MiB/s), fields matched by name", mib / convert_secs);

    let script = format!(
        "import numpy as np\na = np.load(r'{}')\nprint('numpy sees dtype:', a.dtype)\nprint('numpy sees shape:', a.shape, 'first trace_id/receiver:', a[1]['trace_id'], a[1]['receiver'])\n",
        path.display()
    );
    match Command::new("python3").args(["-c", &script]).output() {
        Ok(out) if out.status.success() => print!("{}", String::from_utf8_lossy(&out.stdout)),
        _ => println!("(python3 with numpy not found: skipped the NumPy check)"),
    }
    Ok(())
}
