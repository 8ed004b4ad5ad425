//! A Rust training loop's data, both ways people keep it: 5,000 small files of one sample
//! each, loaded at once, and 16 shards of 10,000 rows of 64 `f32` as one array, read in
//! batches of 256 random rows (`cargo run --release -p npy-store --example train_batches
//! [DIR|URL...]`: shards of your own, a directory, a glob pattern or `s3://` URLs, in place
//! of the 16 it writes to a temporary directory).
//!
//! The small files go through [`npy_store::many::load_many`]: each file read by one `read`
//! (npy-core's [`Loader`](npy_core::Loader), its header parsed once for all files that
//! share it), on as many threads as CPUs. Each batch is one [`Shards::gather`]: the
//! batch's rows grouped by shard, runs of adjacent rows read together, all read side by
//! side; the batch comes back in the order asked, as an `Array<f32>` of 256 x 64. `cargo
//! xtask bench --only training` times both against NumPy.

use std::time::Instant;

use npy_core::prelude::*;
use npy_store::Shards;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);

    // One file a sample: 240 `f64`s each (2 KiB with the header).
    let samples: Vec<_> = (0..5_000).map(|i| dir.path().join(format!("sample{i:05}.npy"))).collect();
    for (i, path) in samples.iter().enumerate() {
        vec![i as f64; 240].write_npy(path)?;
    }
    let start = Instant::now();
    let loaded = npy_store::many::load_many(&samples, threads);
    let took = start.elapsed();
    for (i, array) in loaded.into_iter().enumerate() {
        // Each file's own result: an error names its file.
        assert_eq!(array?.get::<f64>(&[239])?, i as f64);
    }
    println!("{} small files loaded on {threads} threads in {took:.2?}", samples.len());

    let mut sources: Vec<String> = std::env::args().skip(1).collect();
    if sources.is_empty() {
        for shard in 0..16 {
            let rows: Vec<f32> = (0..10_000 * 64).map(|v| (shard * 10_000 * 64 + v) as f32).collect();
            let path = dir.path().join(format!("train-{shard:02}.npy"));
            Array::from_shape_vec(vec![10_000, 64], rows)?.write_npy(&path)?;
        }
        sources.push(dir.path().join("train-*.npy").to_string_lossy().into_owned());
    }
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    // npy-store's runtime for blocking callers: a worker process forked from this one
    // would make its own on first use.
    let runtime = npy_store::shared_runtime()?;
    let shards = runtime.block_on(Shards::open(&sources))?;
    println!("{} files, {} rows of {} bytes", shards.files().len(), shards.rows(), shards.row_bytes());

    // A shuffled epoch (a small LCG: no dependency for randomness), in batches of 256.
    let mut order: Vec<usize> = (0..shards.rows()).collect();
    let mut state = 57u64;
    for i in (1..order.len()).rev() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        order.swap(i, (state >> 33) as usize % (i + 1));
    }
    let start = Instant::now();
    let mut batches = 0;
    for rows in order.chunks(256) {
        let batch: Array<f32> = runtime.block_on(shards.gather(rows))?;
        assert_eq!(batch.shape()[0], rows.len());
        if sources.len() == 1 && std::env::args().len() == 1 {
            // The shards written above hold their row number * 64 + column.
            assert_eq!(batch.as_slice()[0], (rows[0] * 64) as f32);
        }
        batches += 1;
    }
    let took = start.elapsed();
    println!("{batches} batches of up to 256 rows in {took:.2?} ({:.1?} a batch)", took / batches);
    Ok(())
}
