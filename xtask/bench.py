#!/usr/bin/env python3
"""NumPy's side of `cargo xtask bench`: np.load and np.save on the files benches/io.rs made.

Usage: python3 bench.py DIR BYTES REPEAT

DIR holds le.npy (<f8) and be.npy (>f8), each BYTES of data: the values i + 0.25 for
i in range(BYTES // 8).  Runs each once untimed, then times it REPEAT times in interleaved
rounds (each starting one measurement later), keeping the best and the median:

  np_load_le         np.load(le.npy)
  np_load_be         np.load(be.npy): NumPy does not byte-swap, the array stays >f8
  np_load_be_astype  np.load(be.npy).astype('<f8'): native values, what npy's >f8 read gives
  np_save            np.save(out.npy, arr) of an in-memory <f8 array (file removed between
                     runs, dirty pages flushed before each)

The page cache is warmed before the reads.  Each result is checked (dtype, shape, first,
middle and last value) after the clock stops.  Prints one line per measurement, as
benches/io.rs does:

  bench <name> best=<seconds> median=<seconds> bytes=<n>
"""

import os
import statistics
import sys
import time

import numpy as np


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    directory, nbytes, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    n = nbytes // 8
    le = os.path.join(directory, "le.npy")
    be = os.path.join(directory, "be.npy")
    out = os.path.join(directory, "np-out.npy")

    def check(arr, dtype):
        if arr.dtype != np.dtype(dtype) or arr.shape != (n,):
            raise SystemExit(f"got {arr.dtype} {arr.shape}, expected {dtype} ({n},)")
        for i in (0, n // 2, n - 1):
            if arr[i] != i + 0.25:
                raise SystemExit(f"value {i} is {arr[i]}, expected {i + 0.25}")

    def load_le():
        t = time.perf_counter()
        arr = np.load(le)
        elapsed = time.perf_counter() - t
        check(arr, "<f8")
        return elapsed

    def load_be():
        t = time.perf_counter()
        arr = np.load(be)
        elapsed = time.perf_counter() - t
        check(arr, ">f8")
        return elapsed

    def load_be_astype():
        t = time.perf_counter()
        arr = np.load(be).astype("<f8")
        elapsed = time.perf_counter() - t
        check(arr, "<f8")
        return elapsed

    data = np.load(le)
    check(data, "<f8")

    def save():
        remove(out)
        os.sync()
        t = time.perf_counter()
        np.save(out, data)
        elapsed = time.perf_counter() - t
        size = os.path.getsize(out)
        with open(out, "rb") as f:
            f.seek(-8, os.SEEK_END)
            last = np.frombuffer(f.read(8), "<f8")[0]
        if size < nbytes or last != n - 1 + 0.25:
            raise SystemExit(f"{out}: {size} bytes, last value {last}")
        remove(out)
        return elapsed

    for path in (le, be):
        warm(path)
    rounds([("np_load_le", load_le), ("np_load_be", load_be), ("np_load_be_astype", load_be_astype)], repeat, nbytes)
    rounds([("np_save", save)], repeat, nbytes)


def rounds(measures, repeat, nbytes):
    # One untimed round first, as in benches/io.rs: the first touch of memory the VM has
    # not used lately is far slower, whichever measurement does it.
    for name, measure in measures:
        print(f"  {name:<18} warm-up: {measure():.3f} s (not counted)", file=sys.stderr, flush=True)
    times = {name: [] for name, _ in measures}
    for r in range(repeat):
        # Each round starts one measurement later, as in benches/io.rs.
        for k in range(len(measures)):
            name, measure = measures[(r + k) % len(measures)]
            t = measure()
            print(f"  {name:<18} run {r + 1}/{repeat}: {t:.3f} s", file=sys.stderr, flush=True)
            times[name].append(t)
    for name, _ in measures:
        runs = times[name]
        print(f"bench {name} best={min(runs):.6f} median={statistics.median(runs):.6f} bytes={nbytes}", flush=True)


def warm(path):
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


if __name__ == "__main__":
    main()
