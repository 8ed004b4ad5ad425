#!/usr/bin/env python3
"""NumPy loads every file SQL wrote (COPY TO, INSERT INTO).

Usage: python3 sql_check.py DIR

For every sidecar DIR/<case>.expect.json (written by `cargo test` in
npy-datafusion/tests/sql/write.rs):

    {"output": "<case>.npy" | "<case>.npz" | "<case>/",   # a file, or a directory of files
     "kind": "npy" | "npz",
     "columns": [name, ...],
     "rows": [[value, ...], ...]}                        # the query's rows, any order

`np.load(path, allow_pickle=False)` must load every output file (a directory: each of its
`.npy` or `.npz` files, and at least one); a `.npy` file must be a 1-D record array whose
fields are exactly `columns`, an `.npz` must have exactly the members `columns`, each 1-D
and of one length; together the files must hold exactly `rows` (compared as sorted lists,
values as `tolist()` gives them: integers, floats, text, booleans).

Prints one line per case, then `N cases checked` (`, M failed` if any did); exits 1 on any
failure, or when DIR holds no sidecar.
"""

import json
import sys
from pathlib import Path

import numpy as np


class Bad(Exception):
    pass


def rows_of_npy(path, columns):
    a = np.load(path, allow_pickle=False)
    if a.ndim != 1 or a.dtype.names is None:
        raise Bad(f"{path.name}: dtype {a.dtype} shape {a.shape}, expected a 1-D record array")
    if list(a.dtype.names) != columns:
        raise Bad(f"{path.name}: fields {list(a.dtype.names)}, expected {columns}")
    return list(zip(*(a[name].tolist() for name in columns))) if len(a) else []


def rows_of_npz(path, columns):
    with np.load(path, allow_pickle=False) as z:
        names = list(z.files)
        if names != columns:
            raise Bad(f"{path.name}: members {names}, expected {columns}")
        arrays = [z[name] for name in columns]
    lengths = {a.shape for a in arrays}
    if any(a.ndim != 1 for a in arrays) or len(lengths) > 1:
        raise Bad(f"{path.name}: member shapes {[a.shape for a in arrays]}, expected 1-D of one length")
    return list(zip(*(a.tolist() for a in arrays))) if arrays and len(arrays[0]) else []


def check(directory, sidecar):
    spec = json.loads(sidecar.read_text())
    out = directory / spec["output"]
    kind = spec["kind"]
    columns = spec["columns"]
    if out.is_dir():
        files = sorted(p for p in out.rglob(f"*.{kind}") if p.is_file())
        others = sorted(p.name for p in out.rglob("*") if p.is_file() and p.suffix != f".{kind}")
        if others:
            raise Bad(f"files other than .{kind} in {spec['output']}: {others}")
        if not files:
            raise Bad(f"no .{kind} file in {spec['output']}")
    elif out.is_file():
        files = [out]
    else:
        raise Bad(f"{spec['output']} was not written")
    rows = []
    for f in files:
        rows += rows_of_npy(f, columns) if kind == "npy" else rows_of_npz(f, columns)
    got = sorted(tuple(r) for r in rows)
    want = sorted(tuple(r) for r in spec["rows"])
    if got != want:
        missing = [r for r in want if r not in got][:3]
        extra = [r for r in got if r not in want][:3]
        raise Bad(f"{len(got)} rows, expected {len(want)}; missing e.g. {missing}, unexpected e.g. {extra}")
    return f"{len(files)} file(s), {len(got)} rows"


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    directory = Path(sys.argv[1])
    sidecars = sorted(directory.glob("*.expect.json"))
    if not sidecars:
        print(f"no .expect.json sidecar in {directory}: did the write tests run?", file=sys.stderr)
        return 1
    failed = 0
    for sidecar in sidecars:
        case = sidecar.name[: -len(".expect.json")]
        try:
            print(f"ok   {case}: {check(directory, sidecar)}")
        except (Bad, OSError, ValueError, KeyError) as e:
            failed += 1
            print(f"FAIL {case}: {e}")
    summary = f"{len(sidecars)} cases checked"
    print(summary + (f", {failed} failed" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
