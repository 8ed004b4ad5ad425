//! Appending records to NumPy's files in place (`npy_core::append`): the project's record
//! fixtures, written by NumPy in the packed and `align=True` layouts, grow by records of
//! the matching Rust layout and of the other one (converted as writes convert); the header
//! stays the one `np.save` writes for the grown array.

use npy_seismic::{Trace8, Trace8Aligned};

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
        let more: Vec<Trace8> = (0..25).map(Trace8::sample).collect();
        let mut a = Appender::from_path(&path).unwrap();
        a.append(&more[..10]).unwrap();
        let as_aligned: Vec<Trace8Aligned> = more[10..].iter().copied().map(Trace8Aligned::from).collect();
        a.append(&as_aligned).unwrap();
        assert_eq!(a.rows(), before.len() + 25);
        let after: Vec<Trace8> = Vec::read_npy(&path).unwrap();
        assert_eq!(after[..before.len()], before[..], "{name}");
        assert_eq!(after[before.len()..], more[..], "{name}");
        let (got, want) = headers(&path);
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "{name}");
    }
}
