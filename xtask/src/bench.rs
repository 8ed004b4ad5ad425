//! `cargo xtask bench [--only f8|records|npz|mmap|arrow|sql|cluster|append|header[,...]] [--bytes N]
//! [--records N] [--elements N] [--map-bytes N] [--batches N] [--fields N] [--repeat K]`:
//! npy's speed next to the machine limit, NumPy, npyz, pyarrow and npy-append-array, in one
//! run, with the ratios the speed goals name. Nine parts, all by default (`--only` picks
//! some, comma-separated, run in the order below):
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
//!      read from these files.
//! - `npz`: 8 arrays of N `f64`s (`--elements`, default 4,000,000: 256 MB in all).
//!   1. `cargo bench --bench npz` (`benches/npz.rs`) times npy writing and reading them as
//!      8 plain `.npy` files, as one archive of stored members, and as one deflated archive
//!      (level 6, members compressed in parallel; read all at once, members inflating in
//!      parallel, `read_all`, and one by one by name).
//!   2. `xtask/bench.py npz` checks that `np.load` reads npy's archives, then times
//!      `np.savez`, `np.savez_compressed`, 8 `np.save`s and the matching loads.
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
//!   The goals: npy's conversion alone at least as fast as pyarrow's (the words,
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
//!      16 `.npy` files NumPy writes, and the same rows as Parquet files pyarrow writes:
//!      `npy sql` as a process (the release build with the `sql` feature), without and
//!      with `--map-local-files`, DuckDB over the Parquet files, and `np.load` + NumPy;
//!      the answers must agree. Medians of `2 * --repeat + 1` runs.
//!
//!   The goals: the SQL query at least as fast as NumPy's `np.load` + reduction (default
//!   options: reads); the scan of one field at least 3 times as fast as the scan of every
//!   field, with the files mapped (a read copies every byte of a row whatever the query
//!   uses, so there the ratio is bounded by the copy; it is shown for context). Of the
//!   five queries (issue 37's): the three over whole rows in at most half DuckDB's median
//!   time, without the promise; the filter and the top-k in at most twice DuckDB's median
//!   time, with it.
//!
//! - `cluster`: the `sql` part's question and files on a Ballista cluster of processes
//!   (issue 35): `cargo bench -p npy-ballista --features cluster --bench cluster
//!   (`npy-ballista/benches/cluster.rs`) builds the release `npy-ballista-scheduler` and
//!   `npy-ballista-executor`, starts one scheduler and two executors as the process tests
//!   do (`npy-ballista/tests/support/processes.rs`: loopback ports the OS picks, 2 vcores
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
//! npy's writes in the goals use `WriteOptions::sync(false)` (`FileWriter::sync(false)`
//! for archives), as `np.save`, npyz and the limit write do not sync either; the default
//! (synced) `write_npy` is timed too, next to a limit write with `fsync`, for context.
//!
//! Every measurement runs K times (default 3) after one untimed warm-up round. A table of
//! best and median times, GiB/s and the goal ratios (PASS/MISS on best times, or on medians for the goals an issue states on medians) is printed
//! and written to `<target>/bench/report.txt`; each part's big files are deleted when it
//! ends (at most about 4.5 GiB at a time for the default sizes: the `arrow` part's two
//! `.npy` files, its IPC file and one output).
//!
//! Benchmarks report, they do not gate: a missed goal still exits 0. A measurement that
//! cannot run or gives a wrong result is an error.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::project::{self, Result};

const USAGE: &str = "usage: cargo xtask bench [--only f8|records|npz|mmap|arrow|sql|cluster|append|header[,...]] \
                     [--bytes N] [--records N] [--elements N] [--map-bytes N] [--batches N] [--fields N] \
                     [--repeat K]";

/// A speed goal on the ratio numerator / denominator.
#[derive(Debug, Clone, Copy)]
enum Goal {
    /// Passes when the ratio of the best times is at most this.
    AtMost(f64),
    /// Passes when the ratio of the median times is at most this: the goals an issue
    /// states on medians (issue 19: "at or below NumPy's time (median of >= 3)").
    MedianAtMost(f64),
    /// Passes when the ratio is at least this (the other side is that many times slower).
    AtLeast(f64),
    /// No goal: shown for context.
    Context,
}

impl Goal {
    /// Whether the goal is met, given the ratios of the best and of the median times.
    fn passes(self, best: f64, median: f64) -> Option<bool> {
        let ratio = best;
        match self {
            Goal::AtMost(g) => Some(ratio <= g),
            Goal::MedianAtMost(g) => Some(median <= g),
            Goal::AtLeast(g) => Some(ratio >= g),
            Goal::Context => None,
        }
    }

    fn text(self) -> String {
        match self {
            Goal::AtMost(g) => format!("<= {}", goal_number(g)),
            Goal::MedianAtMost(g) => format!("<= {} med", goal_number(g)),
            Goal::AtLeast(g) => format!(">= {}", goal_number(g)),
            Goal::Context => "-".to_string(),
        }
    }
}

/// A goal's number as the issues write it: one decimal (`1.0`), or two when it has them
/// (`0.67`).
fn goal_number(g: f64) -> String {
    if (g * 10.0 - (g * 10.0).round()).abs() < 1e-9 {
        format!("{g:.1}")
    } else {
        format!("{g:.2}")
    }
}

/// One part of the bench: its bench target, its measurements and its goals.
#[derive(Debug)]
struct Part {
    /// The `--only` name, and the first argument of `bench.py`.
    name: &'static str,
    /// The package of the bench target.
    package: &'static str,
    /// The `cargo bench --bench` target.
    bench: &'static str,
    /// The package features the target needs (`--features`), or "".
    features: &'static str,
    /// Whether the target runs NumPy's measurements itself, in its own rounds (`--peer`:
    /// `benches/common/mod.rs`'s `Peer`); else `bench.py` runs them after it.
    peer: bool,
    title: &'static str,
    /// The measurements, in table order: name (as the bench lines give it) and description.
    rows: &'static [(&'static str, &'static str)],
    /// The goals: what, numerator, denominator, goal.
    goals: &'static [(&'static str, &'static str, &'static str, Goal)],
}

const F8: Part = Part {
    name: "f8",
    package: "npy",
    bench: "io",
    features: "",
    peer: true,
    title: "f8: a big <f8 array",
    rows: &[
        ("limit_read", "machine limit read: page cache -> huge-page buffer"),
        ("limit_read_2cpu", "the same, pages faulted in on a 2nd CPU"),
        ("read_le", "npy read <f8 -> Vec<f64>"),
        ("read_be", "npy read >f8 -> Vec<f64>"),
        ("fs_read", "std::fs::read <f8 (context)"),
        ("np_load_le", "np.load <f8"),
        ("np_load_be", "np.load >f8 (stays big-endian)"),
        ("np_load_be_astype", "np.load >f8 .astype('<f8')"),
        ("limit_write", "machine limit write: fallocate + write"),
        ("write", "npy write Vec<f64> -> <f8 (sync(false))"),
        ("write_be", "npy write Vec<f64> -> >f8 (byte_order(Big), sync(false))"),
        ("np_save", "np.save <f8"),
        ("np_save_be", "np.save of a >f8 array"),
        ("limit_write_synced", "machine limit write + fsync"),
        ("write_synced", "npy write, default options (synced)"),
    ],
    goals: &[
        ("native read / limit read", "read_le", "limit_read", Goal::AtMost(1.1)),
        ("native read / np.load", "read_le", "np_load_le", Goal::AtMost(1.0)),
        ("BE read / native read", "read_be", "read_le", Goal::AtMost(1.5)),
        ("write / limit write", "write", "limit_write", Goal::AtMost(1.1)),
        ("write / np.save", "write", "np_save", Goal::AtMost(1.0)),
        ("W2: >f8 write / np.save >f8", "write_be", "np_save_be", Goal::MedianAtMost(1.0)),
        (">f8 write / <f8 write", "write_be", "write", Goal::Context),
        ("native read / 2-CPU limit read", "read_le", "limit_read_2cpu", Goal::Context),
        ("BE read / np.load(>f8).astype", "read_be", "np_load_be_astype", Goal::Context),
        ("synced write / limit + fsync", "write_synced", "limit_write_synced", Goal::Context),
    ],
};

const RECORDS: Part = Part {
    name: "records",
    package: "npy",
    bench: "records",
    features: "",
    peer: true,
    title: "records: seismic Trace records (aligned file 304 B/record, packed file 293 B/record)",
    rows: &[
        ("limit_read_aligned", "machine limit read: aligned file -> huge-page buffer"),
        ("limit_read_packed", "machine limit read: packed file -> huge-page buffer"),
        ("limit_read_aligned_2cpu", "the same, aligned, pages faulted in on a 2nd CPU"),
        ("limit_read_packed_2cpu", "the same, packed, pages faulted in on a 2nd CPU"),
        ("read_aligned", "npy read aligned -> Vec<TraceAligned> (matched)"),
        ("read_packed_to_aligned", "npy read packed -> Vec<TraceAligned> (conversion)"),
        ("read_packed", "npy read packed -> Vec<TracePacked> (context)"),
        ("read_packed_mem", "npy read packed -> Vec<TracePackedMem> (#[repr(C, packed)])"),
        ("npyz_read", "npyz derive read packed -> Vec<NpyzTrace>"),
        ("np_load_aligned", "np.load aligned"),
        ("np_load_packed", "np.load packed"),
        ("limit_write_aligned", "machine limit write: aligned file's size"),
        ("limit_write_packed", "machine limit write: packed file's size"),
        ("write_aligned", "npy write [TraceAligned] -> aligned (matched)"),
        ("write_packed", "npy write [TracePacked] -> packed (conversion)"),
        ("write_packed_mem", "npy write [TracePackedMem] -> packed (#[repr(C, packed)])"),
        ("npyz_write", "npyz derive write [NpyzTrace] -> packed"),
        ("np_save_aligned", "np.save aligned"),
        ("np_save_packed", "np.save packed"),
        ("limit_write_aligned_synced", "machine limit write + fsync: aligned file's size"),
        ("write_aligned_synced", "npy write [TraceAligned], default options (synced)"),
    ],
    goals: &[
        ("matched read / limit read", "read_aligned", "limit_read_aligned", Goal::AtMost(1.1)),
        ("matched read / np.load", "read_aligned", "np_load_aligned", Goal::AtMost(1.0)),
        ("conversion read / limit read", "read_packed_to_aligned", "limit_read_packed", Goal::AtMost(3.0)),
        ("npyz read / matched read", "npyz_read", "read_aligned", Goal::AtLeast(5.0)),
        ("npyz read / conversion read", "npyz_read", "read_packed_to_aligned", Goal::AtLeast(5.0)),
        ("matched write / limit write", "write_aligned", "limit_write_aligned", Goal::AtMost(1.1)),
        ("W4: matched write / np.save", "write_aligned", "np_save_aligned", Goal::MedianAtMost(1.0)),
        ("W3: packed-memory read / np.load packed", "read_packed_mem", "np_load_packed", Goal::MedianAtMost(1.0)),
        ("W3: packed-memory write / np.save packed", "write_packed_mem", "np_save_packed", Goal::MedianAtMost(1.0)),
        ("conversion write / limit write", "write_packed", "limit_write_packed", Goal::AtMost(3.0)),
        ("npyz write / matched write", "npyz_write", "write_aligned", Goal::AtLeast(5.0)),
        ("npyz write / conversion write", "npyz_write", "write_packed", Goal::AtLeast(5.0)),
        ("matched read / 2-CPU limit read", "read_aligned", "limit_read_aligned_2cpu", Goal::Context),
        ("conversion read / 2-CPU limit", "read_packed_to_aligned", "limit_read_packed_2cpu", Goal::Context),
        ("packed read / limit read", "read_packed", "limit_read_packed", Goal::Context),
        ("conversion read / np.load packed", "read_packed_to_aligned", "np_load_packed", Goal::Context),
        ("conversion write / np.save packed", "write_packed", "np_save_packed", Goal::Context),
        ("synced write / limit + fsync", "write_aligned_synced", "limit_write_aligned_synced", Goal::Context),
    ],
};

const NPZ: Part = Part {
    name: "npz",
    package: "npy",
    bench: "npz",
    features: "",
    peer: false,
    title: "npz: 8 arrays of f64 as an archive and as plain .npy files",
    rows: &[
        ("npy_write", "npy write 8 .npy files (sync(false))"),
        ("npz_write", "npy npz::Writer, stored (sync(false))"),
        ("npz_write_deflate", "npy npz::Writer, deflate 6, parallel (sync(false))"),
        ("np_save_files", "np.save 8 .npy files"),
        ("np_savez", "np.savez"),
        ("np_savez_compressed", "np.savez_compressed"),
        ("npy_read", "npy read 8 .npy files"),
        ("npz_read", "npy npz::Reader, stored members"),
        ("npz_read_all", "npy npz::Reader::read_all, stored (parallel)"),
        ("npz_read_deflate", "npy npz::Reader::read_all, deflated (parallel)"),
        ("npz_read_deflate_each", "npy npz::Reader, deflated, one by one"),
        ("np_load_files", "np.load 8 .npy files"),
        ("np_load_npz", "np.load npz, every member (stored)"),
        ("np_load_npz_compressed", "np.load npz, every member (deflated)"),
    ],
    goals: &[
        ("stored npz write / .npy writes", "npz_write", "npy_write", Goal::AtMost(1.2)),
        ("stored npz read / .npy reads", "npz_read", "npy_read", Goal::AtMost(1.2)),
        ("np.savez_compressed / deflate write", "np_savez_compressed", "npz_write_deflate", Goal::AtLeast(1.5)),
        ("deflated npz read / np.load", "npz_read_deflate", "np_load_npz_compressed", Goal::AtMost(0.67)),
        ("stored npz write / np.savez", "npz_write", "np_savez", Goal::Context),
        ("stored npz read / np.load npz", "npz_read", "np_load_npz", Goal::Context),
        ("stored read_all / np.load npz", "npz_read_all", "np_load_npz", Goal::Context),
        ("one by one deflated / np.load", "npz_read_deflate_each", "np_load_npz_compressed", Goal::Context),
    ],
};

const MMAP: Part = Part {
    name: "mmap",
    package: "npy",
    bench: "mmap",
    features: "",
    peer: false,
    title: "mmap: open a big and a small <f8 file as maps; sum random elements",
    rows: &[
        ("open_small", "npy NpyMap::from_path, 1 MiB file (one open)"),
        ("open_big", "npy NpyMap::from_path, big file (one open)"),
        ("np_open_small", "np.load mmap_mode='r', 1 MiB file (one open)"),
        ("np_open_big", "np.load mmap_mode='r', big file (one open)"),
        ("random_sum", "npy open + view + sum of random elements"),
        ("np_random_sum", "np.load mmap_mode='r' + a[picks].sum()"),
    ],
    goals: &[
        ("random sum / numpy's", "random_sum", "np_random_sum", Goal::AtMost(1.0)),
        ("open big / open small", "open_big", "open_small", Goal::AtMost(2.0)),
        ("open small / numpy's", "open_small", "np_open_small", Goal::Context),
        ("numpy: open big / open small", "np_open_big", "np_open_small", Goal::Context),
    ],
};

const ARROW: Part = Part {
    name: "arrow",
    package: "npy-arrow",
    bench: "arrow",
    features: "",
    peer: false,
    title: "arrow: seismic Trace records as Arrow record batches and Parquet, npy-arrow and pyarrow",
    rows: &[
        ("limit_read_aligned", "machine limit read: aligned file -> huge-page buffer"),
        ("limit_read_packed", "machine limit read: packed file -> huge-page buffer"),
        ("read_aligned", "npy BatchReader::from_path aligned -> batches"),
        ("read_packed", "npy BatchReader::from_path packed -> batches"),
        ("np_load_pa_aligned", "np.load aligned + pyarrow from_arrays"),
        ("np_load_pa_packed", "np.load packed + pyarrow from_arrays"),
        ("convert_aligned", "npy from_dyn: aligned array in memory -> batches"),
        ("convert_packed", "npy from_dyn: packed array in memory -> batches"),
        ("pa_convert_aligned", "pyarrow from_arrays: aligned array in memory"),
        ("pa_convert_packed", "pyarrow from_arrays: packed array in memory"),
        ("map_aligned", "npy NpyMap + from_map aligned -> batches (context)"),
        ("map_packed", "npy NpyMap + from_map packed -> batches (context)"),
        ("limit_write_aligned", "machine limit write: aligned file's size"),
        ("limit_write_packed", "machine limit write: packed file's size"),
        ("write_aligned", "npy BatchWriter batches -> aligned (not synced)"),
        ("write_packed", "npy BatchWriter batches -> packed (not synced)"),
        ("npy_convert_parquet", "npy convert packed.npy out.parquet (a process)"),
        ("np_load_pa_parquet", "np.load packed + pyarrow + pq.write_table (snappy)"),
        ("pa_parquet", "pq.write_table of the table alone (context)"),
    ],
    goals: &[
        ("conversion / pyarrow's", "convert_packed", "pa_convert_packed", Goal::AtMost(1.0)),
        (".npy -> Arrow / np.load + pyarrow", "read_packed", "np_load_pa_packed", Goal::AtMost(1.0)),
        ("convert -> Parquet / np.load + pa", "npy_convert_parquet", "np_load_pa_parquet", Goal::AtMost(1.0)),
        ("aligned: conversion / pyarrow's", "convert_aligned", "pa_convert_aligned", Goal::Context),
        ("aligned: .npy->Arrow / np.load+pa", "read_aligned", "np_load_pa_aligned", Goal::Context),
        (".npy -> Arrow / pyarrow conversion", "read_packed", "pa_convert_packed", Goal::Context),
        ("map read / stream read, packed", "map_packed", "read_packed", Goal::Context),
        (".npy -> Arrow / limit read", "read_packed", "limit_read_packed", Goal::Context),
        ("aligned: .npy -> Arrow / limit", "read_aligned", "limit_read_aligned", Goal::Context),
        ("Arrow -> .npy / limit write", "write_packed", "limit_write_packed", Goal::Context),
        ("aligned: Arrow -> .npy / limit", "write_aligned", "limit_write_aligned", Goal::Context),
        ("convert->Parquet / pq.write alone", "npy_convert_parquet", "pa_parquet", Goal::Context),
    ],
};

const SQL: Part = Part {
    name: "sql",
    package: "npy-datafusion",
    bench: "sql",
    features: "",
    peer: false,
    title: "sql: SELECT avg(t0), max(samples[1]) over Trace records in 16 .npy files, npy-datafusion and NumPy; \
            five queries over shot records, npy sql, DuckDB 2.0.1 over Parquet and NumPy",
    rows: &[
        ("limit_read", "machine limit read: the 16 files -> huge-page buffers"),
        ("sql_query", "npy-datafusion: SELECT avg(t0), max(samples[1]) FROM traces"),
        ("np_query", "NumPy: np.load each file + t0.sum(), samples[:, 0].max()"),
        ("np_load_all", "NumPy: np.load each file alone (context)"),
        ("scan_t0", "npy-datafusion: SELECT t0 FROM traces (one field)"),
        ("scan_all", "npy-datafusion: SELECT * FROM traces (every field)"),
        ("sql_query_mapped", "npy-datafusion, files mapped: SELECT avg(t0), max(samples[1])"),
        ("scan_t0_mapped", "npy-datafusion, files mapped: SELECT t0 (one field)"),
        ("scan_all_mapped", "npy-datafusion, files mapped: SELECT * (every field)"),
        ("group_npy", "npy sql: GROUP BY station: count, avg(t0), max(samples[1])"),
        ("group_npy_mapped", "npy sql --map-local-files: the same"),
        ("group_duckdb", "DuckDB over Parquet: the same"),
        ("group_numpy", "np.load + NumPy: the same"),
        ("sums_npy", "npy sql: sum(rx + ry + t0), max(samples[64]), min(dt)"),
        ("sums_npy_mapped", "npy sql --map-local-files: the same"),
        ("sums_duckdb", "DuckDB over Parquet: the same"),
        ("sums_numpy", "np.load + NumPy: the same"),
        ("avg_npy", "npy sql: avg(samples[10])"),
        ("avg_npy_mapped", "npy sql --map-local-files: the same"),
        ("avg_duckdb", "DuckDB over Parquet: the same"),
        ("avg_numpy", "np.load + NumPy: the same"),
        ("filter_npy", "npy sql: count(*) WHERE t0 > 0.5 AND station = 7"),
        ("filter_npy_mapped", "npy sql --map-local-files: the same"),
        ("filter_duckdb", "DuckDB over Parquet: the same"),
        ("filter_numpy", "np.load + NumPy: the same"),
        ("topk_npy", "npy sql: trace_id, t0 ORDER BY t0 DESC LIMIT 10"),
        ("topk_npy_mapped", "npy sql --map-local-files: the same"),
        ("topk_duckdb", "DuckDB over Parquet: the same"),
        ("topk_numpy", "np.load + NumPy: the same"),
    ],
    goals: &[
        ("GROUP BY: npy sql / DuckDB", "group_npy", "group_duckdb", Goal::MedianAtMost(0.5)),
        ("sums: npy sql / DuckDB", "sums_npy", "sums_duckdb", Goal::MedianAtMost(0.5)),
        ("avg: npy sql / DuckDB", "avg_npy", "avg_duckdb", Goal::MedianAtMost(0.5)),
        ("filter: mapped npy sql / DuckDB", "filter_npy_mapped", "filter_duckdb", Goal::MedianAtMost(2.0)),
        ("top-k: mapped npy sql / DuckDB", "topk_npy_mapped", "topk_duckdb", Goal::MedianAtMost(2.0)),
        ("filter: npy sql / DuckDB", "filter_npy", "filter_duckdb", Goal::Context),
        ("top-k: npy sql / DuckDB", "topk_npy", "topk_duckdb", Goal::Context),
        ("GROUP BY: mapped / read", "group_npy_mapped", "group_npy", Goal::Context),
        ("sums: mapped / read", "sums_npy_mapped", "sums_npy", Goal::Context),
        ("avg: mapped / read", "avg_npy_mapped", "avg_npy", Goal::Context),
        ("filter: mapped / read", "filter_npy_mapped", "filter_npy", Goal::Context),
        ("top-k: mapped / read", "topk_npy_mapped", "topk_npy", Goal::Context),
        ("GROUP BY: npy sql / NumPy", "group_npy", "group_numpy", Goal::Context),
        ("sums: npy sql / NumPy", "sums_npy", "sums_numpy", Goal::Context),
        ("avg: npy sql / NumPy", "avg_npy", "avg_numpy", Goal::Context),
        ("filter: npy sql / NumPy", "filter_npy", "filter_numpy", Goal::Context),
        ("top-k: npy sql / NumPy", "topk_npy", "topk_numpy", Goal::Context),
        ("SQL query / NumPy's", "sql_query", "np_query", Goal::AtMost(1.0)),
        ("mapped: all fields / one field", "scan_all_mapped", "scan_t0_mapped", Goal::AtLeast(3.0)),
        ("read: all fields / one field", "scan_all", "scan_t0", Goal::Context),
        ("mapped SQL query / NumPy's", "sql_query_mapped", "np_query", Goal::Context),
        ("SQL query / limit read", "sql_query", "limit_read", Goal::Context),
        ("one field / limit read", "scan_t0", "limit_read", Goal::Context),
        ("SQL query / np.load alone", "sql_query", "np_load_all", Goal::Context),
    ],
};

const CLUSTER: Part = Part {
    name: "cluster",
    package: "npy-ballista",
    bench: "cluster",
    features: "cluster",
    peer: true,
    title: "cluster: SELECT avg(t0), max(samples[1]) over Trace records in 16 .npy files: a Ballista cluster \
            of processes (1 scheduler, 2 executors), DataFusion in one process, NumPy",
    rows: &[
        ("limit_read", "machine limit read: the 16 files -> huge-page buffers"),
        ("cluster_query", "npy-ballista: the query on 2 executor processes"),
        ("local_query", "npy-datafusion: the query in this process"),
        ("np_query", "NumPy: np.load each file + t0.sum(), samples[:, 0].max()"),
    ],
    goals: &[
        ("cluster / one process", "cluster_query", "local_query", Goal::AtMost(2.0)),
        ("cluster / NumPy's", "cluster_query", "np_query", Goal::Context),
        ("one process / NumPy's", "local_query", "np_query", Goal::Context),
        ("cluster / limit read", "cluster_query", "limit_read", Goal::Context),
    ],
};

const APPEND: Part = Part {
    name: "append",
    package: "npy",
    bench: "append",
    features: "",
    peer: false,
    title: "append: Trace records (aligned, 304 B) written in batches of 10,000 by in-place appends",
    rows: &[
        ("write_whole", "npy: write_npy of all the records (synced)"),
        ("append_batches", "npy: a first batch, then append_batches of the rest (2 syncs each)"),
        ("synced_pieces", "plain file calls: each batch written + synced, header + synced"),
        ("write_whole_unsynced", "npy: write_npy of all the records, not synced"),
        ("append_batches_unsynced", "npy: append_batches, not synced"),
        ("append_each_unsynced", "npy: the appends, not synced, by one append call a batch"),
        ("np_save_whole", "NumPy: np.save of all the records (not synced)"),
        ("npaa_append", "npy-append-array: NpyAppendArray.append of each batch (not synced)"),
    ],
    goals: &[
        ("appends / one write_npy, not synced", "append_batches_unsynced", "write_whole_unsynced", Goal::AtMost(1.1)),
        ("appends / plain synced batches", "append_batches", "synced_pieces", Goal::AtMost(1.0)),
        ("appends / one write_npy, synced", "append_batches", "write_whole", Goal::Context),
        ("npy appends / npy-append-array, not synced", "append_batches_unsynced", "npaa_append", Goal::Context),
        ("append calls / append_batches, not synced", "append_each_unsynced", "append_batches_unsynced", Goal::Context),
        ("write_npy / np.save, not synced", "write_whole_unsynced", "np_save_whole", Goal::Context),
    ],
};

const HEADER: Part = Part {
    name: "header",
    package: "npy",
    bench: "header",
    features: "",
    peer: false,
    title: "header: big record headers parsed (one parse, median of 300), npy and NumPy",
    rows: &[
        ("parse_long", "npy Header::parse, <f8 fields, long names"),
        ("np_parse_long", "NumPy read_magic + read_array_header, long names"),
        ("open_long", "npy NpyReader::from_path, long names"),
        ("np_open_long", "NumPy open + read_magic + read_array_header, long"),
        ("parse_f8", "npy Header::parse, <f8 fields, short names"),
        ("np_parse_f8", "NumPy read_magic + read_array_header, <f8 fields"),
        ("open_f8", "npy NpyReader::from_path, <f8 fields"),
        ("np_open_f8", "NumPy open + read_magic + read_array_header, <f8"),
        ("parse_mixed", "npy Header::parse, mixed fields"),
        ("np_parse_mixed", "NumPy read_magic + read_array_header, mixed"),
        ("open_mixed", "npy NpyReader::from_path, mixed fields"),
        ("np_open_mixed", "NumPy open + read_magic + read_array_header, mixed"),
        ("budget_quarter_ms", "budget: 0.25 ms (the goal, not a measurement)"),
        ("budget_long_400mbs", "budget: the long-name header at 400 MB/s (the goal)"),
        ("budget_f8_400mbs", "budget: the <f8 header at 400 MB/s"),
        ("budget_mixed_400mbs", "budget: the mixed header at 400 MB/s"),
    ],
    goals: &[
        ("long parse / 0.25 ms", "parse_long", "budget_quarter_ms", Goal::AtMost(1.0)),
        ("long open_path / 0.25 ms", "open_long", "budget_quarter_ms", Goal::AtMost(1.0)),
        ("long parse / 400 MB/s", "parse_long", "budget_long_400mbs", Goal::AtMost(1.0)),
        ("long open_path / 400 MB/s", "open_long", "budget_long_400mbs", Goal::AtMost(1.0)),
        ("long parse / NumPy's", "parse_long", "np_parse_long", Goal::Context),
        ("long open_path / NumPy's open", "open_long", "np_open_long", Goal::Context),
        ("<f8 parse / 400 MB/s", "parse_f8", "budget_f8_400mbs", Goal::Context),
        ("mixed parse / 400 MB/s", "parse_mixed", "budget_mixed_400mbs", Goal::Context),
        ("<f8 parse / NumPy's", "parse_f8", "np_parse_f8", Goal::Context),
        ("mixed parse / NumPy's", "parse_mixed", "np_parse_mixed", Goal::Context),
    ],
};

/// Every part, in the order a run takes them.
const PYTHON: Part = Part {
    name: "python",
    package: "npy-python",
    // No Rust bench target: `npy-python/bench.py` times the installed package and NumPy.
    bench: "",
    features: "",
    peer: true,
    title: "python: the npy package (npy-python) against NumPy 2.4.6 in the same Python, same rounds (--repeat rounded up to even: each side first in half)",
    rows: &[
        ("f8_npy", "npy.load of a .npy of <f8 (--bytes)"),
        ("f8_np", "np.load of it"),
        ("trace_npy", "npy.load of 1M aligned Trace records"),
        ("trace_np", "np.load of it"),
        ("npz_npy", "npy.load(..).load_all() of 5 deflated members (--bytes / 4 in all)"),
        ("npz_np", "dict(np.load(..)) of it"),
        ("save_f8_npy", "npy.save of <f8 (--bytes / 2) to a path, over the last round's file (atomic, not synced)"),
        ("save_f8_np", "np.save of it"),
        ("save_trace_npy", "npy.save of the 1M Trace records"),
        ("save_trace_np", "np.save of them"),
        ("save_durable_npy", "npy.save(..., durable=True) of the <f8 (synced to disk before it appears)"),
        ("save_durable_np", "np.save of it (never synced)"),
        ("savez_c_npy", "npy.savez_compressed of the 5 members"),
        ("savez_c_np", "np.savez_compressed of them"),
        ("objects_strs_npy", "npy.load of an object array of 1M short strs (never runs a pickle)"),
        ("objects_strs_np", "np.load(allow_pickle=True) of it"),
        ("objects_dicts_npy", "npy.load of an object array of 1M small dicts"),
        ("objects_dicts_np", "np.load(allow_pickle=True) of it"),
        ("objects_mixed_npy", "npy.load of an object array of 1M mixed plain values"),
        ("objects_mixed_np", "np.load(allow_pickle=True) of it"),
        ("vec_1m", "Vec<Trace> of 1M records to a NumPy array (npy-pyo3: handed over)"),
        ("vec_10m", "Vec<Trace> of 10M records to a NumPy array"),
        // Issue 45: the SQL bench's five queries (group, sums, avg: whole rows; filter, topk:
        // narrow) over 1M shot records, in-process.
        ("duckdb_group_scan", "DuckDB group: npy.scan of its columns (read)"),
        ("duckdb_group_mapped", "DuckDB group: the same, map_local_files=True"),
        ("duckdb_group_parquet", "DuckDB group: pyarrow's Parquet of the rows"),
        ("duckdb_sums_scan", "DuckDB sums: npy.scan of its columns (read)"),
        ("duckdb_sums_mapped", "DuckDB sums: the same, map_local_files=True"),
        ("duckdb_sums_parquet", "DuckDB sums: pyarrow's Parquet of the rows"),
        ("duckdb_avg_scan", "DuckDB avg: npy.scan of its columns (read)"),
        ("duckdb_avg_mapped", "DuckDB avg: the same, map_local_files=True"),
        ("duckdb_avg_parquet", "DuckDB avg: pyarrow's Parquet of the rows"),
        ("duckdb_filter_scan", "DuckDB filter: npy.scan of its columns (read)"),
        ("duckdb_filter_mapped", "DuckDB filter: the same, map_local_files=True"),
        ("duckdb_filter_parquet", "DuckDB filter: pyarrow's Parquet of the rows"),
        ("duckdb_topk_scan", "DuckDB topk: npy.scan of its columns (read)"),
        ("duckdb_topk_mapped", "DuckDB topk: the same, map_local_files=True"),
        ("duckdb_topk_parquet", "DuckDB topk: pyarrow's Parquet of the rows"),
        ("polars_group_scan", "polars group: npy.polars.scan_npy (read)"),
        ("polars_group_mapped", "polars group: the same, map_local_files=True"),
        ("polars_group_parquet", "polars group: pl.scan_parquet of the rows"),
        ("polars_sums_scan", "polars sums: npy.polars.scan_npy (read)"),
        ("polars_sums_mapped", "polars sums: the same, map_local_files=True"),
        ("polars_sums_parquet", "polars sums: pl.scan_parquet of the rows"),
        ("polars_avg_scan", "polars avg: npy.polars.scan_npy (read)"),
        ("polars_avg_mapped", "polars avg: the same, map_local_files=True"),
        ("polars_avg_parquet", "polars avg: pl.scan_parquet of the rows"),
        ("polars_filter_scan", "polars filter: npy.polars.scan_npy (read)"),
        ("polars_filter_mapped", "polars filter: the same, map_local_files=True"),
        ("polars_filter_parquet", "polars filter: pl.scan_parquet of the rows"),
        ("polars_topk_scan", "polars topk: npy.polars.scan_npy (read)"),
        ("polars_topk_mapped", "polars topk: the same, map_local_files=True"),
        ("polars_topk_parquet", "polars topk: pl.scan_parquet of the rows"),
        ("remote_open_npy", "1,000 rows of a 1 GiB .npy on S3 (moto): npy.open(url)[a:b]"),
        ("remote_open_peer", "the same by pyarrow's S3 file and np.load"),
        ("dask_from_npy", "Dask sum of npy.dask.from_npy, 512 MiB <f8, 2 workers"),
        ("dask_from_array", "Dask sum of da.from_array(np.load(mmap_mode='r'))"),
    ],
    goals: &[
        ("npy.load / np.load, <f8", "f8_npy", "f8_np", Goal::AtMost(1.0)),
        ("npy.load / np.load, Trace", "trace_npy", "trace_np", Goal::AtMost(1.0)),
        ("load of npz / np.load, deflated", "npz_npy", "npz_np", Goal::AtMost(0.6)),
        // Issue 44: NumPy's level on every row, medians.
        ("npy.save / np.save, <f8", "save_f8_npy", "save_f8_np", Goal::MedianAtMost(1.1)),
        ("npy.save / np.save, Trace", "save_trace_npy", "save_trace_np", Goal::MedianAtMost(1.1)),
        (
            "npy.save(durable=True) / np.save: what durability costs",
            "save_durable_npy",
            "save_durable_np",
            Goal::Context,
        ),
        ("savez_compressed / NumPy's", "savez_c_npy", "savez_c_np", Goal::MedianAtMost(0.5)),
        ("npy.load / np.load, objects: strs", "objects_strs_npy", "objects_strs_np", Goal::MedianAtMost(1.0)),
        ("npy.load / np.load, objects: dicts", "objects_dicts_npy", "objects_dicts_np", Goal::MedianAtMost(1.0)),
        ("npy.load / np.load, objects: mixed", "objects_mixed_npy", "objects_mixed_np", Goal::MedianAtMost(1.0)),
        ("10M records / 1M records to NumPy", "vec_10m", "vec_1m", Goal::AtMost(2.0)),
        // Issue 45: whole-row queries at Parquet's time, narrow ones within 2x; medians.
        ("DuckDB group (whole rows): npy.scan / Parquet", "duckdb_group_scan", "duckdb_group_parquet", Goal::MedianAtMost(1.0)),
        ("DuckDB group (whole rows): mapped npy.scan / Parquet", "duckdb_group_mapped", "duckdb_group_parquet", Goal::Context),
        ("DuckDB sums (whole rows): npy.scan / Parquet", "duckdb_sums_scan", "duckdb_sums_parquet", Goal::MedianAtMost(1.0)),
        ("DuckDB sums (whole rows): mapped npy.scan / Parquet", "duckdb_sums_mapped", "duckdb_sums_parquet", Goal::Context),
        ("DuckDB avg (whole rows): npy.scan / Parquet", "duckdb_avg_scan", "duckdb_avg_parquet", Goal::MedianAtMost(1.0)),
        ("DuckDB avg (whole rows): mapped npy.scan / Parquet", "duckdb_avg_mapped", "duckdb_avg_parquet", Goal::Context),
        ("DuckDB filter (narrow): npy.scan / Parquet", "duckdb_filter_scan", "duckdb_filter_parquet", Goal::MedianAtMost(2.0)),
        ("DuckDB filter (narrow): mapped npy.scan / Parquet", "duckdb_filter_mapped", "duckdb_filter_parquet", Goal::MedianAtMost(2.0)),
        ("DuckDB topk (narrow): npy.scan / Parquet", "duckdb_topk_scan", "duckdb_topk_parquet", Goal::MedianAtMost(2.0)),
        ("DuckDB topk (narrow): mapped npy.scan / Parquet", "duckdb_topk_mapped", "duckdb_topk_parquet", Goal::MedianAtMost(2.0)),
        ("polars group (whole rows): npy.scan / Parquet", "polars_group_scan", "polars_group_parquet", Goal::MedianAtMost(1.0)),
        ("polars group (whole rows): mapped npy.scan / Parquet", "polars_group_mapped", "polars_group_parquet", Goal::Context),
        ("polars sums (whole rows): npy.scan / Parquet", "polars_sums_scan", "polars_sums_parquet", Goal::MedianAtMost(1.0)),
        ("polars sums (whole rows): mapped npy.scan / Parquet", "polars_sums_mapped", "polars_sums_parquet", Goal::Context),
        ("polars avg (whole rows): npy.scan / Parquet", "polars_avg_scan", "polars_avg_parquet", Goal::MedianAtMost(1.0)),
        ("polars avg (whole rows): mapped npy.scan / Parquet", "polars_avg_mapped", "polars_avg_parquet", Goal::Context),
        ("polars filter (narrow): npy.scan / Parquet", "polars_filter_scan", "polars_filter_parquet", Goal::MedianAtMost(2.0)),
        ("polars filter (narrow): mapped npy.scan / Parquet", "polars_filter_mapped", "polars_filter_parquet", Goal::MedianAtMost(2.0)),
        ("polars topk (narrow): npy.scan / Parquet", "polars_topk_scan", "polars_topk_parquet", Goal::MedianAtMost(2.0)),
        ("polars topk (narrow): mapped npy.scan / Parquet", "polars_topk_mapped", "polars_topk_parquet", Goal::MedianAtMost(2.0)),
        ("Dask sum: npy.dask.from_npy / da.from_array", "dask_from_npy", "dask_from_array", Goal::MedianAtMost(1.0)),
        // Issue 46: a slice of a remote file in a tenth of the time (bytes: a `#` line).
        ("1,000 remote rows: npy.open / np.load over S3", "remote_open_npy", "remote_open_peer", Goal::MedianAtMost(0.1)),
    ],
};

const PARTS: [&Part; 10] = [&F8, &RECORDS, &NPZ, &MMAP, &ARROW, &SQL, &CLUSTER, &APPEND, &HEADER, &PYTHON];

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
    /// Data bytes of the `mmap` part's big file.
    map_bytes: u64,
    /// Batches of 10,000 records of the `append` part.
    batches: u64,
    /// Fields of each record dtype of the `header` part.
    fields: u64,
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
            "append" => ("--batches", self.batches),
            "header" => ("--fields", self.fields),
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

    let mut done: Vec<(&Part, BTreeMap<String, Timing>)> = Vec::new();
    for part in settings.parts() {
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
        let mut timings = if part.bench.is_empty() {
            crate::ci::install_python_package(&python)?;
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
            timings.extend(run_bench_lines(&mut numpy)?);
        }

        // Free the disk before the next part; keep what is measured so far.
        remove_big_files(&dir);
        done.push((part, timings));
        fs::write(&report_path, report(&done, &settings))
            .map_err(|e| format!("cannot write {}: {e}", report_path.display()))?;
    }

    project::step("report");
    print!("{}", report(&done, &settings));
    println!("report written to {}", report_path.display());
    Ok(())
}

fn parse_args(args: &[&str]) -> Result<Settings> {
    let mut settings = Settings {
        only: 0,
        bytes: 1 << 30,
        records: 4_000_000,
        elements: 4_000_000,
        map_bytes: 4 << 30,
        batches: 1_000,
        fields: 2_000,
        repeat: 3,
    };
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        if !matches!(
            arg,
            "--only" | "--bytes" | "--records" | "--elements" | "--map-bytes" | "--batches" | "--fields" | "--repeat"
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
                            "--only takes f8, records, npz, mmap, arrow, sql, cluster, append, header or python (or several, \
                             comma-separated), not {name:?}; {USAGE}"
                        ));
                    };
                    settings.only |= 1 << i;
                }
            }
            "--bytes" => settings.bytes = number()?,
            "--records" => settings.records = number()?,
            "--elements" => settings.elements = number()?,
            "--map-bytes" => settings.map_bytes = number()?,
            "--batches" => settings.batches = number()?,
            "--fields" => settings.fields = number()?,
            _ => settings.repeat = value.parse().map_err(|e| format!("--repeat {value}: {e}; {USAGE}"))?,
        }
    }
    if settings.bytes < 16 || !settings.bytes.is_multiple_of(8) {
        return Err(format!("--bytes must be a multiple of 8, at least 16 (got {})", settings.bytes));
    }
    if settings.map_bytes < 16 || !settings.map_bytes.is_multiple_of(8) {
        return Err(format!("--map-bytes must be a multiple of 8, at least 16 (got {})", settings.map_bytes));
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
    if settings.repeat == 0 {
        return Err("--repeat must be at least 1".to_string());
    }
    Ok(settings)
}

/// Runs `cmd`, echoing its output as it comes, and collects its
/// `bench <name> best=<s> median=<s> bytes=<n>` lines.
fn run_bench_lines(cmd: &mut Command) -> Result<BTreeMap<String, Timing>> {
    let shown = project::show(cmd);
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).spawn().map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    let mut timings = BTreeMap::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("reading the output of `{shown}`: {e}"))?;
            println!("{line}");
            if let Some(rest) = line.strip_prefix("bench ") {
                let (name, timing) =
                    parse_line(rest).ok_or_else(|| format!("bad bench line from `{shown}`: {line}"))?;
                timings.insert(name, timing);
            }
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for `{shown}`: {e}"))?;
    if !status.success() {
        return Err(format!("`{shown}` failed ({status})"));
    }
    Ok(timings)
}

/// Parses `<name> best=<s> median=<s> bytes=<n>`.
fn parse_line(rest: &str) -> Option<(String, Timing)> {
    let mut words = rest.split_whitespace();
    let name = words.next()?.to_string();
    let mut field = |key: &str| words.next()?.strip_prefix(key)?.strip_prefix('=').map(str::to_string);
    let best = field("best")?.parse().ok()?;
    let median = field("median")?.parse().ok()?;
    let bytes = field("bytes")?.parse().ok()?;
    Some((name, Timing { best, median, bytes }))
}

/// The report: settings, then each part's measurements and goal ratios, then a summary.
fn report(done: &[(&Part, BTreeMap<String, Timing>)], settings: &Settings) -> String {
    let mut out = String::new();
    let thp = fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_else(|_| "unknown".into());
    let _ = writeln!(out, "npy bench: best and median of {} runs (after one warm-up run)", settings.repeat);
    let _ = writeln!(out, "transparent huge pages: {}", thp.trim());
    let (mut missed, mut goals) = (0, 0);
    for (part, timings) in done {
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
            "python" => {
                let _ = writeln!(
                    out,
                    "<f8 file: {} data bytes ({:.3} GiB), saves of half of it; 1,000,000 aligned Trace records \
                     (56 bytes each); 5 deflated members of {} f64 each; object arrays of 1,000,000 short strs, \
                     dicts of 3 keys and mixed plain values; 1,000,000 shot records (292 bytes) in 16 .npy files and as Parquet; \
                     512 MiB of <f8 for Dask (32 MiB chunks)",
                    settings.bytes,
                    gib(settings.bytes),
                    settings.bytes / 8 / 4 / 5
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
        missed += m;
        goals += g;
    }
    let _ = writeln!(out);
    if missed == 0 {
        let _ = writeln!(out, "all {goals} speed goals met");
    } else {
        let _ = writeln!(out, "{missed} of {goals} speed goals MISSED (benchmarks report, they do not fail the run)");
    }
    out
}

/// One part's table and goal ratios; returns (goals missed, goals).
fn part_report(out: &mut String, part: &Part, timings: &BTreeMap<String, Timing>) -> (usize, usize) {
    let _ = writeln!(out);
    let _ = writeln!(out, "{:<54} {:>9} {:>9} {:>8}", "measurement", "best", "median", "GiB/s");
    for (name, what) in part.rows {
        match timings.get(*name) {
            Some(t) => {
                let rate = if t.bytes == 0 { "-".to_string() } else { format!("{:.2}", gib(t.bytes) / t.best) };
                let (best, median) = (duration(t.best), duration(t.median));
                let _ = writeln!(out, "{what:<54} {best:>9} {median:>9} {rate:>8}");
            }
            None => {
                let _ = writeln!(out, "{what:<54} {:>9} {:>9} {:>8}", "n/a", "n/a", "n/a");
            }
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<34} {:>11} {:>13} {:>11}  result (on best times; `med` goals on medians)",
        "goal ratio", "best ratio", "median ratio", "goal"
    );
    let mut missed = 0;
    for &(what, num, den, goal) in part.goals {
        let (Some(n), Some(d)) = (timings.get(num), timings.get(den)) else {
            let _ = writeln!(out, "{what:<34} {:>11} {:>13} {:>11}  n/a (not measured)", "n/a", "n/a", goal.text());
            continue;
        };
        let (ratio, median_ratio) = (n.best / d.best, n.median / d.median);
        let result = match goal.passes(ratio, median_ratio) {
            Some(true) => "PASS",
            Some(false) => {
                missed += 1;
                "MISS"
            }
            None => "context",
        };
        let _ = writeln!(out, "{what:<34} {ratio:>11.3} {median_ratio:>13.3} {:>11}  {result}", goal.text());
    }
    let goals = part.goals.iter().filter(|g| !matches!(g.3, Goal::Context)).count();
    (missed, goals)
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
            ["f8", "records", "npz", "mmap", "arrow", "sql", "cluster", "append", "header", "python"]
        );
        assert!(parse_args(&["--only", "parquet"]).unwrap_err().contains("header or python"));
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
    fn every_goal_names_rows_of_its_part() {
        for part in [&F8, &RECORDS, &NPZ, &MMAP, &ARROW, &SQL, &APPEND, &HEADER] {
            for &(what, num, den, _) in part.goals {
                for name in [num, den] {
                    assert!(part.rows.iter().any(|(row, _)| *row == name), "{}: goal {what:?} names {name}", part.name);
                }
            }
        }
    }
}
