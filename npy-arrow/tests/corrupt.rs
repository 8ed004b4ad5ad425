//! Corrupt Arrow IPC and Parquet files (valid ones, corrupted here) are errors naming the
//! file: never a panic, an abort, or an allocation out of proportion to the file
//! (feature `formats`, npy_arrow::guard).
#![cfg(feature = "formats")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch};
use npy_arrow::formats::{convert, FileBatchReader};
use npy_core::prelude::*;

/// Converts `path` to a `.npy` beside it; the error's text if it fails.
fn convert_error(path: &Path) -> String {
    let out = path.with_extension("out.npy");
    let e = convert(path, &out, &mut |_| {}).expect_err("a corrupt file converts");
    assert!(!out.exists());
    let text = e.to_string();
    assert!(text.starts_with(&format!("reading '{}': ", path.display())), "{text}");
    text
}

/// An Arrow IPC file of `values` (f8) written by npy, and its bytes.
fn ipc_file(dir: &Path, values: &[f64]) -> (PathBuf, Vec<u8>) {
    let (npy, arrow) = (dir.join("a.npy"), dir.join("a.arrow"));
    values.to_vec().write_npy(&npy).unwrap();
    convert(&npy, &arrow, &mut |_| {}).unwrap();
    let bytes = std::fs::read(&arrow).unwrap();
    (arrow, bytes)
}

/// The footer of an IPC file: its byte range.
fn footer_range(bytes: &[u8]) -> std::ops::Range<usize> {
    let len = bytes.len();
    let footer_len = i32::from_le_bytes(bytes[len - 10..len - 6].try_into().unwrap()) as usize;
    len - 10 - footer_len..len - 10
}

/// Replaces the one occurrence of `from` in `bytes[range]` by `to`.
fn patch(bytes: &mut [u8], range: std::ops::Range<usize>, from: &[u8], to: &[u8]) {
    let at = bytes[range.clone()].windows(from.len()).position(|w| w == from).expect("the bytes to patch");
    let at = range.start + at;
    bytes[at..at + to.len()].copy_from_slice(to);
}

#[test]
fn an_ipc_block_larger_than_the_file_is_refused_before_it_is_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut bytes) = ipc_file(dir.path(), &[1.5; 100]);
    let footer = arrow_ipc::root_as_footer(&bytes[footer_range(&bytes)]).unwrap();
    let block = footer.recordBatches().unwrap().get(0);
    let body = block.bodyLength();
    // A body of 128 GiB: arrow-ipc allocated it (and aborted) before reading.
    let range = footer_range(&bytes);
    patch(&mut bytes, range, &body.to_le_bytes(), &(1i64 << 37).to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let text = convert_error(&path);
    assert!(text.contains("Arrow IPC block 0") && text.contains("not inside"), "{text}");
}

#[test]
fn an_ipc_buffer_outside_its_body_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut bytes) = ipc_file(dir.path(), &[2.5; 100]);
    let footer = arrow_ipc::root_as_footer(&bytes[footer_range(&bytes)]).unwrap();
    let block = footer.recordBatches().unwrap().get(0);
    let meta = block.offset() as usize..block.offset() as usize + block.metaDataLength() as usize;
    // The values buffer: 800 bytes at 0. Its length becomes 1 TiB: arrow-ipc's slice of
    // the body panicked.
    let mut from = 0i64.to_le_bytes().to_vec();
    from.extend(800i64.to_le_bytes());
    let mut to = 0i64.to_le_bytes().to_vec();
    to.extend((1i64 << 40).to_le_bytes());
    patch(&mut bytes, meta, &from, &to);
    std::fs::write(&path, &bytes).unwrap();
    let text = convert_error(&path);
    assert!(text.contains("Arrow IPC block 0") && text.contains("not inside its body"), "{text}");
}

#[test]
fn a_short_or_foreign_ipc_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = ipc_file(dir.path(), &[1.0, 2.0]);
    for cut in [0, 9, 17, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let text = convert_error(&path);
        assert!(text.contains("Arrow IPC"), "{cut}: {text}");
    }
    // A footer longer than the file.
    let mut long = bytes.clone();
    let n = long.len();
    long[n - 10..n - 6].copy_from_slice(&i32::MAX.to_le_bytes());
    std::fs::write(&path, &long).unwrap();
    assert!(convert_error(&path).contains("footer of 2147483647 bytes"));
}

/// A Parquet file of one Int64 column `z` of `values`, zstd, no dictionary, pages of up to
/// 2 MiB (so the first page of zeros is a data page of up to 2 MiB that compresses to a
/// few hundred bytes).
fn int_parquet(path: &Path, values: Vec<i64>) -> Vec<u8> {
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    let batch = RecordBatch::try_from_iter([("z", Arc::new(Int64Array::from(values)) as _)]).unwrap();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_compression(Compression::ZSTD(Default::default()))
        .set_data_page_size_limit(2 << 20)
        .set_data_page_row_count_limit(usize::MAX)
        .build();
    let mut w = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    std::fs::read(path).unwrap()
}

/// The position and length of the varint of the first page header's uncompressed size
/// (field 2, right after field 1, the page type 0: bytes `15 00 15`).
fn first_uncompressed_size(bytes: &[u8]) -> (usize, usize) {
    assert_eq!(&bytes[..7], b"PAR1\x15\x00\x15");
    let len = bytes[7..].iter().position(|b| b & 0x80 == 0).unwrap() + 1;
    (7, len)
}

#[test]
fn a_parquet_page_claiming_too_much_uncompressed_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.parquet");
    let mut bytes = int_parquet(&path, vec![0; 300_000]);
    assert_eq!(convert(&path, dir.path().join("ok.npy"), &mut |_| {}).unwrap().rows, 300_000);
    let (at, len) = first_uncompressed_size(&bytes);
    // 2^20 bytes and more take 4 bytes of zigzag varint; the most 4 bytes hold is
    // 2^27 - 1 (128 MiB), claimed from a few hundred bytes compressed.
    assert_eq!(len, 4);
    bytes[at..at + 4].copy_from_slice(&[0xFE, 0xFF, 0xFF, 0x7F]);
    std::fs::write(&path, &bytes).unwrap();
    let text = convert_error(&path);
    assert!(text.contains("claims 134217727 bytes uncompressed"), "{text}");
}

#[test]
fn a_parquet_column_chunk_outside_the_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.parquet");
    // Values that do not compress: a chunk of about 80 KB.
    let bytes = int_parquet(&path, (0..10_000).map(|i: i64| i.wrapping_mul(0x1E37_79B9_7F4A_7C15)).collect());
    // Cut the data out but keep the footer: the chunk lies beyond the file's end.
    let footer_len = u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap()) as usize;
    let mut cut = b"PAR1".to_vec();
    cut.extend_from_slice(&bytes[bytes.len() - 8 - footer_len..]);
    std::fs::write(&path, &cut).unwrap();
    let text = convert_error(&path);
    assert!(text.contains("column 'z' of row group 0") && text.contains("not inside the file"), "{text}");
}

#[test]
fn every_truncation_and_flip_of_small_files_is_an_error_or_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (arrow, ipc) = ipc_file(dir.path(), &[0.25, -1.0, 3.0]);
    let pq = dir.path().join("f.parquet");
    let batch = RecordBatch::try_from_iter([("x", Arc::new(Float64Array::from(vec![1.0, 2.0, 3.5])) as _)]).unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&pq).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let parquet = std::fs::read(&pq).unwrap();
    for (path, bytes) in [(arrow, ipc), (pq, parquet)] {
        // Every byte's bits flipped one at a time (a panic fails the test; an error must
        // name the file).
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xFF;
            std::fs::write(&path, &b).unwrap();
            let out = path.with_extension("out.npy");
            if let Err(e) = convert(&path, &out, &mut |_| {}) {
                assert!(e.to_string().starts_with(&format!("reading '{}': ", path.display())), "byte {i}: {e}");
            }
            let _ = FileBatchReader::from_path(&path);
        }
    }
}

/// A file of `tests/data/corrupt` (see its README).
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/corrupt").join(name)
}

#[test]
fn a_panic_of_arrow_rs_opening_a_file_is_an_error_naming_it() {
    for (name, who) in [("schema-type-none.arrow", "arrow-ipc"), ("arrow-schema-float.parquet", "parquet")] {
        let path = fixture(name);
        let e = FileBatchReader::from_path(&path).expect_err(name);
        let text = e.to_string();
        assert!(text.starts_with(&format!("reading '{}': ", path.display())), "{text}");
        assert!(text.contains(&format!("the {who} reader failed on this file (it panicked: ")), "{text}");
        assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::InvalidData);
    }
}

#[test]
fn a_panic_of_arrow_rs_reading_a_batch_is_an_error_and_the_last() {
    let path = fixture("short-validity.arrow");
    let mut input = FileBatchReader::from_path(&path).unwrap();
    let e = input.next().unwrap().expect_err("a batch of a short validity buffer");
    assert!(e.to_string().contains("the arrow-ipc reader failed on this file (it panicked: buffer not large enough"));
    assert!(input.next().is_none());
    let dir = tempfile::tempdir().unwrap();
    let text =
        convert_error(&std::fs::copy(&path, dir.path().join("v.arrow")).map(|_| dir.path().join("v.arrow")).unwrap());
    assert!(text.contains("panicked"), "{text}");
}

#[test]
fn a_compressed_ipc_buffer_claiming_a_tebibyte_is_refused() {
    let path = fixture("lz4-claims-1tib.arrow");
    let text = FileBatchReader::from_path(&path).expect_err("a 1 TiB buffer").to_string();
    assert!(text.starts_with(&format!("reading '{}': ", path.display())), "{text}");
    assert!(text.contains("claims 1099511627776 bytes uncompressed"), "{text}");
}
