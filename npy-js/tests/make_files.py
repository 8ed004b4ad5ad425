#!/usr/bin/env python3
"""Files NumPy writes for the JavaScript package's tests.

Usage: python3 make_files.py open DIR

`open`: records.npy (100,000 records: an id, a nested position, 16 float32 samples),
fortran.npy (a 40 x 30 float64 matrix in Fortran order), archive.npz (the records as a
stored member `stored` and a deflated member `deflated`, as np.savez and
np.savez_compressed write them).
"""

import sys
import zipfile
from pathlib import Path

import numpy as np


def records(n):
    dtype = np.dtype([("id", "<i8"), ("pos", [("x", "<f8"), ("y", ">f4")]), ("samples", "<f4", (16,))])
    a = np.zeros(n, dtype=dtype)
    a["id"] = np.arange(n) * 3 - 7
    a["pos"]["x"] = np.arange(n) / 8
    a["pos"]["y"] = -np.arange(n, dtype=np.float32)
    a["samples"] = np.arange(n * 16, dtype=np.float32).reshape(n, 16) / 4
    return a


def main():
    kind, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    if kind == "open":
        a = records(100_000)
        np.save(out / "records.npy", a)
        np.save(out / "fortran.npy", np.asfortranarray(np.arange(1200.0).reshape(40, 30)))
        with zipfile.ZipFile(out / "archive.npz", "w") as z:
            with z.open("stored.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, a)
        with zipfile.ZipFile(out / "archive.npz", "a", compression=zipfile.ZIP_DEFLATED) as z:
            with z.open("deflated.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, a)
    else:
        raise SystemExit(f"unknown kind {kind}")


if __name__ == "__main__":
    main()
