//! `.npz` archives as one table and back: every archive NumPy made (tests/data, and the
//! shared corpus when present) reads as a table whose columns hold what npy-core reads from
//! each member, and writes back an archive whose every member is the original's, byte for
//! byte; or it is refused with the right error (members of different lengths, objects),
//! and then each member reads alone. Archives made here hold NumPy's `.npy` fixtures as
//! members, stored or deflated.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type};
use arrow_array::{Array, ArrayRef, FixedSizeListArray, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use npy_arrow::npz::{COMPRESSION_KEY, RESIDUE_PREFIX};
use npy_arrow::schema::{DESCR_KEY, RESIDUE, RESIDUE_KEY, SHAPE_KEY, VERSION_KEY};
use npy_arrow::{BatchReader, ConvertOptions, NpzBatchReader, NpzBatchWriter, NpzTableOptions};
use npy_core::npz::{Compression, Method, Reader, ReaderOptions, Writer};
use npy_core::{DynArray, ErrorKind};
use serde_json::Value;
use sha2::{Digest, Sha256};

#[path = "../../tests/support/corpus.rs"]
mod corpus;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root")
}

fn data_dir() -> PathBuf {
    root().join("tests/data")
}

fn fixture(file: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// An archive at `path` whose members are NumPy's `.npy` fixtures, as they are.
fn archive(path: &Path, members: &[(&str, &str, Compression)]) {
    let mut w = Writer::create(path).unwrap();
    for (name, file, compression) in members {
        let bytes = fixture(file);
        w.add_raw_from_with(&format!("{name}.npy"), bytes.len() as u64, &bytes[..], *compression).unwrap();
    }
    w.finish().unwrap();
}

fn deflated() -> Compression {
    Compression::deflated()
}

/// Reads an archive as a table, with `datetime64[D]` as Int64 days when its days are out
/// of Date32's range (the one value error the default options may give); also says whether
/// it took that.
fn read_table(
    path: &Path,
    names: Option<&[&str]>,
    options: &ConvertOptions,
) -> npy_core::Result<(SchemaRef, Vec<RecordBatch>, bool)> {
    let archive = ReaderOptions::new();
    let read = |o: &ConvertOptions| {
        let mut table = NpzTableOptions::new();
        table.archive(&archive).convert(o);
        if let Some(names) = names {
            table.members(names);
        }
        all_batches(NpzBatchReader::from_path_with(path, &table)?)
    };
    match read(options) {
        Ok((s, b)) => Ok((s, b, false)),
        Err(e) if matches!(e.kind(), ErrorKind::InvalidValue { reason, .. } if reason.contains("Date32")) => {
            let (s, b) = read(options.clone().days_as_int64(true))?;
            Ok((s, b, true))
        }
        Err(e) => Err(e),
    }
}

fn all_batches(mut reader: NpzBatchReader) -> npy_core::Result<(SchemaRef, Vec<RecordBatch>)> {
    let schema = reader.schema();
    let mut out = Vec::new();
    while let Some(b) = reader.next_batch()? {
        out.push(b);
    }
    Ok((schema, out))
}

fn write(path: &Path, schema: SchemaRef, batches: &[RecordBatch]) -> npy_core::Result<()> {
    let mut w = NpzBatchWriter::create(path, schema)?;
    for b in batches {
        w.write(b)?;
    }
    w.finish()
}

/// The columns of member `name` as npy-core reads it (a `DynArray`) and `BatchReader`
/// maps it, in one batch; `None` for a member of no rows.
fn member_columns(path: &Path, name: &str, options: &ConvertOptions) -> Option<RecordBatch> {
    let array: DynArray = Reader::from_path(path).unwrap().read::<DynArray>(name).unwrap();
    let rows = array.shape().first().copied().unwrap_or(1);
    let mut r = BatchReader::from_dyn_with(array, options.clone().batch_rows(rows.max(1))).unwrap();
    r.next_batch().unwrap()
}

/// What a table round trip saw.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    members: usize,
    batches: usize,
}

/// Reads the archive (members `names`, or all) as a table in batches of `rows`, checks
/// each column against npy-core's read of its member, writes the table back and checks
/// every member byte for byte, compressed as the original.
fn table_round_trip(path: &Path, names: Option<&[&str]>, rows: usize) -> npy_core::Result<Seen> {
    let (schema, batches, days) = read_table(path, names, ConvertOptions::new().batch_rows(rows).residue(true))?;
    let label = path.display();
    let mut original = Reader::from_path(path).unwrap();
    let infos = original.members().to_vec();
    let mut members = Vec::new();
    let mut options = ConvertOptions::new();
    options.residue(true).days_as_int64(days);
    for (i, field) in schema.fields().iter().enumerate() {
        if field.name().starts_with(RESIDUE_PREFIX) {
            assert_eq!(field.metadata()[RESIDUE_KEY], "true");
            continue;
        }
        let name = field.name().as_str();
        members.push(name.to_string());
        let info = infos.iter().find(|m| m.name == name).unwrap();
        let stored = if info.compression == Some(Method::Stored) { "stored" } else { "deflated" };
        assert_eq!(field.metadata()[COMPRESSION_KEY], stored, "{label}: {name}");
        let head = original.npy(name).unwrap().header().clone();
        assert_eq!(field.metadata()[DESCR_KEY], head.dtype.descr(), "{label}: {name}");
        assert_eq!(field.metadata()[SHAPE_KEY], serde_json::to_string(&head.shape).unwrap(), "{label}: {name}");
        let Some(want) = member_columns(path, name, &options) else {
            assert!(batches.is_empty(), "{label}: {name} has no rows");
            continue;
        };
        let want_residue = want.schema().fields().last().is_some_and(|f| f.name() == RESIDUE);
        let data = &want.columns()[..want.num_columns() - usize::from(want_residue)];
        let mut at = 0;
        for b in &batches {
            let got = b.column(i);
            let n = b.num_rows();
            if let Some(got) = got.as_struct_opt() {
                // a record member: its fields, the member's columns
                assert_eq!(got.num_columns(), data.len(), "{label}: {name}");
                for (g, w) in got.columns().iter().zip(data) {
                    assert_eq!(g.as_ref(), w.slice(at, n).as_ref(), "{label}: {name} rows {at}..");
                }
            } else {
                assert_eq!(got.as_ref(), data[0].slice(at, n).as_ref(), "{label}: {name} rows {at}..");
            }
            if want_residue {
                let r = schema.index_of(&format!("{RESIDUE_PREFIX}{name}")).unwrap();
                assert_eq!(b.column(r).as_ref(), want.columns().last().unwrap().slice(at, n).as_ref(), "{label}");
            }
            at += n;
        }
        assert_eq!(at, want.num_rows(), "{label}: {name}");
    }
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.npz");
    write(&copy, schema, &batches).unwrap_or_else(|e| panic!("{label}: writing back: {e}"));
    let mut back = Reader::from_path(&copy).unwrap();
    assert_eq!(back.names(), members, "{label}");
    let back_infos = back.members().to_vec();
    for (name, info) in members.iter().zip(&back_infos) {
        let was = infos.iter().find(|m| &m.name == name).unwrap();
        assert!(back.read_raw(name).unwrap() == original.read_raw(name).unwrap(), "{label}: {name} not byte-identical");
        assert_eq!(info.compression, was.compression, "{label}: {name}");
    }
    Ok(Seen { members: members.len(), batches: batches.len() })
}

/// Whether an error is the refusal of members of different lengths.
fn is_length_error(e: &npy_core::Error) -> bool {
    matches!(e.kind(), ErrorKind::Npz { reason, .. } if reason.contains("rows, where member"))
}

/// Whether an error is the refusal of an object member.
fn is_object_error(e: &npy_core::Error) -> bool {
    matches!(e.kind(), ErrorKind::UnsupportedDtype { descr, .. } if descr.contains('O'))
}

/// Checks an archive NumPy made: whole when its members share a length, else (or for
/// objects) refused, and then each member alone. Returns (whole, refused, members read).
fn check_numpy_archive(path: &Path) -> (usize, usize, usize) {
    let label = path.display();
    match table_round_trip(path, None, 3) {
        Ok(seen) => {
            assert_eq!(table_round_trip(path, None, 1 << 16).unwrap().members, seen.members);
            (1, 0, seen.members)
        }
        Err(e) => {
            assert!(is_length_error(&e) || is_object_error(&e), "{label}: {e}");
            assert_eq!(e.path(), Some(path), "{e}");
            assert!(e.member().is_some(), "{e}");
            let names = Reader::from_path(path).unwrap().names().to_vec();
            let mut read = 0;
            for name in &names {
                match table_round_trip(path, Some(&[name.as_str()]), 2) {
                    Ok(seen) => read += seen.members,
                    Err(e) => assert!(is_object_error(&e), "{label}: {name}: {e}"),
                }
            }
            (0, 1, read)
        }
    }
}

#[test]
fn the_fixture_archive_of_objects_is_refused_and_its_other_member_reads() {
    let path = data_dir().join("object/archive.npz");
    let e = NpzBatchReader::from_path(&path).unwrap_err();
    assert!(is_object_error(&e), "{e}");
    assert_eq!(e.member(), Some("labels.npy"), "{e}");
    assert_eq!(check_numpy_archive(&path), (0, 1, 1));
    // the member of numbers holds NumPy's values
    let manifest: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(data_dir().join("manifest.json")).unwrap()).unwrap();
    let entry = manifest.iter().find(|e| e["file"] == "object/archive.npz").unwrap();
    let values = entry["members"].as_array().unwrap().iter().find(|m| m["name"] == "values").unwrap();
    let want: Vec<u64> = values["elements"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    let (_, b) = all_batches(
        NpzBatchReader::from_path_with(
            &path,
            NpzTableOptions::new().members(&["values"]).convert(&ConvertOptions::new()),
        )
        .unwrap(),
    )
    .unwrap();
    let got: Vec<u64> = b[0].column(0).as_primitive::<Float64Type>().values().iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, want);
}

#[test]
fn the_public_corpus_archives_read_as_tables_or_member_by_member() {
    let Some(dir) = corpus::corpus("corpus archives") else { return };
    let manifest: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let files = corpus::files_with_extensions(&dir, &["npz"]);
    let (mut whole, mut refused, mut members) = (0, 0, 0);
    for path in &files {
        let (w, r, m) = check_numpy_archive(path);
        (whole, refused, members) = (whole + w, refused + r, members + m);
        // every member's bytes are NumPy's (the written-back ones were checked equal)
        let rel = path.strip_prefix(&dir).unwrap().to_str().unwrap();
        let entry = manifest.iter().find(|e| e["file"] == rel).unwrap_or_else(|| panic!("{rel} not in the manifest"));
        let mut r = Reader::from_path(path).unwrap();
        for m in entry["members"].as_array().unwrap() {
            let bytes = r.read_raw(m["key"].as_str().unwrap()).unwrap();
            assert_eq!(format!("{:x}", Sha256::digest(&bytes)), m["sha256_member"].as_str().unwrap(), "{rel}");
        }
    }
    // Archives of one length: mixed_positional_keyword, single_0d, v2 and v3 members, the
    // 1,000,003-row one, the empty one, the aligned survey.
    assert_eq!((whole, refused), (7, 7), "archives read whole, refused for their lengths");
    assert_eq!(members, 49, "every member of every archive, read whole or alone");
}

#[test]
fn numpys_values_in_a_corpus_table() {
    let Some(dir) = corpus::corpus("corpus tables") else { return };
    let path = dir.join("npz/mixed_positional_keyword.npz");
    let (schema, b) = all_batches(NpzBatchReader::from_path(&path).unwrap()).unwrap();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["name", "arr_0", "arr_1"], "the archive's order: keywords first");
    assert_eq!(b[0].column(0).as_string::<i32>().iter().flatten().collect::<Vec<_>>(), ["xxxx", "_"]);
    assert_eq!(b[0].column(1).as_primitive::<Int32Type>().values(), &[i32::MIN, i32::MAX]);
    let one = dir.join("npz/single_0d_stored.npz");
    let (_, b) = all_batches(NpzBatchReader::from_path(&one).unwrap()).unwrap();
    assert_eq!((b.len(), b[0].num_rows()), (1, 1), "a 0-d member is one row");
    assert_eq!(b[0].column(0).as_primitive::<Float64Type>().value(0), 3.25);
}

#[test]
fn members_of_every_kind_stored_or_deflated_in_batches_of_any_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two_rows.npz");
    // two rows each: records (nested, subarrays, v3 names), Fortran tensors, text, complex
    archive(
        &path,
        &[
            ("sub", "record/subarray.npy", Compression::Stored),
            ("cube", "shape/2x3x4_F_be_u2.npy", deflated()),
            ("text", "shape/2x2_F_U3.npy", Compression::Stored),
            ("utf8", "header/utf8_name_v3.npy", deflated()),
            ("nested", "record/nested_3_levels.npy", deflated()),
            ("points", "record/subarray_of_record.npy", Compression::Stored),
            ("z", "shape/2x3_F_c8.npy", deflated()),
        ],
    );
    for rows in [1, 2, 5] {
        let seen = table_round_trip(&path, None, rows).unwrap();
        assert_eq!(seen, Seen { members: 7, batches: 2usize.div_ceil(rows) }, "batches of {rows}");
    }
    let r = NpzBatchReader::from_path(&path).unwrap();
    let s = r.schema();
    assert!(matches!(s.field(0).data_type(), DataType::Struct(f) if f.len() == 3), "a record member is a Struct");
    assert!(matches!(s.field(1).data_type(), DataType::FixedSizeList(_, 12)), "an N-d member is a tensor column");
    assert_eq!(s.field(3).metadata()[VERSION_KEY], "3.0");
    assert_eq!(s.field(1).metadata()["numpy.fortran_order"], "True");

    // six rows, with datetimes of days outside Date32 and long doubles as raw bytes
    let six = dir.path().join("six.npz");
    archive(
        &six,
        &[
            ("i", "scalar/be_i4.npy", deflated()),
            ("c", "scalar/le_c16.npy", Compression::Stored),
            ("s", "string/S5.npy", deflated()),
            ("b", "scalar/i1.npy", Compression::Stored),
        ],
    );
    assert_eq!(table_round_trip(&six, None, 4).unwrap(), Seen { members: 4, batches: 2 });
    let eight = dir.path().join("eight.npz");
    archive(
        &eight,
        &[
            ("d", "datetime/le_M8_D.npy", deflated()),
            ("t", "datetime/be_M8_25s.npy", Compression::Stored),
            ("n", "datetime/le_m8_ns.npy", deflated()),
        ],
    );
    assert_eq!(table_round_trip(&eight, None, 3).unwrap(), Seen { members: 3, batches: 3 });
    // default batches: one of all rows
    let (_, b) = all_batches(NpzBatchReader::from_path(&six).unwrap()).unwrap();
    assert_eq!(b.iter().map(RecordBatch::num_rows).collect::<Vec<_>>(), [6]);
}

#[test]
fn members_of_different_lengths_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ragged.npz");
    archive(&path, &[("f", "scalar/le_f8.npy", Compression::Stored), ("i", "scalar/le_i4.npy", deflated())]);
    let e = NpzBatchReader::from_path(&path).unwrap_err();
    assert_eq!(e.path(), Some(path.as_path()));
    assert_eq!(e.member(), Some("i.npy"));
    let text = e.to_string();
    for part in ["ragged.npz", "'i.npy': 6 rows, where member 'f.npy' has 15", "one at a time"] {
        assert!(text.contains(part), "{text}");
    }
    // one at a time, in any order
    for names in [["f"], ["i"]] {
        assert_eq!(table_round_trip(&path, Some(&names), 4).unwrap().members, 1);
    }
    let e = NpzBatchReader::from_path_with(
        &path,
        NpzTableOptions::new().members(&["i", "i.npy"]).convert(&ConvertOptions::new()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("asked for twice"), "{e}");
    let e = NpzBatchReader::from_path_with(
        &path,
        NpzTableOptions::new().members(&["nope"]).convert(&ConvertOptions::new()),
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }) && e.to_string().contains("no such array"), "{e}");
}

#[test]
fn an_empty_archive_is_a_table_of_no_columns_and_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.npz");
    Writer::create(&path).unwrap().finish().unwrap();
    let (schema, batches) = all_batches(NpzBatchReader::from_path(&path).unwrap()).unwrap();
    assert!(schema.fields().is_empty() && batches.is_empty());
    let copy = dir.path().join("copy.npz");
    write(&copy, schema, &batches).unwrap();
    assert!(std::fs::read(&copy).unwrap() == std::fs::read(&path).unwrap());
    // members of no rows: a table of no rows that writes the members back
    let zero = dir.path().join("zero.npz");
    archive(&zero, &[("a", "shape/0_i4.npy", Compression::Stored), ("b", "shape/0_i4.npy", deflated())]);
    assert_eq!(table_round_trip(&zero, None, 4).unwrap(), Seen { members: 2, batches: 0 });
}

#[test]
fn the_residue_column_of_a_member_keeps_its_padding_and_bool_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // a `b1` member with a True byte of 2 (NumPy reads any nonzero byte as True)
    let mut b1 = fixture("scalar/b1.npy");
    let r = npy_core::NpyReader::from_reader(&b1[..]).unwrap();
    let at = r.data_offset() + (0..5).find(|&i| b1[r.data_offset() + i] == 1).unwrap();
    b1[at] = 2;
    let path = dir.path().join("bools.npz");
    let mut w = Writer::create(&path).unwrap();
    w.add_raw_from_with("flags.npy", b1.len() as u64, &b1[..], deflated()).unwrap();
    let aligned = fixture("record/aligned.npy");
    w.add_raw_from_with("rec.npy", aligned.len() as u64, &aligned[..], Compression::Stored).unwrap();
    w.finish().unwrap();
    let e = NpzBatchReader::from_path(&path).unwrap_err();
    assert!(is_length_error(&e), "5 flags, 4 records: {e}");
    let members = |names: &[&str], options: &ConvertOptions| {
        all_batches(
            NpzBatchReader::from_path_with(&path, NpzTableOptions::new().members(names).convert(options)).unwrap(),
        )
        .unwrap()
    };
    let (schema, batches) = members(&["flags"], ConvertOptions::new().residue(true));
    assert_eq!(schema.field(1).name(), &format!("{RESIDUE_PREFIX}flags"));
    assert_eq!(schema.field(1).metadata()[RESIDUE_KEY], "true");
    let copy = dir.path().join("copy.npz");
    write(&copy, schema, &batches).unwrap();
    assert!(Reader::from_path(&copy).unwrap().read_raw("flags").unwrap() == b1, "byte for byte with the residue");
    let (schema, batches) = members(&["flags"], &ConvertOptions::new());
    write(&copy, schema, &batches).unwrap();
    let back = Reader::from_path(&copy).unwrap().read_raw("flags").unwrap();
    assert!(back != b1 && back[at] == 1, "without it, True is written as 1");
    assert_eq!(table_round_trip(&path, Some(&["rec"]), 3).unwrap().members, 1);
    // a residue column goes with its member
    let (schema, batches) = members(&["flags"], ConvertOptions::new().residue(true));
    let lone = Arc::new(Schema::new(vec![schema.field(1).clone()]));
    let e = NpzBatchWriter::create(dir.path().join("lone.npz"), lone).unwrap_err();
    assert!(e.to_string().contains("has no column 'flags'"), "{e}");
    assert_eq!(batches[0].num_rows(), 5);
}

#[test]
fn corrupt_members_are_errors_naming_the_archive_and_member() {
    let dir = tempfile::tempdir().unwrap();
    for compression in [Compression::Stored, deflated()] {
        let path = dir.path().join("bad.npz");
        archive(&path, &[("a", "scalar/le_f8.npy", compression), ("b", "scalar/be_f8.npy", compression)]);
        let info = Reader::from_path(&path).unwrap().members()[1].clone();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = (info.data_start.unwrap() + info.compressed_size - 3) as usize;
        bytes[last] ^= 0x55;
        std::fs::write(&path, &bytes).unwrap();
        let reader =
            NpzBatchReader::from_path_with(&path, NpzTableOptions::new().convert(ConvertOptions::new().batch_rows(4)))
                .unwrap();
        let results: Vec<_> = reader.collect();
        assert_eq!(results.iter().filter(|r| r.is_err()).count(), 1, "{compression:?}: one error ends the stream");
        let Err(arrow_schema::ArrowError::ExternalError(e)) = results.last().unwrap() else { panic!("an error") };
        let e = e.downcast_ref::<npy_core::Error>().unwrap();
        assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{compression:?}: {e}");
        assert_eq!((e.path(), e.member()), (Some(path.as_path()), Some("b.npy")), "{e}");
    }
}

#[test]
fn a_failed_write_leaves_no_archive_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npz");
    archive(&src, &[("a", "scalar/le_i4.npy", deflated()), ("b", "scalar/be_i2.npy", Compression::Stored)]);
    let (schema, batches) = all_batches(NpzBatchReader::from_path(&src).unwrap()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("t.npz");
    let listing = || std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>();
    // a batch whose values do not fit (a null in an integer member): refused at the batch,
    // then dropped
    let a = batches[0].column(0).as_primitive::<Int32Type>();
    let with_null: arrow_array::Int32Array = a.iter().enumerate().map(|(i, v)| v.filter(|_| i != 1)).collect();
    let mut columns = batches[0].columns().to_vec();
    columns[0] = Arc::new(with_null);
    let bad = RecordBatch::try_new(batches[0].schema(), columns).unwrap();
    let mut w = NpzBatchWriter::create(&path, schema.clone()).unwrap();
    w.write(&batches[0]).unwrap();
    let e = w.write(&bad).unwrap_err();
    assert_eq!((e.path(), e.member()), (Some(path.as_path()), Some("a.npy")), "{e}");
    assert!(e.to_string().contains("null"), "{e}");
    // the members may differ in length now: the writer goes no further
    let e = w.write(&batches[0].slice(0, 0)).unwrap_err();
    assert!(e.to_string().contains("an earlier batch failed"), "{e}");
    drop(w);
    assert!(listing().is_empty(), "{:?}", listing());
    // finishing after a failed batch: refused, an old archive untouched
    std::fs::write(&path, b"old").unwrap();
    let mut w = NpzBatchWriter::create(&path, schema.clone()).unwrap();
    w.write(&bad).unwrap_err();
    let e = w.finish().unwrap_err();
    assert_eq!(e.path(), Some(path.as_path()), "{e}");
    assert_eq!(listing(), ["t.npz"]);
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    // a batch of another shape
    let mut w = NpzBatchWriter::create(&path, schema.clone()).unwrap();
    let e = w
        .write(
            &RecordBatch::try_new(
                Arc::new(Schema::new(vec![schema.field(0).clone()])),
                vec![batches[0].column(0).clone()],
            )
            .unwrap(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("a batch of 1 columns for an archive of 2"), "{e}");
    drop(w);
    // a directory that does not exist
    let e = NpzBatchWriter::create(out.path().join("no/such.npz"), schema).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e}");
    assert_eq!(listing(), ["t.npz"]);
}

#[test]
fn deflate_on_request_and_the_same_members() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npz");
    archive(&src, &[("a", "scalar/le_i4.npy", Compression::Stored), ("b", "scalar/be_i2.npy", Compression::Stored)]);
    let (schema, batches) = all_batches(NpzBatchReader::from_path(&src).unwrap()).unwrap();
    let path = dir.path().join("deflated.npz");
    let mut w = NpzBatchWriter::create(&path, schema).unwrap();
    w.compression(deflated());
    for b in &batches {
        w.write(b).unwrap();
    }
    assert_eq!(w.rows(), 6);
    w.finish().unwrap();
    let mut r = Reader::from_path(&path).unwrap();
    assert!(r.members().iter().all(|m| m.compression == Some(deflated().method())));
    for name in ["a", "b"] {
        assert!(r.read_raw(name).unwrap() == Reader::from_path(&src).unwrap().read_raw(name).unwrap(), "{name}");
    }
}

#[test]
fn columns_made_elsewhere_write_numpy_members_of_their_natural_dtypes() {
    let tensor_item = Arc::new(Field::new("item", DataType::Int16, false));
    let tensors = FixedSizeListArray::try_new(
        tensor_item.clone(),
        6,
        Arc::new(arrow_array::Int16Array::from((0..12).collect::<Vec<i16>>())),
        None,
    )
    .unwrap();
    let tensor_field = Field::new("grid", DataType::FixedSizeList(tensor_item, 6), false).with_metadata(
        [
            ("ARROW:extension:name".to_string(), "arrow.fixed_shape_tensor".to_string()),
            ("ARROW:extension:metadata".to_string(), r#"{"shape":[2,3]}"#.to_string()),
        ]
        .into(),
    );
    let point = StructArray::from(vec![
        (
            Arc::new(Field::new("x", DataType::Float64, true)),
            Arc::new(arrow_array::Float64Array::from(vec![0.5, -1.0])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("id", DataType::UInt8, true)),
            Arc::new(arrow_array::UInt8Array::from(vec![7, 9])) as ArrayRef,
        ),
    ]);
    // a record of one field named `values` (which alone would be an array of scalars)
    let one = StructArray::from(vec![(
        Arc::new(Field::new("values", DataType::Utf8, true)),
        Arc::new(StringArray::from(vec!["x", "yzw"])) as ArrayRef,
    )]);
    let columns: Vec<(Field, ArrayRef)> = vec![
        (Field::new("x", DataType::Float64, true), Arc::new(arrow_array::Float64Array::from(vec![Some(1.5), None]))),
        (Field::new("name", DataType::Utf8, true), Arc::new(StringArray::from(vec!["ab", "çde"]))),
        (tensor_field, Arc::new(tensors)),
        (Field::new("point", point.data_type().clone(), true), Arc::new(point)),
        (Field::new("one", one.data_type().clone(), true), Arc::new(one)),
    ];
    let schema = Arc::new(Schema::new(columns.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>()));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("made.npz");
    // text is as wide as the first batch's longest: a longer value later is refused
    let e = write(&path, schema.clone(), &[batch.slice(0, 1), batch.slice(1, 1)]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    assert_eq!((e.path(), e.member()), (Some(path.as_path()), Some("name.npy")));
    assert!(!path.exists());
    // no batches: members of no rows
    write(&path, schema.clone(), &[]).unwrap();
    let mut r = Reader::from_path(&path).unwrap();
    assert_eq!(r.read::<DynArray>("one").unwrap().dtype().descr(), "[('values', '<U1')]");
    assert_eq!(r.read::<DynArray>("grid").unwrap().shape(), [0, 2, 3]);
    write(&path, schema, std::slice::from_ref(&batch)).unwrap();
    let mut r = Reader::from_path(&path).unwrap();
    assert_eq!(r.names(), ["x", "name", "grid", "point", "one"]);
    let descr = |r: &mut Reader<_>, n: &str| {
        let a = r.read::<DynArray>(n).unwrap();
        (a.dtype().descr(), a.shape().to_vec())
    };
    assert_eq!(descr(&mut r, "x"), ("'<f8'".to_string(), vec![2]));
    assert_eq!(descr(&mut r, "name"), ("'<U3'".to_string(), vec![2]));
    assert_eq!(descr(&mut r, "grid"), ("'<i2'".to_string(), vec![2, 2, 3]));
    assert_eq!(descr(&mut r, "point"), ("[('x', '<f8'), ('id', '|u1')]".to_string(), vec![2]));
    assert_eq!(descr(&mut r, "one"), ("[('values', '<U3')]".to_string(), vec![2]));
    let x = r.read::<Vec<f64>>("x").unwrap();
    assert!(x[0] == 1.5 && x[1].is_nan(), "a null float is NaN");
    assert_eq!(r.read::<npy_core::Array<i16>>("grid").unwrap().get(&[1, 1, 2]), Some(&11));
    // each member as np.save writes it: its header is the one NumPy would write
    for name in ["x", "name", "grid", "point", "one"] {
        let bytes = r.read_raw(name).unwrap();
        let npy = npy_core::NpyReader::from_reader(&bytes[..]).unwrap();
        let (_, head) = npy.header().encode(None).unwrap();
        assert!(bytes.starts_with(&head), "{name}");
    }
    // and it reads back as the same table
    let (_, back) = all_batches(NpzBatchReader::from_path(&path).unwrap()).unwrap();
    assert_eq!(back[0].column(1).as_ref(), batch.column(1).as_ref());
    assert_eq!(
        back[0].column(2).as_fixed_size_list().values().as_ref(),
        batch.column(2).as_fixed_size_list().values().as_ref()
    );
    assert_eq!(back[0].column(3).as_struct().column(1).as_ref(), batch.column(3).as_struct().column(1).as_ref());
    assert_eq!(back[0].column(4).as_struct().column(0).as_ref(), batch.column(4).as_struct().column(0).as_ref());
}

#[test]
fn the_columns_of_one_npy_file_write_as_one_member_each() {
    let bytes = fixture("record/aligned.npy");
    let reader = BatchReader::from_npy_reader_with(
        npy_core::NpyReader::from_reader(Cursor::new(&bytes)).unwrap(),
        ConvertOptions::new().residue(true),
    )
    .unwrap();
    let schema = arrow_array::RecordBatchReader::schema(&reader);
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(schema.fields().last().unwrap().name(), RESIDUE);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fields.npz");
    write(&path, schema.clone(), &batches).unwrap();
    let mut r = Reader::from_path(&path).unwrap();
    let fields: Vec<&String> = schema.fields().iter().map(|f| f.name()).filter(|n| *n != RESIDUE).collect();
    assert_eq!(r.names().iter().collect::<Vec<_>>(), fields, "one member per field; the file's residue is left out");
    let header = npy_core::NpyReader::from_reader(&bytes[..]).unwrap().header().clone();
    let npy_core::DType::Record(record) = &header.dtype else { panic!("a record file") };
    for (i, name) in fields.into_iter().enumerate() {
        let member = r.read::<DynArray>(name).unwrap();
        assert_eq!(member.shape(), header.shape, "{name}");
        assert_eq!(member.dtype().descr(), record.field(name).unwrap().dtype.descr(), "{name}");
        let mut back = BatchReader::from_dyn(member).unwrap();
        let back = back.next_batch().unwrap().unwrap();
        assert_eq!(back.column(0).as_ref(), batches[0].column(i).as_ref(), "{name}: the field's values");
    }
}

/// `text_widths` from every batch: a plain text column, a record column with text fields
/// (which share the column's width) and a binary column get the longest value of all the
/// batches, where the first batch alone would be too narrow for the second; set after a
/// batch, or with a wrong count, it is an error naming the archive.
#[test]
fn text_widths_from_all_batches_fit_later_longer_values() {
    use arrow_array::BinaryArray;
    let batch = |names: &[&str], codes: &[&str], blobs: &[&[u8]]| {
        let station = Arc::new(StringArray::from(codes.to_vec())) as ArrayRef;
        let gain = Arc::new(arrow_array::Float64Array::from(vec![0.5; codes.len()])) as ArrayRef;
        let record = StructArray::from(vec![
            (Arc::new(Field::new("station", DataType::Utf8, true)), station),
            (Arc::new(Field::new("gain", DataType::Float64, true)), gain),
        ]);
        RecordBatch::try_from_iter([
            ("name", Arc::new(StringArray::from(names.to_vec())) as ArrayRef),
            ("site", Arc::new(record) as ArrayRef),
            ("blob", Arc::new(BinaryArray::from(blobs.to_vec())) as ArrayRef),
        ])
        .unwrap()
    };
    let batches =
        [batch(&["a", "bb"], &["X1", "Y"], &[b"\x01", b""]), batch(&["cccccc"], &["LONGER1"], &[b"\x02\x03\x04"])];
    let widths = batches
        .iter()
        .map(npy_arrow::write::text_widths)
        .reduce(|a, b| a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect())
        .unwrap();
    assert_eq!(widths, [6, 7, 3]);
    assert!(npy_arrow::write::needs_text_widths(&batches[0].schema()));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.npz");
    let mut w = NpzBatchWriter::create(&path, batches[0].schema()).unwrap();
    let e = w.text_widths(&[1, 2]).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Usage { .. }) && e.to_string().contains("2 text widths for 3 columns"),
        "{e}"
    );
    w.text_widths(&widths).unwrap();
    for b in &batches {
        w.write(b).unwrap();
    }
    let e = w.text_widths(&widths).unwrap_err();
    assert!(e.to_string().contains("before the first batch") && e.path() == Some(path.as_path()), "{e}");
    w.finish().unwrap();
    let mut r = Reader::from_path(&path).unwrap();
    assert_eq!(r.read::<DynArray>("name").unwrap().dtype().descr(), "'<U6'");
    assert_eq!(r.read::<DynArray>("site").unwrap().dtype().descr(), "[('station', '<U7'), ('gain', '<f8')]");
    assert_eq!(r.read::<DynArray>("blob").unwrap().dtype().descr(), "'|S3'");
    // The values, back through the table reader.
    let (_, got) = all_batches(NpzBatchReader::from_path(&path).unwrap()).unwrap();
    let strings = |column: &dyn Array| -> Vec<String> {
        column.as_string::<i32>().iter().map(|v| v.unwrap().to_string()).collect()
    };
    let names: Vec<String> = got.iter().flat_map(|b| strings(b.column(0))).collect();
    assert_eq!(names, ["a", "bb", "cccccc"]);
    let stations: Vec<String> = got.iter().flat_map(|b| strings(b.column(1).as_struct().column(0))).collect();
    assert_eq!(stations, ["X1", "Y", "LONGER1"]);
    let blobs: Vec<Vec<u8>> = got
        .iter()
        .flat_map(|b| b.column(2).as_binary::<i32>().iter().map(|v| v.unwrap().to_vec()).collect::<Vec<_>>())
        .collect();
    // `S` items lose trailing NUL bytes, as NumPy reads them.
    assert_eq!(blobs, [vec![1u8], vec![], vec![2, 3, 4]]);
}
