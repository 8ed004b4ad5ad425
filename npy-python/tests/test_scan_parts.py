"""Parts of columns and filters judged in the scan, through every consumer.

``npy.scan(src, columns=["samples[10]", "receiver.x"])`` decodes only those bytes of each
row, and ``npy.polars.scan_npy(...).filter(...)`` over archives judges the members the
filter reads in the archive's scan (npy-store's table engine, as SQL does). Each answer
is compared with NumPy's own indexing of ``np.load``'s array.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import npy
import npy.polars

N = 5000
TRACE = np.dtype([("t0", "<f8"), ("receiver", [("x", "<f8"), ("y", "<f8")]), ("samples", "<f4", (16,))])
PARTS = ["samples[10]", "receiver.x", "samples[-1]", "samples[2:5]"]


def traces() -> np.ndarray[Any, np.dtype[np.void]]:
    rng = np.random.default_rng(7)
    a = np.zeros(N, TRACE)
    a["t0"] = np.arange(N)
    a["receiver"]["x"] = rng.normal(size=N)
    a["receiver"]["y"] = rng.normal(size=N)
    a["samples"] = rng.normal(size=(N, 16)).astype("<f4")
    return a


def expected(a: np.ndarray[Any, Any]) -> dict[str, np.ndarray[Any, Any]]:
    """NumPy's answer for each of ``PARTS``, by the names the scan gives them."""
    return {
        "samples[10]": a["samples"][:, 10],
        "receiver.x": a["receiver"]["x"],
        "samples[15]": a["samples"][:, -1],
        "samples[2:5]": a["samples"][:, 2:5],
    }


@pytest.fixture
def records(tmp_path: Path) -> tuple[Path, np.ndarray[Any, Any]]:
    a = traces()
    path = tmp_path / "traces.npy"
    np.save(path, a)
    return path, a


def test_parts_are_numpys_values_in_every_consumer(records: tuple[Path, np.ndarray[Any, Any]]) -> None:
    path, a = records
    t = npy.scan(path, columns=PARTS)
    want = expected(a)
    assert t.column_names == list(want)
    table = pa.table(t)
    for name, values in want.items():
        got = np.array(table[name].to_pylist(), dtype=values.dtype)
        np.testing.assert_array_equal(got, values, err_msg=f"pyarrow {name}")
    frame = pl.DataFrame(t)
    np.testing.assert_array_equal(frame["samples[10]"].to_numpy(), want["samples[10]"])
    np.testing.assert_array_equal(np.stack(frame["samples[2:5]"].to_numpy()), want["samples[2:5]"])
    got = duckdb.sql('SELECT "samples[10]", "receiver.x" FROM t').fetchnumpy()
    np.testing.assert_array_equal(got["samples[10]"], want["samples[10]"])
    np.testing.assert_array_equal(got["receiver.x"], want["receiver.x"])
    pandas = pa.table(t).to_pandas()
    assert isinstance(pandas, pd.DataFrame)
    np.testing.assert_array_equal(pandas["receiver.x"].to_numpy(), want["receiver.x"])


def test_parts_of_a_window_across_files(tmp_path: Path) -> None:
    a = traces()
    for k in range(3):
        np.save(tmp_path / f"run{k}.npy", a[k * 1000 : (k + 1) * 1000])
    t = npy.scan(tmp_path, columns=["samples[3]", "t0"], rows=(990, 2010), batch_rows=64)
    got = pa.table(t)
    np.testing.assert_array_equal(got["samples[3]"].to_numpy(), a["samples"][990:2010, 3])
    np.testing.assert_array_equal(got["t0"].to_numpy(), a["t0"][990:2010])


def test_polars_filters_on_a_part(records: tuple[Path, np.ndarray[Any, Any]]) -> None:
    path, a = records
    lf = npy.polars.scan_npy(path, columns=["t0", "samples[3]", "receiver.x"])
    got = lf.filter(pl.col("samples[3]") > 0.5).select("t0", "receiver.x").collect()
    kept = a["samples"][:, 3] > 0.5
    np.testing.assert_array_equal(got["t0"].to_numpy(), a["t0"][kept])
    np.testing.assert_array_equal(got["receiver.x"].to_numpy(), a["receiver"]["x"][kept])


@pytest.fixture(params=["stored", "deflated"])
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, dict[str, np.ndarray[Any, Any]]]:
    rng = np.random.default_rng(11)
    members = {
        "gain": np.arange(N, dtype="<i8"),
        "trace": rng.normal(size=(N, 4)),
        "meta": np.rec.fromarrays([np.arange(N, dtype="<f8")], names="t0").view(np.ndarray),
    }
    path = tmp_path / "run.npz"
    save = np.savez if request.param == "stored" else np.savez_compressed
    save(path, **members)  # type: ignore[operator]
    return path, members


def test_polars_filters_archives_in_the_scan(archive: tuple[Path, dict[str, np.ndarray[Any, Any]]]) -> None:
    path, m = archive
    # A window not at the archive's start, a filter on a plain member, and a part of the
    # 2-d member: the rows NumPy's indexing keeps, in order.
    lf = npy.polars.scan_npy(path, rows=(10, N - 3), columns=["gain", "trace[2]", "meta"])
    got = lf.filter(pl.col("gain") % 5 == 0).select("trace[2]", "meta").collect()
    rows = np.arange(10, N - 3)
    rows = rows[m["gain"][rows] % 5 == 0]
    np.testing.assert_array_equal(got["trace[2]"].to_numpy(), m["trace"][rows, 2])
    np.testing.assert_array_equal(got["meta"].struct.field("t0").to_numpy(), m["meta"]["t0"][rows])


def test_polars_filters_archives_on_a_record_member(archive: tuple[Path, dict[str, np.ndarray[Any, Any]]]) -> None:
    path, m = archive
    got = npy.polars.scan_npy(path).filter(pl.col("meta").struct.field("t0") >= N - 10).select("gain").collect()
    np.testing.assert_array_equal(got["gain"].to_numpy(), m["gain"][m["meta"]["t0"] >= N - 10])


def test_archive_parts_through_duckdb(archive: tuple[Path, dict[str, np.ndarray[Any, Any]]]) -> None:
    path, m = archive
    t = npy.scan(path, columns=["trace[-1]", "trace[1:3]", "gain"])
    got = duckdb.sql('SELECT "trace[3]" AS last, gain FROM t WHERE gain % 7 = 0').fetchnumpy()
    kept = m["gain"] % 7 == 0
    np.testing.assert_array_equal(got["last"], m["trace"][kept, -1])
    np.testing.assert_array_equal(np.stack(pa.table(t)["trace[1:3]"].to_pylist()), m["trace"][:, 1:3])


def test_part_names_that_name_nothing_raise(records: tuple[Path, np.ndarray[Any, Any]]) -> None:
    path, _ = records
    with pytest.raises(KeyError, match=r'no column "nope" in .*traces.npy'):
        npy.scan(path, columns=["nope"])
    with pytest.raises(ValueError, match=r"samples has 16 items, so no item \[16\]"):
        npy.scan(path, columns=["samples[16]"])
    with pytest.raises(ValueError, match=r"receiver has no field \"z\""):
        npy.scan(path, columns=["receiver.z"])
    with pytest.raises(ValueError, match=r"an empty run"):
        npy.scan(path, columns=["samples[4:4]"])
