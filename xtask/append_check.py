"""NumPy and npy-append-array read and extend the files npy appended to.

Usage: append_check.py DIR NPY

For every DIR/<case>.expect.npy (written whole by `write_npy` in `cargo test`:
npy-cli/tests/npy/append.rs), DIR/<case>.npy (grown in place by npy) must load in NumPy as
that array, dtype and values, and its header must be the one np.save writes for it (a
torn file's tail after the data is ignored, as np.load ignores it; the rows of racing
appends, `concurrent`, sorted, as `concurrent.expect.npy` holds them). npy-append-array
then appends to a copy of each; and npy (the release binary NPY, `npy append`) appends
to a file npy-append-array made, which npy-append-array extends again. Exits 1 on the
first failure, or when DIR holds neither case.
"""
import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from npy_append_array import NpyAppendArray

CASES = ["records", "torn", "concurrent"]


class Bad(Exception):
    pass


def header_of(path_or_bytes):
    data = path_or_bytes if isinstance(path_or_bytes, bytes) else Path(path_or_bytes).read_bytes()
    major = data[6]
    if major == 1:
        n = 10 + int.from_bytes(data[8:10], "little")
    else:
        n = 12 + int.from_bytes(data[8:12], "little")
    return data[:n]


def same(got, want, what):
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        raise Bad(f"{what}: {got.dtype} {got.shape}, expected {want.dtype} {want.shape}, or other values")


def check_case(directory, case, work):
    ours, expect = directory / f"{case}.npy", directory / f"{case}.expect.npy"
    want = np.load(expect, allow_pickle=False)
    got = np.load(ours, allow_pickle=False)
    if case == "concurrent":
        # Appends that raced land in an order of their own: sorted, the rows are exactly
        # the expected ones, each once (the test checked each append is whole, in order).
        same(np.sort(got), want, f"{case}.npy, sorted")
        want = got
    same(got, want, f"{case}.npy")
    buf = io.BytesIO()
    np.save(buf, want)
    if header_of(str(ours)) != header_of(buf.getvalue()):
        raise Bad(f"{case}.npy: header {header_of(str(ours))!r}, np.save writes {header_of(buf.getvalue())!r}")
    # npy-append-array appends to our file (after the tail is gone: it appends at the end).
    if case == "torn":
        return f"{len(got)} rows (a tail ignored)"
    theirs = work / f"{case}.npy"
    shutil.copy(ours, theirs)
    with NpyAppendArray(str(theirs)) as f:
        f.append(want[:5])
    back = np.load(theirs)
    # Compared in two parts: np.concatenate would normalize the dtype (padding, byte order).
    same(back[: len(want)], want, f"npy-append-array on {case}.npy: the old rows")
    same(back[len(want) :], want[:5], f"npy-append-array on {case}.npy: the rows it appended")
    return f"{len(got)} rows; npy-append-array appended 5"


def npy_on_theirs(npy, work):
    theirs, more = work / "theirs.npy", work / "more.npy"
    with NpyAppendArray(str(theirs), delete_if_exists=True) as f:
        f.append(np.arange(10, dtype="<i8"))
        f.append(np.arange(10, 20, dtype="<i8"))
    np.save(more, np.arange(20, 35, dtype="<i8"))
    subprocess.run([npy, "append", str(theirs), str(more)], check=True)
    same(np.load(theirs), np.arange(35, dtype="<i8"), "npy append on npy-append-array's file")
    with NpyAppendArray(str(theirs)) as f:
        f.append(np.arange(35, 40, dtype="<i8"))
    same(np.load(theirs), np.arange(40, dtype="<i8"), "npy-append-array after npy append")
    return "npy appended 15 rows to npy-append-array's file, which appended 5 more"


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    directory, npy = Path(sys.argv[1]), sys.argv[2]
    work = directory / "work"
    work.mkdir(exist_ok=True)
    try:
        for case in CASES:
            if not (directory / f"{case}.expect.npy").exists():
                raise Bad(f"no {case}.expect.npy in {directory}: did npy-cli/tests/npy/append.rs run?")
            print(f"ok   {case}: {check_case(directory, case, work)}")
        print(f"ok   {npy_on_theirs(npy, work)}")
    except (Bad, OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"FAIL {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
