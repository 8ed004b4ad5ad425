#!/usr/bin/env python3
"""NumPy's side of the matrix grid's browser test (tests/viewer_matrix.test.js).

Usage:
    numpy_matrix.py make DIR          in DIR: embeddings.npy (10,000 x 768 <f4, seeded
                                      normal values), fortran.npy (300 x 200 >f8 in
                                      Fortran order), volume.npy (16 x 64 x 48 <i2),
                                      mask.npy (40 x 50 |b1), signal.npy (30 x 40 <c8)
    numpy_matrix.py cells FILE INDEX...
                                      JSON: str(a[INDEX]) of each INDEX (comma-separated
                                      ints), as NumPy prints the element
"""

import json
import os
import sys

import numpy as np


def make(out):
    rng = np.random.default_rng(80)
    np.save(os.path.join(out, "embeddings.npy"), rng.standard_normal((10_000, 768), dtype=np.float32))
    f = np.asfortranarray((rng.standard_normal((300, 200)) * 1e3).astype(">f8"))
    np.save(os.path.join(out, "fortran.npy"), f)
    v = (np.arange(16 * 64 * 48) % 30011 - 15000).astype("<i2").reshape(16, 64, 48)
    np.save(os.path.join(out, "volume.npy"), v)
    np.save(os.path.join(out, "mask.npy"), rng.random((40, 50)) > 0.5)
    s = (rng.standard_normal((30, 40)) + 1j * rng.standard_normal((30, 40))).astype("<c8")
    np.save(os.path.join(out, "signal.npy"), s)


def cells(file, indexes):
    a = np.load(file, mmap_mode="r")
    return [str(a[tuple(int(i) for i in index.split(","))]) for index in indexes]


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "cells":
        print(json.dumps(cells(sys.argv[2], sys.argv[3:])))
    else:
        sys.exit(f"unknown command {sys.argv[1]!r}")
