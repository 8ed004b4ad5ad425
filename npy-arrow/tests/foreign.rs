//! The Arrow types other tools write (large and view strings, dictionaries, variable-length
//! lists, Date64, times, decimals), in compressed Arrow IPC and Parquet files, converted to
//! `.npy` and `.npz` value by value, nulls included (feature `formats`).
#![cfg(feature = "formats")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int16Builder, LargeListBuilder, ListBuilder, StringDictionaryBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType, Float32Type,
    Float64Type, Int16Type, Int32Type, Int8Type, TimestampMillisecondType,
};
use arrow_array::{
    Array, ArrayRef, BinaryViewArray, Date64Array, Decimal128Array, Decimal256Array, DictionaryArray, Float64Array,
    Int32Array, LargeBinaryArray, LargeStringArray, ListArray, ListViewArray, RecordBatch, StringViewArray,
    StructArray, Time32MillisecondArray, Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray,
};
use arrow_buffer::{i256, OffsetBuffer, ScalarBuffer};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_ipc::CompressionType;
use arrow_schema::{DataType, Field, Schema};
use npy_arrow::formats::{convert, convert_with, FileBatchReader, FileOptions};
use npy_arrow::ConvertOptions;
use npy_core::prelude::*;
use npy_core::ErrorKind;
use parquet::arrow::arrow_writer::{ArrowWriter, ArrowWriterOptions};
use parquet::basic::{BrotliLevel, Compression};
use parquet::file::properties::WriterProperties;

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).unwrap()
}

fn ipc(path: &Path, batches: &[RecordBatch], compression: Option<CompressionType>) {
    let options = IpcWriteOptions::default().try_with_compression(compression).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = FileWriter::try_new_with_options(file, &batches[0].schema(), options).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
}

fn parquet(path: &Path, batches: &[RecordBatch], compression: Compression, arrow_schema: bool) {
    let props = WriterProperties::builder().set_compression(compression).build();
    let options = ArrowWriterOptions::new().with_properties(props).with_skip_arrow_metadata(!arrow_schema);
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new_with_options(file, batches[0].schema(), options).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

/// The `.npy` file's descr, and its rows as one batch.
fn read_back(npy: &Path) -> (String, RecordBatch) {
    let descr = npy_core::NpyReader::from_path(npy).unwrap().header().dtype.descr();
    let batches: Vec<RecordBatch> = FileBatchReader::from_path(npy).unwrap().map(Result::unwrap).collect();
    assert_eq!(batches.len(), 1, "{}", npy.display());
    (descr, batches.into_iter().next().unwrap())
}

fn floats(a: &dyn Array) -> Vec<f64> {
    a.as_primitive::<Float64Type>().values().to_vec()
}

fn texts(a: &dyn Array) -> Vec<&str> {
    a.as_string::<i32>().iter().map(Option::unwrap).collect()
}

/// One batch of every foreign type that has a NumPy type with a null, nulls included.
fn foreign_batch() -> RecordBatch {
    let mut dict = StringDictionaryBuilder::<Int8Type>::new();
    dict.extend(["lo", "hi", "lo", "lo"].map(Some));
    let mut list = ListBuilder::new(arrow_array::builder::Float32Builder::new());
    for row in [[Some(1.0), Some(2.0)], [Some(3.0), None], [Some(5.0), Some(6.0)], [Some(7.0), Some(8.0)]] {
        list.append_value(row);
    }
    let mut nested = LargeListBuilder::new(ListBuilder::new(Int16Builder::new()));
    for r in 0..4i16 {
        for k in 0..2i16 {
            nested.values().append_value([Some(r * 10 + k * 3), Some(r * 10 + k * 3 + 1), Some(r * 10 + k * 3 + 2)]);
        }
        nested.append(true);
    }
    let record = StructArray::from(vec![
        (
            Arc::new(Field::new("name", DataType::LargeUtf8, true)),
            Arc::new(LargeStringArray::from(vec!["p", "qq", "r", "s"])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("at", DataType::Time32(arrow_schema::TimeUnit::Millisecond), true)),
            Arc::new(Time32MillisecondArray::from(vec![Some(1), None, Some(3), Some(4)])) as ArrayRef,
        ),
    ]);
    let float_keys = Int32Array::from(vec![Some(1), None, Some(0), Some(1)]);
    let float_dict =
        DictionaryArray::<Int32Type>::try_new(float_keys, Arc::new(Float64Array::from(vec![0.5, 2.5]))).unwrap();
    batch(vec![
        ("s", Arc::new(LargeStringArray::from(vec!["a", "bé", "", "dddd"]))),
        ("v", Arc::new(StringViewArray::from(vec!["x", "yy", "a string longer than twelve", "w"]))),
        ("lb", Arc::new(LargeBinaryArray::from(vec![&b"\x01a"[..], b"bb", b"", b"d"]))),
        ("bv", Arc::new(BinaryViewArray::from(vec![&b"e"[..], b"ff", b"g", b"hhh"]))),
        ("cat", Arc::new(dict.finish())),
        ("fcat", Arc::new(float_dict)),
        ("d64", Arc::new(Date64Array::from(vec![Some(0), Some(86_400_000), None, Some(-1)]))),
        ("t32", Arc::new(Time32SecondArray::from(vec![Some(0), Some(86_399), None, Some(5)]))),
        ("t64u", Arc::new(Time64MicrosecondArray::from(vec![Some(1), Some(2), Some(3), None]))),
        ("t64n", Arc::new(Time64NanosecondArray::from(vec![None, Some(7), Some(8), Some(9)]))),
        (
            "dec",
            Arc::new(
                Decimal128Array::from(vec![Some(125), None, Some(-310), Some(1_234_567_890_123_456_789)])
                    .with_precision_and_scale(20, 2)
                    .unwrap(),
            ),
        ),
        (
            "dec256",
            Arc::new(
                Decimal256Array::from(vec![
                    Some(i256::from_i128(5)),
                    Some(i256::MAX),
                    None,
                    Some(i256::from_i128(-12)),
                ])
                .with_precision_and_scale(76, 1)
                .unwrap(),
            ),
        ),
        ("l", Arc::new(list.finish())),
        ("ll", Arc::new(nested.finish())),
        ("rec", Arc::new(record)),
    ])
}

fn check_foreign(npy: &Path, what: &str) {
    let (descr, b) = read_back(npy);
    assert_eq!(
        descr,
        "[('s', '<U4'), ('v', '<U27'), ('lb', '|S2'), ('bv', '|S3'), ('cat', '<U2'), ('fcat', '<f8'), \
         ('d64', '<M8[ms]'), ('t32', '<m8[s]'), ('t64u', '<m8[us]'), ('t64n', '<m8[ns]'), ('dec', '<f8'), \
         ('dec256', '<f8'), ('l', '<f4', (2,)), ('ll', '<i2', (2, 3)), ('rec', [('name', '<U2'), ('at', '<m8[ms]')])]",
        "{what}"
    );
    let col = |name: &str| b.column_by_name(name).unwrap_or_else(|| panic!("{what}: {name}")).clone();
    assert_eq!(texts(&col("s")), ["a", "bé", "", "dddd"], "{what}");
    assert_eq!(texts(&col("v")), ["x", "yy", "a string longer than twelve", "w"], "{what}");
    let bytes = |a: ArrayRef| a.as_binary::<i32>().iter().map(|v| v.unwrap().to_vec()).collect::<Vec<_>>();
    // `S` drops trailing NULs only: a leading one stays.
    assert_eq!(bytes(col("lb")), [b"\x01a".to_vec(), b"bb".to_vec(), vec![], b"d".to_vec()], "{what}");
    assert_eq!(bytes(col("bv")), [b"e".to_vec(), b"ff".to_vec(), b"g".to_vec(), b"hhh".to_vec()], "{what}");
    assert_eq!(texts(&col("cat")), ["lo", "hi", "lo", "lo"], "{what}");
    let f = floats(&col("fcat"));
    assert!(f[0] == 2.5 && f[1].is_nan() && f[2] == 0.5 && f[3] == 2.5, "{what}: {f:?}");
    let t = col("d64");
    let t = t.as_primitive::<TimestampMillisecondType>();
    assert_eq!((t.value(0), t.value(1), t.is_null(2), t.value(3)), (0, 86_400_000, true, -1), "{what}");
    let t = col("t32");
    let t = t.as_primitive::<DurationSecondType>();
    assert_eq!((t.value(0), t.value(1), t.is_null(2), t.value(3)), (0, 86_399, true, 5), "{what}");
    let t = col("t64u");
    let t = t.as_primitive::<DurationMicrosecondType>();
    assert_eq!((t.value(0), t.value(2), t.is_null(3)), (1, 3, true), "{what}");
    let t = col("t64n");
    let t = t.as_primitive::<DurationNanosecondType>();
    assert_eq!((t.is_null(0), t.value(1), t.value(3)), (true, 7, 9), "{what}");
    let d = floats(&col("dec"));
    assert!(d[0] == 1.25 && d[1].is_nan() && d[2] == -3.1 && d[3] == 12_345_678_901_234_567.89, "{what}: {d:?}");
    let d = floats(&col("dec256"));
    let max: f64 = format!("{}e-1", i256::MAX).parse().unwrap();
    assert!(d[0] == 0.5 && d[1] == max && d[2].is_nan() && d[3] == -1.2, "{what}: {d:?}");
    let l = col("l");
    let l = l.as_fixed_size_list();
    let v = l.values().as_primitive::<Float32Type>().values().to_vec();
    assert!(v[..3] == [1.0, 2.0, 3.0] && v[3].is_nan() && v[4..] == [5.0, 6.0, 7.0, 8.0], "{what}: {v:?}");
    let ll = col("ll");
    let inner = ll.as_fixed_size_list().values();
    let items = inner.as_fixed_size_list().values().as_primitive::<Int16Type>().values().to_vec();
    let want: Vec<i16> = (0..4).flat_map(|r| (0..6).map(move |k| r * 10 + k)).collect();
    assert_eq!(items, want, "{what}");
    let rec = col("rec");
    let rec = rec.as_struct();
    assert_eq!(texts(rec.column(0)), ["p", "qq", "r", "s"], "{what}");
    let at = rec.column(1).as_primitive::<DurationMillisecondType>();
    assert_eq!((at.value(0), at.is_null(1), at.value(3)), (1, true, 4), "{what}");
}

#[test]
fn foreign_types_in_lz4_and_zstd_ipc_and_brotli_parquet_convert_value_by_value() {
    let dir = tempfile::tempdir().unwrap();
    let b = foreign_batch();
    let inputs: Vec<PathBuf> =
        ["lz4.arrow", "zstd.feather", "brotli.parquet"].iter().map(|n| dir.path().join(n)).collect();
    ipc(&inputs[0], std::slice::from_ref(&b), Some(CompressionType::LZ4_FRAME));
    ipc(&inputs[1], std::slice::from_ref(&b), Some(CompressionType::ZSTD));
    parquet(&inputs[2], std::slice::from_ref(&b), Compression::BROTLI(BrotliLevel::default()), true);
    for input in &inputs {
        let out = dir.path().join("out.npy");
        let what = input.display().to_string();
        convert(input, &out, &mut |_| {}).unwrap_or_else(|e| panic!("{what}: {e}"));
        check_foreign(&out, &what);
        // One member per column, through the archive writer.
        let npz = dir.path().join("out.npz");
        convert(input, &npz, &mut |_| {}).unwrap_or_else(|e| panic!("{what} to npz: {e}"));
        let mut archive = npy_core::npz::Reader::from_path(&npz).unwrap();
        // A subarray column is an N-d member.
        let ll = archive.read::<DynArray>("ll").unwrap();
        assert_eq!((ll.dtype().descr(), ll.shape()), ("'<i2'".to_string(), &[4, 2, 3][..]), "{what}");
        assert_eq!(archive.read::<DynArray>("v").unwrap().dtype().descr(), "'<U27'", "{what}");
        assert_eq!(archive.read::<DynArray>("d64").unwrap().dtype().descr(), "'<M8[ms]'", "{what}");
    }
}

#[test]
fn text_widths_and_list_lengths_hold_across_batches() {
    let dir = tempfile::tempdir().unwrap();
    let list = |rows: Vec<Vec<i32>>| {
        let mut b = ListBuilder::new(arrow_array::builder::Int32Builder::new());
        for r in rows {
            b.append_value(r.into_iter().map(Some));
        }
        Arc::new(b.finish()) as ArrayRef
    };
    let batches = [
        batch(vec![("s", Arc::new(LargeStringArray::from(vec!["a"]))), ("l", list(vec![vec![1, 2, 3]]))]),
        batch(vec![
            ("s", Arc::new(LargeStringArray::from(vec!["abcdef", "b"]))),
            ("l", list(vec![vec![4, 5, 6], vec![7, 8, 9]])),
        ]),
    ];
    let input = dir.path().join("in.arrow");
    ipc(&input, &batches, Some(CompressionType::ZSTD));
    let out = dir.path().join("out.npy");
    convert(&input, &out, &mut |_| {}).unwrap();
    let (descr, b) = read_back(&out);
    assert_eq!(descr, "[('s', '<U6'), ('l', '<i4', (3,))]");
    assert_eq!(texts(b.column(0)), ["a", "abcdef", "b"]);
    let l = b.column(1).as_fixed_size_list().values().as_primitive::<Int32Type>().values().to_vec();
    assert_eq!(l, [1, 2, 3, 4, 5, 6, 7, 8, 9]);

    // A ragged row in a later batch is named by its row in the whole input.
    let ragged =
        [batch(vec![("l", list(vec![vec![1, 2], vec![3, 4]]))]), batch(vec![("l", list(vec![vec![5, 6], vec![7]]))])];
    ipc(&input, &ragged, None);
    let out = dir.path().join("ragged.npy");
    let e = convert(&input, &out, &mut |_| {}).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 3, .. }), "{e}");
    assert!(text.contains("column 'l', row 3: a list of 1 items where the rows before have 2"), "{e}");
    assert!(text.contains("ragged.npy"), "{e}");
    assert!(!out.exists());
}

#[test]
fn parquet_lists_without_an_arrow_schema_become_subarrays_and_ragged_or_null_rows_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    // As DuckDB writes a FLOAT[8] column: a Parquet LIST, read back as a List.
    let emb: Vec<Vec<Option<f32>>> = (0..5).map(|r| (0..8).map(|k| Some((r * 8 + k) as f32)).collect()).collect();
    let mut b = ListBuilder::new(arrow_array::builder::Float32Builder::new());
    for row in &emb {
        b.append_value(row.iter().copied());
    }
    let input = dir.path().join("duck.parquet");
    let plain =
        batch(vec![("i", Arc::new(Int32Array::from((0..5).collect::<Vec<_>>()))), ("emb", Arc::new(b.finish()))]);
    parquet(&input, &[plain], Compression::SNAPPY, false);
    let out = dir.path().join("out.npy");
    // Batches of 2 rows: the length of the first holds for the next.
    let mut o = FileOptions::new();
    o.convert(ConvertOptions::new().batch_rows(2));
    convert_with(&input, &out, &mut |_| {}, &o).unwrap();
    let (descr, back) = read_back(&out);
    assert_eq!(descr, "[('i', '<i4'), ('emb', '<f4', (8,))]");
    let values = back.column(1).as_fixed_size_list().values().as_primitive::<Float32Type>().values().to_vec();
    assert_eq!(values, (0..40).map(|v| v as f32).collect::<Vec<_>>());

    let offsets = |o: Vec<i32>| OffsetBuffer::new(ScalarBuffer::from(o));
    let item = Arc::new(Field::new("element", DataType::Int32, true));
    let values = Arc::new(Int32Array::from((0..9).collect::<Vec<_>>()));
    let ragged = ListArray::new(item.clone(), offsets(vec![0, 3, 6, 8]), values.clone(), None);
    let nulls = arrow_buffer::NullBuffer::from(vec![true, true, false]);
    let null_row = ListArray::new(item, offsets(vec![0, 3, 6, 6]), values, Some(nulls));
    for (list, want) in [
        (ragged, "row 2: a list of 2 items where the rows before have 3"),
        (null_row, "row 2: a null list, which a NumPy subarray cannot hold"),
    ] {
        parquet(&input, &[batch(vec![("l", Arc::new(list))])], Compression::UNCOMPRESSED, false);
        // The `.npy` names the column, the archive its member (whose one column is `values`).
        for (target, column) in [("bad.npy", "column 'l', "), ("bad.npz", "member 'l.npy'")] {
            let e = convert(&input, dir.path().join(target), &mut |_| {}).unwrap_err();
            let text = e.to_string();
            assert!(text.contains(want) && text.contains(column), "{target}: {e}");
            assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 2, .. }), "{e}");
        }
    }
}

#[test]
fn nulls_follow_the_numpy_type_they_become() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.arrow");
    let out = dir.path().join("out.npy");
    // A null category of text: `U` has no null.
    let mut dict = StringDictionaryBuilder::<Int8Type>::new();
    dict.append_value("a");
    dict.append_null();
    // A null large string, a null item of a list of integers.
    let mut ints = ListBuilder::new(arrow_array::builder::Int32Builder::new());
    ints.append_value([Some(1), None]);
    for (name, column, want) in [
        ("cat", Arc::new(dict.finish()) as ArrayRef, "null in a text column"),
        ("s", Arc::new(LargeStringArray::from(vec![Some("a"), None])), "null in a text column"),
        ("l", Arc::new(ints.finish()), "null in a column of <i4"),
    ] {
        ipc(&input, &[batch(vec![(name, column)])], Some(CompressionType::LZ4_FRAME));
        let e = convert(&input, &out, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains(want), "{name}: {e}");
    }
}

#[test]
fn the_writers_take_list_views_and_set_widths_before_the_lengths_are_known() {
    let item = Arc::new(Field::new("item", DataType::Int32, true));
    // Rows out of order over the values, as views may lie.
    let view = ListViewArray::new(
        item,
        ScalarBuffer::from(vec![4, 0, 2]),
        ScalarBuffer::from(vec![2, 2, 2]),
        Arc::new(Int32Array::from(vec![10, 11, 20, 21, 30, 31])),
        None,
    );
    let text = StringViewArray::from(vec!["a", "b", "c"]);
    let b = batch(vec![("v", Arc::new(view)), ("t", Arc::new(text))]);
    let mut w = npy_arrow::BatchWriter::new(std::io::Cursor::new(Vec::new()), b.schema()).unwrap();
    // The header waits for the first batch, which gives the lists' length.
    w.text_widths(&[1, 4]).unwrap();
    w.write(&RecordBatch::new_empty(b.schema())).unwrap();
    w.write(&b).unwrap();
    let file = w.finish().unwrap().into_inner();
    let array = npy_core::DynArray::read_npy_from(&file[..]).unwrap();
    assert_eq!(array.dtype().descr(), "[('v', '<i4', (2,)), ('t', '<U4')]");
    let ints: Vec<i32> = array
        .data()
        .chunks(24)
        .flat_map(|row| row[..8].chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())))
        .collect();
    assert_eq!(ints, [30, 31, 10, 11, 20, 21]);
    assert_eq!(npy_arrow::write::text_widths(&b), [1, 1]);
    assert!(npy_arrow::write::needs_text_widths(&b.schema()));

    // No rows at all: lists of length 0.
    let w = npy_arrow::BatchWriter::new(std::io::Cursor::new(Vec::new()), b.schema()).unwrap();
    let file = w.finish().unwrap().into_inner();
    let array = npy_core::DynArray::read_npy_from(&file[..]).unwrap();
    assert_eq!((array.dtype().descr(), array.shape()), ("[('v', '<i4', (0,)), ('t', '<U1')]".to_string(), &[0][..]));
}

#[test]
fn a_stale_numpy_dtype_on_a_field_is_ignored() {
    let meta = |d: &str| std::collections::HashMap::from([("numpy.dtype".to_string(), d.to_string())]);
    // A complex column cast to one float by a tool that kept the field's metadata.
    let stale = Schema::new(vec![Field::new("z", DataType::Float64, true).with_metadata(meta("<c16"))]);
    assert_eq!(npy_arrow::natural_dtype(&stale, &[]).unwrap().descr(), "[('z', '<f8')]");
    let pair = DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float64, false)), 2);
    let fits = Schema::new(vec![Field::new("z", pair, true).with_metadata(meta("<c16"))]);
    assert_eq!(npy_arrow::natural_dtype(&fits, &[]).unwrap().descr(), "[('z', '<c16')]");
    let days = Schema::new(vec![Field::new("d", DataType::Int64, true).with_metadata(meta("<M8[D]"))]);
    assert_eq!(npy_arrow::natural_dtype(&days, &[]).unwrap().descr(), "[('d', '<M8[D]')]");
    let text = Schema::new(vec![Field::new("d", DataType::LargeUtf8, true).with_metadata(meta("<M8[D]"))]);
    assert_eq!(npy_arrow::natural_dtype(&text, &[3]).unwrap().descr(), "[('d', '<U3')]");
    // A tensor extension whose shape is not the list's length: the list as it is.
    let ext = std::collections::HashMap::from([
        ("ARROW:extension:name".to_string(), "arrow.fixed_shape_tensor".to_string()),
        ("ARROW:extension:metadata".to_string(), r#"{"shape":[2,2]}"#.to_string()),
    ]);
    let six = DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), 6);
    let tensor = Schema::new(vec![Field::new("values", six, false).with_metadata(ext)]);
    let (header, _) = npy_arrow::header_of(&tensor, 3, &[]).unwrap();
    assert_eq!((header.dtype.descr(), header.shape), ("('<f4', (6,))".to_string(), vec![3]));
    let list = Schema::new(vec![Field::new_list("l", Field::new("item", DataType::Int8, true), true)]);
    let e = npy_arrow::natural_dtype(&list, &[]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{e}");
}

#[test]
fn files_other_tools_write_convert_to_what_numpy_holds() {
    // Made by tests/data/foreign/make.py with pyarrow, pandas, polars and DuckDB: each input
    // beside the `.npy` NumPy saved of the same values.
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/foreign");
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("pyarrow_default.arrow", "pyarrow_default.npy"),
        ("pyarrow_zstd.arrow", "pyarrow_zstd.npy"),
        ("pyarrow_brotli.parquet", "pyarrow_brotli.npy"),
        ("pandas_default.parquet", "pandas_default.npy"),
        ("pandas_default.arrow", "pandas_default_arrow.npy"),
        ("polars_default.parquet", "polars_default.npy"),
        ("polars_default.arrow", "polars_default_arrow.npy"),
        ("duckdb_default.parquet", "duckdb_default.npy"),
    ];
    for (input, want) in cases {
        let out = dir.path().join("out.npy");
        convert(data.join(input), &out, &mut |_| {}).unwrap_or_else(|e| panic!("{input}: {e}"));
        let (got, want) = (std::fs::read(&out).unwrap(), std::fs::read(data.join(want)).unwrap());
        if got != want {
            let got = npy_core::DynArray::read_npy_from(&got[..]).unwrap();
            let want = npy_core::DynArray::read_npy_from(&want[..]).unwrap();
            assert_eq!(got.header(), want.header(), "{input}");
            panic!("{input}: the header is NumPy's, the data differs");
        }
    }
}
