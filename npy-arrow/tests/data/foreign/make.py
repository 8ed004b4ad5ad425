"""Makes the files of npy-arrow/tests/foreign.rs's `files_other_tools_write_*` test.

Each `<tool>_<how>.<ext>` is a small table written by a tool with its default settings
(except where the name says), and `<tool>_<how>.npy` what `npy convert` must make of it:
the same values, as NumPy holds them, saved by `np.save`. Run with the pinned venv
(numpy 2.4.6, pyarrow 26.0.1, pandas 3.1.1, polars 2.1.0, duckdb 2.0.1):

    python npy-arrow/tests/data/foreign/make.py   # from the workspace root
"""
import datetime
import decimal
import os

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq

os.chdir(os.path.dirname(os.path.abspath(__file__)))

# pyarrow: every foreign type, nulls where the NumPy type has NaN or NaT.
table = pa.table({
    "s": pa.array(["a", "bé", "", "dddd"], pa.large_string()),
    "v": pa.array(["x", "yy", "a string longer than twelve", "w"], pa.string_view()),
    "b": pa.array([b"\x01a", b"bb", b"", b"d"], pa.large_binary()),
    "cat": pa.array(["lo", "hi", "lo", "lo"]).dictionary_encode(),
    "d64": pa.array([0, 86_400_000, None, -1], pa.date64()),
    "t32": pa.array([0, 86_399, None, 5], pa.time32("s")),
    "t64": pa.array([1000, None, 3, 4], pa.time64("ns")),
    "dec": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.10"),
                     decimal.Decimal("12345678901234567.89")], pa.decimal128(20, 2)),
    "l": pa.array([[1.0, 2.0], [3.0, None], [5.0, 6.0], [7.0, 8.0]], pa.list_(pa.float32())),
    "ll": pa.array([[[r * 10 + k * 3 + j for j in range(3)] for k in range(2)] for r in range(4)],
                   pa.large_list(pa.list_(pa.int16()))),
})
expected = np.array(
    [
        ("a", "x", b"\x01a", "lo", np.datetime64(0, "ms"), np.timedelta64(0, "s"), np.timedelta64(1000, "ns"),
         1.25, [1.0, 2.0], [[0, 1, 2], [3, 4, 5]]),
        ("bé", "yy", b"bb", "hi", np.datetime64(86_400_000, "ms"), np.timedelta64(86_399, "s"),
         np.timedelta64("NaT"), np.nan, [3.0, np.nan], [[10, 11, 12], [13, 14, 15]]),
        ("", "a string longer than twelve", b"", "lo", np.datetime64("NaT"), np.timedelta64("NaT"),
         np.timedelta64(3, "ns"), -3.1, [5.0, 6.0], [[20, 21, 22], [23, 24, 25]]),
        ("dddd", "w", b"d", "lo", np.datetime64(-1, "ms"), np.timedelta64(5, "s"), np.timedelta64(4, "ns"),
         12345678901234567.89, [7.0, 8.0], [[30, 31, 32], [33, 34, 35]]),
    ],
    dtype=[("s", "<U4"), ("v", "<U27"), ("b", "S2"), ("cat", "<U2"), ("d64", "<M8[ms]"), ("t32", "<m8[s]"),
           ("t64", "<m8[ns]"), ("dec", "<f8"), ("l", "<f4", (2,)), ("ll", "<i2", (2, 3))],
)
feather.write_feather(table, "pyarrow_default.arrow")  # LZ4_FRAME
feather.write_feather(table, "pyarrow_zstd.arrow", compression="zstd")
np.save("pyarrow_default.npy", expected)
np.save("pyarrow_zstd.npy", expected)
# Parquet has no view types and no Date64 (pyarrow writes it as a date): the rest, Brotli.
# Parquet has no seconds unit for times: time32[s] is stored in ms and read back so.
parquet_table = table.drop_columns(["v", "d64"])
pq.write_table(parquet_table, "pyarrow_brotli.parquet", compression="brotli")
kept = [n for n in expected.dtype.names if n not in ("v", "d64")]
packed = np.dtype([(n, "<m8[ms]" if n == "t32" else expected.dtype[n]) for n in kept])
np.save("pyarrow_brotli.npy", expected[kept].astype(packed))

# pandas 3: str columns (large_string), a categorical, NaN.
df = pd.DataFrame({"x": [1.0, np.nan, 3.5], "name": ["a", "bb", "ccc"], "c": pd.Categorical(["u", "v", "u"]),
                   "i": np.array([1, 2, 3], dtype=np.int64)})
df.to_parquet("pandas_default.parquet")
df.to_feather("pandas_default.arrow")
pandas_expected = np.array([(1.0, "a", "u", 1), (np.nan, "bb", "v", 2), (3.5, "ccc", "u", 3)],
                           dtype=[("x", "<f8"), ("name", "<U3"), ("c", "<U1"), ("i", "<i8")])
np.save("pandas_default.npy", pandas_expected)
np.save("pandas_default_arrow.npy", pandas_expected)

# polars 2.1: Utf8View strings, a categorical, a list column of one length.
pf = pl.DataFrame({"x": [1.0, None, 3.0], "name": ["a", "bb", "ccc"],
                   "c": pl.Series(["u", "v", "u"], dtype=pl.Categorical), "arr": [[1, 2], [3, 4], [5, 6]]})
pf.write_parquet("polars_default.parquet")
pf.write_ipc("polars_default.arrow")
polars_expected = np.array([(1.0, "a", "u", [1, 2]), (np.nan, "bb", "v", [3, 4]), (3.0, "ccc", "u", [5, 6])],
                           dtype=[("x", "<f8"), ("name", "<U3"), ("c", "<U1"), ("arr", "<i8", (2,))])
np.save("polars_default.npy", polars_expected)
np.save("polars_default_arrow.npy", polars_expected)

# DuckDB 2.0: FLOAT[8] (a Parquet LIST, no Arrow schema), DECIMAL, VARCHAR.
con = duckdb.connect()
con.execute("CREATE TABLE t AS SELECT i::INTEGER AS i, [i * 8 + k FOR k IN range(8)]::FLOAT[8] AS emb, "
            "'n' || i AS name, (i / 4)::DECIMAL(10, 3) AS d FROM range(5) r(i)")
con.execute("COPY t TO 'duckdb_default.parquet'")
duck_expected = np.array([(i, [i * 8 + k for k in range(8)], f"n{i}", round(i / 4, 3)) for i in range(5)],
                         dtype=[("i", "<i4"), ("emb", "<f4", (8,)), ("name", "<U2"), ("d", "<f8")])
np.save("duckdb_default.npy", duck_expected)
