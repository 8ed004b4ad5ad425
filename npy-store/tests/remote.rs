//! Remote `.npy` reads over InMemory and LocalFileSystem stores, checked against npy-core's
//! and npy-arrow's reads of the same bytes; the requests they cost, counted.

#[path = "../../tests/support/corpus.rs"]
mod corpus;
mod support;

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use futures::{StreamExt, TryStreamExt};
use npy_arrow::ConvertOptions;
use npy_core::prelude::*;
use npy_core::{ErrorKind, NpyReader};
use npy_store::{RemoteNpy, HEADER_PREFIX};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use support::counting::Counting;

fn test_files() -> Vec<PathBuf> {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let mut files = corpus::files_with_extensions(&data, &["npy"]);
    if let Some(dir) = corpus::corpus("remote reads of the corpus") {
        files.extend(corpus::files_with_extensions(&dir, &["npy"]));
    }
    files
}

async fn put(store: &Arc<dyn ObjectStore>, name: &str, bytes: Vec<u8>) -> Path {
    let location = Path::from(name);
    store.put(&location, bytes.into()).await.unwrap();
    location
}

/// The rows of a whole file as one batch, as npy-arrow's `BatchReader` reads its bytes.
fn local_batch(file: &[u8], options: &ConvertOptions) -> npy_core::Result<RecordBatch> {
    let reader = NpyReader::from_reader(file)?;
    let rows = reader.header().shape.first().copied().unwrap_or(1);
    let mut batches = npy_arrow::BatchReader::from_npy_reader_with(reader, options.clone().batch_rows(rows.max(1)))?;
    let schema = batches.schema();
    Ok(batches.next_batch()?.unwrap_or_else(|| RecordBatch::new_empty(schema)))
}

/// A few row ranges of an array of `rows` rows: all, none, the ends, and pseudo-random
/// ones (a fixed LCG, so a failure repeats).
fn ranges(rows: usize, seed: u64) -> Vec<Range<usize>> {
    let mut out = vec![0..rows, 0..0, rows..rows, 0..rows.min(1), rows.saturating_sub(1)..rows];
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    for _ in 0..4 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let a = (x >> 33) as usize % (rows + 1);
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let b = a + (x >> 33) as usize % (rows - a + 1);
        out.push(a..b);
    }
    out
}

fn columns(batch: &RecordBatch) -> Vec<ArrayRef> {
    batch.columns().to_vec()
}

#[tokio::test]
async fn every_test_file_reads_remotely_as_npy_arrow_reads_it() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut options = ConvertOptions::new();
    options.residue(true);
    let mut compared = 0;
    for (i, path) in test_files().iter().enumerate() {
        let file = std::fs::read(path).unwrap();
        let name = format!("f{i}/{}", path.file_name().unwrap().to_str().unwrap());
        let location = put(&store, &name, file.clone()).await;
        let local = local_batch(&file, &options);
        let remote = RemoteNpy::from_store(store.clone(), &location).await;
        let (local, remote) = match (local, remote) {
            (Ok(local), Ok(remote)) => (local, remote),
            // What npy-core refuses, the remote read refuses too, naming the object.
            (Err(_), Err(e)) => {
                assert_eq!(e.path(), Some(std::path::Path::new(&name)), "{}: {e}", path.display());
                continue;
            }
            (Err(_), Ok(remote)) => {
                let e = remote.read_batch_with(0..remote.rows(), None, &options).await.unwrap_err();
                assert_eq!(e.path(), Some(std::path::Path::new(&name)), "{}: {e}", path.display());
                continue;
            }
            (Ok(_), Err(e)) => panic!("{}: npy-arrow reads it, the remote read fails: {e}", path.display()),
        };
        for rows in ranges(remote.rows(), i as u64) {
            let batch = remote.read_batch_with(rows.clone(), None, &options).await.unwrap();
            let want = local.slice(rows.start, rows.len());
            assert_eq!(columns(&batch), columns(&want), "{} rows {rows:?}", path.display());
            // The same in batches of 3 rows.
            let stream = remote.batches_with(rows.clone(), None, options.clone().batch_rows(3)).unwrap();
            let parts: Vec<RecordBatch> = stream.try_collect().await.unwrap();
            let mut first = rows.start;
            for part in parts {
                assert!(part.num_rows() == 3 || first + part.num_rows() == rows.end);
                assert_eq!(columns(&part), columns(&local.slice(first, part.num_rows())), "{}", path.display());
                first += part.num_rows();
            }
            assert_eq!(first, rows.end);
        }
        compared += 1;
    }
    assert!(compared >= 50, "only {compared} files compared");
}

#[tokio::test]
async fn typed_rows_equal_npy_core_reads() {
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let values: Vec<f64> = (0..5000).map(|i| f64::from(i) * 0.25 - 3.0).collect();
    let file = values.write_npy_to(Vec::new()).unwrap();
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let small = std::fs::read(data.join("shape/1d_i2.npy")).unwrap();
    let small_values: Vec<i16> = NpyReader::from_reader(&small[..]).unwrap().read().unwrap();
    for store in [local, memory] {
        let location = put(&store, "big.npy", file.clone()).await;
        let npy = RemoteNpy::from_store(store.clone(), &location).await.unwrap();
        for rows in ranges(values.len(), 7) {
            assert_eq!(npy.read_rows::<Vec<f64>>(rows.clone()).await.unwrap(), values[rows.clone()], "{rows:?}");
        }
        let location = put(&store, "small.npy", small.clone()).await;
        let npy = RemoteNpy::from_store(store.clone(), &location).await.unwrap();
        for rows in ranges(small_values.len(), 3) {
            assert_eq!(npy.read_rows::<Vec<i16>>(rows.clone()).await.unwrap(), small_values[rows.clone()]);
        }
        let e = npy.read_rows::<Vec<i8>>(0..1).await.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::DtypeMismatch { .. }), "{e}");
        assert_eq!(e.path(), Some(std::path::Path::new("small.npy")));
    }
}

#[tokio::test]
async fn header_and_ten_rows_cost_one_request_inside_the_prefix_and_two_past_it() {
    let inner: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let counting = Counting::new(inner);
    let store: Arc<dyn ObjectStore> = counting.clone();
    let values: Vec<i32> = (0..100_000).map(|i| i * 7 - 11).collect();
    let location = put(&store, "rows.npy", values.write_npy_to(Vec::new()).unwrap()).await;
    for (rows, requests) in [(0..10, 1), (500..510, 1), (50_000..50_010, 2), (99_990..100_000, 2)] {
        // Rows inside the prefix fetched with the header need no more request.
        let inside = (rows.end * 4 + 128) <= HEADER_PREFIX;
        assert_eq!(inside, requests == 1);
        for batch in [false, true] {
            counting.reset();
            let npy = RemoteNpy::from_store(store.clone(), &location).await.unwrap();
            if batch {
                let got = npy.read_batch(rows.clone(), None).await.unwrap();
                assert_eq!(got.num_rows(), 10);
                // A batch is one ranged GET whatever the prefix holds.
                assert_eq!(counting.requests(), 2, "{rows:?} as a batch");
            } else {
                assert_eq!(npy.read_rows::<Vec<i32>>(rows.clone()).await.unwrap(), values[rows.clone()]);
                assert_eq!(counting.requests(), requests, "{rows:?}");
            }
            assert_eq!(counting.gets(), counting.requests());
        }
    }
}

#[tokio::test]
async fn hostile_objects_are_errors_naming_them() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let values: Vec<u64> = (0..2000).collect();
    let file = values.write_npy_to(Vec::new()).unwrap();
    let offset = NpyReader::from_reader(&file[..]).unwrap().data_offset();

    // Truncated in the data: the object's size (from the header's GET) is too small for
    // the header's shape.
    let location = put(&store, "cut.npy", file[..offset + 1000 * 8 + 5].to_vec()).await;
    let e = RemoteNpy::from_store(store.clone(), &location).await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
    assert_eq!(e.path(), Some(std::path::Path::new("cut.npy")), "{e}");
    // Rows past the end.
    let whole = put(&store, "whole.npy", file.clone()).await;
    let npy = RemoteNpy::from_store(store.clone(), &whole).await.unwrap();
    let e = npy.read_rows::<Vec<u64>>(1990..2001).await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
    assert!(e.to_string().starts_with("reading 'whole.npy'"), "{e}");

    // Bad magic, a header cut short, a huge header length claim (v2: 4 GiB), missing.
    let mut bad_magic = file.clone();
    bad_magic[1] = b'X';
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    huge.extend_from_slice(b"{'descr': '<u8'");
    for (name, bytes) in [("magic.npy", bad_magic), ("short.npy", file[..40].to_vec()), ("huge.npy", huge)] {
        let location = put(&store, name, bytes).await;
        let e = RemoteNpy::from_store(store.clone(), &location).await.unwrap_err();
        assert_eq!(e.path(), Some(std::path::Path::new(name)), "{e}");
    }
    let e = RemoteNpy::from_store(store.clone(), &Path::from("nowhere.npy")).await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound), "{e}");
    assert!(e.to_string().starts_with("reading 'nowhere.npy'"), "{e}");
}

#[tokio::test]
async fn projections_decode_chosen_columns() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let file = std::fs::read(data.join("record/trace_aligned.npy")).unwrap();
    let location = put(&store, "trace.npy", file.clone()).await;
    let npy = RemoteNpy::from_store(store.clone(), &location).await.unwrap();
    let options = ConvertOptions::new();
    let all = local_batch(&file, &options).unwrap();
    let width = all.num_columns();
    assert!(width >= 3);
    let projection = [width - 1, 0];
    let got = npy.read_batch_with(0..npy.rows(), Some(&projection), &options).await.unwrap();
    assert_eq!(columns(&got), columns(&all.project(&projection).unwrap()));
    let e = npy.read_batch_with(0..1, Some(&[width]), &options).await.unwrap_err();
    assert!(e.to_string().starts_with("reading 'trace.npy'"), "{e}");
}

/// Local files scanned through maps (`RowScan::map`) decode what the
/// reads decode: every test file and the corpus, row ranges in small batches, all columns
/// and the first or the last alone; an in-memory object ignores the contract and streams.
#[tokio::test]
async fn mapped_scans_of_local_files_equal_reads() {
    use npy_core::mmap::MapContract;
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    // SAFETY: the files of this test's temporary directory are not changed once written.
    let contract = unsafe { MapContract::accept() };
    let mut options = ConvertOptions::new();
    options.residue(true);
    let mut compared = 0;
    for (i, path) in test_files().iter().enumerate() {
        let file = std::fs::read(path).unwrap();
        let Ok(want) = local_batch(&file, &options) else { continue };
        let name = format!("f{i}/{}", path.file_name().unwrap().to_str().unwrap());
        for store in [&local, &memory] {
            let location = put(store, &name, file.clone()).await;
            let object = npy_store::fetch_header(store, &location).await.unwrap();
            let layout = npy_arrow::Layout::new_with(&object.header, Some(object.version), &options).unwrap();
            let columns_of = layout.schema().fields().len();
            // All columns, the first alone and the last alone.
            let mut projections: Vec<Vec<usize>> = vec![(0..columns_of).collect()];
            projections.extend([0, columns_of.saturating_sub(1)].iter().filter(|&&c| c < columns_of).map(|&c| vec![c]));
            for projection in projections {
                let layout = Arc::new(layout.project(&projection).unwrap());
                let want = want.project(&projection).unwrap();
                // Batches of 3 rows, or of a fiftieth of a long file's.
                let batch = (layout.rows() / 50).max(3);
                for rows in ranges(layout.rows(), i as u64) {
                    let scan = |map: Option<MapContract>| {
                        let mut scan =
                            npy_store::RowScan::new(object.source.clone(), object.data_offset, layout.clone());
                        scan.rows(rows.clone()).batch_rows(batch);
                        if let Some(contract) = map {
                            scan.map(contract);
                        }
                        scan.batches().try_collect::<Vec<RecordBatch>>()
                    };
                    let (mapped, read) = (scan(Some(contract)).await, scan(None).await);
                    let got = match (mapped, read) {
                        (Ok(mapped), Ok(_)) => mapped,
                        // Text that a column cannot hold without the residue: the same error.
                        (Err(m), Err(r)) => {
                            assert_eq!(m.to_string(), r.to_string(), "{}", path.display());
                            continue;
                        }
                        (m, r) => panic!("{} rows {rows:?}: mapped {:?}, read {:?}", path.display(), m.err(), r.err()),
                    };
                    let mut first = rows.start;
                    for part in got {
                        let expected = want.slice(first, part.num_rows());
                        assert_eq!(columns(&part), columns(&expected), "{} rows {rows:?}", path.display());
                        first += part.num_rows();
                    }
                    assert_eq!(first, rows.end, "{} rows {rows:?}", path.display());
                }
            }
        }
        compared += 1;
    }
    assert!(compared >= 50, "only {compared} files compared");
}

/// A mapped scan of a file cut short is an error naming it, never a `SIGBUS`: the map
/// covers only bytes the file has.
#[tokio::test]
async fn mapped_scans_of_short_files_are_errors() {
    use npy_core::mmap::MapContract;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    // SAFETY: the files of this test's temporary directory are not changed once written.
    let contract = unsafe { MapContract::accept() };
    let file = (0..5000).map(f64::from).collect::<Vec<_>>().write_npy_to(Vec::new()).unwrap();
    let whole = put(&store, "whole.npy", file.clone()).await;
    let object = npy_store::fetch_header(&store, &whole).await.unwrap();
    let layout = Arc::new(npy_arrow::Layout::new(&object.header, None).unwrap());
    let cut = object.data_offset as usize + 4000 * 8 + 5;
    let short = put(&store, "short.npy", file[..cut].to_vec()).await;
    let short = Arc::new(npy_store::Source::of_object(store.clone(), &short).await.unwrap());
    let stream = npy_store::RowScan::new(short, object.data_offset, layout)
        .rows(3000..5000)
        .batch_rows(500)
        .map(contract)
        .batches();
    let e = stream.try_collect::<Vec<_>>().await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
    assert_eq!(e.path(), Some(std::path::Path::new("short.npy")), "{e}");
}

/// A mapped file cut short during a scan (its contract broken on purpose) fails the
/// next block with an error naming the file, before a page past its end is touched
/// (which would be `SIGBUS`): each block's pages are mapped in first.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_mapped_file_cut_short_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let location = Path::from("cut.npy");
    let file = (0..100_000i64).collect::<Vec<_>>().write_npy_to(Vec::new()).unwrap();
    store.put(&location, file.into()).await.unwrap();
    let object = npy_store::fetch_header(&store, &location).await.unwrap();
    let layout = Arc::new(npy_arrow::Layout::new(&object.header, None).unwrap());
    // SAFETY: broken on purpose below, but no byte past the new end is ever touched: the
    // block's pages are mapped in (and fail) before it is decoded.
    let contract = unsafe { npy_core::mmap::MapContract::accept() };
    let mut scan = npy_store::RowScan::new(object.source, object.data_offset, layout);
    scan.batch_rows(10_000).map(contract);
    let mut batches = scan.batches();
    assert_eq!(batches.next().await.unwrap().unwrap().num_rows(), 10_000);
    std::fs::OpenOptions::new().write(true).open(dir.path().join("cut.npy")).unwrap().set_len(100_000).unwrap();
    let e = loop {
        match batches.next().await.expect("an error before the end") {
            Ok(batch) => assert!(batch.num_rows() == 10_000, "a short batch"),
            Err(e) => break e,
        }
    };
    assert!(e.to_string().starts_with("reading 'cut.npy'") && e.to_string().contains("past the file's end"), "{e}");
}

#[tokio::test]
async fn reads_give_any_read_npy_type() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let grid = Array::from_shape_vec(vec![4, 3], (0..12u32).collect()).unwrap();
    let location = put(&store, "grid.npy", grid.write_npy_to(Vec::new()).unwrap()).await;
    let npy = RemoteNpy::from_store(store.clone(), &location).await.unwrap();
    assert_eq!(npy.read::<Array<u32>>().await.unwrap(), grid);
    let rows = npy.read_rows::<Array<u32>>(1..3).await.unwrap();
    assert_eq!((rows.shape(), rows.as_slice()), (&[2, 3][..], &[3, 4, 5, 6, 7, 8][..]));
    assert_eq!(npy.read_rows::<DynArray>(3..4).await.unwrap().shape(), [1, 3]);
    // A `Vec` is 1-d, as npy-core's reads give it: rows of a 2-d array are not one.
    let e = npy.read_rows::<Vec<u32>>(0..2).await.unwrap_err();
    assert_eq!(e.path(), Some(std::path::Path::new("grid.npy")), "{e}");
}

/// An object replaced after its header was read fails the reads of its rows and its
/// batches, naming it (they are made on the condition of the ETag the header's read
/// found), for an object in memory and a local file; rows that came with the header
/// still read.
#[tokio::test]
async fn a_replaced_object_fails_its_reads_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let values: Vec<u64> = (0..2000).collect();
    let twice: Vec<u64> = values.iter().map(|v| v * 2).collect();
    for store in [memory, local] {
        let location = put(&store, "v.npy", values.write_npy_to(Vec::new()).unwrap()).await;
        let npy = RemoteNpy::from_store(store.clone(), &location).await.unwrap();
        // Pinned: an object by its ETag, a local store's file by its stamp.
        assert!(npy.object().e_tag.is_some() != npy.object().source.is_local());
        assert_eq!(npy.read_rows::<Vec<u64>>(1500..1510).await.unwrap(), values[1500..1510]);
        put(&store, "v.npy", twice.write_npy_to(Vec::new()).unwrap()).await;
        let e = npy.read_rows::<Vec<u64>>(1500..1510).await.unwrap_err();
        assert!(e.to_string().contains("changed since it was opened"), "{e}");
        assert_eq!(e.path(), Some(std::path::Path::new("v.npy")), "{e}");
        // Its batches (a RowScan on the same condition) too.
        let e = npy.read_batch(1500..1510, None).await.unwrap_err();
        assert!(e.to_string().contains("changed since it was opened"), "{e}");
        assert_eq!(e.path(), Some(std::path::Path::new("v.npy")), "{e}");
        // The first rows came with the header: no read, the version opened.
        assert_eq!(npy.read_rows::<Vec<u64>>(0..3).await.unwrap(), [0, 1, 2]);
    }
}
