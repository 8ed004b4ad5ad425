#!/usr/bin/env python3
"""NumPy's printing of rows, for the JavaScript package's `table()` test (table.test.js).

Usage:
    numpy_table.py make DIR           object arrays np.save writes (a ragged list, a dict,
                                      2-D grids in C and Fortran order) and N-d rows
    numpy_table.py OUT.json FILE...

For every .npy FILE and every member of every .npz FILE, OUT.json gets {"file", "member"
(null for a .npy), "rows": {index: cells}} for the first eight rows along the first axis
and the last (a 0-d array has one): each cell NumPy's str() of the row's part of one
scalar leaf of the dtype, in field order (str(a[i]["receiver"]["x"]); a subarray's or an
N-d row's part as NumPy prints that array; a plain array's, str(a[i])); an object array's
element as Python's str() of it. A row NumPy cannot print is {"error": why}.
"""

import json
import sys
import zipfile

import numpy as np


def leaves(dtype, path=()):
    """The paths of the scalar leaves, through nested records and subarrays' bases."""
    if dtype.subdtype is not None:
        yield from leaves(dtype.subdtype[0], path)
    elif dtype.names is not None:
        for name in dtype.names:
            yield from leaves(dtype.fields[name][0], path + (name,))
    else:
        yield path


def cells(a, i):
    row = a[()] if a.ndim == 0 else a[i]
    out = []
    for path in leaves(a.dtype):
        v = row
        for name in path:
            v = v[name]
        out.append(str(v))
    return out


def table(a):
    n = 1 if a.ndim == 0 else a.shape[0]
    picked = sorted(set(list(range(min(n, 8))) + ([n - 1] if n else [])))
    rows = {}
    for i in picked:
        try:
            rows[str(i)] = cells(a, i)
        except Exception as e:  # a value NumPy cannot print: the package must refuse it too
            rows[str(i)] = {"error": f"{type(e).__name__}: {e}"}
    return rows


def make(out):
    import datetime
    import decimal
    import fractions

    ragged = np.empty(7, dtype=object)
    ragged[:] = [
        np.arange(3.0),
        [1, "two", 3.5, None],
        {"a": (1, 2), "b": b"\x00bytes"},
        "text with 'quotes' and \u00e9",
        datetime.datetime(2024, 2, 29, 12, 30, tzinfo=datetime.timezone.utc),
        decimal.Decimal("1.10"),
        fractions.Fraction(1, 3),
    ]
    np.save(f"{out}/ragged.npy", ragged, allow_pickle=True)
    np.save(f"{out}/dict.npy", {"rate": 250.0, "names": ["a", "b"], "n": 2**70}, allow_pickle=True)
    grid = np.array([[1, "a", None], [2.5, (1, 2), 0.1]], dtype=object)
    np.save(f"{out}/grid.npy", grid, allow_pickle=True)
    np.save(f"{out}/grid_f.npy", np.asfortranarray(grid), allow_pickle=True)
    np.save(f"{out}/cube_f.npy", np.asfortranarray(np.arange(60.0).reshape(3, 4, 5) / 7))
    rec = np.zeros((3, 2), dtype=[("t", "M8[ms]"), ("z", "<c16"), ("s", "U3", (2,))])
    rec["t"] = np.datetime64("2024-01-01T00:00:00.250") + np.arange(6).reshape(3, 2)
    rec["z"] = np.arange(6).reshape(3, 2) * (1 + 0.5j)
    rec["s"] = [[["ab", "ç"]] * 2] * 3
    np.save(f"{out}/records_2d.npy", rec)


def main():
    if sys.argv[1] == "make":
        make(sys.argv[2])
        return
    out, files = sys.argv[1], sys.argv[2:]
    result = []
    for file in files:
        if file.endswith(".npz"):
            with zipfile.ZipFile(file) as z:
                names = [n for n in z.namelist() if n.endswith(".npy")]
            with np.load(file, allow_pickle=True) as archive:
                for name in names:
                    result.append({"file": file, "member": name, "rows": table(archive[name[:-4]])})
        else:
            result.append({"file": file, "member": None, "rows": table(np.load(file, allow_pickle=True))})
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
