//! `cargo xtask bench [--only f8|records|npz|deflate|mmap|arrow|sql|cluster|append|header|training|python|js|r[,...]]
//! [--bytes N] [--records N] [--elements N] [--traces N] [--map-bytes N] [--batches N] [--fields N]
//! [--repeat K]`:
//! npy's speed next to the machine limit, NumPy, npyz, pyarrow and npy-append-array (and
//! the JavaScript package's next to npyjs and fflate, the R package's next to base R,
//! data.table and reticulate), in one run, with the ratios the speed goals name. Fourteen
//! parts, all by default (`--only` picks some, comma-separated, run in the order below; the
//! `python` part, the npy Python package against NumPy, is `npy-python/bench.py`'s, whose
//! docs say what it times):
//!
//! - `f8`: a big `<f8` array.
//!   1. `cargo bench --bench io -- --dir <target>/bench --bytes N --repeat K --keep`
//!      (`benches/io.rs`) writes `le.npy` (`<f8`) and `be.npy` (`>f8`) of N data bytes
//!      (default 1 GiB) and times npy's reads and writes (the `Vec<f64>` as `<f8`, and as
//!      `>f8` through `WriteOptions::byte_order`: issue 19's W2), the machine limits (page
//!      cache into a huge-page buffer, also with a second CPU faulting its pages in, as
//!      npy's large reads do; a `fallocate`d file) and a plain `std::fs::read`.
//!   2. In the same rounds (`--peer PYTHON`: a `xtask/bench.py serve f8` process that
//!      times each of its runs when the target asks), `np.load` and `np.save` on the same
//!      files (`np.save` of the `>f8` array too): NumPy's runs interleave with npy's, so the
//!      noise of this shared machine falls on both alike.
//!   3. Then npy's write and `np.save` as a user times them (`write_over`, `np_save_over`):
//!      each in a loop of its own over its own last file, nothing removed, flushed or
//!      touched in between, after two untimed runs (`benches/common`'s `run_user_loops`;
//!      the rounds above remove each file, flush dirty pages and touch
//!      memory first, so no run there pays for freeing an old file or for page cache
//!      memory that sat free).
//! - `records`: Simon's seismic `Trace` records (`examples/seismic.rs`).
//!   1. `cargo bench --bench records -- --dir <target>/bench --records N --repeat K --keep`
//!      (`benches/records.rs`) writes N records (default 4,000,000) in NumPy's `align=True`
//!      layout (`traces_aligned.npy`, 304 bytes a record, 1.13 GiB) and its packed layout
//!      (`traces_packed.npy`, 293 bytes, 1.09 GiB), and times npy's reads (matched layout;
//!      packed file into the aligned struct, the conversion path; packed into a Rust-layout
//!      struct; packed into a `#[repr(C, packed)]` struct, a bulk copy) and writes
//!      (aligned; packed from both structs), the machine limits for each file, and npyz's
//!      derive read and write of the packed file. Issue 19's W3 and W4 goals: the packed
//!      struct's read and write, and the aligned write, at or below NumPy's time.
//!   2. In the same rounds (`--peer`, as for `f8`), `xtask/bench.py serve records` checks
//!      once that `np.load` sees the dtypes and values npy wrote, then times `np.load` of
//!      both files and `np.save` of both arrays. Each side writes the records its library
//!      read from these files. Then writes and `np.save` as a user times them, as for
//!      `f8`, like for like: the aligned, plain-derive (`Trace`, converted to the packed
//!      layout) and packed-memory writes over their last files, and the aligned and
//!      plain-derive writes to a new file each run.
//! - `npz`: 8 arrays of N `f64`s (`--elements`, default 4,000,000: 256 MB in all).
//!   1. `cargo bench --bench npz` (`benches/npz.rs`) times npy writing and reading them as
//!      8 plain `.npy` files, as one archive of stored members, and as one deflated archive
//!      (level 6, members compressed in parallel; read all at once, members inflating in
//!      parallel, `read_all`, and one by one by name).
//!   2. `xtask/bench.py npz` checks that `np.load` reads npy's archives, then times
//!      `np.savez`, `np.savez_compressed`, 8 `np.save`s and the matching loads.
//! - `deflate`: one array of each kind people save deflated (`--traces`, default 100,000:
//!   the traces' four columns, and 20 times as many random floats, small integers, words,
//!   zeros and random-walk floats, 40 times as many integers 0-49 and an image of a 50th as
//!   many rows of 2,048 bytes; 159 MB in all).
//!   1. `cargo bench --bench deflate -- --peer PYTHON` (`benches/deflate.rs`) starts
//!      `xtask/bench.py serve deflate`, which makes the arrays and NumPy's archive of each,
//!      then times npy's `npz::Writer` at level 6 (on every CPU and on one thread) and
//!      `np.savez_compressed` writing each array as an archive's one member, and npy's
//!      `npz::Reader` (one thread) and `np.load` reading NumPy's member, in the same rounds,
//!      and gives both members' sizes.
//! - `mmap`: a big `<f8` file (`--map-bytes`, default 4 GiB) and a 1 MiB one.
//!   1. `cargo bench --bench mmap` (`benches/mmap.rs`) times `NpyMap::from_path` of each (mean
//!      of 1,000 opens) and open + zero-copy view + sum of 1,000,000 random elements of the
//!      big one.
//!   2. `xtask/bench.py mmap` times `np.load(..., mmap_mode='r')` the same ways, with the
//!      same random indices.
//! - `arrow`: the `Trace` records (`--records`, default 4,000,000) as Arrow record batches
//!   and Parquet, npy-arrow next to pyarrow (issue 16).
//!   1. `cargo build --release -p npy-cli` builds the `npy` command (`target/release/npy`).
//!   2. `cargo bench -p npy-arrow --bench arrow` (`npy-arrow/benches/arrow.rs`) writes the
//!      `records` part's two files and times npy-arrow: `BatchReader::from_path` of each file with the default
//!      options, every batch collected in memory; the conversion alone
//!      (`BatchReader::from_dyn` of the array already in memory); the same read through a
//!      map (`from_map`, context); the batches back to each `.npy` (`BatchWriter`, not
//!      synced, byte-identical to the original); the machine limit read and write of each
//!      file. It checks its batches against the records and leaves them as an Arrow IPC
//!      file for the next step.
//!   3. `xtask/bench.py arrow` checks once that pyarrow's tables of both arrays hold the
//!      values of npy's batches, then times pyarrow's own conversion
//!      (`pa.Table.from_arrays` over the `np.load`ed array's fields: nested records as
//!      `StructArray`s, the samples as a `FixedSizeListArray`) alone and with the `np.load`,
//!      `pyarrow.parquet.write_table` (snappy) of the table alone and after `np.load` and the
//!      conversion (end to end), and `npy convert traces_packed.npy out.parquet` run as a
//!      process (end to end), whose Parquet file pyarrow must read back as its own table
//!      (checked once); a failing one is an error.
//!
//!   The goals: npy's conversion alone at least as fast as pyarrow's (the issue's words,
//!   like for like: an array in memory to Arrow data in memory); npy's file → batches at
//!   least as fast as `np.load` + pyarrow's conversion (also like for like: from the same
//!   file to the same data); `npy convert` → Parquet at least as fast as `np.load` +
//!   pyarrow → Parquet. Measured on the packed file (NumPy's default layout); the aligned
//!   file's ratios, npy's file → batches against pyarrow's conversion alone (the strictest
//!   reading), and the ratios to the machine limits are context.
//!
//! - `sql`: the `Trace` records (`--records` in all, default 4,000,000) in 16 `.npy` files
//!   of the packed layout, as one SQL table (issue 17).
//!   1. `cargo bench -p npy-datafusion --bench sql` (`npy-datafusion/benches/sql.rs`)
//!      writes the files, registers them as a table with `register_npy`, and times
//!      `SELECT avg(t0), max(samples[1]) FROM traces`, a scan of `t0` alone and a scan of
//!      every field, and the machine limit read of the files; then the same three over the
//!      files registered with `NpyReadOptions::map_local_files` (scanned through memory
//!      maps). It checks the answers against the records and leaves one in
//!      `sql_answer.json`.
//!   2. `xtask/bench.py sql` has NumPy answer the same question over the same files
//!      (`np.load` of each, `t0`'s sum and count, `samples[:, 0].max()`) and checks that
//!      the answers agree, and times `np.load` of the files alone.
//!   3. Then issue 37's five queries over `--records / 2` shot records (292 bytes each) in
//!      16 `.npy` files NumPy writes, the same rows as Parquet files pyarrow writes, and
//!      as 16 archives of a member per field (`np.savez(path, trace_id=..., ...,
//!      samples=...)`, the samples an `(n, 64)` member: a table as a NumPy user saves
//!      one), stored (`np.savez`) and deflated (`np.savez_compressed`): `npy sql` as a
//!      process (the release build with the `sql` feature) over the `.npy` files, without
//!      and with `--map-local-files`, and over each kind of archive; DuckDB over the
//!      Parquet files; `np.load` + NumPy. The answers must agree. Medians of
//!      `2 * --repeat + 1` runs; each `npy sql` row shows its process's peak resident
//!      memory (`ru_maxrss`, by `os.wait4`). In the same rounds, over the `.npy` files,
//!      `max(t0)` (a plain field), `max(samples[10])` (one element of a subarray) and
//!      `max(samples[station - station + 10])` (the same element at an index that is no
//!      constant, so every row's samples are decoded whole), checked against NumPy's.
//!
//!   The goals: the SQL query at least as fast as NumPy's `np.load` + reduction (default
//!   options: reads); the scan of one field at least 3 times as fast as the scan of every
//!   field, with the files mapped (a read copies every byte of a row whatever the query
//!   uses, so there the ratio is bounded by the copy; it is shown for context). Of the
//!   five queries (issue 37's): the three over whole rows in at most half DuckDB's median
//!   time, without the promise; the filter and the top-k in at most twice DuckDB's median
//!   time, with it. Over stored archives (issue 48), each query within 1.5 times its median
//!   time over the `.npy` files (no map either side: a member is read as a file is). Over
//!   deflated archives the ratio is context: every byte is inflated first, CPU work the
//!   `.npy` read has not, so the ratio measures zlib as much as npy. Over both kinds of
//!   archive, each query's peak resident memory at most 256 MiB (the largest of its runs),
//!   the bound npy-cli's memory tests hold `npy sql` over an archive to. One element of a
//!   subarray within 1.2 times a plain field's median time (issue 48: an element is read
//!   alone, not decoded with its whole list); the whole list's decoding against it is
//!   context.
//!
//! - `cluster`: the `sql` part's question and files on a Ballista cluster of processes
//!   (issue 35): `cargo bench -p npy-ballista --features cluster --bench cluster
//!   (`npy-ballista/benches/cluster.rs`) builds the release `npy-ballista-scheduler` and
//!   `npy-ballista-executor`, starts one scheduler and two executors as the process tests
//!   do (`npy-ballista/tests/ballista/support/processes.rs`: loopback ports the OS picks, 2 vcores
//!   each), and times the query sent to the scheduler next to the
//!   same query in one DataFusion process, NumPy's `np.load` + reduction (its `--peer`, in
//!   the same rounds) and the machine limit read.
//!
//!   The goal: the cluster at most twice one process's time (on a 2-core machine it cannot
//!   be faster; the ratio is its overhead: processes, plans, shuffles, Arrow Flight).
//!
//! - `append`: Simon's data growing by appends (issue 18): `--batches N` (default 1,000)
//!   batches of 10,000 aligned `Trace` records (3.04 GB).
//!   1. `cargo bench --bench append` (`benches/append.rs`) times one `write_npy` of all
//!      the records, the same records written as a first batch plus `N - 1` in-place
//!      appends (`npy_core::append::Appender::append_batches`; one `append` call a batch
//!      for context), both synced and not, and durable batches
//!      written with plain file calls (each batch synced, then the header).
//!   2. `xtask/bench.py append` times `np.save` of the records and npy-append-array
//!      appending them in the same batches (neither syncs).
//!
//!   The goals ("no more than writing the records once plus a constant per batch"): not
//!   synced, the appends within 10% of one `write_npy` (1,000 batches: 0.1% each); synced,
//!   no slower than the plain durable batches, whose two syncs a batch are that constant.
//!
//! - `header`: big record headers (issue 19): `--fields N` (default 2,000) fields of `<f8`
//!   with long names (`np.dtype([(f'receiver_channel_amplitude_{i:04d}', '<f8') for i in
//!   range(N)])`, 88 KB of header text, a version 2.0 header like the issue's), the same
//!   with short names (`f'f{i}'`, 35 KB), and N fields of a mixed dtype (titles, nested
//!   records with padding, subarrays, text: 79 KB, version 2.0).
//!   1. `cargo bench --bench header` (`benches/header.rs`) writes the three files and times
//!      `Header::parse` of each header's text and `NpyReader::from_path` of each
//!      file (default options: the file opened, its header read and parsed), each the
//!      median of 300 in a run; it also prints the goals' budgets as times (0.25 ms; each
//!      header at 400 MB/s).
//!   2. `xtask/bench.py header` checks that NumPy reads the headers to the dtypes npy
//!      wrote (its own `np.save` of them gives the same header bytes), then times NumPy's
//!      header read: `read_magic` and `read_array_header_1_0`/`_2_0` (`max_header_size`
//!      raised so it accepts them, as `np.load` would need) over the header's bytes in
//!      memory, and the same from the opened file (what `np.load` does before the data).
//!
//!   The goals, on the long-name header (the issue's): parsed, and read from its file with
//!   the default options, in 0.25 ms and at 400 MB/s (as ratios to those budgets). The
//!   short-name and mixed headers, and npy's times next to NumPy's, are context.
//!
//! - `training`: a training loop's reads from Rust (issue 69), as the `python` part's
//!   `small_*` and `shards_*` rows time them from Python: `--files N` (default 5,000) files
//!   of 2 KiB and 20 batches of 256 random rows of 16 shards of 100,000 x 64 `<f4`.
//!   1. `cargo bench -p npy-store --bench training -- --peer PYTHON`
//!      (`npy-store/benches/training.rs`) starts `xtask/bench.py serve training`, which
//!      writes the files and the batches' rows, then times, in the same rounds, a
//!      `std::fs::read` loop (the floor), an `npy_core::Loader` loop and
//!      `npy_store::many::load_many` against an `np.load` loop, and `Shards::gather_raw`
//!      (by `pread`, and through maps) against NumPy's maps with the rows grouped by shard;
//!      and, installed first, the Python package's `npy.load_many` and `npy.open(shards)`
//!      on the same files. The goals: the `python` part's for the same rows, and Rust's
//!      reads at most the Python package's time.
//!
//! - `js`: the JavaScript package `npy-js/` (npy-core compiled to WebAssembly) against the
//!   JavaScript readers people use, in one Node process (Node 20; the peers are the
//!   package's pinned dev dependencies: npyjs 1.2.0, fflate 0.8.3).
//!   1. `cargo xtask js`'s build (`crate::js::build`: cargo rebuilds the module only when
//!      a source changed, `npm ci` runs only when `package-lock.json` did).
//!   2. `cargo run --release --example seismic` when `<target>/seismic/traces.npy` is
//!      missing: 1,000,000 `Trace` records in NumPy's `align=True` layout (304 bytes each,
//!      290 MiB), kept for later runs.
//!   3. `npy-js/bench/inputs.py` (NumPy) makes 100 MB of `<f8` and the traces' 8 fields
//!      as plain arrays in a deflated archive (`np.savez_compressed`: `trace_id`,
//!      `receiver_x/y/z`, `t0`, `dt`, `flags`, `samples` as (n, 64) `<f4`; npyjs parses
//!      nothing but plain arrays, so a table saved for it is its columns).
//!   4. `node --expose-gc npy-js/bench/bench.mjs` first checks npy's values against the
//!      peers' and NumPy's (the archive's members against npyjs's parse of them, the
//!      traces' columns against those members and against NumPy's values of a few
//!      records), writes the same columns as an archive of Zstandard members with the
//!      package's own `NpzWriter`, then times, in rounds that interleave each npy row with
//!      its peer's (a garbage collection before each run): `load(bytes).data` of the
//!      `<f8` next to npyjs's `parse` of the same bytes (both a view; a run is the mean of
//!      10,000 calls); `load(bytes).columns()` of the traces and each column's `.data`
//!      next to one copy of the file's bytes (`new Uint8Array(n).set(bytes)`, allocation
//!      included, as the columns' allocation is: the floor of any read that gives its own
//!      memory; npyjs cannot read records at all, and a `#` line says what it throws);
//!      `loadNpz`, `get()` and `.data` of every member of the deflated archive next to
//!      fflate's `unzipSync` and npyjs's `parse` of each, and of the Zstandard archive;
//!      and it reports the module's size after `gzip -9` as a row (`bytes=`, times 0).
//!   5. `node npy-js/bench/viewer.mjs`: the viewer page (`npy-js/viewer/`) in Debian's
//!      headless Chromium, served from 127.0.0.1, each run in a new page: the traces
//!      picked in its file input to their first rows on screen (the page's own clock);
//!      the bytes it reads from the File to show row 999,999 next (a size row); for
//!      context, the page's load to its module instantiated; the image view's overview of
//!      a 4 GiB `<f4` image (32,768 x 32,768, sparse in the bench's directory) picked in
//!      the file input, its time and the bytes read (a wrapped `Blob.prototype.slice`,
//!      also a size row); and a slider step through a 2.1 GB volume (500 x 1024 x 1024
//!      `<f4`) to the next slice drawn, along its first axis and (context) its second; and
//!      the statistics of a 1 GB `<f8` column (`inputs.py`'s `column_f8.npy`) in its
//!      Statistics view, streamed from the File (count to std: one pass; its histogram a
//!      second, and the File read alone, as context).
//!
//!   The goals: npy's `<f8` view at most 1.1 times npyjs's, or at most 50 µs above it
//!   (each is a header parse: microseconds, where a ratio alone measures noise); every
//!   column of the records in at most 3 times one copy of their bytes; the deflated
//!   archive at most npyjs + fflate's time; Zstandard members faster still than npy's
//!   deflated ones; the module at most 400 KB (1,000 bytes a KB) after `gzip -9`; the
//!   viewer's first rows of the traces within 1 s of picking the file, and its scroll to
//!   the last row reading at most 1 MB (1,000,000 bytes; issue 66); the 4 GiB image's
//!   overview within 2 s from at most 16 MB (16,000,000 bytes), a slice of the volume
//!   within 0.1 s, the statistics of the 1 GB column at 500 MB/s at least (its bytes over
//!   the best time; issue 80).
//!
//! - `r`: the R package `npy-r/` (npy-core through extendr) against base R's `readBin` and
//!   `writeBin`, data.table's `fread` and reticulate + NumPy, in one R process (issue 79).
//!   1. `R CMD INSTALL --no-test-load --library=<target>/r-library npy-r` (`crate::r`: `R`
//!      and `Rscript`, Debian's `r-base-core`, provisioned first; with `NPY_R_LIBRARY` set,
//!      the package installed there is used as is).
//!   2. The seismic example's traces, as for `js` (made once, kept in `<target>/seismic`).
//!   3. `npy-r/bench/inputs.py` (NumPy) makes 100 MB of `<f8`.
//!   4. `Rscript --vanilla npy-r/bench/bench.R` (`R_LIBS`: that library) checks npy's values
//!      against `readBin`'s, NumPy's (through reticulate) and `fread`'s, writes the traces
//!      as CSV once (`data.table::fwrite`, the samples as 64 columns), then times, in
//!      rounds that interleave each npy row with its peers' (a garbage collection before
//!      each run): `read_npy` of the `<f8` next to `readBin(con, "double", n)` of the same
//!      bytes (the header skipped with a raw `readBin`); `read_npy` of the traces, every
//!      field a column, next to `readBin(f, "raw", file.size(f))`, `fread` of the CSV and
//!      `np.load` through reticulate with each field converted to R; the last 10 rows
//!      (`rows = 999991:1000000`); `write_npy` of the traces' data.frame next to `writeBin`
//!      of a raw vector of the file's bytes.
//!
//!   The goals: the `<f8` read within 1.2 times `readBin`'s (R's floor); every column of
//!   the traces within 2 times one raw `readBin` of the file; `write_npy` within 1.2 times
//!   `writeBin`'s; and, judged by `bench.R` itself (`# goal:` lines), `fread` at least 10
//!   times `read_npy`'s time and reticulate + NumPy slower than `read_npy`. A peer that is
//!   not installed (data.table; reticulate, a Python with NumPy or a reticulate that
//!   converts its arrays: Debian's reticulate 1.28 does not convert NumPy 2's) is a
//!   `# not installed:` line, its row not measured and its goal not stated: context, not a
//!   missed goal. The last rows' time is context.
//!
//! npy's writes in the goals use `WriteOptions::sync(false)` (`FileWriter::sync(false)`
//! for archives), as `np.save`, npyz and the limit write do not sync either; the default
//! (synced) `write_npy` is timed too, next to a limit write with `fsync`, for context.
//!
//! Every measurement runs K times (default 3) after one untimed warm-up round; the `python`
//! part's paired rounds and the `sql` part's five queries run 2K + 1 times (an odd count:
//! the median is a run), saves as a user times them max(K, 5) times (rounded up to odd in
//! the `python` part). A goal whose rows were not measured counts as missed. A table of
//! best and median times, GiB/s and the goal ratios (PASS/MISS on best times, or on
//! medians for the goals an issue states on medians; a memory goal on its row's peak; a
//! size goal on its row's size) is printed
//! and written to `<target>/bench/report.txt`, with a column of peak resident memory in
//! the parts that measure a process's (`rss=` in the bench lines: the largest over the
//! runs); each part's big files are deleted when it ends (at most about 4.5 GiB at a time
//! for the default sizes: the `arrow` part's two `.npy` files, its IPC file and one
//! output). Goals a part's program judges itself (`# goal: <key>: <what>: met` or `MISSED`
//! lines, as the `python` part's remote bytes, Dask memory and S3 requests) follow its
//! table, each once, and the summary counts every goal of both kinds: one missed anywhere
//! makes it say so. Such a program states its goals first (`# goals: <key> | <key>`), so a
//! goal it never judged (its branch stopped running) counts as missed, not as one fewer.
//!
//! Benchmarks report, they do not gate: a missed goal still exits 0. A measurement that
//! cannot run or gives a wrong result is an error.

mod parts;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::project::{self, Result};
use parts::{Goal, Part, PARTS};

const USAGE: &str =
    "usage: cargo xtask bench [--only f8|records|npz|deflate|mmap|arrow|sql|cluster|append|header|training|python|js|r[,...]] \
                     [--bytes N] [--records N] [--elements N] [--traces N] [--map-bytes N] [--batches N] \
                     [--fields N] [--files N] [--repeat K]";

/// Command-line settings.
#[derive(Debug, Clone, Copy)]
struct Settings {
    /// The parts to run, as bits of their place in [`PARTS`]; 0: every part.
    only: u16,
    /// Data bytes per file of the `f8` part.
    bytes: u64,
    /// Records per file of the `records` and `arrow` parts.
    records: u64,
    /// Elements per array of the `npz` part.
    elements: u64,
    /// Traces of the `deflate` part (its other kinds: 20 times as many elements).
    traces: u64,
    /// Data bytes of the `mmap` part's big file.
    map_bytes: u64,
    /// Batches of 10,000 records of the `append` part.
    batches: u64,
    /// Fields of each record dtype of the `header` part.
    fields: u64,
    /// Small files of the `training` part.
    files: u64,
    repeat: u32,
}

impl Settings {
    fn parts(&self) -> Vec<&'static Part> {
        PARTS
            .iter()
            .enumerate()
            .filter(|&(i, _)| self.only == 0 || self.only & (1 << i) != 0)
            .map(|(_, p)| *p)
            .collect()
    }

    /// The size argument of `part`'s bench and of `bench.py`.
    fn size_args(&self, part: &Part) -> [String; 2] {
        let (flag, size) = match part.name {
            "f8" | "python" => ("--bytes", self.bytes),
            "records" | "arrow" | "sql" | "cluster" => ("--records", self.records),
            "npz" => ("--elements", self.elements),
            "deflate" => ("--traces", self.traces),
            "append" => ("--batches", self.batches),
            "header" => ("--fields", self.fields),
            "training" => ("--files", self.files),
            _ => ("--bytes", self.map_bytes),
        };
        [flag.to_string(), size.to_string()]
    }
}

/// One measurement's result.
#[derive(Debug, Clone, Copy)]
struct Timing {
    best: f64,
    median: f64,
    bytes: u64,
    /// The largest peak resident memory of a measured process over its runs, in bytes
    /// (`rss=`: `bench.py` gives it for each `npy sql` run).
    rss: Option<u64>,
}

/// What a part's programs printed: their timings by row, the goals they state they judge
/// (`# goals: <key> | <key> | ...`, first), and those they judged (`# goal: <key>: <what>:
/// met` or `: MISSED` lines, as `npy-python/bench.py`'s `goal()` prints them: remote
/// bytes, Dask memory, S3 requests...), in order. Both count in the summary: a stated goal
/// never judged is missed.
#[derive(Debug, Default)]
struct Measured {
    timings: BTreeMap<String, Timing>,
    promised: Vec<String>,
    stated: Vec<(String, bool)>,
}

impl Measured {
    fn extend(&mut self, other: Measured) {
        self.timings.extend(other.timings);
        self.promised.extend(other.promised);
        self.stated.extend(other.stated);
    }
}

/// Runs `cargo xtask bench` with the arguments after `bench`.
pub fn run(args: &[&str]) -> Result<()> {
    let settings = parse_args(args)?;
    project::step("python with numpy");
    let python = project::python_with_numpy()?;
    let dir = project::target_dir().join("bench");
    project::fresh_dir(&dir)?;
    let _cleanup = Cleanup(dir.clone());
    let report_path = dir.join("report.txt");

    let mut done: Vec<(&Part, Measured)> = Vec::new();
    for part in settings.parts() {
        if part.name == "js" || part.name == "r" {
            let measured = if part.name == "js" {
                js_part(&dir, &python, settings.repeat)?
            } else {
                r_part(&dir, &python, settings.repeat)?
            };
            remove_big_files(&dir);
            done.push((part, measured));
            fs::write(&report_path, report(&done, &settings))
                .map_err(|e| format!("cannot write {}: {e}", report_path.display()))?;
            continue;
        }
        let [size_flag, size] = settings.size_args(part);
        let repeat = settings.repeat.to_string();
        project::step(&format!(
            "{}: cargo bench --bench {} ({size_flag} {size}, {repeat} runs each)",
            part.name, part.bench
        ));
        // The `arrow` and `sql` parts time the `npy` command too: its release build (with
        // the `sql` feature for `npy sql`).
        let npy = if part.name == "arrow" || part.name == "sql" {
            let features: &[&str] = if part.name == "sql" { &["--features", "sql"] } else { &[] };
            project::step(&format!("{}: cargo build --release -p npy-cli {}", part.name, features.join(" ")));
            project::run(project::cargo().args(["build", "--release", "-p", "npy-cli"]).args(features))?;
            Some(project::target_dir().join("release").join(format!("npy{}", std::env::consts::EXE_SUFFIX)))
        } else {
            None
        };
        // The `training` part's peer times the Python package beside NumPy.
        if part.name == "training" {
            crate::ci::install_python_package(&python, crate::ci::Build::Release)?;
        }
        let mut measured = if part.bench.is_empty() {
            crate::ci::install_python_package(&python, crate::ci::Build::Release)?;
            let mut script = Command::new(&python);
            script
                .arg(project::root().join("npy-python").join("bench.py"))
                .arg(&dir)
                .args([size.as_str(), repeat.as_str()]);
            run_bench_lines(&mut script)?
        } else {
            let mut cargo = project::cargo();
            cargo.args(["bench", "-p", part.package, "--bench", part.bench]);
            if !part.features.is_empty() {
                cargo.args(["--features", part.features]);
            }
            cargo.args(["--", "--dir"]).arg(&dir);
            cargo.args([size_flag.as_str(), size.as_str(), "--repeat", repeat.as_str(), "--keep"]);
            if part.peer {
                cargo.arg("--peer").arg(&python);
            }
            run_bench_lines(&mut cargo)?
        };

        if !part.peer {
            project::step(&format!("{}: python: xtask/bench.py {}", part.name, part.name));
            let mut numpy = Command::new(&python);
            numpy.arg(project::root().join("xtask").join("bench.py")).arg(part.name).arg(&dir);
            numpy.args([size.as_str(), repeat.as_str()]);
            numpy.args(npy);
            measured.extend(run_bench_lines(&mut numpy)?);
        }

        // Free the disk before the next part; keep what is measured so far.
        remove_big_files(&dir);
        done.push((part, measured));
        fs::write(&report_path, report(&done, &settings))
            .map_err(|e| format!("cannot write {}: {e}", report_path.display()))?;
    }

    project::step("report");
    print!("{}", report(&done, &settings));
    println!("report written to {}", report_path.display());
    Ok(())
}

/// The `js` part (see the module): the package built (`cargo xtask js`'s build; cargo
/// rebuilds only what changed, `npm ci` runs only when the lock file did), the seismic
/// example's traces (made once, kept in `<target>/seismic`), the inputs NumPy makes from
/// them, then `node npy-js/bench/bench.mjs` and `node npy-js/bench/viewer.mjs` (Debian's
/// Chromium provisioned first, with the build's tools).
fn js_part(dir: &Path, python: &Path, repeat: u32) -> Result<Measured> {
    project::step("js: cargo xtask js (the package's WebAssembly module and npm dev dependencies)");
    crate::provision::js(&["chromium"])?;
    crate::js::build()?;
    let traces = seismic_traces("js", python)?;
    let bench = crate::js::package_dir().join("bench");
    project::step("js: python npy-js/bench/inputs.py (100 MB and 1 GB of <f8; the traces' fields as a deflated .npz)");
    project::run(Command::new(python).arg(bench.join("inputs.py")).arg(dir).arg(&traces))?;
    project::step(&format!("js: node npy-js/bench/bench.mjs ({repeat} runs each)"));
    let mut node = Command::new("node");
    node.arg("--expose-gc").arg(bench.join("bench.mjs"));
    node.arg("--dir").arg(dir).arg("--traces").arg(&traces).arg("--python").arg(python);
    node.args(["--repeat", &repeat.to_string()]);
    let mut measured = run_bench_lines(&mut node)?;
    project::step(&format!("js: node npy-js/bench/viewer.mjs (the viewer page in headless Chromium, {repeat} runs)"));
    let mut viewer = Command::new("node");
    viewer.arg(bench.join("viewer.mjs")).arg("--traces").arg(&traces).arg("--dir").arg(dir);
    viewer.arg("--stats").arg(dir.join("column_f8.npy")).args(["--repeat", &repeat.to_string()]);
    measured.extend(run_bench_lines(&mut viewer)?);
    Ok(measured)
}

/// The seismic example's traces, `<target>/seismic/traces.npy`, made by `cargo run
/// --release --example seismic` when missing (1,000,000 aligned `Trace` records, 290 MiB;
/// NumPy checks them), kept for later runs; `part` names the step.
fn seismic_traces(part: &str, python: &Path) -> Result<PathBuf> {
    let traces = project::target_dir().join("seismic").join("traces.npy");
    if !traces.is_file() {
        project::step(&format!("{part}: cargo run --release --example seismic (1,000,000 Trace records, 290 MiB)"));
        project::run(project::cargo().args(["run", "--release", "--example", "seismic"]).env("NPY_PYTHON", python))?;
    }
    Ok(traces)
}

/// The `r` part (see the module): the package installed (`crate::r::library`), the seismic
/// example's traces, 100 MB of `<f8` NumPy makes, then `Rscript --vanilla
/// npy-r/bench/bench.R` against that library.
fn r_part(dir: &Path, python: &Path, repeat: u32) -> Result<Measured> {
    project::step("r: the npy R package (R CMD INSTALL npy-r, or $NPY_R_LIBRARY)");
    let lib = crate::r::library()?;
    let traces = seismic_traces("r", python)?;
    let bench = crate::r::package_dir().join("bench");
    project::step("r: python npy-r/bench/inputs.py (100 MB of <f8)");
    project::run(Command::new(python).arg(bench.join("inputs.py")).arg(dir))?;
    project::step(&format!("r: Rscript --vanilla npy-r/bench/bench.R ({repeat} runs each)"));
    let mut rscript = crate::r::rscript(&lib);
    rscript.arg(bench.join("bench.R")).arg("--dir").arg(dir).arg("--traces").arg(&traces);
    rscript.arg("--python").arg(python).args(["--repeat", &repeat.to_string()]);
    run_bench_lines(&mut rscript)
}

fn parse_args(args: &[&str]) -> Result<Settings> {
    let mut settings = Settings {
        only: 0,
        bytes: 1 << 30,
        records: 4_000_000,
        elements: 4_000_000,
        traces: 100_000,
        map_bytes: 4 << 30,
        batches: 1_000,
        fields: 2_000,
        files: 5_000,
        repeat: 3,
    };
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        if !matches!(
            arg,
            "--only"
                | "--bytes"
                | "--records"
                | "--elements"
                | "--traces"
                | "--map-bytes"
                | "--batches"
                | "--fields"
                | "--files"
                | "--repeat"
        ) {
            return Err(format!("unknown argument {arg:?}; {USAGE}"));
        }
        let value = *it.next().ok_or_else(|| format!("{arg} needs a value; {USAGE}"))?;
        let number = || value.parse::<u64>().map_err(|e| format!("{arg} {value}: {e}; {USAGE}"));
        match arg {
            "--only" => {
                for name in value.split(',') {
                    let Some(i) = PARTS.iter().position(|p| p.name == name) else {
                        return Err(format!(
                            "--only takes f8, records, npz, deflate, mmap, arrow, sql, cluster, append, header, training, python, js or r (or several, \
                             comma-separated), not {name:?}; {USAGE}"
                        ));
                    };
                    settings.only |= 1 << i;
                }
            }
            "--bytes" => settings.bytes = number()?,
            "--records" => settings.records = number()?,
            "--elements" => settings.elements = number()?,
            "--traces" => settings.traces = number()?,
            "--map-bytes" => settings.map_bytes = number()?,
            "--batches" => settings.batches = number()?,
            "--fields" => settings.fields = number()?,
            "--files" => settings.files = number()?,
            _ => settings.repeat = value.parse().map_err(|e| format!("--repeat {value}: {e}; {USAGE}"))?,
        }
    }
    if settings.bytes < 16 || !settings.bytes.is_multiple_of(8) {
        return Err(format!("--bytes must be a multiple of 8, at least 16 (got {})", settings.bytes));
    }
    if settings.map_bytes < 16 || !settings.map_bytes.is_multiple_of(8) {
        return Err(format!("--map-bytes must be a multiple of 8, at least 16 (got {})", settings.map_bytes));
    }
    if settings.traces == 0 {
        return Err("--traces must be at least 1".to_string());
    }
    if settings.elements == 0 {
        return Err("--elements must be at least 1".to_string());
    }
    if settings.records == 0 || settings.records > i32::MAX as u64 {
        return Err(format!("--records must be between 1 and {} (got {})", i32::MAX, settings.records));
    }
    if settings.fields == 0 || settings.fields > 1_000_000 {
        return Err(format!("--fields must be between 1 and 1000000 (got {})", settings.fields));
    }
    if settings.files == 0 {
        return Err("--files must be at least 1".to_string());
    }
    if settings.repeat == 0 {
        return Err("--repeat must be at least 1".to_string());
    }
    Ok(settings)
}

/// Runs `cmd`, echoing its output as it comes, and collects its
/// `bench <name> best=<s> median=<s> bytes=<n> [rss=<bytes>]` and `# goal: ...` lines.
fn run_bench_lines(cmd: &mut Command) -> Result<Measured> {
    let shown = project::show(cmd);
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).spawn().map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    let mut measured = Measured::default();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("reading the output of `{shown}`: {e}"))?;
            println!("{line}");
            if let Some(rest) = line.strip_prefix("bench ") {
                let (name, timing) =
                    parse_line(rest).ok_or_else(|| format!("bad bench line from `{shown}`: {line}"))?;
                measured.timings.insert(name, timing);
            } else if let Some(keys) = line.strip_prefix(GOALS_LINE) {
                measured.promised.extend(keys.split(" | ").map(|key| key.trim().to_string()));
            } else if line.starts_with(GOAL_LINE) {
                measured.stated.push(parse_goal(&line).ok_or_else(|| format!("bad goal line from `{shown}`: {line}"))?);
            }
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for `{shown}`: {e}"))?;
    if !status.success() {
        return Err(format!("`{shown}` failed ({status})"));
    }
    Ok(measured)
}

/// How a goal a program judged itself starts.
const GOAL_LINE: &str = "# goal: ";

/// How the line of the goals a program states it judges starts (`# goals: a | b`).
const GOALS_LINE: &str = "# goals: ";

/// Parses `# goal: <what>: met` or `# goal: <what>: MISSED` into what and whether it was met.
fn parse_goal(line: &str) -> Option<(String, bool)> {
    let rest = line.strip_prefix(GOAL_LINE)?;
    let (what, result) = rest.rsplit_once(": ")?;
    let met = match result.trim_end() {
        "met" => true,
        "MISSED" => false,
        _ => return None,
    };
    (!what.trim().is_empty()).then(|| (what.trim().to_string(), met))
}

/// Parses `<name> best=<s> median=<s> bytes=<n> [rss=<bytes>]`.
fn parse_line(rest: &str) -> Option<(String, Timing)> {
    let mut words = rest.split_whitespace();
    let name = words.next()?.to_string();
    let mut field = |key: &str| words.next()?.strip_prefix(key)?.strip_prefix('=').map(str::to_string);
    let best = field("best")?.parse().ok()?;
    let median = field("median")?.parse().ok()?;
    let bytes = field("bytes")?.parse().ok()?;
    let rss = match words.next().and_then(|word| word.strip_prefix("rss=")) {
        Some(rss) => Some(rss.parse().ok()?),
        None => None,
    };
    Some((name, Timing { best, median, bytes, rss }))
}

/// The report: settings, then each part's measurements and goal ratios, then a summary.
fn report(done: &[(&Part, Measured)], settings: &Settings) -> String {
    let mut out = String::new();
    let thp = fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_else(|_| "unknown".into());
    let k = settings.repeat;
    let _ = writeln!(
        out,
        "npy bench: best and median of {k} runs after one untimed warm-up run ({} runs in the python part \
         and for the sql part's five queries; saves as a user times them: max({k}, 5), rounded up to odd in \
         the python part)",
        2 * k + 1
    );
    let _ = writeln!(out, "transparent huge pages: {}", thp.trim());
    let (mut missed, mut goals) = (0, 0);
    for (part, measured) in done {
        let timings = &measured.timings;
        let _ = writeln!(out);
        let _ = writeln!(out, "== {}", part.title);
        match part.name {
            "f8" => {
                let _ = writeln!(out, "{} data bytes per file ({:.3} GiB)", settings.bytes, gib(settings.bytes));
            }
            "records" | "arrow" => {
                let n = settings.records;
                let _ = writeln!(
                    out,
                    "{n} records per file: aligned {:.3} GiB, packed {:.3} GiB of data",
                    gib(n * 304),
                    gib(n * 293)
                );
            }
            "sql" | "cluster" => {
                let n = settings.records;
                let _ = writeln!(out, "{n} records in 16 files: packed {:.3} GiB of data", gib(n * 293));
                if part.name == "sql" {
                    let _ = writeln!(
                        out,
                        "{} shot records (292 B): 16 .npy files, 16 stored and 16 deflated .npz, 16 Parquet files",
                        n / 2
                    );
                }
            }
            "deflate" => {
                let _ = writeln!(
                    out,
                    "{} traces' columns, 20 times as many elements of each other kind; sizes: the members' \
                     compressed bytes",
                    settings.traces
                );
            }
            "npz" => {
                let n = settings.elements;
                let _ = writeln!(out, "8 arrays of {n} f64: {:.3} GiB of data in all", gib(8 * n * 8));
            }
            "header" => {
                let size = |name: &str| timings.get(name).map_or("n/a".to_string(), |t| format!("{} bytes", t.bytes));
                let _ = writeln!(
                    out,
                    "{} fields a record: long-name <f8 header {}, <f8 header {}, mixed header {} \
                     (preamble included)",
                    settings.fields,
                    size("parse_long"),
                    size("parse_f8"),
                    size("parse_mixed")
                );
            }
            "append" => {
                let n = settings.batches * 10_000;
                let _ = writeln!(
                    out,
                    "{} batches of 10,000 records: {n} records, {:.3} GiB of data",
                    settings.batches,
                    gib(n * 304)
                );
            }
            "training" => {
                let _ = writeln!(
                    out,
                    "{} files of 2 KiB (240 <f8); 16 shards of 100,000 x 64 <f4 (410 MB), 20 batches of 256 random rows",
                    settings.files
                );
            }
            "python" => {
                let _ = writeln!(
                    out,
                    "<f8 file: {} data bytes ({:.3} GiB), saves of half of it; 1,000,000 aligned Trace records \
                     (56 bytes each); 5 deflated members of {} f64 each; object arrays of 1,000,000 short strs, \
                     dicts of 3 keys and mixed plain values; 1,000,000 shot records (292 bytes) in 16 .npy files and as Parquet; \
                     512 MiB of <f8 for Dask (32 MiB chunks); 5,000 files of 2 KiB; 16 shards of 100,000 x 64 <f4 (410 MB); \
                     100,000 seismic traces (304 bytes) and 64 MiB of <f8 for Zstandard archives",
                    settings.bytes,
                    gib(settings.bytes),
                    settings.bytes / 8 / 4 / 5
                );
            }
            "r" => {
                let _ = writeln!(
                    out,
                    "<f8: 100,000,000 data bytes (NumPy's np.save); 1,000,000 aligned Trace records (304 B, \
                     examples/seismic.rs) read as a data.frame, as CSV (data.table::fwrite, samples as 64 columns) \
                     and written back; peers not installed: `# not installed:` lines, rows n/a"
                );
            }
            "js" => {
                let _ = writeln!(
                    out,
                    "<f8: 100,000,000 data bytes, each run the mean of 10,000 calls; 1,000,000 aligned Trace records \
                     (304 B, examples/seismic.rs) read as columns; their 8 fields as a deflated .npz \
                     (np.savez_compressed) and with Zstandard members (npy's NpzWriter); KB: 1,000 bytes"
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "big file: {} data bytes ({:.3} GiB); small file: 1 MiB; 1,000,000 random elements summed",
                    settings.map_bytes,
                    gib(settings.map_bytes)
                );
            }
        }
        let (m, g) = part_report(&mut out, part, timings);
        let (stated_missed, stated) = stated_report(&mut out, &measured.promised, &measured.stated);
        missed += m + stated_missed;
        goals += g + stated;
    }
    let _ = writeln!(out);
    if missed == 0 {
        let _ = writeln!(out, "all {goals} goals met");
    } else {
        let _ = writeln!(out, "{missed} of {goals} goals MISSED (benchmarks report, they do not fail the run)");
    }
    out
}

/// One part's table and goal ratios; returns (goals missed, goals).
fn part_report(out: &mut String, part: &Part, timings: &BTreeMap<String, Timing>) -> (usize, usize) {
    // The peak memory column only where some row measured a process's.
    let rss_column = timings.values().any(|t| t.rss.is_some());
    let rss = |text: &str| if rss_column { format!(" {text:>12}") } else { String::new() };
    let _ = writeln!(out);
    let _ = writeln!(out, "{:<54} {:>9} {:>9} {:>8}{}", "measurement", "best", "median", "GiB/s", rss("peak RSS"));
    for (name, what) in part.rows {
        match timings.get(*name) {
            // A size, not a time (its times 0): the bytes where the best time goes.
            Some(t) if is_size(t) => {
                let line = format!("{what:<54} {:>9} {:>9} {:>8}{}", kb(t.bytes), "-", "-", rss(""));
                let _ = writeln!(out, "{}", line.trim_end());
            }
            Some(t) => {
                let rate = if t.bytes == 0 { "-".to_string() } else { format!("{:.2}", gib(t.bytes) / t.best) };
                let (best, median) = (duration(t.best), duration(t.median));
                let peak = rss(&t.rss.map_or(String::new(), mib));
                let line = format!("{what:<54} {best:>9} {median:>9} {rate:>8}{peak}");
                let _ = writeln!(out, "{}", line.trim_end());
            }
            None => {
                let _ = writeln!(out, "{what:<54} {:>9} {:>9} {:>8}{}", "n/a", "n/a", "n/a", rss("n/a"));
            }
        }
    }
    let _ = writeln!(out);
    // The goal column as wide as its widest goal (`<= 1.1 or +50 µs`), 11 at least.
    let g = part.goals.iter().map(|goal| goal.3.text().chars().count()).max().unwrap_or(0).max(11);
    let _ = writeln!(
        out,
        "{:<34} {:>11} {:>13} {:>g$}  result (on best times; `med` goals on medians; MiB goals on peak RSS; \
         KB goals on sizes)",
        "goal ratio", "best ratio", "median ratio", "goal"
    );
    let mut missed = 0;
    for &(what, num, den, goal) in part.goals {
        // An RSS goal shows its row's peak, a size goal its row's size, where the others
        // show the ratio of the best times.
        let (n, d) = (timings.get(num), timings.get(den));
        let shown = match goal {
            Goal::RssAtMost(_) => n.and_then(|n| Some((mib(n.rss?), "-".to_string(), goal.passes(n, None)))),
            Goal::BytesAtMost(_) => n.map(|n| (kb(n.bytes), "-".to_string(), goal.passes(n, None))),
            Goal::SecondsAtMost(_) => n.map(|n| (duration(n.best), duration(n.median), goal.passes(n, None))),
            Goal::RateAtLeast(_) => {
                n.map(|n| (rate_text(n.bytes, n.best), rate_text(n.bytes, n.median), goal.passes(n, None)))
            }
            Goal::SizeRatioAtMost(_) => n.zip(d).map(|(n, d)| {
                (format!("{:.3}", n.bytes as f64 / d.bytes as f64), "-".to_string(), goal.passes(n, Some(d)))
            }),
            _ => n.zip(d).map(|(n, d)| {
                let (ratio, median_ratio) = (n.best / d.best, n.median / d.median);
                (format!("{ratio:.3}"), format!("{median_ratio:.3}"), goal.passes(n, Some(d)))
            }),
        };
        let Some((best, median, result)) = shown else {
            // A goal nobody measured is not met: a part that failed to time a row, or a
            // row renamed, must not read as a pass in the summary.
            let result = if matches!(goal, Goal::Context) {
                "n/a (not measured)"
            } else {
                missed += 1;
                "MISS (not measured)"
            };
            let _ = writeln!(out, "{what:<34} {:>11} {:>13} {:>g$}  {result}", "n/a", "n/a", goal.text());
            continue;
        };
        let result = match result {
            Some(true) => "PASS",
            Some(false) => {
                missed += 1;
                "MISS"
            }
            None => "context",
        };
        let _ = writeln!(out, "{what:<34} {best:>11} {median:>13} {:>g$}  {result}", goal.text());
    }
    let goals = part.goals.iter().filter(|g| !matches!(g.3, Goal::Context)).count();
    (missed, goals)
}

/// The goals a part's programs judged themselves, after its table of ratios; returns
/// (goals missed, goals). Each goal `promised` names counts once: met when its one judged
/// line says so; missed when it says so, when no line judged it (its branch did not run)
/// or when several did. A judged line of no promised goal counts as a missed goal too.
fn stated_report(out: &mut String, promised: &[String], stated: &[(String, bool)]) -> (usize, usize) {
    let of = |key: &str, what: &str| what == key || what.strip_prefix(key).is_some_and(|r| r.starts_with(": "));
    let mut missed = 0;
    for key in promised {
        let judged: Vec<&(String, bool)> = stated.iter().filter(|(what, _)| of(key, what)).collect();
        match judged.as_slice() {
            [(what, met)] => {
                missed += usize::from(!met);
                let _ = writeln!(out, "{what}  {}", if *met { "PASS" } else { "MISS" });
            }
            [] => {
                missed += 1;
                let _ = writeln!(out, "{key}: stated, never judged (its branch did not run)  MISS");
            }
            many => {
                missed += 1;
                let _ = writeln!(out, "{key}: judged {} times, not once  MISS", many.len());
            }
        }
    }
    for (what, _) in stated.iter().filter(|(what, _)| !promised.iter().any(|key| of(key, what))) {
        missed += 1;
        let _ = writeln!(out, "{what}: judged, but not among the goals the program states  MISS");
    }
    let strays = stated.iter().filter(|(what, _)| !promised.iter().any(|key| of(key, what))).count();
    (missed, promised.len() + strays)
}

/// `seconds` for the table: `0.258 s`, `18.2 ms`, `21.4 µs`.
fn duration(seconds: f64) -> String {
    if seconds >= 0.1 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-4 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.2} µs", seconds * 1e6)
    }
}

/// Whether a row is a size, not a time: its times 0, its size in `bytes=` (the `js` part's
/// module after gzip).
fn is_size(t: &Timing) -> bool {
    t.best == 0.0 && t.median == 0.0
}

/// A size for the table, in KB of 1,000 bytes: `398.5 KB`.
fn kb(bytes: u64) -> String {
    format!("{:.1} KB", bytes as f64 / 1000.0)
}

/// A rate for the table, `bytes` in `seconds`, in MB (1,000,000 bytes) a second: `625.0 MB/s`.
fn rate_text(bytes: u64, seconds: f64) -> String {
    format!("{:.1} MB/s", bytes as f64 / seconds / 1e6)
}

/// A peak resident memory for the table: `117.3 MiB`.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 30)
}

/// Deletes the big files from the bench directory when the run ends, however it ends.
#[derive(Debug)]
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        remove_big_files(&self.0);
    }
}

/// Removes everything in `dir` but `report.txt`.
fn remove_big_files(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if entry.file_name() != "report.txt" {
            let path = entry.path();
            let removed = if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
            if let Err(e) = removed {
                eprintln!("warning: cannot remove {}: {e}", path.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrow_part_is_chosen_by_only_and_in_the_default_run() {
        let settings = parse_args(&["--only", "arrow", "--records", "200000"]).unwrap();
        let parts = settings.parts();
        assert_eq!(parts.iter().map(|p| p.name).collect::<Vec<_>>(), ["arrow"]);
        assert_eq!(settings.size_args(parts[0]), ["--records".to_string(), "200000".to_string()]);
        let all = parse_args(&[]).unwrap().parts();
        assert_eq!(
            all.iter().map(|p| p.name).collect::<Vec<_>>(),
            [
                "f8", "records", "npz", "deflate", "mmap", "arrow", "sql", "cluster", "append", "header", "training",
                "python", "js", "r"
            ]
        );
        assert!(parse_args(&["--only", "parquet"]).unwrap_err().contains("header, training, python, js or r"));
        let training = parse_args(&["--only", "training", "--files", "300"]).unwrap();
        assert_eq!(training.size_args(training.parts()[0]), ["--files".to_string(), "300".to_string()]);
        let deflate = parse_args(&["--only", "deflate", "--traces", "5000"]).unwrap();
        assert_eq!(deflate.size_args(deflate.parts()[0]), ["--traces".to_string(), "5000".to_string()]);
        let js = parse_args(&["--only", "js,f8"]).unwrap().parts();
        assert_eq!(js.iter().map(|p| p.name).collect::<Vec<_>>(), ["f8", "js"]);
        let r = parse_args(&["--only", "r,js"]).unwrap().parts();
        assert_eq!(r.iter().map(|p| p.name).collect::<Vec<_>>(), ["js", "r"]);
        let python = parse_args(&["--only", "python", "--bytes", "4096"]).unwrap();
        assert_eq!(python.size_args(python.parts()[0]), ["--bytes".to_string(), "4096".to_string()]);
        let append = parse_args(&["--only", "append", "--batches", "20"]).unwrap();
        assert_eq!(append.size_args(append.parts()[0]), ["--batches".to_string(), "20".to_string()]);
        let several = parse_args(&["--only", "header,f8,records"]).unwrap().parts();
        assert_eq!(several.iter().map(|p| p.name).collect::<Vec<_>>(), ["f8", "records", "header"]);
        assert!(parse_args(&["--only", "f8,nope"]).unwrap_err().contains("\"nope\""));
        let header = parse_args(&["--only", "header", "--fields", "500"]).unwrap();
        assert_eq!(header.size_args(header.parts()[0]), ["--fields".to_string(), "500".to_string()]);
        assert_eq!(parse_args(&["--only", "header"]).unwrap().fields, 2_000);
        assert!(parse_args(&["--fields", "0"]).unwrap_err().contains("--fields"));
    }

    #[test]
    fn bench_lines_may_give_a_peak_rss() {
        let (name, t) = parse_line("avg_npz best=0.25 median=0.5 bytes=1024 rss=123731968").unwrap();
        assert_eq!((name.as_str(), t.best, t.median, t.bytes, t.rss), ("avg_npz", 0.25, 0.5, 1024, Some(123_731_968)));
        assert_eq!(parse_line("avg_duckdb best=0.25 median=0.5 bytes=1024").unwrap().1.rss, None);
        assert!(parse_line("avg_npz best=0.25 median=0.5 bytes=1024 rss=lots").is_none());
    }

    #[test]
    fn the_table_shows_peak_rss_only_in_parts_that_measure_it() {
        let timing = |rss| Timing { best: 0.5, median: 0.5, bytes: 1 << 30, rss };
        let mut timings: BTreeMap<String, Timing> =
            [("avg_npy".to_string(), timing(Some(100 << 20))), ("avg_duckdb".to_string(), timing(None))].into();
        let mut out = String::new();
        part_report(&mut out, &parts::SQL, &timings);
        let line = |out: &str, start: &str| out.lines().find(|l| l.starts_with(start)).unwrap().to_string();
        assert!(line(&out, "measurement").ends_with("GiB/s     peak RSS"), "{out}");
        assert!(line(&out, "npy sql: avg(samples[10])").ends_with("2.00    100.0 MiB"), "{out}");
        // The row without a peak ends at its rate; the rows not measured say so.
        let avg = out.lines().skip_while(|l| !l.starts_with("npy sql: avg(samples[10])"));
        let duckdb = avg.clone().find(|l| l.starts_with("DuckDB over Parquet")).unwrap();
        assert!(duckdb.ends_with("0.500 s     2.00"), "{out}");
        assert!(avg.clone().nth(1).unwrap().ends_with("n/a          n/a"), "{out}");
        timings.remove("avg_npy");
        out.clear();
        part_report(&mut out, &parts::SQL, &timings);
        assert!(line(&out, "measurement").ends_with("GiB/s"), "{out}");
    }

    #[test]
    fn an_rss_goal_judges_the_peak_of_its_row() {
        let timing = |rss| Timing { best: 0.5, median: 0.5, bytes: 1 << 30, rss };
        let timings: BTreeMap<String, Timing> = [
            ("avg_npy".to_string(), timing(Some(100 << 20))),
            ("avg_npz".to_string(), timing(Some(200 << 20))),
            ("avg_npzc".to_string(), timing(Some(300 << 20))),
            ("sums_npz".to_string(), timing(None)),
        ]
        .into();
        let mut out = String::new();
        // The sql part's 23 goals that are not context; these timings measure 3 of them.
        const UNMEASURED_SQL_GOALS: usize = 20;
        let (missed, goals) = part_report(&mut out, &parts::SQL, &timings);
        assert_eq!(goals, 23, "{out}");
        let line = |start: &str| out.lines().find(|l| l.starts_with(start)).unwrap().to_string();
        assert!(line("avg: stored .npz peak RSS").ends_with("200.0 MiB             -  <= 256 MiB  PASS"), "{out}");
        assert!(line("avg: deflated .npz peak RSS").ends_with("300.0 MiB             -  <= 256 MiB  MISS"), "{out}");
        // A goal whose row was not measured is missed, not passed.
        assert!(line("sums: stored .npz peak RSS").ends_with("MISS (not measured)"), "{out}");
        assert!(line("avg: stored .npz / .npy").ends_with("1.000         1.000  <= 1.5 med  PASS"), "{out}");
        let unmeasured = out.lines().filter(|l| l.ends_with("MISS (not measured)")).count();
        assert_eq!(unmeasured, UNMEASURED_SQL_GOALS, "{out}");
        assert_eq!(missed, 1 + UNMEASURED_SQL_GOALS, "{out}");
        // Context rows not measured count for nothing.
        assert!(out.lines().any(|l| l.ends_with("n/a (not measured)")), "{out}");
    }

    #[test]
    fn the_js_part_judges_a_view_by_ratio_or_difference_and_sizes_and_the_viewer_alone() {
        let time = |best: f64| Timing { best, median: best, bytes: 100_000_000, rss: None };
        let size = |bytes| Timing { best: 0.0, median: 0.0, bytes, rss: None };
        let mut timings: BTreeMap<String, Timing> = [
            ("f8_npy".to_string(), time(40e-6)),
            ("f8_npyjs".to_string(), time(5e-6)),
            ("small_npy".to_string(), time(6e-6)),
            ("small_npyjs".to_string(), time(3.3e-6)),
            ("wasm_gzip".to_string(), size(398_543)),
        ]
        .into();
        let mut out = String::new();
        let (missed, goals) = part_report(&mut out, &parts::JS, &timings);
        let line = |out: &str, start: &str| out.lines().find(|l| l.starts_with(start)).unwrap().to_string();
        assert_eq!(goals, 13, "{out}");
        // Eight times npyjs's time, but 35 µs above it: met; a small load's is a ratio alone.
        assert!(line(&out, "100 <f8: npy / npyjs").ends_with("1.818         1.818           <= 2.0  PASS"), "{out}");
        assert!(line(&out, "<f8 view: npy / npyjs").ends_with("8.000         8.000 <= 1.1 or +50 µs  PASS"), "{out}");
        // A size shows its bytes where a time shows its best, and is judged on them.
        assert!(line(&out, "size: wasm/npy_js_bg.wasm").ends_with("398.5 KB         -        -"), "{out}");
        assert!(line(&out, "module after gzip -9").ends_with("398.5 KB             -        <= 400 KB  PASS"), "{out}");
        // The ten goals not measured here (four ratios, the viewer's six) are missed.
        assert_eq!(missed, 10, "{out}");

        // The viewer's goals: its time to first rows in seconds, its reads as a size.
        timings.insert("viewer_open".to_string(), Timing { best: 0.19, median: 0.2, bytes: 304_000_320, rss: None });
        timings.insert("viewer_scroll".to_string(), size(19_456));
        // The statistics' rate: the column's bytes over the best time.
        timings.insert("viewer_stats".to_string(), Timing { best: 1.6, median: 1.8, bytes: 1_000_000_000, rss: None });
        out.clear();
        let (missed, _) = part_report(&mut out, &parts::JS, &timings);
        assert!(
            line(&out, "viewer: statistics of a 1 GB column")
                .ends_with("625.0 MB/s    555.6 MB/s      >= 500 MB/s  PASS"),
            "{out}"
        );
        assert!(
            line(&out, "viewer: traces to first rows").ends_with("0.190 s       0.200 s           <= 1 s  PASS"),
            "{out}"
        );
        assert!(
            line(&out, "viewer: bytes read to row 999,999").ends_with("19.5 KB             -       <= 1000 KB  PASS"),
            "{out}"
        );
        assert_eq!(missed, 7, "{out}");

        // The image view's: the overview's time and bytes, a slice's time.
        timings.insert("viewer_overview".to_string(), Timing { best: 0.4, median: 0.5, bytes: 12_582_912, rss: None });
        timings.insert("viewer_overview_bytes".to_string(), size(12_582_912));
        timings.insert("viewer_slice".to_string(), Timing { best: 0.04, median: 0.07, bytes: 4_194_304, rss: None });
        out.clear();
        let (missed, _) = part_report(&mut out, &parts::JS, &timings);
        assert!(line(&out, "viewer: 4 GiB image to its overview").ends_with("<= 2 s  PASS"), "{out}");
        assert!(
            line(&out, "viewer: bytes read for the overview")
                .ends_with("12582.9 KB             -      <= 16000 KB  PASS"),
            "{out}"
        );
        assert!(line(&out, "viewer: a slice of a 2 GB volume").ends_with("<= 0.1 s  PASS"), "{out}");
        assert_eq!(missed, 4, "{out}");

        timings.insert("viewer_overview".to_string(), time(2.5));
        timings.insert("viewer_overview_bytes".to_string(), size(16_000_001));
        timings.insert("viewer_slice".to_string(), time(0.2));
        timings.insert("f8_npy".to_string(), time(60e-6));
        timings.insert("small_npy".to_string(), time(6.7e-6));
        timings.insert("wasm_gzip".to_string(), size(400_001));
        timings.insert("viewer_open".to_string(), time(1.2));
        timings.insert("viewer_scroll".to_string(), size(1_000_001));
        timings.insert("viewer_stats".to_string(), Timing { best: 2.1, median: 2.2, bytes: 1_000_000_000, rss: None });
        out.clear();
        let (missed, _) = part_report(&mut out, &parts::JS, &timings);
        assert!(line(&out, "viewer: statistics of a 1 GB column").ends_with("MISS"), "{out}");
        assert!(line(&out, "<f8 view: npy / npyjs").ends_with("MISS"), "{out}");
        assert!(line(&out, "100 <f8: npy / npyjs").ends_with("MISS"), "{out}");
        assert!(line(&out, "module after gzip -9").ends_with("400.0 KB             -        <= 400 KB  MISS"), "{out}");
        assert!(line(&out, "viewer: traces to first rows").ends_with("MISS"), "{out}");
        assert!(line(&out, "viewer: bytes read to row 999,999").ends_with("MISS"), "{out}");
        assert!(line(&out, "viewer: 4 GiB image to its overview").ends_with("MISS"), "{out}");
        assert!(line(&out, "viewer: bytes read for the overview").ends_with("MISS"), "{out}");
        assert!(line(&out, "viewer: a slice of a 2 GB volume").ends_with("MISS"), "{out}");
        assert_eq!(missed, 13, "{out}");
        // Issue 82's archive goals: at most 0.7 and 0.3 of fflate's time with npyjs's parse.
        timings.insert("npz_fflate".to_string(), time(1.0));
        timings.insert("npz_npy".to_string(), time(0.69));
        timings.insert("zstd_npy".to_string(), time(0.31));
        out.clear();
        part_report(&mut out, &parts::JS, &timings);
        assert!(line(&out, "deflated npz: npy / fflate + npyjs").ends_with("<= 0.7  PASS"), "{out}");
        assert!(line(&out, "Zstandard npz: npy / fflate + npyjs").ends_with("<= 0.3  MISS"), "{out}");
        // Within the ratio, whatever the difference.
        timings.insert("f8_npy".to_string(), time(1.05));
        timings.insert("f8_npyjs".to_string(), time(1.0));
        out.clear();
        part_report(&mut out, &parts::JS, &timings);
        assert!(line(&out, "<f8 view: npy / npyjs").ends_with("PASS"), "{out}");
    }

    /// The `deflate` part's kinds, as its size rows name them.
    fn deflate_kinds() -> impl Iterator<Item = &'static str> {
        parts::DEFLATE.rows.iter().filter_map(|(name, _)| name.strip_prefix("size_"))
    }

    #[test]
    fn size_ratio_goals_compare_the_rows_sizes() {
        let size = |bytes| Timing { best: 0.0, median: 0.0, bytes, rss: None };
        let time = |best| Timing { best, median: best, bytes: 1_000, rss: None };
        let mut timings = BTreeMap::new();
        for kind in deflate_kinds() {
            timings.insert(format!("deflate_{kind}"), time(0.2));
            timings.insert(format!("deflate1_{kind}"), time(0.33));
            timings.insert(format!("inflate1_{kind}"), time(0.35));
            timings.insert(format!("np_deflate_{kind}"), time(1.0));
            timings.insert(format!("np_inflate_{kind}"), time(1.0));
            timings.insert(format!("size_{kind}"), size(1_020));
            timings.insert(format!("np_size_{kind}"), size(1_000));
        }
        let mut out = String::new();
        assert_eq!(part_report(&mut out, &parts::DEFLATE, &timings), (0, 44), "{out}");
        let line = |out: &str, start: &str| out.lines().find(|l| l.starts_with(start)).unwrap().to_string();
        assert!(line(&out, "zeros: size / NumPy's").ends_with("1.020             - <= 1.02 size  PASS"), "{out}");
        timings.insert("size_zeros".to_string(), size(1_021));
        timings.insert("deflate_t0".to_string(), time(0.21));
        out.clear();
        assert_eq!(part_report(&mut out, &parts::DEFLATE, &timings).0, 2, "{out}");
        assert!(line(&out, "zeros: size / NumPy's").ends_with("MISS"), "{out}");
        assert!(line(&out, "t0: write / NumPy's").ends_with("MISS"), "{out}");
        assert!(line(&out, "npy's member, zeros (<f8)").contains("1.0 KB"), "{out}");
    }

    #[test]
    fn goals_a_program_judged_count_in_the_summary() {
        assert_eq!(
            parse_goal("# goal: dask from_npy / from_array median time 0.91 (at most 1.0): met"),
            Some(("dask from_npy / from_array median time 0.91 (at most 1.0)".to_string(), true))
        );
        assert_eq!(
            parse_goal("# goal: S3 bytes: 2.5 (at most 2): MISSED"),
            Some(("S3 bytes: 2.5 (at most 2)".into(), false))
        );
        assert_eq!(parse_goal("# goal: no result"), None);
        assert_eq!(parse_goal("# goal: : met"), None);
        // A part whose table goals all pass: a goal its program missed makes the summary
        // say so, and every goal it judged counts.
        let time = |best| Timing { best, median: best, bytes: 1_000, rss: None };
        let size = |bytes| Timing { best: 0.0, median: 0.0, bytes, rss: None };
        let mut timings = BTreeMap::new();
        for kind in deflate_kinds() {
            timings.insert(format!("deflate_{kind}"), time(0.2));
            timings.insert(format!("deflate1_{kind}"), time(0.33));
            timings.insert(format!("inflate1_{kind}"), time(0.35));
            timings.insert(format!("np_deflate_{kind}"), time(1.0));
            timings.insert(format!("np_inflate_{kind}"), time(1.0));
            timings.insert(format!("size_{kind}"), size(1_000));
            timings.insert(format!("np_size_{kind}"), size(1_000));
        }
        let settings = parse_args(&[]).unwrap();
        let keys = |keys: &[&str]| keys.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        let stated = vec![("remote bytes: 0.001 (at most 0.01)".to_string(), true)];
        let met = Measured { timings: timings.clone(), promised: keys(&["remote bytes"]), stated };
        let out = report(&[(&parts::DEFLATE, met)], &settings);
        assert!(out.ends_with("all 45 goals met\n"), "{out}");
        assert!(out.contains("remote bytes: 0.001 (at most 0.01)  PASS"), "{out}");
        let stated = vec![("dask memory: 2.5 chunks (at most 2)".to_string(), false), ("other".to_string(), true)];
        let both = Measured { timings: timings.clone(), promised: keys(&["dask memory", "other"]), stated };
        let out = report(&[(&parts::DEFLATE, both)], &settings);
        assert!(out.contains("dask memory: 2.5 chunks (at most 2)  MISS"), "{out}");
        assert!(out.ends_with("1 of 46 goals MISSED (benchmarks report, they do not fail the run)\n"), "{out}");
        // A planted branch that stopped running: the program states three goals and judges
        // one. The two it never judged are missed goals of the total, not a smaller total.
        let stated = vec![("remote bytes: 0.001 (at most 0.01)".to_string(), true)];
        let promised = keys(&["remote bytes", "S3 bytes", "zstd size"]);
        let out = report(&[(&parts::DEFLATE, Measured { timings: timings.clone(), promised, stated })], &settings);
        assert!(out.contains("S3 bytes: stated, never judged (its branch did not run)  MISS"), "{out}");
        assert!(out.ends_with("2 of 47 goals MISSED (benchmarks report, they do not fail the run)\n"), "{out}");
        // A goal judged twice counts once, missed; a judged goal the program never stated
        // counts, missed.
        let stated =
            vec![("S3 bytes: 1.0".to_string(), true), ("S3 bytes: 1.1".to_string(), true), ("x: 1".into(), true)];
        let out = report(&[(&parts::DEFLATE, Measured { timings, promised: keys(&["S3 bytes"]), stated })], &settings);
        assert!(out.contains("S3 bytes: judged 2 times, not once  MISS"), "{out}");
        assert!(out.contains("x: 1: judged, but not among the goals the program states  MISS"), "{out}");
        assert!(out.ends_with("2 of 46 goals MISSED (benchmarks report, they do not fail the run)\n"), "{out}");
    }

    #[test]
    fn every_goal_names_rows_of_its_part() {
        for part in [
            &parts::F8,
            &parts::RECORDS,
            &parts::NPZ,
            &parts::DEFLATE,
            &parts::MMAP,
            &parts::ARROW,
            &parts::SQL,
            &parts::APPEND,
            &parts::HEADER,
            &parts::JS,
            &parts::R,
        ] {
            for &(what, num, den, goal) in part.goals {
                // A goal on one row (its peak memory, its size, its time) names no denominator.
                let one_row = matches!(
                    goal,
                    Goal::RssAtMost(_) | Goal::BytesAtMost(_) | Goal::SecondsAtMost(_) | Goal::RateAtLeast(_)
                );
                let names = if one_row { vec![num] } else { vec![num, den] };
                assert!(!one_row || den.is_empty(), "{what}: a goal on one row names {den}");
                for name in names {
                    assert!(part.rows.iter().any(|(row, _)| *row == name), "{}: goal {what:?} names {name}", part.name);
                }
            }
        }
    }
}
