#!/usr/bin/env python3
"""The consumers read what `npy convert` writes, and it reads what they write (issue 32).

Usage: python3 consumer_check.py NPY WORK DIR [DIR...]

Every case is reported on a line of its own, `PASS name`, `skip name: why` or `FAIL name:
why`; then the failures grouped by reason, and `N cases (S skipped), K failed`. Exits 1
on any failure (or when no file was found). Each case runs in a worker process, so that
a consumer crashing or hanging (120 s) fails that case only. Deterministic: the inputs
are the files under each DIR and tables built here from fixed values. The consumers are
pinned in xtask/requirements.txt.

1. Consumers read our files (`read <file> <format> <consumer>`). Every non-object .npy
   under each DIR is converted by `NPY convert FILE WORK/x.arrow --residue` and to
   .parquet (as xtask/arrow_check.py does), then read by DuckDB (`read_parquet`; an .arrow
   file through `DuckDBPyConnection.from_arrow` over pyarrow's IPC reader, as DuckDB has no
   IPC file reader of its own) and by polars (`read_parquet`, `read_ipc`). Each consumer's
   result, as an Arrow table, must hold NumPy's values by arrow_check.py's rules (its
   `check_table`) once each column is cast to the type pyarrow reads from the same file:
   a consumer may use its own type (large_string for string, timestamp[us] for [ns],
   float32 for float16...) as long as pyarrow's safe cast takes it back without loss, so
   a value it changed, a column it dropped or renamed, or a type it cannot cast back fail.
   DuckDB's names are case-insensitive: a column named as an earlier one but for case
   comes back as `name_1`, which is accepted.
   A consumer refusing a file fails, but where the consumer has no such type or value by
   its own documentation (`lacks`, `rows_out_of_range`): DuckDB has no float16, no table
   of no columns, its times are int64 microseconds (+-(2^63 - 1) meaning infinity), its
   durations INTERVALs of whole microseconds, given to Arrow in int64 nanoseconds; polars
   has no struct of no fields, no fixed-size binary of width 0, reads no fixed-size list
   of length 0 from IPC, and holds seconds as int64 milliseconds. A type it lacks makes
   the case a `skip`, with the reason; rows holding a time it cannot hold are left out
   (the array without them is converted and checked, and the case says how many rows it
   left out), or the case is a skip when no row is left.
   npz archives likewise, as one table (a column per member, arrow_check.py's
   `check_archive` rules), but those whose members differ in length (no table form).

2. We read the consumers' files (`foreign <writer> <case>`): tables written by pyarrow
   (`pq.write_table`, `feather.write_feather`), pandas (`to_parquet`, `to_feather`), polars
   (`write_parquet`, `write_ipc`) and DuckDB (`COPY ... TO`) with their default settings,
   then with nulls, dictionaries (categoricals, enums), every compression (Parquet snappy,
   zstd, lz4, brotli, gzip, none; Feather lz4, zstd, uncompressed), several row groups,
   strings of every flavour (string, large_string, string_view, binary, large_binary,
   binary_view), fixed-length lists (DuckDB FLOAT[8], polars Array, pyarrow
   fixed_size_list and list), dates, times, decimals and timestamps with time zones, are
   converted by `NPY convert FILE WORK/out.npy`. NumPy loads the result
   (`allow_pickle=False`) equal to the table pyarrow reads from the file:

     names              a record array of one field per column, in order, named as the
                        columns (a single column named `values` may instead be a plain
                        array), one row per row
     bool, ints, floats same kind and width (float16 as f2), equal values, a NaN a NaN
     strings            U, equal text (string, large_string, string_view)
     binary             S, equal bytes (binary, large_binary, binary_view)
     dictionaries       their values, as the value type says
     fixed-length lists a subarray of the list's length, equal items (a list column
                        whose rows all have one length likewise)
     dates              datetime64 (days, or ms for Date64), the same instants
     times of day       timedelta64 since midnight, the same durations
     timestamps         datetime64 of the same unit, the same instants (UTC for a time
                        zone)
     durations          timedelta64, the same durations
     decimals           float64, the nearest float of each decimal
     nulls              NaN in a float or decimal column, NaT in a date, time,
                        timestamp or duration column; in a column of any other type the
                        conversion must fail with exit 1 (not 0, a crash, or the usage
                        code 2) and the column's name in the message: the null rule
   A self-test first checks these rules on arrays built here as they say (they must pass)
   and on wrong ones (a changed value, swapped names, a narrower dtype: they must fail).

3. Our Parquet, edited with pyarrow (`edit <edit>`): a record .npy of several fields
   (ids, two <f8 columns, text, times) converted by `NPY convert` to Parquet, read with
   pyarrow, edited (rows filtered, a column dropped, a column added, the two <f8 columns
   swapped, a column renamed, a column cast), written back with `pq.write_table` (which
   keeps the schema's `numpy.*` metadata: the case checks it did), then converted back to
   .npy: NumPy loads exactly what pyarrow holds (names, order, values, by the rules of 2),
   never what the stale header in the metadata says.
"""

import datetime as dt
import decimal
import functools
import multiprocessing
import re
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute
import pyarrow.feather as feather
import pyarrow.ipc
import pyarrow.parquet as pq

import arrow_check as ac

TIMEOUT = 60
CASE_TIMEOUT = 120


class Bad(Exception):
    pass


def run_case(check, args):
    """`check(*args)` as (outcome, text): ("pass", note), ("skip", why) or ("fail", why);
    `check` returns None or a note when it passes, a Skip when the case cannot be held."""
    try:
        note = check(*args)
    except (Bad, ac.Bad) as e:
        return "fail", str(e)
    except Exception as e:  # a consumer or NumPy refusing: a failure of this case
        where = traceback.extract_tb(e.__traceback__)[-1]
        return "fail", "%s: %s (at %s:%d)" % (type(e).__name__, e, Path(where.filename).name, where.lineno)
    if isinstance(note, Skip):
        return "skip", note
    return "pass", note or ""


def serve(conn):
    """The worker process: runs each case the parent sends, until it sends None."""
    warnings.simplefilter("ignore", UserWarning)
    while True:
        job = conn.recv()
        if job is None:
            return
        conn.send(run_case(*job))


class Report:
    """Runs every case in a worker process (so that a consumer crashing on a signal, or
    hanging, fails its case rather than the whole check: the worker is then started
    again), printing each outcome as it comes."""

    def __init__(self):
        self.cases = 0
        self.failed = []
        self.skipped = 0
        self.context = multiprocessing.get_context("spawn")
        self.proc = None
        self.conn = None

    def run(self, check, args):
        if self.proc is None:
            self.conn, child = self.context.Pipe()
            self.proc = self.context.Process(target=serve, args=(child,), daemon=True)
            self.proc.start()
            child.close()
        self.conn.send((check, args))
        if self.conn.poll(CASE_TIMEOUT):
            try:
                return self.conn.recv()
            except EOFError:
                pass
            self.proc.join(10)
            why = "the worker died (exit %s: a crash in a consumer or NumPy)" % self.proc.exitcode
        else:
            self.proc.kill()
            self.proc.join()
            why = "no answer in %d s: killed" % CASE_TIMEOUT
        self.proc = None
        return "fail", why

    def close(self):
        if self.proc is not None:
            self.conn.send(None)
            self.proc.join(10)
            self.proc = None

    def case(self, name, check, *args):
        self.cases += 1
        outcome, text = self.run(check, args)
        if outcome == "fail":
            why = " ".join(text.split())
            if len(why) > 400:
                why = why[:400] + "..."
            print("FAIL %s: %s" % (name, why), flush=True)
            self.failed.append((name, why))
        elif outcome == "skip":
            self.skipped += 1
            print("skip %s: %s" % (name, text), flush=True)
        else:
            print("PASS %s%s" % (name, " (%s)" % text if text else ""), flush=True)


def npy_convert(npy, src, dst, *flags):
    """`npy convert SRC DST`: the process's result (never raises on a non-zero exit)."""
    Path(dst).unlink(missing_ok=True)
    cmd = [str(npy), "convert", str(src), str(dst), *flags]
    return subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)


def stderr_of(out):
    return out.stderr.decode(errors="replace").strip()


def converted(npy, src, dst, *flags):
    out = npy_convert(npy, src, dst, *flags)
    if out.returncode != 0:
        what = (Path(src).name, Path(dst).suffix, out.returncode, stderr_of(out))
        raise Bad("npy convert %s -> %s: exit %d: %s" % what)


# --- 1. the consumers read our files ------------------------------------------------


def duckdb_read(path, ext):
    con = duckdb.connect()
    try:
        if ext == "parquet":
            return con.sql("SELECT * FROM read_parquet(?)", params=[str(path)]).to_arrow_table()
        reader = pa.ipc.open_file(str(path))
        return con.from_arrow(reader.read_all()).to_arrow_table()
    finally:
        con.close()


def polars_read(path, ext):
    df = pl.read_parquet(str(path)) if ext == "parquet" else pl.read_ipc(str(path))
    return df.to_arrow()


CONSUMERS = {"duckdb": duckdb_read, "polars": polars_read}


def lacks(consumer, t):
    """Why `consumer` cannot hold Arrow type `t` by its own documentation, or None
    (asked only once the consumer refused a file, or gave a type that does not cast back)."""
    if isinstance(t, pa.BaseExtensionType):
        return lacks(consumer, t.storage_type)
    if pa.types.is_fixed_size_binary(t) and t.byte_width == 0 and consumer == "polars":
        return "polars has no fixed-size binary of width 0"
    if pa.types.is_float16(t) and consumer == "duckdb":
        return "DuckDB has no 16-bit float"
    if pa.types.is_struct(t):
        if t.num_fields == 0 and consumer == "polars":
            return "polars has no struct of no fields"
        return next((w for w in (lacks(consumer, t.field(i).type) for i in range(t.num_fields)) if w), None)
    if pa.types.is_fixed_size_list(t):
        if t.list_size == 0 and consumer == "polars":
            return "polars reads no fixed-size list of length 0 from IPC"
        return lacks(consumer, t.value_type)
    return None


# The times a consumer holds, by the factor from each unit to its own and the largest
# count it holds there: DuckDB keeps int64 microseconds (+-(2^63 - 1) for +-infinity),
# polars int64 in ms, us or ns (so seconds as ms).
INT64_MAX = (1 << 63) - 1
TIME_LIMITS = {
    "duckdb": ({"s": 10**6, "ms": 10**3, "us": 1}, INT64_MAX - 1),
    "polars": ({"s": 10**3}, INT64_MAX),
}
DUCKDB_INTERVAL_NS = ({"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}, INT64_MAX)


def time_leaves(arr):
    """The datetime64 and timedelta64 leaves of an array: (kind, unit, int64 values of
    shape (rows, items per row)), a 0-d array being one row."""
    dtype = arr.dtype
    if dtype.names:
        for name in dtype.names:
            yield from time_leaves(arr[name])
    elif dtype.kind in "Mm":
        values = arr.astype(dtype.newbyteorder("=")).view("i8")
        yield dtype.kind, np.datetime_data(dtype)[0], values.reshape((values.shape[0] if values.ndim else 1, -1))


def rows_out_of_range(consumer, arr, ext):
    """The rows (a mask over the first axis) holding a time `consumer` cannot hold by
    its documented limits, and why."""
    bad, why = np.zeros(arr.shape[0] if arr.ndim else 1, bool), None
    for kind, unit, values in time_leaves(arr):
        live = values != ac.NAT
        if consumer == "duckdb" and kind == "m" and unit == "ns" and ext == "arrow":
            # A duration comes into DuckDB as an INTERVAL, whose finest unit is the us.
            row_bad = (live & (values % 1000 != 0)).any(axis=1)
            if row_bad.any():
                bad |= row_bad
                why = "DuckDB's INTERVAL holds whole microseconds, not these ns durations"
        factors, limit = TIME_LIMITS[consumer]
        if consumer == "duckdb" and kind == "m" and ext == "arrow":
            # DuckDB gives its INTERVALs to Arrow as month_day_nano: int64 nanoseconds.
            factors, limit = DUCKDB_INTERVAL_NS
        if unit in factors:
            most = limit // factors[unit]
            row_bad = (live & ((values > most) | (values < -most))).any(axis=1)
            if row_bad.any():
                bad |= row_bad
                why = "%s holds times of unit %s within +-%d" % (consumer, unit, most)
    return bad, why


class Skip(str):
    """A case's outcome: the consumer cannot hold the file (the reason)."""


def intervals_as_durations(col, storage):
    """DuckDB's INTERVAL (month_day_nano, what it makes of a duration) back to a duration
    of `storage`'s unit: months must be 0, the count exact in that unit."""
    per = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[storage.unit]
    out = []
    for v in col.to_pylist():
        if v is None:
            out.append(None)
            continue
        months, days, nanos = v
        total = days * 86400 * 10**9 + nanos
        if months or total % per:
            raise Bad("interval %r is not a whole count of %s" % (v, storage.unit))
        out.append(total // per)
    return pa.array(out, pa.int64()).cast(storage)


def cast_back(col, want):
    """A consumer's column cast (safely: an error rather than a changed value) to the type
    pyarrow reads from the same file; extension types wrapped around their storage."""
    storage = want.storage_type if isinstance(want, pa.BaseExtensionType) else want
    if isinstance(col.type, pa.BaseExtensionType):
        col = col.storage
    if pa.types.is_fixed_size_list(storage) and storage.list_size == 0:
        # Rows of no items (built from Python: pyarrow's from_arrays divides by the size).
        if len(col.flatten()):
            raise Bad("items in rows of a list column that must be empty")
        col = pa.array([None if v is None else [] for v in col.to_pylist()], type=storage)
    elif pa.types.is_fixed_size_list(storage) and (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)):
        # A list of one length in every row: its fixed-size form (the items cast below).
        items = cast_back(col.flatten(), storage.value_type)
        if col.null_count or any(n != storage.list_size for n in col.value_lengths().to_pylist()):
            raise Bad("a list column of rows not all %d long" % storage.list_size)
        col = pa.FixedSizeListArray.from_arrays(items, type=storage)
    elif pa.types.is_fixed_size_list(storage) and pa.types.is_fixed_size_list(col.type):
        items = cast_back(col.flatten(), storage.value_type)
        col = pa.FixedSizeListArray.from_arrays(items, type=storage, mask=col.is_null())
    elif pa.types.is_struct(storage) and pa.types.is_struct(col.type):
        children = [cast_back(col.field(i), storage.field(i).type) for i in range(storage.num_fields)]
        col = pa.StructArray.from_arrays(children, fields=list(storage), mask=col.is_null())
    elif pa.types.is_duration(storage) and pa.types.is_interval(col.type):
        col = intervals_as_durations(col, storage)
    elif pa.types.is_integer(storage) and (pa.types.is_timestamp(col.type) or pa.types.is_duration(col.type)):
        # datetime64[s] in Parquet: plain INT64 to pyarrow (see arrow_check.seconds), a
        # time of a finer unit to the consumers, which read the Arrow schema's unit.
        col = col.cast(pa.timestamp("s") if pa.types.is_timestamp(col.type) else pa.duration("s"), safe=True)
        col = col.cast(storage, safe=True)
    elif col.type != storage:
        col = col.cast(storage, safe=True)
    if isinstance(want, pa.BaseExtensionType):
        col = pa.ExtensionArray.from_storage(want, col)
    return col


def deduplicated(got, names):
    """Whether DuckDB's column names `got` are `names` as DuckDB dedupes them: its names
    are case-insensitive, so a name equal but for case to an earlier one gets `_1`."""
    if len(got) != len(names):
        return False
    seen = set()
    for g, n in zip(got, names):
        if g != n and not (n.lower() in seen and g.startswith(n + "_") and g[len(n) + 1 :].isdigit()):
            return False
        seen.add(n.lower())
    return True


def as_pyarrow_reads(got, ref, consumer):
    """The consumer's table `got` with the columns and types of `ref` (what pyarrow reads
    from the same file), each column cast back without loss; a Skip when the consumer
    lacks a type (see `lacks`); raises Bad when its columns or rows differ."""
    names = ref.column_names
    if got.column_names != names and not (consumer == "duckdb" and deduplicated(got.column_names, names)):
        raise Bad("%s reads columns %s, pyarrow %s" % (consumer, got.column_names, names))
    got = got.rename_columns(names)
    if got.num_rows != ref.num_rows:
        raise Bad("%s reads %d rows, pyarrow %d" % (consumer, got.num_rows, ref.num_rows))
    cols = []
    for name, field in zip(names, ref.schema):
        col = got.column(name).combine_chunks()
        try:
            cols.append(cast_back(col, field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            why = lacks(consumer, field.type)
            if why:
                return Skip("%s (reads %s as %s)" % (why, name, col.type))
            raise Bad("%s reads column %r as %s, which is not %s: %s" % (consumer, name, col.type, field.type, e))
    return pa.Table.from_arrays(cols, schema=ref.schema)


def consumer_reads(mid, ext, consumer):
    """What `consumer` reads from `mid` as pyarrow would (see as_pyarrow_reads); a Skip
    when it lacks a type."""
    ref = pq.read_table(str(mid)) if ext == "parquet" else pa.ipc.open_file(str(mid)).read_all()
    if ref.num_columns == 0 and consumer == "duckdb":
        return Skip("DuckDB has no table of no columns")
    try:
        got = CONSUMERS[consumer](mid, ext)
    except Exception as e:
        why = next((w for w in (lacks(consumer, f.type) for f in ref.schema) if w), None)
        if why:
            return Skip("%s (%s: %s)" % (why, type(e).__name__, " ".join(str(e).split())[:160]))
        raise
    return as_pyarrow_reads(got, ref, consumer)


def check_read(npy, path, mid, ext, consumer, refused):
    """`path` converted by npy to `mid`, as `consumer` reads it: NumPy's values (see
    section 1); `refused` is npy's error when it did not convert it. Rows holding a time
    the consumer cannot hold are left out (the array without them converted again), and
    the case says how many."""
    if refused:
        raise Bad(refused)
    arr = np.load(path, allow_pickle=False, max_header_size=ac.MAX_HEADER)
    note = None
    bad, why = rows_out_of_range(consumer, arr, ext)
    if bad.any():
        if arr.ndim == 0 or bad.all():
            return Skip(why)
        arr, note = arr[~bad], "%d of %d rows left out: %s" % (bad.sum(), len(bad), why)
        trimmed, mid = mid.with_name("trimmed.npy"), mid.with_name("trimmed." + ext)
        np.save(trimmed, arr)
        ac.convert(npy, trimmed, mid, "--residue")
    table = consumer_reads(mid, ext, consumer)
    if isinstance(table, Skip):
        return table
    ac.check_table(table, arr, ext)
    return note


def check_archive_read(npy, path, mid, ext, consumer, refused):
    """An archive converted by npy to `mid` (a column per member), as `consumer` reads
    it: each member's NumPy values, as arrow_check.py's check_archive wants them."""
    if refused:
        raise Bad(refused)
    with np.load(path, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    for arr in arrays.values():
        bad, why = rows_out_of_range(consumer, arr, ext)
        if bad.any():
            return Skip(why)
    table = consumer_reads(mid, ext, consumer)
    if isinstance(table, Skip):
        return table
    names = [n for n in table.column_names if not n.startswith(ac.RESIDUE)]
    if names != list(arrays):
        raise Bad("%s: columns %s, NumPy's members %s" % (ext, names, list(arrays)))
    for name, arr in arrays.items():
        member = ac.member_table(table.column(name).combine_chunks(), arr)
        ac.check_table(member, arr, "%s member %r" % (ext, name))
    return None


def ragged(path):
    """Whether an archive's members differ in their first dim (npy refuses it as a table)."""
    with np.load(path, allow_pickle=False) as npz:
        return len({a.shape[0] if a.ndim else 1 for a in (npz[n] for n in npz.files)}) > 1


def consumers_read(report, npy, work, roots):
    """Section 1 for every non-object .npy and .npz under `roots` (but archives whose
    members differ in length, which have no table form); returns how many there were."""
    found = 0
    for root in roots:
        files = [(p, check_read) for p in ac.npy_files(root)]
        files += [(p, check_archive_read) for p in ac.npz_files(root) if not ragged(p)]
        for path, check in files:
            found += 1
            rel = "%s/%s" % (Path(root).name, path.relative_to(root))
            for ext in ("parquet", "arrow"):
                mid, refused = work / ("x." + ext), None
                mid.unlink(missing_ok=True)
                try:
                    ac.convert(npy, path, mid, "--residue")
                except ac.Bad as e:
                    refused = str(e)
                for consumer in CONSUMERS:
                    report.case("read %s %s %s" % (rel, ext, consumer), check, npy, path, mid, ext, consumer, refused)
    return found


# --- 2. we read the consumers' files -----------------------------------------------


ROWS = 6


def base_table():
    """Plain columns of every numeric kind, text and bytes, no nulls."""
    return pa.table(
        {
            "i8": pa.array([0, 1, -2, 3, 1 << 40, -(1 << 62)], pa.int64()),
            "i4": pa.array([5, -6, 7, 8, 9, 2**31 - 1], pa.int32()),
            "u2": pa.array([0, 1, 2, 3, 65535, 7], pa.uint16()),
            "f8": pa.array([0.5, -1.25, float("inf"), 1e300, -0.0, 3.0], pa.float64()),
            "f4": pa.array([1.5, 2.5, -3.5, 0.0, 1e-3, 7.0], pa.float32()),
            "b": pa.array([True, False, True, True, False, False]),
            "s": pa.array(["a", "bé", "", "ccc", "日本", "z"]),
            "bin": pa.array([b"x", b"\x01\x02", b"", b"abc", b"\xff", b"q"]),
        }
    )


def text_table():
    """Text and bytes of every Arrow flavour."""
    words = ["a", "bé", "", "ccc", "日本", "z"]
    raw = [w.encode() + b"!" for w in words]
    return pa.table(
        {
            "utf8": pa.array(words, pa.string()),
            "large": pa.array(words, pa.large_string()),
            "view": pa.array(words, pa.string_view()),
            "binary": pa.array(raw, pa.binary()),
            "large_binary": pa.array(raw, pa.large_binary()),
            "binary_view": pa.array(raw, pa.binary_view()),
        }
    )


def list_table():
    """Lists of one length in every row, fixed and not."""
    rows = [[float(r * 8 + k) for k in range(8)] for r in range(ROWS)]
    ints = [[r, -r, r * r] for r in range(ROWS)]
    return pa.table(
        {
            "fixed": pa.array(rows, pa.list_(pa.float32(), 8)),
            "list": pa.array(ints, pa.list_(pa.int32())),
            "large_list": pa.array(ints, pa.large_list(pa.int64())),
        }
    )


def time_table():
    """Dates, times of day, timestamps (with and without a time zone), durations and
    decimals."""
    day = dt.date(2024, 2, 29)
    days = [day + dt.timedelta(days=k * 40 - 100) for k in range(ROWS)]
    times = [dt.time(k * 3, k * 7, k * 5, k * 12345) for k in range(ROWS)]
    start = dt.datetime(2024, 3, 31, 0, 30, tzinfo=dt.timezone.utc)
    stamps = [start + dt.timedelta(hours=k * 7, microseconds=k) for k in range(ROWS)]
    millis = [t.replace(microsecond=t.microsecond // 1000 * 1000) for t in times]
    spans = [dt.timedelta(seconds=k * 1000, microseconds=k) for k in range(ROWS)]
    decimals = [decimal.Decimal(v) for v in ("0.000", "1.250", "-3.333", "12345.678", "0.001", "-0.100")]
    return pa.table(
        {
            "date32": pa.array(days, pa.date32()),
            "date64": pa.array(days, pa.date64()),
            "time32_s": pa.array([t.replace(microsecond=0) for t in times], pa.time32("s")),
            "time32_ms": pa.array(millis, pa.time32("ms")),
            "time64_us": pa.array(times, pa.time64("us")),
            "time64_ns": pa.array(times, pa.time64("ns")),
            "ts_paris_ms": pa.array(stamps, pa.timestamp("ms", tz="Europe/Paris")),
            "ts_utc_us": pa.array(stamps, pa.timestamp("us", tz="UTC")),
            "ts_ns": pa.array([s.replace(tzinfo=None) for s in stamps], pa.timestamp("ns")),
            "duration_us": pa.array(spans, pa.duration("us")),
            "decimal": pa.array(decimals, pa.decimal128(10, 3)),
        }
    )


def null_table(kind):
    """One column with nulls: floats, dates and timestamps have NaN/NaT, the rest not."""
    cols = {
        "float": pa.array([1.0, None, 3.0, None, 5.0, 6.0], pa.float64()),
        "date": pa.array([dt.date(2020, 1, k + 1) if k % 2 else None for k in range(ROWS)], pa.date32()),
        "timestamp": pa.array([k * 1000 if k % 3 else None for k in range(ROWS)], pa.timestamp("us", tz="UTC")),
        "decimal": pa.array([decimal.Decimal("1.5") if k % 2 else None for k in range(ROWS)], pa.decimal128(5, 2)),
        "int": pa.array([1, None, 3, 4, 5, 6], pa.int64()),
        "string": pa.array(["a", "b", None, "d", "e", "f"]),
    }
    return pa.table({"id": pa.array(range(ROWS), pa.int64()), kind: cols[kind]})


def dictionary_table():
    """Dictionary-encoded text and integers."""
    labels = pa.array(["red", "green", "red", "blue", "green", "red"])
    codes = pa.array([10, 20, 10, 30, 20, 10], pa.int16())
    return pa.table({"label": labels.dictionary_encode(), "code": codes.dictionary_encode()})


def write_parquet(table, **kw):
    return lambda path: pq.write_table(table, str(path), **kw)


def write_feather(table, **kw):
    return lambda path: feather.write_feather(table, str(path), **kw)


def write_ipc_file(table):
    """pyarrow's IPC file writer, its defaults (no compression)."""

    def write(path):
        with pa.ipc.new_file(str(path), table.schema) as w:
            w.write_table(table)

    return write


def pandas_frame():
    """pandas 3's defaults: str columns, a categorical, a zoned datetime, NaN."""
    return pd.DataFrame(
        {
            "i": np.arange(ROWS, dtype=np.int64) * 3,
            "f": [0.5, np.nan, 2.5, 3.5, -1.0, 1e10],
            "s": ["a", "bé", "", "ccc", "日本", "z"],
            "cat": pd.Categorical(["x", "y", "x", "z", "y", "x"]),
            "when": pd.date_range("2024-03-30 22:00", periods=ROWS, freq="7h", tz="Europe/Berlin"),
            "flag": [True, False, True, False, True, True],
        }
    )


def polars_frame():
    """polars' own types: categoricals, enums, arrays, times, zoned datetimes, decimals."""
    decimals = ("1.25", "-2.50", "0.00", "99.99", "0.01", "-0.01")
    rows = [[float(r * 8 + k) for k in range(8)] for r in range(ROWS)]
    stamps = [dt.datetime(2024, 3, 31, k * 3) for k in range(ROWS)]
    return pl.DataFrame(
        {
            "i": pl.Series([1, 2, 3, 4, 5, 6], dtype=pl.Int64),
            "f": pl.Series([0.5, None, 2.5, 3.5, -1.0, 1e10], dtype=pl.Float64),
            "s": ["a", "bé", "", "ccc", "日本", "z"],
            "cat": pl.Series(["x", "y", "x", "z", "y", "x"], dtype=pl.Categorical),
            "enum": pl.Series(["lo", "hi", "lo", "lo", "hi", "hi"], dtype=pl.Enum(["lo", "hi"])),
            "arr": pl.Series(rows, dtype=pl.Array(pl.Float32, 8)),
            "date": pl.Series([dt.date(2024, 1, 1) + dt.timedelta(days=k * 100) for k in range(ROWS)], dtype=pl.Date),
            "time": pl.Series([dt.time(k, k * 2, k * 3, k * 7) for k in range(ROWS)], dtype=pl.Time),
            "ts": pl.Series(stamps, dtype=pl.Datetime("us", "Asia/Tokyo")),
            "dur": pl.Series([dt.timedelta(milliseconds=k * 1500) for k in range(ROWS)], dtype=pl.Duration("ms")),
            "dec": pl.Series([decimal.Decimal(v) for v in decimals], dtype=pl.Decimal(6, 2)),
        }
    )


def polars_list_frame():
    """A polars List column whose rows all have three items."""
    return pl.DataFrame({"list": pl.Series([[k, k + 1, k + 2] for k in range(ROWS)], dtype=pl.List(pl.Int32))})


DUCKDB_SELECT = """
SELECT i::BIGINT AS i, (i * 0.5)::DOUBLE AS f, ('w' || i)::VARCHAR AS s,
       [i::FLOAT, 1, 2, 3, 4, 5, 6, 7]::FLOAT[8] AS arr,
       (DATE '2024-02-29' + i::INTEGER) AS d, (TIME '01:02:03.5' + INTERVAL (i) SECOND) AS t,
       (TIMESTAMPTZ '2024-03-31 00:30:00+00' + INTERVAL (i) HOUR) AS ts,
       (i * 1.125)::DECIMAL(10, 3) AS dec, (i % 3)::UTINYINT AS small,
       CASE WHEN i % 2 = 0 THEN NULL ELSE i / 2 END AS maybe, [i, i + 1]::INTEGER[] AS list
FROM range({rows}) r(i)
"""


def duckdb_copy(select, options=""):
    """DuckDB's `COPY (select) TO path (FORMAT parquet ...)`."""

    def write(path):
        con = duckdb.connect()
        try:
            con.execute("SET TimeZone = 'UTC'")
            con.execute("COPY (%s) TO '%s' (FORMAT parquet%s)" % (select, path, options))
        finally:
            con.close()

    return write


@functools.cache
def foreign_cases():
    """(writer, case, file extension, a function writing the file)."""
    base = base_table()
    cases = [("pyarrow", "default", "parquet", write_parquet(base))]
    for codec in ("snappy", "zstd", "lz4", "brotli", "gzip", "none"):
        cases.append(("pyarrow", "compression %s" % codec, "parquet", write_parquet(base, compression=codec)))
    cases.append(("pyarrow", "row groups of 2", "parquet", write_parquet(base, row_group_size=2)))
    cases.append(("pyarrow", "feather default (lz4)", "feather", write_feather(base)))
    cases.append(("pyarrow", "feather zstd", "feather", write_feather(base, compression="zstd")))
    cases.append(("pyarrow", "feather uncompressed", "feather", write_feather(base, compression="uncompressed")))
    cases.append(("pyarrow", "ipc file", "arrow", write_ipc_file(base)))
    # A case per column, so that one type refused hides no other (Feather uncompressed:
    # the compressions have their cases above).
    for table in (text_table(), list_table(), time_table(), dictionary_table()):
        for name in table.column_names:
            one = table.select([name])
            cases.append(("pyarrow", name, "parquet", write_parquet(one)))
            cases.append(("pyarrow", name, "feather", write_feather(one, compression="uncompressed")))
    for kind in ("float", "date", "timestamp", "decimal", "int", "string"):
        cases.append(("pyarrow", "nulls in %s" % kind, "parquet", write_parquet(null_table(kind))))
        plain = write_feather(null_table(kind), compression="uncompressed")
        cases.append(("pyarrow", "nulls in %s" % kind, "feather", plain))
    frame = pandas_frame()
    cases.append(("pandas", "default", "parquet", lambda p: frame.to_parquet(p)))
    cases.append(("pandas", "default", "feather", lambda p: frame.to_feather(p)))
    ints = pd.DataFrame({"count_or_na": pd.array([1, None, 3, 4, 5, 6], dtype="Int64")})
    cases.append(("pandas", "nulls in Int64", "parquet", lambda p: ints.to_parquet(p)))
    for name in frame.columns:
        one = frame[[name]]
        cases.append(("pandas", name, "parquet", lambda p, one=one: one.to_parquet(p)))
        cases.append(("pandas", name, "feather", lambda p, one=one: one.to_feather(p, compression="uncompressed")))
    pf, plist = polars_frame(), polars_list_frame()
    for name in pf.columns:
        one = pf.select(name)
        cases.append(("polars", name, "parquet", lambda p, one=one: one.write_parquet(p)))
        cases.append(("polars", name, "arrow", lambda p, one=one: one.write_ipc(p)))
    cases.append(("polars", "default", "parquet", lambda p: pf.write_parquet(p)))
    cases.append(("polars", "default", "arrow", lambda p: pf.write_ipc(p)))
    cases.append(("polars", "ipc lz4", "arrow", lambda p: pf.write_ipc(p, compression="lz4")))
    cases.append(("polars", "ipc zstd", "arrow", lambda p: pf.write_ipc(p, compression="zstd")))
    cases.append(("polars", "row groups of 2", "parquet", lambda p: pf.write_parquet(p, row_group_size=2)))
    cases.append(("polars", "list", "parquet", lambda p: plist.write_parquet(p)))
    cases.append(("polars", "list", "arrow", lambda p: plist.write_ipc(p)))
    cases.append(("duckdb", "default", "parquet", duckdb_copy(DUCKDB_SELECT.format(rows=ROWS))))
    groups = duckdb_copy(DUCKDB_SELECT.format(rows=5000), ", COMPRESSION zstd, ROW_GROUP_SIZE 2048")
    cases.append(("duckdb", "zstd, row groups of 2048", "parquet", groups))
    return cases


def read_source(path):
    """The table pyarrow reads from a file: the source of truth of section 2."""
    if path.suffix == ".parquet":
        return pq.read_table(str(path))
    return feather.read_table(str(path))


def nullable(t):
    """Whether a null of Arrow type `t` has a NumPy form (NaN or NaT)."""
    if pa.types.is_dictionary(t):
        return nullable(t.value_type)
    return (
        pa.types.is_floating(t)
        or pa.types.is_decimal(t)
        or pa.types.is_temporal(t)
    )


def null_refused(table):
    """The first column whose nulls have no NumPy form (the null rule), or None."""
    for name, col in zip(table.column_names, table.columns):
        if col.null_count and not nullable(col.type):
            return name
    return None


def as_units(values, unit, kind):
    """Python ints (None for null) as datetime64/timedelta64 of `unit`."""
    ints = np.array([ac.NAT if v is None else v for v in values], dtype=np.int64)
    return ints.view("%s8[%s]" % (kind, unit))


def same_times(got, want):
    if got.dtype.kind != want.dtype.kind:
        return False
    nat = np.isnat(want)
    return bool(np.array_equal(np.isnat(got), nat) and np.array_equal(got[~nat], want[~nat]))


BINARY = (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_binary_view, pa.types.is_fixed_size_binary)


def decoded(col):
    """A dictionary array's values. pyarrow has no `take` over view types (polars writes
    categoricals of string_view), so such a dictionary is cast to the large type first."""
    d = col.dictionary
    if pa.types.is_string_view(d.type):
        d = d.cast(pa.large_string())
    elif pa.types.is_binary_view(d.type):
        d = d.cast(pa.large_binary())
    return pa.DictionaryArray.from_arrays(col.indices, d).dictionary_decode()


def check_values(label, col, got):
    """Arrow array `col` against NumPy array `got` (one element per row, subarray dims
    after), by the rules of section 2; raises Bad."""
    t = col.type
    if pa.types.is_dictionary(t):
        return check_values(label, decoded(col), got)
    n = len(col)
    if got.shape[:1] != (n,):
        raise Bad("%s: %s rows in NumPy, %d in the source" % (label, got.shape[:1], n))
    if pa.types.is_fixed_size_list(t) or pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        lengths = set(len(v) for v in col.to_pylist() if v is not None)
        if col.null_count or len(lengths) > 1:
            raise Bad("%s: the source has null or ragged lists" % label)
        size = lengths.pop() if lengths else 0
        if got.shape[1:2] != (size,):
            raise Bad("%s: NumPy's shape %s, not rows of %d items" % (label, got.shape, size))
        items = pa.array([x for v in col.to_pylist() for x in v], col.type.value_type)
        return check_values(label + " items", items, got.reshape((n * size,) + got.shape[2:]))
    if got.ndim != 1:
        raise Bad("%s: NumPy's shape %s for a column of scalars" % (label, got.shape))
    kind = got.dtype.kind
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t):
        want_dtype = np.dtype(t.to_pandas_dtype())
        if got.dtype.newbyteorder("=") != want_dtype.newbyteorder("="):
            raise Bad("%s: NumPy's dtype %s, the source's %s (%s)" % (label, got.dtype, want_dtype, t))
        want = col.to_numpy(zero_copy_only=False)
        if kind == "f":
            want = want.astype(want_dtype)
            ok = np.array_equal(want, got, equal_nan=True)
        else:
            ok = np.array_equal(want, got)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        ok = kind == "U" and got.tolist() == col.to_pylist()
    elif any(f(t) for f in BINARY):
        ok = kind == "S" and got.tolist() == col.to_pylist()
    elif pa.types.is_decimal(t):
        want = np.array([np.nan if v is None else float(v) for v in col.to_pylist()])
        ok = got.dtype == np.dtype("f8") and np.array_equal(want, got, equal_nan=True)
    elif pa.types.is_date32(t):
        ok = same_times(got, as_units(col.cast(pa.int32()).to_pylist(), "D", "M"))
    elif pa.types.is_date64(t):
        ok = same_times(got, as_units(col.cast(pa.int64()).to_pylist(), "ms", "M"))
    elif pa.types.is_time(t):
        ints = col.cast(pa.int32() if pa.types.is_time32(t) else pa.int64()).to_pylist()
        ok = same_times(got, as_units(ints, t.unit, "m"))
    elif pa.types.is_timestamp(t):
        want = as_units(col.cast(pa.int64()).to_pylist(), t.unit, "M")
        ok = got.dtype == want.dtype and same_times(got, want)
    elif pa.types.is_duration(t):
        want = as_units(col.cast(pa.int64()).to_pylist(), t.unit, "m")
        ok = got.dtype == want.dtype and same_times(got, want)
    else:
        raise Bad("%s: no rule for the source type %s" % (label, t))
    if not ok:
        what = (label, got.dtype, got.tolist()[:4], t, col.to_pylist()[:4])
        raise Bad("%s: NumPy has %s %s, the source (%s) %s" % what)
    return None


def check_table_npy(table, arr, what):
    """NumPy's array `arr` holds pyarrow's `table` (names, order, values)."""
    names = table.column_names
    if arr.dtype.names is None:
        if names != ["values"]:
            raise Bad("%s: a plain %s array, not a record of the columns %s" % (what, arr.dtype, names))
        fields = {"values": arr}
    else:
        if list(arr.dtype.names) != names:
            raise Bad("%s: NumPy's fields %s, the columns %s" % (what, list(arr.dtype.names), names))
        fields = {name: arr[name] for name in names}
    if arr.ndim != 1:
        raise Bad("%s: NumPy's shape %s, not one row per row" % (what, arr.shape))
    for name, col in zip(names, table.columns):
        check_values("column %r" % name, col.combine_chunks(), fields[name])


def check_foreign(npy, work, path, k):
    """A consumer's file, written by case `k` of foreign_cases, converted to .npy: what
    pyarrow reads from it (section 2)."""
    path.unlink(missing_ok=True)
    foreign_cases()[k][3](path)
    table = read_source(path)
    out = work / "out.npy"
    result = npy_convert(npy, path, out)
    refused = null_refused(table)
    if refused is not None:
        if result.returncode == 0:
            raise Bad("column %r has nulls with no NumPy form, but npy convert exited 0" % refused)
        if result.returncode != 1 or refused not in stderr_of(result):
            what = (refused, result.returncode, stderr_of(result))
            raise Bad("column %r has nulls: want exit 1 naming it, got exit %d: %s" % what)
        return None
    if result.returncode != 0:
        raise Bad("npy convert: exit %d: %s" % (result.returncode, stderr_of(result)))
    arr = np.load(out, allow_pickle=False)
    check_table_npy(table, arr, "npy")
    return None


def ideal(table):
    """The record array the rules of section 2 expect for `table`, built with NumPy alone
    (the self-test of those rules: see rules_self_test)."""
    fields, values = [], []
    for name, col in zip(table.column_names, table.columns):
        col = col.combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = decoded(col)
        t = col.type
        if pa.types.is_decimal(t):
            v = np.array([np.nan if x is None else float(x) for x in col.to_pylist()])
        elif pa.types.is_time(t):
            v = as_units(col.cast(pa.int32() if pa.types.is_time32(t) else pa.int64()).to_pylist(), t.unit, "m")
        elif pa.types.is_date64(t):
            v = as_units(col.cast(pa.int64()).to_pylist(), "ms", "M")
        elif any(f(t) for f in (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)):
            v = np.array(col.to_pylist(), dtype="U")
        elif any(f(t) for f in BINARY):
            v = np.array(col.to_pylist(), dtype="S")
        elif pa.types.is_fixed_size_list(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
            v = np.array(col.to_pylist(), dtype=t.value_type.to_pandas_dtype())
        else:
            v = col.to_numpy(zero_copy_only=False)
        fields.append((name, v.dtype, v.shape[1:]))
        values.append(v)
    arr = np.zeros(table.num_rows, fields)
    for (name, _, _), v in zip(fields, values):
        arr[name] = v
    return arr


def rules_self_test():
    """The rules of section 2 accept what they document (`ideal` of each table) and
    refuse a changed value, swapped names and a wrong dtype."""
    tables = [base_table(), text_table(), list_table(), time_table(), dictionary_table()]
    tables += [null_table(kind) for kind in ("float", "date", "timestamp", "decimal")]
    for table in tables:
        check_table_npy(table, ideal(table), "ideal")
    table = time_table()
    wrong = ideal(table)
    wrong["decimal"][1] = 1.0
    swapped = ideal(table)
    swapped.dtype.names = ["date64", "date32"] + list(swapped.dtype.names[2:])
    narrow = ideal(base_table()).astype([("i8", "<i4")] + ideal(base_table()).dtype.descr[1:])
    for arr, source in ((wrong, table), (swapped, table), (narrow, base_table())):
        try:
            check_table_npy(source, arr, "wrong")
        except Bad:
            continue
        raise Bad("the rules accept a wrong array: %s" % arr.dtype)
    return None


def foreign(report, npy, work):
    """Section 2: the rules' self-test, then every case of foreign_cases, written to
    WORK/foreign, converted."""
    report.case("foreign rules self-test", rules_self_test)
    dest = work / "foreign"
    dest.mkdir(exist_ok=True)
    for k, (writer, case, ext, write) in enumerate(foreign_cases()):
        path = dest / ("%02d_%s.%s" % (k, writer, ext))
        report.case("foreign %s %s %s" % (writer, case, ext), check_foreign, npy, work, path, k)


# --- 3. our Parquet, edited with pyarrow --------------------------------------------


def record_source():
    """The record array npy writes to Parquet before pyarrow edits it."""
    dtype = np.dtype([("id", "<i8"), ("x", "<f8"), ("y", "<f8"), ("label", "<U6"), ("t", "<M8[ms]"), ("n", "<i4")])
    rows = 50
    arr = np.zeros(rows, dtype)
    arr["id"] = np.arange(rows) * 10
    arr["x"] = np.arange(rows) * 0.5
    arr["y"] = -np.arange(rows) * 0.25 - 1000
    arr["label"] = ["r%d" % k for k in range(rows)]
    arr["t"] = np.datetime64("2024-01-01T00:00:00", "ms") + np.arange(rows) * 1500
    arr["n"] = np.arange(rows, dtype="<i4") * -3
    return arr


def keep_metadata(edited, original):
    """The edited table with the original schema's metadata (what pyarrow keeps through
    filter, drop, add, select and rename; cast takes the schema it is given)."""
    return edited.replace_schema_metadata(original.schema.metadata)


EDITS = {
    "rows filtered": lambda t: t.filter(pa.compute.greater_equal(t["id"], 100)),
    "column dropped": lambda t: t.drop_columns(["x"]),
    "column added": lambda t: t.append_column("z", pa.array(np.arange(t.num_rows, dtype=np.float32))),
    "columns reordered": lambda t: t.select(["id", "y", "x", "label", "t", "n"]),
    "column renamed": lambda t: t.rename_columns(["id", "x", "y", "name", "t", "n"]),
    "column cast": lambda t: t.cast(t.schema.set(0, pa.field("id", pa.int32())).set(1, pa.field("x", pa.float32()))),
}


def check_edit(npy, work, source, edit):
    """Our Parquet edited by pyarrow converts to exactly what pyarrow holds (section 3)."""
    ours, edited, back = work / "ours.parquet", work / "edited.parquet", work / "edited.npy"
    converted(npy, source, ours)
    original = pq.read_table(str(ours))
    if not any(k.startswith(b"numpy.") for k in original.schema.metadata or {}):
        raise Bad("npy's Parquet has no numpy.* schema metadata: nothing stale to test")
    table = keep_metadata(EDITS[edit](original), original)
    pq.write_table(table, str(edited))
    table = pq.read_table(str(edited))
    if table.schema.metadata != original.schema.metadata:
        raise Bad("pyarrow did not keep the schema's metadata")
    converted(npy, edited, back)
    arr = np.load(back, allow_pickle=False)
    check_table_npy(table.drop_columns([n for n in table.column_names if n.startswith("numpy.")]), arr, "npy")
    return None


def edits(report, npy, work):
    """Section 3: each of EDITS on npy's Parquet of record_source()."""
    source = work / "records.npy"
    np.save(source, record_source())
    for edit in EDITS:
        report.case("edit %s" % edit, check_edit, npy, work, source, edit)


def reason(why):
    """A failure's reason with what differs between cases (quoted names, paths, numbers,
    dtypes) masked, so that failures of one cause group together."""
    why = re.sub(r"\[\(.*?\)\]|\[.*?\]|\(at [^)]*\)", "…", why)
    why = re.sub(r"(?<!\w)'[^']*'", "'…'", why)
    why = re.sub(r"(?<![\w.])-?\d+\b", "N", why)
    return why[:160]


def print_groups(failed):
    """The failures grouped by reason, the largest group first, with an example case."""
    if not failed:
        return
    groups = {}
    for name, why in failed:
        groups.setdefault(reason(why), []).append(name)
    print("failures by reason:")
    for key, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print("  %3d  %s  (e.g. %s)" % (len(names), key, names[0]))


def main(argv):
    warnings.simplefilter("ignore", UserWarning)  # legacy headers are in the corpus
    if len(argv) < 4:
        print(__doc__)
        return 2
    npy, work, roots = Path(argv[1]), Path(argv[2]), argv[3:]
    work.mkdir(parents=True, exist_ok=True)
    report = Report()
    found = consumers_read(report, npy, work, roots)
    foreign(report, npy, work)
    edits(report, npy, work)
    report.close()
    print_groups(report.failed)
    summary = "%d cases (%d skipped), %d failed" % (report.cases, report.skipped, len(report.failed))
    print(summary)
    return 1 if report.failed or found == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
