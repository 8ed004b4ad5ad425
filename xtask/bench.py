#!/usr/bin/env python3
"""NumPy's side of `cargo xtask bench`: np.load and np.save on the files the Rust benches made.

Usage: python3 bench.py f8 DIR BYTES REPEAT
       python3 bench.py records DIR RECORDS REPEAT
       python3 bench.py npz DIR ELEMENTS REPEAT
       python3 bench.py mmap DIR BYTES REPEAT
       python3 bench.py arrow DIR RECORDS REPEAT NPY
       python3 bench.py sql DIR RECORDS REPEAT NPY
       python3 bench.py append DIR BATCHES REPEAT
       python3 bench.py header DIR FIELDS REPEAT
       python3 bench.py serve deflate DIR TRACES
       python3 bench.py serve training DIR FILES
       python3 bench.py serve PART DIR SIZE [NPY]

`serve` makes this a peer of the Rust bench target of PART (benches/common/mod.rs, `Peer`:
the io and records targets start it with `--peer PYTHON`, as `cargo xtask bench` runs them):
it loads and checks PART's files as below, prints `ready NAME...` (its measurements), then
answers each input line `run NAME` by running that measurement once and printing
`time SECONDS`; it exits at the end of its input.  The Rust target runs these in its own
rounds, heating memory before each as for its own runs, so NumPy's runs and npy's share
the machine's moods.  A failed check exits with its message, as below.

Otherwise each measurement runs once untimed, then REPEAT times in interleaved rounds (each starting
one measurement later), keeping the best and the median.  The page cache is warmed before
the reads; dirty pages are flushed before each save, and saved files are removed between
runs; right before each run, 1.5 times the largest file's size of memory is touched and
freed (`heat`, as benches/common/mod.rs does: this VM hands memory that sat free back to its
host, and touching it again costs seconds per GiB).  Each result is checked after the clock
stops.  Prints one line per measurement, as
benches/io.rs and benches/records.rs do:

  bench <name> best=<seconds> median=<seconds> bytes=<n> [rss=<bytes>]

rss, for a measurement that runs a process (each `npy sql`), is the largest peak resident
memory of the process over the counted runs: ru_maxrss of the child's own rusage, which
os.wait4 gives (KiB on Linux; RUSAGE_CHILDREN would be the largest of every child so far),
the child started by a small Python of its own (`process_measure` says why).  A measured
process still running after 10 minutes is killed, and fails the run.

f8 (benches/io.rs): DIR holds le.npy (<f8) and be.npy (>f8), each BYTES of data: the values
i + 0.25 for i in range(BYTES // 8).

  np_load_le         np.load(le.npy)
  np_load_be         np.load(be.npy): NumPy does not byte-swap, the array stays >f8
  np_load_be_astype  np.load(be.npy).astype('<f8'): native values, what npy's >f8 read gives
  np_save            np.save(out.npy, arr) of an in-memory <f8 array
  np_save_be         np.save(out.npy, arr) of an in-memory >f8 array (loaded from be.npy)
  np_save_over       np.save(np-over.npy, arr) of the <f8 array over the file its last run
                     left, nothing removed, flushed or touched first: NumPy's side of the
                     rounds timed as a user times a save (run_user_pairs; served only)

records (benches/records.rs): DIR holds traces_aligned.npy (NumPy's align=True layout,
304 bytes a record) and traces_packed.npy (the default packed layout, 293 bytes), each of
RECORDS seismic traces, written by npy.  Both are first checked once: dtype, shape and every
field of a few records (see `trace`).

  np_load_aligned    np.load(traces_aligned.npy)
  np_load_packed     np.load(traces_packed.npy)
  np_save_aligned    np.save(out.npy, arr) of the loaded aligned array
  np_save_packed     np.save(out.npy, arr) of the loaded packed array
  np_save_aligned_over, np_save_packed_over
                     the same over the file its last run left (as np_save_over)
  np_save_aligned_new, np_save_packed_new
                     the same to a new file each run (np-new.<kind>.new<k>.npy, k
                     alternating, the older file removed first, untimed)

npz (benches/npz.rs): DIR holds a0.npy ... a7.npy, stored.npz (np.savez's layout) and
deflated.npz (deflate level 6), written by npy: array k holds (i % 10000) * 0.5 + k for i in
range(ELEMENTS).

  np_savez               np.savez(out.npz, a0=..., ...) of the arrays in memory
  np_savez_compressed    np.savez_compressed(out.npz, ...) of the same
  np_save_files          np.save of each array to its own .npy file
  np_load_npz            every member of stored.npz through np.load(...)[name], all held
                         at the end (as {k: f[k] for k in f.files}, in archive order)
  np_load_npz_compressed every member of deflated.npz likewise (against npy's read_all)
  np_load_files          np.load of each a<k>.npy

deflate (benches/deflate.rs, served only): made here, in DIR/deflate, one array of each kind
(`deflate_corpus`: the traces' trace_id, t0, flags and samples columns for TRACES traces as
benches/records.rs makes them, 20 * TRACES elements of random floats, small integers,
words, zeros and a random walk, 40 * TRACES integers 0-49 and an image of TRACES / 50 rows of
2,048 bytes) as KIND.npy, and np.savez_compressed's archive of it as np-KIND.npz (its size is
the bench's row).

  np_deflate_KIND        np.savez_compressed(out.npz, KIND=array) of the array in memory
  np_inflate_KIND        np.load(np-KIND.npz)[KIND]: the member read and inflated

training (npy-store/benches/training.rs, served only): made here, in DIR/training, FILES
small files files/s<i>.npy (240 random <f8: 2 KiB each, a training set of one file per
sample), 16 shards shards/shard<k>.npy of 100,000 x 64 random <f4 (25.6 MB each), and
batches.npy, 20 batches of 256 random rows of the shards joined along axis 0 (<i8).

  np_files_load          np.load of each small file, in a loop
  py_files_load_many     npy.load_many of the small files (the Python package's)
  np_gather_maps         the 20 batches by the best NumPy code for them: each shard's map
                         (np.load(mmap_mode='r'), opened once), the batch's rows grouped by
                         shard, one fancy index per map
  py_gather_read         the 20 batches by npy.open(shards)[rows] (the Python package's)

mmap (benches/mmap.rs): DIR holds big.npy (BYTES of <f8 data), small.npy (1 MiB of <f8 data),
element i of both being i + 0.25, and picks.npy (<i8 indices into big.npy).

  np_open_small       np.load(small.npy, mmap_mode='r'), 1000 times; the time of one
  np_open_big         the same of big.npy
  np_random_sum       np.load(big.npy, mmap_mode='r')[picks].sum(), the mapping closed

arrow (benches/arrow.rs): DIR holds traces_aligned.npy and traces_packed.npy as for records,
and npy_batches.arrow, the batches npy-arrow made of traces_packed.npy as an Arrow IPC file.
NPY is the release build of the npy command.  Checked once: np.load's arrays (as in records),
the tables pyarrow makes of both equal to npy's batches (value for value, types alike but
for nullability and the list item's name), and the Parquet file `npy convert` writes read
back by pyarrow equal to pyarrow's table.  pyarrow's conversion (`to_arrow`) is
pa.Table.from_arrays over the structured array's fields, nested records through
pa.StructArray.from_arrays, subarray fields through pa.FixedSizeListArray.from_arrays over
the flattened values.

  pa_convert_aligned   to_arrow(arr) of the loaded aligned array (the conversion alone)
  pa_convert_packed    the same of the packed array
  np_load_pa_aligned   to_arrow(np.load(traces_aligned.npy))
  np_load_pa_packed    to_arrow(np.load(traces_packed.npy))
  pa_parquet           pq.write_table(table, out.parquet) of the packed array's table
                       (pyarrow's defaults: snappy)
  np_load_pa_parquet   np.load(traces_packed.npy), to_arrow, pq.write_table: end to end
  npy_convert_parquet  `NPY convert traces_packed.npy out.parquet` as a process, end to end

Any failure of `NPY convert` is an error.

sql (npy-datafusion/benches/sql.rs): DIR/traces holds part-00.npy ... part-15.npy, RECORDS
seismic traces in all in the packed layout (record i as in `trace`), and DIR/sql_answer.json
the answer npy-datafusion gave to `SELECT avg(t0), max(samples[1]) FROM traces` (SQL arrays
count from 1: NumPy's samples[:, 0]).  NumPy answers the same question the way a NumPy user
would, one file at a time, and must give the same answer (the average within 1e-12 relative:
the sums run in another order; the maximum exactly).

  np_query     for each file: np.load, then t0's sum and count and samples[:, 0].max()
  np_load_all  np.load of each file alone (context)

Then five queries over another table, RECORDS / 2 shot records (2,000,000 by default, 584 MB)
in 16 .npy files that NumPy writes into DIR/shots (trace_id <i4, station <i4 of 100, t0 <f8
uniform in [0, 1), dt <f4, rx <f8, ry <f8, 64 <f4 samples of a decaying wave: 292 bytes a
record), the same rows as 16 Parquet files that pyarrow writes with its defaults (snappy)
into DIR/shots-parquet, and as 16 archives of a member per field (trace_id.npy, ...,
samples.npy of shape (rows, 64), which npy sql reads as a fixed-size list column, as for
.npy), the way a NumPy user saves a table: np.savez's (stored) into DIR/shots-stored.npz
and np.savez_compressed's (deflated) into DIR/shots-deflated.npz (npy sql reads a directory
whose name ends in .npz as a table of archives).  Each query (QUERIES) is answered six ways,
and the answers must agree (integers exactly, floats within 1e-7 relative: npy prints a
float32 as its shortest text, and sums run in different orders):

  <q>_npy         NPY sql QUERY --table shots=DIR/shots --format csv: a process, its start
                  included (NPY is the release build of npy with the sql feature)
  <q>_npy_mapped  the same with --map-local-files
  <q>_duckdb      DuckDB (duckdb's Python package, in this process) over the Parquet files,
                  a new connection each run (made before the clock starts)
  <q>_numpy       np.load of each file, then the NumPy a user would write, file by file
  <q>_npz         NPY sql QUERY --table shots=DIR/shots-stored.npz --format csv
  <q>_npzc        NPY sql QUERY --table shots=DIR/shots-deflated.npz --format csv

Then, over the .npy files alone and in the same rounds, one element of a subarray against a
plain field (issue 48), checked against np.load's rows["t0"].max() and
rows["samples"][:, 9].max(), file by file:

  field_npy          NPY sql 'SELECT max(t0) FROM shots' --table shots=DIR/shots
  element_npy        NPY sql 'SELECT max(samples[10]) FROM shots': one element of each row's
                     samples, which npy sql reads alone
  element_whole_npy  NPY sql 'SELECT max(samples[station - station + 10]) FROM shots': the
                     same element at an index that is no constant, so that npy sql decodes
                     every row's 64 samples (and station) to pick it: the before

Every row's bytes are the rows' data in the .npy files, whatever it reads, so that its GiB/s
compare.

These run 2 * REPEAT + 1 times each (medians of a tenth of a second need more runs).  Each
npy sql row gives its process's peak resident memory too (rss, above).

append (benches/append.rs): DIR holds traces_whole.npy, BATCHES * 10,000 seismic traces in
the aligned layout (record i as in `trace`).  Loaded once and checked; then the same
records written in batches of 10,000, as npy's append_batches writes them (neither syncs:
np.save does not, npy-append-array does not).

  np_save_whole  np.save(out.npy, arr)
  npaa_append    npy_append_array.NpyAppendArray(out.npy).append(batch) for each batch

header (benches/header.rs): DIR holds header_long.npy, 2 zeroed records of
np.dtype([(f'receiver_channel_amplitude_{i:04d}', '<f8') for i in range(FIELDS)]) (a header
like issue 19's, the one its goals are measured on), header_f8.npy, the same with names
f'f{i}', and header_mixed.npy, FIELDS fields of a mixed dtype (titles, nested records with
padding, subarrays, text), written by npy.  Checked once: NumPy's header read gives shape
(2,), C order and, for the first two files, those dtypes; np.save of a zeroed array of the
dtype NumPy read writes the same header bytes as npy did.  Each measurement is the median
of 100 reads (NumPy's header read takes 10 to 50 ms here; benches/header.rs takes the
median of 300 of npy's, which are much shorter); the header bytes are the file's up to its
data.  max_header_size is raised past the header's length, as np.load(...,
max_header_size=...) would need (NumPy's default of 10,000 refuses them all).

  np_parse_long   read_magic + read_array_header_1_0/_2_0 of header_long.npy's header
                  bytes in memory (io.BytesIO)
  np_parse_f8     the same of header_f8.npy's
  np_parse_mixed  the same of header_mixed.npy's
  np_open_long    open(header_long.npy) + read_magic + read_array_header: np.load's work
                  before the data
  np_open_f8      the same of header_f8.npy
  np_open_mixed   the same of header_mixed.npy
"""

import os
import statistics
import sys
import time

import numpy as np

USAGE = __doc__


def main():
    parts = {"f8": f8, "records": records, "npz": npz, "mmap": mmap, "arrow": arrow, "sql": sql, "append": append,
             "header": header, "deflate": deflate, "training": training}
    args = sys.argv[1:]
    serving = args[:1] == ["serve"]
    if serving:
        args = args[1:4] + ["1"] + args[4:]  # PART DIR SIZE, then REPEAT (unused), [NPY]
    if not args or args[0] not in parts or len(args) != (5 if args[0] in ("arrow", "sql") else 4):
        sys.exit(USAGE)
    part, directory, size, repeat = args[0], args[1], int(args[2]), int(args[3])
    if serving:
        global SERVED
        SERVED = {}
    parts[part](directory, size, repeat, *args[4:])
    if serving:
        serve(SERVED)


# The measurements `rounds` collects instead of running them when this runs as a peer
# (`serve`); None otherwise.
SERVED = None


def serve(measures):
    """Answers `run NAME` lines on stdin with `time SECONDS` until stdin ends."""
    print("ready " + " ".join(measures), flush=True)
    for line in sys.stdin:
        words = line.split()
        if len(words) != 2 or words[0] != "run" or words[1] not in measures:
            sys.exit(f"bench.py serve: cannot do {line.strip()!r}; it runs {', '.join(measures)}")
        seconds, _ = seconds_and_rss(measures[words[1]]())
        print(f"time {seconds:.9f}", flush=True)


def f8(directory, nbytes, repeat):
    n = nbytes // 8
    le = os.path.join(directory, "le.npy")
    be = os.path.join(directory, "be.npy")
    out = os.path.join(directory, "np-out.npy")

    def check(arr, dtype):
        if arr.dtype != np.dtype(dtype) or arr.shape != (n,):
            raise SystemExit(f"got {arr.dtype} {arr.shape}, expected {dtype} ({n},)")
        for i in (0, n // 2, n - 1):
            if arr[i] != i + 0.25:
                raise SystemExit(f"value {i} is {arr[i]}, expected {i + 0.25}")

    def load_le():
        t = time.perf_counter()
        arr = np.load(le)
        elapsed = time.perf_counter() - t
        check(arr, "<f8")
        return elapsed

    def load_be():
        t = time.perf_counter()
        arr = np.load(be)
        elapsed = time.perf_counter() - t
        check(arr, ">f8")
        return elapsed

    def load_be_astype():
        t = time.perf_counter()
        arr = np.load(be).astype("<f8")
        elapsed = time.perf_counter() - t
        check(arr, "<f8")
        return elapsed

    data = np.load(le)
    check(data, "<f8")
    data_be = np.load(be)
    check(data_be, ">f8")

    def save(arr, dtype):
        return timed_save(arr, out, nbytes, np.array([n - 1 + 0.25], dtype).tobytes())

    for path in (le, be):
        warm(path)
    hot = nbytes + nbytes // 2
    rounds([("np_load_le", nbytes, load_le), ("np_load_be", nbytes, load_be),
            ("np_load_be_astype", nbytes, load_be_astype)], repeat, hot)
    rounds([("np_save", nbytes, save(data, "<f8")), ("np_save_be", nbytes, save(data_be, ">f8"))], repeat, hot)
    over = os.path.join(directory, "np-over.npy")
    rounds([("np_save_over", nbytes, save_over(data, over, nbytes, np.array([n - 1 + 0.25], "<f8").tobytes()))],
           repeat, 0)


# The record of benches/records.rs, as np.dtype([...]) (packed) and with align=True.
TRACE = [
    ("trace_id", "<i4"),
    ("receiver", [("x", "<f8"), ("y", "<f8"), ("z", "<f4")]),
    ("t0", "<f8"),
    ("dt", "<f4"),
    ("flags", "u1"),
    ("samples", "<f4", (64,)),
]
PACKED = np.dtype(TRACE)
ALIGNED = np.dtype(TRACE, align=True)


def trace(i):
    """Record i as benches/records.rs makes it (`trace`), field by field."""
    return {
        "trace_id": i,
        "x": 500_000.0 + (i % 1000) * 12.5,
        "y": 6_200_000.0 + (i // 1000) * 25.0,
        "z": np.float32(-2.5),
        "t0": (i % 1000) * 0.001,
        "dt": np.float32(0.004),
        "flags": i % 3,
        "samples": np.float32(i % 4096) + np.arange(64, dtype=np.float32) / np.float32(64),
    }


def check_record(arr, i, name, at=None):
    """Fails unless arr[at] (arr[i] when not given) is record i."""
    want = trace(i)
    rec = arr[i if at is None else at]
    got = {
        "trace_id": rec["trace_id"],
        "x": rec["receiver"]["x"],
        "y": rec["receiver"]["y"],
        "z": rec["receiver"]["z"],
        "t0": rec["t0"],
        "dt": rec["dt"],
        "flags": rec["flags"],
        "samples": rec["samples"],
    }
    for field, value in want.items():
        if not np.array_equal(got[field], value):
            raise SystemExit(f"{name}: record {i} field {field} is {got[field]}, expected {value}")


def check_traces(arr, n, path, dtype, full=False):
    """Fails unless `arr` (loaded from `path`) is `n` traces of `dtype`; checks the ids at both
    ends, and with `full` every field of a few records."""
    if arr.dtype != dtype or arr.dtype.itemsize != dtype.itemsize or arr.shape != (n,):
        raise SystemExit(f"{path}: got {arr.dtype} {arr.shape}, expected {dtype} ({n},)")
    if arr[0]["trace_id"] != 0 or arr[n - 1]["trace_id"] != n - 1:
        raise SystemExit(f"{path}: trace_id of the first/last record is {arr[0]['trace_id']}/{arr[-1]['trace_id']}")
    if full:
        for i in sorted({i for i in (0, 1, n // 3, n // 2, n - 2, n - 1) if 0 <= i < n}):
            check_record(arr, i, path)


def records(directory, n, repeat):
    paths = {
        "aligned": (os.path.join(directory, "traces_aligned.npy"), ALIGNED),
        "packed": (os.path.join(directory, "traces_packed.npy"), PACKED),
    }
    out = os.path.join(directory, "np-out.npy")
    # The last 256 bytes of every file: the samples of the last record.
    tail = trace(n - 1)["samples"].astype("<f4").tobytes()

    def check(arr, kind, full=False):
        path, dtype = paths[kind]
        check_traces(arr, n, path, dtype, full)

    # The one sanity check: what NumPy sees in the files npy wrote.
    data = {}
    for kind, (path, dtype) in paths.items():
        data[kind] = np.load(path)
        check(data[kind], kind, full=True)
        print(f"  {os.path.basename(path)}: np.load gives {n} records of {dtype.itemsize} bytes, "
              f"dtype as expected, values checked", file=sys.stderr, flush=True)

    def load(kind):
        def measure():
            t = time.perf_counter()
            arr = np.load(paths[kind][0])
            elapsed = time.perf_counter() - t
            check(arr, kind)
            return elapsed
        return measure

    def save(kind):
        arr = data[kind]
        return timed_save(arr, out, n * arr.dtype.itemsize, tail)

    for path, _ in paths.values():
        warm(path)
    aligned, packed = n * ALIGNED.itemsize, n * PACKED.itemsize
    hot = aligned + aligned // 2
    rounds([("np_load_aligned", aligned, load("aligned")), ("np_load_packed", packed, load("packed"))], repeat, hot)
    rounds([("np_save_aligned", aligned, save("aligned")), ("np_save_packed", packed, save("packed"))], repeat, hot)
    rounds([("np_save_aligned_over", aligned,
             save_over(data["aligned"], os.path.join(directory, "np-over.aligned.npy"), aligned, tail)),
            ("np_save_packed_over", packed,
             save_over(data["packed"], os.path.join(directory, "np-over.packed.npy"), packed, tail)),
            ("np_save_aligned_new", aligned,
             save_new(data["aligned"], os.path.join(directory, "np-new.aligned"), aligned, tail)),
            ("np_save_packed_new", packed,
             save_new(data["packed"], os.path.join(directory, "np-new.packed"), packed, tail))], repeat, 0)


def to_arrow(arr):
    """pyarrow's own conversion of a 1-D structured array: a pa.Table, one column per field."""
    import pyarrow as pa
    names = list(arr.dtype.names)
    return pa.Table.from_arrays([arrow_column(arr[name]) for name in names], names=names)


def arrow_column(values):
    """A field of a structured array as a pyarrow array: nested records through
    pa.StructArray.from_arrays, subarrays through pa.FixedSizeListArray.from_arrays (one per
    dim after the first, innermost first) over the flattened values."""
    import pyarrow as pa
    if values.dtype.names is not None:
        names = list(values.dtype.names)
        return pa.StructArray.from_arrays([arrow_column(values[name]) for name in names], names=names)
    if values.ndim > 1:
        # A field of records is strided: reshape copies it into one contiguous run.
        flat = pa.array(values.reshape(-1))
        for size in reversed(values.shape[1:]):
            flat = pa.FixedSizeListArray.from_arrays(flat, size)
        return flat
    return pa.array(values)


def plain_type(t):
    """An Arrow type with every nested field nullable and list items named "item": two
    tables of the same values whose types differ only there are alike."""
    import pyarrow as pa
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(k).name, plain_type(t.field(k).type)) for k in range(t.num_fields)])
    if pa.types.is_fixed_size_list(t):
        return pa.list_(plain_type(t.value_type), t.list_size)
    return t


def same_values(got, want, what, exact_types=True):
    """Fails unless table `got` holds the values of table `want`: the same column names, and
    the same values once cast to `want`'s schema.  With `exact_types` the types must also be
    alike (`plain_type`); without (a Parquet file read back), any cast pyarrow makes
    losslessly is allowed (a Parquet list becomes the fixed-size list again)."""
    if got.column_names != want.column_names or got.num_rows != want.num_rows:
        raise SystemExit(f"{what}: columns {got.column_names} and {got.num_rows} rows, "
                         f"expected {want.column_names} and {want.num_rows} rows")
    for name in want.column_names:
        g, w = got.schema.field(name).type, want.schema.field(name).type
        if exact_types and plain_type(g) != plain_type(w):
            raise SystemExit(f"{what}: column {name} is {g}, pyarrow's is {w}")
    try:
        cast = got.cast(want.schema, safe=True)
    except Exception as e:  # pyarrow's cast errors have several types
        raise SystemExit(f"{what}: cannot cast to pyarrow's schema: {e}")
    for name in want.column_names:
        if not cast.column(name).equals(want.column(name)):
            raise SystemExit(f"{what}: column {name} holds other values than pyarrow's")


def arrow(directory, n, repeat, npy):
    import subprocess

    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = {
        "aligned": (os.path.join(directory, "traces_aligned.npy"), ALIGNED),
        "packed": (os.path.join(directory, "traces_packed.npy"), PACKED),
    }
    ipc = os.path.join(directory, "npy_batches.arrow")
    pa_out = os.path.join(directory, "pa-out.parquet")
    npy_out = os.path.join(directory, "npy-out.parquet")

    def check_table(table):
        last = table.column("trace_id")[-1].as_py() if table.num_rows else None
        if table.num_rows != n or last != n - 1:
            raise SystemExit(f"pyarrow's table: {table.num_rows} rows, last trace_id {last}, expected {n} and {n - 1}")

    def check_parquet(path):
        rows = pq.read_metadata(path).num_rows
        if rows != n:
            raise SystemExit(f"{path}: {rows} rows, expected {n}")

    # The one sanity check: NumPy's arrays, pyarrow's tables of them and npy's batches.
    with pa.memory_map(ipc) as source:
        npy_table = pa.ipc.open_file(source).read_all()
    data, tables = {}, {}
    for kind, (path, dtype) in paths.items():
        data[kind] = np.load(path)
        check_traces(data[kind], n, path, dtype, full=True)
        tables[kind] = to_arrow(data[kind])
        check_table(tables[kind])
        same_values(npy_table, tables[kind], f"npy's batches of traces_packed.npy against pyarrow's table of {path}")
    del npy_table
    print(f"  pyarrow's tables of both files hold the values of npy's batches ({n} rows)", file=sys.stderr, flush=True)

    # `npy convert`: checked fully once, untimed.
    def convert():
        done = subprocess.run([npy, "convert", paths["packed"][0], npy_out], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise SystemExit(f"`{npy} convert {paths['packed'][0]} {npy_out}` failed "
                             f"(exit {done.returncode}): {done.stderr.strip()}")

    remove(npy_out)
    convert()
    same_values(pq.read_table(npy_out), tables["packed"], f"{npy_out} (npy convert) read by pyarrow",
                exact_types=False)
    remove(npy_out)
    print("  npy convert's Parquet file, read by pyarrow, holds pyarrow's table", file=sys.stderr, flush=True)
    table = tables["packed"]
    del tables

    def conversion(kind):
        arr = data[kind]
        return timed(lambda: to_arrow(arr), check_table)

    def load_conversion(kind):
        return timed(lambda: to_arrow(np.load(paths[kind][0])), check_table)

    def to_parquet(write, out):
        def measure():
            remove(out)
            os.sync()
            t = time.perf_counter()
            write()
            elapsed = time.perf_counter() - t
            check_parquet(out)
            remove(out)
            return elapsed
        return measure

    for path, _ in paths.values():
        warm(path)
    aligned, packed = n * ALIGNED.itemsize, n * PACKED.itemsize
    # A run holds up to three copies: the loaded array, the copied samples and the table.
    hot = 3 * aligned
    rounds([("pa_convert_aligned", aligned, conversion("aligned")),
            ("pa_convert_packed", packed, conversion("packed")),
            ("np_load_pa_aligned", aligned, load_conversion("aligned")),
            ("np_load_pa_packed", packed, load_conversion("packed"))], repeat, hot)
    del data
    parquet = [("pa_parquet", packed, to_parquet(lambda: pq.write_table(table, pa_out), pa_out)),
               ("np_load_pa_parquet", packed,
                to_parquet(lambda: pq.write_table(to_arrow(np.load(paths["packed"][0])), pa_out), pa_out)),
               ("npy_convert_parquet", packed, to_parquet(convert, npy_out))]
    rounds(parquet, repeat, hot)


def timed(run, check):
    """A measurement: the time of run() alone; its result checked after the clock stops."""
    def measure():
        t = time.perf_counter()
        result = run()
        elapsed = time.perf_counter() - t
        check(result)
        return elapsed
    return measure


NPZ_ARRAYS = 8


def npz(directory, n, repeat):
    names = [f"a{k}" for k in range(NPZ_ARRAYS)]
    files = [os.path.join(directory, f"{name}.npy") for name in names]
    stored = os.path.join(directory, "stored.npz")
    deflated = os.path.join(directory, "deflated.npz")
    out = os.path.join(directory, "np-out.npz")
    outs = [os.path.join(directory, f"np-out-{name}.npy") for name in names]
    nbytes = NPZ_ARRAYS * n * 8

    def check(arrays):
        if len(arrays) != NPZ_ARRAYS:
            raise SystemExit(f"got {len(arrays)} arrays, expected {NPZ_ARRAYS}")
        for k, arr in enumerate(arrays):
            if arr.dtype != np.dtype("<f8") or arr.shape != (n,):
                raise SystemExit(f"array {k}: {arr.dtype} {arr.shape}, expected <f8 ({n},)")
            for i in (0, n // 2, n - 1):
                if arr[i] != (i % 10000) * 0.5 + k:
                    raise SystemExit(f"array {k} value {i} is {arr[i]}")

    def load_npz(path):
        with np.load(path) as f:
            if list(f.files) != names:
                raise SystemExit(f"{path}: members {f.files}")
            return [f[name] for name in names]

    def load_files(paths):
        return [np.load(path) for path in paths]

    data = load_files(files)
    check(data)
    for path in (stored, deflated):
        check(load_npz(path))
    print(f"  np.load reads the npz files npy wrote: {NPZ_ARRAYS} members each, values checked",
          file=sys.stderr, flush=True)

    def timed_read(read):
        return timed(read, check)

    def timed_write(write, read):
        def measure():
            for path in outs + [out]:
                remove(path)
            os.sync()
            t = time.perf_counter()
            write()
            elapsed = time.perf_counter() - t
            check(read())
            for path in outs + [out]:
                remove(path)
            return elapsed
        return measure

    def save_files():
        for arr, path in zip(data, outs):
            np.save(path, arr)

    kwargs = dict(zip(names, data))
    for path in files + [stored, deflated]:
        warm(path)
    hot = nbytes + nbytes // 2
    rounds([("np_savez", nbytes, timed_write(lambda: np.savez(out, **kwargs), lambda: load_npz(out))),
            ("np_savez_compressed", nbytes,
             timed_write(lambda: np.savez_compressed(out, **kwargs), lambda: load_npz(out))),
            ("np_save_files", nbytes, timed_write(save_files, lambda: load_files(outs)))], repeat, hot)
    rounds([("np_load_npz", nbytes, timed_read(lambda: load_npz(stored))),
            ("np_load_npz_compressed", nbytes, timed_read(lambda: load_npz(deflated))),
            ("np_load_files", nbytes, timed_read(lambda: load_files(files)))], repeat, hot)


# The kinds of array the deflate part compresses, in its order (benches/deflate.rs' KINDS).
DEFLATE_KINDS = ("trace_id", "t0", "flags", "samples", "random_f8", "small_i8", "text_U", "zeros", "walk_f8",
                 "ints_0_49", "image_u1")


def deflate_corpus(n):
    """One array of each of DEFLATE_KINDS: the traces' columns for n traces (as `trace`), then
    20 * n elements of each other kind, from a seeded generator, but for 40 * n integers 0-49
    and an image of n // 50 rows of 2,048 bytes (issue 82's kinds: 32 MB and 4 MB at 100,000
    traces)."""
    i = np.arange(n)
    m = 20 * n
    rng = np.random.default_rng(67)
    words = np.array("the quick brown fox jumps over a lazy dog seismic trace receiver sample offset".split())
    corpus = {
        "trace_id": i.astype("<i4"),
        "t0": (i % 1000) * 0.001,
        "flags": (i % 3).astype("u1"),
        "samples": (i % 4096).astype("<f4")[:, None] + np.arange(64, dtype="<f4") / np.float32(64),
        "random_f8": rng.random(m),
        "small_i8": rng.integers(0, 100, m),
        "text_U": rng.choice(words, m // 4),
        "zeros": np.zeros(2 * m),
        "walk_f8": np.cumsum(rng.standard_normal(m)),
        "ints_0_49": rng.integers(0, 50, 2 * m),
        "image_u1": (np.add.outer(2 * np.arange(max(n // 50, 1)), np.arange(2048)) // 9 % 256).astype("u1"),
    }
    assert tuple(corpus) == DEFLATE_KINDS
    return corpus


def deflate(directory, n, repeat):
    folder = os.path.join(directory, "deflate")
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, "np-out.npz")
    corpus = deflate_corpus(n)
    for kind, arr in corpus.items():
        np.save(os.path.join(folder, f"{kind}.npy"), arr)
        np.savez_compressed(os.path.join(folder, f"np-{kind}.npz"), **{kind: arr})

    def measure(kind, arr):
        def run():
            remove(out)
            os.sync()
            t = time.perf_counter()
            np.savez_compressed(out, **{kind: arr})
            elapsed = time.perf_counter() - t
            with np.load(out) as f:
                if f.files != [kind] or not np.array_equal(f[kind], arr):
                    raise SystemExit(f"{out}: not the {kind} array")
            remove(out)
            return elapsed
        return run

    def load(kind, arr):
        def run():
            t = time.perf_counter()
            with np.load(os.path.join(folder, f"np-{kind}.npz")) as f:
                back = f[kind]
            elapsed = time.perf_counter() - t
            if not np.array_equal(back, arr):
                raise SystemExit(f"np-{kind}.npz: not the {kind} array")
            return elapsed
        return run

    largest = max(arr.nbytes for arr in corpus.values())
    rounds([(f"np_deflate_{kind}", arr.nbytes, measure(kind, arr)) for kind, arr in corpus.items()]
           + [(f"np_inflate_{kind}", arr.nbytes, load(kind, arr)) for kind, arr in corpus.items()], repeat,
           largest + largest // 2)


# The training part's sizes, as npy-python/bench.py's small-file and shard rows have them.
TRAIN_VALUES = 240  # <f8: 1,920 bytes of data, 2 KiB with the header
SHARDS = 16
SHARD_ROWS = 100_000
SHARD_COLUMNS = 64  # <f4: 256-byte rows, 25.6 MB a shard
BATCHES = 20
BATCH_ROWS = 256


def training(directory, n, repeat):
    """Makes the training part's files (see the module) and times NumPy's reads of them."""
    folder = os.path.join(directory, "training")
    os.makedirs(os.path.join(folder, "files"), exist_ok=True)
    os.makedirs(os.path.join(folder, "shards"), exist_ok=True)
    rng = np.random.default_rng(57)
    paths = [os.path.join(folder, "files", f"s{i:05d}.npy") for i in range(n)]
    for path in paths:
        np.save(path, rng.standard_normal(TRAIN_VALUES))
    shards = [os.path.join(folder, "shards", f"shard{i:02d}.npy") for i in range(SHARDS)]
    for path in shards:
        np.save(path, rng.standard_normal((SHARD_ROWS, SHARD_COLUMNS), dtype=np.float32))
    maps = [np.load(p, mmap_mode="r").view(np.ndarray) for p in shards]
    starts = np.cumsum([0] + [len(m) for m in maps])
    batches = rng.integers(0, starts[-1], (BATCHES, BATCH_ROWS))
    np.save(os.path.join(folder, "batches.npy"), batches)

    def load_files():
        t = time.perf_counter()
        got = [np.load(p) for p in paths]
        elapsed = time.perf_counter() - t
        if len(got) != n or any(a.shape != (TRAIN_VALUES,) for a in got):
            raise SystemExit(f"{folder}: np.load gave other arrays")
        return elapsed

    def batch(rows):
        # The best NumPy code for it: rows grouped by shard, one fancy index per map.
        shard = np.searchsorted(starts, rows, side="right") - 1
        local = rows - starts[shard]
        out = np.empty((len(rows), SHARD_COLUMNS), "<f4")
        for s in np.unique(shard):
            picked = np.flatnonzero(shard == s)
            out[picked] = maps[s][local[picked]]
        return out

    def gather():
        t = time.perf_counter()
        got = [batch(rows) for rows in batches]
        elapsed = time.perf_counter() - t
        if len(got) != BATCHES or not np.array_equal(got[-1], last):
            raise SystemExit(f"{folder}: NumPy's batch is not the rows")
        return elapsed

    def row(r):
        shard = int(np.searchsorted(starts, r, side="right")) - 1
        return maps[shard][r - starts[shard]]

    last = np.stack([row(r) for r in batches[-1]])

    import npy  # the Python package, which `cargo xtask bench` installs first

    opened = npy.open(shards)

    def load_many():
        t = time.perf_counter()
        got = npy.load_many(paths)
        elapsed = time.perf_counter() - t
        if len(got) != n or any(a.shape != (TRAIN_VALUES,) for a in got):
            raise SystemExit(f"{folder}: npy.load_many gave other arrays")
        return elapsed

    def open_rows():
        t = time.perf_counter()
        got = [opened[rows] for rows in batches]
        elapsed = time.perf_counter() - t
        if len(got) != BATCHES or not np.array_equal(got[-1], last):
            raise SystemExit(f"{folder}: npy.open's batch is not the rows")
        return elapsed

    batch_bytes = BATCHES * BATCH_ROWS * SHARD_COLUMNS * 4
    rounds([("np_files_load", n * 2048, load_files), ("py_files_load_many", n * 2048, load_many),
            ("np_gather_maps", batch_bytes, gather), ("py_gather_read", batch_bytes, open_rows)], repeat, 64 << 20)


MMAP_OPENS = 1000


def mmap(directory, nbytes, repeat):
    big = os.path.join(directory, "big.npy")
    small = os.path.join(directory, "small.npy")
    picks = np.load(os.path.join(directory, "picks.npy"))
    n, n_small = nbytes // 8, (1 << 20) // 8
    # Every partial sum of these values is exact, so any order gives this total.
    expected = float(picks.sum()) + 0.25 * len(picks)

    def opens(path, length):
        def measure():
            t = time.perf_counter()
            for _ in range(MMAP_OPENS):
                arr = np.load(path, mmap_mode="r")
                last = len(arr)
                del arr
            elapsed = time.perf_counter() - t
            if last != length:
                raise SystemExit(f"{path}: {last} elements, expected {length}")
            return elapsed / MMAP_OPENS
        return measure

    def random_sum():
        t = time.perf_counter()
        arr = np.load(big, mmap_mode="r")
        total = arr[picks].sum()
        del arr
        elapsed = time.perf_counter() - t
        if total != expected:
            raise SystemExit(f"sum of the picks is {total}, expected {expected}")
        return elapsed

    for path in (small, big):
        warm(path)
    rounds([("np_open_small", 0, opens(small, n_small)), ("np_open_big", 0, opens(big, n)),
            ("np_random_sum", len(picks) * 8, random_sum)], repeat, 0)


SQL_FILES = 16


def sql(directory, n, repeat, npy):
    import json

    files = [os.path.join(directory, "traces", f"part-{k:02}.npy") for k in range(SQL_FILES)]
    with open(os.path.join(directory, "sql_answer.json")) as f:
        answer = json.load(f)

    def query():
        total, count, peak = 0.0, 0, -np.inf
        for path in files:
            arr = np.load(path)
            total += arr["t0"].sum()
            count += len(arr)
            peak = max(peak, arr["samples"][:, 0].max())
        return total / count, float(peak)

    def check_query(result):
        avg, peak = result
        if abs(avg - answer["avg_t0"]) > 1e-12 * abs(avg) or peak != answer["max_samples_1"]:
            raise SystemExit(f"NumPy's answer {result} is not npy-datafusion's {answer}")

    def load_all():
        return [np.load(path) for path in files]

    def check_load(arrays):
        if sum(len(a) for a in arrays) != n or any(a.dtype != PACKED for a in arrays):
            raise SystemExit(f"np.load gave {[a.dtype for a in arrays[:1]]}, {sum(len(a) for a in arrays)} rows")
        start = 0
        for path, arr in zip(files, arrays):
            check_record(arr, start, path, 0)
            check_record(arr, start + len(arr) - 1, path, len(arr) - 1)
            start += len(arr)

    for path in files:
        warm(path)
    nbytes = sum(os.path.getsize(path) for path in files)
    hot = nbytes + nbytes // 2
    rounds([("np_query", nbytes, timed(query, check_query)),
            ("np_load_all", nbytes, timed(load_all, check_load))], repeat, hot)
    sql_queries(directory, n // 2, 2 * repeat + 1, npy)


# The five queries of issue 37 over the shots table: three over whole rows, a filter and a
# top-k.  `{}` stands for the table.
QUERIES = [
    ("group", "SELECT station, count(*) AS n, avg(t0), max(samples[1]) FROM {} GROUP BY station ORDER BY station"),
    ("sums", "SELECT sum(rx + ry + t0), max(samples[64]), min(dt) FROM {}"),
    ("avg", "SELECT avg(samples[10]) FROM {}"),
    ("filter", "SELECT count(*) FROM {} WHERE t0 > 0.5 AND station = 7"),
    ("topk", "SELECT trace_id, t0 FROM {} ORDER BY t0 DESC LIMIT 10"),
]
# Issue 48: one element of a subarray against a plain field, over the .npy files; and the same
# element at an index that is no constant, which the engine cannot read alone (every row's
# samples decoded whole: the before).
ELEMENT_QUERIES = [
    ("field", "SELECT max(t0) FROM {}"),
    ("element", "SELECT max(samples[10]) FROM {}"),
    ("element_whole", "SELECT max(samples[station - station + 10]) FROM {}"),
]
SHOT = np.dtype([("trace_id", "<i4"), ("station", "<i4"), ("t0", "<f8"), ("dt", "<f4"), ("rx", "<f8"),
                 ("ry", "<f8"), ("samples", "<f4", (64,))])


# The shots table's directories under DIR, by kind: npy sql takes a directory whose name ends
# in .npz as one of archives.
SHOTS = {"npy": "shots", "parquet": "shots-parquet", "npz": "shots-stored.npz", "npzc": "shots-deflated.npz"}


def write_shots(directory, n):
    """The shots table: .npy files by NumPy, the same rows as Parquet files by pyarrow and as
    archives of a member per field by np.savez and np.savez_compressed.  Returns the
    directories by kind (`SHOTS`) and the .npy files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dirs = {kind: os.path.join(directory, name) for kind, name in SHOTS.items()}
    for path in dirs.values():
        os.makedirs(path, exist_ok=True)
    npy_dir, parquet_dir = dirs["npy"], dirs["parquet"]
    rng = np.random.default_rng(37)
    k = np.arange(64, dtype=np.float32)
    paths = []
    for f in range(SQL_FILES):
        lo, hi = f * n // SQL_FILES, (f + 1) * n // SQL_FILES
        rows = np.zeros(hi - lo, SHOT)
        i = np.arange(lo, hi)
        rows["trace_id"] = i
        rows["station"] = rng.integers(0, 100, hi - lo)
        rows["t0"] = rng.random(hi - lo)
        rows["dt"] = np.float32(0.004) + rng.random(hi - lo, dtype=np.float32) * np.float32(1e-4)
        rows["rx"] = 500_000.0 + rng.random(hi - lo) * 10_000.0
        rows["ry"] = 6_200_000.0 + rng.random(hi - lo) * 10_000.0
        phase = (i % 1000).astype(np.float32)[:, None] * np.float32(0.01)
        rows["samples"] = np.sin(k * np.float32(0.2) + phase) * np.exp(-k / np.float32(32))
        path = os.path.join(npy_dir, f"part-{f:02}.npy")
        np.save(path, rows)
        paths.append(path)
        columns = {name: rows[name] for name in ("trace_id", "station", "t0", "dt", "rx", "ry")}
        samples = pa.FixedSizeListArray.from_arrays(pa.array(rows["samples"].ravel()), 64)
        table = pa.table(columns).append_column("samples", samples)
        pq.write_table(table, os.path.join(parquet_dir, f"part-{f:02}.parquet"))
        # A table as a NumPy user saves one: a member per field, samples an (n, 64) <f4 member.
        members = {name: rows[name] for name in SHOT.names}
        np.savez(os.path.join(dirs["npz"], f"part-{f:02}.npz"), **members)
        np.savez_compressed(os.path.join(dirs["npzc"], f"part-{f:02}.npz"), **members)
    return dirs, paths


def numpy_answer(name, paths):
    """The query `name` answered with np.load and NumPy, file by file, as rows of values."""
    if name == "group":
        n, t0, peak = np.zeros(100, np.int64), np.zeros(100), np.full(100, -np.inf, np.float32)
        for path in paths:
            rows = np.load(path)
            n += np.bincount(rows["station"], minlength=100)
            t0 += np.bincount(rows["station"], weights=rows["t0"], minlength=100)
            np.maximum.at(peak, rows["station"], rows["samples"][:, 0])
        return [(s, int(n[s]), t0[s] / n[s], float(peak[s])) for s in range(100) if n[s]]
    if name == "sums":
        total, peak, low = 0.0, -np.inf, np.inf
        for path in paths:
            rows = np.load(path)
            total += (rows["rx"] + rows["ry"] + rows["t0"]).sum()
            peak, low = max(peak, rows["samples"][:, 63].max()), min(low, rows["dt"].min())
        return [(total, float(peak), float(low))]
    if name == "avg":
        total, count = 0.0, 0
        for path in paths:
            rows = np.load(path)
            total += rows["samples"][:, 9].astype(np.float64).sum()
            count += len(rows)
        return [(total / count,)]
    if name == "field":
        return [(max(float(np.load(path)["t0"].max()) for path in paths),)]
    if name in ("element", "element_whole"):
        return [(max(float(np.load(path)["samples"][:, 9].max()) for path in paths),)]
    if name == "filter":
        count = 0
        for path in paths:
            rows = np.load(path)
            count += int(np.count_nonzero((rows["t0"] > 0.5) & (rows["station"] == 7)))
        return [(count,)]
    best = []
    for path in paths:
        rows = np.load(path)
        top = np.argpartition(rows["t0"], -10)[-10:]
        best.extend((float(rows["t0"][j]), int(rows["trace_id"][j])) for j in top)
    best.sort(reverse=True)
    return [(trace_id, t0) for t0, trace_id in best[:10]]


def same_rows(got, want, what):
    """Rows of values equal: integers exactly, floats within 1e-7 relative."""
    if len(got) != len(want):
        raise SystemExit(f"{what}: {len(got)} rows, expected {len(want)}: {got[:3]} against {want[:3]}")
    for g, w in zip(got, want):
        if len(g) != len(w):
            raise SystemExit(f"{what}: row {g}, expected {w}")
        for a, b in zip(g, w):
            a, b = float(a), float(b)
            if abs(a - b) > 1e-7 * max(abs(a), abs(b)):
                raise SystemExit(f"{what}: row {g}, expected {w}")


def sql_queries(directory, n, repeat, npy):
    dirs, paths = write_shots(directory, n)
    parquet = f"read_parquet('{dirs['parquet']}/*.parquet')"
    sizes = {}
    for kind, path in dirs.items():
        files = [os.path.join(path, name) for name in sorted(os.listdir(path))]
        for file in files:
            warm(file)
        sizes[kind] = sum(os.path.getsize(file) for file in files)
    written = ", ".join(f"{SHOTS[kind]}/ {size / 1e6:.1f} MB" for kind, size in sizes.items())
    print(f"  shots: {written}", file=sys.stderr, flush=True)
    nbytes = sum(os.path.getsize(path) for path in paths) - SQL_FILES * 128
    want = {name: numpy_answer(name, paths) for name, _ in QUERIES + ELEMENT_QUERIES}

    def npy_sql(query, kind, check, flags=()):
        table = f"shots={dirs[kind]}"
        args = [npy, "sql", query.format("shots"), "--table", table, "--format", "csv", *flags]
        return process_measure(args, lambda out: check([line.split(",") for line in out.splitlines()[1:]]))

    measures = []
    for name, query in QUERIES:

        def check(rows, name=name, query=query):
            same_rows(rows, want[name], f"{name}: {query}")

        measures += [
            (f"{name}_npy", nbytes, npy_sql(query, "npy", check)),
            (f"{name}_npy_mapped", nbytes, npy_sql(query, "npy", check, ["--map-local-files"])),
            (f"{name}_duckdb", nbytes, duck_measure(query.format(parquet), check)),
            (f"{name}_numpy", nbytes, timed(lambda name=name: numpy_answer(name, paths), check)),
            (f"{name}_npz", nbytes, npy_sql(query, "npz", check)),
            (f"{name}_npzc", nbytes, npy_sql(query, "npzc", check)),
        ]
    for name, query in ELEMENT_QUERIES:

        def check(rows, name=name, query=query):
            same_rows(rows, want[name], f"{name}: {query}")

        measures.append((f"{name}_npy", nbytes, npy_sql(query, "npy", check)))
    rounds(measures, repeat, max(os.path.getsize(path) for path in paths) * 3 // 2)


# Runs the process sys.argv[2:] and prints, as JSON, its time from start to exit, its peak
# resident memory (ru_maxrss of its own rusage, from os.wait4: KiB on Linux), its exit code
# and its output (into files, not pipes: nothing needs reading while it runs).  A process
# still running after sys.argv[1] seconds is killed, and says so.  A fresh Python runs it,
# not this one: see `process_measure`.
SPAWN = """
import json, os, signal, subprocess, sys, tempfile, time

hung = []


def kill(*_):
    hung.append(True)
    os.kill(child.pid, signal.SIGKILL)


with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
    signal.signal(signal.SIGALRM, kill)
    t = time.perf_counter()
    child = subprocess.Popen(sys.argv[2:], stdout=out, stderr=err)
    signal.alarm(int(sys.argv[1]))
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - t
    signal.alarm(0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    out.seek(0)
    err.seek(0)
    run = {"seconds": seconds, "rss": usage.ru_maxrss * 1024, "code": child.returncode, "hung": bool(hung),
           "stdout": out.read().decode(), "stderr": err.read().decode()}
print(json.dumps(run))
"""

# The longest a measured process may run: far longer than any query here takes, so that a
# hung one fails the bench, naming itself, instead of stopping it for good.
PROCESS_LIMIT = 600


def process_measure(args, check):
    """A measurement of the process `args`: (seconds, peak resident bytes); its stdout
    checked after the clock stops.

    A child's ru_maxrss starts at its parent's high-water mark (the kernel keeps the larger
    of the memory it had before exec and after: /bin/true spawned from a Python that once
    held 500 MiB reports 525 MiB), and this process's mark is NumPy's answers and DuckDB's.
    So a fresh Python (`SPAWN`, about 10 MiB: the floor of what it reports) starts the
    process, times it and reads its rusage; its own start is outside the clock."""
    import json
    import subprocess

    spawn = [sys.executable, "-I", "-S", "-c", SPAWN, str(PROCESS_LIMIT), *args]

    def measure():
        done = subprocess.run(spawn, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"bench.py's SPAWN of {' '.join(args)}: exit code {done.returncode}: {done.stderr}")
        run = json.loads(done.stdout)
        if run["hung"]:
            raise SystemExit(f"{' '.join(args)}: still running after {PROCESS_LIMIT} s, killed: {run['stderr']}")
        if run["code"] != 0:
            raise SystemExit(f"{' '.join(args)}: exit code {run['code']}: {run['stderr']}")
        check(run["stdout"])
        return run["seconds"], run["rss"]

    return measure


def duck_measure(query, check):
    """A measurement of `query` in a new DuckDB connection, made before the clock starts."""
    import duckdb

    def measure():
        con = duckdb.connect()
        t = time.perf_counter()
        rows = con.sql(query).fetchall()
        elapsed = time.perf_counter() - t
        con.close()
        check(rows)
        return elapsed
    return measure


def append(directory, batches, repeat):
    from npy_append_array import NpyAppendArray

    batch = 10_000
    n = batches * batch
    arr = np.load(os.path.join(directory, "traces_whole.npy"))
    check_traces(arr, n, os.path.join(directory, "traces_whole.npy"), ALIGNED, full=True)
    out = os.path.join(directory, "np-append-out.npy")

    def check_out(_):
        got = np.load(out, mmap_mode="r")
        if got.dtype != ALIGNED or got.shape != (n,):
            raise SystemExit(f"{out}: {got.dtype} {got.shape}, expected {ALIGNED} ({n},)")
        for i in (0, n // 2, n - 1):
            check_record(got, i, out)
        del got
        # The next run starts with no output and no dirty pages.
        remove(out)
        os.sync()

    def save_whole():
        np.save(out, arr)

    def append_batches():
        with NpyAppendArray(out) as f:
            for start in range(0, n, batch):
                f.append(arr[start : start + batch])

    remove(out)
    os.sync()
    nbytes = n * ALIGNED.itemsize
    rounds([("np_save_whole", nbytes, timed(save_whole, check_out)),
            ("npaa_append", nbytes, timed(append_batches, check_out))], repeat, nbytes + nbytes // 2)


HEADER_READS = 100


def header(directory, fields, repeat):
    import io
    import warnings

    from numpy.lib import format as fmt

    paths = {kind: os.path.join(directory, f"header_{kind}.npy") for kind in ("long", "f8", "mixed")}
    dtypes = {"long": np.dtype([(f"receiver_channel_amplitude_{i:04d}", "<f8") for i in range(fields)]),
              "f8": np.dtype([(f"f{i}", "<f8") for i in range(fields)])}

    def read_header(f):
        """NumPy's header read, as np.load does it: the version, then that version's reader."""
        version = fmt.read_magic(f)
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        return read(f, max_header_size=1 << 30)

    # The bytes before the data, as np.load reads them.
    heads = {}
    for kind, path in paths.items():
        with open(path, "rb") as f:
            shape, fortran, dtype = read_header(f)
            length = f.tell()
            f.seek(0)
            heads[kind] = f.read(length)
        if shape != (2,) or fortran or (kind in dtypes and dtype != dtypes[kind]):
            raise SystemExit(f"{path}: NumPy reads shape {shape}, fortran_order {fortran}, dtype {dtype}")
        again = io.BytesIO()
        with warnings.catch_warnings():
            # np.save says when it writes version 2.0, as it must for the long and mixed headers.
            warnings.simplefilter("ignore", UserWarning)
            np.save(again, np.zeros(2, dtype))
        if again.getvalue()[:length] != heads[kind]:
            raise SystemExit(f"{path}: np.save of the dtype NumPy read writes another header than npy's")
        print(f"  {os.path.basename(path)}: NumPy reads {len(dtype.names)} fields, {length} header bytes; "
              f"np.save writes the same header", file=sys.stderr, flush=True)

    def check(result):
        shape, fortran, dtype = result
        if shape != (2,) or fortran or len(dtype.names) != fields:
            raise SystemExit(f"NumPy's header read gave {shape} {fortran} {len(dtype.names)} fields")

    def median_of(read):
        def measure():
            times = []
            for _ in range(HEADER_READS):
                t = time.perf_counter()
                result = read()
                times.append(time.perf_counter() - t)
            check(result)
            return statistics.median(times)
        return measure

    def parse(kind):
        data = heads[kind]
        return median_of(lambda: read_header(io.BytesIO(data)))

    def opened(kind):
        def read():
            with open(paths[kind], "rb") as f:
                return read_header(f)
        return read

    for path in paths.values():
        warm(path)
    rounds([("np_parse_long", len(heads["long"]), parse("long")),
            ("np_open_long", len(heads["long"]), median_of(opened("long"))),
            ("np_parse_f8", len(heads["f8"]), parse("f8")),
            ("np_parse_mixed", len(heads["mixed"]), parse("mixed")),
            ("np_open_f8", len(heads["f8"]), median_of(opened("f8"))),
            ("np_open_mixed", len(heads["mixed"]), median_of(opened("mixed")))], repeat, 0)


def rounds(measures, repeat, hot):
    """Times each (name, bytes, measure); `measure()` runs once and returns seconds, or
    (seconds, peak resident bytes) for a process (`process_measure`).

    Touches `hot` bytes of memory right before each run (see `heat`).  As a peer (`serve`),
    keeps them for `serve` instead: the Rust target runs them in its rounds."""
    if SERVED is not None:
        for name, _, measure in measures:
            SERVED[name] = measure
        return
    # One untimed round first, as in the Rust benches: the first touch of memory the VM has
    # not used lately is far slower, whichever measurement does it.
    for name, _, measure in measures:
        if hot:
            heat(hot)
        seconds, rss = seconds_and_rss(measure())
        print(f"  {name:<18} warm-up: {seconds:.6f} s{rss_text(rss)} (not counted)", file=sys.stderr, flush=True)
    times = {name: [] for name, _, _ in measures}
    peaks = {}
    for r in range(repeat):
        # Each round starts one measurement later, as in the Rust benches.
        for k in range(len(measures)):
            name, _, measure = measures[(r + k) % len(measures)]
            if hot:
                heat(hot)
            t, rss = seconds_and_rss(measure())
            print(f"  {name:<18} run {r + 1}/{repeat}: {t:.6f} s{rss_text(rss)}", file=sys.stderr, flush=True)
            times[name].append(t)
            if rss is not None:
                peaks[name] = max(peaks.get(name, 0), rss)
    for name, nbytes, _ in measures:
        runs = times[name]
        rss = f" rss={peaks[name]}" if name in peaks else ""
        print(f"bench {name} best={min(runs):.9f} median={statistics.median(runs):.9f} bytes={nbytes}{rss}", flush=True)


def seconds_and_rss(result):
    """A measure's result as (seconds, peak resident bytes or None)."""
    return result if isinstance(result, tuple) else (result, None)


def rss_text(rss):
    """A peak for the progress lines on stderr."""
    return "" if rss is None else f", peak RSS {rss / (1 << 20):.1f} MiB"


def heat(nbytes):
    """Touches `nbytes` of fresh memory (NumPy advises huge pages for it) and frees it, so
    the next run finds that much free memory the host has backed, as benches/common/mod.rs."""
    buf = np.empty(nbytes, np.uint8)
    buf[::4096] = 1
    del buf


def warm(path):
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass


def check_saved(out, nbytes, tail):
    """Fails unless the file out holds nbytes of data ending in the bytes tail."""
    size = os.path.getsize(out)
    with open(out, "rb") as f:
        f.seek(-len(tail), os.SEEK_END)
        end = f.read(len(tail))
    if size < nbytes or end != tail:
        raise SystemExit(f"{out}: {size} bytes, expected {nbytes} data bytes ending in {tail.hex()}")


def timed_save(arr, out, nbytes, tail):
    """A measure of np.save(out, arr) from no file and no dirty pages; the file must hold
    nbytes of data ending in the bytes tail, and is removed."""

    def measure():
        remove(out)
        os.sync()
        t = time.perf_counter()
        np.save(out, arr)
        elapsed = time.perf_counter() - t
        check_saved(out, nbytes, tail)
        remove(out)
        return elapsed
    return measure


def save_over(arr, out, nbytes, tail):
    """A measure of np.save(out, arr) over the file its last run left, as a user's loop
    saves: nothing removed or flushed first (benches/common/mod.rs, run_user_pairs). The
    file must hold nbytes of data ending in the bytes tail, and is kept for the next run."""

    def measure():
        t = time.perf_counter()
        np.save(out, arr)
        elapsed = time.perf_counter() - t
        check_saved(out, nbytes, tail)
        return elapsed
    return measure


def save_new(arr, stem, nbytes, tail):
    """A measure of np.save to a new file, as a user's loop that saves each result under a
    new name (benches/records.rs, timed_new): `stem.new<k>.npy`, k alternating between
    runs, the file the run before last left there removed first (untimed). The file must
    hold nbytes of data ending in the bytes tail; the last run's file stays until the
    bench's end."""
    runs = [0]

    def measure():
        out = f"{stem}.new{runs[0] % 2}.npy"
        runs[0] += 1
        remove(out)
        t = time.perf_counter()
        np.save(out, arr)
        elapsed = time.perf_counter() - t
        check_saved(out, nbytes, tail)
        return elapsed
    return measure


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


if __name__ == "__main__":
    main()
