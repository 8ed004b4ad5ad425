#!/usr/bin/env python3
"""Files NumPy writes for the JavaScript package's tests.

Usage: python3 make_files.py open|large DIR

`open`: records.npy (100,000 records: an id, a nested position, 16 float32 samples),
fortran.npy (a 40 x 30 float64 matrix in Fortran order), archive.npz (the records as a
stored member `stored` and a deflated member `deflated`, as np.savez and
np.savez_compressed write them).

`large`: image.npy (a 4 GiB <f4 image of 32,768 x 32,768) and fortran.npy (a 2.4 GB <f4
matrix of 30,000 x 20,000 in Fortran order), sparse on disk; prints what NumPy reads of
them as JSON (see `large`).
"""

import json
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


def key(index):
    """NumPy's index for NpyFile.select's."""
    return tuple(slice(None) if i is None else slice(*i) if isinstance(i, list) else i for i in index)


def large(out):
    """Sparse files of 2 GiB and more, as np.lib.format.open_memmap writes them: a 4 GiB
    image and a 2.4 GB Fortran-order matrix, a few rows and scattered values set. Returns
    what NumPy reads of each: its header's fields and the values of some rows."""
    rng = np.random.default_rng(80)
    found = {}
    for name, shape, fortran, rows, selects in [
        (
            "image.npy",
            (32768, 32768),
            False,
            [(0, 1), (12345, 12346), (32767, 32768), (20000, 20003)],
            [[12345], [[12340, 12350, 5], [0, 32768, 4096]]],
        ),
        (
            "fortran.npy",
            (30000, 20000),
            True,
            [(0, 1), (12345, 12348), (29999, 30000)],
            [[None, 97], [[12344, 12348, 2], [0, 20000, 3880]]],
        ),
    ]:
        path = out / name
        a = np.lib.format.open_memmap(path, mode="w+", dtype="<f4", shape=shape, fortran_order=fortran)
        cols = slice(None) if not fortran else slice(None, None, 97)  # a Fortran row spans every column's page
        for start, stop in rows:
            a[start:stop, cols] = rng.standard_normal((stop - start, len(range(shape[1])[cols])), dtype=np.float32)
        i, j = rng.integers(0, shape[0], 200), rng.integers(0, shape[1], 200)
        a[i, j] = rng.standard_normal(200, dtype=np.float32)
        a[rows[1][0], -1] = np.float32("nan")
        a.flush()
        del a
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            start = f.tell()
            read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}[version]
            header_shape, header_fortran, dtype = read_header(f)
            offset = f.tell()
            f.seek(start)
            text = f.read(offset - start)[2 if version == (1, 0) else 4 :]
        m = np.load(path, mmap_mode="r")
        found[name] = {
            "version": list(version),
            "header": text.decode("latin1"),
            "descr": repr(np.lib.format.dtype_to_descr(dtype)),
            "shape": list(header_shape),
            "fortranOrder": header_fortran,
            "dataOffset": offset,
            "dataLength": m.nbytes,
            "fileLength": path.stat().st_size,
            # NaN as None: JSON has no NaN.
            "rows": [[start, stop, [[None if x != x else x for x in r] for r in m[start:stop].tolist()]] for start, stop in rows],
            # NpyFile.select's index (null: the whole axis; [start, stop, step]) and
            # NumPy's a[...] of it, its shape and its values in C order.
            "selects": [[index, list(m[key(index)].shape), [None if x != x else x for x in m[key(index)].ravel().tolist()]] for index in selects],
        }
    return found


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
    elif kind == "large":
        print(json.dumps(large(out)))
    else:
        raise SystemExit(f"unknown kind {kind}")


if __name__ == "__main__":
    main()
