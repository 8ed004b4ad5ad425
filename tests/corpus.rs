//! NumPy is the truth: every fixture in tests/data was written by NumPy (`cargo xtask
//! golden`), and its manifest records what NumPy says about it. Each file must read with
//! NumPy's descr, shape, order and data, give NumPy's element values, and be rewritten byte
//! for byte.

use std::path::{Path, PathBuf};

use half::f16;
use npy_core::dtype::{ByteOrder, DType, ScalarType};
use npy_core::header::Version;
use npy_core::prelude::*;
use npy_core::{ErrorKind, NpyReader, ReadOptions};
use num_complex::Complex;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).expect("tests/data/manifest.json");
    let Value::Array(entries) = serde_json::from_str(&text).expect("manifest is JSON") else {
        panic!("manifest is a list")
    };
    assert!(entries.len() >= 90, "only {} fixtures", entries.len());
    entries
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn opts() -> ReadOptions {
    let mut o = ReadOptions::new();
    o.max_header_size(1 << 20);
    o
}

#[test]
fn every_fixture_reads_as_numpy_says_and_rewrites_byte_for_byte() {
    for entry in manifest() {
        let file = entry["file"].as_str().unwrap();
        if entry.get("objects").is_some() || entry.get("members").is_some() {
            // Object arrays hold pickles, not raw elements: tests/objects.rs reads them.
            continue;
        }
        let path = data_dir().join(file);
        let original = std::fs::read(&path).unwrap();
        let reader = npy_core::NpyReader::from_path_with(&path, &opts()).unwrap_or_else(|e| panic!("{file}: {e}"));
        let h = reader.header().clone();
        assert_eq!(h.dtype.descr(), entry["descr"].as_str().unwrap(), "{file}: descr");
        let shape: Vec<usize> =
            entry["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        assert_eq!(h.shape, shape, "{file}: shape");
        assert_eq!(h.fortran_order, entry["fortran_order"].as_bool().unwrap(), "{file}: order");
        assert_eq!(h.dtype.itemsize() as u64, entry["itemsize"].as_u64().unwrap(), "{file}: itemsize");
        let (major, minor) = reader.version().number();
        assert_eq!(
            [major as u64, minor as u64],
            [entry["version"][0].as_u64().unwrap(), entry["version"][1].as_u64().unwrap()],
            "{file}"
        );
        assert_eq!(reader.header_len() as u64, entry["header_len"].as_u64().unwrap(), "{file}: header_len");
        assert_eq!(reader.data_offset() as u64, entry["data_offset"].as_u64().unwrap(), "{file}: data_offset");
        let arr = reader.read::<DynArray>().unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(arr.data().len() as u64, entry["data_len"].as_u64().unwrap(), "{file}: data_len");
        assert_eq!(sha256(arr.data()), entry["sha256_data"].as_str().unwrap(), "{file}: data sha256");

        let rewritten = arr.write_npy_to(Vec::new()).unwrap();
        assert!(rewritten == original, "{file}: rewrite differs from NumPy's file");
        assert_eq!(sha256(&rewritten), entry["sha256_file"].as_str().unwrap(), "{file}");

        if let Some(elements) = entry.get("elements") {
            check_elements(file, &arr, elements.as_array().unwrap());
        }
    }
}

/// Compares decoded elements with NumPy's values (storage order).
fn check_elements(file: &str, arr: &DynArray, want: &[Value]) {
    let scalar = *arr.dtype().as_scalar().unwrap();
    let n = want.len();
    let ints = |v: &Value| v.as_i64().map(i128::from).or(v.as_u64().map(i128::from)).unwrap();
    let bits = |v: &Value| v.as_u64().unwrap();
    let pair = |v: &Value| (bits(&v[0]), bits(&v[1]));
    match scalar.ty() {
        ScalarType::Bool => {
            let got = arr.to_vec::<bool>().unwrap();
            assert_eq!(
                got.iter().map(|&b| b as i128).collect::<Vec<_>>(),
                want.iter().map(ints).collect::<Vec<_>>(),
                "{file}"
            );
        }
        ScalarType::Int(_) => {
            let got = arr.to_vec::<i64>().unwrap();
            assert_eq!(
                got.iter().map(|&v| v as i128).collect::<Vec<_>>(),
                want.iter().map(ints).collect::<Vec<_>>(),
                "{file}"
            );
        }
        ScalarType::UInt(_) => {
            let got = arr.to_vec::<u64>().unwrap();
            assert_eq!(
                got.iter().map(|&v| v as i128).collect::<Vec<_>>(),
                want.iter().map(ints).collect::<Vec<_>>(),
                "{file}"
            );
        }
        ScalarType::Float(2) => {
            let got: Vec<u64> = arr.to_vec::<f16>().unwrap().iter().map(|v| v.to_bits() as u64).collect();
            assert_eq!(got, want.iter().map(bits).collect::<Vec<_>>(), "{file}");
        }
        ScalarType::Float(4) => {
            let got: Vec<u64> = arr.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits() as u64).collect();
            assert_eq!(got, want.iter().map(bits).collect::<Vec<_>>(), "{file}");
        }
        ScalarType::Float(8) => {
            let got: Vec<u64> = arr.to_vec::<f64>().unwrap().iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want.iter().map(bits).collect::<Vec<_>>(), "{file}");
        }
        ScalarType::Complex(8) => {
            let got: Vec<(u64, u64)> = arr
                .to_vec::<Complex<f32>>()
                .unwrap()
                .iter()
                .map(|c| (c.re.to_bits() as u64, c.im.to_bits() as u64))
                .collect();
            assert_eq!(got, want.iter().map(pair).collect::<Vec<_>>(), "{file}");
        }
        ScalarType::Complex(16) => {
            let got: Vec<(u64, u64)> =
                arr.to_vec::<Complex<f64>>().unwrap().iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect();
            assert_eq!(got, want.iter().map(pair).collect::<Vec<_>>(), "{file}");
        }
        ScalarType::DateTime(_) | ScalarType::TimeDelta(_) => {
            let got: Vec<i128> =
                raw_units(arr, 8, scalar.order()).map(|b| i64::from_ne_bytes(b.try_into().unwrap()) as i128).collect();
            assert_eq!(got, want.iter().map(ints).collect::<Vec<_>>(), "{file}");
        }
        ScalarType::Unicode(len) => {
            let got: Vec<Vec<u64>> = arr
                .data()
                .chunks_exact(4 * len.max(1))
                .map(|el| {
                    el.chunks_exact(4)
                        .map(|u| {
                            let u: [u8; 4] = u.try_into().unwrap();
                            (if scalar.order() == ByteOrder::Big {
                                u32::from_be_bytes(u)
                            } else {
                                u32::from_le_bytes(u)
                            }) as u64
                        })
                        .collect()
                })
                .collect();
            let want: Vec<Vec<u64>> = want.iter().map(|v| v.as_array().unwrap().iter().map(bits).collect()).collect();
            assert_eq!(got, want, "{file}");
        }
        _ => {
            // S, V, long double: raw bytes as hex.
            let size = scalar.itemsize();
            let got: Vec<String> = arr.data().chunks_exact(size.max(1)).map(hex).collect();
            assert_eq!(got, want.iter().map(|v| v.as_str().unwrap().to_string()).collect::<Vec<_>>(), "{file}");
        }
    }
    assert_eq!(arr.len(), n, "{file}: element count");
}

/// The data's `unit`-byte units in native order.
fn raw_units(arr: &DynArray, unit: usize, order: ByteOrder) -> impl Iterator<Item = Vec<u8>> + '_ {
    arr.data().chunks_exact(unit).map(move |c| {
        let mut v = c.to_vec();
        if !order.is_native() {
            v.reverse();
        }
        v
    })
}

#[test]
fn typed_reads_from_paths_match_numpy_values() {
    let dir = data_dir();
    let le: Vec<f64> = Vec::read_npy(dir.join("scalar/le_f8.npy")).unwrap();
    let be: Vec<f64> = Vec::read_npy(dir.join("scalar/be_f8.npy")).unwrap();
    assert_eq!(le.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), be.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    let want: Vec<u64> = manifest().iter().find(|e| e["file"] == "scalar/le_f8.npy").unwrap()["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(le.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want);

    // Safe widening, as NumPy's can_cast(..., 'safe'): >i2 into i64 and into f32.
    let i2: Vec<i16> = Vec::read_npy(dir.join("scalar/be_i2.npy")).unwrap();
    let wide: Vec<i64> = Vec::read_npy(dir.join("scalar/be_i2.npy")).unwrap();
    let float: Vec<f32> = Vec::read_npy(dir.join("scalar/be_i2.npy")).unwrap();
    assert_eq!(wide, i2.iter().map(|&v| v as i64).collect::<Vec<_>>());
    assert_eq!(float, i2.iter().map(|&v| v as f32).collect::<Vec<_>>());

    // Narrowing is refused with both types named.
    let e = Vec::<i32>::read_npy(dir.join("scalar/le_i8.npy")).unwrap_err();
    let ErrorKind::DtypeMismatch { expected, found, .. } = e.kind() else { panic!("{e}") };
    assert_eq!((expected.as_str(), found.as_str()), ("'<i4'", "'<i8'"));
}

#[test]
fn n_d_arrays_keep_shape_and_order() {
    let dir = data_dir();
    let c = Array::<f64>::read_npy(dir.join("shape/2x3x4_C_f8.npy")).unwrap();
    let f = Array::<f64>::read_npy(dir.join("shape/2x3x4_F_f8.npy")).unwrap();
    assert_eq!((c.shape(), c.fortran_order()), (&[2, 3, 4][..], false));
    assert_eq!((f.shape(), f.fortran_order()), (&[2, 3, 4][..], true));
    for i in 0..2 {
        for j in 0..3 {
            for k in 0..4 {
                assert_eq!(
                    c.get(&[i, j, k]).map(|v| v.to_bits()),
                    f.get(&[i, j, k]).map(|v| v.to_bits()),
                    "[{i}, {j}, {k}]"
                );
            }
        }
    }
    let bytes = f.write_npy_to(Vec::new()).unwrap();
    assert_eq!(bytes, std::fs::read(dir.join("shape/2x3x4_F_f8.npy")).unwrap());

    let e = Vec::<f64>::read_npy(dir.join("shape/2x3x4_C_f8.npy")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    let e = Vec::<f64>::read_npy(dir.join("shape/0d_f8.npy")).unwrap_err();
    assert!(e.to_string().contains("0-d"), "{e}");
    let zero_d = Array::<f64>::read_npy(dir.join("shape/0d_f8.npy")).unwrap();
    assert_eq!((zero_d.shape().len(), zero_d.as_slice().len()), (0, 1));
    let empty = Array::<f32>::read_npy(dir.join("shape/5x0x3_f4.npy")).unwrap();
    assert_eq!((empty.shape(), empty.as_slice().len()), (&[5, 0, 3][..], 0));
}

#[test]
fn primitives_written_by_us_match_numpy_files_byte_for_byte() {
    let dir = data_dir();
    macro_rules! same {
        ($t:ty, $file:expr) => {{
            let path = dir.join($file);
            let v: Vec<$t> = Vec::read_npy(&path).unwrap();
            assert_eq!(v.write_npy_to(Vec::new()).unwrap(), std::fs::read(&path).unwrap(), "{}", $file);
        }};
    }
    same!(bool, "scalar/b1.npy");
    same!(i8, "scalar/i1.npy");
    same!(u8, "scalar/u1.npy");
    same!(i16, "scalar/le_i2.npy");
    same!(i32, "scalar/le_i4.npy");
    same!(i64, "scalar/le_i8.npy");
    same!(u16, "scalar/le_u2.npy");
    same!(u32, "scalar/le_u4.npy");
    same!(u64, "scalar/le_u8.npy");
    same!(f16, "scalar/le_f2.npy");
    same!(f32, "scalar/le_f4.npy");
    same!(f64, "scalar/le_f8.npy");
    same!(Complex<f32>, "scalar/le_c8.npy");
    same!(Complex<f64>, "scalar/le_c16.npy");
}

#[test]
fn several_arrays_from_one_stream() {
    let dir = data_dir();
    let mut stream = Vec::new();
    for f in ["scalar/le_f8.npy", "record/packed.npy", "shape/3x4_F_i4.npy"] {
        stream.extend_from_slice(&std::fs::read(dir.join(f)).unwrap());
    }
    let mut input = &stream[..];
    let a = NpyReader::from_reader(&mut input).unwrap().read::<DynArray>().unwrap();
    let b = NpyReader::from_reader(&mut input).unwrap().read::<DynArray>().unwrap();
    let c = NpyReader::from_reader(&mut input).unwrap().read::<DynArray>().unwrap();
    assert!(input.is_empty());
    assert_eq!(a.dtype().descr(), "'<f8'");
    assert!(matches!(b.dtype(), DType::Record(_)));
    assert_eq!((c.shape(), c.fortran_order()), (&[3, 4][..], true));
}

#[test]
fn versions_are_kept_on_rewrite_and_chosen_as_numpy_otherwise() {
    let dir = data_dir();
    let v2 = DynArray::read_npy(dir.join("header/forced_v2_le_f8.npy")).unwrap();
    assert_eq!(v2.version(), Some(Version::V2_0));
    let fresh = DynArray::new(v2.header().clone(), v2.data().to_vec()).unwrap();
    let bytes = fresh.write_npy_to(Vec::new()).unwrap();
    assert_eq!(&bytes[6..8], &[1, 0], "np.save would pick 1.0");
    let utf8 = npy_core::NpyReader::from_path_with(dir.join("header/utf8_name_v3.npy"), &opts()).unwrap();
    assert_eq!(utf8.version(), Version::V3_0);
    let big = npy_core::NpyReader::from_path_with(dir.join("header/fields_3000_v2.npy"), &opts()).unwrap();
    assert_eq!(big.version(), Version::V2_0);
    // The default accepts it; NumPy's np.load default of 10,000 bytes does not.
    let e = npy_core::NpyReader::from_path_with(
        dir.join("header/fields_3000_v2.npy"),
        ReadOptions::new().max_header_size(10_000),
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::HeaderTooLarge { limit: 10_000, .. }), "{e}");
    assert_eq!(NpyReader::from_path(dir.join("header/fields_3000_v2.npy")).unwrap().version(), Version::V2_0);
}
