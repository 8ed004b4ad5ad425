//! `Shards` (issue 57): many files as one array along axis 0, rows gathered in any order
//! from local files read and mapped, from stored npz members, and refusals naming files.

use npy_core::mmap::MapContract;
use npy_core::prelude::*;
use npy_store::{Shards, ShardsOptions};

/// Shards of `rows` rows each (values `row * 10 + column`, 3 columns); their paths.
fn shards(dir: &std::path::Path, rows: &[usize]) -> Vec<String> {
    let mut first = 0;
    let mut paths = Vec::new();
    for (i, &n) in rows.iter().enumerate() {
        let data: Vec<i64> = (first..first + n).flat_map(|r| (0..3).map(move |c| (r * 10 + c) as i64)).collect();
        let path = dir.join(format!("s{i:02}.npy"));
        Array::from_shape_vec(vec![n, 3], data).unwrap().write_npy(&path).unwrap();
        paths.push(path.to_string_lossy().into_owned());
        first += n;
    }
    paths
}

/// Writes a file at a path.
type Write = fn(&std::path::Path);

fn expected(rows: &[usize]) -> Vec<i64> {
    rows.iter().flat_map(|&r| (0..3).map(move |c| (r * 10 + c) as i64)).collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn gathers_as_read_and_as_mapped_alike() {
    let dir = tempfile::tempdir().unwrap();
    let paths = shards(dir.path(), &[100, 0, 1, 250, 49]);
    let mut mapped = ShardsOptions::new();
    // SAFETY: the files of this test's temporary directory are not changed once written.
    mapped.map(unsafe { MapContract::accept() });
    let pattern = dir.path().join("s*.npy").to_string_lossy().into_owned();
    let runtime = runtime();
    for options in [ShardsOptions::new(), mapped] {
        let all = runtime.block_on(Shards::open_with(&[pattern.as_str()], &options)).unwrap();
        assert_eq!(all.files(), paths);
        assert_eq!(all.header().shape, [400, 3]);
        // Every run length, repeats, both ends, and enough runs for several threads.
        let mut rows: Vec<usize> = (0..400).rev().step_by(3).chain([0, 0, 399, 100, 101, 99, 5, 6, 7, 8]).collect();
        rows.extend((0..400).step_by(2));
        let got: Array<i64> = runtime.block_on(all.gather(&rows)).unwrap();
        assert_eq!(got.shape(), [rows.len(), 3]);
        assert_eq!(got.as_slice(), expected(&rows));
        let sorted: Vec<usize> = (97..120).chain(300..310).collect();
        let got: Vec<i64> = runtime
            .block_on(all.gather_raw(&sorted))
            .unwrap()
            .chunks(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(got, expected(&sorted));
        let range: Array<i64> = runtime.block_on(all.read_rows(95..360)).unwrap();
        assert_eq!(range.as_slice(), expected(&(95..360).collect::<Vec<_>>()));
        let whole: Array<i64> = runtime.block_on(all.read()).unwrap();
        assert_eq!(whole.shape(), [400, 3]);
        assert_eq!(all.fetched(), 0);
    }
}

/// Random batches (repeats, runs, rows adjacent in the file but not in the batch), read and
/// mapped, against the rows themselves: each row lands where the batch puts it, whichever
/// thread reads it.
#[test]
fn random_batches_land_in_their_places() {
    let dir = tempfile::tempdir().unwrap();
    let paths = shards(dir.path(), &[300, 7, 500, 193]);
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut mapped = ShardsOptions::new();
    // SAFETY: the files of this test's temporary directory are not changed once written.
    mapped.map(unsafe { MapContract::accept() });
    let runtime = runtime();
    let mut seed = 57u64;
    let mut next = move |below: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize % below
    };
    for options in [ShardsOptions::new(), mapped] {
        let all = runtime.block_on(Shards::open_with(&paths, &options)).unwrap();
        for batch in 0..40 {
            // Small batches (one thread) and large ones (helpers), from a narrow window
            // (many repeats and neighbours) or the whole array.
            let (count, window) = ([5, 40, 300][batch % 3], [30, 1000][batch % 2]);
            let base = next(1000 - window + 1);
            let rows: Vec<usize> = (0..count).map(|_| base + next(window)).collect();
            let got: Array<i64> = runtime.block_on(all.gather(&rows)).unwrap();
            assert_eq!(got.as_slice(), expected(&rows), "rows {rows:?}");
        }
    }
}

#[test]
fn reads_stored_members_naming_the_archive_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for i in 0..3u8 {
        let path = dir.path().join(format!("a{i}.npz"));
        let mut npz = npy_core::npz::Writer::create(&path).unwrap();
        let x: Vec<f32> = (0..10).map(|v| f32::from(i) * 10.0 + v as f32).collect();
        npz.add("x", &x).unwrap();
        npz.add("y", &vec![0u8; 3]).unwrap();
        npz.finish().unwrap();
        names.push(path.to_string_lossy().into_owned());
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut options = ShardsOptions::new();
    options.member("x");
    let runtime = runtime();
    let all = runtime.block_on(Shards::open_with(&names, &options)).unwrap();
    assert_eq!(runtime.block_on(all.gather::<Vec<f32>>(&[29, 0, 15])).unwrap(), [29.0, 0.0, 15.0]);
    options.member("missing");
    let e = runtime.block_on(Shards::open_with(&names, &options)).unwrap_err();
    assert!(e.to_string().contains("a0.npz"), "{e}");
}

#[test]
fn refuses_what_has_no_rows_in_place_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let paths = shards(dir.path(), &[4]);
    let other = dir.path().join("other.npy");
    let runtime = runtime();
    let cases: [(Write, &str); 4] = [
        (|p| Array::from_shape_vec(vec![4, 2], vec![0i64; 8]).unwrap().write_npy(p).unwrap(), "[2]"),
        (|p| vec![0i32; 12].write_npy(p).unwrap(), "<i4"),
        (|p| Array::from_shape_vec_fortran(vec![4, 3], vec![0i64; 12]).unwrap().write_npy(p).unwrap(), "Fortran"),
        (|p| Array::from_shape_vec(vec![], vec![1.5f64]).unwrap().write_npy(p).unwrap(), "0-d"),
    ];
    for (write, said) in cases {
        write(&other);
        let e = runtime.block_on(Shards::open(&[paths[0].as_str(), other.to_str().unwrap()])).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("other.npy") && text.contains(said), "{text}");
    }
    let e = runtime.block_on(Shards::open(&[])).unwrap_err();
    assert!(e.to_string().contains("no files"), "{e}");
}

/// A gather of more reads than one thread takes (`RUNS_PER_THREAD`, 32) is split: the
/// first part read on a blocking thread, the last on the caller's. Either part failing (a
/// shard changed since open) fails the gather, naming the shard, and never leaves it
/// waiting; just under the split, one part fails alike; both failing at once, too.
#[test]
fn a_failing_part_of_a_split_gather_fails_it_naming_the_shard() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime();
    // Every third row: no gap bridged, so 17 reads of s00 and 16 of s01 (33), or 32.
    let split: Vec<usize> = (0..102).step_by(3).take(33).collect();
    let whole = &split[..32];
    for (cut, name) in [(0, "s00.npy"), (1, "s01.npy")] {
        let paths = shards(dir.path(), &[51, 51]);
        let all = runtime.block_on(Shards::open(&[paths[0].as_str(), paths[1].as_str()])).unwrap();
        let gather = |rows: &[usize]| -> Result<Array<i64>, npy_core::Error> {
            let bounded = async { tokio::time::timeout(std::time::Duration::from_secs(60), all.gather(rows)).await };
            runtime.block_on(bounded).expect("a gather waited a minute")
        };
        assert_eq!(gather(&split).unwrap().as_slice(), expected(&split));
        // Shard `cut` rewritten a row shorter.
        Array::from_shape_vec(vec![50, 3], vec![0i64; 150]).unwrap().write_npy(&paths[cut]).unwrap();
        for rows in [&split[..], whole] {
            let e = gather(rows).unwrap_err().to_string();
            assert!(e.contains(name) && e.contains("changed"), "{e}");
        }
        // The other shard still reads.
        let other: Vec<usize> = if cut == 0 { vec![51, 99] } else { vec![0, 48] };
        assert_eq!(gather(&other).unwrap().as_slice(), expected(&other));
    }
    // Both parts failing at once (the caller's and the helper's): one error, no wait.
    let paths = shards(dir.path(), &[51, 51]);
    let all = runtime.block_on(Shards::open(&[paths[0].as_str(), paths[1].as_str()])).unwrap();
    for path in &paths {
        Array::from_shape_vec(vec![50, 3], vec![0i64; 150]).unwrap().write_npy(path).unwrap();
    }
    for _ in 0..20 {
        let bounded =
            async { tokio::time::timeout(std::time::Duration::from_secs(60), all.gather::<Array<i64>>(&split)).await };
        let e = runtime.block_on(bounded).expect("a gather waited a minute").unwrap_err().to_string();
        assert!((e.contains("s00.npy") || e.contains("s01.npy")) && e.contains("changed"), "{e}");
    }
}
