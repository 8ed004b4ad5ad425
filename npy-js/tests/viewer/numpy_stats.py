#!/usr/bin/env python3
"""NumPy's side of the viewer's statistics test (tests/viewer_stats.test.js).

Usage:
    numpy_stats.py make DIR           in DIR: f8.npy, 3,000,017 normal <f8 values with NaNs,
                                      +inf, -inf and zeros (24 MB: several pieces of the
                                      page's reads); i8.npy, 1,000,003 <i8 values over the
                                      whole int64 range (beyond 2**53: exact sums needed),
                                      the extremes included; dt.npy, <M8[s] with NaTs;
                                      edges.npy, the edges of 97 bins over (-1.3, 2.9)
                                      and their neighbours a ulp away; volume.npy,
                                      (16, 64, 48) <f4 in Fortran order with NaNs;
                                      records.npy, 100,000 records of <U8, <i8 about
                                      2**53, <f4 with NaNs, <M8[s] and booleans
    numpy_stats.py stats FILE PATH BINS [INDEX]
                                      JSON: the statistics of FILE's column PATH ("" for a
                                      plain array; dotted for a record's leaf; a subarray
                                      field's values all together; datetimes as their
                                      int64 counts, NaT apart): count, nans, zeros, posInf,
                                      negInf, min, max (np.nanmin/np.nanmax; integers as
                                      decimal strings; NaN and infinities as "nan", "inf", "-inf"), mean and std (np.nanmean/np.nanstd
                                      in float64, ddof=0), finiteMean/finiteStd (over the
                                      finite values), scale (their mean absolute value),
                                      and counts: np.histogram(finite, bins=BINS,
                                      range=(min, max) of the finite values as floats);
                                      with INDEX (text, as between a[ and ]), of the
                                      array NumPy's a[INDEX] gives
    numpy_stats.py filter FILE CASE K JSON: the rows of FILE that NumPy's boolean mask CASE
                                      selects: their count, the first K row numbers and
                                      those rows printed as numpy_view.py prints them
"""

import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_view import leaves  # noqa: E402


def make(out):
    rng = np.random.default_rng(80)
    a = rng.normal(3.0, 2.0, 3_000_017)
    a[::997] = np.nan
    a[::1009] = 0.0
    a[[5, 1_500_000]] = np.inf
    a[[7, 2_999_999]] = -np.inf
    np.save(f"{out}/f8.npy", a)
    b = rng.integers(-(2**63), 2**63 - 1, 1_000_003, dtype=np.int64, endpoint=True)
    b[[3, 500_000]] = [np.iinfo(np.int64).min + 1, np.iinfo(np.int64).max]
    b[::10_007] = 0
    np.save(f"{out}/i8.npy", b)
    d = (rng.integers(0, 2_000_000_000, 200_003)).astype("<M8[s]")
    d[::1001] = np.datetime64("NaT")
    np.save(f"{out}/dt.npy", d)
    # The edges np.histogram gives 97 bins over (-1.3, 2.9), and their neighbours a ulp
    # either way: values where the bin a position gives and the bin the edges give differ.
    e = np.linspace(-1.3, 2.9, 98)
    x = np.concatenate([e, np.nextafter(e, -np.inf)[1:], np.nextafter(e, np.inf)[:-1]])
    np.save(f"{out}/edges.npy", rng.permutation(np.tile(x, 1000)))
    # A volume in Fortran order (a slice of it is read by strided ranges), NaNs and zeros.
    v = rng.normal(0.0, 1.0, (16, 64, 48)).astype("<f4")
    v[:, ::7, ::5] = np.nan
    v[3, 10:20, :] = 0.0
    np.save(f"{out}/volume.npy", np.asfortranarray(v))
    # Records with text, 64-bit integers about 2**53 (exact comparisons needed), NaNs and
    # datetimes: the filter's other kinds of fields.
    n = 100_000
    r = np.zeros(n, dtype=[("name", "<U8"), ("n", "<i8"), ("x", "<f4"), ("when", "<M8[s]"), ("ok", "?")])
    r["name"] = rng.choice(np.array(["a", "b", "ccc", "ünï"]), n)
    r["n"] = 2**53 + rng.integers(-3, 4, n)
    r["x"] = rng.normal(0.0, 1.0, n)
    r["x"][::17] = np.nan
    r["when"] = rng.integers(0, 10**9, n).astype("<M8[s]")
    r["ok"] = rng.random(n) < 0.3
    np.save(f"{out}/records.npy", r)
    # A 2-d record array: its rows hold several records each, and are not filtered.
    np.save(f"{out}/grid.npy", r[:12].reshape(3, 4))


def column(a, path):
    v = a
    for name in [p for p in path.split(".") if p]:
        v = v[name]
    return np.asarray(v).ravel()


def stats(file, path, bins, index=None):
    a = np.load(file, mmap_mode="r")
    if index is not None:
        # NumPy's own reading of the index text: Python's subscript of the array.
        a = eval(f"a[{index}]", {"a": a})  # noqa: S307 (the test's own text)
    x = column(a, path)
    nans = 0
    if x.dtype.kind == "b":
        # Booleans as 0 and 1, as np.histogram converts them (to uint8).
        x = x.astype(np.uint8)
    if x.dtype.kind in "Mm":
        nat = np.isnat(x)
        nans = int(nat.sum())
        x = x[~nat].view("<i8")
    out = {"count": int(x.size) + nans}
    # The histogram's input in the column's own dtype (a float32 column's bins are float32).
    binned = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    if x.dtype.kind == "f":
        # In float64 throughout: np.nanstd of float32 values keeps their deviations in
        # float32 (its out=arr), whatever its dtype.
        x = x.astype(np.float64)
        isnan = np.isnan(x)
        finite = x[np.isfinite(x)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.update(
                nans=int(isnan.sum()),
                posInf=int(np.isposinf(x).sum()),
                negInf=int(np.isneginf(x).sum()),
                min=float(np.nanmin(x)),
                max=float(np.nanmax(x)),
                mean=float(np.nanmean(x, dtype=np.float64)),
                std=float(np.nanstd(x, dtype=np.float64)),
            )
    else:
        finite = x
        out.update(nans=nans, posInf=0, negInf=0, min=str(int(x.min())), max=str(int(x.max())),
                   mean=float(np.mean(x, dtype=np.float64)), std=float(np.std(x, dtype=np.float64)))
    out["zeros"] = int(np.count_nonzero(x == 0))
    out["finiteMean"] = float(np.mean(finite.astype(np.float64)))
    out["finiteStd"] = float(np.std(finite.astype(np.float64)))
    out["scale"] = float(np.mean(np.abs(finite.astype(np.float64))))
    lo, hi = float(finite.min()), float(finite.max())
    counts, edges = np.histogram(binned, bins=bins, range=(lo, hi))
    out["counts"] = counts.tolist()
    out["edges"] = edges.astype(np.float64).tolist()
    # JSON has no NaN or infinity: those as the page prints them.
    text = {float("inf"): "inf", float("-inf"): "-inf"}
    print(json.dumps({k: ("nan" if v != v else text.get(v, v)) if isinstance(v, float) else v for k, v in out.items()}, allow_nan=False))


CASES = {
    # The example.
    "flags-t0": lambda a: (a["flags"] == 1) & (a["t0"] > 0.5),
    # A subarray value, a nested field, or and not.
    "samples": lambda a: ((a["samples"][:, 3] > 500) & (a["samples"][:, 3] <= 502.5)) | ~(a["receiver"]["x"] < 518_737.5),
    # Text, exact 64-bit comparisons beyond 2**53, NaN (equal to nothing, itself neither).
    "records": lambda a: ((a["name"] == "ünï") & (a["n"] > 2**53 + 1)) | ((a["name"] >= "ccc") & (a["x"] != a["x"])),
}


def filter_rows(file, case, k):
    a = np.load(file, mmap_mode="r")
    (rows,) = np.nonzero(CASES[case](a))
    paths = list(leaves(a.dtype))
    printed = []
    for r in rows[:k]:
        cells = [str(r)]
        for path in paths:
            v = a[r]
            for name in path:
                v = v[name]
            cells.append(str(v))
        printed.append(cells)
    print(json.dumps({"count": int(rows.size), "rows": rows[:k].tolist(), "printed": printed}))


def main():
    what = sys.argv[1]
    if what == "make":
        make(sys.argv[2])
    elif what == "stats":
        stats(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    elif what == "filter":
        filter_rows(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit(f"unknown command {what}")


if __name__ == "__main__":
    main()
