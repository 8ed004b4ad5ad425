//! Arrays of fixed-size arrays (`Vec<[f32; 3]>`, `Array<[i32; 4]>`) as NumPy keeps them: an
//! element type's dims go after the array's, `'<i4'` of shape `(3, 4)` (NumPy has no
//! subarray dtype at the top level of an array), both ways.

use std::path::{Path, PathBuf};

use npy_core::prelude::*;
use npy_core::{ErrorKind, NpyReader};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// NumPy's elements of a fixture, as the manifest lists them (raw integers: the values of
/// integer arrays, the bits of float arrays).
fn elements(rel: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(data("manifest.json")).unwrap();
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    let entry = entries.into_iter().find(|e| e["file"] == rel).unwrap_or_else(|| panic!("{rel} not in the manifest"));
    entry["elements"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
}

#[test]
fn numpy_rows_read_as_arrays_and_write_back_byte_for_byte() {
    let rel = "shape/3x4_C_i4.npy";
    let want: Vec<i32> = elements(rel).into_iter().map(|v| v as i32).collect();
    let rows = Vec::<[i32; 4]>::read_npy(data(rel)).unwrap();
    assert_eq!(rows.concat(), want);
    assert_eq!(rows.len(), 3);
    // Written back, it is np.save's file.
    let ours = rows.write_npy_to(Vec::new()).unwrap();
    assert!(ours == std::fs::read(data(rel)).unwrap(), "Vec<[i32; 4]> is not np.save's (3, 4) '<i4' file");

    let rel = "shape/2x3x4_C_f8.npy";
    let want: Vec<f64> = elements(rel).into_iter().map(f64::from_bits).collect();
    let grid = Array::<[f64; 4]>::read_npy(data(rel)).unwrap();
    assert_eq!(grid.shape(), [2, 3]);
    assert_eq!(grid.as_slice().concat(), want);
    assert!(grid.write_npy_to(Vec::new()).unwrap() == std::fs::read(data(rel)).unwrap());
    let planes = Vec::<[[f64; 4]; 3]>::read_npy(data(rel)).unwrap();
    assert_eq!(planes.len(), 2);
    assert_eq!(planes.iter().flatten().flatten().copied().collect::<Vec<_>>(), want);
    assert!(planes.write_npy_to(Vec::new()).unwrap() == std::fs::read(data(rel)).unwrap());
    // Widening applies per value, as for scalars.
    let wide = Vec::<[f64; 4]>::read_npy(data("shape/3x4_C_i4.npy")).unwrap();
    assert_eq!(wide[2], [8.0, 9.0, 10.0, 11.0]);
    // In chunks, and through read_into.
    let mut reader = NpyReader::from_reader(std::fs::File::open(data(rel)).unwrap()).unwrap();
    let mut buf = [[0.0f64; 4]; 4];
    assert_eq!(reader.read_into(&mut buf).unwrap(), 4);
    assert_eq!(buf.concat(), want[..16]);
    let chunks: Vec<Vec<[f64; 4]>> = NpyReader::from_reader(std::fs::File::open(data(rel)).unwrap())
        .unwrap()
        .chunks(4)
        .unwrap()
        .map(|c| c.unwrap())
        .collect();
    assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), [4, 2]);
}

#[test]
fn dims_that_are_not_the_last_or_not_contiguous_are_refused() {
    // (3, 4) as rows of 3: the last dim is 4.
    let e = Vec::<[i32; 3]>::read_npy(data("shape/3x4_C_i4.npy")).err().unwrap_or_else(|| panic!("read as [i32; 3]"));
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    // Fortran order: a row's values are not next to each other.
    let e = Vec::<[i32; 4]>::read_npy(data("shape/3x4_F_i4.npy")).err().unwrap_or_else(|| panic!("read F as rows"));
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    // And a Fortran-order array of arrays has no NumPy layout to write.
    let a = Array::from_shape_vec_fortran(vec![2, 2], vec![[1u16, 2], [3, 4], [5, 6], [7, 8]]).unwrap();
    let e = a.write_npy_to(Vec::new()).err().unwrap_or_else(|| panic!("wrote a Fortran array of arrays"));
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
    assert!(e.to_string().contains("write it in C order"), "{e}");
    // With one dim over 1, Fortran order is C order: written as NumPy would.
    let a = Array::from_shape_vec_fortran(vec![1, 2], vec![[1u16, 2], [3, 4]]).unwrap();
    let file = a.write_npy_to(Vec::new()).unwrap();
    assert!(String::from_utf8_lossy(&file).contains("'descr': '<u2', 'fortran_order': False, 'shape': (1, 2, 2), }"));
    let back = Array::<[u16; 2]>::read_npy_from(&file[..]).unwrap();
    assert_eq!((back.shape(), back.as_slice()), (a.shape(), a.as_slice()));
}

/// Archive members read as files do: `[U; N]` elements take a member's last dims.
#[test]
fn npz_members_of_arrays_read_back_as_arrays() {
    let points: Vec<[f32; 3]> = (0..4).map(|i| [i as f32, 0.5, -1.0]).collect();
    let mut w = npy_core::npz::Writer::new(std::io::Cursor::new(Vec::new()));
    w.add("points", &points).unwrap();
    let mut r = npy_core::npz::Reader::from_reader(w.finish().unwrap()).unwrap();
    assert_eq!(r.npy("points").unwrap().header().shape, [4, 3]);
    assert_eq!(r.read::<Vec<[f32; 3]>>("points").unwrap(), points);
    let e = r.read::<Vec<f32>>("points").err().unwrap_or_else(|| panic!("a (4, 3) member read as Vec<f32>"));
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
}
