//! Memory maps: NumPy's files viewed in place as `&[T]` (the slice points into the map),
//! or decoded on the fly where byte order, layout or alignment forbid a view; `bool` and
//! `char` data validated; files created sparse with `np.save`'s header and filled in place.

#[path = "support/corpus.rs"]
mod shared_corpus;

use npy_seismic::{trace, ReceiverAligned, TraceAligned};

use std::path::{Path, PathBuf};

use npy_core::header::Header;
use npy_core::mmap::{NpyMap, NpyMapMut};
use npy_core::prelude::*;
use npy_core::{ErrorKind, Result};
use num_complex::Complex;
use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// NumPy's corpus (see `support/corpus.rs`).
fn corpus() -> Option<PathBuf> {
    shared_corpus::corpus("corpus map tests")
}

/// NumPy's element values of a fixture (storage order; floats as bit patterns).
fn elements(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).unwrap();
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    let entry = entries.into_iter().find(|e| e["file"] == file).unwrap_or_else(|| panic!("{file} not in the manifest"));
    entry["elements"].as_array().unwrap_or_else(|| panic!("{file}: no elements")).clone()
}

fn try_open(path: &Path) -> Result<NpyMap> {
    // SAFETY: the tests never modify or truncate a file while a map of it is alive.
    unsafe { NpyMap::from_path(path) }
}

fn open(path: &Path) -> NpyMap {
    try_open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn create<T: NpyRecord>(path: &Path, shape: Vec<usize>) -> NpyMapMut {
    // SAFETY: the tests never modify or truncate a file while a map of it is alive, other
    // than through that map.
    unsafe { NpyMapMut::create::<T>(path, shape) }.unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn open_mut(path: &Path) -> Result<NpyMapMut> {
    // SAFETY: as `create`.
    unsafe { NpyMapMut::from_path(path) }
}

/// The view lies inside the map's data: nothing was copied.
fn assert_in_place<T>(view: &[T], data: &[u8]) {
    let (v, d) = (view.as_ptr_range(), data.as_ptr_range());
    assert!(
        d.start as usize <= v.start as usize && v.end as usize <= d.end as usize,
        "view {v:?} is not inside the map's data {d:?}"
    );
    assert_eq!(std::mem::size_of_val(view), data.len(), "the view covers the data");
}

fn not_viewable_reason(e: &npy_core::Error) -> &str {
    match e.kind() {
        ErrorKind::NotViewable { reason } => reason,
        _ => panic!("expected NotViewable, got {e}"),
    }
}

// ---------------------------------------------------------------------------------------
// Primitives from NumPy-made fixtures.

fn check_primitive<T: NpyRecord + PartialEq + std::fmt::Debug>(file: &str, enc: impl Fn(&T) -> Value) {
    let path = data_dir().join(file);
    let map = open(&path);
    let view = map.view::<T>().unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_in_place(view, map.data());
    let got: Vec<Value> = view.iter().map(&enc).collect();
    assert_eq!(got, elements(file), "{file}: NumPy's values");
    let read: Vec<T> = npy_core::NpyReader::from_path(&path).unwrap().read().unwrap();
    let read: Vec<Value> = read.iter().map(&enc).collect();
    assert_eq!(view.iter().map(&enc).collect::<Vec<_>>(), read, "{file}: as read_npy reads it");
}

#[test]
fn primitives_view_in_place_with_numpys_values() {
    check_primitive::<f64>("scalar/le_f8.npy", |v| v.to_bits().into());
    check_primitive::<f32>("scalar/le_f4.npy", |v| v.to_bits().into());
    check_primitive::<half::f16>("scalar/le_f2.npy", |v| v.to_bits().into());
    check_primitive::<i8>("scalar/i1.npy", |&v| v.into());
    check_primitive::<u8>("scalar/u1.npy", |&v| v.into());
    check_primitive::<i16>("scalar/le_i2.npy", |&v| v.into());
    check_primitive::<u16>("scalar/le_u2.npy", |&v| v.into());
    check_primitive::<i32>("scalar/le_i4.npy", |&v| v.into());
    check_primitive::<u32>("scalar/le_u4.npy", |&v| v.into());
    check_primitive::<i64>("scalar/le_i8.npy", |&v| v.into());
    check_primitive::<u64>("scalar/le_u8.npy", |&v| v.into());
    check_primitive::<bool>("scalar/b1.npy", |&v| u8::from(v).into());
    check_primitive::<Complex<f32>>("scalar/le_c8.npy", |v| vec![v.re.to_bits(), v.im.to_bits()].into());
    check_primitive::<Complex<f64>>("scalar/le_c16.npy", |v| vec![v.re.to_bits(), v.im.to_bits()].into());
    // Concrete values, to be sure the manifest says what we think.
    let map = open(&data_dir().join("scalar/le_i4.npy"));
    assert_eq!(map.view::<i32>().unwrap(), [i32::MIN, -1, 0, 1, i32::MAX, 0x0102_0304]);
}

#[test]
fn shape_and_order_are_exposed_and_views_are_in_storage_order() {
    let map = open(&data_dir().join("shape/3x4_F_i4.npy"));
    assert_eq!((map.shape(), map.fortran_order(), map.len()), (&[3, 4][..], true, 12));
    assert_eq!(map.dtype().descr(), "'<i4'");
    assert_eq!(map.header().shape, [3, 4]);
    assert_eq!(map.view::<i32>().unwrap(), [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    let a = Array::<i32>::read_npy(data_dir().join("shape/3x4_F_i4.npy")).unwrap();
    assert_eq!(map.view::<i32>().unwrap(), a.as_slice());

    let map = open(&data_dir().join("shape/2x3x4_C_f8.npy"));
    assert_eq!((map.shape(), map.fortran_order(), map.data_offset()), (&[2, 3, 4][..], false, 128));
    assert_eq!(map.view::<f64>().unwrap()[..4], [0.0, 0.5, 1.0, 1.5]);
    assert_eq!(map.view_range::<f64>(22..24).unwrap(), [11.0, 11.5]);

    let map = open(&data_dir().join("shape/0d_f8.npy"));
    assert_eq!((map.shape(), map.len()), (&[][..], 1));
    assert_eq!(map.view::<f64>().unwrap(), [1.5]);

    let map = open(&data_dir().join("shape/0_i4.npy"));
    assert!(map.is_empty());
    assert_eq!(map.view::<i32>().unwrap(), [] as [i32; 0]);
    assert!(map.data().is_empty());
}

#[test]
fn type_mismatches_and_bad_ranges_are_errors() {
    let map = open(&data_dir().join("scalar/le_f8.npy"));
    let e = map.view::<f32>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
    let e = map.decode::<i64>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
    let e = map.view_range::<f64>(14..16).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
    assert_eq!(e.to_string(), "element range 14..16 is out of bounds for 15 elements");
    // '<i4' widens into i64: a decoding view, not an in-place one.
    let map = open(&data_dir().join("scalar/le_i4.npy"));
    let e = map.view::<i64>().unwrap_err();
    assert!(not_viewable_reason(&e).contains("laid out differently"), "{e}");
    assert!(e.to_string().starts_with("cannot view the data in place: "), "{e}");
    assert_eq!(
        map.decode::<i64>().unwrap().rows(0..6).unwrap(),
        [i32::MIN as i64, -1, 0, 1, i32::MAX as i64, 0x0102_0304]
    );
}

// ---------------------------------------------------------------------------------------
// Byte order, alignment and validation: errors, and decoding as the fallback.

#[test]
fn big_endian_data_is_not_viewable_but_decodes() {
    let path = data_dir().join("scalar/be_f8.npy");
    let map = open(&path);
    let e = map.view::<f64>().unwrap_err();
    let reason = not_viewable_reason(&e);
    assert!(reason.contains("byte order") && reason.contains("'>f8'") && reason.ends_with("use decode()"), "{e}");
    let decoded = map.decode::<f64>().unwrap();
    assert_eq!(decoded.len(), 15);
    let want: Vec<u64> = elements("scalar/be_f8.npy").iter().map(|v| v.as_u64().unwrap()).collect();
    let all: Vec<u64> = decoded.iter().map(|v| v.unwrap().to_bits()).collect();
    assert_eq!(all, want);
    assert_eq!(decoded.get(2).unwrap(), 1.0);
    assert_eq!(decoded.rows(2..4).unwrap(), [1.0, -2.5]);
    assert!(matches!(decoded.get(15).unwrap_err().kind(), ErrorKind::Usage { .. }));
    assert!(matches!(decoded.rows(3..16).unwrap_err().kind(), ErrorKind::Usage { .. }));
    let read: Vec<f64> = Vec::read_npy(&path).unwrap();
    assert_eq!(read.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want);

    let map = open(&data_dir().join("scalar/be_i2.npy"));
    assert!(not_viewable_reason(&map.view::<i16>().unwrap_err()).contains("byte order"));
    let mut sum = 0i64;
    for v in &map.decode::<i16>().unwrap() {
        sum += v.unwrap() as i64;
    }
    assert_eq!(sum, -32768 - 1 + 1 + 32767 + 258);
}

#[test]
fn decoding_iterates_in_chunks_over_large_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big_be.npy");
    let n = 100_000usize;
    let header = Header::new("'>i4'".parse().unwrap(), vec![n]);
    // SAFETY: nothing else touches the new file while it is mapped.
    let mut map = unsafe { NpyMapMut::create_dyn(&path, &header) }.unwrap();
    let values: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
    map.write(0, &values).unwrap();
    let e = map.view_mut::<i32>().unwrap_err();
    assert!(not_viewable_reason(&e).contains("byte order"), "{e}");
    let decoded = map.decode::<i32>().unwrap();
    let mut it = decoded.iter();
    assert_eq!(it.size_hint(), (0, Some(n)));
    let all: Vec<i32> = it.by_ref().map(Result::unwrap).collect();
    assert_eq!(all, values);
    assert!(it.next().is_none());
    drop(map);
    assert_eq!(Vec::<i32>::read_npy(&path).unwrap(), values);
    let raw = std::fs::read(&path).unwrap();
    assert_eq!(raw[128..132], (-7i32).to_be_bytes());
}

/// A `.npy` file whose data starts at `data_offset`, as a writer that does not pad to 64
/// bytes (or pads to 16, as NumPy before 1.14 did) leaves it.
fn npy_at_offset(descr: &str, shape: &str, data_offset: usize, data: &[u8]) -> Vec<u8> {
    let dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    let header_len = data_offset - 10;
    assert!(dict.len() < header_len);
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header_len as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(data_offset - 1, b' ');
    out.push(b'\n');
    out.extend_from_slice(data);
    out
}

#[test]
fn unaligned_data_is_not_viewable_but_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("offset84.npy");
    let values = [1.5f64, -2.0, 1e300, f64::MIN_POSITIVE];
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&path, npy_at_offset("'<f8'", "(4,)", 84, &data)).unwrap();
    let map = open(&path);
    assert_eq!(map.data_offset(), 84);
    let e = map.view::<f64>().unwrap_err();
    let reason = not_viewable_reason(&e);
    assert!(reason.starts_with("data at offset 84 is not aligned to 8 bytes for f64"), "{e}");
    assert!(reason.ends_with("use decode()"), "{e}");
    assert_eq!(map.decode::<f64>().unwrap().rows(0..4).unwrap(), values);
    // Bytes and 4-byte-aligned types are fine at 84.
    assert_eq!(map.view::<u8>().unwrap_err().kind().to_string(), "cannot read '<f8' as '|u1'");
    assert_eq!(map.data(), data);

    let path = dir.path().join("offset83.npy");
    std::fs::write(&path, npy_at_offset("'<i2'", "(3,)", 83, &[1, 0, 2, 0, 0xff, 0xff])).unwrap();
    let map = open(&path);
    let e = map.view::<i16>().unwrap_err();
    assert!(not_viewable_reason(&e).contains("offset 83 is not aligned to 2 bytes"), "{e}");
    assert_eq!(map.decode::<i16>().unwrap().rows(0..3).unwrap(), [1, 2, -1]);
    assert_eq!(Vec::<i16>::read_npy(&path).unwrap(), [1, 2, -1]);
}

#[test]
fn legacy_16_byte_aligned_header_views_types_it_aligns() {
    let Some(dir) = corpus() else { return };
    // NumPy < 1.14 padded headers to 16 bytes: this file's data starts at 80.
    let map = open(&dir.join("legacy/align16.npy"));
    assert_eq!(map.data_offset(), 80);
    assert_eq!(map.data_offset() % std::mem::align_of::<i32>(), 0);
    let view = map.view::<i32>().unwrap();
    assert_in_place(view, map.data());
    assert_eq!(view, [i32::MIN, i32::MAX, 0, -1, 90]);
    // '<i4' widens to f64 safely: decoded, not viewed.
    let e = map.view::<f64>().unwrap_err();
    assert!(not_viewable_reason(&e).contains("laid out differently"), "{e}");
    assert_eq!(map.decode::<f64>().unwrap().get(4).unwrap(), 90.0);
}

#[test]
fn bools_are_validated_never_transmuted() {
    if let Some(dir) = corpus() {
        // NumPy wrote bytes 0, 1, 2, 255, 1, 0, 128 as '|b1'.
        let map = open(&dir.join("exotic/bool_noncanonical.npy"));
        let e = map.view::<bool>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 2, .. }), "{e}");
        assert_eq!(e.to_string(), "invalid value at element 2: bool byte 0x02 is neither 0 nor 1");
        assert_eq!(map.view_range::<bool>(0..2).unwrap(), [false, true]);
        let e = map.view_range::<bool>(4..7).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 6, .. }), "{e}");
        assert_eq!(map.data(), [0, 1, 2, 255, 1, 0, 128]);
        let decoded = map.decode::<bool>().unwrap();
        assert!(decoded.get(1).unwrap());
        let e = decoded.get(3).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 3, .. }), "{e}");
        let e = decoded.rows(4..7).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 6, .. }), "{e}");
        // Iteration yields the good elements, then the error, then stops.
        let items: Vec<Result<bool>> = decoded.iter().collect();
        assert_eq!(items.len(), 3);
        assert!(!*items[0].as_ref().unwrap() && *items[1].as_ref().unwrap());
        assert!(matches!(items[2].as_ref().unwrap_err().kind(), ErrorKind::InvalidValue { index: 2, .. }));
    }

    // A file of ours with a bad byte written through the map.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flags.npy");
    let mut map = create::<bool>(&path, vec![4]);
    map.view_mut::<bool>().unwrap().copy_from_slice(&[true, false, true, true]);
    map.data_mut()[1] = 2;
    let e = map.view::<bool>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    let e = map.view_mut::<bool>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    assert_eq!(map.view_range::<bool>(2..4).unwrap(), [true, true]);
    map.data_mut()[1] = 0;
    assert_eq!(map.view::<bool>().unwrap(), [true, false, true, true]);
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct Tagged {
    id: u32,
    ok: bool,
    mask: [bool; 3],
}

#[test]
fn bool_fields_inside_records_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tagged.npy");
    let records =
        vec![Tagged { id: 1, ok: true, mask: [true, false, true] }, Tagged { id: 2, ok: false, mask: [false; 3] }];
    records.write_npy(&path).unwrap();
    let mut map = open_mut(&path).unwrap();
    assert_eq!(map.view::<Tagged>().unwrap(), records);
    map.view_mut::<Tagged>().unwrap()[1].mask[2] = true; // no padding: a mutable view is fine
    map.data_mut()[8 + 4 + 2] = 7; // element 1, mask[1]
    let e = map.view::<Tagged>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    assert_eq!(map.view_range::<Tagged>(0..1).unwrap(), &records[..1]);
    map.data_mut()[8 + 4 + 2] = 1;
    assert_eq!(map.view::<Tagged>().unwrap()[1].mask, [false, true, true]);
}

#[derive(NpyRecord, Debug)]
#[repr(C)]
struct Noted {
    trace_id: i32,
    t0: f64,
    #[npy(skip)]
    note: String,
}

#[test]
fn skipped_fields_are_never_viewed_but_decode_to_their_default() {
    // A file with Noted's exact layout: the String's bytes are padding in the file.
    let pad = std::mem::size_of::<Noted>() - 16;
    let descr = format!("[('trace_id', '<i4'), ('', '|V4'), ('t0', '<f8'), ('', '|V{pad}')]");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("noted.npy");
    let header = Header::new(descr.parse().unwrap(), vec![2]);
    // SAFETY: nothing else touches the new file while it is mapped.
    let mut map = unsafe { NpyMapMut::create_dyn(&path, &header) }.unwrap();
    let noted = [Noted { trace_id: 7, t0: 0.5, note: "kept in memory only".into() }];
    map.write(1, &noted).unwrap();
    let e = map.view::<Noted>().unwrap_err();
    assert!(not_viewable_reason(&e).contains("#[npy(skip)]"), "{e}");
    let back = map.decode::<Noted>().unwrap().rows(0..2).unwrap();
    assert_eq!((back[1].trace_id, back[1].t0, back[1].note.as_str()), (7, 0.5, ""));
    assert_eq!((back[0].trace_id, back[0].t0), (0, 0.0));
}

#[test]
fn chars_are_validated_never_transmuted() {
    let Some(dir) = corpus() else { return };
    // '<U1' code points 0x41, 0xd800 (a surrogate), 0xdfff, 0x110000, 0xffffffff, 0.
    let map = open(&dir.join("exotic/unicode_invalid_codepoints.npy"));
    let e = map.view::<char>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    assert_eq!(map.view_range::<char>(0..1).unwrap(), ['A']);
    assert_eq!(map.view_range::<char>(5..6).unwrap(), ['\0']);
    let e = map.view_range::<char>(3..6).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 3, .. }), "{e}");
    assert_eq!(map.view::<u32>().unwrap_err().kind().to_string(), "cannot read '<U1' as '<u4'");
}

// ---------------------------------------------------------------------------------------
// Seismic traces: the records of examples/seismic.rs (`TraceAligned`, NumPy's `align=True`
// layout, which is its memory layout; record `i` is `npy_seismic::trace(i)`).

/// A trace's values as bits, so that NaN samples compare equal to themselves.
fn bits(t: &TraceAligned) -> Vec<u64> {
    let r = &t.receiver;
    let mut v = vec![t.trace_id as u64, r.x.to_bits(), r.y.to_bits(), r.z.to_bits() as u64, t.t0.to_bits()];
    v.extend([t.dt.to_bits() as u64, t.flags as u64]);
    v.extend(t.samples.iter().map(|s| s.to_bits() as u64));
    v
}

fn all_bits(traces: &[TraceAligned]) -> Vec<Vec<u64>> {
    traces.iter().map(bits).collect()
}

/// Checks a trace file written by the example's code: viewed in place, equal to
/// `read_npy`, and to the example's values at `sample` indices.
fn check_trace_file(path: &Path, sample: impl Iterator<Item = usize>) {
    let map = open(path);
    let view = map.view::<TraceAligned>().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_in_place(view, map.data());
    assert_eq!(view.len(), map.shape()[0]);
    for i in sample {
        // A file an older example wrote has other values: running it again rewrites it.
        let hint = "written by this checkout's `cargo run --release --example seismic`?";
        assert_eq!(view[i], trace(i), "{}: trace {i} ({hint})", path.display());
    }
    let read: Vec<TraceAligned> = Vec::read_npy(path).unwrap();
    assert!(read == view, "{}: view differs from read_npy", path.display());
}

#[test]
fn seismic_traces_view_in_place() {
    assert_eq!(std::mem::size_of::<TraceAligned>(), 304);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("traces.npy");
    let traces: Vec<TraceAligned> = (0..1000).map(trace).collect();
    traces.write_npy(&path).unwrap();
    check_trace_file(&path, 0..1000);
    let map = open(&path);
    assert_eq!(map.data_offset() % 64, 0);
    assert_eq!(map.decode::<TraceAligned>().unwrap().get(999).unwrap(), traces[999]);

    // The example's own file, when it has been run (CI runs the examples after the tests).
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/seismic/traces.npy");
    if example.exists() {
        let n = open(&example).len();
        check_trace_file(&example, (0..n).step_by(997).chain([n - 1]));
    } else {
        eprintln!("note: {} is absent (run the seismic example); checked our own file only", example.display());
    }
}

#[test]
fn numpys_trace_files_view_or_decode() {
    let Some(dir) = corpus() else { return };
    // align=True, native order: in place.
    let path = dir.join("record/traces_aligned.npy");
    let map = open(&path);
    let view = map.view::<TraceAligned>().unwrap();
    assert_in_place(view, map.data());
    assert_eq!(view.len(), 48);
    assert_eq!((view[0].trace_id, view[0].receiver.x, view[0].receiver.y), (1000, 500_000.0, 6_200_000.0));
    assert_eq!(all_bits(&Vec::<TraceAligned>::read_npy(&path).unwrap()), all_bits(view));

    // Big-endian: decoded.
    let path = dir.join("record/traces_be_aligned.npy");
    let map = open(&path);
    assert!(not_viewable_reason(&map.view::<TraceAligned>().unwrap_err()).contains("byte order"));
    let decoded: Vec<TraceAligned> = map.decode::<TraceAligned>().unwrap().iter().map(Result::unwrap).collect();
    assert_eq!(decoded[0].trace_id, 1000);
    assert_eq!(all_bits(&decoded), all_bits(&Vec::<TraceAligned>::read_npy(&path).unwrap()));

    // Packed (itemsize 293): another layout, decoded.
    let path = dir.join("record/traces_packed.npy");
    let map = open(&path);
    let e = map.view::<TraceAligned>().unwrap_err();
    assert!(not_viewable_reason(&e).contains("laid out differently"), "{e}");
    let decoded = map.decode::<TraceAligned>().unwrap();
    assert_eq!(all_bits(&decoded.rows(0..48).unwrap()), all_bits(&Vec::<TraceAligned>::read_npy(&path).unwrap()));

    // Fortran-order 2-D gather: storage order, as Array keeps it.
    let path = dir.join("record/gather_4x12_aligned_F.npy");
    let map = open(&path);
    assert_eq!((map.shape(), map.fortran_order()), (&[4, 12][..], true));
    assert_eq!(
        all_bits(map.view::<TraceAligned>().unwrap()),
        all_bits(Array::<TraceAligned>::read_npy(&path).unwrap().as_slice())
    );
}

// ---------------------------------------------------------------------------------------
// Creating and filling.

#[test]
fn created_file_is_what_np_save_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zeros.npy");
    let map = create::<f64>(&path, vec![1000]);
    assert_eq!((map.len(), map.data_offset(), map.shape()), (1000, 128, &[1000][..]));
    assert_eq!(std::fs::read(&path).unwrap(), vec![0f64; 1000].write_npy_to(Vec::new()).unwrap());
    assert_eq!(map.view::<f64>().unwrap(), vec![0.0; 1000]);
    drop(map);

    let path = dir.path().join("zeros_2d.npy");
    let map = create::<i16>(&path, vec![3, 100_000]);
    let zeros = Array::from_shape_vec(vec![3, 100_000], vec![0i16; 300_000]).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), zeros.write_npy_to(Vec::new()).unwrap());
    drop(map);

    let path = dir.path().join("zero_traces.npy");
    let map = create::<TraceAligned>(&path, vec![5]);
    let zero = TraceAligned {
        trace_id: 0,
        receiver: ReceiverAligned { x: 0.0, y: 0.0, z: 0.0 },
        t0: 0.0,
        dt: 0.0,
        flags: 0,
        samples: [0.0; 64],
    };
    assert_eq!(std::fs::read(&path).unwrap(), vec![zero; 5].write_npy_to(Vec::new()).unwrap());
    assert_eq!(map.view::<TraceAligned>().unwrap(), vec![zero; 5]);
    drop(map);

    // Fortran order through a header.
    let path = dir.path().join("fortran.npy");
    let header = Header { dtype: "'<u4'".parse().unwrap(), fortran_order: true, shape: vec![2, 3] };
    // SAFETY: nothing else touches the new file while it is mapped.
    let mut map = unsafe { NpyMapMut::create_dyn(&path, &header) }.unwrap();
    map.view_mut::<u32>().unwrap().copy_from_slice(&[0, 10, 1, 11, 2, 12]);
    drop(map);
    let a = Array::<u32>::read_npy(&path).unwrap();
    assert_eq!((a.shape(), a.fortran_order(), a.get(&[1, 2])), (&[2, 3][..], true, Some(&12)));
    assert_eq!(std::fs::read(&path).unwrap(), a.write_npy_to(Vec::new()).unwrap());
}

#[test]
fn create_fill_flush_then_read_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grid.npy");
    let (rows, cols) = (300usize, 70usize);
    let mut map = create::<f64>(&path, vec![rows, cols]);
    for (i, v) in map.view_mut::<f64>().unwrap().iter_mut().enumerate() {
        *v = (i / cols) as f64 * 1000.0 + (i % cols) as f64;
    }
    map.flush().unwrap();
    let a = Array::<f64>::read_npy(&path).unwrap();
    assert_eq!(a.shape(), [rows, cols]);
    assert_eq!(a.get(&[299, 69]), Some(&299_069.0));
    assert_eq!(a.as_slice(), map.view::<f64>().unwrap());

    // Row ranges, written through the map and flushed alone.
    map.view_range_mut::<f64>(5 * cols..6 * cols).unwrap().fill(-1.0);
    map.flush_range(5 * cols..6 * cols).unwrap();
    assert!(matches!(map.flush_range(0..rows * cols + 1).unwrap_err().kind(), ErrorKind::Usage { .. }));
    assert!(matches!(map.view_range_mut::<f64>(0..rows * cols + 1).unwrap_err().kind(), ErrorKind::Usage { .. }));
    drop(map);
    let a = Array::<f64>::read_npy(&path).unwrap();
    assert_eq!(a.get(&[5, 0]), Some(&-1.0));
    assert_eq!(a.get(&[6, 0]), Some(&6000.0));

    // Reopened mutably: the header is parsed, the data kept.
    let mut map = open_mut(&path).unwrap();
    assert_eq!(map.shape(), [rows, cols]);
    map.view_mut::<f64>().unwrap()[0] = 42.0;
    drop(map);
    assert_eq!(Array::<f64>::read_npy(&path).unwrap().as_slice()[0], 42.0);
}

#[test]
fn padded_records_are_written_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("traces.npy");
    let mut map = create::<TraceAligned>(&path, vec![100]);
    let e = map.view_mut::<TraceAligned>().unwrap_err();
    assert!(not_viewable_reason(&e).contains("has padding"), "{e}");
    let traces: Vec<TraceAligned> = (0..100).map(trace).collect();
    map.write(0, &traces[..60]).unwrap();
    map.write(60, &traces[60..]).unwrap();
    assert!(matches!(map.write(99, &traces[..2]).unwrap_err().kind(), ErrorKind::Usage { .. }));
    assert_eq!(map.view::<TraceAligned>().unwrap(), traces);
    map.flush().unwrap();
    drop(map);
    assert_eq!(Vec::<TraceAligned>::read_npy(&path).unwrap(), traces);
    // Byte for byte what the writer makes (padding stays zero).
    assert_eq!(std::fs::read(&path).unwrap(), traces.write_npy_to(Vec::new()).unwrap());
}

/// A created file has its blocks reserved (a full disk is an error at `create`, never a
/// `SIGBUS` at the first store), and reads as zeros where nothing was stored.
#[test]
fn created_files_are_reserved_and_read_as_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.npy");
    let n = 1usize << 23; // 64 MiB of f64: the blocks are really reserved, so keep it small
    let mut map = create::<f64>(&path, vec![n]);
    map.view_range_mut::<f64>(n / 2..n / 2 + 1).unwrap()[0] = 7.5;
    drop(map);
    let map = open(&path);
    let view = map.view::<f64>().unwrap();
    assert_eq!((view.len(), view[0], view[n / 2], view[n - 1]), (n, 0.0, 7.5, 0.0));
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), 128 + 8 * n as u64);
        assert!(meta.blocks() * 512 >= meta.len(), "{} bytes allocated: not reserved", meta.blocks() * 512);
    }
}

#[test]
fn short_and_foreign_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.npy");
    let mut bytes = (0..10i64).collect::<Vec<_>>().write_npy_to(Vec::new()).unwrap();
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&path, &bytes).unwrap();
    let e = try_open(&path).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { expected: 80, found: 77 }), "{e}");
    let e = open_mut(&path).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");

    let path = dir.path().join("not.npy");
    std::fs::write(&path, b"PK\x03\x04 this is a zip").unwrap();
    assert!(matches!(try_open(&path).unwrap_err().kind(), ErrorKind::Format { .. }));
    assert!(matches!(try_open(&dir.path().join("missing.npy")).unwrap_err().kind(), ErrorKind::Io(_)));
    // SAFETY: the path does not exist; nothing is mapped.
    let e = unsafe { NpyMapMut::create::<f64>(dir.path().join("no/such/dir.npy"), vec![3]) }.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e}");
}

#[test]
fn stored_npz_members_map_and_compressed_ones_are_refused() {
    use npy_core::npz::{Compression, Reader, Writer};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.npz");
    let samples: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let mut w = Writer::create(&path).unwrap();
    w.add("id", &[1u8, 2, 3]).unwrap();
    w.add("samples", &samples).unwrap();
    w.add_with("packed", &[9u16; 16], Compression::deflated()).unwrap();
    w.finish().unwrap();

    // SAFETY: nothing modifies or truncates the archive while it is mapped.
    let map = unsafe { NpyMap::from_npz_member(&path, "samples") }.unwrap();
    let view: &[f32] = map.view().unwrap();
    assert_eq!(view, samples);
    assert_eq!(map.data_offset() % 64, 0, "our stored members are 64-byte aligned");
    // SAFETY: as above.
    let e = unsafe { NpyMap::from_npz_member(&path, "packed") }.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
    // SAFETY: as above.
    let e = unsafe { NpyMap::from_npz_member(&path, "nope") }.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");

    // NumPy's np.savez does not align members: every stored member of its archives maps,
    // and views or decodes to the values the reader gives.
    let Some(corpus) = corpus() else { return };
    for file in ["npz/stored_mixed.npz", "npz/positional_stored.npz", "npz/v2_member_stored.npz"] {
        let path = corpus.join(file);
        let mut options = npy_core::ReadOptions::new();
        options.max_header_size(1 << 20);
        let mut reader =
            Reader::from_path_with(&path, npy_core::npz::ReaderOptions::new().read_options(&options)).unwrap();
        for name in reader.names().to_vec() {
            let want = reader.read::<DynArray>(&name).unwrap();
            // SAFETY: the corpus is not modified while mapped.
            let map = unsafe { NpyMap::from_npz_member_with(&path, &name, &options) }.unwrap();
            assert_eq!((map.dtype(), map.shape()), (want.dtype(), want.shape()), "{file}:{name}");
            assert_eq!(map.data(), want.data(), "{file}:{name}");
        }
    }
}
