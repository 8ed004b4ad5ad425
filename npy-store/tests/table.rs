//! npy-store's table engine ([`npy_store::Table`]): parts of records and subarrays decoded
//! alone, row windows across files, filters judged in `.npy` files and in archives (on
//! plain members in the scan, on a record member after decoding), each against the
//! values written; and the errors a user meets, naming the file.

use std::path::Path as FsPath;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int64Type};
use arrow_array::{BooleanArray, RecordBatch};
use npy_core::header::Header;
use npy_core::npz::{Compression, Writer};
use npy_core::prelude::*;
use npy_store::filter::{Filter, Kept};
use npy_store::{Table, TableOptions};

/// Rows of each file.
const N: usize = 1000;

/// Record `i` (numbered across files): `t0 = i`, `receiver = (x = 2i, y = -i)`,
/// `samples[k] = i + k / 10` for `k < 16`.
fn record(i: usize) -> Vec<u8> {
    let mut row = Vec::new();
    row.extend((i as f64).to_le_bytes());
    row.extend((2.0 * i as f64).to_le_bytes());
    row.extend((-(i as f64)).to_le_bytes());
    for k in 0..16 {
        row.extend((i as f32 + k as f32 / 10.0).to_le_bytes());
    }
    row
}

/// A `.npy` file of records `first..first + N`.
fn records(first: usize) -> Vec<u8> {
    let descr = "[('t0', '<f8'), ('receiver', [('x', '<f8'), ('y', '<f8')]), ('samples', '<f4', (16,))]";
    let (_, mut bytes) = Header::new(descr.parse().unwrap(), vec![N]).encode(None).unwrap();
    for i in first..first + N {
        bytes.extend(record(i));
    }
    bytes
}

fn open(source: &FsPath) -> Table {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(Table::open_with(source.to_str().unwrap(), &TableOptions::new())).unwrap()
}

fn f64s(batches: &[RecordBatch], column: usize) -> Vec<f64> {
    batches.iter().flat_map(|b| b.column(column).as_primitive::<Float64Type>().values().to_vec()).collect()
}

fn collect(scan: &npy_store::table::TableScan) -> Vec<RecordBatch> {
    scan.batches().unwrap().map(|b| b.unwrap()).collect()
}

#[test]
fn parts_of_records_across_files_are_the_values_written() {
    let dir = tempfile::tempdir().unwrap();
    for k in 0..3 {
        std::fs::write(dir.path().join(format!("run{k}.npy")), records(k * N)).unwrap();
    }
    let table = open(dir.path());
    assert_eq!(table.rows(), 3 * N);
    let mut scan = table.scan();
    scan.columns(&["samples[10]", "receiver.x", "samples[-1]", "samples[2:5]"]).unwrap().rows(N - 5..2 * N + 5);
    let schema = scan.schema().unwrap();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["samples[10]", "receiver.x", "samples[15]", "samples[2:5]"]);
    let batches = collect(&scan);
    let rows: Vec<usize> = (N - 5..2 * N + 5).collect();
    let tenth: Vec<f32> =
        batches.iter().flat_map(|b| b.column(0).as_primitive::<Float32Type>().values().to_vec()).collect();
    assert_eq!(tenth, rows.iter().map(|&i| i as f32 + 1.0).collect::<Vec<_>>());
    assert_eq!(f64s(&batches, 1), rows.iter().map(|&i| 2.0 * i as f64).collect::<Vec<_>>());
    let last: Vec<f32> =
        batches.iter().flat_map(|b| b.column(2).as_primitive::<Float32Type>().values().to_vec()).collect();
    assert_eq!(last, rows.iter().map(|&i| i as f32 + 1.5).collect::<Vec<_>>());
    let runs: Vec<f32> = (batches.iter())
        .flat_map(|b| b.column(3).as_fixed_size_list().values().as_primitive::<Float32Type>().values().to_vec())
        .collect();
    let want: Vec<f32> = rows.iter().flat_map(|&i| (2..5).map(move |k| i as f32 + k as f32 / 10.0)).collect();
    assert_eq!(runs, want);
}

#[test]
fn a_filter_on_a_part_keeps_the_rows_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.npy");
    std::fs::write(&path, records(0)).unwrap();
    let table = open(&path);
    let mut scan = table.scan();
    let judged = vec![table.part("samples[3]").unwrap()];
    // Rows whose samples[3] (i + 0.3) has an integer part divisible by 7.
    scan.columns(&["t0"]).unwrap().filter(Filter::new(judged, |batch| {
        assert_eq!(batch.schema().field(0).name(), "samples[3]");
        let values = batch.column(0).as_primitive::<Float32Type>();
        Ok(Kept::of(&values.iter().map(|v| v.map(|v| (v as usize).is_multiple_of(7))).collect::<BooleanArray>()))
    }));
    let kept = f64s(&collect(&scan), 0);
    assert_eq!(kept, (0..N).filter(|i| i % 7 == 0).map(|i| i as f64).collect::<Vec<_>>());
}

/// An archive of a plain member `gain` (i as i64), a 2-D member `trace` (rows of 4
/// values `4i..4i+4`) and a record member `meta` (`t0 = i`): stored or deflated.
fn archive(path: &FsPath, compression: Compression) {
    let mut w = Writer::new(std::fs::File::create(path).unwrap());
    w.compression(compression);
    w.add("gain", &(0..N as i64).collect::<Vec<_>>()).unwrap();
    let trace = Array::from_shape_vec(vec![N, 4], (0..4 * N).map(|v| v as f64).collect()).unwrap();
    w.add("trace", &trace).unwrap();
    let (_, mut meta) = Header::new("[('t0', '<f8')]".parse().unwrap(), vec![N]).encode(None).unwrap();
    meta.extend((0..N).flat_map(|i| (i as f64).to_le_bytes()));
    w.add_raw("meta.npy", &meta).unwrap();
    w.finish().unwrap();
}

#[test]
fn archives_give_parts_and_filter_on_plain_and_record_members() {
    for compression in [Compression::Stored, Compression::deflated()] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npz");
        archive(&path, compression);
        let table = open(&path);
        assert_eq!(table.rows(), N);

        // In the scan: a filter on a plain member; trace[2] decoded alone.
        let mut scan = table.scan();
        let gain = vec![table.part("gain").unwrap()];
        scan.columns(&["trace[2]", "meta"]).unwrap().rows(10..N - 3);
        scan.filter(Filter::new(gain, |batch| {
            let values = batch.column_by_name("gain").expect("named by the table").as_primitive::<Int64Type>();
            Ok(Kept::of(&values.iter().map(|v| v.map(|v| v % 5 == 0)).collect::<BooleanArray>()))
        }));
        let batches = collect(&scan);
        let want: Vec<usize> = (10..N - 3).filter(|i| i % 5 == 0).collect();
        assert_eq!(f64s(&batches, 0), want.iter().map(|&i| (4 * i + 2) as f64).collect::<Vec<_>>());
        let t0: Vec<f64> = (batches.iter())
            .flat_map(|b| b.column(1).as_struct().column(0).as_primitive::<Float64Type>().values().to_vec())
            .collect();
        assert_eq!(t0, want.iter().map(|&i| i as f64).collect::<Vec<_>>());

        // After decoding: a filter on the record member.
        let mut scan = table.scan();
        let meta = vec![table.part("meta").unwrap()];
        scan.columns(&["gain"]).unwrap().filter(Filter::new(meta, |batch| {
            let t0 = batch.column(0).as_struct().column(0).as_primitive::<Float64Type>().clone();
            Ok(Kept::of(&t0.iter().map(|v| v.map(|v| v >= 990.0)).collect::<BooleanArray>()))
        }));
        let batches = collect(&scan);
        let gains: Vec<i64> =
            batches.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect();
        assert_eq!(gains, (990..N as i64).collect::<Vec<_>>());
        assert!(batches.iter().all(|b| b.num_columns() == 1));
    }
}

#[test]
fn errors_name_the_file_and_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.npy");
    std::fs::write(&path, records(0)).unwrap();
    let table = open(&path);
    let unknown = table.part("nope").unwrap_err().to_string();
    assert!(unknown.contains("no column \"nope\"") && unknown.contains("t.npy"), "{unknown}");
    assert!(!table.has_column_for("nope") && table.has_column_for("samples[99]"));
    let past = table.part("samples[16]").unwrap_err().to_string();
    assert!(past.contains("has 16 items, so no item [16]"), "{past}");

    // Both kinds in one directory.
    std::fs::write(dir.path().join("b.npz"), b"").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mixed = runtime.block_on(Table::open(dir.path().to_str().unwrap())).unwrap_err().to_string();
    assert!(mixed.contains("a table is one kind"), "{mixed}");

    // A file rewritten under a scan fails it, naming the file: at its first read, which is
    // made on the version the table opened.
    let mut scan = table.scan();
    scan.batch_rows(10);
    let mut batches = scan.batches().unwrap();
    std::fs::write(&path, records(1)).unwrap();
    let failed = batches.find_map(Result::err).expect("the change is seen").to_string();
    assert!(failed.contains("t.npy") && failed.contains("changed since it was opened"), "{failed}");
    assert!(batches.next().is_none(), "the stream ends at its error");
}

/// A table of objects at URLs reads each `.npy` on the ETag its header's read found: one
/// replaced after the table opened fails the scan, naming it, instead of giving the new
/// bytes under the old header (here the same size and shape, other values).
#[test]
fn an_object_replaced_after_the_table_opened_fails_its_scan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.npy");
    std::fs::write(&path, records(0)).unwrap();
    let url = format!("file://{}", path.display());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let table = runtime.block_on(Table::open(&url)).unwrap();
    assert_eq!(f64s(&collect(&table.scan()), 0)[..3], [0.0, 1.0, 2.0]);
    std::fs::write(dir.path().join("new.npy"), records(N)).unwrap();
    std::fs::rename(dir.path().join("new.npy"), &path).unwrap();
    let failed = table.scan().batches().unwrap().find_map(Result::err).expect("the change is seen").to_string();
    assert!(failed.contains("t.npy") && failed.contains("changed since it was opened"), "{failed}");
}
