//! The bench's parts: each one's bench target, measurements (the report's rows) and speed
//! goals, in the order a run takes them. What each part measures, and why those goals, is
//! in the `bench` module's docs.

use super::Timing;

/// A goal: on the ratio numerator / denominator of their times, or on one row's peak memory
/// or size.
#[derive(Debug, Clone, Copy)]
pub(super) enum Goal {
    /// Passes when the ratio of the best times is at most this.
    AtMost(f64),
    /// Passes when the ratio of the median times is at most this: the goals an issue
    /// states on medians (issue 19: "at or below NumPy's time (median of >= 3)").
    MedianAtMost(f64),
    /// Passes when the ratio is at least this (the other side is that many times slower).
    AtLeast(f64),
    /// No goal: shown for context.
    Context,
    /// Passes when the numerator's peak resident memory (`rss=`, the largest of its runs)
    /// is at most this many bytes; such a goal names no denominator (""). Issue 48: npy sql
    /// over an archive in bounded memory, as npy-cli's memory tests hold it.
    RssAtMost(u64),
    /// Passes when the ratio of the best times is at most the first number, or the
    /// numerator's best time is at most the second (seconds) above the denominator's: a
    /// goal on calls of microseconds, where a ratio alone measures noise (the `js` part's
    /// `<f8` view).
    AtMostOrWithin(f64, f64),
    /// Passes when the numerator's row, a size (its `bytes=`, its times 0), is at most this
    /// many bytes; such a goal names no denominator (""). The `js` part's WebAssembly module
    /// after gzip, and what its viewer reads to scroll.
    BytesAtMost(u64),
    /// Passes when the numerator's best time is at most this many seconds; such a goal
    /// names no denominator (""). The viewer's time to first rows (issue 66: "≤ 1 s").
    SecondsAtMost(f64),
    /// Passes when the numerator's row moves at least this many bytes a second: its
    /// `bytes=` over its best time; such a goal names no denominator (""). The viewer's
    /// statistics of a 1 GB column (issue 80: "≥ 500 MB/s").
    RateAtLeast(f64),
    /// Passes when the ratio of the two rows' sizes (their `bytes=`, times 0) is at most
    /// this: the `deflate` part's members against NumPy's (issue 67: "≤ 1.02×").
    SizeRatioAtMost(f64),
}

impl Goal {
    /// Whether the goal is met by the numerator's row `n` and the denominator's `d` (none
    /// for a goal on one row); `None` for context, or for an RSS goal whose row has no peak.
    pub(super) fn passes(self, n: &Timing, d: Option<&Timing>) -> Option<bool> {
        let ratio = |d: &Timing| n.best / d.best;
        match self {
            Goal::AtMost(g) => Some(ratio(d?) <= g),
            Goal::MedianAtMost(g) => Some(n.median / d?.median <= g),
            Goal::AtLeast(g) => Some(ratio(d?) >= g),
            Goal::AtMostOrWithin(g, seconds) => d.map(|d| ratio(d) <= g || n.best - d.best <= seconds),
            Goal::Context => None,
            Goal::RssAtMost(limit) => n.rss.map(|rss| rss <= limit),
            Goal::BytesAtMost(limit) => Some(n.bytes <= limit),
            Goal::SecondsAtMost(limit) => Some(n.best <= limit),
            Goal::RateAtLeast(limit) => Some(n.best > 0.0 && n.bytes as f64 / n.best >= limit),
            Goal::SizeRatioAtMost(g) => d.map(|d| n.bytes as f64 <= g * d.bytes as f64),
        }
    }

    pub(super) fn text(self) -> String {
        match self {
            Goal::AtMost(g) => format!("<= {}", goal_number(g)),
            Goal::MedianAtMost(g) => format!("<= {} med", goal_number(g)),
            Goal::AtLeast(g) => format!(">= {}", goal_number(g)),
            Goal::AtMostOrWithin(g, seconds) => format!("<= {} or +{:.0} µs", goal_number(g), seconds * 1e6),
            Goal::Context => "-".to_string(),
            Goal::RssAtMost(limit) => format!("<= {} MiB", limit >> 20),
            Goal::BytesAtMost(limit) if limit % 1000 == 0 => format!("<= {} KB", limit / 1000),
            Goal::BytesAtMost(limit) => format!("<= {limit} B"),
            Goal::SecondsAtMost(limit) => format!("<= {limit} s"),
            Goal::RateAtLeast(limit) => format!(">= {} MB/s", limit / 1e6),
            Goal::SizeRatioAtMost(g) => format!("<= {} size", goal_number(g)),
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
pub(super) struct Part {
    /// The `--only` name, and the first argument of `bench.py`.
    pub(super) name: &'static str,
    /// The package of the bench target.
    pub(super) package: &'static str,
    /// The `cargo bench --bench` target.
    pub(super) bench: &'static str,
    /// The package features the target needs (`--features`), or "".
    pub(super) features: &'static str,
    /// Whether the target runs NumPy's measurements itself, in its own rounds (`--peer`:
    /// `benches/common/mod.rs`'s `Peer`); else `bench.py` runs them after it.
    pub(super) peer: bool,
    pub(super) title: &'static str,
    /// The measurements, in table order: name (as the bench lines give it) and description.
    pub(super) rows: &'static [(&'static str, &'static str)],
    /// The goals: what, numerator, denominator ("" for an RSS goal), goal.
    pub(super) goals: &'static [(&'static str, &'static str, &'static str, Goal)],
}

pub(super) const F8: Part = Part {
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
        ("write_over", "as a user times it: npy write over its last file (sync(false))"),
        ("np_save_over", "as a user times it: np.save over its last file, right after"),
    ],
    goals: &[
        ("native read / limit read", "read_le", "limit_read", Goal::AtMost(1.1)),
        ("native read / np.load", "read_le", "np_load_le", Goal::AtMost(1.0)),
        ("BE read / native read", "read_be", "read_le", Goal::AtMost(1.5)),
        ("write / limit write", "write", "limit_write", Goal::AtMost(1.1)),
        ("write / np.save", "write", "np_save", Goal::AtMost(1.0)),
        ("as a user times it: write / np.save", "write_over", "np_save_over", Goal::MedianAtMost(1.0)),
        ("W2: >f8 write / np.save >f8", "write_be", "np_save_be", Goal::MedianAtMost(1.0)),
        (">f8 write / <f8 write", "write_be", "write", Goal::Context),
        ("native read / 2-CPU limit read", "read_le", "limit_read_2cpu", Goal::Context),
        ("BE read / np.load(>f8).astype", "read_be", "np_load_be_astype", Goal::Context),
        ("synced write / limit + fsync", "write_synced", "limit_write_synced", Goal::Context),
    ],
};

pub(super) const RECORDS: Part = Part {
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
        ("write_aligned_over", "as a user times it: npy write [TraceAligned] over its last file"),
        ("write_aligned_in_place", "the same, not atomic: write_npy_to(File::create(..))"),
        ("np_save_aligned_over", "as a user times it: np.save aligned over its last file, right after"),
        ("write_packed_over", "as a user times it: npy write [Trace] (plain derive) over its last file"),
        ("write_packed_mem_over", "as a user times it: npy write [TracePackedMem] over its last file"),
        ("np_save_packed_over", "as a user times it: np.save packed over its last file, right after"),
        ("write_aligned_new", "as a user times it: npy write [TraceAligned] to a new file"),
        ("np_save_aligned_new", "as a user times it: np.save aligned to a new file, right after"),
        ("write_packed_new", "as a user times it: npy write [Trace] (plain derive) to a new file"),
        ("np_save_packed_new", "as a user times it: np.save packed to a new file, right after"),
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
        (
            "as a user times it: matched write / np.save",
            "write_aligned_over",
            "np_save_aligned_over",
            Goal::MedianAtMost(1.0),
        ),
        (
            "as a user times it: packed-memory write / np.save packed",
            "write_packed_mem_over",
            "np_save_packed_over",
            Goal::MedianAtMost(1.0),
        ),
        (
            "as a user times it: in-place write / np.save",
            "write_aligned_in_place",
            "np_save_aligned_over",
            Goal::Context,
        ),
        (
            "as a user times it: plain derive write / np.save packed",
            "write_packed_over",
            "np_save_packed_over",
            Goal::MedianAtMost(1.1),
        ),
        (
            "as a user times it, new files: matched write / np.save",
            "write_aligned_new",
            "np_save_aligned_new",
            Goal::MedianAtMost(1.1),
        ),
        (
            "as a user times it, new files: plain derive write / np.save",
            "write_packed_new",
            "np_save_packed_new",
            Goal::MedianAtMost(1.1),
        ),
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

pub(super) const NPZ: Part = Part {
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

/// One deflated member of each kind, npy's write against `np.savez_compressed` (on every CPU
/// and on one thread) and npy's read of NumPy's member against `np.load` (one thread): a
/// row pair for each time and one for size per kind, in `benches/deflate.rs`' order. The
/// goals are issue 82's: NumPy's size within 2%, a third of its time on one thread, a fifth
/// on the bench's two CPUs, and reads in 0.35 of `np.load`'s.
macro_rules! deflate_part {
    ($($kind:literal: $what:literal),* $(,)?) => {
        Part {
            name: "deflate",
            package: "npy",
            bench: "deflate",
            features: "",
            peer: true,
            title: "deflate: one member of each kind, npy npz::Writer (level 6) against np.savez_compressed, \
                    and reads of NumPy's member against np.load",
            rows: &[$(
                (concat!("deflate_", $kind), concat!("npy ", $what)),
                (concat!("deflate1_", $kind), concat!("npy, one thread, ", $what)),
                (concat!("np_deflate_", $kind), concat!("np.savez_compressed ", $what)),
                (concat!("inflate1_", $kind), concat!("npy read, one thread, ", $what)),
                (concat!("np_inflate_", $kind), concat!("np.load ", $what)),
                (concat!("size_", $kind), concat!("npy's member, ", $what)),
                (concat!("np_size_", $kind), concat!("NumPy's member, ", $what)),
            )*],
            goals: &[$(
                (concat!($kind, ": write / NumPy's"), concat!("deflate_", $kind), concat!("np_deflate_", $kind), Goal::AtMost(0.2)),
                (concat!($kind, ": write, one thread / NumPy's"), concat!("deflate1_", $kind), concat!("np_deflate_", $kind), Goal::AtMost(0.33)),
                (concat!($kind, ": read, one thread / np.load"), concat!("inflate1_", $kind), concat!("np_inflate_", $kind), Goal::AtMost(0.35)),
                (concat!($kind, ": size / NumPy's"), concat!("size_", $kind), concat!("np_size_", $kind), Goal::SizeRatioAtMost(1.02)),
            )*],
        }
    };
}

pub(super) const DEFLATE: Part = deflate_part! {
    "trace_id": "traces' trace_id (<i4)",
    "t0": "traces' t0 (<f8)",
    "flags": "traces' flags (u1)",
    "samples": "traces' samples (<f4, 64 each)",
    "random_f8": "random floats (<f8)",
    "small_i8": "integers 0-99 (<i8)",
    "text_U": "words (<U8)",
    "zeros": "zeros (<f8)",
    "walk_f8": "a random walk (<f8)",
    "ints_0_49": "integers 0-49 (<i8)",
    "image_u1": "an image (u1, gradients)",
};

/// A training loop's reads from Rust (issue 69): the `python` part's small-file and shard
/// rows, with npy-core's `Loader`, npy-store's `load_many` and `Shards::gather_raw` in
/// place of `npy.load`, `npy.load_many` and `npy.open(shards)[rows]`, against NumPy and the
/// floor (a read loop; a `pread` per row); the Python package's rows (the same Rust) are
/// context. (On two CPUs a read loop's time halved is the most threads can give, so
/// `load_many` is held to three quarters of the loop's.)
pub(super) const TRAINING: Part = Part {
    name: "training",
    package: "npy-store",
    bench: "training",
    features: "",
    peer: true,
    title: "training: small files and random rows of shards from Rust, against NumPy",
    rows: &[
        ("files_floor", "5,000 files of 2 KiB: std::fs::read loop (the floor)"),
        ("files_loader", "5,000 files of 2 KiB: npy_core::Loader loop"),
        ("files_load_many", "5,000 files of 2 KiB: npy_store::many::load_many (threads)"),
        ("py_files_load_many", "5,000 files of 2 KiB: Python's npy.load_many"),
        ("np_files_load", "5,000 files of 2 KiB: np.load loop"),
        ("gather_floor", "20 batches of 256 rows of 16 shards: a pread per row (the floor)"),
        ("gather_read", "the same: Shards::gather_raw (pread)"),
        ("gather_mapped", "the same: Shards::gather_raw through maps"),
        ("py_gather_read", "the same: Python's npy.open(shards)[rows]"),
        ("np_gather_maps", "the same: NumPy, maps grouped"),
    ],
    goals: &[
        ("5,000 small files: Loader loop / read loop", "files_loader", "files_floor", Goal::MedianAtMost(1.3)),
        ("5,000 small files: load_many / np.load loop", "files_load_many", "np_files_load", Goal::MedianAtMost(0.1)),
        ("5,000 small files: load_many / read loop", "files_load_many", "files_floor", Goal::MedianAtMost(0.75)),
        ("5,000 small files: load_many / Python's", "files_load_many", "py_files_load_many", Goal::Context),
        ("5,000 small files: Loader loop / np.load loop", "files_loader", "np_files_load", Goal::Context),
        ("256 rows of 16 shards: pread / NumPy's", "gather_read", "np_gather_maps", Goal::MedianAtMost(1.0)),
        ("256 rows of 16 shards: mapped / NumPy's", "gather_mapped", "np_gather_maps", Goal::MedianAtMost(1.0)),
        ("256 rows of 16 shards: pread / a pread per row", "gather_read", "gather_floor", Goal::MedianAtMost(1.3)),
        ("256 rows of 16 shards: pread / Python's", "gather_read", "py_gather_read", Goal::Context),
    ],
};

pub(super) const MMAP: Part = Part {
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

pub(super) const ARROW: Part = Part {
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

pub(super) const SQL: Part = Part {
    name: "sql",
    package: "npy-datafusion",
    bench: "sql",
    features: "",
    peer: false,
    title: "sql: SELECT avg(t0), max(samples[1]) over Trace records in 16 .npy files, npy-datafusion and NumPy; \
            five queries over shot records, npy sql over .npy and .npz, DuckDB 2.0.1 over Parquet and NumPy",
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
        ("group_npz", "npy sql, 16 stored .npz (np.savez): the same"),
        ("group_npzc", "npy sql, 16 deflated .npz (savez_compressed): the same"),
        ("sums_npy", "npy sql: sum(rx + ry + t0), max(samples[64]), min(dt)"),
        ("sums_npy_mapped", "npy sql --map-local-files: the same"),
        ("sums_duckdb", "DuckDB over Parquet: the same"),
        ("sums_numpy", "np.load + NumPy: the same"),
        ("sums_npz", "npy sql, 16 stored .npz (np.savez): the same"),
        ("sums_npzc", "npy sql, 16 deflated .npz (savez_compressed): the same"),
        ("avg_npy", "npy sql: avg(samples[10])"),
        ("avg_npy_mapped", "npy sql --map-local-files: the same"),
        ("avg_duckdb", "DuckDB over Parquet: the same"),
        ("avg_numpy", "np.load + NumPy: the same"),
        ("avg_npz", "npy sql, 16 stored .npz (np.savez): the same"),
        ("avg_npzc", "npy sql, 16 deflated .npz (savez_compressed): the same"),
        ("filter_npy", "npy sql: count(*) WHERE t0 > 0.5 AND station = 7"),
        ("filter_npy_mapped", "npy sql --map-local-files: the same"),
        ("filter_duckdb", "DuckDB over Parquet: the same"),
        ("filter_numpy", "np.load + NumPy: the same"),
        ("filter_npz", "npy sql, 16 stored .npz (np.savez): the same"),
        ("filter_npzc", "npy sql, 16 deflated .npz (savez_compressed): the same"),
        ("topk_npy", "npy sql: trace_id, t0 ORDER BY t0 DESC LIMIT 10"),
        ("topk_npy_mapped", "npy sql --map-local-files: the same"),
        ("topk_duckdb", "DuckDB over Parquet: the same"),
        ("topk_numpy", "np.load + NumPy: the same"),
        ("topk_npz", "npy sql, 16 stored .npz (np.savez): the same"),
        ("topk_npzc", "npy sql, 16 deflated .npz (savez_compressed): the same"),
        ("field_npy", "npy sql: max(t0) (a plain field)"),
        ("element_npy", "npy sql: max(samples[10]) (one element of a subarray)"),
        ("element_whole_npy", "npy sql: max(samples[station - station + 10])"),
    ],
    goals: &[
        ("GROUP BY: npy sql / DuckDB", "group_npy", "group_duckdb", Goal::MedianAtMost(0.5)),
        ("sums: npy sql / DuckDB", "sums_npy", "sums_duckdb", Goal::MedianAtMost(0.5)),
        ("avg: npy sql / DuckDB", "avg_npy", "avg_duckdb", Goal::MedianAtMost(0.5)),
        ("filter: mapped npy sql / DuckDB", "filter_npy_mapped", "filter_duckdb", Goal::MedianAtMost(2.0)),
        ("top-k: mapped npy sql / DuckDB", "topk_npy_mapped", "topk_duckdb", Goal::MedianAtMost(2.0)),
        // Issue 48: a table saved as archives of a member per field queried near .npy's time.
        ("GROUP BY: stored .npz / .npy", "group_npz", "group_npy", Goal::MedianAtMost(1.5)),
        ("sums: stored .npz / .npy", "sums_npz", "sums_npy", Goal::MedianAtMost(1.5)),
        ("avg: stored .npz / .npy", "avg_npz", "avg_npy", Goal::MedianAtMost(1.5)),
        ("filter: stored .npz / .npy", "filter_npz", "filter_npy", Goal::MedianAtMost(1.5)),
        ("top-k: stored .npz / .npy", "topk_npz", "topk_npy", Goal::MedianAtMost(1.5)),
        ("GROUP BY: deflated .npz / .npy", "group_npzc", "group_npy", Goal::Context),
        ("sums: deflated .npz / .npy", "sums_npzc", "sums_npy", Goal::Context),
        ("avg: deflated .npz / .npy", "avg_npzc", "avg_npy", Goal::Context),
        ("filter: deflated .npz / .npy", "filter_npzc", "filter_npy", Goal::Context),
        ("top-k: deflated .npz / .npy", "topk_npzc", "topk_npy", Goal::Context),
        // Issue 48: a subarray's element read as cheaply as a plain field; the whole list's
        // decoding (an index the engine cannot read alone) for context.
        ("subarray element / plain field", "element_npy", "field_npy", Goal::MedianAtMost(1.2)),
        ("element decoded whole / element", "element_whole_npy", "element_npy", Goal::Context),
        // Issue 48: bounded memory over archives, stored and deflated (npy-cli's tests: 256 MiB).
        ("GROUP BY: stored .npz peak RSS", "group_npz", "", Goal::RssAtMost(256 << 20)),
        ("sums: stored .npz peak RSS", "sums_npz", "", Goal::RssAtMost(256 << 20)),
        ("avg: stored .npz peak RSS", "avg_npz", "", Goal::RssAtMost(256 << 20)),
        ("filter: stored .npz peak RSS", "filter_npz", "", Goal::RssAtMost(256 << 20)),
        ("top-k: stored .npz peak RSS", "topk_npz", "", Goal::RssAtMost(256 << 20)),
        ("GROUP BY: deflated .npz peak RSS", "group_npzc", "", Goal::RssAtMost(256 << 20)),
        ("sums: deflated .npz peak RSS", "sums_npzc", "", Goal::RssAtMost(256 << 20)),
        ("avg: deflated .npz peak RSS", "avg_npzc", "", Goal::RssAtMost(256 << 20)),
        ("filter: deflated .npz peak RSS", "filter_npzc", "", Goal::RssAtMost(256 << 20)),
        ("top-k: deflated .npz peak RSS", "topk_npzc", "", Goal::RssAtMost(256 << 20)),
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

pub(super) const CLUSTER: Part = Part {
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

pub(super) const APPEND: Part = Part {
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

pub(super) const HEADER: Part = Part {
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

pub(super) const PYTHON: Part = Part {
    name: "python",
    package: "npy-python",
    // No Rust bench target: `npy-python/bench.py` times the installed package and NumPy.
    bench: "",
    features: "",
    peer: true,
    title: "python: the npy package (npy-python) against NumPy 2.4.6 in the same Python, same rounds (2 * --repeat + 1 after a warm-up, each side first in turn; every result checked)",
    rows: &[
        ("f8_npy", "npy.load of a .npy of <f8 (--bytes)"),
        ("f8_np", "np.load of it"),
        ("trace_npy", "npy.load of 1M aligned Trace records"),
        ("trace_np", "np.load of it"),
        ("be_i2_npy", "npy.load of 64 MiB of >i2 (stays big-endian)"),
        ("be_i2_np", "np.load of it"),
        ("npz_npy", "npy.load(..).load_all() of 5 deflated members (--bytes / 4 in all)"),
        ("npz_np", "dict(np.load(..)) of it"),
        ("save_f8_npy", "npy.save of <f8 (--bytes / 2) to a path, over the last round's file (atomic, not synced)"),
        ("save_f8_np", "np.save of it"),
        ("save_trace_npy", "npy.save of the 1M Trace records"),
        ("save_trace_np", "np.save of them"),
        ("save_durable_npy", "npy.save(..., durable=True) of the <f8 (synced to disk before it appears)"),
        ("save_durable_np", "np.save of it (never synced)"),
        ("savez_npy", "npy.savez of the 5 members (stored)"),
        ("savez_np", "np.savez of them"),
        ("savez_c_npy", "npy.savez_compressed of the 5 members"),
        ("savez_c_np", "np.savez_compressed of them"),
        ("objects_strs_npy", "npy.load of an object array of 1M short strs (never runs a pickle)"),
        ("objects_strs_np", "np.load(allow_pickle=True) of it"),
        ("objects_dicts_npy", "npy.load of an object array of 1M small dicts"),
        ("objects_dicts_np", "np.load(allow_pickle=True) of it"),
        ("objects_mixed_npy", "npy.load of an object array of 1M mixed plain values"),
        ("objects_mixed_np", "np.load(allow_pickle=True) of it"),
        ("objects_ragged_npy", "npy.load of an object array of 100k ragged <f8 arrays"),
        ("objects_ragged_np", "np.load(allow_pickle=True) of it"),
        ("objects_dict_of_arrays_npy", "npy.load of np.save(dict of ten 10 MB <f8 arrays)"),
        ("objects_dict_of_arrays_np", "np.load(allow_pickle=True) of it"),
        // As a user times them: each round npy, then NumPy, each over its last file.
        ("user_save_f8_npy", "as a user times it: npy.save of the <f8 (--bytes / 2) over its last file"),
        ("user_save_f8_np", "as a user times it: np.save of it, right after"),
        ("user_save_trace_npy", "as a user times it: npy.save of the 1M Trace records"),
        ("user_save_trace_np", "as a user times it: np.save of them"),
        ("user_savez_npy", "as a user times it: npy.savez of the 5 members (stored)"),
        ("user_savez_np", "as a user times it: np.savez of them"),
        ("user_objects_strs_npy", "as a user times it: npy.load of 300k short strs"),
        ("user_objects_strs_np", "as a user times it: np.load(allow_pickle=True) of them"),
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
        // Issue 55: a part of a column (decoded alone) against a plain field.
        ("part_samples9", "pa.table(npy.scan(shots, columns=['samples[9]'])): a part"),
        ("part_t0", "pa.table(npy.scan(shots, columns=['t0'])): a plain field"),
        ("remote_open_npy", "1,000 rows of a 1 GiB .npy on S3 (moto): npy.open(url)[a:b]"),
        ("remote_open_peer", "the same by pyarrow's S3 file: NumPy's header reader, one ranged read"),
        ("dask_from_npy", "Dask sum of npy.dask.from_npy, 512 MiB <f8, 2 workers"),
        ("dask_np_maps", "Dask sum of a task per chunk mapping the file (np.load(mmap_mode='r'))"),
        // Issue 57: a training set of 5,000 .npy files of 2 KiB.
        ("small_floor", "5,000 files of 2 KiB: Python's open/read/close loop (the floor)"),
        ("small_np_load", "5,000 files of 2 KiB: np.load loop"),
        ("small_npy_load", "5,000 files of 2 KiB: npy.load loop"),
        ("small_load_many", "5,000 files of 2 KiB: npy.load_many (threads, GIL released)"),
        // Issue 57: 20 batches of 256 random rows of 16 shards (100,000 x 64 <f4 each).
        ("shards_np_maps", "20 batches of 256 rows of 16 shards: NumPy, maps grouped"),
        ("shards_npy_mapped", "the same: npy.open(shards, map_local_files=True)[rows]"),
        ("shards_npy_read", "the same: npy.open(shards)[rows] (pread, the default)"),
        ("shards_s3_npy", "4 of the batches from the shards on S3 (moto): npy.open(urls)[rows]"),
        // Issue 58: Zstandard archives (npy.NpzWriter's default level) against NumPy's.
        ("zstd_write_traces_npy", "npy.NpzWriter zstd of 100k seismic traces (30.4 MB, 1/10 of the job's)"),
        ("zstd_write_traces_np", "np.savez_compressed of them"),
        ("zstd_load_traces_npy", "npy.load(..).load_all() of the Zstandard archive"),
        ("zstd_load_traces_np", "dict(np.load(..)) of savez_compressed's"),
        ("zstd_write_walk_npy", "npy.NpzWriter zstd of 64 MiB <f8 random walk"),
        ("zstd_write_walk_np", "np.savez_compressed of it"),
        ("zstd_load_walk_npy", "npy.load(..).load_all() of the Zstandard archive"),
        ("zstd_load_walk_np", "dict(np.load(..)) of savez_compressed's"),
    ],
    goals: &[
        ("npy.load / np.load, <f8", "f8_npy", "f8_np", Goal::AtMost(1.0)),
        ("npy.load / np.load, Trace", "trace_npy", "trace_np", Goal::AtMost(1.0)),
        ("npy.load / np.load, >i2", "be_i2_npy", "be_i2_np", Goal::MedianAtMost(1.0)),
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
        ("npy.savez / np.savez (stored)", "savez_npy", "savez_np", Goal::MedianAtMost(1.1)),
        ("savez_compressed / NumPy's", "savez_c_npy", "savez_c_np", Goal::MedianAtMost(0.5)),
        ("npy.load / np.load, objects: strs", "objects_strs_npy", "objects_strs_np", Goal::MedianAtMost(1.0)),
        ("npy.load / np.load, objects: dicts", "objects_dicts_npy", "objects_dicts_np", Goal::MedianAtMost(1.0)),
        ("npy.load / np.load, objects: mixed", "objects_mixed_npy", "objects_mixed_np", Goal::MedianAtMost(1.0)),
        // Issue 54: arrays inside object arrays.
        ("npy.load / np.load, objects: ragged arrays", "objects_ragged_npy", "objects_ragged_np", Goal::MedianAtMost(1.0)),
        (
            "npy.load / np.load, objects: dict of arrays",
            "objects_dict_of_arrays_npy",
            "objects_dict_of_arrays_np",
            Goal::MedianAtMost(1.0),
        ),
        // The same levels as a user times them (npy first each round, files
        // overwritten, nothing flushed or touched in between).
        ("as a user times it: npy.save / np.save, <f8", "user_save_f8_npy", "user_save_f8_np", Goal::MedianAtMost(1.1)),
        ("as a user times it: npy.save / np.save, Trace", "user_save_trace_npy", "user_save_trace_np", Goal::MedianAtMost(1.1)),
        ("as a user times it: npy.savez / np.savez", "user_savez_npy", "user_savez_np", Goal::MedianAtMost(1.1)),
        ("as a user times it: npy.load / np.load, 300k strs", "user_objects_strs_npy", "user_objects_strs_np", Goal::MedianAtMost(1.0)),
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
        ("npy.scan of a part / of a plain field", "part_samples9", "part_t0", Goal::MedianAtMost(1.2)),
        ("polars topk (narrow): mapped npy.scan / Parquet", "polars_topk_mapped", "polars_topk_parquet", Goal::MedianAtMost(2.0)),
        ("Dask sum: npy.dask.from_npy / np.load maps", "dask_from_npy", "dask_np_maps", Goal::MedianAtMost(1.0)),
        // Issue 46: a slice of a remote file in a tenth of the time (bytes: a `#` line).
        ("1,000 remote rows: npy.open / ranged reads", "remote_open_npy", "remote_open_peer", Goal::MedianAtMost(1.0)),
        // Issue 57: small files at the system-call floor.
        ("5,000 small files: npy.load loop / open+read loop", "small_npy_load", "small_floor", Goal::MedianAtMost(1.3)),
        ("5,000 small files: load_many / open+read loop", "small_load_many", "small_floor", Goal::MedianAtMost(0.5)),
        ("5,000 small files: load_many / np.load loop", "small_load_many", "small_np_load", Goal::MedianAtMost(0.1)),
        ("5,000 small files: npy.load loop / np.load loop", "small_npy_load", "small_np_load", Goal::Context),
        // Issue 57: a batch of rows across shards at NumPy's best (its maps, grouped); the
        // S3 requests, bytes and the other thread's progress are `#` lines.
        ("256 rows of 16 shards: mapped / NumPy's", "shards_npy_mapped", "shards_np_maps", Goal::MedianAtMost(1.0)),
        ("256 rows of 16 shards: pread / NumPy's", "shards_npy_read", "shards_np_maps", Goal::MedianAtMost(1.0)),
        // Issue 58: a tenth of savez_compressed's time, loads in a fifth (sizes: `#` lines).
        ("zstd write / savez_compressed, traces", "zstd_write_traces_npy", "zstd_write_traces_np", Goal::MedianAtMost(0.1)),
        ("zstd load / np.load, traces", "zstd_load_traces_npy", "zstd_load_traces_np", Goal::MedianAtMost(0.2)),
        ("zstd write / savez_compressed, <f8", "zstd_write_walk_npy", "zstd_write_walk_np", Goal::MedianAtMost(0.1)),
        ("zstd load / np.load, <f8", "zstd_load_walk_npy", "zstd_load_walk_np", Goal::MedianAtMost(0.2)),
    ],
};

pub(super) const JS: Part = Part {
    name: "js",
    package: "npy-js",
    // No Rust bench target: `npy-js/bench/bench.mjs` times the package in Node.
    bench: "",
    features: "",
    peer: true,
    title: "js: the npy JavaScript package (npy-js: npy-core in WebAssembly) against npyjs 1.2.0 and \
            fflate 0.8.3 in one Node process, same rounds (each row's runs interleaved with its peer's)",
    rows: &[
        ("f8_npy", "npy load(bytes).data, 100 MB <f8: a view (one call)"),
        ("f8_npyjs", "npyjs parse of the same bytes: a view (one call)"),
        ("small_npy", "npy load(bytes).data, 100 <f8 (one call)"),
        ("small_npyjs", "npyjs parse of the same bytes (one call)"),
        ("traces_npy", "npy load(bytes).columns() + each .data, 1M traces"),
        ("traces_copy", "one copy of their bytes: new Uint8Array(n).set(bytes)"),
        ("npz_npy", "npy loadNpz + get() + .data of each deflated column"),
        ("npz_fflate", "fflate unzipSync + npyjs parse of each member"),
        ("zstd_npy", "npy loadNpz + get() + .data, Zstandard members"),
        ("npz_unzip_fflate", "fflate unzipSync alone (context)"),
        ("wasm_gzip", "size: wasm/npy_js_bg.wasm after gzip -9"),
        ("viewer_open", "viewer: the traces picked, to first rows on screen"),
        ("viewer_scroll", "size: viewer's reads to show row 999,999 next"),
        ("viewer_ready", "viewer: page load to ready (context)"),
        ("viewer_overview", "viewer: a 4 GiB <f4 image picked, to its overview drawn"),
        ("viewer_overview_bytes", "size: viewer's reads for that overview (a wrapped Blob.slice)"),
        ("viewer_slice", "viewer: a slider step through a 2.1 GB volume, to the slice drawn"),
        ("viewer_slice_strided", "viewer: the same across a non-leading axis (context)"),
        ("viewer_stats", "viewer: statistics of a 1 GB <f8 column, streamed"),
        ("viewer_stats_histogram", "viewer: the same and its histogram (2 passes, context)"),
        ("viewer_stats_floor", "viewer: the same File's bytes read alone (floor)"),
    ],
    goals: &[
        ("<f8 view: npy / npyjs", "f8_npy", "f8_npyjs", Goal::AtMostOrWithin(1.1, 50e-6)),
        // Issue 82: a small load at most twice npyjs's, a page of small tiles pays it a tile.
        ("100 <f8: npy / npyjs", "small_npy", "small_npyjs", Goal::AtMost(2.0)),
        ("traces' columns / one copy", "traces_npy", "traces_copy", Goal::AtMost(3.0)),
        // Issue 82: a deflated member inflates in at most 0.7 of fflate's time, a Zstandard
        // one in 0.3 (each with npyjs's parse of the member).
        ("deflated npz: npy / fflate + npyjs", "npz_npy", "npz_fflate", Goal::AtMost(0.7)),
        ("Zstandard npz: npy / fflate + npyjs", "zstd_npy", "npz_fflate", Goal::AtMost(0.3)),
        ("npy: Zstandard npz / deflated npz", "zstd_npy", "npz_npy", Goal::AtMost(1.0)),
        ("module after gzip -9", "wasm_gzip", "", Goal::BytesAtMost(crate::js::MAX_GZIPPED)),
        ("viewer: traces to first rows", "viewer_open", "", Goal::SecondsAtMost(1.0)),
        ("viewer: bytes read to row 999,999", "viewer_scroll", "", Goal::BytesAtMost(1_000_000)),
        // Issue 80: a 4 GB image's overview in 2 s from under 16 MB; a slice of 2 GB in 0.1 s.
        ("viewer: 4 GiB image to its overview", "viewer_overview", "", Goal::SecondsAtMost(2.0)),
        ("viewer: bytes read for the overview", "viewer_overview_bytes", "", Goal::BytesAtMost(16_000_000)),
        ("viewer: a slice of a 2 GB volume", "viewer_slice", "", Goal::SecondsAtMost(0.1)),
        ("viewer: statistics of a 1 GB column", "viewer_stats", "", Goal::RateAtLeast(500e6)),
        ("fflate + npyjs / unzipSync alone", "npz_fflate", "npz_unzip_fflate", Goal::Context),
        ("viewer: statistics / File reads alone", "viewer_stats", "viewer_stats_floor", Goal::Context),
    ],
};

pub(super) const R: Part = Part {
    name: "r",
    package: "npy-r",
    // No Rust bench target: `npy-r/bench/bench.R` times the package in R.
    bench: "",
    features: "",
    peer: true,
    title: "r: the npy R package (npy-r: npy-core through extendr) against base R's readBin and writeBin, \
            data.table's fread and reticulate + NumPy, in one R process, same rounds",
    rows: &[
        ("f8_npy", "read_npy, 100 MB <f8 -> double vector"),
        ("f8_readbin", "readBin(con, \"double\", n) of the same bytes (floor)"),
        ("traces_npy", "read_npy, 1M traces -> data.frame, a column a field"),
        ("traces_readbin", "readBin(f, \"raw\", file.size(f)) (the floor)"),
        ("traces_fread", "data.table::fread of the same rows as CSV"),
        ("traces_reticulate", "reticulate: np.load + each field to R, data.frame"),
        ("traces_tail", "read_npy(f, rows = 999991:1000000): last 10 rows"),
        ("write_npy", "write_npy of the traces' data.frame (290 MiB)"),
        ("write_writebin", "writeBin of a raw vector of the file's bytes (floor)"),
    ],
    // fread's and reticulate's goals (at least 10 times read_npy's time; slower than it)
    // are bench.R's `# goal:` lines, stated only where the peer is installed.
    goals: &[
        ("<f8: read_npy / readBin", "f8_npy", "f8_readbin", Goal::AtMost(1.2)),
        ("traces: read_npy / readBin raw", "traces_npy", "traces_readbin", Goal::AtMost(2.0)),
        ("write_npy / writeBin", "write_npy", "write_writebin", Goal::AtMost(1.2)),
        ("last 10 rows / all rows", "traces_tail", "traces_npy", Goal::Context),
    ],
};

/// Every part, in the order a run takes them.
pub(super) const PARTS: [&Part; 14] =
    [&F8, &RECORDS, &NPZ, &DEFLATE, &MMAP, &ARROW, &SQL, &CLUSTER, &APPEND, &HEADER, &TRAINING, &PYTHON, &JS, &R];
