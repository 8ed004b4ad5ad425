//! Zstandard members (zip method 93) read from object stores as npy-core reads them: whole,
//! as tables, in parts, in several frames; corrupt or cut ones refused naming the member
//! and the codec.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type};
use futures::TryStreamExt;
use npy_core::npz::{Compression, Writer};
use npy_store::RemoteNpz;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

const N: usize = 100_000;

fn archive() -> Vec<u8> {
    let mut w = Writer::new(Cursor::new(Vec::new()));
    let t: Vec<f64> = (0..N).map(|i| i as f64 * 0.5).collect();
    let n: Vec<i32> = (0..N as i32).map(|i| i * 13 % 101 - 50).collect();
    w.add_with("t", &t, Compression::zstd()).unwrap();
    w.add_with("n", &n, Compression::Zstd { level: 19 }).unwrap();
    w.add_with("empty", &Vec::<u8>::new(), Compression::zstd()).unwrap();
    w.finish().unwrap().into_inner()
}

async fn open(bytes: Vec<u8>) -> RemoteNpz {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let location = Path::from("z.npz");
    store.put(&location, bytes.into()).await.unwrap();
    RemoteNpz::from_store(store, &location).await.unwrap()
}

#[tokio::test]
async fn zstandard_members_read_as_written() {
    let npz = open(archive()).await;
    let t: Vec<f64> = npz.read("t").await.unwrap();
    assert_eq!(t, (0..N).map(|i| i as f64 * 0.5).collect::<Vec<_>>());
    let n: Vec<i32> = npz.read("n").await.unwrap();
    assert_eq!(n, (0..N as i32).map(|i| i * 13 % 101 - 50).collect::<Vec<_>>());
    assert!(npz.read::<Vec<u8>>("empty").await.unwrap().is_empty());

    let batches: Vec<_> = npz
        .checked_table_batches(Some(&["t", "n"]), 10..N - 10)
        .await
        .unwrap()
        .into_inner()
        .try_collect()
        .await
        .unwrap();
    let got: Vec<f64> =
        batches.iter().flat_map(|b| b.column(0).as_primitive::<Float64Type>().values().to_vec()).collect();
    assert_eq!(got, (10..N - 10).map(|i| i as f64 * 0.5).collect::<Vec<_>>());
    let got: Vec<i32> =
        batches.iter().flat_map(|b| b.column(1).as_primitive::<Int32Type>().values().to_vec()).collect();
    assert_eq!(got.len(), N - 20);
}

#[tokio::test]
async fn corrupt_zstandard_members_name_themselves() {
    let bytes = archive();
    // The first member's frame: from its magic number on.
    let frame = bytes.windows(4).position(|w| w == [0x28, 0xb5, 0x2f, 0xfd]).unwrap();
    for (at, how) in [(frame + 40, "a byte flipped"), (frame, "its magic number broken")] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x5a;
        let npz = open(bad).await;
        let e = npz.read::<Vec<f64>>("t").await.unwrap_err().to_string();
        assert!(e.contains("'t'") || e.contains("t.npy"), "{how}: {e}");
        assert!(e.contains("Zstandard") || e.contains("CRC"), "{how}: {e}");
        let table = npz.checked_table_batches(Some(&["t"]), 0..N).await;
        let failed = match table {
            Err(_) => true,
            Ok(stream) => stream.into_inner().try_collect::<Vec<_>>().await.is_err(),
        };
        assert!(failed, "{how}: a table of the corrupt member gave rows");
    }
}
