#!/usr/bin/env python3
"""Python's repr() of the values in object arrays that the package gives as {pytype, repr},
for the JavaScript package's tests (objects.test.js).

Usage: python3 object_reprs.py DATA_DIR OUT.json

For every file of DATA_DIR's manifest under object/, OUT.json gets {file: [tree per
element]} (an .npz: {file: {name: [...]}}), elements in storage order, each loaded
from the file by np.load(allow_pickle=True). A tree mirrors the manifest's tagged value
(xtask/golden.py's `tag`) where it leads to such values: repr(v) for a datetime, date,
time, timedelta, timezone, ZoneInfo, Decimal, Fraction, UUID, path, range, slice or
class; a list of trees for a list, tuple, deque, set, frozenset or object ndarray's
items; [key, value] pairs of trees for a dict, OrderedDict, Counter or defaultdict;
[data, null, null] for a masked array (its data may hold such values; its mask
and fill value do not); null for anything else.
"""

import collections
import datetime
import decimal
import fractions
import json
import pathlib
import sys
import uuid
import zipfile
import zoneinfo
from pathlib import Path

import numpy as np

# Values the package gives as {pytype, repr}.
REPR = (datetime.date, datetime.time, datetime.timedelta, datetime.tzinfo, decimal.Decimal, fractions.Fraction,
        uuid.UUID, pathlib.PurePath, range, slice, type)


def ordered(a):
    """An array's items in storage order (Fortran when only Fortran-contiguous)."""
    fortran = bool(a.flags.f_contiguous and not a.flags.c_contiguous)
    return a.ravel(order="F" if fortran else "C")


def tree(v):
    if isinstance(v, np.ma.MaskedArray):
        return [tree(v.data), None, None]
    if isinstance(v, np.ndarray):
        return [tree(x) for x in ordered(v)] if v.dtype.hasobject else None
    if isinstance(v, np.generic):
        return None
    if isinstance(v, REPR):
        return repr(v)
    if isinstance(v, dict):
        return [[tree(k), tree(x)] for k, x in v.items()]
    if isinstance(v, (list, tuple, collections.deque, set, frozenset)):
        return [tree(x) for x in v]
    return None


def main():
    data, out = Path(sys.argv[1]), Path(sys.argv[2])
    manifest = json.loads((data / "manifest.json").read_text())
    trees = {}
    for entry in manifest:
        if not entry["file"].startswith("object/"):
            continue
        path = data / entry["file"]
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=True) as z:
                trees[entry["file"]] = {name: tree(z[name]) for name in z.files}
        else:
            trees[entry["file"]] = tree(np.load(path, allow_pickle=True))
    out.write_text(json.dumps(trees))
    print(f"{len(trees)} files")


if __name__ == "__main__":
    main()
