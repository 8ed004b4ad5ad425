"""The `python` part of `cargo xtask bench`: the npy package against NumPy, in the same
rounds: one untimed warm-up round, then 2 * REPEAT + 1 timed ones, which side goes first
alternating (npy first in REPEAT + 1 of them); an odd count, so the median is a run.
Prints `bench <name> best=<s> median=<s> bytes=<n>` lines. Every result timed is checked
after its clock stops: a load gives NumPy's array (dtype, shape, every value; every
object of an object array, type and value), a save's file reads back as the array saved.

Then the same saves and a load as a user times them (`user_rounds`): one untimed round,
then max(REPEAT, 5) rounded up to odd, each round npy's call and then NumPy's, always in
that order, each over its own last file, nothing flushed, collected or touched in
between (so the files are checked once the rounds end, the loads' results then too);
medians (`user_*` lines).

Then Arrow streams (issue 45): the five queries of the SQL bench (xtask/bench.py's QUERIES)
over 1,000,000 shot records in 16 .npy files, answered by DuckDB over `npy.scan` of the
query's columns (files read, and mapped) against DuckDB over pyarrow's Parquet of the same
rows, and in polars over `npy.polars.scan_npy` against `pl.scan_parquet`; every answer
checked against NumPy's.

Then 5,000 small files (issue 57): Python's open/read/close loop, np.load and npy.load
loops, and npy.load_many (`small_*` lines). Then batches of 256 random rows of 16 shards
(issue 57): `npy.open(shards)[rows]`, read and mapped, against the best NumPy code (rows
grouped by shard, one fancy index per `np.load(mmap_mode="r")` map); another thread's
progress while each gathers; the same batches from the shards on S3 (moto), with the
requests and bytes the server sent (`shards_*` lines).

Then Zstandard archives (issue 58): npy.NpzWriter's Zstandard (default level) against
np.savez_compressed, and npy's load_all of its archive against dict(np.load(..)) of NumPy's,
on 100,000 of the main job's seismic traces (examples/seismic.rs's records, a tenth of its
file: savez_compressed takes about a minute over all of it) and on 64 MiB of a <f8 random
walk (`zstd_*` lines; the archives' sizes and the size goal on `#` lines).

Then npy.dask against Dask's own reading of a .npy file on one LocalCluster of 2 worker
processes: `dask_*` bench lines, and lines of the workers' peak memory and of the goals.

usage: bench.py DIR BYTES REPEAT
"""

import contextlib
import gc
import os
import shutil
import statistics
import sys
import time
import warnings

import numpy as np

import npy
import traces

RECORDS = 1_000_000
MEMBERS = 5
RAGGED = 100_000
DICT_BYTES = 100_000_000
USER_STRS = 300_000
BE_BYTES = 64 * 2**20
USER_ROUNDS = 5


def timed(f):
    gc.collect()
    start = time.perf_counter()
    result = f()
    return time.perf_counter() - start, result


def paired_rounds(repeat):
    """The rounds of measurements timed side by side: (timed, reversed) for one untimed
    warm-up round, then 2 * repeat + 1 timed rounds, every other one in reverse order."""
    yield False, False
    for round_ in range(2 * repeat + 1):
        yield True, round_ % 2 == 1


def same_values(ours, theirs):
    """Whether two Python values are equal and of the same types all the way down (a bool
    is not an int, bytes are not str): arrays by `same_array`, floats NaN-aware."""
    if type(ours) is not type(theirs):
        return False
    if isinstance(ours, np.ndarray):
        return same_array(ours, theirs)
    if isinstance(ours, (list, tuple)):
        return len(ours) == len(theirs) and all(map(same_values, ours, theirs))
    if isinstance(ours, dict):
        return same_values(list(ours), list(theirs)) and all(map(same_values, ours.values(), theirs.values()))
    if isinstance(ours, float):
        return ours == theirs or (ours != ours and theirs != theirs)
    return ours == theirs


def same_array(ours, theirs):
    """Whether two arrays have the same dtype, shape and values: the bytes of plain ones
    compared in place (no copy of a 1 GiB array), records field by field (their padding
    is no value), object arrays value by value."""
    if not isinstance(ours, np.ndarray) or ours.dtype != theirs.dtype or ours.shape != theirs.shape:
        return False
    if ours.dtype.hasobject:
        return same_values(ours.tolist(), theirs.tolist())
    if ours.dtype.names is None and ours.flags.c_contiguous and theirs.flags.c_contiguous:
        return np.array_equal(ours.reshape(-1).view(np.uint8), theirs.reshape(-1).view(np.uint8))
    return np.array_equal(ours, theirs)


def check(ok, what):
    if not ok:
        raise SystemExit(f"bench.py: {what} is not NumPy's result")


def report(name, seconds, nbytes):
    best, median = min(seconds), statistics.median(seconds)
    print(f"bench {name} best={best:.6f} median={median:.6f} bytes={nbytes}", flush=True)


# The goals this program judges itself (beside the ratios xtask's table judges), each once a
# run: `main` states them first (`# goals: a | b | ...`), so a goal whose branch stops
# running is a missed goal in the report, not a smaller total.
GOALS = (
    "remote slice bytes",
    "dask peak memory",
    "thread progress during a batch",
    "S3 requests per shard",
    "S3 bytes sent",
    "zstd traces archive size",
)


def goal(key, text, met):
    """A goal's `# goal:` line: which of `GOALS`, what was measured against what, and
    whether it was met."""
    if key not in GOALS:
        raise SystemExit(f"bench.py: goal {key!r} is not one of GOALS")
    print(f"# goal: {key}: {text}: {'met' if met else 'MISSED'}", flush=True)


def object_arrays():
    """Object arrays of a million values each: short strs, small dicts, and mixed plain
    values (ints, floats, None, strs, tuples of bytes and bools)."""
    strs = np.array([f"station {i % 977} trace {i}" for i in range(RECORDS)], dtype=object)
    dicts = np.empty(RECORDS, dtype=object)
    dicts[:] = [{"id": i, "name": f"s{i % 100}", "ok": i % 3 == 0} for i in range(RECORDS)]
    mixed = np.empty(RECORDS, dtype=object)
    mixed[:] = [(i, 1.5 * i, None, f"x{i % 10}", (b"y", i % 2 == 0))[i % 5] for i in range(RECORDS)]
    # Issue 54: what people save beyond plain values. 100k ragged float arrays (1 to 19
    # values each), and np.save of a dict of ten 10 MB arrays (read back with .item()).
    rng = np.random.default_rng(54)
    ragged = np.empty(RAGGED, dtype=object)
    ragged[:] = [rng.standard_normal(n) for n in rng.integers(1, 20, RAGGED)]
    arrays = np.empty((), dtype=object)
    arrays[()] = {f"w{i}": rng.standard_normal(DICT_BYTES // 10 // 8) for i in range(10)}
    return {"strs": strs, "dicts": dicts, "mixed": mixed, "ragged": ragged, "dict_of_arrays": arrays}


def rounds(directory, nbytes, repeat):
    f8_array = np.arange(nbytes // 8, dtype="<f8")
    f8 = directory / "f8.npy"
    np.save(f8, f8_array)
    trace_array = traces.make_traces(RECORDS)
    trace = directory / "trace.npy"
    np.save(trace, trace_array)
    # Issue 67: a big-endian array, which both keep big-endian (nothing to convert).
    be_array = np.random.default_rng(67).integers(-(2**15), 2**15, BE_BYTES // 2, dtype=np.int16).astype(">i2")
    be = directory / "be_i2.npy"
    np.save(be, be_array)
    half = f8_array[: nbytes // 16]
    n = nbytes // 8 // 4 // MEMBERS
    members = {f"w{i}": np.round(np.sin(np.arange(n) * (i + 1) / 1000.0), 3) for i in range(MEMBERS)}
    members_bytes = sum(m.nbytes for m in members.values())
    archive = directory / "w5.npz"
    np.savez_compressed(archive, **members)
    objects, object_values = {}, object_arrays()
    for kind, values in object_values.items():
        objects[kind] = directory / f"objects_{kind}.npy"
        np.save(objects[kind], values, allow_pickle=True)

    def loaded(want):
        return lambda got: same_array(got, want)

    def npz_loaded(got):
        return list(got) == list(members) and all(same_array(got[k], v) for k, v in members.items())

    def saved(path, want):
        def check_file(_):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a durable save's file is NumPy's too
                return same_array(np.load(path), want)

        return check_file

    def npz_saved(path):
        def check_file(_):
            with np.load(path) as back:
                return back.files == list(members) and all(same_array(back[k], v) for k, v in members.items())

        return check_file

    out = {name: directory / f"out_{name}" for name in ("f8", "trace", "durable", "npz")}
    a_npz, b_npz = out["npz"].with_suffix(".a.npz"), out["npz"].with_suffix(".b.npz")
    a_s_npz, b_s_npz = out["npz"].with_suffix(".a.s.npz"), out["npz"].with_suffix(".b.s.npz")
    paths = {f"{k}_{s}": out[k].with_suffix(f".{s}.npy") for k in ("f8", "trace", "durable") for s in "ab"}
    # Pairs, npy's side first: each is timed against NumPy's in the same round. Each case:
    # the call, the bytes (or the file whose size is), and the check of its result (a
    # load's array against the array np.save wrote; a save's file read back by np.load).
    cases = {
        "f8_npy": (lambda: npy.load(f8), f8, loaded(f8_array)),
        "f8_np": (lambda: np.load(f8), f8, loaded(f8_array)),
        "trace_npy": (lambda: npy.load(trace), trace, loaded(trace_array)),
        "trace_np": (lambda: np.load(trace), trace, loaded(trace_array)),
        "be_i2_npy": (lambda: npy.load(be), be, loaded(be_array)),
        "be_i2_np": (lambda: np.load(be), be, loaded(be_array)),
        "npz_npy": (lambda: npy.load(archive).load_all(), archive, npz_loaded),
        "npz_np": (lambda: dict(np.load(archive)), archive, npz_loaded),
        "save_f8_npy": (lambda: npy.save(paths["f8_a"], half), half.nbytes, saved(paths["f8_a"], half)),
        "save_f8_np": (lambda: np.save(paths["f8_b"], half), half.nbytes, saved(paths["f8_b"], half)),
        "save_trace_npy": (
            lambda: npy.save(paths["trace_a"], trace_array),
            trace_array.nbytes,
            saved(paths["trace_a"], trace_array),
        ),
        "save_trace_np": (
            lambda: np.save(paths["trace_b"], trace_array),
            trace_array.nbytes,
            saved(paths["trace_b"], trace_array),
        ),
        "save_durable_npy": (
            lambda: npy.save(paths["durable_a"], half, durable=True),
            half.nbytes,
            saved(paths["durable_a"], half),
        ),
        "save_durable_np": (lambda: np.save(paths["durable_b"], half), half.nbytes, saved(paths["durable_b"], half)),
        "savez_npy": (lambda: npy.savez(a_s_npz, **members), members_bytes, npz_saved(a_s_npz)),
        "savez_np": (lambda: np.savez(b_s_npz, **members), members_bytes, npz_saved(b_s_npz)),
        "savez_c_npy": (lambda: npy.savez_compressed(a_npz, **members), archive, npz_saved(a_npz)),
        "savez_c_np": (lambda: np.savez_compressed(b_npz, **members), archive, npz_saved(b_npz)),
    }
    for kind, path in objects.items():
        want = loaded(object_values[kind])
        cases[f"objects_{kind}_npy"] = (lambda p=path: npy.load(p), path, want)
        cases[f"objects_{kind}_np"] = (lambda p=path: np.load(p, allow_pickle=True), path, want)
    times = {name: [] for name in cases}
    handover = {"vec_1m": [], "vec_10m": []}
    names = list(cases)
    pairs = list(zip(names[::2], names[1::2], strict=True))
    # Each pair in turn, npy first in even rounds and NumPy first in odd ones; before each
    # run, memory touched and freed (`heat`): the first large allocation after a large free
    # pays the kernel's page compaction (0.2-0.5 s of system time for 256 MiB, seen here),
    # and with an odd count of rounds one side goes first once more (with 3 rounds and no
    # heat, npy went first twice, and its median was always a run that paid).
    hot = max(f8_array.nbytes, trace_array.nbytes) * 3 // 2
    for timing, reverse in paired_rounds(repeat):
        for pair in pairs:
            for name in pair[::-1] if reverse else pair:
                run, _, ok = cases[name]
                heat(hot)
                seconds, result = timed(run)
                check(ok(result), name)
                del result
                if timing:
                    times[name].append(seconds)
        for name, count in (("vec_1m", RECORDS), ("vec_10m", 10 * RECORDS)):
            array, seconds = traces.handover_seconds(count)
            check(handed_over(array, count), name)
            del array
            if timing:
                handover[name].append(seconds)
    # The saves side by side: npy's files are NumPy's byte for byte.
    for a, b in (("f8_a", "f8_b"), ("durable_a", "durable_b")):
        check(paths[a].read_bytes() == paths[b].read_bytes(), f"the bytes of {paths[a].name}")
    for name, (_, size, _) in cases.items():
        report(name, times[name], size if isinstance(size, int) else size.stat().st_size)
    for name, count in (("vec_1m", RECORDS), ("vec_10m", 10 * RECORDS)):
        report(name, handover[name], count * traces.trace_dtype().itemsize)


def handed_over(array, count):
    """Whether the example's handover gave `count` records of Trace(1, 2, 0.5, 0.004, 0s)."""
    if array.dtype != traces.trace_dtype() or array.shape != (count,):
        return False
    fields = (("trace_id", 1), ("station", 2), ("t0", 0.5), ("dt", np.float32(0.004)), ("samples", 0))
    return all((array[name] == value).all() for name, value in fields)


def heat(nbytes):
    """Touches `nbytes` of fresh memory and frees it, so the next run finds that much free
    memory the host has backed (as benches/common/mod.rs and xtask/bench.py do)."""
    buf = np.empty(nbytes, np.uint8)
    buf[::4096] = 1
    del buf


def user_rounds(directory, nbytes, repeat):
    """npy against NumPy as a user times them: one untimed round (so each side has a file
    of its own to save over, as benches/common's run_user_pairs), then each round npy's
    call, then NumPy's on the same data, each saving over the file its last round saved; no
    collection, flush, check or memory touched in between; medians of max(REPEAT, 5)
    rounds rounded up to odd. Checked once the rounds end: each side's last files read
    back as the arrays saved, and every load's result as NumPy's. The
    paired rounds above alternate which side goes first and collect before each run: this
    measures what a script timing `npy.save` then `np.save` in a loop sees, the old file's
    freeing and the page cache's reuse included."""
    half = np.arange(nbytes // 16, dtype="<f8")
    trace_array = traces.make_traces(RECORDS)
    n = nbytes // 8 // 4 // MEMBERS
    members = {f"m{i}": np.arange(n, dtype="<f8") * (i + 1) for i in range(MEMBERS)}
    strs = directory / "user_strs.npy"
    strs_array = np.array([f"station {i % 977} trace {i}" for i in range(USER_STRS)], dtype=object)
    np.save(strs, strs_array)
    out = {side: directory / f"user_{side}" for side in ("a", "b")}
    cases = {
        "user_save_f8": (
            lambda: npy.save(out["a"].with_suffix(".f8.npy"), half),
            lambda: np.save(out["b"].with_suffix(".f8.npy"), half),
            half.nbytes,
        ),
        "user_save_trace": (
            lambda: npy.save(out["a"].with_suffix(".trace.npy"), trace_array),
            lambda: np.save(out["b"].with_suffix(".trace.npy"), trace_array),
            trace_array.nbytes,
        ),
        "user_savez": (
            lambda: npy.savez(out["a"].with_suffix(".npz"), **members),
            lambda: np.savez(out["b"].with_suffix(".npz"), **members),
            sum(m.nbytes for m in members.values()),
        ),
        "user_objects_strs": (
            lambda: npy.load(strs),
            lambda: np.load(strs, allow_pickle=True),
            strs.stat().st_size,
        ),
    }
    times = {f"{name}_{side}": [] for name in cases for side in ("npy", "np")}
    # The loads' results are kept until the rounds end (checking them in between would
    # touch memory): 2 x 6 arrays of 300,000 strs, about 300 MB.
    loads = {"npy": [], "np": []}
    timed_rounds = max(repeat, USER_ROUNDS) | 1
    for name, (ours, theirs, _) in cases.items():
        for round_ in range(1 + timed_rounds):
            for side, run in (("npy", ours), ("np", theirs)):
                start = time.perf_counter()
                result = run()
                seconds = time.perf_counter() - start
                if round_:
                    times[f"{name}_{side}"].append(seconds)
                if name == "user_objects_strs":
                    loads[side].append(result)
                del result
    for side in ("a", "b"):
        check(same_array(np.load(out[side].with_suffix(".f8.npy")), half), f"user_save_f8 ({side})")
        check(same_array(np.load(out[side].with_suffix(".trace.npy")), trace_array), f"user_save_trace ({side})")
        with np.load(out[side].with_suffix(".npz")) as back:
            ok = back.files == list(members) and all(same_array(back[k], v) for k, v in members.items())
            check(ok, f"user_savez ({side})")
    for side, results in loads.items():
        check(all(same_array(got, strs_array) for got in results), f"user_objects_strs ({side})")
    for name, (_, _, size) in cases.items():
        for side in ("npy", "np"):
            report(f"{name}_{side}", times[f"{name}_{side}"], size)
    for path in [*(out[s].with_suffix(x) for s in ("a", "b") for x in (".f8.npy", ".trace.npy", ".npz")), strs]:
        path.unlink()


DASK_BYTES = 512 * 2**20
DASK_CHUNK_ROWS = 2**19  # of 8 <f8: 32 MiB chunks


STREAM_ROWS = 1_000_000


def sql_bench():
    """xtask/bench.py (the SQL bench's table, queries and NumPy's answers), by path: this
    script's directory is first on sys.path, where `bench` is this file."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "xtask" / "bench.py"
    spec = importlib.util.spec_from_file_location("sql_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The columns each query reads: what a DuckDB user passes to npy.scan (DuckDB pushes no
# projection into an Arrow stream).
QUERY_COLUMNS = {
    "group": ["station", "t0", "samples"],
    "sums": ["rx", "ry", "t0", "samples", "dt"],
    "avg": ["samples"],
    "filter": ["t0", "station"],
    "topk": ["trace_id", "t0"],
}


def polars_query(name, lf):
    """The SQL bench's query `name` in polars, as rows of values."""
    import polars as pl

    if name == "group":
        out = (
            lf.group_by("station")
            .agg(pl.len(), pl.col("t0").mean(), pl.col("samples").arr.get(0).max())
            .sort("station")
        )
    elif name == "sums":
        out = lf.select(
            (pl.col("rx") + pl.col("ry") + pl.col("t0")).sum(), pl.col("samples").arr.get(63).max(), pl.col("dt").min()
        )
    elif name == "avg":
        out = lf.select(pl.col("samples").arr.get(9).cast(pl.Float64).mean())
    elif name == "filter":
        out = lf.filter((pl.col("t0") > 0.5) & (pl.col("station") == 7)).select(pl.len())
    else:
        out = lf.select("trace_id", "t0").sort("t0", descending=True).head(10)
    return out.collect().rows()


def stream_rounds(directory, repeat):
    """DuckDB and polars over npy's streams (local files read, and mapped) against the same
    over Parquet, in the same rounds. A DuckDB connection is made before the clock starts
    (as the SQL bench's `duck_measure`); polars' frames are built inside it."""
    import duckdb
    import polars as pl

    import npy.polars

    sql = sql_bench()
    dirs, paths = sql.write_shots(str(directory), STREAM_ROWS)
    npy_dir, parquet_dir = dirs["npy"], dirs["parquet"]
    nbytes = sum(os.path.getsize(p) for p in paths) - sql.SQL_FILES * 128
    want = {name: sql.numpy_answer(name, paths) for name, _ in sql.QUERIES}
    parquet = f"read_parquet('{parquet_dir}/*.parquet')"

    def duck_scan(name, query, mapped):
        def run(con):
            shots = npy.scan(npy_dir, columns=QUERY_COLUMNS[name], map_local_files=mapped)  # noqa: F841 - by name
            return con.sql(query.format("shots")).fetchall()

        return run

    def duck_parquet(query):
        return lambda con: con.sql(query.format(parquet)).fetchall()

    def polars_scan(name, mapped):
        return lambda _: polars_query(name, npy.polars.scan_npy(npy_dir, map_local_files=mapped))

    def polars_parquet(name):
        return lambda _: polars_query(name, pl.scan_parquet(f"{parquet_dir}/*.parquet"))

    # Triples, timed in turns: npy read, npy mapped, the Parquet peer.
    cases = {}
    for name, query in sql.QUERIES:
        cases[f"duckdb_{name}_scan"] = duck_scan(name, query, False)
        cases[f"duckdb_{name}_mapped"] = duck_scan(name, query, True)
        cases[f"duckdb_{name}_parquet"] = duck_parquet(query)
        cases[f"polars_{name}_scan"] = polars_scan(name, False)
        cases[f"polars_{name}_mapped"] = polars_scan(name, True)
        cases[f"polars_{name}_parquet"] = polars_parquet(name)
    times = {name: [] for name in cases}
    names = list(cases)
    triples = [names[i : i + 3] for i in range(0, len(names), 3)]
    for timing, reverse in paired_rounds(repeat):
        for triple in triples:
            for name in triple[::-1] if reverse else triple:
                con = duckdb.connect()
                seconds, rows = timed(lambda n=name, c=con: cases[n](c))
                con.close()
                sql.same_rows(rows, want[name.split("_")[1]], name)
                if timing:
                    times[name].append(seconds)
    for name in cases:
        report(name, times[name], nbytes)
    part_rounds(npy_dir, paths, repeat, nbytes)
    for path in dirs.values():
        shutil.rmtree(path)


def part_rounds(npy_dir, paths, repeat, nbytes):
    """A part of a column against a plain field, each the one column of an npy.scan read
    whole by pyarrow: `samples[9]` (4 bytes of each row's 64-sample subarray, decoded
    alone) and `t0` (8 bytes a row), in turns; each result checked against NumPy's."""
    import pyarrow as pa

    import npy

    columns = {"part_samples9": "samples[9]", "part_t0": "t0"}
    want = {
        "part_samples9": np.concatenate([np.load(p, mmap_mode="r")["samples"][:, 9] for p in paths]),
        "part_t0": np.concatenate([np.load(p, mmap_mode="r")["t0"] for p in paths]),
    }
    times = {name: [] for name in columns}
    for timing, reverse in paired_rounds(repeat):
        for name in list(columns)[::-1] if reverse else list(columns):
            scan = npy.scan(npy_dir, columns=[columns[name]])
            seconds, table = timed(lambda t=scan: pa.table(t))
            check(same_array(table.column(0).to_numpy(), want[name]), name)
            if timing:
                times[name].append(seconds)
    for name in columns:
        report(name, times[name], nbytes)


REMOTE_BYTES = 1 << 30
REMOTE_ROWS = 1000


def remote_rounds(directory, repeat):
    """1,000 rows from the middle of a 1 GiB .npy on a local S3 (moto, behind a proxy that
    counts the bytes it passes): `npy.open(url)[a:b]` against the best a NumPy user can
    write without npy: pyarrow's S3 file (ranged reads; s3fs would pin a botocore older
    than moto's) read as NumPy's format module reads a header, then one read of the rows'
    bytes. Time, and bytes moved against the rows' own bytes, in the same rounds."""
    import pyarrow.fs

    with counting_s3() as (client, proxy):
        endpoint = f"http://127.0.0.1:{proxy.port}"
        path = directory / "remote.npy"
        np.save(path, np.arange(REMOTE_BYTES // 8, dtype="<f8"))
        client.upload_file(str(path), "bench", "big.npy")
        path.unlink()
        s3 = pyarrow.fs.S3FileSystem(
            endpoint_override=endpoint, scheme="http", access_key="bench", secret_key="bench", region="us-east-1"
        )
        middle = REMOTE_BYTES // 8 // 2
        want = np.arange(middle, middle + REMOTE_ROWS, dtype="<f8")

        def ours():
            return npy.open("s3://bench/big.npy")[middle : middle + REMOTE_ROWS]

        def peer():
            # The header by NumPy's own reader, then the rows' bytes by one ranged read.
            with s3.open_input_file("bench/big.npy") as f:
                version = np.lib.format.read_magic(f)
                read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
                shape, fortran, dtype = read_header[version](f)
                if fortran or len(shape) != 1:
                    raise SystemExit(f"remote.npy: {shape}, fortran {fortran}: not the bench's array")
                f.seek(f.tell() + middle * dtype.itemsize)
                return np.frombuffer(f.read(REMOTE_ROWS * dtype.itemsize), dtype)

        cases = {"remote_open_npy": ours, "remote_open_peer": peer}
        times = {name: [] for name in cases}
        moved = {name: [] for name in cases}
        for timing, reverse in paired_rounds(repeat):
            for name in list(cases)[::-1] if reverse else cases:
                before = proxy.sent
                seconds, rows = timed(cases[name])
                check(same_array(rows, want), name)
                del rows
                if timing:
                    moved[name].append(proxy.sent - before)
                    times[name].append(seconds)
        for name in cases:
            report(name, times[name], REMOTE_ROWS * 8)
        for name in cases:
            print(f"# {name}: {max(moved[name]):,} bytes moved (most of a round)", flush=True)
        # The floor is the rows' bytes; npy's first read of an object takes its first 64 KiB
        # (the header, whatever its length) in the same request.
        floor = REMOTE_ROWS * 8
        most = max(moved["remote_open_npy"])
        goal(
            "remote slice bytes",
            f"moved by npy.open: {most:,}, the rows' {floor:,} + {most - floor:,} (at most 64 KiB + 8 KiB over them)",
            most - floor <= (64 + 8) * 1024,
        )


@contextlib.contextmanager
def counting_s3():
    """A local S3 (moto) with a bucket `bench`, behind a proxy that counts the requests it
    passes and the bytes the server sends back, which npy and pyarrow reach through the
    AWS_* variables set here: gives boto3's client (straight to moto, for uploads) and the
    proxy. Both are stopped when the block ends, also when it fails."""
    # Pinned in xtask/requirements.txt (boto3 by moto[server]): missing, the bench fails.
    import logging

    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log
    moto_port, proxy = free_port(), None
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=moto_port, verbose=False)
    server.start()
    try:
        proxy = CountingProxy(moto_port)
        os.environ.update(
            {
                "AWS_ENDPOINT_URL": f"http://127.0.0.1:{proxy.port}",
                "AWS_ALLOW_HTTP": "true",
                "AWS_ACCESS_KEY_ID": "bench",
                "AWS_SECRET_ACCESS_KEY": "bench",
                "AWS_DEFAULT_REGION": "us-east-1",
            }
        )
        client = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{moto_port}", region_name="us-east-1")
        client.create_bucket(Bucket="bench")
        yield client, proxy
    finally:
        if proxy is not None:
            proxy.close()
        server.stop()


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CountingProxy:
    """A TCP proxy on loopback to `port`, counting the bytes the server sends back and the
    requests sent to it (request lines: GETs and HEADs, which have no bodies); one thread
    per connection direction, all ended by `close`."""

    def __init__(self, port):
        import socket
        import threading

        self._target = port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.sent = 0
        self.requests = 0
        self._lock = threading.Lock()
        self._sockets = []
        self._closed = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        import socket
        import threading

        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self._target))
            self._sockets += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, True), daemon=True).start()

    def _pipe(self, src, dst, count):
        try:
            while chunk := src.recv(1 << 16):
                dst.sendall(chunk)
                with self._lock:
                    if count:
                        self.sent += len(chunk)
                    else:
                        # Requests of GETs and HEADs (no bodies): one request line each.
                        self.requests += chunk.count(b" HTTP/1.1\r\n")
        except OSError:
            pass
        finally:
            # Both ends closed: a server that closes each connection after its answer
            # (moto's, HTTP/1.0) would otherwise leave two descriptors a request.
            for s in (src, dst):
                try:
                    s.shutdown(2)
                except OSError:
                    pass
                s.close()

    def close(self):
        self._closed = True
        self._listener.close()
        for s in self._sockets:
            s.close()
        self._thread.join(timeout=30)


def dask_rounds(directory, repeat):
    """`npy.dask.from_npy(path, chunks).sum()` against the best a Dask user writes without
    npy: one task per chunk that maps the file on its worker (`np.load(path,
    mmap_mode='r')`) and copies its rows, joined by `da.concatenate` (not
    `da.from_array` of a map, whose graph would carry the whole array to the workers), on
    a LocalCluster of 2 worker processes (one thread each), in the same rounds: time, and
    each worker's peak memory (VmHWM, reset before each run through
    /proc/self/clear_refs) above its size when the run began."""
    # Pinned in xtask/requirements.txt: missing, the bench fails.
    import dask
    import dask.array as da
    import distributed

    import npy.dask

    path = directory / "dask_f8.npy"
    rows = DASK_BYTES // 64
    npy.save(path, np.arange(rows * 8, dtype="<f8").reshape(rows, 8))
    # Every partial sum of 0, 1, 2, ... is an integer below 2**53: exact in any order.
    expected = float(np.sum(np.load(path, mmap_mode="r"), dtype="<f8"))
    n = rows * 8
    check(expected == n * (n - 1) // 2, f"NumPy's sum {expected} of 0..{n - 1}")

    def mapped_blocks():
        blocks = []
        for start in range(0, rows, DASK_CHUNK_ROWS):
            stop = min(start + DASK_CHUNK_ROWS, rows)
            block = dask.delayed(map_rows)(str(path), start, stop)
            blocks.append(da.from_delayed(block, shape=(stop - start, 8), dtype="<f8"))
        return da.concatenate(blocks)

    cases = {
        "dask_from_npy": lambda: npy.dask.from_npy(path, chunks=DASK_CHUNK_ROWS).sum(),
        "dask_np_maps": lambda: mapped_blocks().sum(),
    }
    times = {name: [] for name in cases}
    growth = {name: [] for name in cases}
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        for timing, reverse in paired_rounds(repeat):
            for name in list(cases)[::-1] if reverse else cases:
                start = client.run(reset_peak)
                seconds, total = timed(lambda n=name: client.compute(cases[n]()).result())
                peak = client.run(peak_kib)
                check(total == expected, f"{name}: {total} (NumPy's sum {expected})")
                if timing:
                    times[name].append(seconds)
                    growth[name].append(max(peak[w] - start[w] for w in peak) * 1024)
    path.unlink()
    for name in cases:
        report(name, times[name], DASK_BYTES)
    chunk = DASK_CHUNK_ROWS * 64
    for name in cases:
        worst = max(growth[name])
        print(
            f"# {name}: peak memory per worker above its start: {worst / 2**20:.1f} MiB "
            f"({worst / chunk:.2f} chunks of {chunk // 2**20} MiB)",
            flush=True,
        )
    ratio = statistics.median(times["dask_from_npy"]) / statistics.median(times["dask_np_maps"])
    memory = max(growth["dask_from_npy"]) / chunk
    # The time goal is the table's (dask_from_npy / dask_np_maps); the ratio is context here.
    print(f"# dask from_npy / np.load maps median time {ratio:.2f}", flush=True)
    goal("dask peak memory", f"dask from_npy per worker {memory:.2f} chunks (at most 2)", memory <= 2)


def map_rows(path, start, stop):
    """Rows `start:stop` of the .npy at `path`, copied out of a map of it (the Dask peer's
    task, run on a worker)."""
    return np.array(np.load(path, mmap_mode="r")[start:stop])


SMALL_FILES = 5_000
SMALL_VALUES = 240  # <f8: 1,920 bytes of data, 2 KiB with the header


def small_file_rounds(directory, repeat):
    """Issue 57: 5,000 .npy files of 2 KiB (a training set of one file per sample), read
    in a loop by Python's own open/read/close (the floor), np.load and npy.load, and
    all at once by npy.load_many; every array checked against NumPy's after the clock."""
    folder = directory / "small_files"
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(57)
    paths = [str(folder / f"s{i:05d}.npy") for i in range(SMALL_FILES)]
    for path in paths:
        np.save(path, rng.standard_normal(SMALL_VALUES))
    want = [np.load(p) for p in paths]

    def floor():
        out = []
        for p in paths:
            with open(p, "rb") as f:
                out.append(f.read())
        return out

    cases = {
        "small_floor": floor,
        "small_np_load": lambda: [np.load(p) for p in paths],
        "small_npy_load": lambda: [npy.load(p) for p in paths],
        "small_load_many": lambda: npy.load_many(paths),
    }
    times = {name: [] for name in cases}
    for timing, reverse in paired_rounds(repeat):
        for name in list(cases)[::-1] if reverse else cases:
            seconds, got = timed(cases[name])
            if name == "small_floor":
                check(all(len(b) == os.path.getsize(p) for b, p in zip(got, paths, strict=True)), name)
            else:
                check(len(got) == len(want) and all(map(same_array, got, want)), name)
            if timing:
                times[name].append(seconds)
    shutil.rmtree(folder)
    for name in cases:
        report(name, times[name], SMALL_FILES * 2048)


SHARDS = 16
SHARD_ROWS = 100_000
SHARD_COLUMNS = 64  # <f4: 256-byte rows, 25.6 MB a shard
BATCHES = 20
BATCH_ROWS = 256
S3_BATCHES = 4


def shard_rounds(directory, repeat):
    """Issue 57: 20 batches of 256 random rows of 16 shards of 100,000 x 64 `<f4`, each
    batch read by `npy.open(shards)[rows]` (files read by `pread`, and mapped) and by the
    best NumPy code for it: the rows grouped by shard, one fancy index per
    `np.load(mmap_mode="r")` map (maps opened once, as a DataLoader's dataset holds them).
    Every batch checked against NumPy's after the clock. Then another Python thread's
    progress (a counter) while each side gathers, against its progress alone; then the
    same batches from the shards on S3 (moto), counting the requests the server got and
    the bytes it sent."""
    folder = directory / "shards"
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(57)
    paths = [str(folder / f"shard{i:02d}.npy") for i in range(SHARDS)]
    for path in paths:
        np.save(path, rng.standard_normal((SHARD_ROWS, SHARD_COLUMNS), dtype=np.float32))
    maps = [np.load(p, mmap_mode="r").view(np.ndarray) for p in paths]
    starts = np.cumsum([0] + [len(m) for m in maps])
    batches = [rng.integers(0, starts[-1], BATCH_ROWS) for _ in range(BATCHES)]

    def numpy_batch(rows):
        shard = np.searchsorted(starts, rows, side="right") - 1
        local = rows - starts[shard]
        out = np.empty((len(rows), SHARD_COLUMNS), "<f4")
        for s in np.unique(shard):
            picked = np.flatnonzero(shard == s)
            out[picked] = maps[s][local[picked]]
        return out

    want = [numpy_batch(rows) for rows in batches]
    read = npy.open(paths)
    mapped = npy.open(paths, map_local_files=True)
    cases = {
        "shards_np_maps": lambda: [numpy_batch(rows) for rows in batches],
        "shards_npy_mapped": lambda: [mapped[rows] for rows in batches],
        "shards_npy_read": lambda: [read[rows] for rows in batches],
    }
    times = {name: [] for name in cases}
    for timing, reverse in paired_rounds(repeat):
        for name in list(cases)[::-1] if reverse else cases:
            seconds, got = timed(cases[name])
            check(all(map(same_array, got, want)), name)
            if timing:
                times[name].append(seconds)
    for name in cases:
        report(name, times[name], BATCHES * BATCH_ROWS * SHARD_COLUMNS * 4)
    one_batch = {
        "shards_np_maps": lambda: numpy_batch(batches[0]),
        "shards_npy_mapped": lambda: mapped[batches[0]],
        "shards_npy_read": lambda: read[batches[0]],
    }
    progress = {name: gil_progress(one_batch[name]) for name in one_batch}
    for name in cases:
        print(f"# {name}: another thread's progress during a batch: {progress[name]:.2f} of its rate alone", flush=True)
    ratio = progress["shards_npy_read"]
    goal(
        "thread progress during a batch",
        f"another thread's progress during an npy.open batch {ratio:.2f} of its rate alone (at least 0.5; "
        f"NumPy's code: {progress['shards_np_maps']:.2f})",
        ratio >= 0.5,
    )
    maps = read = mapped = None  # closes the maps and files before the S3 part
    s3_shard_rounds(paths, batches, want, repeat)
    shutil.rmtree(folder)


def gil_progress(batch):
    """A counting thread's rate while `batch` runs on this one, over its rate alone. The
    switch interval is 50 ms meanwhile, far longer than a batch: a call that holds the GIL
    lets the counter run only at its edges, one that releases it lets it run throughout
    (then this thread waits up to 50 ms for the GIL back: only the counts inside the
    calls are compared, not the calls' times)."""
    import threading

    counted, running = [0], [True]

    def count():
        while running[0]:
            counted[0] += 1

    interval = sys.getswitchinterval()
    thread = threading.Thread(target=count)
    thread.start()
    try:
        start, before = time.perf_counter(), counted[0]
        time.sleep(0.2)
        alone = (counted[0] - before) / (time.perf_counter() - start)
        sys.setswitchinterval(0.05)
        during, spent = 0, 0.0
        for _ in range(5):
            before, start = counted[0], time.perf_counter()
            batch()
            spent += time.perf_counter() - start
            during += counted[0] - before
    finally:
        sys.setswitchinterval(interval)
        running[0] = False
        thread.join()
    return (during / spent) / alone


def s3_shard_rounds(paths, batches, want, repeat):
    """The batches of `shard_rounds` from the 16 shards on a local S3 (moto, behind a proxy
    that counts the requests it passes and the bytes the server sends back)."""
    with counting_s3() as (client, proxy):
        urls = []
        for path in paths:
            key = f"shards/{os.path.basename(path)}"
            client.upload_file(path, "bench", key)
            urls.append(f"s3://bench/{key}")
        lazy = npy.open(urls)
        # Fewer batches than the local rounds: each row is a GET, and moto answers a few
        # hundred a second.
        batches, want = batches[:S3_BATCHES], want[:S3_BATCHES]
        times, requests, sent, data = [], [], [], []
        for timing, _ in paired_rounds(repeat):
            before = (proxy.requests, proxy.sent, lazy.fetched)
            seconds, got = timed(lambda: [lazy[rows] for rows in batches])
            check(all(map(same_array, got, want)), "shards_s3_npy")
            if timing:
                times.append(seconds)
                requests.append(proxy.requests - before[0])
                sent.append(proxy.sent - before[1])
                data.append(lazy.fetched - before[2])
        report("shards_s3_npy", times, S3_BATCHES * BATCH_ROWS * SHARD_COLUMNS * 4)
        touched = sum(len(np.unique(np.searchsorted(np.arange(len(paths)) * SHARD_ROWS, r, "right"))) for r in batches)
        row_bytes = S3_BATCHES * BATCH_ROWS * SHARD_COLUMNS * 4
        per_shard = max(requests) / touched
        wire, body = max(sent) / row_bytes, max(data) / row_bytes
        print(
            f"# shards_s3_npy: {max(requests):,} requests for {S3_BATCHES} batches touching {touched} shards "
            f"({per_shard:.1f} a shard touched); the server sent {max(sent):,} bytes ({wire:.2f}x the rows' "
            f"{row_bytes:,}), of them {max(data):,} bytes of data ({body:.2f}x)",
            flush=True,
        )
        goal("S3 requests per shard", f"a batch's per shard touched {per_shard:.1f} (at most 2)", per_shard <= 2)
        goal("S3 bytes sent", f"a batch's / rows' bytes {wire:.2f} (at most 2.0; data alone {body:.2f})", wire <= 2)


ZSTD_TRACES = 100_000
ZSTD_WALK_BYTES = 64 << 20

# The seismic traces of examples/seismic.rs (npy-seismic's `trace(i)`, `TraceAligned`: 304
# bytes a record in NumPy's align=True layout), built here byte for byte as it writes them.
SEISMIC_RECEIVER = np.dtype([("x", "<f8"), ("y", "<f8"), ("z", "<f4")], align=True)
SEISMIC_TRACE = np.dtype(
    [
        ("trace_id", "<i4"),
        ("receiver", SEISMIC_RECEIVER),
        ("t0", "<f8"),
        ("dt", "<f4"),
        ("flags", "u1"),
        ("samples", "<f4", (64,)),
    ],
    align=True,
)


def seismic_traces(n):
    """Traces 0 to n - 1 of the main job (`target/seismic/traces.npy` holds 1,000,000)."""
    i = np.arange(n)
    t = np.zeros(n, dtype=SEISMIC_TRACE)
    t["trace_id"] = i
    t["receiver"]["x"] = 500_000.0 + (i % 1000) * 12.5
    t["receiver"]["y"] = 6_200_000.0 + (i // 1000) * 25.0
    t["receiver"]["z"] = -2.5
    t["t0"] = (i % 1000) * 0.001
    t["dt"] = 0.004
    t["flags"] = i % 3
    t["samples"] = (i % 4096).astype(np.float32)[:, None] + np.arange(64, dtype=np.float32) / 64
    return t


def zstd_rounds(directory, repeat):
    """Issue 58: npy.NpzWriter's Zstandard archives (the default level) against
    np.savez_compressed's, written and loaded side by side in paired rounds; every archive
    written is read back by np.load (Zstandard through zipfile-zstd before Python 3.14)
    and every load compared with the array, after the clock."""
    if sys.version_info < (3, 14):
        import zipfile_zstd  # noqa: F401  (patches zipfile in place: method 93)
    rng = np.random.default_rng(58)
    data = {
        "traces": seismic_traces(ZSTD_TRACES),
        "walk": np.cumsum(rng.standard_normal(ZSTD_WALK_BYTES // 8)),
    }
    for kind, array in data.items():
        ours, theirs = directory / f"zstd_{kind}.npz", directory / f"deflate_{kind}.npz"

        def write_ours(path=ours, kind=kind, array=array):
            with npy.NpzWriter(path) as w:
                w[kind] = array

        def write_theirs(path=theirs, kind=kind, array=array):
            np.savez_compressed(path, **{kind: array})

        def written(path, kind=kind, array=array):
            with np.load(path) as back:
                return back.files == [kind] and same_array(back[kind], array)

        def loaded(got, kind=kind, array=array):
            return list(got) == [kind] and same_array(got[kind], array)

        write_ours()
        write_theirs()
        cases = {
            f"zstd_write_{kind}_npy": (write_ours, lambda _, p=ours: written(p)),
            f"zstd_write_{kind}_np": (write_theirs, lambda _, p=theirs: written(p)),
            f"zstd_load_{kind}_npy": (lambda p=ours: npy.load(p).load_all(), loaded),
            f"zstd_load_{kind}_np": (lambda p=theirs: dict(np.load(p)), loaded),
        }
        times = {name: [] for name in cases}
        for timing, reverse in paired_rounds(repeat):
            for name in list(cases)[::-1] if reverse else cases:
                call, ok = cases[name]
                seconds, got = timed(call)
                check(ok(got), name)
                if timing:
                    times[name].append(seconds)
        for name in cases:
            report(name, times[name], array.nbytes)
        size, peer = ours.stat().st_size, theirs.stat().st_size
        print(f"# zstd {kind}: {array.nbytes} bytes; Zstandard archive {size} bytes, savez_compressed's {peer}")
        ratio = f"zstd {kind} archive size / savez_compressed's {size / peer:.3f}"
        if kind == "traces":
            goal("zstd traces archive size", f"{ratio} (at most 1.0)", size <= peer)
        else:
            print(f"# {ratio} (no goal: noisy floats compress little either way)", flush=True)
        ours.unlink()
        theirs.unlink()


def reset_peak():
    """In a worker: resets its peak resident size (VmHWM) to the current one; gives that."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return proc_status_kib("VmRSS")


def peak_kib():
    """In a worker: its peak resident size since the last reset, in KiB."""
    return proc_status_kib("VmHWM")


def proc_status_kib(field):
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith(field + ":")).split()[1])


if __name__ == "__main__":
    from pathlib import Path

    print(f"# goals: {' | '.join(GOALS)}", flush=True)
    rounds(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    user_rounds(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    stream_rounds(Path(sys.argv[1]), int(sys.argv[3]))
    remote_rounds(Path(sys.argv[1]), int(sys.argv[3]))
    dask_rounds(Path(sys.argv[1]), int(sys.argv[3]))
    small_file_rounds(Path(sys.argv[1]), int(sys.argv[3]))
    shard_rounds(Path(sys.argv[1]), int(sys.argv[3]))
    zstd_rounds(Path(sys.argv[1]), int(sys.argv[3]))
