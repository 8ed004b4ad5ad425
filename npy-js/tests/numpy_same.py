#!/usr/bin/env python3
"""NumPy reads the package's files as the arrays NumPy wrote, for the JavaScript tests.

Usage: python3 numpy_same.py NUMPY_DIR OURS_DIR

Every OURS_DIR/NAME.npy must load (np.load) with the dtype, shape and values of
NUMPY_DIR/NAME.npy, and hold np.save's bytes of that array; prints "N files equal", or
exits with 1 naming each file that is not.
"""

import sys
from pathlib import Path

import numpy as np


def main():
    theirs, ours = Path(sys.argv[1]), Path(sys.argv[2])
    wrong = []
    files = sorted(ours.glob("*.npy"))
    for path in files:
        a, b = np.load(theirs / path.name), np.load(path)
        why = None
        if a.dtype != b.dtype or a.shape != b.shape:
            why = f"{b.dtype} {b.shape}, NumPy's is {a.dtype} {a.shape}"
        elif a.dtype.names is None and not np.array_equal(a, b):
            why = f"values differ at {np.flatnonzero(a.ravel() != b.ravel())[:5].tolist()}"
        elif a.dtype.names is not None and any(not np.array_equal(a[f], b[f]) for f in a.dtype.names):
            why = "a field's values differ"
        elif path.read_bytes() != (theirs / path.name).read_bytes():
            why = "the values are NumPy's, the bytes are not np.save's"
        if why:
            wrong.append(f"{path.name}: {why}")
    if wrong or not files:
        raise SystemExit("\n".join(wrong) or f"no .npy files in {ours}")
    print(f"{len(files)} files equal")


if __name__ == "__main__":
    main()
