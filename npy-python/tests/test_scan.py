"""npy.scan and npy.polars.scan_npy: DuckDB, polars, pyarrow and pandas answer from NumPy
files as NumPy does.

Every NumPy file of the corpus is read through a scan by each consumer and compared, column
by column, with np.load's values by xtask/arrow_check.py's rules (a consumer's own types
cast back as xtask/consumer_check.py accepts them). Then the scan's own promises: fresh
streams, columns and rows, directories and globs, archives, errors that name the file in
every consumer, files changed under a stream, polars' pushdowns, no thread left behind.
"""

import inspect
import os
import re
import sys
import time
import warnings
import zipfile

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import npy
import npy.polars
from conftest import NPY_FILES, NPZ_FILES, ROOT, ids
from support import TRACE, traces

sys.path.insert(0, str(ROOT / "xtask"))
import arrow_check as ac
import consumer_check as cc

CONSUMERS = ["pyarrow", "duckdb", "polars", "pandas"]


def plain(path):
    """Whether np.load reads `path` without pickles (object arrays have no Arrow form)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if path.suffix == ".npz":
                with np.load(path, allow_pickle=False) as z:
                    return all(not z[n].dtype.hasobject for n in z.files)
            return not np.load(path, mmap_mode="r", allow_pickle=False, max_header_size=ac.MAX_HEADER).dtype.hasobject
        except ValueError:
            return False


SCANNED_NPY = [p for p in NPY_FILES if plain(p)]
SCANNED_NPZ = [p for p in NPZ_FILES if plain(p) and not cc.ragged(p)]


def consumed(consumer, t):
    """What `consumer` reads from scan `t`: an Arrow table (pandas: a DataFrame)."""
    if consumer == "pyarrow":
        return pa.table(t)
    if consumer == "duckdb":
        return duckdb.sql("SELECT * FROM t").to_arrow_table()
    if consumer == "polars":
        return pl.DataFrame(t).to_arrow()
    return pd.DataFrame.from_arrow(t)


def loaded(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.load(path, allow_pickle=False, max_header_size=ac.MAX_HEADER)


def held_runs(consumer, arrays, rows):
    """The runs of rows (start, stop) holding only times `consumer` can hold by its
    documented limits (xtask/consumer_check.py's `rows_out_of_range`), over the `rows`
    rows of `arrays` (one array, or an archive's members of one length): [(0, rows)] when
    every row can be held. The rows left out are the consumer's limit, not npy's: DuckDB and
    polars cannot hold those times at all. A skip when no row is left."""
    bad, why = np.zeros(rows, bool), None
    if consumer in ("duckdb", "polars"):
        for arr in arrays:
            more, reason = cc.rows_out_of_range(consumer, arr, "arrow")
            bad |= more
            why = reason or why
    if bad.all() and rows:
        pytest.skip(f"every row out of range: {why}")
    edges = np.flatnonzero(np.diff(np.concatenate(([True], bad, [True])).astype(np.int8)))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)] or [(0, 0)]


def read_by(consumer, t):
    """What `consumer` reads from `t` with the scan's own types (its own types cast back
    without loss, as xtask/consumer_check.py accepts them); a skip where the consumer has
    no such type by its documentation. pandas' frame must be the one pyarrow's table gives
    (pyarrow's is checked against NumPy)."""
    if consumer == "duckdb" and not t.column_names:
        pytest.skip("DuckDB has no table of no columns")
    try:
        got = consumed(consumer, t)
    except BaseException as e:
        # polars panics (a BaseException) on some types it lacks.
        if not isinstance(e, Exception) and type(e).__name__ != "PanicException":
            raise
        why = next((w for w in (cc.lacks(consumer, f.type) for f in pa.schema(t.schema)) if w), None)
        if why:
            pytest.skip(f"{why} ({type(e).__name__})")
        if consumer == "pandas":
            with pytest.raises(type(e)):
                pa.table(t).to_pandas()
            pytest.skip(f"pandas has no column for it: {e}")
        raise
    if consumer == "pandas":
        pd.testing.assert_frame_equal(got, pa.table(t).to_pandas())
        return None
    if consumer == "pyarrow":
        return got
    out = cc.as_pyarrow_reads(got, pa.table(t), consumer)
    if isinstance(out, cc.Skip):
        pytest.skip(str(out))
    return out


def open_scan(path, **kw):
    try:
        return npy.scan(path, **kw)
    except ValueError as e:
        # npy-arrow's refusals (as `npy convert` refuses them): NumPy files with no Arrow form.
        if "Date32" in str(e) or "no Arrow" in str(e) or "rows that take no bytes" in str(e):
            pytest.skip(str(e)[:200])
        raise


def days_fit(path, **kw):
    """A scan of `path` whose days fit its columns: Date32, else (as `npy convert` does
    when they do not) Int64 days. None for a file with text Arrow's Utf8 cannot hold (npy
    gives it only with a residue column): every consumer must then fail, naming it."""
    t = open_scan(path, **kw)
    try:
        pa.table(t)
    except pa.ArrowInvalid as e:
        if "Utf8 cannot hold" in str(e):
            every_consumer_raises(t, re.escape(path.name))
            return None
        if "Date32" not in str(e):
            raise
        t = open_scan(path, days_as_int64=True, **kw)
    return t


@pytest.mark.parametrize("consumer", CONSUMERS)
@pytest.mark.parametrize("path", SCANNED_NPY, ids=ids(SCANNED_NPY))
def test_consumers_read_numpy_values(path, consumer):
    arr = loaded(path)
    t = days_fit(path)
    if t is None:
        return
    rows = arr.shape[0] if arr.ndim else 1
    assert t.num_rows == len(t) == rows
    # Row by row: the rows the consumer can hold, read from the same file through `rows`.
    for start, stop in held_runs(consumer, [arr], rows):
        part = t if (start, stop) == (0, rows) else days_fit(path, rows=(start, stop))
        table = read_by(consumer, part)
        if table is not None:
            want = arr if part is t else arr[start:stop]
            ac.check_table(table, want, f"{consumer} over npy.scan rows {start}:{stop}")


def test_duckdb_reads_the_durations_it_holds(tmp_path):
    """DuckDB gives durations to Arrow as int64 nanoseconds: it holds microseconds within
    +-(2^63 - 1) // 1000 (xtask/consumer_check.py's limits), which the corpus's
    le_m8_us.npy never has in a row of its own (its rows mix them with larger ones, so the
    test above skips it whole). Those values, its limits and NaT, through npy.scan."""
    most = cc.INT64_MAX // 1000
    nat = np.iinfo(np.int64).min
    values = np.array([0, -1, 9188688234058865, most, -most, nat], "<i8").view("m8[us]")
    assert not cc.rows_out_of_range("duckdb", values, "arrow")[0].any()
    path = tmp_path / "m8_us_held.npy"
    np.save(path, values)
    table = read_by("duckdb", npy.scan(path))
    ac.check_table(table, values, "duckdb over npy.scan of the us durations it holds")
    # One microsecond past its limit is a row DuckDB cannot hold, by the same limits.
    assert cc.rows_out_of_range("duckdb", np.array([most + 1], "<i8").view("m8[us]"), "arrow")[0].all()


@pytest.mark.parametrize("consumer", CONSUMERS)
@pytest.mark.parametrize("path", SCANNED_NPZ, ids=ids(SCANNED_NPZ))
def test_consumers_read_archive_members(path, consumer):
    with np.load(path, allow_pickle=False) as z:
        arrays = {n: z[n] for n in z.files}
    t = days_fit(path)
    if t is None:
        return
    rows = t.num_rows
    for start, stop in held_runs(consumer, list(arrays.values()), rows):
        part = t if (start, stop) == (0, rows) else days_fit(path, rows=(start, stop))
        table = read_by(consumer, part)
        if table is None:
            return
        assert table.column_names == list(arrays)
        for name, arr in arrays.items():
            arr = arr if part is t else arr[start:stop]
            got = ac.member_table(table.column(name).combine_chunks(), arr)
            ac.check_table(got, arr, f"{consumer} member {name} rows {start}:{stop}")


@pytest.fixture
def trace_file(tmp):
    a = traces(10_000)
    path = tmp / "t.npy"
    np.save(path, a)
    return path, a


def test_every_stream_is_fresh_and_independent(trace_file):
    path, a = trace_file
    t = npy.scan(path, batch_rows=1000)
    first, second = pa.table(t), pa.table(t)
    assert first.column("id").to_pylist() == a["id"].tolist()
    assert first.equals(second)
    # Each query opens a stream of its own: both see every row.
    total = int(a["id"].sum())
    assert duckdb.sql("SELECT sum(id) FROM t").fetchall() == [(total,)]
    assert duckdb.sql("SELECT sum(id) FROM t").fetchall() == [(total,)]
    # Two streams read in turns give every row each.
    r1, r2 = pa.RecordBatchReader.from_stream(t), pa.RecordBatchReader.from_stream(t)
    rows1, rows2 = [], []
    for _ in range(10):
        rows1 += r1.read_next_batch().column("id").to_pylist()
        rows2 += r2.read_next_batch().column("id").to_pylist()
    assert rows1 == rows2 == a["id"].tolist()


def test_columns_rows_and_batches(trace_file):
    path, a = trace_file
    t = npy.scan(path, columns=["id", "t0"], rows=slice(-2500, -500), batch_rows=700)
    assert t.column_names == ["id", "t0"] and t.num_rows == 2000
    table = pa.table(t)
    assert table.column("id").to_pylist() == a["id"][-2500:-500].tolist()
    assert np.array_equal(table.column("t0").to_numpy(), a["t0"][-2500:-500])
    assert [b.num_rows for b in pa.RecordBatchReader.from_stream(t)] == [700, 700, 600]
    assert npy.scan(path, rows=range(5, 8)).num_rows == 3
    assert npy.scan(path, rows=(None, 3)).num_rows == 3
    assert npy.scan(path, rows=(20_000, 30_000)).num_rows == 0
    assert pa.table(npy.scan(path, rows=(20_000, None))).num_rows == 0
    assert pa.table(npy.scan(path, columns=[])).num_rows == len(a)
    with pytest.raises(KeyError, match=r'no column "nope" in .*t.npy'):
        npy.scan(path, columns=["nope"])
    with pytest.raises(TypeError):
        npy.scan(path, columns="id")
    with pytest.raises(ValueError, match=r"step 1"):
        npy.scan(path, rows=slice(0, 10, 2))
    with pytest.raises(ValueError, match=r"batch_rows"):
        npy.scan(path, batch_rows=0)
    assert "npy.Scan(" in repr(t) and "2000 rows" in repr(t)
    assert pa.schema(t.schema).names == ["id", "t0"]


@pytest.mark.parametrize("door", [npy.scan, npy.polars.scan_npy], ids=["scan", "scan_npy"])
def test_scan_and_scan_npy_take_the_same_keywords(trace_file, door):
    """One definition of the keywords: both doors show it (``help``, ``inspect``), and
    check it, naming themselves, as a function of those keywords would."""
    path, _ = trace_file
    shown = inspect.signature(door)
    assert list(shown.parameters) == [
        "source",
        "columns",
        "rows",
        "batch_rows",
        "members",
        "days_as_int64",
        "map_local_files",
    ]
    assert all(p.kind is p.KEYWORD_ONLY for p in list(shown.parameters.values())[1:])
    assert shown.parameters["days_as_int64"].default is False
    assert shown.return_annotation == ("Scan" if door is npy.scan else "pl.LazyFrame")
    assert door.__doc__ and door.__name__ == door.__wrapped__.__name__
    with pytest.raises(TypeError, match=rf"^{door.__name__}\(\) got an unexpected keyword argument 'colums'"):
        door(path, colums=["id"])
    with pytest.raises(TypeError, match=rf"^{door.__name__}\(\) too many positional arguments"):
        door(path, ["id"])


def test_mapped_files_give_the_same_rows(trace_file, tmp):
    path, a = trace_file
    mapped = npy.scan(path, columns=["samples", "id"], rows=(17, 9000), map_local_files=True, batch_rows=999)
    table = pa.table(mapped)
    assert table.equals(pa.table(npy.scan(path, columns=["samples", "id"], rows=(17, 9000))))
    assert table.column("id").to_pylist() == a["id"][17:9000].tolist()
    assert np.array_equal(np.stack(table.column("samples").to_numpy(zero_copy_only=False)), a["samples"][17:9000])
    np.savez(tmp / "m.npz", x=a)  # archives are read whatever the option says
    assert pa.table(npy.scan(tmp / "m.npz", map_local_files=True)).num_rows == len(a)
    # A file replaced under a mapped scan: the map holds the old file's pages, and the
    # stream still says the file changed.
    np.save(tmp / "new.npy", traces(len(a), seed=9))
    os.replace(tmp / "new.npy", path)
    with pytest.raises(Exception, match="changed"):
        pa.table(mapped)


def test_directories_and_globs_are_one_table(tmp):
    parts = [traces(n, seed=i) for i, n in enumerate([300, 0, 1000, 7])]
    (tmp / "d" / "sub").mkdir(parents=True)
    for i, part in enumerate(parts):
        np.save(tmp / "d" / ("sub" if i == 2 else ".") / f"p{i}.npy", part)
    (tmp / "d" / "notes.txt").write_text("not a table")
    whole = np.concatenate([parts[0], parts[1], parts[3], parts[2]])  # sorted by path: d/p*, then d/sub/p2
    for source in (tmp / "d", str(tmp / "d" / "**" / "*.npy")):
        t = npy.scan(source, rows=(250, 1200), batch_rows=128)
        if isinstance(source, str):
            want = np.concatenate([parts[0], parts[1], parts[3], parts[2]])[250:1200]
        else:
            want = whole[250:1200]
        assert pa.table(t).column("id").to_pylist() == want["id"].tolist()
        assert duckdb.sql("SELECT count(*) FROM t").fetchall()[0][0] == len(want)
    np.save(tmp / "d" / "zz.npy", np.zeros(3, "<f8"))
    with pytest.raises(ValueError, match=r"zz\.npy.*not those of .*p0\.npy"):
        npy.scan(tmp / "d")
    (tmp / "e").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no .npy or .npz file"):
        npy.scan(tmp / "e")
    np.save(tmp / "e" / "a.npy", np.zeros(3))
    np.savez(tmp / "e" / "b.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match=r"a table is one kind"):
        npy.scan(tmp / "e")
    up = f"{tmp}/d/../d/p0.npy"  # object stores have no `..`: resolved
    assert pa.table(npy.scan(up)).num_rows == len(parts[0])
    with pytest.raises(FileNotFoundError, match=r"missing.npy"):
        npy.scan(tmp / "missing.npy")


def test_archives_members_as_columns(tmp):
    a = traces(5000)
    path = tmp / "run.npz"
    np.savez_compressed(path, traces=a, gain=np.arange(5000, dtype="<f4"), flag=a["ok"])
    t = npy.scan(path, members=["gain", "traces"], rows=(100, 4000), batch_rows=512)
    table = pa.table(t)
    assert table.column_names == ["gain", "traces"]
    assert table.column("gain").to_pylist() == np.arange(100, 4000, dtype="<f4").tolist()
    assert table.column("traces").combine_chunks().field("id").to_pylist() == a["id"][100:4000].tolist()
    got = duckdb.sql("SELECT sum(gain), count(*) FROM t").fetchall()[0]
    assert got == (float(np.arange(100, 4000, dtype="<f4").sum()), 3900)
    with pytest.raises(ValueError, match=r"members="):
        npy.scan(tmp / "x.npy" if (tmp / "x.npy").exists() else _npy_file(tmp), members=["x"])
    np.savez(tmp / "ragged.npz", a=np.zeros(3), b=np.zeros(4))
    with pytest.raises(npy.BadNpzFile, match=r"ragged.npz"):
        npy.scan(tmp / "ragged.npz")


def _npy_file(tmp):
    np.save(tmp / "x.npy", np.zeros(3))
    return tmp / "x.npy"


def every_consumer_raises(t, pattern):
    """Each consumer fails on the scan's stream with an error matching `pattern` (never
    answers, never crashes the interpreter)."""
    for consumer in CONSUMERS:
        with pytest.raises(Exception, match=pattern):
            consumed(consumer, t)


def corrupt_member(tmp):
    path = tmp / "bad.npz"
    np.savez(path, x=np.arange(1000, dtype="<i8"), y=np.arange(1000, dtype="<f8"))
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("y.npy")
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 128 + 8 * 500
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    return path


def test_hostile_files_raise_in_every_consumer(tmp):
    # A corrupt stored member: its CRC-32 fails before any row is given.
    t = npy.scan(corrupt_member(tmp))
    every_consumer_raises(t, "(?s)bad.npz.*CRC|CRC.*bad.npz")
    t = npy.scan(corrupt_member(tmp), columns=["x"])  # the corrupt member is not read
    assert pa.table(t).column("x").to_pylist() == list(range(1000))
    # A truncated .npy: the header says more rows than the file holds.
    path = tmp / "short.npy"
    np.save(path, np.arange(100_000, dtype="<f8"))
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 8)
    with pytest.raises(ValueError, match=r"short.npy.*truncated"):
        npy.scan(path)
    # Truncated after the scan opened it: every stream fails.
    np.save(path, np.arange(100_000, dtype="<f8"))
    t = npy.scan(path)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 8)
    every_consumer_raises(t, "short.npy")
    # Not NumPy files at all.
    (tmp / "junk.npy").write_bytes(b"\x93NUMPY\x01\x00{'descr': '<f8', 'fortran_order': False, 'shape': (")
    with pytest.raises(ValueError, match=r"junk.npy"):
        npy.scan(tmp / "junk.npy")
    (tmp / "junk.npz").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(npy.BadNpzFile, match=r"junk.npz"):
        npy.scan(tmp / "junk.npz")
    # Object arrays of dicts have no Arrow form: refused, naming the file.
    np.save(tmp / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"objects.npy"):
        npy.scan(tmp / "objects.npy")


def _object_array(items):
    a = np.empty(len(items), dtype=object)
    a[:] = items
    return a


def test_ragged_and_text_object_arrays_are_list_and_utf8_columns(tmp):
    # A ragged array: a List column of its rows' type, None a null row, as tolist() gives.
    ragged = _object_array([np.arange(3), np.arange(5), None, np.arange(0)])
    np.save(tmp / "ragged.npy", ragged, allow_pickle=True)
    want = [None if r is None else r.tolist() for r in ragged]
    t = npy.scan(tmp / "ragged.npy")
    assert pa.table(t).schema.field("values").type == pa.list_(pa.int64())
    assert duckdb.sql("SELECT values FROM t").fetchall() == [(v,) for v in want]
    assert pl.DataFrame(t)["values"].to_list() == want
    assert npy.scan(tmp / "ragged.npy", rows=(1, 3), batch_rows=1).num_rows == 2
    assert pa.table(npy.scan(tmp / "ragged.npy", rows=(1, 3), batch_rows=1))["values"].to_pylist() == want[1:3]
    # str rows of different widths and dates.
    words = _object_array([np.array(["ab", "c"]), np.array(["longer"])])
    np.save(tmp / "words.npy", words, allow_pickle=True)
    assert pl.DataFrame(npy.scan(tmp / "words.npy"))["values"].to_list() == [["ab", "c"], ["longer"]]
    days = _object_array([np.array(["2020-01-02", "NaT"], dtype="M8[D]")])
    np.save(tmp / "days.npy", days, allow_pickle=True)
    d = npy.scan(tmp / "days.npy")
    assert d.num_rows == 1
    assert duckdb.sql("SELECT values FROM d").fetchall() == [([days[0][0].item(), None],)]
    # Text: one Utf8 column, None null.
    np.save(tmp / "text.npy", np.array(["a", None, "bc"], dtype=object), allow_pickle=True)
    assert pl.DataFrame(npy.scan(tmp / "text.npy"))["values"].to_list() == ["a", None, "bc"]
    # Rows of two types have no one list type: refused, naming the file and the element.
    np.save(tmp / "mixed.npy", _object_array([np.arange(2), np.arange(2.0)]), allow_pickle=True)
    with pytest.raises(ValueError, match=r"mixed.npy.*element 1 is an ndarray of dtype <f8"):
        npy.scan(tmp / "mixed.npy")


def test_a_file_changed_under_a_stream_raises(trace_file, tmp):
    path, a = trace_file
    t = npy.scan(path, batch_rows=1000)
    reader = pa.RecordBatchReader.from_stream(t)
    assert reader.read_next_batch().column("id").to_pylist() == a["id"][:1000].tolist()
    # Rewritten in place with other values (same size), as a careless writer would.
    b = traces(len(a), seed=5)
    with open(path, "r+b") as f:
        f.seek(128)
        f.write(b.tobytes())
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    with pytest.raises(Exception, match=r"t.npy.*changed"):
        reader.read_all()
    # And a scan opened before a file is replaced fails on every new stream.
    np.save(tmp / "new.npy", b)
    os.replace(tmp / "new.npy", path)
    every_consumer_raises(t, "changed")
    assert pa.table(npy.scan(path)).column("id").to_pylist() == b["id"].tolist()


def threads():
    return len(os.listdir("/proc/self/task"))


def test_streams_left_early_end_their_threads(trace_file):
    path, _ = trace_file
    t = npy.scan(path, batch_rows=10)
    before = threads()
    for _ in range(20):
        reader = pa.RecordBatchReader.from_stream(t)
        reader.read_next_batch()
        del reader
    it = t.batches()
    next(it)
    del it
    deadline = time.monotonic() + 30
    while threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threads() <= before


def finishes(work, seconds=60):
    """Runs `work` on a thread; fails the test if it is still waiting after `seconds` (a
    stream thread waiting forever on a peer that left)."""
    import threading

    outcome = {}

    def run():
        try:
            outcome["value"] = work()
        except BaseException as e:
            outcome["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the stream is still waiting"
    return outcome


def test_streams_of_two_pieces_end_when_either_side_fails(tmp):
    # Just over one piece (16 MiB): two threads make the stream, side by side.
    n = (16 << 20) // TRACE.itemsize + 1000
    path = tmp / "two.npy"
    np.save(path, traces(n))
    before = threads()
    # The writer fails: the second piece's file is cut short after the scan opened it.
    t = npy.scan(path, batch_rows=4096)
    reader = pa.RecordBatchReader.from_stream(t)
    first = reader.read_next_batch()
    assert first.num_rows == 4096
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 1000 * TRACE.itemsize)
    outcome = finishes(reader.read_all)
    assert "error" in outcome and "two.npy" in str(outcome["error"])
    # The filter (Python's predicate) fails in a piece's thread.
    np.save(path, traces(n))
    failing = npy.scan(path, columns=["id"], batch_rows=4096)

    def predicate(batch):
        raise RuntimeError("the predicate broke")

    outcome = finishes(lambda: list(failing.batches(["t0"], predicate)))
    error = outcome.get("error")
    assert error is not None and "two.npy" in str(error) and "the predicate broke" in str(error)
    # The reader fails: it leaves after one batch of each stream, ten times.
    for _ in range(10):
        it = npy.scan(path, batch_rows=4096).batches()
        next(it)
        del it
    deadline = time.monotonic() + 30
    while threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threads() <= before


def test_pandas_and_pyarrow_frames_agree(trace_file):
    path, a = trace_file
    t = npy.scan(path, columns=["t0", "dt", "id", "ok"])
    frame = pd.DataFrame.from_arrow(t)
    pd.testing.assert_frame_equal(frame, pa.table(t).to_pandas())
    assert np.array_equal(frame["t0"].to_numpy(), a["t0"])
    assert frame["ok"].tolist() == a["ok"].tolist()


@pytest.mark.parametrize(
    "query",
    [
        lambda lf: lf.filter(pl.col("dt") > 5).select("id"),
        lambda lf: lf.filter((pl.col("dt") >= 3) & (pl.col("t0") < 0.5)).select(pl.col("samples").arr.get(1).sum()),
        lambda lf: lf.filter(pl.col("ok")).head(17),
        lambda lf: lf.filter(pl.col("id").is_in([3, 9999, 12345])),
        lambda lf: lf.filter(pl.lit(True)).select(pl.len()),
        lambda lf: lf.select(pl.len()),
        lambda lf: lf.filter(pl.col("dt") > 5).select(pl.len()),
        lambda lf: lf.filter((pl.col("dt") > 5) & (pl.col("t0") > 0)).select("dt"),
        lambda lf: lf.head(3).select("t0", "dt"),
        lambda lf: lf.filter(pl.col("t0") > 100),
        lambda lf: lf.group_by("dt").agg(pl.col("t0").max()).sort("dt"),
        lambda lf: lf.filter(pl.col("t0").is_between(-0.1, 0.1) | pl.col("dt").is_null()).select("id", "ok"),
    ],
)
def test_polars_pushdowns_answer_as_polars(trace_file, query):
    path, _ = trace_file
    want = query(pl.DataFrame(npy.scan(path)).lazy()).collect()
    for batch_rows in (None, 333):
        got = query(npy.polars.scan_npy(path, batch_rows=batch_rows)).collect()
        # Sums of floats may differ in their last bits with the batches' bounds.
        assert_frame_equal(got, want, check_exact=False)


def test_polars_filters_archives(tmp):
    a = traces(3000)
    np.savez_compressed(tmp / "run.npz", traces=a, gain=np.arange(3000.0))
    lf = npy.polars.scan_npy(tmp / "run.npz", batch_rows=700)
    got = lf.filter(pl.col("gain") > 2500).select("traces").collect()
    assert got["traces"].struct.field("id").to_list() == a["id"][2501:].tolist()


def test_polars_over_numpy_values(trace_file, tmp):
    path, a = trace_file
    lf = npy.polars.scan_npy(path)
    kept = lf.filter(pl.col("dt") > 5).select(pl.col("id").sum()).collect().item()
    assert kept == int(a["id"][a["dt"] > 5].sum())
    assert lf.select(pl.len()).collect().item() == len(a)
    assert lf.collect_schema().names() == list(TRACE.names)
    parts = tmp / "parts"
    parts.mkdir()
    for i in range(3):
        np.save(parts / f"{i}.npy", traces(100, seed=i))
    got = npy.polars.scan_npy(parts, rows=(50, 250)).select("id").collect()["id"].to_list()
    assert got == list(range(50, 250))
    assert "npy" in npy.polars.scan_npy(path).filter(pl.col("dt") > 1).explain()
