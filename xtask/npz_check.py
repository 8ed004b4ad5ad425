#!/usr/bin/env python3
"""NumPy loads every archive the tests wrote.

Usage: python3 npz_check.py DIR

For every DIR/*.npz (written by `cargo test --test npz`) there must be a sidecar
DIR/<name>.expect.json:

    {"archive": "<name>.npz",
     "members": [{"name", "member", "compression": "stored" | "deflated" | "zstd", then one of:
                  "dtype" (np.dtype.str), "shape", "fortran", "values" (storage order)
                  "descr" (a record's descr), "shape", "fortran", "fields": [[path, values]]
                  "npy_file": a .npy file the member must equal
                  "raw_hex": the bytes of a member that is not a .npy file}]}

`np.load(path, allow_pickle=False)` must list exactly the expected names in order, each
member must have the dtype, shape, order and values the sidecar gives, the zip must pass
its CRC checks (`zipfile.testzip`) and each member must be stored, deflated or Zstandard
(zip method 93) as said. Before Python 3.14, whose `zipfile` reads method 93 itself, the
pinned `zipfile-zstd` package patches `zipfile` to read it, as a user of NumPy would.

Values: integers and booleans as JSON numbers and booleans; floats as numbers, with
"nan", "inf", "-inf" and "-0.0" as strings (the sign of zero is checked); complex numbers
as [re, im]; datetime64/timedelta64 as their int64 values; |S as hex; <U as text.

Prints one line per archive, then `N archives checked` (`, M failed` if any did); exits 1
on any failure, or when DIR holds no archive.
"""

import ast
import json
import sys
import zipfile
from pathlib import Path

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401  (patches zipfile in place to read method 93)

import numpy as np
from sidecar_check import Bad, check_all
from numpy.lib import format as npformat

MAX_HEADER = 1 << 20


def floats(values):
    return [float(v) for v in values]


def expected_array(values, dtype):
    """The sidecar's values as a 1-D array of `dtype` (native byte order)."""
    native = dtype.newbyteorder("=") if dtype.byteorder not in "|=" else dtype
    kind = dtype.kind
    if kind == "f":
        return np.array(floats(values), dtype=native)
    if kind == "c":
        return np.array([complex(float(re), float(im)) for re, im in values], dtype=native)
    if kind in "Mm":
        return np.array(values, dtype=np.int64)
    if kind == "S":
        return np.array([bytes.fromhex(v) for v in values], dtype=native)
    return np.array(values, dtype=native)


def int64s(a):
    """A datetime64/timedelta64 array's int64 values."""
    return a.astype(a.dtype.newbyteorder("=")).view(np.int64)


def compare(what, got, want_values):
    """Compares the flat array `got` with the sidecar's values."""
    want = expected_array(want_values, got.dtype)
    if got.dtype.kind in "Mm":
        got = int64s(got)
    if got.shape != want.shape:
        raise Bad(f"{what}: {got.size} values, expected {want.size}")
    if got.dtype.kind in "fc":
        if not np.array_equal(got, want, equal_nan=True):
            raise Bad(f"{what}: values {got.tolist()[:8]}..., expected {want.tolist()[:8]}...")
        for part in ("real", "imag") if got.dtype.kind == "c" else ("real",):
            if not np.array_equal(np.signbit(getattr(got, part)), np.signbit(getattr(want, part))):
                raise Bad(f"{what}: signs of zero differ")
    elif not np.array_equal(got, want):
        raise Bad(f"{what}: values {got.tolist()[:8]}..., expected {want.tolist()[:8]}...")


def check_layout(what, a, m):
    if list(a.shape) != m["shape"]:
        raise Bad(f"{what}: shape {a.shape}, expected {tuple(m['shape'])}")
    big_dims = sum(1 for d in a.shape if d > 1)
    if m["fortran"] and big_dims > 1:
        if not a.flags.f_contiguous or a.flags.c_contiguous:
            raise Bad(f"{what}: not in Fortran order")
    elif not m["fortran"] and not a.flags.c_contiguous:
        raise Bad(f"{what}: not in C order")


def storage(a, fortran):
    return a.ravel(order="F" if fortran else "C")


def same_arrays(what, got, want):
    """Field by field, NaN-aware equality of two arrays of the same dtype."""
    if got.dtype != want.dtype:
        raise Bad(f"{what}: dtype {got.dtype}, expected {want.dtype}")
    if got.shape != want.shape:
        raise Bad(f"{what}: shape {got.shape}, expected {want.shape}")
    if got.dtype.names:
        for name in got.dtype.names:
            same_arrays(f"{what}[{name!r}]", got[name], want[name])
    elif got.dtype.kind in "Mm":  # NaT != NaT: compare the int64 values
        if not np.array_equal(int64s(got), int64s(want)):
            raise Bad(f"{what}: values differ")
    elif got.dtype.kind == "V":
        if got.tobytes() != want.tobytes():
            raise Bad(f"{what}: void bytes differ")
    elif got.dtype.kind in "fc":
        if not np.array_equal(got, want, equal_nan=True):
            raise Bad(f"{what}: values differ")
    elif not np.array_equal(got, want):
        raise Bad(f"{what}: values differ")


def check_member(npz, zf, m):
    name = m["name"]
    what = f"member {name!r}"
    info = zf.getinfo(m["member"])
    method = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED, "zstd": 93}[m["compression"]]
    if info.compress_type != method:
        raise Bad(f"{what}: zip method {info.compress_type}, expected {m['compression']}")
    a = npz[name]
    if "raw_hex" in m:
        if not isinstance(a, bytes) or a != bytes.fromhex(m["raw_hex"]):
            raise Bad(f"{what}: NumPy gives {a!r:.80}, expected bytes {m['raw_hex'][:80]}")
        return
    if not isinstance(a, np.ndarray):
        raise Bad(f"{what}: NumPy gives {type(a).__name__}, not an array")
    if "npy_file" in m:
        want = np.load(m["npy_file"], allow_pickle=False, max_header_size=MAX_HEADER)
        same_arrays(what, a, want)
        if np.isfortran(a) != np.isfortran(want):
            raise Bad(f"{what}: order differs from {m['npy_file']}")
        return
    check_layout(what, a, m)
    if "fields" in m:
        want = npformat.descr_to_dtype(ast.literal_eval(m["descr"]))
        if a.dtype != want:
            raise Bad(f"{what}: dtype {a.dtype}, expected {want}")
        paths = [path for path, _ in m["fields"]]
        if len(paths) != len(leaf_paths(a.dtype)) or set(paths) != set(leaf_paths(a.dtype)):
            raise Bad(f"{what}: sidecar fields {paths}, dtype has {leaf_paths(a.dtype)}")
        for path, values in m["fields"]:
            sub = a
            for part in path.split("."):
                sub = sub[part]
            compare(f"{what} field {path}", storage(sub, m["fortran"]), values)
    else:
        if a.dtype.str != m["dtype"]:
            raise Bad(f"{what}: dtype {a.dtype.str}, expected {m['dtype']}")
        compare(what, storage(a, m["fortran"]), m["values"])


def leaf_paths(dtype, prefix=""):
    """Dotted paths of a record dtype's scalar fields (through subarrays of records)."""
    out = []
    for name in dtype.names:
        sub = dtype.fields[name][0]
        base = sub.subdtype[0] if sub.subdtype else sub
        if base.names:
            out += leaf_paths(base, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def check_archive(path, sidecar):
    expect = json.loads(sidecar.read_text(encoding="utf-8"))
    if expect["archive"] != path.name:
        raise Bad(f"sidecar describes {expect['archive']}")
    with zipfile.ZipFile(path) as zf:
        broken = zf.testzip()
        if broken is not None:
            raise Bad(f"zip member {broken!r} fails its CRC check")
        with np.load(path, allow_pickle=False, max_header_size=MAX_HEADER) as npz:
            names = [m["name"] for m in expect["members"]]
            if npz.files != names:
                raise Bad(f"np.load lists {npz.files}, expected {names}")
            for m in expect["members"]:
                check_member(npz, zf, m)
    return len(expect["members"])


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    folder = Path(sys.argv[1])
    archives = sorted(folder.glob("*.npz")) if folder.is_dir() else []
    if not archives:
        print(f"no .npz archives in {folder}: run `cargo test --test npz` first", file=sys.stderr)
        return 1
    print(f"numpy {np.__version__} loads {folder}")
    return check_all(folder, archives, check_archive, "archives", "members")

if __name__ == "__main__":
    sys.exit(main())
