//! `Shards` (issue 57): many files as one array along axis 0, rows gathered in any order
//! from local files read and mapped, from stored npz members, and refusals naming files.

use npy_core::mmap::MapContract;
use npy_core::prelude::*;
use npy_store::{Shards, ShardsOptions};

/// Shards of `rows` rows each (values `row * 10 + column`, 3 columns); their paths.
fn shards(dir: &std::path::Path, rows: &[usize]) -> Vec<String> {
    let mut first = 0;
    let mut paths = Vec::new();
    for (i, &n) in rows.iter().enumerate() {
        let data: Vec<i64> = (first..first + n).flat_map(|r| (0..3).map(move |c| (r * 10 + c) as i64)).collect();
        let path = dir.join(format!("s{i:02}.npy"));
        Array::from_shape_vec(vec![n, 3], data).unwrap().write_npy(&path).unwrap();
        paths.push(path.to_string_lossy().into_owned());
        first += n;
    }
    paths
}

/// Writes a file at a path.
type Write = fn(&std::path::Path);

fn expected(rows: &[usize]) -> Vec<i64> {
    rows.iter().flat_map(|&r| (0..3).map(move |c| (r * 10 + c) as i64)).collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap()
}

#[test]
fn gathers_as_read_and_as_mapped_alike() {
    let dir = tempfile::tempdir().unwrap();
    let paths = shards(dir.path(), &[100, 0, 1, 250, 49]);
    let mut mapped = ShardsOptions::new();
    // SAFETY: the files of this test's temporary directory are not changed once written.
    mapped.map(unsafe { MapContract::accept() });
    let pattern = dir.path().join("s*.npy").to_string_lossy().into_owned();
    let runtime = runtime();
    for options in [ShardsOptions::new(), mapped] {
        let all = runtime.block_on(Shards::open_with(&[pattern.as_str()], &options)).unwrap();
        assert_eq!(all.files(), paths);
        assert_eq!(all.header().shape, [400, 3]);
        // Every run length, repeats, both ends, and enough runs for several threads.
        let mut rows: Vec<usize> = (0..400).rev().step_by(3).chain([0, 0, 399, 100, 101, 99, 5, 6, 7, 8]).collect();
        rows.extend((0..400).step_by(2));
        let got: Array<i64> = runtime.block_on(all.gather(&rows)).unwrap();
        assert_eq!(got.shape(), [rows.len(), 3]);
        assert_eq!(got.as_slice(), expected(&rows));
        let sorted: Vec<usize> = (97..120).chain(300..310).collect();
        let got: Vec<i64> = runtime
            .block_on(all.gather_raw(&sorted))
            .unwrap()
            .chunks(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(got, expected(&sorted));
        let range: Array<i64> = runtime.block_on(all.read_rows(95..360)).unwrap();
        assert_eq!(range.as_slice(), expected(&(95..360).collect::<Vec<_>>()));
        let whole: Array<i64> = runtime.block_on(all.read()).unwrap();
        assert_eq!(whole.shape(), [400, 3]);
        assert_eq!(all.fetched(), 0);
    }
}

#[test]
fn reads_stored_members_naming_the_archive_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for i in 0..3u8 {
        let path = dir.path().join(format!("a{i}.npz"));
        let mut npz = npy_core::npz::Writer::create(&path).unwrap();
        let x: Vec<f32> = (0..10).map(|v| f32::from(i) * 10.0 + v as f32).collect();
        npz.add("x", &x).unwrap();
        npz.add("y", &vec![0u8; 3]).unwrap();
        npz.finish().unwrap();
        names.push(path.to_string_lossy().into_owned());
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut options = ShardsOptions::new();
    options.member("x");
    let runtime = runtime();
    let all = runtime.block_on(Shards::open_with(&names, &options)).unwrap();
    assert_eq!(runtime.block_on(all.gather::<Vec<f32>>(&[29, 0, 15])).unwrap(), [29.0, 0.0, 15.0]);
    options.member("missing");
    let e = runtime.block_on(Shards::open_with(&names, &options)).unwrap_err();
    assert!(e.to_string().contains("a0.npz"), "{e}");
}

#[test]
fn refuses_what_has_no_rows_in_place_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let paths = shards(dir.path(), &[4]);
    let other = dir.path().join("other.npy");
    let runtime = runtime();
    let cases: [(Write, &str); 4] = [
        (|p| Array::from_shape_vec(vec![4, 2], vec![0i64; 8]).unwrap().write_npy(p).unwrap(), "[2]"),
        (|p| vec![0i32; 12].write_npy(p).unwrap(), "<i4"),
        (|p| Array::from_shape_vec_fortran(vec![4, 3], vec![0i64; 12]).unwrap().write_npy(p).unwrap(), "Fortran"),
        (|p| Array::from_shape_vec(vec![], vec![1.5f64]).unwrap().write_npy(p).unwrap(), "0-d"),
    ];
    for (write, said) in cases {
        write(&other);
        let e = runtime.block_on(Shards::open(&[paths[0].as_str(), other.to_str().unwrap()])).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("other.npy") && text.contains(said), "{text}");
    }
    let e = runtime.block_on(Shards::open(&[])).unwrap_err();
    assert!(e.to_string().contains("no files"), "{e}");
}
