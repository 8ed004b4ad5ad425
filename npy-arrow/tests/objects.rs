//! Object arrays of text through Arrow IPC and Parquet (feature `formats`): NumPy 2's
//! `StringDType` files (tests/data/object/stringdtype*.npy, made by NumPy 2.4.6 through
//! `cargo xtask golden`) and plain object arrays of str become a Utf8 column, missing
//! values null; other object arrays keep a clear error.
#![cfg(feature = "formats")]

use std::path::{Path, PathBuf};

use arrow_array::{Array, FixedSizeListArray, RecordBatch, StringArray};
use arrow_schema::DataType;
use npy_arrow::formats::{convert, convert_with, FileBatchReader, FileOptions};
use npy_arrow::ConvertOptions;
use npy_core::ErrorKind;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").join("tests/data/object").join(name)
}

/// The batches of a Parquet file, read by the parquet crate itself.
fn parquet_batches(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap().map(Result::unwrap).collect()
}

/// The text of a Utf8 column, `None` for nulls, over all batches.
fn texts(batches: &[RecordBatch]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for b in batches {
        let col = b.column(0).as_any().downcast_ref::<StringArray>().expect("a Utf8 column");
        out.extend(col.iter().map(|s| s.map(str::to_string)));
    }
    out
}

fn some(v: &[&str]) -> Vec<Option<String>> {
    v.iter().map(|s| Some(s.to_string())).collect()
}

#[test]
fn stringdtype_files_convert_to_a_utf8_column_with_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = FileOptions::new();
    options.convert(ConvertOptions::new().batch_rows(2));
    let cases: [(&str, Vec<Option<String>>); 5] = [
        ("stringdtype.npy", some(&["a", "bc", "", "h\u{e9}llo", "\u{1F600}", &"x".repeat(300)])),
        ("stringdtype_na_none.npy", vec![Some("x1".into()), None, Some(String::new()), None]),
        ("stringdtype_na_nan.npy", vec![Some("x1".into()), None, Some("z".into())]),
        ("stringdtype_na_str.npy", some(&["x1", "NA", "z"])),
        ("stringdtype_0d.npy", some(&["solo"])),
    ];
    for (name, want) in cases {
        let parquet = dir.path().join(name.replace(".npy", ".parquet"));
        let done =
            convert_with(fixture(name), &parquet, &mut |_| {}, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(done.rows, want.len() as u64, "{name}");
        let batches = parquet_batches(&parquet);
        assert_eq!(batches[0].schema().field(0).data_type(), &DataType::Utf8, "{name}");
        assert_eq!(batches[0].schema().field(0).name(), "values", "{name}");
        assert_eq!(texts(&batches), want, "{name}");
        // Arrow IPC too, read back through npy-arrow.
        let arrow = dir.path().join(name.replace(".npy", ".arrow"));
        convert_with(fixture(name), &arrow, &mut |_| {}, &options).unwrap();
        let input = FileBatchReader::from_path(&arrow).unwrap();
        let batches: Vec<RecordBatch> = input.map(Result::unwrap).collect();
        assert_eq!(texts(&batches), want, "{name} (.arrow)");
    }
    let parquet = dir.path().join("empty.parquet");
    let done = convert_with(fixture("stringdtype_empty.npy"), &parquet, &mut |_| {}, &options).unwrap();
    assert_eq!(done.rows, 0);
    assert_eq!(texts(&parquet_batches(&parquet)), Vec::<Option<String>>::new());
}

#[test]
fn n_d_text_arrays_become_rows_of_their_c_order_values() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["stringdtype_2x3_F.npy", "stringdtype_2x2_C.npy"] {
        let arrow = dir.path().join(name.replace(".npy", ".arrow"));
        convert(fixture(name), &arrow, &mut |_| {}).unwrap();
        let batches: Vec<RecordBatch> = FileBatchReader::from_path(&arrow).unwrap().map(Result::unwrap).collect();
        let rows = batches[0].column(0).as_any().downcast_ref::<FixedSizeListArray>().expect("rows").clone();
        let field = batches[0].schema().field(0).clone();
        assert_eq!(field.metadata()["ARROW:extension:name"], "arrow.fixed_shape_tensor", "{name}");
        let row = |i: usize| -> Vec<String> {
            let v = rows.value(i);
            let s = v.as_any().downcast_ref::<StringArray>().unwrap();
            s.iter().map(|x| x.unwrap().to_string()).collect()
        };
        if name.contains("2x3") {
            assert_eq!(
                (row(0), row(1)),
                (vec!["r0c0", "r0c1", "r0c2"].into_iter().map(String::from).collect(), {
                    vec!["r1c0", "", "r1c2"].into_iter().map(String::from).collect::<Vec<_>>()
                })
            );
        } else {
            assert_eq!(row(1), ["c", "d"]);
        }
    }
}

#[test]
fn plain_object_arrays_of_str_convert_and_others_keep_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let parquet = dir.path().join("s.parquet");
    convert(fixture("str_none.npy"), &parquet, &mut |_| {}).unwrap();
    assert_eq!(texts(&parquet_batches(&parquet)), [Some("x1".into()), None, Some("yz".into()), None, Some("".into())]);
    for (name, what) in [("int.npy", "element 0 (in storage order) is an int 0"), ("2x3_C.npy", "is an int 1")] {
        let out = dir.path().join("bad.parquet");
        let e = convert(fixture(name), &out, &mut |_| {}).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{name}: {e}");
        let text = e.to_string();
        assert!(text.contains(what) && text.contains("only object arrays of str"), "{name}: {text}");
        assert!(text.contains(name), "the error names the file: {text}");
        assert!(!out.exists(), "{name}: nothing written");
    }
    // A member of an archive: the same column.
    let arrow = dir.path().join("labels.arrow");
    let mut options = FileOptions::new();
    options.member("labels");
    convert_with(fixture("archive.npz"), &arrow, &mut |_| {}, &options).unwrap();
    let batches: Vec<RecordBatch> = FileBatchReader::from_path(&arrow).unwrap().map(Result::unwrap).collect();
    assert_eq!(texts(&batches), [Some("a1".into()), None, Some("b2".into())]);
}

/// `np.array([np.arange(3), np.arange(5), np.arange(0)], dtype=object)` (the fixture
/// `object/ragged.npy`): a List column of Int64, in Parquet and Arrow IPC alike, as
/// `[a.tolist() for a in arr]` gives `[[0, 1, 2], [0, 1, 2, 3, 4], []]`.
#[test]
fn ragged_arrays_become_list_columns() {
    use arrow_array::{Int64Array, ListArray};
    let dir = tempfile::tempdir().unwrap();
    let parquet = dir.path().join("ragged.parquet");
    let arrow = dir.path().join("ragged.arrow");
    convert(fixture("ragged.npy"), &parquet, &mut |_| {}).unwrap();
    convert(fixture("ragged.npy"), &arrow, &mut |_| {}).unwrap();
    let from_arrow: Vec<RecordBatch> = FileBatchReader::from_path(&arrow).unwrap().map(Result::unwrap).collect();
    for batches in [parquet_batches(&parquet), from_arrow] {
        let field = batches[0].schema().field(0).clone();
        assert_eq!(field.name(), "values");
        let DataType::List(item) = field.data_type() else { panic!("{field:?}") };
        assert_eq!(item.data_type(), &DataType::Int64);
        let mut rows = Vec::new();
        for batch in &batches {
            let list = batch.column(0).as_any().downcast_ref::<ListArray>().unwrap();
            for i in 0..list.len() {
                let row = list.value(i);
                rows.push(row.as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec());
            }
        }
        assert_eq!(rows, [vec![0, 1, 2], vec![0, 1, 2, 3, 4], vec![]]);
    }
}

/// Ragged arrays whose rows have no one Arrow type keep a clear error naming the row.
#[test]
fn ragged_arrays_of_mixed_rows_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, what) in [
        // [np.arange(3.0), np.array(['py2'])]
        ("ragged_proto2.npy", "element 1 is an ndarray of dtype <U3 and element 0 of <f8"),
        // [np.arange(3.0), {7, 8}, bytearray(b"z")] (the set pickled in the order 8, 7)
        ("ragged_proto5.npy", "element 1 is a set {8, 7}"),
        // [np.array([1.5, -2.0], dtype='>f4'), np.array(['ab', 'c']), ...]
        ("ragged_kinds.npy", "element 1 is an ndarray of dtype <U2 and element 0 of <f4"),
        // [{'w': ..}] as a 0-d array: not ragged, and no text either
        ("dict_of_arrays.npy", "is a dict"),
    ] {
        let out = dir.path().join("bad.parquet");
        let e = convert(fixture(name), &out, &mut |_| {}).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{name}: {e}");
        assert!(e.to_string().contains(what), "{name}: {e}");
        assert!(!out.exists(), "{name}: nothing written");
    }
}
