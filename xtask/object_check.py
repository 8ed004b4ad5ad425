#!/usr/bin/env python3
"""NumPy loads every object array the tests wrote, and finds the same values.

Usage: python3 object_check.py DIR

For every DIR/<name>.npy or DIR/<name>.npz (written by `cargo test --test objects`) there
must be a sidecar DIR/<name>.expect.json:

    {"file": "<name>.npy" | "<name>.npz",
     "arrays": [{"name": null (a .npy) | member name, "shape": [...], "fortran": bool,
                 "objects": [tagged values in storage order]}
                | {"name": member name, "skip": true} (an npz member that is not an
                  object array: only its place in the list is checked)]}

`np.load(path, allow_pickle=True)` must give, for each array, dtype object, the shape,
the memory order (Fortran when `fortran` and more than one dimension is longer than 1),
and values equal with exact types: a tuple stays a tuple, bytes stay bytes, an int is an
int of the same value (big ints exact), a float has the same bits (any NaN matches any
NaN), recursively through lists, tuples and dicts (dict order included). An .npz must
list exactly the expected names, in order.

Tagged values (the encoding of xtask/golden.py's manifest):
    null, true, false      None, True, False
    "text"                 str
    {"int": "-12"}         int (decimal text)
    {"float": "1.5"}       float (Python repr: "nan", "inf", "-inf", "-0.0")
    {"complex": [re, im]}  complex (parts as float reprs)
    {"bytes": "00ff"}      bytes (hex)
    {"list": [...]}, {"tuple": [...]}, {"dict": [[k, v], ...]}

Prints one line per file, then `N files checked` (`, M failed` if any did); exits 1 on
any failure, or when DIR holds no file.
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
from sidecar_check import Bad, check_all


def untag(v):
    """The Python value of a tagged JSON value."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, dict) and len(v) == 1:
        ((tag, inner),) = v.items()
        if tag == "int":
            return int(inner)
        if tag == "float":
            return float(inner)
        if tag == "complex":
            return complex(float(inner[0]), float(inner[1]))
        if tag == "bytes":
            return bytes.fromhex(inner)
        if tag == "list":
            return [untag(x) for x in inner]
        if tag == "tuple":
            return tuple(untag(x) for x in inner)
        if tag == "dict":
            return {untag(k): untag(x) for k, x in inner}
    raise Bad(f"not a tagged value: {v!r:.80}")


def same(got, want, where):
    """Exact equality of two values, types included; raises Bad naming where they differ."""
    if type(got) is not type(want):
        raise Bad(f"{where}: {type(got).__name__} {got!r:.60}, expected {type(want).__name__} {want!r:.60}")
    if isinstance(want, float):
        if not ((got != got and want != want) or struct.pack("<d", got) == struct.pack("<d", want)):
            raise Bad(f"{where}: {got!r}, expected {want!r}")
    elif isinstance(want, complex):
        same(got.real, want.real, where + ".real")
        same(got.imag, want.imag, where + ".imag")
    elif isinstance(want, (list, tuple)):
        if len(got) != len(want):
            raise Bad(f"{where}: {len(got)} items, expected {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        if list(got) != list(want):
            raise Bad(f"{where}: keys {list(got)!r:.80}, expected {list(want)!r:.80}")
        for k in want:
            same(got[k], want[k], f"{where}[{k!r}]")
    elif got != want:
        raise Bad(f"{where}: {got!r:.60}, expected {want!r:.60}")


def check_array(what, a, expect):
    if not isinstance(a, np.ndarray) or a.dtype != object:
        raise Bad(f"{what}: NumPy gives {type(a).__name__} of dtype {getattr(a, 'dtype', None)}, not an object array")
    if list(a.shape) != expect["shape"]:
        raise Bad(f"{what}: shape {a.shape}, expected {tuple(expect['shape'])}")
    if expect["fortran"] and sum(1 for d in a.shape if d > 1) > 1:
        if not a.flags.f_contiguous or a.flags.c_contiguous:
            raise Bad(f"{what}: not in Fortran order")
    elif not expect["fortran"] and not a.flags.c_contiguous:
        raise Bad(f"{what}: not in C order")
    values = a.ravel(order="F" if expect["fortran"] else "C")
    want = [untag(v) for v in expect["objects"]]
    if len(values) != len(want):
        raise Bad(f"{what}: {len(values)} values, expected {len(want)}")
    for i, (g, w) in enumerate(zip(values, want)):
        same(g, w, f"{what} element {i}")


def check_file(path, sidecar):
    expect = json.loads(sidecar.read_text(encoding="utf-8"))
    if expect["file"] != path.name:
        raise Bad(f"sidecar describes {expect['file']}")
    arrays = expect["arrays"]
    if path.suffix == ".npy":
        check_array("array", np.load(path, allow_pickle=True), arrays[0])
        return 1
    with np.load(path, allow_pickle=True) as npz:
        names = [a["name"] for a in arrays]
        if npz.files != names:
            raise Bad(f"np.load lists {npz.files}, expected {names}")
        for a in arrays:
            if not a.get("skip"):
                check_array(f"member {a['name']!r}", npz[a["name"]], a)
    return len(arrays)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    folder = Path(sys.argv[1])
    files = sorted(p for p in folder.iterdir() if p.suffix in (".npy", ".npz")) if folder.is_dir() else []
    if not files:
        print(f"no .npy or .npz files in {folder}: run `cargo test --test objects` first", file=sys.stderr)
        return 1
    print(f"numpy {np.__version__} loads {folder} with allow_pickle=True")
    return check_all(folder, files, check_file, "files", "arrays")

if __name__ == "__main__":
    sys.exit(main())
