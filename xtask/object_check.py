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
    {"py": "expression"}   the value of a Python expression over `np` and the standard
                           library's `datetime`, `decimal`, `fractions`, `uuid`, `pathlib`,
                           `collections` and `zoneinfo` (the tests' own sidecars only: it
                           is eval'd),
                           as NumPy loads it back from its own np.save of it

Beyond plain values, equality is exact as well: datetimes and times by their fields,
`fold` and `tzinfo` (offset and name), Decimals by their text, ranges by start, stop and
step, classes by identity, ndarrays by dtype, shape, memory order and bytes (floats by
value, any NaN matching), NumPy scalars by type, dtype and bytes (floats by value),
OrderedDicts, Counters and defaultdicts in order, like dicts (a defaultdict's factory by
identity), deques by maxlen and items, zoneinfo zones by key and whether they are the
cached instance, masked arrays by data, mask and fill value.

Prints one line per file, then `N files checked` (`, M failed` if any did); exits 1 on
any failure, or when DIR holds no file.
"""

import collections
import datetime
import decimal
import fractions
import io
import json
import pathlib
import struct
import sys
import uuid
import zoneinfo
from pathlib import Path

import numpy as np
from sidecar_check import Bad, check_all


# What a {"py": ...} expression may name.
NAMESPACE = {
    "np": np,
    "collections": collections,
    "datetime": datetime,
    "decimal": decimal,
    "fractions": fractions,
    "pathlib": pathlib,
    "uuid": uuid,
    "zoneinfo": zoneinfo,
    "__builtins__": {"range": range, "slice": slice, "complex": complex, "bytearray": bytearray,
                     "frozenset": frozenset, "set": set, "object": object, "list": list, "int": int,
                     "dict": dict},
}


def through_numpy(value):
    """The value as NumPy loads it from its own file of it (np.save of an object array
    holding it): what a file of ours must give too (an ndarray comes back in native byte
    order, for one)."""
    a = np.empty(1, dtype=object)
    a[0] = value
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=True)
    buf.seek(0)
    return np.load(buf, allow_pickle=True)[0]


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
        if tag == "py":
            return through_numpy(eval(inner, dict(NAMESPACE)))
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
    elif isinstance(want, collections.deque):
        if got.maxlen != want.maxlen:
            raise Bad(f"{where}: maxlen {got.maxlen}, expected {want.maxlen}")
        same(list(got), list(want), where)
    elif isinstance(want, zoneinfo.ZoneInfo):
        cached = lambda z: z is zoneinfo.ZoneInfo(z.key)  # noqa: E731
        if got.key != want.key or cached(got) != cached(want):
            raise Bad(f"{where}: {got!r} (cached {cached(got)}), expected {want!r} (cached {cached(want)})")
    elif isinstance(want, np.ma.MaskedArray):
        same_array(got.data, want.data, where + ".data")
        same_array(np.ma.getmaskarray(got), np.ma.getmaskarray(want), where + ".mask")
        same_array(np.asarray(got.fill_value), np.asarray(want.fill_value), where + ".fill_value")
    elif isinstance(want, dict):
        if isinstance(want, collections.defaultdict) and got.default_factory is not want.default_factory:
            raise Bad(f"{where}: factory {got.default_factory!r}, expected {want.default_factory!r}")
        if list(got) != list(want):
            raise Bad(f"{where}: keys {list(got)!r:.80}, expected {list(want)!r:.80}")
        for k in want:
            same(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, (datetime.datetime, datetime.time)):
        if got.replace(tzinfo=None) != want.replace(tzinfo=None) or got.fold != want.fold:
            raise Bad(f"{where}: {got!r}, expected {want!r}")
        same(got.tzinfo, want.tzinfo, where + ".tzinfo")
    elif isinstance(want, datetime.timezone):
        if got != want or got.tzname(None) != want.tzname(None):
            raise Bad(f"{where}: {got!r}, expected {want!r}")
        if (want is datetime.timezone.utc) != (got is datetime.timezone.utc):
            raise Bad(f"{where}: {got!r} is not timezone.utc as {want!r} is, or the other way")
    elif isinstance(want, decimal.Decimal):
        if str(got) != str(want):
            raise Bad(f"{where}: {got!r}, expected {want!r}")
    elif isinstance(want, range):
        if (got.start, got.stop, got.step) != (want.start, want.stop, want.step):
            raise Bad(f"{where}: {got!r}, expected {want!r}")
    elif isinstance(want, slice):
        same((got.start, got.stop, got.step), (want.start, want.stop, want.step), where)
    elif isinstance(want, type):
        if got is not want:
            raise Bad(f"{where}: {got!r}, expected {want!r}")
    elif isinstance(want, np.ndarray):
        same_array(got, want, where)
    elif isinstance(want, np.generic):
        if got.dtype != want.dtype:
            raise Bad(f"{where}: dtype {got.dtype}, expected {want.dtype}")
        same_array(np.asarray(got), np.asarray(want), where)
    elif got != want:
        raise Bad(f"{where}: {got!r:.60}, expected {want!r:.60}")


def same_array(got, want, where):
    """An ndarray (or a NumPy scalar as a 0-d one) equal to another, types and layout included."""
    if got.dtype != want.dtype or got.shape != want.shape:
        raise Bad(f"{where}: {got.dtype} {got.shape}, expected {want.dtype} {want.shape}")
    if (got.flags.c_contiguous, got.flags.f_contiguous) != (want.flags.c_contiguous, want.flags.f_contiguous):
        raise Bad(f"{where}: memory order differs")
    if want.dtype == object:
        for i, (g, w) in enumerate(zip(got.ravel(order="K"), want.ravel(order="K"))):
            same(g, w, f"{where}.flat[{i}]")
    elif want.dtype.kind in "fc":
        # By value: a long double's padding bytes are whatever its memory held.
        if not np.array_equal(got, want, equal_nan=True):
            raise Bad(f"{where}: {got!r}, expected {want!r}")
    elif got.tobytes(order="A") != want.tobytes(order="A"):
        raise Bad(f"{where}: {got!r}, expected {want!r}")


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
