//! Fortran-order arrays of two dims larger than `WHOLE_FORTRAN_BYTES`, whose rows are
//! read a block at a time into C order instead of read whole: a local file, an object in a store,
//! and stored and deflated npz members, each row equal to what was written, and a corrupt
//! member failing before any of its rows.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{BooleanArray, RecordBatch};
use futures::TryStreamExt;
use npy_arrow::Part;
use npy_core::npz::{Compression, Writer};
use npy_core::prelude::*;
use npy_store::filter::{Filter, Kept};
use npy_store::{RemoteNpz, RowScan, WHOLE_FORTRAN_BYTES};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

/// Items per row.
const K: usize = 3;

/// Rows of an `(n, 3)` `<f8` array just over `WHOLE_FORTRAN_BYTES`.
fn rows() -> usize {
    (WHOLE_FORTRAN_BYTES as usize / (K * 8)) + 1000
}

/// The `(n, 3)` array in Fortran order whose row `i` is `[3i, 3i + 1, 3i + 2]`.
fn array(n: usize) -> Array<f64> {
    let mut data = vec![0f64; n * K];
    for j in 0..K {
        for i in 0..n {
            data[j * n + i] = (i * K + j) as f64;
        }
    }
    Array::from_shape_vec_fortran(vec![n, K], data).unwrap()
}

/// Fails unless `batches` are rows `first..first + count` of [`array`], in order.
fn check_rows(batches: &[RecordBatch], first: usize, count: usize) {
    let mut next = first;
    for batch in batches {
        let list = batch.column(0).as_fixed_size_list();
        let values = list.values().as_primitive::<Float64Type>().values();
        for (r, row) in values.chunks_exact(K).enumerate() {
            let i = next + r;
            assert_eq!(row, [(i * K) as f64, (i * K + 1) as f64, (i * K + 2) as f64], "row {i}");
        }
        next += batch.num_rows();
    }
    assert_eq!(next, first + count);
}

#[tokio::test]
async fn rows_are_reordered_from_a_file_and_an_object() {
    let n = rows();
    let bytes = array(n).write_npy_to(Vec::new()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.npy"), &bytes).unwrap();
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let location = Path::from("f.npy");
    memory.put(&location, bytes.into()).await.unwrap();
    for store in [local, memory] {
        let object = npy_store::fetch_header(&store, &location).await.unwrap();
        assert!(object.header.fortran_order);
        let layout = Arc::new(npy_arrow::Layout::new(&object.header, None).unwrap());
        for (rows, batch) in [(0..n, 100_000), (1_000_003..1_000_010, 4), (n - 5..n, 2)] {
            let mut scan = RowScan::new(object.source.clone(), object.data_offset, layout.clone());
            scan.rows(rows.clone()).batch_rows(batch);
            let batches: Vec<RecordBatch> = scan.batches().into_inner().try_collect().await.unwrap();
            check_rows(&batches, rows.start, rows.len());
        }
        // A filter judges the reordered rows too: the rows whose second item is a multiple
        // of 7 (row i's is 3i + 1), from rows 1,000 on.
        let keep = Filter::new(vec![Part::whole(0)], |batch| {
            let list = batch.column(0).as_fixed_size_list();
            let values = list.values().as_primitive::<Float64Type>().values();
            let kept: BooleanArray =
                values.chunks_exact(K).map(|row| Some((row[1] as u64).is_multiple_of(7))).collect();
            Ok(Kept::of(&kept))
        });
        let mut scan = RowScan::new(object.source.clone(), object.data_offset, layout.clone());
        scan.rows(1000..n).batch_rows(65_536).filter(keep, &layout).unwrap();
        let batches: Vec<RecordBatch> = scan.batches().into_inner().try_collect().await.unwrap();
        let got: Vec<f64> = (batches.iter())
            .flat_map(|b| b.column(0).as_fixed_size_list().values().as_primitive::<Float64Type>().values().to_vec())
            .collect();
        let want: Vec<f64> = (1000..n)
            .filter(|i| (i * K + 1).is_multiple_of(7))
            .flat_map(|i| (0..K).map(move |j| (i * K + j) as f64))
            .collect();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the filtered rows differ");
    }
}

#[tokio::test]
async fn rows_of_members_are_reordered_after_their_checks() {
    let n = rows();
    let a = array(n);
    let mut w = Writer::new(Cursor::new(Vec::new()));
    w.add("stored", &a).unwrap();
    w.add_with("deflated", &a, Compression::deflated()).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.npz"), &bytes).unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let npz = RemoteNpz::from_store(store.clone(), &Path::from("a.npz")).await.unwrap();
    for member in ["stored", "deflated"] {
        let batches: Vec<RecordBatch> =
            npz.member_batches(member, None).await.unwrap().into_inner().try_collect().await.unwrap();
        check_rows(&batches, 0, n);
    }

    // A byte of each member's data changed (the last row's last item, in the middle of the
    // stored one's bytes; the deflated one's last compressed bytes): no row comes out.
    let mut corrupt = bytes.clone();
    let last = ((n * K - 1) as f64).to_le_bytes();
    let at = corrupt.windows(8).position(|w| w == last).unwrap();
    corrupt[at] ^= 1;
    let directory = corrupt.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
    let first_entry = corrupt[..directory].windows(4).rposition(|w| w == b"PK\x01\x02").unwrap_or(directory);
    corrupt[first_entry - 3] ^= 0x40;
    std::fs::write(dir.path().join("a.npz"), &corrupt).unwrap();
    let npz = RemoteNpz::from_store(store, &Path::from("a.npz")).await.unwrap();
    for member in ["stored", "deflated"] {
        let got = match npz.member_batches(member, None).await {
            Ok(stream) => stream.into_inner().try_collect::<Vec<RecordBatch>>().await.map(|b| b.len()),
            Err(e) => Err(e),
        };
        let e = got.expect_err(member);
        assert!(e.to_string().contains(member), "{member}: {e}");
    }
}
