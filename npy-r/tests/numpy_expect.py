"""NumPy's values, as the R package's tests compare them: every .npy file of a directory
(the shared corpus), and the main job's traces, written as one JSON file.

Usage: python numpy_expect.py OUT.json CORPUS_DIR TRACES.npy OBJECTS_DIR

It also writes object arrays with NumPy into OBJECTS_DIR (a ragged array, a dict saved
by ``np.save``, strings and ``None``, nested values) for the tests to read.

Each file gives its descr, its dims in R (the shape; rows for a record array) and, for
each scalar leaf (a plain array's one leaf, a record's fields by dotted path), the values
in R's order: column-major for an array (``ravel(order='F')``), and for a record array's
field each element's values in storage order, a subarray field's values column by
column (R's matrix column). Values are text, so that nothing is lost on the way: numbers
as Python's ``repr`` (which R's ``as.numeric`` reads back exactly), integers as decimals,
bytes and void as hex, datetimes as counts (``NaT`` as ``"NaT"``).
"""

import json
import math
import sys

import numpy as np

# The traces' rows and columns the tests ask for, as R numbers them (from 1).
TRACE_ROWS = [1, 2, 500_000, 999_991, 1_000_000]
TRACE_COLS = ["trace_id", "t0", "samples"]


def leaves(dtype, path=""):
    """(path, names to index by, the leaf's dtype) for each scalar leaf, depth first."""
    if dtype.names is None:
        base = dtype.subdtype[0] if dtype.subdtype else dtype
        if base.names is not None:
            yield from leaves(base, path)
            return
        yield path, base
        return
    for name in dtype.names:
        sub = dtype.fields[name][0]
        yield from leaves(sub, f"{path}.{name}" if path else name)


def pick(array, path):
    """The leaf at `path` of a record array, elements first, then subarray axes."""
    out = array
    for name in path.split("."):
        out = out[name]
    return out


def number(x):
    """A float as text R's `as.numeric` reads back exactly."""
    if math.isnan(x):
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Inf" if x > 0 else "-Inf"
    return repr(x)


def text(value, dtype):
    """One value as text (see the module)."""
    kind = dtype.kind
    if kind == "b":
        return "TRUE" if value else "FALSE"
    if kind in "iu":
        return str(int(value))
    if kind == "f":
        return number(float(value))
    if kind == "c":
        return [number(float(value.real)), number(float(value.imag))]
    if kind in "Mm":
        return "NaT" if np.isnat(value) else str(int(value.astype(np.int64)))
    if kind == "S":
        return bytes(value).hex()
    if kind == "V":
        return bytes(value).hex()
    raise ValueError(f"no text for dtype {dtype}")


def column(values, n, dtype):
    """A leaf's values (shape (n, ...)) in R's order: value j of element i at i + j*n."""
    flat = (
        values.reshape(n, -1)
        if n
        else values.reshape(0, int(np.prod(values.shape[1:])))
    )
    per = flat.shape[1]
    value = (
        (lambda i, j: ucs4(flat[i, j : j + 1]))
        if dtype.kind == "U"
        else (lambda i, j: text(flat[i, j], dtype))
    )
    return {
        "per": per,
        "type": dtype.str,
        "values": [value(i, j) for j in range(per) for i in range(n)],
    }


def ucs4(one):
    """A `U` value's UTF-32LE code units as hex, trailing NULs stripped, taken from its
    bytes (a value may hold units that are no characters, which `str` refuses)."""
    one = np.ascontiguousarray(one)
    if one.dtype.byteorder == ">":
        one = one.byteswap().view(one.dtype.newbyteorder("<"))
    raw = one.view(np.uint8).tobytes()
    while raw.endswith(b"\0\0\0\0"):
        raw = raw[:-4]
    return raw.hex()


def expect(array):
    """What R should hold for `array` (see the module)."""
    if array.dtype.names is not None:
        order = (
            "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
        )
        flat = array.ravel(order=order)
        n = flat.shape[0]
        return {
            "kind": "record",
            "rows": n,
            "columns": {
                p: column(pick(flat, p) if p else flat, n, d)
                for p, d in leaves(array.dtype)
            },
        }
    flat = array.ravel(order="F")
    return {
        "kind": "array",
        "dims": list(array.shape),
        "columns": {"": column(flat.reshape(-1, 1), flat.shape[0], array.dtype)},
    }


def write_objects(directory):
    """Object arrays as people save them (the values test-objects.R expects)."""
    directory.mkdir(parents=True, exist_ok=True)
    ragged = np.empty(3, dtype=object)
    ragged[:] = [
        np.arange(3, dtype=np.int64),
        np.array([1.5, -2.0]),
        np.array([], dtype=np.float32),
    ]
    np.save(directory / "ragged.npy", ragged, allow_pickle=True)
    np.save(
        directory / "dict.npy",
        {
            "name": "trace",
            "gain": 2.5,
            "ids": [1, 2, 3],
            "ok": True,
            "none": None,
            "grid": np.arange(6, dtype=np.int16).reshape(2, 3),
        },
        allow_pickle=True,
    )
    np.save(
        directory / "strings.npy",
        np.array(["a", None, "\u00e9t\u00e9"], dtype=object),
        allow_pickle=True,
    )
    nested = np.empty((2, 2), dtype=object)
    nested[:] = [[1, "x"], [(1, 2), {"k": b"\x00\xff"}]]
    np.save(directory / "nested_2x2.npy", nested, allow_pickle=True)


def main():
    out, corpus, traces, objects = sys.argv[1:5]
    import pathlib

    write_objects(pathlib.Path(objects))

    files = {}
    for path in sorted(pathlib.Path(corpus).rglob("*.npy")):
        array = np.load(path, allow_pickle=False, max_header_size=1 << 20)
        entry = expect(array)
        entry["descr"] = repr(np.lib.format.dtype_to_descr(array.dtype))
        files[str(path.relative_to(corpus))] = entry
    t = np.load(traces, mmap_mode="r")
    subset = np.ascontiguousarray(t[[r - 1 for r in TRACE_ROWS]])
    sub = expect(subset)
    sub["columns"] = {
        k: v for k, v in sub["columns"].items() if k.split(".")[0] in TRACE_COLS
    }
    result = {
        "corpus": files,
        "traces": {
            "rows": len(t),
            "descr": repr(np.lib.format.dtype_to_descr(t.dtype)),
            "subset_rows": TRACE_ROWS,
            "subset_cols": TRACE_COLS,
            "subset": sub,
            # Whole columns as sums, to check every row without a GB of JSON.
            "sums": {
                p: number(float(np.sum(pick(t, p), dtype=np.float64)))
                for p, _ in leaves(t.dtype)
            },
        },
    }
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
