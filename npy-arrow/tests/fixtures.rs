//! NumPy is the truth: the fixtures in tests/data (written by NumPy, `cargo xtask golden`)
//! convert to Arrow batches whose values are those NumPy recorded in the manifest, and back
//! to the same file, byte for byte; the shared corpus too, when present.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    DurationNanosecondType, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, Schema};
use npy_arrow::schema::{DTYPE_KEY, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, TENSOR_EXTENSION};
use npy_arrow::{BatchReader, BatchWriter, ConvertOptions};
use npy_core::mmap::NpyMap;
use npy_core::prelude::*;
use npy_core::{DynArray, ErrorKind, NpyReader, ReadOptions};
use serde_json::Value;

#[path = "../../tests/support/corpus.rs"]
mod corpus;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root")
}

fn data_dir() -> PathBuf {
    root().join("tests/data")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).expect("tests/data/manifest.json");
    let Value::Array(entries) = serde_json::from_str(&text).expect("JSON") else { panic!("a list") };
    entries
}

fn entry(file: &str) -> Value {
    manifest().into_iter().find(|e| e["file"] == file).unwrap_or_else(|| panic!("{file} not in the manifest"))
}

fn read_opts() -> ReadOptions {
    let mut o = ReadOptions::new();
    o.max_header_size(1 << 20);
    o
}

/// All batches of a file (`rows` per batch), through a plain stream.
fn batches(bytes: &[u8], options: &ConvertOptions) -> npy_core::Result<(Arc<Schema>, Vec<RecordBatch>)> {
    let reader = BatchReader::from_npy_reader_with(NpyReader::from_reader_with(bytes, &read_opts())?, options)?;
    let schema = reader.schema();
    let mut reader = reader;
    let mut out = Vec::new();
    while let Some(b) = reader.next_batch()? {
        out.push(b);
    }
    Ok((schema, out))
}

fn write(schema: Arc<Schema>, batches: &[RecordBatch]) -> npy_core::Result<Vec<u8>> {
    let mut w = BatchWriter::new(Cursor::new(Vec::new()), schema)?;
    for b in batches {
        w.write(b)?;
    }
    Ok(w.finish()?.into_inner())
}

/// Converts a file to batches of `rows` and back, with the options `datetime64[D]` needs
/// when its days are out of Date32's range (the only error the default options may give).
fn round_trip(name: &str, bytes: &[u8], mut options: ConvertOptions) -> Vec<u8> {
    let (schema, got) = match batches(bytes, &options) {
        Ok(x) => x,
        Err(e) if matches!(e.kind(), ErrorKind::InvalidValue { reason, .. } if reason.contains("Date32")) => {
            batches(bytes, options.days_as_int64(true)).unwrap_or_else(|e| panic!("{name}: {e}"))
        }
        Err(e) => panic!("{name}: {e}"),
    };
    write(schema, &got).unwrap_or_else(|e| panic!("{name}: writing back: {e}"))
}

fn is_object(bytes: &[u8]) -> bool {
    npy_core::NpyReader::from_reader_with(bytes, &read_opts()).is_ok_and(|r| r.header().dtype.has_object())
}

#[test]
fn every_fixture_converts_to_batches_and_back_byte_for_byte() {
    let (mut done, mut lossy) = (0, 0);
    for e in manifest() {
        let file = e["file"].as_str().unwrap();
        if !file.ends_with(".npy") {
            continue;
        }
        let bytes = std::fs::read(data_dir().join(file)).unwrap();
        if is_object(&bytes) {
            let err = BatchReader::from_npy_reader_with(
                NpyReader::from_reader_with(&bytes[..], &read_opts()).unwrap(),
                npy_arrow::ConvertOptions::new().batch_rows(4),
            )
            .unwrap_err();
            assert!(matches!(err.kind(), ErrorKind::UnsupportedDtype { .. }), "{file}: {err}");
            continue;
        }
        for rows in [1, 3, 1 << 16] {
            let mut options = ConvertOptions::new();
            options.batch_rows(rows).residue(true);
            assert!(round_trip(file, &bytes, options) == bytes, "{file} in batches of {rows}: not byte-identical");
        }
        // Without the residue column: the same file when every byte is a column's, else
        // the same values (padding zeroed, `b1` bytes 0 or 1; `U` fixtures hold valid text).
        let mut options = ConvertOptions::new();
        options.days_as_int64(file.contains("M8_D"));
        let back = round_trip(file, &bytes, options.clone());
        let (schema, _) = batches(&bytes, options.clone().residue(true)).unwrap();
        if schema.fields().iter().all(|f| f.name() != npy_arrow::schema::RESIDUE) {
            assert!(back == bytes, "{file}: not byte-identical without residue");
        } else {
            lossy += 1;
            assert_eq!(batches(&back, &options).unwrap().1, batches(&bytes, &options).unwrap().1, "{file}");
            assert_eq!(back.len(), bytes.len(), "{file}");
        }
        done += 1;
    }
    assert!(done >= 90, "only {done} fixtures");
    assert_eq!(lossy, 11, "fixtures with padding, b1 or U values");
}

#[test]
fn dynamic_arrays_and_maps_give_the_same_batches_as_streams() {
    for e in manifest() {
        let file = e["file"].as_str().unwrap();
        let path = data_dir().join(file);
        let bytes = std::fs::read(&path).unwrap();
        if !file.ends_with(".npy") || is_object(&bytes) || file.contains("_D.npy") {
            continue;
        }
        let mut options = ConvertOptions::new();
        options.batch_rows(2);
        let (_, streamed) = batches(&bytes, &options).unwrap();
        let array = DynArray::new(NpyReader::from_reader_with(&bytes[..], &read_opts()).unwrap().header().clone(), {
            let mut r = NpyReader::from_reader_with(&bytes[..], &read_opts()).unwrap();
            let mut raw = Vec::new();
            let n = r.len();
            r.read_raw(n, &mut raw).unwrap();
            raw
        })
        .unwrap();
        let held: Vec<RecordBatch> = BatchReader::from_dyn_with(array, &options)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let columns = |b: &[RecordBatch]| b.iter().map(|b| b.columns().to_vec()).collect::<Vec<_>>();
        assert_eq!(columns(&held), columns(&streamed), "{file}: from a DynArray");
        // SAFETY: the fixtures are not written while the tests run.
        let map = Arc::new(unsafe { NpyMap::from_path_with(&path, &read_opts()) }.unwrap());
        let mapped: Vec<RecordBatch> = BatchReader::from_map_with(map, &options)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(mapped, streamed, "{file}: from a map");
    }
}

/// The one batch of a fixture, with default options.
fn one_batch(file: &str) -> RecordBatch {
    one_batch_with(file, ConvertOptions::new())
}

fn one_batch_with(file: &str, options: ConvertOptions) -> RecordBatch {
    let bytes = std::fs::read(data_dir().join(file)).unwrap();
    let (_, mut b) = batches(&bytes, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(b.len(), 1, "{file}");
    b.remove(0)
}

/// The numbers of a manifest list, nested lists flattened.
fn ints(v: &Value) -> Vec<i128> {
    match v {
        Value::Array(items) => items.iter().flat_map(ints).collect(),
        x => vec![x.as_i64().map_or_else(|| x.as_u64().unwrap() as i128, i128::from)],
    }
}

/// Values of an integer or float column as the manifest writes them (floats as their bits).
fn column_ints(a: &dyn Array) -> Vec<i128> {
    macro_rules! of {
        ($t:ty, $f:expr) => {
            a.as_primitive::<$t>().values().iter().map($f).collect()
        };
    }
    match a.data_type() {
        DataType::Int8 => of!(Int8Type, |&v| i128::from(v)),
        DataType::Int16 => of!(Int16Type, |&v| i128::from(v)),
        DataType::Int32 => of!(Int32Type, |&v| i128::from(v)),
        DataType::Int64 => of!(Int64Type, |&v| i128::from(v)),
        DataType::UInt8 => of!(UInt8Type, |&v| i128::from(v)),
        DataType::UInt16 => of!(UInt16Type, |&v| i128::from(v)),
        DataType::UInt32 => of!(UInt32Type, |&v| i128::from(v)),
        DataType::UInt64 => of!(UInt64Type, |&v| i128::from(v)),
        DataType::Float16 => of!(Float16Type, |v| i128::from(v.to_bits())),
        DataType::Float32 => of!(Float32Type, |v| i128::from(v.to_bits())),
        DataType::Float64 => of!(Float64Type, |v| i128::from(v.to_bits())),
        DataType::Boolean => a.as_boolean().iter().map(|b| i128::from(b.unwrap())).collect(),
        other => panic!("not a number column: {other}"),
    }
}

#[test]
fn numbers_are_numpys_in_both_byte_orders() {
    for t in ["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8"] {
        for order in ["le", "be"] {
            let file = format!("scalar/{order}_{t}.npy");
            let b = one_batch(&file);
            assert_eq!(b.schema().field(0).name(), "values");
            assert_eq!(column_ints(b.column(0).as_ref()), ints(&entry(&file)["elements"]), "{file}");
        }
    }
    for file in ["scalar/i1.npy", "scalar/u1.npy", "scalar/b1.npy", "shape/1d_i2.npy"] {
        assert_eq!(column_ints(one_batch(file).column(0).as_ref()), ints(&entry(file)["elements"]), "{file}");
    }
    // complex: [real, imaginary] lists, the field saying the dtype
    for file in ["scalar/le_c8.npy", "scalar/be_c16.npy"] {
        let b = one_batch(file);
        let f = b.schema().field(0).clone();
        assert_eq!(f.metadata()[DTYPE_KEY], entry(file)["descr"].as_str().unwrap().trim_matches('\''));
        let list = b.column(0).as_fixed_size_list();
        assert_eq!(list.value_length(), 2);
        let want: Vec<i128> = entry(file)["elements"].as_array().unwrap().iter().flat_map(ints).collect();
        assert_eq!(column_ints(list.values().as_ref()), want, "{file}");
    }
}

#[test]
fn datetimes_keep_their_unit_and_nat_is_null() {
    let file = "datetime/be_M8_s.npy";
    let want = ints(&entry(file)["elements"]);
    let b = one_batch(file);
    let col = b.column(0).as_primitive::<TimestampSecondType>();
    assert_eq!(b.schema().field(0).data_type(), &DataType::Timestamp(arrow_schema::TimeUnit::Second, None));
    for (i, &w) in want.iter().enumerate() {
        if w == i64::MIN as i128 {
            assert!(col.is_null(i), "{file}[{i}] is NaT");
        } else {
            assert_eq!(i128::from(col.value(i)), w, "{file}[{i}]");
        }
    }
    assert_eq!(col.null_count(), 1);
    let col = one_batch("datetime/le_m8_ns.npy");
    let col = col.column(0).as_primitive::<DurationNanosecondType>();
    assert_eq!(
        col.iter().map(|v| v.map(i128::from)).collect::<Vec<_>>(),
        want.iter().map(|&w| (w != i64::MIN as i128).then_some(w)).collect::<Vec<_>>()
    );
    // units Arrow lacks: Int64, the dtype in the field's metadata
    for (file, dtype) in [
        ("datetime/le_M8_25s.npy", "<M8[25s]"),
        ("datetime/be_m8_generic.npy", ">m8"),
        ("datetime/le_m8_D.npy", "<m8[D]"),
    ] {
        let b = one_batch(file);
        assert_eq!(b.schema().field(0).data_type(), &DataType::Int64, "{file}");
        assert_eq!(b.schema().field(0).metadata()[DTYPE_KEY], dtype);
        let col = b.column(0).as_primitive::<Int64Type>();
        assert!(col.is_null(3) && col.null_count() == 1, "{file}: NaT");
        assert_eq!(i128::from(col.value(6)), want[6]);
    }
    // M8[D]: Date32, whose range NumPy's days overflow; as Int64 days on request
    let err =
        batches(&std::fs::read(data_dir().join("datetime/le_M8_D.npy")).unwrap(), &ConvertOptions::new()).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::InvalidValue { index: 4, .. }), "{err}");
    let b = one_batch_with("datetime/le_M8_D.npy", ConvertOptions::new().days_as_int64(true).clone());
    assert_eq!(b.schema().field(0).metadata()[DTYPE_KEY], "<M8[D]");
    assert_eq!(column_ints(b.column(0).as_ref())[..3], want[..3]);
}

#[test]
fn text_is_numpys_with_trailing_nuls_stripped() {
    for file in ["string/le_U4.npy", "string/be_U4.npy"] {
        let want: Vec<String> = entry(file)["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|cps| {
                let s: String = ints(cps).iter().map(|&c| char::from_u32(c as u32).unwrap()).collect();
                s.trim_end_matches('\0').to_string()
            })
            .collect();
        assert_eq!(want[4], "a\0b", "the fixture has an inner NUL");
        let b = one_batch(file);
        let got: Vec<&str> = b.column(0).as_string::<i32>().iter().map(Option::unwrap).collect();
        assert_eq!(got, want, "{file}");
    }
    let file = "string/S5.npy";
    let want: Vec<Vec<u8>> = entry(file)["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let h = h.as_str().unwrap();
            let mut b: Vec<u8> =
                (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect();
            while b.last() == Some(&0) {
                b.pop();
            }
            b
        })
        .collect();
    let b = one_batch(file);
    let got: Vec<&[u8]> = b.column(0).as_binary::<i32>().iter().map(Option::unwrap).collect();
    assert_eq!(got, want);
    let v3 = one_batch("string/V3.npy");
    assert_eq!(v3.column(0).as_fixed_size_binary().value(1), [0xff, 0xfe, 0xfd]);
}

/// The column at a dotted path of struct fields.
fn path_column(b: &RecordBatch, path: &str) -> ArrayRef {
    let mut parts = path.split('.');
    let mut col = b.column_by_name(parts.next().unwrap()).unwrap().clone();
    for p in parts {
        col = col.as_struct().column_by_name(p).unwrap_or_else(|| panic!("{path}")).clone();
    }
    col
}

#[test]
fn records_are_columns_without_padding_and_nested_as_structs() {
    for file in [
        "record/nested_3_levels.npy",
        "record/offsets_gaps.npy",
        "record/big_endian.npy",
        "record/mixed_endian.npy",
        "record/aligned.npy",
        "header/utf8_name_v3.npy",
    ] {
        let e = entry(file);
        let b = one_batch(file);
        let fields = e["fields"].as_object().unwrap();
        let top: std::collections::HashSet<&str> = fields.keys().map(|k| k.split('.').next().unwrap()).collect();
        assert_eq!(b.num_columns(), top.len(), "{file}: padding is no column");
        for (path, values) in fields {
            let col = path_column(&b, path);
            if col.data_type() == &DataType::Utf8 {
                let want: Vec<String> = values
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|cps| {
                        ints(cps)
                            .iter()
                            .map(|&c| char::from_u32(c as u32).unwrap())
                            .collect::<String>()
                            .trim_end_matches('\0')
                            .to_string()
                    })
                    .collect();
                let got: Vec<&str> = col.as_string::<i32>().iter().map(Option::unwrap).collect();
                assert_eq!(got, want, "{file}: {path}");
            } else if matches!(col.data_type(), DataType::Duration(..)) {
                let got: Vec<i128> = col
                    .as_primitive::<arrow_array::types::DurationMillisecondType>()
                    .iter()
                    .map(|v| v.map_or(i64::MIN.into(), i128::from))
                    .collect();
                assert_eq!(got, ints(values), "{file}: {path}");
            } else if matches!(col.data_type(), DataType::FixedSizeList(..)) {
                let want: Vec<i128> = values.as_array().unwrap().iter().flat_map(ints).collect();
                assert_eq!(column_ints(col.as_fixed_size_list().values().as_ref()), want, "{file}: {path}");
            } else if matches!(col.data_type(), DataType::Timestamp(..)) {
                let got: Vec<i128> = col
                    .as_primitive::<TimestampSecondType>()
                    .iter()
                    .map(|v| v.map_or(i64::MIN.into(), i128::from))
                    .collect();
                assert_eq!(got, ints(values), "{file}: {path}");
            } else {
                assert_eq!(column_ints(col.as_ref()), ints(values), "{file}: {path}");
            }
        }
    }
    // subarray fields: FixedSizeList, nested for several dims
    let b = one_batch("record/subarray.npy");
    let m = b.column_by_name("m").unwrap().as_fixed_size_list();
    assert_eq!(m.value_length(), 2);
    let inner = m.values().as_fixed_size_list();
    assert_eq!(inner.value_length(), 3);
    let want = ints(&entry("record/subarray.npy")["fields"]["m"]);
    assert_eq!(column_ints(inner.values().as_ref()), want);
    // titles are no columns
    let b = one_batch("record/titles.npy");
    let names: Vec<String> = b.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert!(entry("record/titles.npy")["descr"].as_str().unwrap().starts_with("[(('Trace identifier', 'tid'), '<i4')"));
    assert_eq!(names, ["tid", "amp", "plain"]);
    // a 0-d array of records is one row
    let b = one_batch("record/zero_d.npy");
    assert_eq!((b.num_rows(), b.num_columns()), (1, 3));
}

#[test]
fn n_d_arrays_are_rows_of_tensors_in_either_order() {
    let c = one_batch("shape/3x4_C_i4.npy");
    let f = one_batch("shape/3x4_F_i4.npy");
    assert_eq!(c.columns(), f.columns(), "Fortran files give the same logical rows");
    let field = c.schema().field(0).clone();
    assert_eq!(field.metadata()[EXTENSION_NAME_KEY], TENSOR_EXTENSION);
    assert_eq!(field.metadata()[EXTENSION_METADATA_KEY], r#"{"shape":[4]}"#);
    let rows = c.column(0).as_fixed_size_list();
    assert_eq!((rows.len(), rows.value_length()), (3, 4));
    assert_eq!(column_ints(rows.value(1).as_ref()), [4, 5, 6, 7]);
    // 2x3x4 Fortran big-endian: the manifest has the stored (Fortran) order
    let file = "shape/2x3x4_F_be_u2.npy";
    let stored = ints(&entry(file)["elements"]);
    let b = one_batch(file);
    let rows = b.column(0).as_fixed_size_list();
    assert_eq!(b.schema().field(0).metadata()[EXTENSION_METADATA_KEY], r#"{"shape":[3,4]}"#);
    for i in 0..2 {
        let row = column_ints(rows.value(i).as_ref());
        for j in 0..3 {
            for k in 0..4 {
                assert_eq!(row[j * 4 + k], stored[i + 2 * j + 6 * k], "{file}[{i},{j},{k}]");
            }
        }
    }
    let b = one_batch("shape/5x0x3_f4.npy");
    assert_eq!((b.num_rows(), b.column(0).as_fixed_size_list().value_length()), (5, 0));
    let b = one_batch("shape/0d_be_i2.npy");
    assert_eq!(column_ints(b.column(0).as_ref()), [-2]);
}

#[test]
fn a_mapped_f8_file_becomes_an_arrow_array_without_a_copy() {
    let path = data_dir().join("scalar/le_f8.npy");
    // SAFETY: the fixtures are not written while the tests run.
    let map = Arc::new(unsafe { NpyMap::from_path(&path) }.unwrap());
    let data = map.data().as_ptr_range();
    let array = npy_arrow::mapped_array(map.clone()).unwrap();
    let values = array.as_primitive::<Float64Type>().values();
    let p = values.as_ptr().cast::<u8>();
    assert!(data.contains(&p) && p == data.start, "the buffer points into the map");
    drop(map); // the array keeps the map alive
    let bits: Vec<i128> = values.iter().map(|v| i128::from(v.to_bits())).collect();
    assert_eq!(bits, ints(&entry("scalar/le_f8.npy")["elements"]));
    // big-endian data cannot be viewed: it is converted (by BatchReader::from_map)
    // SAFETY: as above.
    let be = Arc::new(unsafe { NpyMap::from_path(data_dir().join("scalar/be_f8.npy")) }.unwrap());
    assert!(matches!(npy_arrow::mapped_array(be).unwrap_err().kind(), ErrorKind::NotViewable { .. }));
}

#[test]
fn batches_made_elsewhere_write_their_natural_dtype() {
    // Files whose dtype is the natural packed one of their columns come back without the
    // schema's metadata too.
    for file in [
        "scalar/le_i8.npy",
        "scalar/le_f2.npy",
        "scalar/u1.npy",
        "scalar/b1.npy",
        "scalar/le_c16.npy",
        "string/le_U4.npy",
        "string/S5.npy",
        "shape/3x4_C_i4.npy",
        "shape/2x3x4_C_f8.npy",
        "record/packed.npy",
        "record/strings.npy",
        "header/utf8_name_v3.npy",
    ] {
        let bytes = std::fs::read(data_dir().join(file)).unwrap();
        let (schema, b) = batches(&bytes, &ConvertOptions::new()).unwrap();
        let bare = Arc::new(Schema::new(schema.fields().clone()));
        let b: Vec<RecordBatch> =
            b.into_iter().map(|b| RecordBatch::try_new(bare.clone(), b.columns().to_vec()).unwrap()).collect();
        assert!(write(bare, &b).unwrap() == bytes, "{file}: without metadata");
    }
    // nulls: NaN in floats, NaT in datetimes, an error elsewhere
    let batch = RecordBatch::try_from_iter([
        ("x", Arc::new(arrow_array::Float32Array::from(vec![Some(1.5), None])) as ArrayRef),
        ("t", Arc::new(arrow_array::TimestampMillisecondArray::from(vec![None, Some(7)])) as ArrayRef),
    ])
    .unwrap();
    let file = write(batch.schema(), &[batch]).unwrap();
    let (_, back) = batches(&file, &ConvertOptions::new()).unwrap();
    let x = back[0].column(0).as_primitive::<Float32Type>();
    assert!(x.value(1).is_nan() && x.value(0) == 1.5);
    assert!(back[0].column(1).is_null(0));
    let ints =
        RecordBatch::try_from_iter([("n", Arc::new(arrow_array::Int32Array::from(vec![Some(1), None])) as ArrayRef)])
            .unwrap();
    let err = write(ints.schema(), &[ints]).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::InvalidValue { index: 1, reason }
            if reason.contains("no NaN or NaT") && reason.starts_with("column 'n': ")),
        "{err}"
    );
    // text wider than the first batch's
    let a =
        RecordBatch::try_from_iter([("s", Arc::new(arrow_array::StringArray::from(vec!["ab"])) as ArrayRef)]).unwrap();
    let b =
        RecordBatch::try_from_iter([("s", Arc::new(arrow_array::StringArray::from(vec!["abc"])) as ArrayRef)]).unwrap();
    let err = write(a.schema(), &[a, b]).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{err}");
}

#[test]
fn a_writer_refuses_batches_that_do_not_fit_and_leaves_no_file() {
    let bytes = std::fs::read(data_dir().join("scalar/le_i4.npy")).unwrap();
    let (schema, _) = batches(&bytes, &ConvertOptions::new()).unwrap();
    // another type
    let other =
        RecordBatch::try_from_iter([("values", Arc::new(arrow_array::Float64Array::from(vec![1.0])) as ArrayRef)])
            .unwrap();
    let err = write(schema.clone(), &[other]).unwrap_err();
    assert!(err.to_string().contains("column 'values' is Float64"), "{err}");
    assert!(matches!(err.kind(), ErrorKind::Io(e) if e.kind() == std::io::ErrorKind::InvalidData), "{err:?}");
    // A Fortran-order N-d array is laid out for the rows its metadata's shape has: fewer
    // rows are an error, and the file is not put in place.
    let bytes = std::fs::read(data_dir().join("shape/3x4_F_i4.npy")).unwrap();
    let (schema, b) = batches(&bytes, &ConvertOptions::new()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.npy");
    let mut w = npy_arrow::BatchFileWriter::create(&path, schema.clone()).unwrap();
    w.write(&b[0].slice(0, 2)).unwrap();
    let err = w.finish().unwrap_err();
    assert!(err.to_string().contains("2 rows for a Fortran-order array"), "{err}");
    assert_eq!(err.path(), Some(path.as_path()));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file, no temporary");
    let err = write(schema.clone(), &[b[0].clone(), b[0].clone()]).unwrap_err();
    assert!(err.to_string().contains("6 rows for a Fortran-order array"), "{err}");
    let mut w = npy_arrow::BatchFileWriter::create(&path, schema).unwrap();
    w.write(&b[0]).unwrap();
    w.finish().unwrap();
    assert!(std::fs::read(&path).unwrap() == bytes);
}

/// The metadata's first dim is a hint: rows filtered or added after it was made (by another
/// tool that keeps schema metadata) give a file of the rows written, of the metadata's dtype.
#[test]
fn the_rows_written_make_the_first_dim_whatever_the_metadata_says() {
    for (file, rows) in [("scalar/le_i4.npy", 6), ("shape/3x4_C_i4.npy", 3), ("shape/2x3x4_C_f8.npy", 2)] {
        let bytes = std::fs::read(data_dir().join(file)).unwrap();
        let want = DynArray::read_npy_from(&bytes[..]).unwrap();
        let (schema, b) = batches(&bytes, &ConvertOptions::new()).unwrap();
        assert_eq!(b.iter().map(|b| b.num_rows()).sum::<usize>(), rows);
        // Twice the rows, then one row.
        let twice = write(schema.clone(), &[b.clone(), b.clone()].concat()).unwrap();
        let got = DynArray::read_npy_from(&twice[..]).unwrap();
        assert_eq!(got.dtype(), want.dtype(), "{file}");
        assert_eq!(got.shape()[0], 2 * rows, "{file}");
        assert_eq!(got.shape()[1..], want.shape()[1..], "{file}");
        assert_eq!(got.data(), [want.data(), want.data()].concat(), "{file}");
        let one = write(schema, &[b[0].slice(1, 1)]).unwrap();
        let got = DynArray::read_npy_from(&one[..]).unwrap();
        let row = want.data().len() / rows;
        assert_eq!((got.shape()[0], got.data()), (1, &want.data()[row..2 * row]), "{file}");
    }
}

#[test]
fn the_public_corpus_converts_to_batches_and_back_byte_for_byte() {
    let Some(dir) = corpus::corpus("corpus round trips") else { return };
    let files = corpus::files_with_extensions(&dir, &["npy"]);
    let (mut done, mut legacy) = (0, 0);
    let mut failed = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).unwrap();
        if is_object(&bytes) {
            continue;
        }
        let mut options = ConvertOptions::new();
        options.batch_rows(1000).residue(true);
        if name.ends_with("unicode_invalid_codepoints.npy") {
            // Lone surrogates and code points past U+10FFFF, which NumPy keeps and Utf8
            // cannot hold: refused without the residue, naming the element; with it, the
            // column holds U+FFFD for them and the residue their bytes.
            let err = batches(&bytes, &ConvertOptions::new()).unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::InvalidValue { index: 1, reason } if reason.contains("not a valid char")),
                "{err}"
            );
            let (_, b) = batches(&bytes, &options).unwrap();
            let texts: Vec<&str> = b[0].column(0).as_string::<i32>().iter().map(Option::unwrap).collect();
            assert_eq!(texts, ["A", "\u{FFFD}", "\u{FFFD}", "\u{FFFD}", "\u{FFFD}", ""]);
        }
        let back = round_trip(&name, &bytes, options);
        if back == bytes {
            done += 1;
        } else if !canonical_header(&bytes) && same_data(&back, &bytes) {
            // A header np.save would not write (Python 2 ints, keys in another order,
            // other padding) comes back as np.save writes it; the data is the same.
            legacy += 1;
        } else {
            failed.push(name);
        }
    }
    assert!(failed.is_empty(), "not byte-identical: {failed:#?}");
    assert_eq!(legacy, 3, "legacy headers");
    assert!(done >= 100, "only {done} corpus files");
}

/// Whether a file's header is the one `np.save` writes for it.
fn canonical_header(bytes: &[u8]) -> bool {
    let r = npy_core::NpyReader::from_reader_with(bytes, &read_opts()).unwrap();
    let (_, head) = r.header().encode(Some(r.version())).unwrap();
    bytes.starts_with(&head)
}

/// Whether two files hold the same header values and data.
fn same_data(a: &[u8], b: &[u8]) -> bool {
    let (ra, rb) = (
        npy_core::NpyReader::from_reader_with(a, &read_opts()).unwrap(),
        npy_core::NpyReader::from_reader_with(b, &read_opts()).unwrap(),
    );
    ra.header() == rb.header() && a[ra.data_offset()..] == b[rb.data_offset()..]
}

#[test]
fn a_truncated_stream_is_an_error_not_short_batches() {
    let bytes = std::fs::read(data_dir().join("scalar/le_f8.npy")).unwrap();
    let cut = &bytes[..bytes.len() - 3];
    let reader = BatchReader::from_npy_reader_with(
        NpyReader::from_reader(cut).unwrap(),
        npy_arrow::ConvertOptions::new().batch_rows(4),
    )
    .unwrap();
    let results: Vec<_> = reader.collect();
    assert!(results.last().unwrap().is_err(), "the last batch fails");
    assert_eq!(results.iter().filter(|r| r.is_err()).count(), 1, "and ends the stream");
}

#[test]
fn tensors_made_elsewhere_write_as_n_d_arrays_whatever_their_item_is_called() {
    let file = "shape/3x4_C_i4.npy";
    let bytes = std::fs::read(data_dir().join(file)).unwrap();
    let b = one_batch(file);
    let field = b.schema().field(0).clone();
    let rows = b.column(0).as_fixed_size_list();
    // pyarrow names a list's item 'element', and may make it non-nullable
    let item = Arc::new(arrow_schema::Field::new("element", DataType::Int32, false));
    let list = arrow_array::FixedSizeListArray::new(item.clone(), 4, rows.values().clone(), None);
    let field = arrow_schema::Field::new("values", DataType::FixedSizeList(item, 4), true)
        .with_metadata(field.metadata().clone());
    let schema = Arc::new(Schema::new(vec![field]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(list)]).unwrap();
    assert!(write(schema, &[batch.slice(0, 1), batch.slice(1, 2)]).unwrap() == bytes);
}

#[test]
fn wide_rows_make_smaller_batches_by_default() {
    // 10 rows of 2 MiB: 64 MiB / 2 MiB = 32 rows a batch by default, so one batch; 3 when asked
    let header = npy_core::header::Header::new("<f8".parse().unwrap(), vec![10, 1 << 18]);
    let array = DynArray::new(header, vec![0u8; 10 << 21]).unwrap();
    let reader = BatchReader::from_dyn(array.clone()).unwrap();
    assert_eq!(reader.map(|b| b.unwrap().num_rows()).collect::<Vec<_>>(), [10]);
    let header = npy_core::header::Header::new("<f8".parse().unwrap(), vec![40, 1 << 18]);
    let array = DynArray::new(header, vec![0u8; 40 << 21]).unwrap();
    let reader = BatchReader::from_dyn(array).unwrap();
    assert_eq!(reader.map(|b| b.unwrap().num_rows()).collect::<Vec<_>>(), [32, 8]);
}

#[test]
fn b1_bytes_other_than_0_and_1_are_true_and_come_back_with_the_residue() {
    let header = npy_core::header::Header::new("|b1".parse().unwrap(), vec![4]);
    let (_, head) = header.encode(None).unwrap();
    let file = [head, vec![0, 2, 255, 1]].concat();
    for (residue, data) in [(false, [0, 1, 1, 1]), (true, [0, 2, 255, 1])] {
        let mut options = ConvertOptions::new();
        options.residue(residue);
        let (schema, b) = batches(&file, &options).unwrap();
        let values: Vec<bool> = b[0].column(0).as_boolean().iter().map(Option::unwrap).collect();
        assert_eq!(values, [false, true, true, true]);
        assert_eq!(b[0].num_columns(), 1 + usize::from(residue));
        let back = write(schema, &b).unwrap();
        assert_eq!(back[back.len() - 4..], data, "residue {residue}");
    }
}

#[test]
fn u_text_that_is_not_valid_comes_back_from_the_residue_unless_the_column_changed() {
    // '<U2' elements: 'A', then a lone surrogate after 'x', then a unit past U+10FFFF
    let header = npy_core::header::Header::new("<U2".parse().unwrap(), vec![3]);
    let (_, head) = header.encode(None).unwrap();
    let units: [u32; 6] = [0x41, 0, 0x78, 0xDC00, 0x11_0000, 0];
    let file = [head, units.iter().flat_map(|u| u.to_le_bytes()).collect()].concat();
    let mut options = ConvertOptions::new();
    options.residue(true);
    let (schema, b) = batches(&file, &options).unwrap();
    let texts: Vec<&str> = b[0].column(0).as_string::<i32>().iter().map(Option::unwrap).collect();
    assert_eq!(texts, ["A", "x\u{FFFD}", "\u{FFFD}"]);
    let residue = b[0].column(1).as_fixed_size_binary();
    assert_eq!(residue.value(0), [0; 8], "valid text needs no residue");
    assert_eq!(residue.value(1), &file[file.len() - 16..file.len() - 8]);
    assert!(write(schema.clone(), &b).unwrap() == file);
    // a changed value wins over the bytes kept for the old one
    let changed = arrow_array::StringArray::from(vec!["A", "y\u{FFFD}", "\u{FFFD}"]);
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(changed), b[0].column(1).clone()]).unwrap();
    let back = write(schema, &[batch]).unwrap();
    let back_units: Vec<u32> =
        back[back.len() - 24..].chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(back_units, [0x41, 0, 0x79, 0xFFFD, 0x11_0000, 0]);
}

#[test]
fn text_nested_in_a_struct_made_elsewhere_gets_the_width_of_its_column() {
    let names = arrow_array::StringArray::from(vec!["Ann", "Benedikt"]);
    let codes = arrow_array::BinaryArray::from(vec![&b"ab"[..], b"xyz"]);
    let station = arrow_array::StructArray::from(vec![
        (Arc::new(arrow_schema::Field::new("name", DataType::Utf8, true)), Arc::new(names) as ArrayRef),
        (Arc::new(arrow_schema::Field::new("code", DataType::Binary, true)), Arc::new(codes) as ArrayRef),
    ]);
    let batch = RecordBatch::try_from_iter([("station", Arc::new(station) as ArrayRef)]).unwrap();
    let file = write(batch.schema(), &[batch]).unwrap();
    let r = npy_core::NpyReader::from_reader_with(&file[..], &read_opts()).unwrap();
    assert_eq!(r.header().dtype.descr(), "[('station', [('name', '<U8'), ('code', '|S8')])]");
    let (_, back) = batches(&file, &ConvertOptions::new()).unwrap();
    let station = back[0].column(0).as_struct();
    let names: Vec<&str> = station.column(0).as_string::<i32>().iter().map(Option::unwrap).collect();
    assert_eq!(names, ["Ann", "Benedikt"]);
    assert_eq!(station.column(1).as_binary::<i32>().value(1), b"xyz");
}

#[test]
fn int64_columns_stand_for_datetimes_when_the_metadata_has_their_unit() {
    // What pyarrow gives for a Parquet datetime64[s] column: the counts as int64.
    let file = "datetime/le_M8_s.npy";
    let bytes = std::fs::read(data_dir().join(file)).unwrap();
    let (schema, b) = batches(&bytes, &ConvertOptions::new()).unwrap();
    let field = schema.field(0).clone().with_data_type(DataType::Int64);
    let ints = Arc::new(Schema::new_with_metadata(vec![field], schema.metadata().clone()));
    let b: Vec<RecordBatch> = b
        .iter()
        .map(|b| {
            let counts = arrow_cast_free_int64(b.column(0));
            RecordBatch::try_new(ints.clone(), vec![counts]).unwrap()
        })
        .collect();
    assert!(write(ints, &b).unwrap() == bytes);
}

/// An Int64 array of a time array's counts, nulls kept.
fn arrow_cast_free_int64(a: &ArrayRef) -> ArrayRef {
    let data = a.to_data().into_builder().data_type(DataType::Int64).build().unwrap();
    arrow_array::make_array(data)
}

#[test]
fn many_rows_convert_block_by_block_to_the_same_values() {
    // 50,000 packed records of 24 bytes (1.2 MB: several blocks of the strided copy), a field
    // big-endian, a subarray, and rows that say which row they are.
    let n = 50_000usize;
    let header =
        npy_core::header::Header::new("[('a', '<i4'), ('b', '>f8'), ('c', '<f4', (3,))]".parse().unwrap(), vec![n]);
    let (_, head) = header.encode(None).unwrap();
    let mut file = head;
    for i in 0..n {
        file.extend((i as i32).to_le_bytes());
        file.extend((i as f64 * 0.5).to_be_bytes());
        for k in 0..3 {
            file.extend((i as f32 + k as f32 / 4.0).to_le_bytes());
        }
    }
    for rows in [n, 7_777] {
        let (schema, b) = batches(&file, ConvertOptions::new().batch_rows(rows)).unwrap();
        let mut i = 0usize;
        for batch in &b {
            let a = batch.column(0).as_primitive::<Int32Type>();
            let bb = batch.column(1).as_primitive::<Float64Type>();
            let c = batch.column(2).as_fixed_size_list();
            let items = c.values().as_primitive::<Float32Type>();
            for r in 0..batch.num_rows() {
                assert_eq!(a.value(r), i as i32);
                assert_eq!(bb.value(r), i as f64 * 0.5);
                for k in 0..3 {
                    assert_eq!(items.value((c.offset() + r) * 3 + k), i as f32 + k as f32 / 4.0, "row {i}");
                }
                i += 1;
            }
        }
        assert_eq!(i, n);
        assert!(write(schema, &b).unwrap() == file, "batches of {rows} back");
    }
}

#[test]
fn a_value_that_does_not_fit_is_named_by_its_index_whatever_the_block() {
    let n = 100_000;
    let header = npy_core::header::Header::new("<U1".parse().unwrap(), vec![n]);
    let schema = npy_arrow::schema_of(&header).unwrap();
    let mut texts = vec!["a"; n];
    texts[70_001] = "bb";
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(arrow_array::StringArray::from(texts))]).unwrap();
    let err = write(schema, &[batch.slice(0, 50_000), batch.slice(50_000, 50_000)]).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::InvalidValue { index: 70_001, .. }), "{err}");
}

/// A schema whose `numpy.*` metadata no longer describes its columns (another tool edited the
/// table and kept the metadata): the columns win, each written under its own name.
#[test]
fn stale_metadata_never_puts_values_under_another_name() {
    use arrow_array::{Float64Array, Int32Array};
    let header = npy_core::header::Header::new("[('a', '>f8'), ('b', '>f8'), ('n', '<i4')]".parse().unwrap(), vec![3]);
    let schema = npy_arrow::schema_of(&header).unwrap();
    let meta = schema.metadata().clone();
    let col = |v: [f64; 3]| Arc::new(Float64Array::from(v.to_vec())) as ArrayRef;
    let (a, b) = (col([1.0, 2.0, 3.0]), col([10.0, 20.0, 30.0]));
    let n = Arc::new(Int32Array::from(vec![7, 8, 9])) as ArrayRef;
    let table = |cols: Vec<(&str, ArrayRef)>| {
        let fields: Vec<arrow_schema::Field> =
            cols.iter().map(|(name, c)| arrow_schema::Field::new(*name, c.data_type().clone(), true)).collect();
        let schema = Arc::new(Schema::new_with_metadata(fields, meta.clone()));
        RecordBatch::try_new(schema, cols.into_iter().map(|(_, c)| c).collect()).unwrap()
    };
    let descr_and_values = |batch: RecordBatch| {
        let file = write(batch.schema(), &[batch]).unwrap();
        let array = DynArray::read_npy_from(&file[..]).unwrap();
        (array.dtype().descr(), array.shape().to_vec(), file)
    };
    // Agreeing: the metadata's dtype (big-endian), the rows written.
    let (descr, shape, _) = descr_and_values(table(vec![("a", a.clone()), ("b", b.clone()), ("n", n.clone())]));
    assert_eq!((descr.as_str(), shape), ("[('a', '>f8'), ('b', '>f8'), ('n', '<i4')]", vec![3]));
    // Reordered: b's values under b.
    let (descr, _, file) = descr_and_values(table(vec![("b", b.clone()), ("a", a.clone()), ("n", n.clone())]));
    assert_eq!(descr, "[('b', '<f8'), ('a', '<f8'), ('n', '<i4')]");
    #[derive(npy_core::NpyRecord, Debug, PartialEq)]
    struct Ban {
        b: f64,
        a: f64,
        n: i32,
    }
    let rows = Vec::<Ban>::read_npy_from(&file[..]).unwrap();
    assert_eq!(rows[0], Ban { b: 10.0, a: 1.0, n: 7 });
    // Renamed, dropped, added, cast.
    let cases = [
        (vec![("a", a.clone()), ("c", b.clone()), ("n", n.clone())], "[('a', '<f8'), ('c', '<f8'), ('n', '<i4')]"),
        (vec![("a", a.clone()), ("n", n.clone())], "[('a', '<f8'), ('n', '<i4')]"),
        (
            vec![("a", a.clone()), ("b", b.clone()), ("n", n.clone()), ("m", n.clone())],
            "[('a', '<f8'), ('b', '<f8'), ('n', '<i4'), ('m', '<i4')]",
        ),
        (
            vec![("a", a.clone()), ("b", b.clone()), ("n", col([7.0, 8.0, 9.0]))],
            "[('a', '<f8'), ('b', '<f8'), ('n', '<f8')]",
        ),
    ];
    for (cols, want) in cases {
        assert_eq!(descr_and_values(table(cols)).0, want);
    }
}

/// NaT becomes a null with a zero under it, streamed or mapped: Arrow leaves values under
/// nulls undefined, but some readers convert them anyway (DuckDB fails on a Duration of
/// i64::MIN).
#[test]
fn nat_is_a_null_over_a_zero() {
    for file in ["datetime/le_m8_s.npy", "datetime/le_M8_ns.npy"] {
        let path = data_dir().join(file);
        let bytes = std::fs::read(&path).unwrap();
        // SAFETY: the fixture is not modified while mapped.
        let map = Arc::new(unsafe { NpyMap::from_path(&path) }.unwrap());
        let mapped = BatchReader::from_map(map).unwrap().next().unwrap().unwrap();
        let (_, streamed) = batches(&bytes, &ConvertOptions::new()).unwrap();
        for batch in [&streamed[0], &mapped] {
            let column = batch.column(0);
            assert!(column.null_count() > 0, "{file} has NaT");
            let data = column.to_data();
            let values: &[i64] = data.buffers()[0].typed_data();
            let nulls = column.logical_nulls().unwrap();
            for (i, valid) in nulls.iter().enumerate() {
                assert!(valid || values[column.offset() + i] == 0, "{file}: row {i}");
            }
        }
    }
}

/// Text columns under stale metadata take their widths from the data, as without metadata.
#[test]
fn stale_metadata_leaves_text_widths_to_the_data() {
    let header = npy_core::header::Header::new("[('a', '<f8'), ('s', '<U1')]".parse().unwrap(), vec![2]);
    let meta = npy_arrow::schema_of(&header).unwrap().metadata().clone();
    let fields = vec![
        arrow_schema::Field::new("s", DataType::Utf8, true),
        arrow_schema::Field::new("a", DataType::Float64, true),
    ];
    let schema = Arc::new(Schema::new_with_metadata(fields, meta));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(arrow_array::StringArray::from(vec!["ab", "cde"])),
        Arc::new(arrow_array::Float64Array::from(vec![1.0, 2.0])),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    assert!(npy_arrow::write::needs_text_widths(&schema));
    let file = write(schema, &[batch]).unwrap();
    assert_eq!(DynArray::read_npy_from(&file[..]).unwrap().dtype().descr(), "[('s', '<U3'), ('a', '<f8')]");
}
