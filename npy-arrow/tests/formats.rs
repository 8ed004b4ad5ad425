//! `.npy` files through Arrow IPC files, Parquet files and `.npz` members, and back, byte
//! for byte (feature `formats`); failed writes leave nothing behind.
#![cfg(feature = "formats")]

use std::path::{Path, PathBuf};

use npy_arrow::formats::{convert, convert_with, FileBatchReader, FileOptions, Format, ParquetCompression, Sink};
use npy_arrow::ConvertOptions;
use npy_core::prelude::*;
use npy_core::ErrorKind;

#[path = "../../tests/support/corpus.rs"]
mod corpus;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root")
}

/// Every non-object `.npy` under `dir`.
fn npy_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = corpus::files_with_extensions(dir, &["npy"]);
    files.retain(|p| !p.to_string_lossy().contains("/object/"));
    files
}

fn options(file: &Path) -> FileOptions {
    let mut read = npy_core::ReadOptions::new();
    read.max_header_size(1 << 20);
    let days = file.to_string_lossy().contains("M8_D");
    FileOptions::new()
        .read(&read)
        .convert(ConvertOptions::new().residue(true).days_as_int64(days).batch_rows(7))
        .clone()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    v.sort();
    v
}

#[test]
fn every_fixture_goes_through_ipc_parquet_and_npz_and_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let files = npy_files(&root().join("tests/data"));
    assert!(files.len() >= 90, "{} fixtures", files.len());
    for file in &files {
        let o = options(file);
        for (ext, member) in [("arrow", None), ("feather", None), ("parquet", None), ("npz", Some("x"))] {
            let o = match member {
                Some(m) => o.clone().member(m).clone(),
                None => o.clone(),
            };
            let (mid, back) = (dir.path().join(format!("mid.{ext}")), dir.path().join("back.npy"));
            let there = convert_with(file, &mid, &mut |_| {}, &o).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let o = o.clone();
            convert_with(&mid, &back, &mut |_| {}, &o).unwrap_or_else(|e| panic!("{} via {ext}: {e}", file.display()));
            assert!(std::fs::read(&back).unwrap() == std::fs::read(file).unwrap(), "{} via {ext}", file.display());
            let rows = npy_core::NpyReader::from_path_with(file, npy_core::ReadOptions::new().max_header_size(1 << 20))
                .unwrap()
                .header()
                .shape
                .first()
                .copied()
                .unwrap_or(1);
            assert_eq!(there.rows, rows as u64, "{}", file.display());
        }
    }
    let mut left = names(dir.path());
    left.retain(|n| !n.starts_with("mid.") && n != "back.npy");
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn formats_come_from_extensions_whatever_their_case() {
    assert_eq!(Format::of("a.NPY").unwrap(), Format::Npy);
    assert_eq!(Format::of("dir.d/a.npz").unwrap(), Format::Npz);
    assert_eq!(Format::of("a.Arrow").unwrap(), Format::Ipc);
    assert_eq!(Format::of("a.feather").unwrap(), Format::Ipc);
    assert_eq!(Format::of("a.PARQUET").unwrap(), Format::Parquet);
    for bad in ["a.csv", "noext", "a.parquet.tmp"] {
        let e = Format::of(bad).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
        assert!(e.to_string().contains(".npy, .npz, .arrow, .feather, .parquet"), "{e}");
        let e = FileBatchReader::from_path(bad).unwrap_err();
        assert_eq!((e.path(), e.access()), (Some(Path::new(bad)), Some(npy_core::Access::Read)), "{e}");
        let schema = std::sync::Arc::new(arrow_schema::Schema::empty());
        let e = Sink::create(bad, schema).unwrap_err();
        assert_eq!((e.path(), e.access()), (Some(Path::new(bad)), Some(npy_core::Access::Write)), "{e}");
    }
}

#[test]
fn parquet_compressions_and_row_groups_by_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = root().join("tests/data/record/trace_aligned.npy");
    let o = options(&file);
    for c in [
        ParquetCompression::Snappy,
        ParquetCompression::Zstd,
        ParquetCompression::Lz4,
        ParquetCompression::Gzip,
        ParquetCompression::None,
    ] {
        let (mid, back) = (dir.path().join("t.parquet"), dir.path().join("t.npy"));
        // Row groups of 200 bytes of data: several for this file's rows of 64 bytes.
        let mut o = o.clone();
        o.compression(c).row_group_bytes(200).convert(ConvertOptions::new().residue(true).batch_rows(1));
        convert_with(&file, &mid, &mut |_| {}, &o).unwrap();
        let reader = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&mid).unwrap()).unwrap();
        let meta = parquet::file::reader::FileReader::metadata(&reader);
        let rows = npy_core::NpyReader::from_path(&file).unwrap().header().shape[0];
        assert!(
            meta.num_row_groups() > 1 && meta.num_row_groups() < rows,
            "{c:?}: {} row groups",
            meta.num_row_groups()
        );
        let codec = meta.row_group(0).column(0).compression();
        let want = match c {
            ParquetCompression::Snappy => "SNAPPY",
            ParquetCompression::Zstd => "ZSTD",
            ParquetCompression::Lz4 => "LZ4_RAW",
            ParquetCompression::Gzip => "GZIP",
            _ => "UNCOMPRESSED",
        };
        assert!(format!("{codec:?}").starts_with(want), "{c:?}: {codec:?}");
        convert_with(&mid, &back, &mut |_| {}, &o).unwrap();
        assert!(std::fs::read(&back).unwrap() == std::fs::read(&file).unwrap(), "{c:?}");
    }
}

#[test]
fn a_failed_conversion_leaves_no_output_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    // Days past Date32's range fail at the batch that holds them, after others were written.
    let file = root().join("tests/data/datetime/le_M8_D.npy");
    let mut plain = FileOptions::new();
    plain.convert(ConvertOptions::new().batch_rows(1));
    for ext in ["npy", "arrow", "parquet", "npz"] {
        let out = dir.path().join(format!("out.{ext}"));
        let o = if ext == "npz" { plain.clone().member("m").clone() } else { plain.clone() };
        let e = convert_with(&file, &out, &mut |_| {}, &o).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidValue { reason, .. } if reason.contains("Date32")), "{ext}: {e}");
        assert_eq!(e.path(), Some(file.as_path()), "{ext}: {e}");
        assert!(names(dir.path()).is_empty(), "{ext}: {:?}", names(dir.path()));
    }
    // A sink dropped unfinished leaves nothing, and an old file as it was.
    let old = dir.path().join("old.parquet");
    std::fs::write(&old, b"old").unwrap();
    let input = FileBatchReader::from_path(root().join("tests/data/scalar/le_f8.npy")).unwrap();
    let mut sink = Sink::create(&old, input.schema()).unwrap();
    for b in input {
        sink.write(&b.unwrap()).unwrap();
    }
    drop(sink);
    assert_eq!(std::fs::read(&old).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["old.parquet"]);
}

#[test]
fn inputs_that_are_not_what_their_extension_says_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("tests/data/scalar/le_f8.npy");
    for ext in ["arrow", "parquet", "npz", "npy"] {
        let fake = dir.path().join(format!("fake.{ext}"));
        std::fs::write(&fake, b"not this format at all").unwrap();
        let e = convert(&fake, dir.path().join("out.npy"), &mut |_| {}).unwrap_err();
        assert_eq!(e.path(), Some(fake.as_path()), "{ext}: {e}");
        assert!(!dir.path().join("out.npy").exists());
    }
    // A member named where no file has members; an archive whose members differ in
    // length as a table; a member it lacks.
    let e = convert_with(&src, dir.path().join("o.parquet"), &mut |_| {}, FileOptions::new().member("x")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
    let npz = dir.path().join("two.npz");
    let mut w = npy_core::npz::Writer::create(&npz).unwrap();
    w.add("a", &[1u8]).unwrap();
    w.add("b", &[2u8, 3]).unwrap();
    w.finish().unwrap();
    let e = convert(&npz, dir.path().join("o.parquet"), &mut |_| {}).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
    assert_eq!(e.path(), Some(npz.as_path()), "{e}");
    let e = convert_with(&npz, dir.path().join("o.parquet"), &mut |_| {}, FileOptions::new().member("c")).unwrap_err();
    assert_eq!(e.path(), Some(npz.as_path()), "{e}");
    // A member that is not a .npy file: the error names the archive and the member.
    let junk = dir.path().join("junk.npz");
    let mut w = npy_core::npz::Writer::create(&junk).unwrap();
    w.add_raw_with("bad.npy", b"not an array", npy_core::npz::Compression::Stored).unwrap();
    w.finish().unwrap();
    let e = convert_with(&junk, dir.path().join("o.arrow"), &mut |_| {}, FileOptions::new().member("bad")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Format { .. }), "{e}");
    assert_eq!((e.path(), e.member()), (Some(junk.as_path()), Some("bad.npy")), "{e}");
    let left = names(dir.path());
    assert_eq!(left.len(), 6, "{left:?}");
}

#[test]
fn progress_counts_rows_and_ends_at_the_input_size() {
    let dir = tempfile::tempdir().unwrap();
    let file = root().join("tests/data/record/trace_aligned.npy");
    let mut o = FileOptions::new();
    o.convert(ConvertOptions::new().batch_rows(2));
    let mut seen = Vec::new();
    let done = convert_with(&file, dir.path().join("t.arrow"), &mut |p| seen.push((p.rows, p.bytes)), &o).unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    assert_eq!(done.total_bytes, size);
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1), "{seen:?}");
    assert_eq!(seen.last().copied(), Some((done.rows, size)));
    // From an IPC file, by batches.
    let mut seen = Vec::new();
    convert_with(dir.path().join("t.arrow"), dir.path().join("t.npy"), &mut |p| seen.push(p.bytes), &o).unwrap();
    assert_eq!(seen.len() as u64, done.batches);
    assert_eq!(seen.last().copied(), Some(std::fs::metadata(dir.path().join("t.arrow")).unwrap().len()));
}

/// Text whose longest value comes after the first batch: `.npy`, a whole `.npz` and one
/// member of an `.npz` are written as wide as that value (the first batch alone would give
/// `<U2`), with every value intact, and nothing is left beside the output.
#[test]
fn text_longer_in_later_batches_sets_the_width_of_npy_targets() {
    use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
    use std::sync::Arc;
    let batch = |ids: &[i32], names: &[&str]| {
        RecordBatch::try_from_iter([
            ("id", Arc::new(Int32Array::from(ids.to_vec())) as ArrayRef),
            ("name", Arc::new(StringArray::from(names.to_vec())) as ArrayRef),
        ])
        .unwrap()
    };
    let batches = [batch(&[0, 1], &["ab", "c"]), batch(&[2], &["a longer one"]), batch(&[3], &["é"])];
    let values = ["ab", "c", "a longer one", "é"];
    let dir = tempfile::tempdir().unwrap();
    for (file, member) in [("t.npy", None), ("t.npz", None), ("m.npz", Some("rows"))] {
        let path = dir.path().join(file);
        let mut options = FileOptions::new();
        if let Some(m) = member {
            options.member(m);
        }
        let mut sink = Sink::create_with(&path, batches[0].schema(), &options).unwrap();
        for b in &batches {
            sink.write(b).unwrap();
        }
        sink.finish().unwrap();
        let descrs: Vec<String> = match (file, member) {
            ("t.npy", _) => {
                use npy_core::ReadNpy;
                vec![npy_core::DynArray::read_npy(&path).unwrap().dtype().descr()]
            }
            (_, None) => {
                let mut r = npy_core::npz::Reader::from_path(&path).unwrap();
                vec![
                    r.read::<DynArray>("id").unwrap().dtype().descr(),
                    r.read::<DynArray>("name").unwrap().dtype().descr(),
                ]
            }
            (_, Some(m)) => {
                vec![npy_core::npz::Reader::from_path(&path).unwrap().read::<DynArray>(m).unwrap().dtype().descr()]
            }
        };
        let want: Vec<&str> = match (file, member) {
            ("t.npz", None) => vec!["'<i4'", "'<U12'"],
            _ => vec!["[('id', '<i4'), ('name', '<U12')]"],
        };
        assert_eq!(descrs, want, "{file}");
        // The values, read back through the same module.
        let input = FileBatchReader::from_path_with(&path, &options).unwrap();
        let mut got = Vec::new();
        for b in input {
            let b = b.unwrap();
            let column = b.column_by_name("name").unwrap();
            let strings = arrow_array::cast::AsArray::as_string::<i32>(column.as_ref());
            got.extend(strings.iter().map(|s| s.unwrap().to_string()));
        }
        assert_eq!(got, values, "{file}");
    }
    assert_eq!(names(dir.path()), ["m.npz", "t.npy", "t.npz"]);
}

/// A Parquet or IPC file whose rows were filtered by a tool that kept the schema's metadata
/// (pyarrow does): the `.npy` has the rows the file has, in the metadata's dtype and order.
#[test]
fn files_of_fewer_rows_than_their_metadata_convert_to_the_rows_they_hold() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["shape/3x4_F_i4.npy", "shape/3x4_C_i4.npy", "scalar/le_i4.npy"] {
        let src = root().join("tests/data").join(name);
        let want = npy_core::DynArray::read_npy(&src).unwrap();
        for ext in ["parquet", "arrow"] {
            let input = FileBatchReader::from_path(&src).unwrap();
            let schema = input.schema();
            let batches: Vec<_> = input.map(Result::unwrap).collect();
            // Two rows kept, written with the whole array's metadata.
            let mid = dir.path().join(format!("two.{ext}"));
            let mut sink = Sink::create(&mid, schema).unwrap();
            sink.write(&batches[0].slice(1, 2)).unwrap();
            sink.finish().unwrap();
            let back = dir.path().join("back.npy");
            convert(&mid, &back, &mut |_| {}).unwrap();
            let got = npy_core::DynArray::read_npy(&back).unwrap();
            assert_eq!(got.dtype(), want.dtype(), "{name} via {ext}");
            assert_eq!(got.shape()[0], 2, "{name} via {ext}");
            assert_eq!(got.shape()[1..], want.shape()[1..], "{name} via {ext}");
            assert_eq!(got.fortran_order(), want.fortran_order(), "{name} via {ext}");
            let (got, want) =
                (npy_core::Array::<i32>::read_npy(&back).unwrap(), npy_core::Array::<i32>::read_npy(&src).unwrap());
            // Row by row: rows 1 and 2 of the original.
            for r in 0..2 {
                for c in 0..want.shape().get(1).copied().unwrap_or(1) {
                    let index = |shape: &[usize]| if shape.len() == 1 { vec![r] } else { vec![r, c] };
                    let mut i = index(got.shape());
                    let g = got.get(&i).unwrap();
                    i[0] += 1;
                    assert_eq!(g, want.get(&i).unwrap(), "{name} via {ext} at {i:?}");
                }
            }
        }
    }
}
