//! Writing in a byte order the data does not have (`WriteOptions::byte_order`): every
//! big-endian file NumPy wrote (the project's fixtures and NumPy's corpus) is read as
//! native data and written big-endian again, which must give NumPy's bytes back; typed
//! data (`Vec<f64>`, records of every layout, ndarray arrays, streamed writers) written
//! big-endian reads back as the values written, in the threaded write path too.

#[path = "support/corpus.rs"]
mod corpus;

use std::path::{Path, PathBuf};

use npy_core::dtype::{ByteOrder, DType};
use npy_core::prelude::*;
use npy_core::{NpyFileWriter, WriteOptions};
use npy_seismic::*;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn big() -> WriteOptions {
    let mut o = WriteOptions::new();
    o.byte_order(ByteOrder::Big);
    o
}

fn little() -> WriteOptions {
    let mut o = WriteOptions::new();
    o.byte_order(ByteOrder::Little);
    o
}

/// True when every scalar of `dtype` with a byte order is big-endian, and one is.
fn all_big(dtype: &DType) -> bool {
    let descr = dtype.descr();
    descr.contains('>') && !descr.contains('<') && !descr.contains('=') && !dtype.has_object()
}

/// NumPy's big-endian files, read as native arrays and written big-endian, are NumPy's
/// bytes again, header included; written little-endian, every scalar is `<` and the
/// values are the same.
#[test]
fn numpys_big_endian_files_are_written_again_byte_for_byte() {
    let mut dirs = vec![data_dir()];
    dirs.extend(corpus::corpus("the corpus's big-endian files"));
    let mut checked = 0;
    for dir in dirs {
        for path in corpus::files_with_extensions(&dir, &["npy"]) {
            let Ok(array) = DynArray::read_npy(&path) else { continue };
            if !all_big(&array.header().dtype) || has_junk_padding(&path) {
                continue;
            }
            let name = path.strip_prefix(&dir).unwrap().display().to_string();
            let native = DynArray::read_npy_from(&array.write_npy_to_with(Vec::new(), &little()).unwrap()[..])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let descr = native.header().dtype.descr();
            assert!(!descr.contains('>'), "{name}: written little-endian as {descr}");
            assert_eq!(native.header().shape, array.header().shape, "{name}");
            // Legacy headers (keys in another order, no growth-axis spaces) come back as
            // np.save writes them: there the data must be NumPy's.
            let want = std::fs::read(&path).unwrap();
            let same = |got: &[u8]| match name.starts_with("legacy") {
                true => got[got.len() - array.data().len()..] == *array.data(),
                false => got == want,
            };
            let again = native.write_npy_to_with(Vec::new(), &big()).unwrap();
            assert!(same(&again), "{name}: big-endian again differs from NumPy's file");
            let out = std::env::temp_dir().join(format!("npy-byte-order-{}.npy", std::process::id()));
            native.write_npy_with(&out, &big()).unwrap();
            assert!(same(&std::fs::read(&out).unwrap()), "{name}: path write differs");
            std::fs::remove_file(&out).unwrap();
            checked += 1;
        }
    }
    assert!(checked >= 2, "only {checked} big-endian files found");
}

/// Files whose padding NumPy left with junk bytes in it (writes zero padding).
fn has_junk_padding(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().contains("junk"))
}

/// NumPy's big-endian Trace records (corpus `record/traces_be*.npy`): read into each Rust
/// layout and written with `byte_order(Big)`, they are NumPy's files again: through the
/// conversion path (Rust's field order), the in-place path (`align=True` with padding)
/// and the packed memory layout.
#[test]
fn numpys_big_endian_traces_are_written_again_from_every_layout() {
    let Some(dir) = corpus::corpus("the big-endian traces") else { return };
    let packed_file = dir.join("record/traces_be.npy");
    let aligned_file = dir.join("record/traces_be_aligned.npy");
    let want_packed = std::fs::read(&packed_file).unwrap();
    let want_aligned = std::fs::read(&aligned_file).unwrap();

    // (Byte vectors compared with `==`: the samples hold NaNs, and a failure would print
    // whole files.)
    let traces: Vec<Trace> = Vec::read_npy(&packed_file).unwrap();
    assert!(traces.write_npy_to_with(Vec::new(), &big()).unwrap() == want_packed, "Trace");
    let packed: Vec<Trace64Packed> = Vec::read_npy(&packed_file).unwrap();
    assert!(packed.write_npy_to_with(Vec::new(), &big()).unwrap() == want_packed, "Trace64Packed");
    let aligned: Vec<TraceAligned> = Vec::read_npy(&aligned_file).unwrap();
    assert!(aligned.write_npy_to_with(Vec::new(), &big()).unwrap() == want_aligned, "TraceAligned");
    // A big-endian struct written little-endian: every scalar `<`, the same values.
    let be: Vec<TraceBe> = Vec::read_npy(&packed_file).unwrap();
    let le = be.write_npy_to_with(Vec::new(), &little()).unwrap();
    let array = DynArray::read_npy_from(&le[..]).unwrap();
    assert!(!array.header().dtype.descr().contains('>'), "{}", array.header().dtype.descr());
    let back: Vec<Trace> = Vec::read_npy_from(&le[..]).unwrap();
    assert!(back.write_npy_to_with(Vec::new(), &big()).unwrap() == want_packed, "TraceBe as little-endian");
}

/// The same traces as [`Trace`], in memory as NumPy's packed layout.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(packed)]
#[repr(C, packed)]
struct Trace64Packed {
    trace_id: i32,
    receiver: ReceiverPacked,
    t0: f64,
    dt: f32,
    flags: u8,
    samples: [f32; 64],
}

/// Large writes (more than 8 MiB: pieces made on a second thread) swap every element: a `Vec<f64>` saved
/// as `>f8` through the atomic path, streamed writers, records with padding, ndarray.
#[test]
fn large_big_endian_writes_hold_the_values_written() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<f64> = (0..1_100_001).map(|i| f64::from(i) * 0.25 - 7.0).collect();
    let want: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let path = dir.path().join("be.npy");
    values.write_npy_with(&path, &big()).unwrap();
    let file = DynArray::read_npy(&path).unwrap();
    assert_eq!(file.header().dtype.descr(), "'>f8'");
    assert!(file.data() == &want[..]);
    assert_eq!(Vec::<f64>::read_npy(&path).unwrap(), values);
    // np.save's header for the same array.
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes[10..128].starts_with(b"{'descr': '>f8', 'fortran_order': False, 'shape': (1100001,), }"));

    let mut w = NpyFileWriter::<f64>::create_with(dir.path().join("stream.npy"), &big()).unwrap();
    for chunk in values.chunks(270_000) {
        w.extend(chunk).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(std::fs::read(dir.path().join("stream.npy")).unwrap(), bytes);

    // A DynArray of native data written big-endian (the conversion in pieces).
    let native = DynArray::read_npy_from(&values.write_npy_to(Vec::new()).unwrap()[..]).unwrap();
    assert_eq!(native.write_npy_to_with(Vec::new(), &big()).unwrap(), bytes);

    let traces: Vec<Trace8Aligned> = (0..130_000).map(|i| Trace8Aligned::from(Trace8::sample(i))).collect();
    let file = traces.write_npy_to_with(Vec::new(), &big()).unwrap();
    let array = DynArray::read_npy_from(&file[..]).unwrap();
    assert!(array.header().dtype.descr().starts_with("[('trace_id', '>i4'), ('', '|V4'), ('receiver', [('x', '>f8')"));
    assert_eq!(Vec::<Trace8Aligned>::read_npy_from(&file[..]).unwrap(), traces);
    // Padding is written as zeros: 4 bytes after trace_id, in every record.
    let size = std::mem::size_of::<Trace8Aligned>();
    assert!(array.data().chunks_exact(size).all(|r| r[4..8] == [0; 4]));

    let nd = ndarray::Array2::from_shape_fn((1600, 1500), |(i, j)| (i * 1500 + j) as u32);
    let file = nd.t().write_npy_to_with(Vec::new(), &big()).unwrap();
    let back = DynArray::read_npy_from(&file[..]).unwrap();
    assert_eq!(back.header().dtype.descr(), "'>u4'");
    assert!(back.header().fortran_order);
    assert_eq!(back.get::<u32>(&[7, 3]).unwrap(), nd[[3, 7]]);
    let strided = nd.slice(ndarray::s![.., ..;2]);
    let file = strided.write_npy_to_with(Vec::new(), &big()).unwrap();
    let back = DynArray::read_npy_from(&file[..]).unwrap();
    assert_eq!(back.header().shape, [1600, 750]);
    assert_eq!(back.get::<u32>(&[1599, 749]).unwrap(), strided[[1599, 749]]);
}

/// The machine's order asked for explicitly writes what the type declares, one-byte
/// types have no byte order, and object arrays are not affected.
#[test]
fn native_one_byte_and_object_writes() {
    let mut native = WriteOptions::new();
    native.byte_order(ByteOrder::NATIVE);
    let values = [1.5f32, -3.0];
    assert_eq!(values.write_npy_to_with(Vec::new(), &native).unwrap(), values.write_npy_to(Vec::new()).unwrap());
    let mut unspecified = WriteOptions::new();
    unspecified.byte_order(ByteOrder::NotApplicable);
    assert_eq!(values.write_npy_to_with(Vec::new(), &unspecified).unwrap(), values.write_npy_to(Vec::new()).unwrap());
    let bytes = [1u8, 2, 3];
    assert_eq!(bytes.write_npy_to_with(Vec::new(), &big()).unwrap(), bytes.write_npy_to(Vec::new()).unwrap());
    let names = ["a".to_string(), "b".to_string()];
    assert_eq!(names.write_npy_to_with(Vec::new(), &big()).unwrap(), names.write_npy_to(Vec::new()).unwrap());
}
