//! An `.npz` archive with a member over 4 GiB, written and read back in pieces.
//!
//! Writes `target/npz-large/big.npz` holding `big`, a stored `|u1` array of 4.25 GiB
//! (element `i` is `i % 251`), produced 64 MiB at a time with `Writer::start_array`, then
//! `tail`, a small array whose offset in the archive is past 4 GiB too (zip64 throughout).
//! Reads `big` back 64 MiB at a time, checking every value and the member's CRC, and reads
//! `tail`. Memory stays near 64 MiB per direction: the array is never held whole. Then,
//! when a Python with NumPy is there (`$NPY_PYTHON`, else `python3`), NumPy lists the
//! archive, reads `big`'s header from the zip member, maps its data in place (it is 64-byte
//! aligned) to check samples, and loads `tail`. Prints sizes and throughput; exits non-zero
//! on any mismatch; deletes the archive at the end.
//!
//! Run: `cargo run --release --example npz_large` (needs 4.3 GB of free disk; takes tens
//! of seconds). `cargo xtask ci` runs it with `NPY_CI=1`, where NumPy must be present.

use std::error::Error;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use npy_core::npz::{Compression, Reader, Writer};

/// Elements (bytes) of `big`: 4.25 GiB.
const BIG: usize = (4 << 30) + (1 << 28);
/// Elements per piece written and per chunk read.
const PIECE: usize = 64 << 20;
/// `big[i] = i % PERIOD`.
const PERIOD: usize = 251;
const TAIL: [f64; 4] = [0.5, -1.25, 4294967296.0, 1e-300];

/// Removes the archive however `main` ends.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if self.0.exists() {
            match std::fs::remove_file(&self.0) {
                Ok(()) => println!("removed {}", self.0.display()),
                Err(e) => eprintln!("cannot remove {}: {e}", self.0.display()),
            }
        }
    }
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = workspace_target().join("npz-large");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("big.npz");
    let _remove = RemoveOnDrop(path.clone());

    // One buffer, reused for every piece: the period-251 pattern, long enough that any
    // piece is a slice of it starting at that piece's phase.
    let pattern: Vec<u8> = (0..PIECE + PERIOD).map(|i| (i % PERIOD) as u8).collect();
    let piece_at = |start: usize, len: usize| &pattern[start % PERIOD..start % PERIOD + len];

    let start = Instant::now();
    let mut w = Writer::create(&path)?;
    let mut big = w.start_array_with::<u8>("big", vec![BIG], Compression::Stored)?;
    let mut written = 0;
    while written < BIG {
        let len = PIECE.min(BIG - written);
        big.write(piece_at(written, len))?;
        written += len;
    }
    big.finish()?;
    w.add("tail", &TAIL)?;
    w.finish()?;
    let write_secs = start.elapsed().as_secs_f64();
    let file_len = std::fs::metadata(&path)?.len();
    println!("wrote {} ({file_len} bytes, {:.2} GiB)", path.display(), gib(file_len));
    println!("write: {write_secs:.1} s ({:.2} GiB/s)", gib(file_len) / write_secs);

    let mut r = Reader::from_path(&path)?;
    if r.names() != ["big", "tail"] {
        return Err(format!("names {:?}, expected [\"big\", \"tail\"]", r.names()).into());
    }
    for m in r.members() {
        let at = m.data_start.ok_or("no data offset")?;
        println!("  {:5} {:>11} bytes at offset {at:>10} ({:?})", m.name, m.size, m.compression.ok_or("method")?);
    }
    let members = r.members().to_vec();
    let tail_at = members[1].data_start.ok_or("no data offset")?;
    if members[0].size != 128 + BIG as u64 || tail_at <= u32::MAX as u64 {
        return Err(format!("unexpected layout: big is {} bytes, tail at {tail_at}", members[0].size).into());
    }

    let start = Instant::now();
    let reader = r.npy("big")?;
    if reader.header().shape != [BIG] || reader.data_offset() != 128 {
        return Err(format!("big has shape {:?}, header {} bytes", reader.header().shape, reader.data_offset()).into());
    }
    let data_at = members[0].data_start.ok_or("no data offset")? + reader.data_offset() as u64;
    let mut chunks = reader.chunks::<u8>(PIECE)?;
    let mut seen = 0;
    for chunk in &mut chunks {
        let chunk = chunk?;
        let want = piece_at(seen, chunk.len());
        if chunk[..] != want[..] {
            let k = chunk.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
            return Err(format!("big[{}] is {}, expected {}", seen + k, chunk[k], want[k]).into());
        }
        seen += chunk.len();
    }
    // Read the member to its end, so its CRC is checked.
    io::copy(&mut chunks.into_inner().into_inner(), &mut io::sink())?;
    if seen != BIG {
        return Err(format!("read {seen} elements of big, expected {BIG}").into());
    }
    let read_secs = start.elapsed().as_secs_f64();
    println!(
        "read:  {read_secs:.1} s ({:.2} GiB/s), all {BIG} values and the CRC checked",
        gib(BIG as u64) / read_secs
    );
    let tail = r.read::<Vec<f64>>("tail")?;
    if tail != TAIL {
        return Err(format!("tail is {tail:?}, expected {TAIL:?}").into());
    }
    println!("tail:  {tail:?}");
    if !data_at.is_multiple_of(64) {
        return Err(format!("big's data starts at {data_at}, not a multiple of 64").into());
    }

    numpy_check(&path, data_at)
}

/// NumPy's view of the archive; an error when NumPy disagrees, or is missing under CI.
fn numpy_check(path: &Path, data_at: u64) -> Result<(), Box<dyn Error>> {
    let python = std::env::var_os("NPY_PYTHON").unwrap_or_else(|| "python3".into());
    let has_numpy = Command::new(&python).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success());
    if !has_numpy {
        if std::env::var_os("NPY_CI").is_some() {
            return Err(format!("{} with numpy is needed to check the archive", python.to_string_lossy()).into());
        }
        println!("(python3 with numpy not found: skipped the NumPy check)");
        return Ok(());
    }
    let script = format!(
        r#"
import sys, zipfile
import numpy as np
from numpy.lib import format as fmt

path, data_at, n, period = sys.argv[1], int(sys.argv[2]), {BIG}, {PERIOD}
with np.load(path, allow_pickle=False) as z:
    print("numpy", np.__version__, "lists", z.files)
    assert z.files == ["big", "tail"], z.files
    tail = z["tail"]
    print("numpy tail:", tail.dtype.str, tail.shape, tail.tolist())
    assert tail.dtype.str == "<f8" and tail.tolist() == {TAIL:?}, tail
with zipfile.ZipFile(path) as zf:
    info = zf.getinfo("big.npy")
    assert info.compress_type == zipfile.ZIP_STORED and info.file_size == 128 + n, info
    with zf.open(info) as f:
        version = fmt.read_magic(f)
        shape, fortran, dtype = fmt.read_array_header_1_0(f) if version == (1, 0) else fmt.read_array_header_2_0(f)
        print("numpy big header: version", version, "dtype", dtype.str, "shape", shape, "fortran", fortran)
        assert (shape, fortran, dtype.str) == ((n,), False, "|u1")
        head = np.frombuffer(f.read(1 << 20), dtype=np.uint8)
        assert (head == np.arange(head.size) % period).all(), "first MiB differs"
# The stored member's data is in place in the file: map it and check samples across it.
big = np.memmap(path, dtype=np.uint8, mode="r", offset=data_at, shape=(n,))
for at in (0, n // 3, (1 << 32) - 4096, n - (1 << 20)):
    window = np.asarray(big[at:at + (1 << 20)])
    assert (window == (np.arange(at, at + window.size) % period)).all(), f"big[{{at}}:] differs"
print(f"numpy maps big at offset {{data_at}}: samples up to element {{n - 1}} match")
"#
    );
    let start = Instant::now();
    let out = Command::new(&python).arg("-c").arg(&script).arg(path).arg(data_at.to_string()).output()?;
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(format!("NumPy's check of {} failed ({})", path.display(), out.status).into());
    }
    println!("numpy: {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

/// The workspace's `target/` directory (this example is built from `npy-seismic`, one
/// directory down).
fn workspace_target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new(".")).join("target")
}
