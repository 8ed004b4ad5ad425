//! Remote `.npz` archives over InMemory and LocalFileSystem stores, checked against
//! npy-core's `npz::Reader` of the same bytes.

#[path = "../../tests/support/corpus.rs"]
mod corpus;
mod support;

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use futures::{StreamExt, TryStreamExt};
use npy_arrow::ConvertOptions;
use npy_core::npz::{Compression, Method, Reader, Writer};
use npy_core::{ErrorKind, NpyReader};
use npy_store::RemoteNpz;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use support::counting::Counting;

async fn put(store: &Arc<dyn ObjectStore>, name: &str, bytes: Vec<u8>) -> Path {
    let location = Path::from(name);
    store.put(&location, bytes.into()).await.unwrap();
    location
}

fn archive() -> Vec<u8> {
    let mut w = Writer::new(Cursor::new(Vec::new()));
    let t: Vec<f64> = (0..3000).map(|i| f64::from(i) * 0.5).collect();
    let n: Vec<i32> = (0..3000).map(|i| i * 13 % 101 - 50).collect();
    let z = vec![7u16; 200_000];
    w.add("t", &t).unwrap();
    w.add_with("n", &n, Compression::deflated()).unwrap();
    w.add_with("z", &z, Compression::deflated()).unwrap();
    w.add("empty", &Vec::<u8>::new()).unwrap();
    w.add_with("empty_deflated", &Vec::<u8>::new(), Compression::deflated()).unwrap();
    w.finish().unwrap().into_inner()
}

fn columns(batch: &RecordBatch) -> Vec<ArrayRef> {
    batch.columns().to_vec()
}

/// Every member of `bytes` (put at `location`) read remotely is what `npz::Reader` reads:
/// the same members, and the same batches. Returns the members compared.
async fn compare(store: &Arc<dyn ObjectStore>, location: &Path, bytes: &[u8]) -> usize {
    let local = Reader::from_reader(Cursor::new(bytes));
    let remote = RemoteNpz::from_store(store.clone(), location).await;
    let (mut local, remote) = match (local, remote) {
        (Ok(l), Ok(r)) => (l, r),
        (Err(_), Err(e)) => {
            assert_eq!(e.path(), Some(std::path::Path::new(location.as_ref())), "{e}");
            return 0;
        }
        (l, r) => panic!("{location}: local {:?}, remote {:?}", l.err(), r.err()),
    };
    assert_eq!(remote.members(), local.members(), "{location}");
    let mut options = ConvertOptions::new();
    options.residue(true);
    let mut compared = 0;
    for name in local.names().to_vec() {
        let want = NpyReader::from_reader(&remote.member_bytes(&name).await.unwrap()[..]).map(|r| r.header().clone());
        let local_batches = local.npy(&name).and_then(|r| {
            let rows = r.header().shape.first().copied().unwrap_or(1).max(1);
            let mut b = npy_arrow::BatchReader::from_npy_reader_with(r, options.clone().batch_rows(rows))?;
            b.next_batch()
        });
        let remote_batches = match remote.member_batches_with(&name, None, options.clone().batch_rows(7)).await {
            Ok(s) => s.try_collect::<Vec<_>>().await,
            Err(e) => Err(e),
        };
        match (local_batches, remote_batches) {
            (Ok(Some(all)), Ok(parts)) => {
                let mut first = 0;
                for part in parts {
                    assert_eq!(columns(&part), columns(&all.slice(first, part.num_rows())), "{location} {name}");
                    first += part.num_rows();
                }
                assert_eq!(first, all.num_rows(), "{location} {name}");
                compared += 1;
            }
            (Ok(None), Ok(parts)) => assert!(parts.iter().all(|p| p.num_rows() == 0), "{location} {name}"),
            (Err(_), Err(e)) => {
                assert!(want.is_err() || e.member().is_some(), "{location} {name}: {e}");
                assert_eq!(e.path(), Some(std::path::Path::new(location.as_ref())), "{e}");
            }
            (l, r) => panic!("{location} {name}: local {:?}, remote {:?}", l.err(), r.err()),
        }
    }
    compared
}

#[tokio::test]
async fn stored_and_deflated_members_read_as_npz_reader_reads_them() {
    let bytes = archive();
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    for store in [local, memory] {
        let location = put(&store, "a.npz", bytes.clone()).await;
        assert_eq!(compare(&store, &location, &bytes).await, 3);
        let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
        let mut reader = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        assert_eq!(npz.read::<Vec<f64>>("t").await.unwrap(), reader.read::<Vec<f64>>("t").unwrap());
        assert_eq!(npz.read::<Vec<i32>>("n").await.unwrap(), reader.read::<Vec<i32>>("n").unwrap());
        assert_eq!(npz.read::<Vec<u16>>("z.npy").await.unwrap(), reader.read::<Vec<u16>>("z").unwrap());
        assert!(npz.read::<Vec<u8>>("empty_deflated").await.unwrap().is_empty());
        let t = npz.member("t").await.unwrap();
        assert_eq!(t.read_rows::<Vec<f64>>(100..110).await.unwrap(), reader.read::<Vec<f64>>("t").unwrap()[100..110]);
        let e = npz.member("n").await.unwrap_err();
        assert_eq!((e.member(), e.path()), (Some("n.npy"), Some(std::path::Path::new("a.npz"))), "{e}");
        let e = npz.member("nope").await.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
    }
}

#[tokio::test]
async fn the_corpus_archives_read_as_npz_reader_reads_them() {
    let Some(dir) = corpus::corpus("remote npz reads of the corpus") else { return };
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut compared = 0;
    for path in corpus::files_with_extensions(&dir, &["npz"]) {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.strip_prefix(&dir).unwrap().to_str().unwrap().to_string();
        let location = put(&store, &name, bytes.clone()).await;
        compared += compare(&store, &location, &bytes).await;
    }
    assert!(compared >= 10, "only {compared} members compared");
}

#[tokio::test]
async fn a_small_archive_opens_in_one_request_and_a_member_header_and_rows_in_two_more() {
    let counting = Counting::new(Arc::new(InMemory::new()));
    let store: Arc<dyn ObjectStore> = counting.clone();
    let mut w = Writer::new(Cursor::new(Vec::new()));
    let t: Vec<f64> = (0..3000).map(f64::from).collect();
    w.add("t", &t).unwrap();
    let location = put(&store, "s.npz", w.finish().unwrap().into_inner()).await;
    counting.reset();
    let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
    assert_eq!(counting.requests(), 1);
    let member = npz.member("t").await.unwrap();
    assert_eq!(counting.requests(), 2);
    assert_eq!(member.read_rows::<Vec<f64>>(0..10).await.unwrap(), t[..10]);
    assert_eq!(counting.requests(), 2, "the first rows came with the member's header");
    assert_eq!(member.read_rows::<Vec<f64>>(2000..2010).await.unwrap(), t[2000..2010]);
    assert_eq!(counting.requests(), 3);
    assert_eq!(counting.gets(), 3);
    npz.member("t").await.unwrap();
    assert_eq!(counting.requests(), 3, "a member's header is fetched once");
}

#[tokio::test]
async fn hostile_archives_are_errors_naming_archive_and_member() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let bytes = archive();
    let reader = Reader::from_reader(Cursor::new(&bytes)).unwrap();
    let mut members = Reader::from_reader(Cursor::new(&bytes)).unwrap().members().to_vec();
    drop(reader);
    let t = members.remove(0);
    let n = members.remove(0);

    // A stored member's byte changed: its CRC fails when read whole.
    let mut bad = bytes.clone();
    bad[(t.data_start.unwrap() + t.size - 1) as usize] ^= 0x55;
    let location = put(&store, "crc.npz", bad).await;
    let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
    let e = npz.read::<Vec<f64>>("t").await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }) && e.to_string().contains("CRC"), "{e}");
    assert_eq!((e.member(), e.path()), (Some("t.npy"), Some(std::path::Path::new("crc.npz"))), "{e}");
    // Its batches (in one batch or several, of all columns or none) end with that error,
    // before the batch of its last rows; so does its check.
    for (rows, projection) in [(100, None), (5000, None), (7, Some(&[][..]))] {
        let batches = npz.member_batches_with("t", projection, ConvertOptions::new().batch_rows(rows)).await.unwrap();
        let got: Vec<_> = batches.collect().await;
        let e = got.last().unwrap().as_ref().unwrap_err();
        assert!(e.to_string().contains("bad CRC-32"), "{e}");
        assert_eq!((e.member(), e.path()), (Some("t.npy"), Some(std::path::Path::new("crc.npz"))), "{e}");
        let released: usize = got.iter().filter_map(|b| b.as_ref().ok()).map(|b| b.num_rows()).sum();
        assert!(released < 3000, "{rows}: the last rows were given out");
    }
    let e = npz.verify_member("t").await.unwrap_err();
    assert!(e.to_string().contains("bad CRC-32"), "{e}");
    npz.verify_member("n").await.unwrap();

    // A deflated member's data damaged: bad deflate data, a bad size or a bad CRC.
    for at in [n.compressed_size / 2, n.compressed_size - 3] {
        let mut bad = bytes.clone();
        bad[(n.data_start.unwrap() + at) as usize] ^= 0xFF;
        let location = put(&store, &format!("deflate{at}.npz"), bad).await;
        let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
        for e in [
            npz.read::<Vec<i32>>("n").await.unwrap_err(),
            match npz.member_batches_with("n", None, ConvertOptions::new().batch_rows(100)).await {
                Ok(s) => s.try_collect::<Vec<_>>().await.unwrap_err(),
                Err(e) => e,
            },
        ] {
            assert_eq!(e.member(), Some("n.npy"), "{e}");
            assert_eq!(e.path().unwrap().to_str().unwrap(), location.as_ref(), "{e}");
        }
    }

    // Cut short, not a zip, empty.
    for (name, data) in [
        ("cut.npz", bytes[..bytes.len() - 30].to_vec()),
        ("text.npz", b"hello, not a zip".to_vec()),
        ("empty.npz", Vec::new()),
    ] {
        let location = put(&store, name, data).await;
        let e = RemoteNpz::from_store(store.clone(), &location).await.unwrap_err();
        assert_eq!(e.path(), Some(std::path::Path::new(name)), "{e}");
    }
    let e = RemoteNpz::from_store(store.clone(), &Path::from("nowhere.npz")).await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound), "{e}");
}

#[tokio::test]
async fn a_directory_past_the_tail_is_read_in_more_requests() {
    // Enough members that the central directory is longer than the tail fetched first.
    let mut w = Writer::new(Cursor::new(Vec::new()));
    for i in 0..1500 {
        w.add(&format!("member_with_a_longish_name_{i:05}"), &[i as u32, 1, 2]).unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    let counting = Counting::new(Arc::new(InMemory::new()));
    let store: Arc<dyn ObjectStore> = counting.clone();
    let location = put(&store, "many.npz", bytes.clone()).await;
    counting.reset();
    let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
    assert!(counting.requests() > 1);
    assert_eq!(npz.members(), Reader::from_reader(Cursor::new(&bytes)).unwrap().members());
    let last = npz.member("member_with_a_longish_name_01499").await.unwrap();
    assert_eq!(last.read_rows::<Vec<u32>>(0..3).await.unwrap(), [1499, 1, 2]);
}

#[tokio::test]
async fn every_byte_of_a_member_is_checked_in_local_files_and_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    // Members with 5 bytes after their data (NumPy ignores them; they are in the CRC).
    let t: Vec<f64> = (0..3000).map(f64::from).collect();
    let mut npy = npy_core::WriteNpy::write_npy_to(&t[..], Vec::new()).unwrap();
    npy.extend_from_slice(b"abcde");
    let mut w = Writer::new(Cursor::new(Vec::new()));
    w.add_raw_with("s.npy", &npy, Compression::Stored).unwrap();
    w.add_raw_with("d.npy", &npy, Compression::deflated()).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let members = Reader::from_reader(Cursor::new(&bytes)).unwrap().members().to_vec();
    let s = &members[0];
    let data = (s.data_start.unwrap() + s.size) as usize - 5 - t.len() * 8;
    for store in [local, memory] {
        let location = put(&store, "ok.npz", bytes.clone()).await;
        let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
        for name in ["s", "d"] {
            npz.verify_member(name).await.unwrap();
            let batches: Vec<RecordBatch> = npz
                .member_batches_with(name, None, ConvertOptions::new().batch_rows(1000))
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), t.len(), "{name}");
        }
        // A bit flipped in the first row, the last, or the bytes after the data.
        for at in [data, data + t.len() * 8 - 1, data + t.len() * 8 + 2] {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            let location = put(&store, &format!("flip{at}.npz"), bad).await;
            let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
            let e = npz.verify_member("s").await.unwrap_err();
            assert!(e.to_string().contains("bad CRC-32"), "{e}");
            for rows in [1000, 3000, 5000] {
                let got: Vec<_> = npz
                    .member_batches_with("s", None, ConvertOptions::new().batch_rows(rows))
                    .await
                    .unwrap()
                    .collect()
                    .await;
                let e = got.last().unwrap().as_ref().unwrap_err();
                assert!(e.to_string().contains("bad CRC-32"), "{at} {rows}: {e}");
                assert_eq!((e.member(), e.path()), (Some("s.npy"), Some(std::path::Path::new(location.as_ref()))));
                assert!(got.iter().filter(|b| b.is_ok()).count() < 3000usize.div_ceil(rows), "{at} {rows}");
            }
        }
    }
}

/// Archives opened at once on a runtime of two blocking threads, from a local store (which
/// reads on those threads): each directory read past the archive's tail needs a store read.
/// Directory reads that held the blocking threads while waiting for such reads hung here
/// for good with four archives or more (npy sql over a directory of archives).
#[test]
fn many_archives_open_at_once_on_few_blocking_threads() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let mut w = Writer::new(Cursor::new(Vec::new()));
    // Members of 160 KB: their local headers lie far before the 64 KiB tail.
    w.add("a", &(0..20_000).map(f64::from).collect::<Vec<_>>()).unwrap();
    w.add("b", &(0..20_000).map(|i| f64::from(i) * 2.0).collect::<Vec<_>>()).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    for k in 0..8 {
        std::fs::write(dir.path().join(format!("a{k}.npz")), &bytes).unwrap();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let paths: Vec<Path> = (0..8).map(|k| Path::from(format!("a{k}.npz"))).collect();
        let opens = paths.iter().map(|path| RemoteNpz::from_store(store.clone(), path));
        let all = tokio::time::timeout(std::time::Duration::from_secs(60), futures::future::join_all(opens));
        for npz in all.await.expect("the archives' directories were read within a minute") {
            assert_eq!(npz.unwrap().names(), ["a", "b"]);
        }
    });
}

/// A table of several stored members (one with 5 bytes after its data, which its CRC
/// covers) and a deflated one: from a local file, where the stored members' blocks are read
/// together, the same batches as from memory, where each member reads alone, at every batch
/// size; a bit flipped in any stored member's bytes fails the read, naming it.
#[tokio::test]
async fn stored_members_read_together_from_a_local_file_as_alone() {
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let t: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.25).collect();
    let mut tail = npy_core::WriteNpy::write_npy_to(&t[..], Vec::new()).unwrap();
    tail.extend_from_slice(b"abcde");
    let mut w = Writer::new(Cursor::new(Vec::new()));
    w.add("n", &(0..1000).map(|i| i * 7 - 3).collect::<Vec<i32>>()).unwrap();
    w.add_raw_with("t.npy", &tail, Compression::Stored).unwrap();
    w.add_with("d", &(0..1000u16).collect::<Vec<_>>(), Compression::deflated()).unwrap();
    w.add("rows", &(0..1000).map(|i| [i as u8; 3]).collect::<Vec<[u8; 3]>>()).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let table = |store: Arc<dyn ObjectStore>, location: Path, rows: usize| async move {
        let npz = RemoteNpz::from_store(store, &location).await?;
        let batches = npz.table_batches_with(None, ConvertOptions::new().batch_rows(rows)).await?;
        batches.try_collect::<Vec<RecordBatch>>().await
    };
    let from_memory = put(&memory, "ok.npz", bytes.clone()).await;
    let from_file = put(&local, "ok.npz", bytes.clone()).await;
    for rows in [1, 7, 333, 1000, 4096] {
        let alone = table(memory.clone(), from_memory.clone(), rows).await.unwrap();
        let together = table(local.clone(), from_file.clone(), rows).await.unwrap();
        assert_eq!(together, alone, "batches of {rows}");
        assert_eq!(together.iter().map(|b| b.num_rows()).sum::<usize>(), 1000);
    }
    let members = Reader::from_reader(Cursor::new(&bytes)).unwrap().members().to_vec();
    for info in members.iter().filter(|m| m.compression == Some(Method::Stored)) {
        let end = (info.data_start.unwrap() + info.size) as usize;
        for at in [end - info.size as usize / 2, end - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            let location = put(&local, &format!("flip{at}.npz"), bad).await;
            let e = table(local.clone(), location.clone(), 64).await.unwrap_err();
            assert!(e.to_string().contains("bad CRC-32"), "{at}: {e}");
            assert_eq!((e.member(), e.path()), (Some(&info.member[..]), Some(std::path::Path::new(location.as_ref()))));
        }
    }
}

/// An archive of `t`, `u` and the deflated `n`, the values of `archive()`'s times `k`: the
/// same sizes for every `k` but the compressed member's.
fn scaled(k: i32) -> Vec<u8> {
    let mut w = Writer::new(Cursor::new(Vec::new()));
    let t: Vec<f64> = (0..3000).map(|i| f64::from(i * k) * 0.5).collect();
    let n: Vec<i32> = (0..3000).map(|i| (i * 13 % 101 - 50) * k).collect();
    w.add("t", &t).unwrap();
    w.add("u", &t).unwrap();
    w.add_with("n", &n, Compression::deflated()).unwrap();
    w.finish().unwrap().into_inner()
}

/// Every read of an archive is of the version its directory's read found: once the object
/// is replaced (here by one of the same size and members, other values), a member's header,
/// its rows, a compressed member and the table fail, naming the archive, where they gave
/// the new bytes under the old directory.
#[tokio::test]
async fn a_replaced_archive_fails_its_reads_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    for store in [memory, local] {
        let location = put(&store, "a.npz", scaled(1)).await;
        let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
        let t = npz.member("t").await.unwrap();
        assert_eq!(t.read_rows::<Vec<f64>>(2000..2002).await.unwrap(), [1000.0, 1000.5]);
        put(&store, "a.npz", scaled(2)).await;
        let changed = |e: npy_core::Error| {
            assert!(e.to_string().contains("changed since it was opened"), "{e}");
            assert_eq!(e.path(), Some(std::path::Path::new("a.npz")), "{e}");
        };
        changed(t.read_rows::<Vec<f64>>(2000..2002).await.unwrap_err());
        changed(npz.read::<Vec<i32>>("n").await.unwrap_err());
        // A stored member's header not read before: its read is of the version opened.
        let fresh = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
        changed(npz.member("u").await.map(|_| ()).unwrap_err());
        // The table: its stored member's header was kept; its rows' read fails.
        let table = npz.table_batches(Some(&["t"])).await;
        let failed = match table {
            Ok(batches) => batches.try_collect::<Vec<_>>().await.unwrap_err(),
            Err(e) => e,
        };
        changed(failed);
        // The archive opened again reads the new version.
        assert_eq!(fresh.member("t").await.unwrap().read_rows::<Vec<f64>>(1..2).await.unwrap(), [1.0]);
    }
}

/// `read_all` gives every member, in archive order, as npy-core's reader of the same bytes
/// gives them; a member whose CRC-32 fails is the error, naming the archive and member.
#[tokio::test]
async fn read_all_gives_every_member_as_the_local_reader_does() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let bytes = archive();
    let location = put(&store, "all.npz", bytes.clone()).await;
    let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
    let remote = npz.read_all::<npy_core::DynArray>().await.unwrap();
    let local = Reader::from_reader(Cursor::new(&bytes)).unwrap().read_all::<npy_core::DynArray>().unwrap();
    assert_eq!(remote.len(), 5);
    for ((got, want), name) in remote.iter().zip(&local).zip(npz.names()) {
        assert_eq!((got.dtype(), got.shape()), (want.dtype(), want.shape()), "{name}");
        assert_eq!(got.data(), want.data(), "{name}");
    }

    let z = Reader::from_reader(Cursor::new(&bytes)).unwrap().members()[2].clone();
    let mut bad = bytes.clone();
    bad[(z.data_start.unwrap() + z.compressed_size / 2) as usize] ^= 0x55;
    let location = put(&store, "bad.npz", bad).await;
    let npz = RemoteNpz::from_store(store.clone(), &location).await.unwrap();
    let e = npz.read_all::<npy_core::DynArray>().await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
    assert_eq!((e.member(), e.path()), (Some("z.npy"), Some(std::path::Path::new("bad.npz"))), "{e}");
}

/// An archive's scan takes a filter over parts of its table's columns, as a `.npy` file's
/// and a table's scans do: it judges a member (compressed) and decodes the others at the
/// rows it kept; a filter over a record member's column is an error naming the archive.
#[tokio::test]
async fn an_archive_scan_filters_on_its_table_columns() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int32Type};
    use arrow_array::BooleanArray;
    use npy_arrow::Part;
    use npy_store::filter::{Filter, Kept};

    let mut w = Writer::new(Cursor::new(Vec::new()));
    let (_, mut meta) =
        npy_core::header::Header::new("[('t0', '<f8')]".parse().unwrap(), vec![3000]).encode(None).unwrap();
    meta.extend((0..3000).flat_map(|i| f64::from(i).to_le_bytes()));
    w.add("t", &(0..3000).map(|i| f64::from(i) * 0.5).collect::<Vec<f64>>()).unwrap();
    w.add_with("n", &(0..3000).map(|i| i * 13 % 101 - 50).collect::<Vec<i32>>(), Compression::deflated()).unwrap();
    w.add_raw("meta.npy", &meta).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let location = put(&store, "f.npz", bytes).await;
    let npz = RemoteNpz::from_store(store, &location).await.unwrap();
    let options = ConvertOptions::new();
    let (table, _) = npz.table_schema_with(None, &options).await.unwrap();
    let n = table.index_of("n").unwrap();
    let positive = Filter::new(vec![Part::whole(n)], |batch| {
        assert_eq!(batch.schema().field(0).name(), "n");
        let values = batch.column(0).as_primitive::<Int32Type>();
        Ok(Kept::of(&values.iter().map(|v| v.map(|v| v > 0)).collect::<BooleanArray>()))
    });
    assert!(format!("{positive:?}").starts_with("Filter { parts: ["), "{positive:?}");
    let stream = npz.checked_part_batches_with(&[("t", None)], Some(&positive), 0..3000, &options).await.unwrap();
    let batches: Vec<RecordBatch> = stream.into_inner().try_collect().await.unwrap();
    let t: Vec<f64> =
        batches.iter().flat_map(|b| b.column(0).as_primitive::<Float64Type>().values().to_vec()).collect();
    let want: Vec<f64> = (0..3000).filter(|i| i * 13 % 101 - 50 > 0).map(|i| f64::from(i) * 0.5).collect();
    assert_eq!(t, want);

    let meta = table.index_of("meta").unwrap();
    let on_record = Filter::new(vec![Part::whole(meta)], |_| Ok(Kept::All));
    let e = npz.checked_part_batches_with(&[("t", None)], Some(&on_record), 0..3000, &options).await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
    assert_eq!(e.path(), Some(std::path::Path::new("f.npz")), "{e}");
}
