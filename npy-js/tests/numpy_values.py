#!/usr/bin/env python3
"""NumPy's values of every file of a corpus, for the JavaScript package's tests.

Usage: python3 numpy_values.py CORPUS_DIR OUT.json

For every .npy file and every member of every .npz file under CORPUS_DIR, OUT.json gets
{"file", "member" (null for a .npy), "descr", "shape", "fortran_order", "columns": {path:
{"order": "C" | "F", "values": [...]} | {"error": why}}}: each scalar leaf of the dtype
(a record's fields by dotted path, through nested records and subarrays; "" for a plain
array) as `np.load` gives it, raveled in the order the package gives a column (Fortran
for a Fortran-order array's leaf without subarray dims, else C).

Values are canonical text the JavaScript side makes too: integers (datetimes and
timedeltas as their int64, booleans as their byte) as decimal text; floats as "nan" or the
hex of the float64 nearest them (NumPy's own conversion, for long doubles too); complex
numbers as [real, imag]; `S` values as text, one char per byte; `U` values as text, or an
"error" for the whole leaf when an element is no str (NumPy cannot make one); `V` values
as hex.
"""

import json
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np


def canonical_float(x):
    x = float(x)
    if x != x:
        return "nan"
    return struct.pack("<d", x).hex()


def leaves(dtype, path=()):
    """(path, dims) of each scalar leaf, in field order; dims of the subarrays on the way."""
    if dtype.names is not None:
        for name in dtype.names:
            field = dtype.fields[name][0]
            yield from leaves(field, path + (name,))
    elif dtype.subdtype is not None:
        base, shape = dtype.subdtype
        for p, dims in leaves(base, path):
            yield p, tuple(shape) + dims
    else:
        yield path, ()


def leaf_dtype(dtype):
    while dtype.subdtype is not None:
        dtype = dtype.subdtype[0]
    return dtype


def values(flat):
    kind = flat.dtype.kind
    if kind == "b":
        return [str(int(v)) for v in flat.view(np.uint8)]
    if kind in "iu":
        return [str(int(v)) for v in flat]
    if kind in "Mm":
        return [str(int(v)) for v in flat.astype(flat.dtype.newbyteorder("=")).view(np.int64)]
    if kind == "f":
        return [canonical_float(v) for v in flat]
    if kind == "c":
        return [[canonical_float(v.real), canonical_float(v.imag)] for v in flat]
    if kind == "S":
        return [bytes(v).decode("latin-1") for v in flat.tolist()]
    if kind == "U":
        return [str(v) for v in flat.tolist()]
    if kind == "V":
        return [bytes(v).hex() for v in flat.tolist()]
    raise ValueError(f"no canonical form for {flat.dtype}")


def describe(a, fortran_order):
    columns = {}
    for path, dims in leaves(a.dtype):
        v = a
        for name in path:
            v = v[name]
        order = "F" if fortran_order and not dims else "C"
        try:
            flat = np.ravel(v, order=order)
            # A subarray of a record array's field comes back with the leaf's own dtype.
            flat = flat.astype(leaf_dtype(flat.dtype), copy=False)
            columns[".".join(path)] = {"order": order, "values": values(flat)}
        except (ValueError, UnicodeDecodeError, SystemError) as e:
            columns[".".join(path)] = {"error": str(e)}
    return columns


def entry(opener, file, member):
    with opener() as f:
        a = np.lib.format.read_array(f, allow_pickle=False, max_header_size=1 << 30)
    # The header's order, where it matters (a 1-D array is in both orders).
    fortran_order = bool(a.flags.f_contiguous and not a.flags.c_contiguous)
    return {
        "file": file,
        "member": member,
        "descr": repr(np.lib.format.dtype_to_descr(a.dtype)),
        "shape": list(a.shape),
        "fortran_order": fortran_order,
        "columns": describe(a, fortran_order),
    }


def main():
    corpus, out = Path(sys.argv[1]), Path(sys.argv[2])
    entries = []
    for path in sorted(corpus.rglob("*")):
        rel = path.relative_to(corpus).as_posix()
        if path.suffix == ".npy":
            entries.append(entry(lambda: open(path, "rb"), rel, None))
        elif path.suffix == ".npz":
            with zipfile.ZipFile(path) as z:
                for name in z.namelist():
                    entries.append(entry(lambda: z.open(name), rel, name))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(entries))
    print(f"{len(entries)} arrays described")


if __name__ == "__main__":
    main()
