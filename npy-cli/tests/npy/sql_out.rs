//! `npy sql --out`: a result is written from its own columns, never under the header of
//! the table it was read from (issue 32): projections, reordered columns, filters, N-d
//! columns, and `.parquet`/`.arrow` results that `npy convert` takes back.

use std::path::Path;
use std::process::Output;

use npy_core::header::Header;
use npy_core::prelude::*;
use npy_core::DynArray;

use crate::support::npy;

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Shot {
    id: i32,
    a: f64,
    b: f64,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Ba {
    b: f64,
    a: f64,
}

fn shots() -> Vec<Shot> {
    (0..50).map(|i| Shot { id: i, a: f64::from(i) * 1.5, b: -f64::from(i) }).collect()
}

fn ok(output: Output) {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

fn sql_out(table: &Path, query: &str, out: &Path) {
    let table = format!("t={}", table.display());
    ok(npy(&["sql", query, "--table", &table, "--out", out.to_str().unwrap()]));
}

#[test]
fn results_are_written_from_their_own_columns() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("shots.npy");
    shots().write_npy(&table).unwrap();
    let at = |name: &str| dir.path().join(name);

    // Columns reordered: each under its own name.
    sql_out(&table, "SELECT b, a FROM t ORDER BY id", &at("ba.npy"));
    assert_eq!(DynArray::read_npy(at("ba.npy")).unwrap().dtype().descr(), "[('b', '<f8'), ('a', '<f8')]");
    let want: Vec<Ba> = shots().iter().map(|s| Ba { b: s.b, a: s.a }).collect();
    assert_eq!(Vec::<Ba>::read_npy(at("ba.npy")).unwrap(), want);

    // Fewer columns, fewer rows.
    sql_out(&table, "SELECT id, a FROM t WHERE id >= 40 ORDER BY id", &at("ida.npy"));
    let got = DynArray::read_npy(at("ida.npy")).unwrap();
    assert_eq!((got.dtype().descr(), got.shape()), ("[('id', '<i4'), ('a', '<f8')]".to_string(), &[10][..]));

    // Every column, filtered: the table's dtype, the rows of the result.
    sql_out(&table, "SELECT * FROM t WHERE id < 5 ORDER BY id", &at("all.npy"));
    assert_eq!(Vec::<Shot>::read_npy(at("all.npy")).unwrap(), shots()[..5]);

    // Parquet and Arrow results convert back to the result, not to the table.
    for ext in ["parquet", "arrow"] {
        let mid = at(&format!("ba.{ext}"));
        sql_out(&table, "SELECT b, a FROM t WHERE id < 20 ORDER BY id", &mid);
        let back = at(&format!("ba-{ext}.npy"));
        ok(npy(&["convert", mid.to_str().unwrap(), back.to_str().unwrap()]));
        assert_eq!(Vec::<Ba>::read_npy(&back).unwrap(), want[..20], "{ext}");
    }
}

#[test]
fn n_d_columns_keep_their_shape() {
    let dir = tempfile::tempdir().unwrap();
    // A (6, 2, 3) array of '>f8': rows of 2x3 tensors.
    let header = Header::new(">f8".parse().unwrap(), vec![6, 2, 3]);
    let (_, mut file) = header.encode(None).unwrap();
    for i in 0..36 {
        file.extend_from_slice(&f64::from(i).to_be_bytes());
    }
    let table = dir.path().join("cube.npy");
    std::fs::write(&table, &file).unwrap();
    let out = dir.path().join("some.npy");
    sql_out(&table, "SELECT \"values\" FROM t", &out);
    let got = DynArray::read_npy(&out).unwrap();
    assert_eq!((got.dtype().descr(), got.shape()), ("'>f8'".to_string(), &[6, 2, 3][..]));
    // The rows, in whatever order the scan's partitions gave them.
    let rows = |data: &[u8]| {
        let mut rows: Vec<Vec<u8>> = data.chunks(6 * 8).map(<[u8]>::to_vec).collect();
        rows.sort();
        rows
    };
    assert_eq!(rows(got.data()), rows(&file[file.len() - 36 * 8..]));
}
