"""Checks with NumPy what the R package's tests wrote (NPY_R_OUT/written): each file's
descr, order, shape and values against the spec the tests recorded (spec.json, values as
text: see numpy_expect.py), and each archive's members' compression.

Usage: python check_written.py WRITTEN_DIR
Zstandard members, which NumPy's zipfile cannot open, are decompressed with the
`zstd` command first.
"""

import io
import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
from numpy_expect import expect


def same(kind, a, b):
    """Whether two values' texts hold the same value of a dtype of `kind`."""
    if kind in "fc":
        x, y = float(a), float(b)
        return (math.isnan(x) and math.isnan(y)) or x == y
    if kind in "iu":
        return int(float(a)) == int(float(b))
    return a == b


def check_array(name, array, want, problems):
    fortran = (
        array.flags.f_contiguous and not array.flags.c_contiguous and array.ndim > 1
    )
    descr = repr(np.lib.format.dtype_to_descr(array.dtype))
    if descr != want["descr"]:
        problems.append(f"{name}: descr {descr}, not {want['descr']}")
    if list(array.shape) != want["shape"]:
        problems.append(f"{name}: shape {array.shape}, not {want['shape']}")
    if fortran != bool(want["fortran_order"]):
        problems.append(f"{name}: fortran_order {fortran}, not {want['fortran_order']}")
    got = expect(array)["columns"]
    columns = want["columns"]
    if isinstance(columns, list):  # a plain array's one leaf, unnamed
        columns = {"": columns[0]}
    for path, col in columns.items():
        have = got[path if path in got else ""]["values"]
        # Complex values are [real, imag] pairs here, one after the other in the spec.
        have = [t for v in have for t in (v if isinstance(v, list) else [v])]
        kind = np.dtype(col["type"]).kind
        if len(have) != len(col["values"]):
            problems.append(
                f"{name} {path}: {len(have)} values, not {len(col['values'])}"
            )
            continue
        for i, (a, b) in enumerate(zip(have, col["values"])):
            if not same(kind, a, b):
                problems.append(f"{name} {path}[{i}]: NumPy has {a}, R wrote {b}")
                break


def main():
    written = Path(sys.argv[1])
    spec = json.loads((written / "spec.json").read_text())
    problems = []
    for name, want in spec.items():
        path = written / name
        if name.endswith(".npz"):
            method = {
                "stored": zipfile.ZIP_STORED,
                "deflate": zipfile.ZIP_DEFLATED,
                "zstd": 93,
            }[want["compression"]]
            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    if info.compress_type != method:
                        problems.append(
                            f"{name} {info.filename}: compression {info.compress_type}, not {method}"
                        )
                    if method == 93:
                        with open(path, "rb") as f:
                            f.seek(info.header_offset + 26)
                            n, m = (
                                int.from_bytes(f.read(2), "little"),
                                int.from_bytes(f.read(2), "little"),
                            )
                            f.seek(info.header_offset + 30 + n + m)
                            raw = subprocess.run(
                                ["zstd", "-dc"],
                                input=f.read(info.compress_size),
                                capture_output=True,
                                check=True,
                            ).stdout
                        np.load(io.BytesIO(raw))
                    else:
                        np.load(io.BytesIO(z.read(info.filename)))
            continue
        check_array(name, np.load(path), want, problems)
    for p in problems:
        print(p)
    print(f"{len(spec)} files checked, {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
