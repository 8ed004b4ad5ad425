#!/usr/bin/env python3
"""NumPy's side of the viewer's browser test (tests/viewer.test.js).

Usage:
    numpy_view.py make DIR TRACES     archive.npz in DIR: the first 100,000 traces stored
                                      ("traces") and the first 1,000 deflated ("first");
                                      objects.npy: a ragged object array; big.npy: 2 GB
                                      of <f8, sparse, zeros but rows 0, 123,456,789 and
                                      the last (1.5, -3.25, 42.5); zeros.npz: a member of
                                      1.2 GB of zeros, deflated
    numpy_view.py rows FILE [MEMBER] ROW...
                                      JSON: the header text as written, the columns (leaf
                                      paths) and each row's cells as NumPy prints them:
                                      str(a[row][field]...) of each leaf, a subarray as
                                      NumPy's str() of the array
    numpy_view.py same NPY ARCHIVE MEMBER
                                      fails unless NPY holds the bytes of ARCHIVE's MEMBER
                                      (as NumPy wrote it) and np.load reads it equal
    numpy_view.py csv CSV FILE START [MEMBER]
                                      fails unless np.loadtxt reads the CSV (a header line,
                                      then rows START... of FILE, each subarray value a
                                      column) equal to those rows, field by field, in
                                      each field's dtype
"""

import json
import sys
import zipfile

import numpy as np


def leaves(dtype, path=()):
    if dtype.names is not None:
        for name in dtype.names:
            yield from leaves(dtype.fields[name][0], path + (name,))
    else:
        yield path


def load(file, member=None):
    if member is None:
        with open(file, "rb") as f:
            head = f.read(1 << 16)
        try:
            a = np.load(file, mmap_mode="r")
        except ValueError:  # an object array cannot be mapped
            a = np.load(file, allow_pickle=True)
        return a, head
    with zipfile.ZipFile(file) as z:
        with z.open(member + ".npy") as f:
            head = f.read(1 << 16)
    return np.load(file)[member], head


def header_text(head):
    major = head[6]
    length = int.from_bytes(head[8:10], "little") if major == 1 else int.from_bytes(head[8:12], "little")
    start = 10 if major == 1 else 12
    return head[start:start + length].decode("latin-1" if major < 3 else "utf-8")


def main():
    what = sys.argv[1]
    if what == "make":
        out, traces = sys.argv[2], np.load(sys.argv[3], mmap_mode="r")
        with zipfile.ZipFile(f"{out}/archive.npz", "w") as z:
            with z.open("traces.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.ascontiguousarray(traces[:100_000]))
        with zipfile.ZipFile(f"{out}/archive.npz", "a", compression=zipfile.ZIP_DEFLATED) as z:
            with z.open("first.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.ascontiguousarray(traces[:1000]))
        objects = np.empty(5, dtype=object)
        objects[:] = [np.arange(3.0), [1, "two", None], {"rate": 250.0}, None, "text"]
        np.save(f"{out}/objects.npy", objects, allow_pickle=True)
        # 2 GB of <f8, sparse on disk: zeros but for three values.
        big = np.lib.format.open_memmap(f"{out}/big.npy", mode="w+", dtype="<f8", shape=(250_000_000,))
        big[0], big[123_456_789], big[-1] = 1.5, -3.25, 42.5
        big.flush()
        # A deflated member of 1.2 GB of zeros in 5 MB: more than the page inflates.
        with zipfile.ZipFile(f"{out}/zeros.npz", "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            with z.open("zeros.npy", "w", force_zip64=True) as f:
                n = 150_000_000
                np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (n,)})
                chunk, left = bytes(64 << 20), n * 8
                while left:
                    f.write(chunk[: min(left, len(chunk))])
                    left -= min(left, len(chunk))
        return
    if what == "rows":
        file, rest = sys.argv[2], sys.argv[3:]
        member = None if rest[0].isdigit() else rest.pop(0)
        a, head = load(file, member)
        paths = list(leaves(a.dtype))
        rows = []
        for r in map(int, rest):
            cells = []
            for path in paths:
                v = a[r]
                for name in path:
                    v = v[name]
                cells.append(str(v))
            rows.append(cells)
        print(json.dumps({"header": header_text(head), "columns": [".".join(p) or "value" for p in paths], "rows": rows}))
        return
    if what == "same":
        npy, archive, member = sys.argv[2], sys.argv[3], sys.argv[4]
        with open(npy, "rb") as f:
            got = f.read()
        with zipfile.ZipFile(archive) as z:
            want = z.read(member + ".npy")
        if got != want:
            raise SystemExit(f"{npy}: {len(got)} bytes unlike the member's {len(want)}")
        a, b = np.load(npy), np.load(archive)[member]
        if a.dtype != b.dtype or not np.array_equal(a, b):
            raise SystemExit(f"{npy}: np.load reads {a.dtype} {a.shape}, the member {b.dtype} {b.shape}")
        print(f"ok: {len(got)} bytes")
        return
    if what == "csv":
        csv, file, start = sys.argv[2], sys.argv[3], int(sys.argv[4])
        a, _ = load(file, sys.argv[5] if len(sys.argv) > 5 else None)
        with open(csv) as f:
            names = f.readline().strip().split(",")
        table = np.loadtxt(csv, delimiter=",", skiprows=1, ndmin=2)
        rows = a[start:start + len(table)]
        col = 0
        for path in leaves(a.dtype):
            v = rows
            for name in path:
                v = v[name]
            v = np.asarray(v)
            flat = v.reshape(len(rows), -1)
            for k in range(flat.shape[1]):
                got = table[:, col].astype(flat.dtype)
                if not np.array_equal(got, flat[:, k], equal_nan=True):
                    raise SystemExit(f"column {col} ({names[col]}): loadtxt gives {got[:4]}, the array {flat[:4, k]}")
                col += 1
        if col != table.shape[1]:
            raise SystemExit(f"{table.shape[1]} columns, the dtype has {col} values a row")
        print(f"ok: {len(rows)} rows, {col} columns")
        return
    raise SystemExit(f"unknown command {what}")


if __name__ == "__main__":
    main()
