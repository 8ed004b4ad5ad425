//! ndarray arrays through npy (feature `ndarray`), checked against NumPy's fixtures: every
//! fixed-size fixture of tests/data reads into `ArrayD<T>` with NumPy's shape, memory
//! order and values, writes back byte for byte, and views in place from a map; records,
//! Fortran layouts and non-contiguous views keep NumPy's meaning without copies.

#[path = "support/corpus_records.rs"]
mod corpus_records;
#[path = "support/corpus.rs"]
mod shared_corpus;

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use half::f16;
use ndarray::{s, Array0, Array1, Array2, Array3, ArrayD, Dimension, Ix2, Ix3, IxDyn, ShapeBuilder};
use npy_core::mmap::{NpyMap, NpyMapMut};
use npy_core::npz;
use npy_core::prelude::*;
use npy_core::types::unit::{Days, Generic, Micros, Millis, Nanos, Seconds};
use npy_core::types::{Bytes, DateTime64, TimeDelta64, Ucs4, Void};
use npy_core::{DynArray, ErrorKind};
use npy_seismic::{Trace, Trace8, Trace8Aligned, TraceAligned};
use num_complex::Complex;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use shared_corpus::corpus;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).expect("tests/data/manifest.json");
    serde_json::from_str(&text).expect("manifest is a JSON list")
}

fn entry(file: &str) -> Value {
    manifest().into_iter().find(|e| e["file"] == file).unwrap_or_else(|| panic!("{file} not in the manifest"))
}

fn shape_of(entry: &Value) -> Vec<usize> {
    entry["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The data bytes of a `.npy` file (after its header).
fn data_of(file: &[u8]) -> &[u8] {
    let offset = npy_core::NpyReader::from_reader(file).unwrap().data_offset();
    &file[offset..]
}

/// Whether `ptr` points into `range`.
fn inside<T>(ptr: *const T, bytes: &[u8]) -> bool {
    let range = bytes.as_ptr_range();
    (range.start as usize..range.end as usize).contains(&(ptr as usize))
}

/// Reads one fixture as `ArrayD<T>` and checks it against NumPy: shape, memory order,
/// values (`enc` encodes an element as the manifest does, in storage order), the bytes
/// written back, and a map's zero-copy view.
fn check_fixture<T: NpyRecord + PartialEq + Debug>(entry: &Value, enc: &dyn Fn(&T) -> Value) {
    let file = entry["file"].as_str().unwrap();
    let path = data_dir().join(file);
    let original = std::fs::read(&path).unwrap();
    let fortran = entry["fortran_order"].as_bool().unwrap();
    let want = entry["elements"].as_array().unwrap();
    let values = |a: &ArrayD<T>| -> Vec<Value> {
        a.as_slice_memory_order().unwrap_or_else(|| panic!("{file}: not contiguous")).iter().map(enc).collect()
    };

    let a = ArrayD::<T>::read_npy(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(a.shape(), shape_of(entry), "{file}: shape");
    let layout_ok = if fortran { a.t().is_standard_layout() } else { a.is_standard_layout() };
    assert!(layout_ok, "{file}: fortran_order {fortran}, strides {:?}", a.strides());
    assert_eq!(&values(&a), want, "{file}: values");

    // Written back: the file itself when `T` writes the file's dtype; a big-endian file's
    // values give its little-endian twin; and what is written reads back the same.
    let written = a.write_npy_to(Vec::new()).unwrap();
    let descr = entry["descr"].as_str().unwrap();
    if T::dtype().descr() == descr {
        assert!(data_of(&written) == data_of(&original), "{file}: data written differs");
        if entry["version"] == json!([1, 0]) {
            assert!(written == original, "{file}: rewrite differs from NumPy's file");
        }
        // The map's view: the same array, in place.
        // SAFETY: nothing modifies the fixture while it is mapped.
        let map = unsafe { NpyMap::from_path(&path) }.unwrap();
        let view = map.view_nd::<T, IxDyn>().unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(view.shape(), a.shape(), "{file}: map view");
        let viewed: Vec<Value> = view.as_slice_memory_order().unwrap().iter().map(enc).collect();
        assert_eq!(&viewed, want, "{file}: map view");
        if !view.is_empty() {
            assert!(inside(view.as_ptr(), map.data()), "{file}: the view is not in the map");
        }
    } else {
        let twin = file.replacen("be_", "le_", 1);
        if twin != file && data_dir().join(&twin).is_file() {
            assert!(written == std::fs::read(data_dir().join(&twin)).unwrap(), "{file}: differs from {twin}");
        }
    }
    let back = ArrayD::<T>::read_npy_from(&written[..]).unwrap();
    assert_eq!((back.shape(), values(&back)), (a.shape(), values(&a)), "{file}: read back");
}

fn bits32(v: f32) -> Value {
    json!(v.to_bits())
}

fn bits64(v: f64) -> Value {
    json!(v.to_bits())
}

/// What is done with a fixture once its element type is known.
trait Visit {
    fn visit<T: NpyRecord + Clone + PartialEq + Debug>(&mut self, enc: &dyn Fn(&T) -> Value);
}

/// Calls `visit` with the Rust element type of a descr's kind (`'<i4'`: `i4`) and the
/// manifest's encoding of its values; false when no Rust type fits (long doubles,
/// multiplied time units).
fn dispatch(descr: &str, visit: &mut impl Visit) -> bool {
    let kind = descr.trim_matches('\'').trim_start_matches(['<', '>', '|', '=']);
    macro_rules! kinds {
        ($($k:literal => $t:ty, $enc:expr;)*) => {
            match kind {
                $($k => visit.visit::<$t>(&$enc),)*
                _ => return false,
            }
        };
    }
    kinds! {
        "b1" => bool, |v: &bool| json!(*v as u8);
        "i1" => i8, |v: &i8| json!(v);
        "u1" => u8, |v: &u8| json!(v);
        "i2" => i16, |v: &i16| json!(v);
        "u2" => u16, |v: &u16| json!(v);
        "i4" => i32, |v: &i32| json!(v);
        "u4" => u32, |v: &u32| json!(v);
        "i8" => i64, |v: &i64| json!(v);
        "u8" => u64, |v: &u64| json!(v);
        "f2" => f16, |v: &f16| json!(v.to_bits());
        "f4" => f32, |v: &f32| bits32(*v);
        "f8" => f64, |v: &f64| bits64(*v);
        "c8" => Complex<f32>, |v: &Complex<f32>| json!([bits32(v.re), bits32(v.im)]);
        "c16" => Complex<f64>, |v: &Complex<f64>| json!([bits64(v.re), bits64(v.im)]);
        "S1" => Bytes<1>, |v: &Bytes<1>| json!(hex(v.raw()));
        "S4" => Bytes<4>, |v: &Bytes<4>| json!(hex(v.raw()));
        "S5" => Bytes<5>, |v: &Bytes<5>| json!(hex(v.raw()));
        "S8" => Bytes<8>, |v: &Bytes<8>| json!(hex(v.raw()));
        "S16" => Bytes<16>, |v: &Bytes<16>| json!(hex(v.raw()));
        "V3" => Void<3>, |v: &Void<3>| json!(hex(&v.0));
        "V8" => Void<8>, |v: &Void<8>| json!(hex(&v.0));
        "U1" => Ucs4<1>, |v: &Ucs4<1>| json!(v.code_points());
        "U3" => Ucs4<3>, |v: &Ucs4<3>| json!(v.code_points());
        "U4" => Ucs4<4>, |v: &Ucs4<4>| json!(v.code_points());
        "U5" => Ucs4<5>, |v: &Ucs4<5>| json!(v.code_points());
        "U10" => Ucs4<10>, |v: &Ucs4<10>| json!(v.code_points());
        "M8" => DateTime64<Generic>, |v: &DateTime64<Generic>| json!(v.value());
        "M8[D]" => DateTime64<Days>, |v: &DateTime64<Days>| json!(v.value());
        "M8[s]" => DateTime64<Seconds>, |v: &DateTime64<Seconds>| json!(v.value());
        "M8[ms]" => DateTime64<Millis>, |v: &DateTime64<Millis>| json!(v.value());
        "M8[us]" => DateTime64<Micros>, |v: &DateTime64<Micros>| json!(v.value());
        "M8[ns]" => DateTime64<Nanos>, |v: &DateTime64<Nanos>| json!(v.value());
        "m8" => TimeDelta64<Generic>, |v: &TimeDelta64<Generic>| json!(v.value());
        "m8[D]" => TimeDelta64<Days>, |v: &TimeDelta64<Days>| json!(v.value());
        "m8[s]" => TimeDelta64<Seconds>, |v: &TimeDelta64<Seconds>| json!(v.value());
        "m8[ms]" => TimeDelta64<Millis>, |v: &TimeDelta64<Millis>| json!(v.value());
        "m8[us]" => TimeDelta64<Micros>, |v: &TimeDelta64<Micros>| json!(v.value());
        "m8[ns]" => TimeDelta64<Nanos>, |v: &TimeDelta64<Nanos>| json!(v.value());
    }
    true
}

#[test]
fn every_fixed_size_fixture_reads_into_arrayd_as_numpy_says() {
    struct Fixture<'a>(&'a Value);
    impl Visit for Fixture<'_> {
        fn visit<T: NpyRecord + Clone + PartialEq + Debug>(&mut self, enc: &dyn Fn(&T) -> Value) {
            check_fixture::<T>(self.0, enc);
        }
    }
    let (mut checked, mut untyped, mut with_elements) = (Vec::new(), Vec::new(), 0);
    for entry in manifest() {
        if entry.get("elements").is_none() {
            continue; // records (below, and tests/records.rs), object arrays, archives
        }
        with_elements += 1;
        let descr = entry["descr"].as_str().unwrap();
        if dispatch(descr, &mut Fixture(&entry)) {
            checked.push(entry["file"].as_str().unwrap().to_string());
        } else {
            untyped.push(descr.trim_matches('\'').trim_start_matches(['<', '>', '|']).to_string());
        }
    }
    // Only long doubles and multiplied time units have no Rust element type; DynArray
    // reads them (tests/corpus.rs).
    assert_eq!(checked.len() + untyped.len(), with_elements);
    assert!(checked.len() >= 60, "only {} fixtures checked", checked.len());
    untyped.sort();
    untyped.dedup();
    assert_eq!(untyped, ["M8[25s]", "c32", "f16", "m8[25s]"]);
    for must in ["shape/2x3x4_F_be_u2.npy", "shape/2x2_F_U3.npy", "shape/0d_f8.npy", "shape/5x0x3_f4.npy"] {
        assert!(checked.iter().any(|f| f == must), "{must} not checked");
    }
}

#[test]
fn fixed_dimensions_read_and_wrong_ones_are_named() {
    let dir = data_dir();
    let a = Array3::<f64>::read_npy(dir.join("shape/2x3x4_F_f8.npy")).unwrap();
    let c = Array3::<f64>::read_npy(dir.join("shape/2x3x4_C_f8.npy")).unwrap();
    assert_eq!(a, c, "the same values in either order");
    assert!(a.t().is_standard_layout() && c.is_standard_layout());
    let zero_d = Array0::<f64>::read_npy(dir.join("shape/0d_f8.npy")).unwrap();
    assert_eq!(zero_d.into_scalar().to_bits(), 4609434218613702656);
    assert_eq!(
        Array1::<i16>::read_npy(dir.join("shape/1d_i2.npy")).unwrap(),
        ndarray::array![-3i16, -2, -1, 0, 1, 2, 3]
    );

    let e = Array2::<f64>::read_npy(dir.join("shape/2x3x4_C_f8.npy")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("2x3x4_C_f8.npy"), "names the file: {text}");
    assert!(text.contains("(2, 3, 4)") && text.contains("3-d") && text.contains("2 dimensions"), "{text}");
    assert!(text.contains("Array3"), "{text}");
    let e = Array1::<f64>::read_npy(dir.join("shape/0d_f8.npy")).unwrap_err();
    assert!(e.to_string().contains("0-d") && e.to_string().contains("Array0"), "{e}");
    // A dtype that does not fit is the reader's usual error.
    let e = Array3::<i32>::read_npy(dir.join("shape/2x3x4_C_f8.npy")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
}

#[test]
fn fortran_data_moves_between_array_and_ndarray_without_copies() {
    let a = npy_core::Array::<f64>::read_npy(data_dir().join("shape/2x3x4_F_f8.npy")).unwrap();
    assert!(a.fortran_order());
    let ptr = a.as_slice().as_ptr();
    let want: Vec<u64> = a.as_slice().iter().map(|v| v.to_bits()).collect();
    let nd = ArrayD::from(a);
    assert_eq!(nd.as_ptr(), ptr, "Array -> ArrayD moved the data");
    assert!(nd.t().is_standard_layout(), "a Fortran Array gives a Fortran layout");
    assert_eq!(nd.shape(), [2, 3, 4]);
    assert_eq!(nd.as_slice_memory_order().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want);
    let back = npy_core::Array::try_from(nd).unwrap();
    assert_eq!(back.as_slice().as_ptr(), ptr, "ArrayD -> Array moved the data");
    assert!(back.fortran_order());
    assert_eq!(back.shape(), [2, 3, 4]);

    // A Fortran ndarray written is NumPy's Fortran file, byte for byte.
    let c = Array2::<i32>::read_npy(data_dir().join("shape/3x4_C_i4.npy")).unwrap();
    let f = c.t().as_standard_layout().into_owned().reversed_axes();
    assert!(!f.is_standard_layout() && f.t().is_standard_layout());
    assert_eq!(f.write_npy_to(Vec::new()).unwrap(), std::fs::read(data_dir().join("shape/3x4_F_i4.npy")).unwrap());
    // `c.t()` is Fortran-contiguous: its buffer is written as it is, `fortran_order: True`.
    let t = c.t().write_npy_to(Vec::new()).unwrap();
    let header = npy_core::NpyReader::from_reader(&t[..]).unwrap().header().clone();
    assert_eq!((header.shape, header.fortran_order), (vec![4, 3], true));
    assert_eq!(data_of(&t), data_of(&std::fs::read(data_dir().join("shape/3x4_C_i4.npy")).unwrap()));
}

#[test]
fn non_contiguous_views_write_numpy_logical_order() {
    let a = Array3::<f64>::read_npy(data_dir().join("shape/2x3x4_C_f8.npy")).unwrap();
    let f = Array3::<f64>::read_npy(data_dir().join("shape/2x3x4_F_f8.npy")).unwrap();
    let views = [
        a.slice(s![.., 1.., ..;2]),
        a.slice(s![..;-1, .., 1..3]),
        a.view().permuted_axes([2, 0, 1]),
        f.slice(s![.., ..;2, ..]),
        f.view().permuted_axes([1, 0, 2]),
    ];
    for (i, v) in views.iter().enumerate() {
        assert!(v.as_slice().is_none() && v.t().as_slice().is_none(), "view {i} is contiguous");
        let written = v.write_npy_to(Vec::new()).unwrap();
        let copy = v.as_standard_layout().write_npy_to(Vec::new()).unwrap();
        assert!(written == copy, "view {i}: differs from its C copy");
        let back = Array3::<f64>::read_npy_from(&written[..]).unwrap();
        assert_eq!(back, v, "view {i}");
        assert!(back.is_standard_layout());
    }
    // The same through a path and an archive member.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("view.npy");
    views[1].write_npy(&path).unwrap();
    assert_eq!(Array3::<f64>::read_npy(&path).unwrap(), views[1]);
    let mut w = npz::Writer::new(std::io::Cursor::new(Vec::new()));
    w.add("v", &views[2]).unwrap();
    w.add_with("f", &f, npz::Compression::deflated()).unwrap();
    let mut r = npz::Reader::from_reader(w.finish().unwrap()).unwrap();
    assert_eq!(r.read::<ndarray::Array<f64, Ix3>>("v").unwrap(), views[2]);
    let f_back = r.read::<ndarray::Array<f64, IxDyn>>("f").unwrap();
    assert!(f_back.t().is_standard_layout(), "a Fortran member reads as a Fortran layout");
    assert_eq!(f_back, f.into_dyn());
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct F2 {
    a: i32,
    #[npy(endian = "big")]
    b: f64,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct ZeroD {
    x: f64,
    y: [i32; 2],
    s: Bytes<2>,
}

/// NumPy's `trace_id` values of a record fixture.
fn trace_ids(file: &str) -> Value {
    entry(file)["fields"]["trace_id"].clone()
}

#[test]
fn derived_records_round_trip_as_ndarrays() {
    let dir = data_dir();
    let file = "record/trace_packed.npy";
    let a = Array1::<Trace8>::read_npy(dir.join(file)).unwrap();
    assert_eq!(json!(a.iter().map(|t| t.trace_id).collect::<Vec<_>>()), trace_ids(file));
    assert_eq!(a.to_vec(), Vec::<Trace8>::read_npy(dir.join(file)).unwrap());
    assert!(a.write_npy_to(Vec::new()).unwrap() == std::fs::read(dir.join(file)).unwrap(), "{file}");
    // The aligned layout is `Trace8Aligned`'s memory: a map views it in place.
    let file = "record/trace_aligned.npy";
    let a = Array1::<Trace8Aligned>::read_npy(dir.join(file)).unwrap();
    assert_eq!(json!(a.iter().map(|t| t.trace_id).collect::<Vec<_>>()), trace_ids(file));
    assert!(a.write_npy_to(Vec::new()).unwrap() == std::fs::read(dir.join(file)).unwrap(), "{file}");
    // SAFETY: nothing modifies the fixture while it is mapped.
    let map = unsafe { NpyMap::from_path(dir.join(file)) }.unwrap();
    let view = map.view_nd::<Trace8Aligned, ndarray::Ix1>().unwrap();
    assert_eq!(view, a);
    assert!(inside(view.as_ptr(), map.data()));

    // NumPy's Fortran-order record file: a Fortran layout, written back byte for byte.
    let file = "record/3x2_F.npy";
    let f = Array2::<F2>::read_npy(dir.join(file)).unwrap();
    assert!(f.t().is_standard_layout() && !f.is_standard_layout());
    assert_eq!(f[[2, 1]].a, 5);
    assert_eq!(json!(f.t().iter().map(|r| r.a).collect::<Vec<_>>()), entry(file)["fields"]["a"]);
    assert!(f.write_npy_to(Vec::new()).unwrap() == std::fs::read(dir.join(file)).unwrap(), "{file}");
    let file = "record/zero_d.npy";
    let z = Array0::<ZeroD>::read_npy(dir.join(file)).unwrap();
    assert_eq!(json!(z.iter().map(|r| r.x.to_bits()).collect::<Vec<_>>()), entry(file)["fields"]["x"]);
    assert!(z.write_npy_to(Vec::new()).unwrap() == std::fs::read(dir.join(file)).unwrap(), "{file}");

    // 2-D arrays of 64-sample traces, in every layout.
    let traces: Vec<Trace> = (0..12)
        .map(|i| Trace {
            trace_id: i,
            receiver: npy_seismic::Receiver { x: i as f64, y: -(i as f64), z: 0.5 },
            t0: 0.25 * i as f64,
            dt: 0.004,
            flags: i as u8,
            samples: std::array::from_fn(|k| (i * 64 + k as i32) as f32),
        })
        .collect();
    let c = Array2::from_shape_vec((3, 4), traces.clone()).unwrap();
    let f = Array2::from_shape_vec((3, 4).f(), traces).unwrap();
    for (a, fortran) in [(&c, false), (&f, true)] {
        let bytes = a.write_npy_to(Vec::new()).unwrap();
        let reader = npy_core::NpyReader::from_reader(&bytes[..]).unwrap();
        assert_eq!(reader.header().fortran_order, fortran);
        let back = Array2::<Trace>::read_npy_from(&bytes[..]).unwrap();
        assert_eq!(&back, a);
        assert_eq!(back.t().is_standard_layout(), fortran);
    }
    let stepped = c.slice(s![..;-2, 1..;2]);
    assert_eq!(stepped.write_npy_to(Vec::new()).unwrap(), stepped.to_owned().write_npy_to(Vec::new()).unwrap());
    assert_eq!(Array2::<Trace>::read_npy_from(&stepped.write_npy_to(Vec::new()).unwrap()[..]).unwrap(), stepped);
}

#[test]
fn maps_and_archive_members_view_in_place() {
    let dir = tempfile::tempdir().unwrap();
    // A mapped npz member: stored members are viewed where they lie in the archive.
    let path = dir.path().join("cube.npz");
    // NumPy's big-endian Fortran file, read as native u16 in its Fortran layout.
    let cube = Array3::<u16>::read_npy(data_dir().join("shape/2x3x4_F_be_u2.npy")).unwrap();
    let mut w = npz::Writer::create(&path).unwrap();
    w.add("cube", &cube).unwrap();
    w.add("rows", &cube.slice(s![.., 1, ..])).unwrap();
    w.finish().unwrap();
    // SAFETY: nothing modifies the archive while it is mapped.
    let map = unsafe { NpyMap::from_npz_member(&path, "cube") }.unwrap();
    assert!(map.fortran_order());
    let view = map.view_nd::<u16, Ix3>().unwrap();
    assert_eq!(view, cube);
    assert!(view.t().is_standard_layout());
    assert!(inside(view.as_ptr(), map.data()));
    // SAFETY: as above.
    let rows = unsafe { NpyMap::from_npz_member(&path, "rows") }.unwrap();
    assert_eq!(rows.view_nd::<u16, Ix2>().unwrap(), cube.slice(s![.., 1, ..]));
    let e = rows.view_nd::<u16, Ix3>().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");

    // A writable map filled through ndarray, then read by the reader.
    let path = dir.path().join("filled.npy");
    // SAFETY: no other process uses the file while it is mapped.
    let mut map = unsafe { NpyMapMut::create::<f32>(&path, vec![3, 5]) }.unwrap();
    {
        let mut view = map.view_nd_mut::<f32, Ix2>().unwrap();
        for ((i, j), v) in view.indexed_iter_mut() {
            *v = (i * 10 + j) as f32;
        }
        view.slice_mut(s![.., ..;2]).mapv_inplace(|v| -v);
    }
    map.flush().unwrap();
    assert!(inside(map.view_nd::<f32, Ix2>().unwrap().as_ptr(), map.data()));
    drop(map);
    let back = Array2::<f32>::read_npy(&path).unwrap();
    assert_eq!(back[[2, 4]], -24.0);
    assert_eq!(back[[1, 3]], 13.0);
    let e = Array2::<i16>::read_npy(&path).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
}

#[test]
fn map_views_group_array_elements_as_reads_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("xyz.npy");
    let flat = npy_core::Array::from_shape_vec(vec![2, 2, 3], (0..12).map(|i| i as f32).collect()).unwrap();
    flat.write_npy(&path).unwrap();
    {
        // SAFETY: nothing else uses the file while it is mapped.
        let mut map = unsafe { NpyMapMut::from_path(&path) }.unwrap();
        let mut view = map.view_nd_mut::<[f32; 3], Ix2>().unwrap();
        assert_eq!(view.shape(), [2, 2]);
        assert_eq!(view[[1, 0]], [6.0, 7.0, 8.0]);
        view[[0, 1]] = [-1.0, -2.0, -3.0];
        assert_eq!(map.view::<[f32; 3]>().unwrap().len(), 4);
        assert_eq!(map.view_range::<[f32; 3]>(3..4).unwrap(), [[9.0, 10.0, 11.0]]);
        map.write(2, &[[0.5f32, 1.5, 2.5]]).unwrap();
        assert_eq!(map.decode::<[f64; 3]>().unwrap().get(1).unwrap(), [-1.0, -2.0, -3.0]);
        map.flush().unwrap();
    }
    // SAFETY: as above.
    let map = unsafe { NpyMap::from_path(&path) }.unwrap();
    let view = map.view_nd::<[f32; 3], Ix2>().unwrap();
    assert_eq!(view[[1, 0]], [0.5, 1.5, 2.5]);
    assert_eq!(map.view_nd::<f32, ndarray::Ix3>().unwrap()[[0, 1, 2]], -3.0);
    let e = map.view_nd::<[f32; 3], ndarray::Ix3>().unwrap_err();
    assert!(e.to_string().contains("(2, 2)"), "{e}");
    // Dims that are not the file's last ones are no grouping: the usual mismatch.
    assert!(map.view::<[f32; 2]>().is_err());
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// NumPy's reference corpus (`../shared/corpus/public`, see `support/corpus.rs`): every
/// `.npy` file of a fixed-size scalar dtype reads into `ArrayD<T>` with NumPy's shape and
/// memory order; its C-order bytes are NumPy's (`sha256_c_order`), the file written back
/// is NumPy's (`sha256_file`), and a map views it in place. Files in another byte order
/// give the values the dynamic reader gives.
#[test]
fn every_corpus_file_of_a_fixed_size_dtype_round_trips_through_arrayd() {
    let Some(dir) = corpus("the ndarray corpus round trips") else { return };
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    struct CorpusFile<'a> {
        path: PathBuf,
        entry: &'a Value,
        refused: Vec<String>,
        native: usize,
    }
    impl Visit for CorpusFile<'_> {
        fn visit<T: NpyRecord + Clone + PartialEq + Debug>(&mut self, _: &dyn Fn(&T) -> Value) {
            let (path, entry) = (&self.path, self.entry);
            let file = entry["file"].as_str().unwrap();
            let a = match ArrayD::<T>::read_npy(path) {
                Err(e) if matches!(e.kind(), ErrorKind::InvalidValue { .. }) => {
                    self.refused.push(file.to_string());
                    return;
                }
                other => other.unwrap_or_else(|e| panic!("{file}: {e}")),
            };
            assert_eq!(a.shape(), shape_of(entry), "{file}: shape");
            let fortran = entry["fortran_order"].as_bool().unwrap();
            assert!(if fortran { a.t().is_standard_layout() } else { a.is_standard_layout() }, "{file}: layout");
            let written = a.write_npy_to(Vec::new()).unwrap();
            if T::dtype().descr() == entry["descr"].as_str().unwrap() {
                self.native += 1;
                let c_order = a.as_standard_layout().write_npy_to(Vec::new()).unwrap();
                assert_eq!(sha256(data_of(&c_order)), entry["sha256_c_order"].as_str().unwrap(), "{file}: C order");
                // An array with at most one dim over 1 is both C and Fortran: ndarray cannot
                // tell which a file said, and it is written as C order (as `np.save` does).
                let both = a.shape().iter().filter(|&&d| d > 1).count() <= 1;
                if both && fortran {
                    assert!(!npy_core::NpyReader::from_reader(&written[..]).unwrap().header().fortran_order, "{file}");
                    assert_eq!(sha256(data_of(&written)), entry["sha256_data"].as_str().unwrap(), "{file}: data");
                } else {
                    assert_eq!(sha256(data_of(&written)), entry["sha256_data"].as_str().unwrap(), "{file}: data");
                    // Whole files where NumPy's header is the one `np.save` writes today (not
                    // legacy padding or a forced version).
                    let original = std::fs::read(path).unwrap();
                    let r = npy_core::NpyReader::from_reader(&original[..]).unwrap();
                    if r.header().encode(None).unwrap().1 == original[..r.data_offset()] {
                        assert_eq!(sha256(&written), entry["sha256_file"].as_str().unwrap(), "{file}: rewrite");
                    }
                }
                // SAFETY: nothing modifies the corpus while it is mapped.
                let map = unsafe { NpyMap::from_path(path) }.unwrap();
                let view = map.view_nd::<T, IxDyn>().unwrap_or_else(|e| panic!("{file}: {e}"));
                assert_eq!(view.shape(), a.shape(), "{file}");
                if !view.is_empty() && size_of::<T>() > 0 {
                    assert!(inside(view.as_ptr(), map.data()), "{file}: the view is not in the map");
                }
            } else {
                // The dynamic reader's values in the same layout: the same bytes written.
                let d = DynArray::read_npy(path).unwrap();
                let (shape, values) = (d.shape().to_vec(), d.to_vec::<T>().unwrap());
                let same = if d.fortran_order() {
                    npy_core::Array::from_shape_vec_fortran(shape, values)
                } else {
                    npy_core::Array::from_shape_vec(shape, values)
                };
                assert!(same.unwrap().write_npy_to(Vec::new()).unwrap() == written, "{file}: values");
            }
        }
    }
    let (mut checked, mut native, mut refused) = (0, 0, Vec::new());
    for entry in entries.iter().filter(|e| e["kind"] == "npy") {
        let descr = entry["descr"].as_str().unwrap();
        let path = dir.join(entry["file"].as_str().unwrap());
        let mut visit = CorpusFile { path, entry, refused: Vec::new(), native: 0 };
        if dispatch(descr, &mut visit) {
            checked += 1;
            native += visit.native;
            refused.extend(visit.refused);
        }
    }
    // NumPy writes these values, but they are no valid `bool` or `char`: typed reads
    // refuse them (DynArray keeps them).
    assert_eq!(refused, ["exotic/bool_noncanonical.npy", "exotic/unicode_invalid_codepoints.npy"]);
    assert!(checked >= 85 && native >= 55, "{checked} files checked, {native} in native order");

    // Record files through derived structs, in their layouts, written back byte for byte.
    fn records<T: NpyRecord, D: Dimension>(dir: &Path, file: &str, fortran: bool) -> ndarray::Array<T, D> {
        let a = ndarray::Array::<T, D>::read_npy(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(a.t().is_standard_layout() && !a.is_standard_layout(), fortran, "{file}: layout");
        assert!(a.write_npy_to(Vec::new()).unwrap() == std::fs::read(dir.join(file)).unwrap(), "{file}");
        a
    }
    records::<corpus_records::RG, Ix2>(&dir, "struct/struct_2d.npy", false);
    records::<corpus_records::AB, Ix2>(&dir, "struct/struct_3x4_F.npy", true);
    records::<corpus_records::KV, Ix3>(&dir, "struct/struct_2x3x2_aligned_F.npy", true);
    records::<corpus_records::AbcF, Ix2>(&dir, "fortran/struct_2x3_F.npy", true);
    records::<Trace, ndarray::Ix0>(&dir, "record/trace_0d.npy", false);
    records::<Trace, Ix2>(&dir, "record/gather_4x12.npy", false);
    // NumPy's C order of a Fortran record file: the same bytes from `as_standard_layout`.
    let aligned = records::<TraceAligned, Ix2>(&dir, "record/gather_4x12_aligned_F.npy", true);
    let c_order = aligned.as_standard_layout().write_npy_to(Vec::new()).unwrap();
    let want = entries.iter().find(|e| e["file"] == "record/gather_4x12_aligned_F.npy").unwrap();
    assert_eq!(sha256(data_of(&c_order)), want["sha256_c_order"].as_str().unwrap());
}
