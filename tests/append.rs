//! Appending records to NumPy's files in place (`npy_core::append`): the project's record
//! fixtures, written by NumPy in the packed and `align=True` layouts, grow by records of
//! the matching Rust layout and of the other one (converted as writes convert); the header
//! stays the one `np.save` writes for the grown array.

#[path = "support/trace.rs"]
mod trace;
use trace::{Receiver, ReceiverAligned, Trace8, Trace8Aligned};

use std::path::{Path, PathBuf};

use npy_core::append::Appender;
use npy_core::prelude::*;
use npy_core::DynArray;

fn fixture(name: &str, dir: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/record").join(name);
    let to = dir.join(name);
    std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    to
}

fn trace(i: i32) -> Trace8 {
    Trace8 {
        trace_id: 1000 + i,
        receiver: Receiver { x: f64::from(i) * 12.5, y: -f64::from(i), z: i as f32 / 8.0 },
        t0: f64::from(i) * 0.001,
        dt: 0.002,
        flags: (i % 3) as u8,
        samples: std::array::from_fn(|k| (i * 8 + k as i32) as f32 / 16.0),
    }
}

fn aligned(t: &Trace8) -> Trace8Aligned {
    let r = t.receiver;
    Trace8Aligned {
        trace_id: t.trace_id,
        receiver: ReceiverAligned { x: r.x, y: r.y, z: r.z },
        t0: t.t0,
        dt: t.dt,
        flags: t.flags,
        samples: t.samples,
    }
}

/// The header `np.save` writes for `array`'s dtype and shape, and the file's own.
fn headers(path: &Path) -> (Vec<u8>, Vec<u8>) {
    let array = DynArray::read_npy(path).unwrap();
    let (_, want) = array.header().encode(None).unwrap();
    let got = std::fs::read(path).unwrap()[..want.len()].to_vec();
    (got, want)
}

#[test]
fn numpys_record_files_grow_by_records_of_either_layout() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["trace_packed.npy", "trace_aligned.npy"] {
        let path = fixture(name, dir.path());
        let before: Vec<Trace8> = Vec::read_npy(&path).unwrap();
        let more: Vec<Trace8> = (0..25).map(trace).collect();
        let mut a = Appender::open(&path).unwrap();
        a.append(&more[..10]).unwrap();
        let as_aligned: Vec<Trace8Aligned> = more[10..].iter().map(aligned).collect();
        a.append(&as_aligned).unwrap();
        assert_eq!(a.rows(), before.len() + 25);
        let after: Vec<Trace8> = Vec::read_npy(&path).unwrap();
        assert_eq!(after[..before.len()], before[..], "{name}");
        assert_eq!(after[before.len()..], more[..], "{name}");
        let (got, want) = headers(&path);
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "{name}");
    }
}
