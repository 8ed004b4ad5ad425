#!/usr/bin/env python3
"""NumPy's side of `cargo xtask bench`: np.load and np.save on the files the Rust benches made.

Usage: python3 bench.py f8 DIR BYTES REPEAT
       python3 bench.py records DIR RECORDS REPEAT

Each measurement runs once untimed, then REPEAT times in interleaved rounds (each starting
one measurement later), keeping the best and the median.  The page cache is warmed before
the reads; dirty pages are flushed before each save, and saved files are removed between
runs; right before each run, 1.5 times the largest file's size of memory is touched and
freed (`heat`, as benches/common/mod.rs does: this VM hands memory that sat free back to its
host, and touching it again costs seconds per GiB).  Each result is checked after the clock
stops.  Prints one line per measurement, as
benches/io.rs and benches/records.rs do:

  bench <name> best=<seconds> median=<seconds> bytes=<n>

f8 (benches/io.rs): DIR holds le.npy (<f8) and be.npy (>f8), each BYTES of data: the values
i + 0.25 for i in range(BYTES // 8).

  np_load_le         np.load(le.npy)
  np_load_be         np.load(be.npy): NumPy does not byte-swap, the array stays >f8
  np_load_be_astype  np.load(be.npy).astype('<f8'): native values, what npy's >f8 read gives
  np_save            np.save(out.npy, arr) of an in-memory <f8 array

records (benches/records.rs): DIR holds traces_aligned.npy (NumPy's align=True layout,
304 bytes a record) and traces_packed.npy (the default packed layout, 293 bytes), each of
RECORDS seismic traces, written by npy.  Both are first checked once: dtype, shape and every
field of a few records (see `trace`).

  np_load_aligned    np.load(traces_aligned.npy)
  np_load_packed     np.load(traces_packed.npy)
  np_save_aligned    np.save(out.npy, arr) of the loaded aligned array
  np_save_packed     np.save(out.npy, arr) of the loaded packed array
"""

import os
import statistics
import sys
import time

import numpy as np

USAGE = __doc__


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("f8", "records"):
        sys.exit(USAGE)
    part, directory, size, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if part == "f8":
        f8(directory, size, repeat)
    else:
        records(directory, size, repeat)


def f8(directory, nbytes, repeat):
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
    hot = nbytes + nbytes // 2
    rounds([("np_load_le", nbytes, load_le), ("np_load_be", nbytes, load_be),
            ("np_load_be_astype", nbytes, load_be_astype)], repeat, hot)
    rounds([("np_save", nbytes, save)], repeat, hot)


# The record of benches/records.rs, as np.dtype([...]) (packed) and with align=True.
TRACE = [
    ("trace_id", "<i4"),
    ("receiver", [("x", "<f8"), ("y", "<f8"), ("z", "<f4")]),
    ("t0", "<f8"),
    ("dt", "<f4"),
    ("flags", "u1"),
    ("samples", "<f4", (64,)),
]
PACKED = np.dtype(TRACE)
ALIGNED = np.dtype(TRACE, align=True)


def trace(i):
    """Record i as benches/records.rs makes it (`trace`), field by field."""
    return {
        "trace_id": i,
        "x": 500_000.0 + (i % 1000) * 12.5,
        "y": 6_200_000.0 + (i // 1000) * 25.0,
        "z": np.float32(-2.5),
        "t0": (i % 1000) * 0.001,
        "dt": np.float32(0.004),
        "flags": i % 3,
        "samples": np.float32(i % 4096) + np.arange(64, dtype=np.float32) / np.float32(64),
    }


def check_record(arr, i, name):
    want = trace(i)
    rec = arr[i]
    got = {
        "trace_id": rec["trace_id"],
        "x": rec["receiver"]["x"],
        "y": rec["receiver"]["y"],
        "z": rec["receiver"]["z"],
        "t0": rec["t0"],
        "dt": rec["dt"],
        "flags": rec["flags"],
        "samples": rec["samples"],
    }
    for field, value in want.items():
        if not np.array_equal(got[field], value):
            raise SystemExit(f"{name}: record {i} field {field} is {got[field]}, expected {value}")


def records(directory, n, repeat):
    paths = {
        "aligned": (os.path.join(directory, "traces_aligned.npy"), ALIGNED),
        "packed": (os.path.join(directory, "traces_packed.npy"), PACKED),
    }
    out = os.path.join(directory, "np-out.npy")
    # The last 256 bytes of every file: the samples of the last record.
    tail = trace(n - 1)["samples"].astype("<f4").tobytes()

    def check(arr, kind, full=False):
        path, dtype = paths[kind]
        if arr.dtype != dtype or arr.dtype.itemsize != dtype.itemsize or arr.shape != (n,):
            raise SystemExit(f"{path}: got {arr.dtype} {arr.shape}, expected {dtype} ({n},)")
        if arr[0]["trace_id"] != 0 or arr[n - 1]["trace_id"] != n - 1:
            raise SystemExit(f"{path}: trace_id of the first/last record is {arr[0]['trace_id']}/{arr[-1]['trace_id']}")
        if full:
            for i in sorted({i for i in (0, 1, n // 3, n // 2, n - 2, n - 1) if 0 <= i < n}):
                check_record(arr, i, path)

    # The one sanity check: what NumPy sees in the files npy wrote.
    data = {}
    for kind, (path, dtype) in paths.items():
        data[kind] = np.load(path)
        check(data[kind], kind, full=True)
        print(f"  {os.path.basename(path)}: np.load gives {n} records of {dtype.itemsize} bytes, "
              f"dtype as expected, values checked", file=sys.stderr, flush=True)

    def load(kind):
        def measure():
            t = time.perf_counter()
            arr = np.load(paths[kind][0])
            elapsed = time.perf_counter() - t
            check(arr, kind)
            return elapsed
        return measure

    def save(kind):
        arr = data[kind]
        nbytes = n * arr.dtype.itemsize

        def measure():
            remove(out)
            os.sync()
            t = time.perf_counter()
            np.save(out, arr)
            elapsed = time.perf_counter() - t
            size = os.path.getsize(out)
            with open(out, "rb") as f:
                f.seek(-len(tail), os.SEEK_END)
                end = f.read(len(tail))
            if size < nbytes or end != tail:
                raise SystemExit(f"{out}: {size} bytes, expected {nbytes} data bytes ending in the last samples")
            remove(out)
            return elapsed
        return measure

    for path, _ in paths.values():
        warm(path)
    aligned, packed = n * ALIGNED.itemsize, n * PACKED.itemsize
    hot = aligned + aligned // 2
    rounds([("np_load_aligned", aligned, load("aligned")), ("np_load_packed", packed, load("packed"))], repeat, hot)
    rounds([("np_save_aligned", aligned, save("aligned")), ("np_save_packed", packed, save("packed"))], repeat, hot)


def rounds(measures, repeat, hot):
    """Times each (name, bytes, measure); `measure()` runs once and returns seconds.

    Touches `hot` bytes of memory right before each run (see `heat`)."""
    # One untimed round first, as in the Rust benches: the first touch of memory the VM has
    # not used lately is far slower, whichever measurement does it.
    for name, _, measure in measures:
        heat(hot)
        print(f"  {name:<18} warm-up: {measure():.3f} s (not counted)", file=sys.stderr, flush=True)
    times = {name: [] for name, _, _ in measures}
    for r in range(repeat):
        # Each round starts one measurement later, as in the Rust benches.
        for k in range(len(measures)):
            name, _, measure = measures[(r + k) % len(measures)]
            heat(hot)
            t = measure()
            print(f"  {name:<18} run {r + 1}/{repeat}: {t:.3f} s", file=sys.stderr, flush=True)
            times[name].append(t)
    for name, nbytes, _ in measures:
        runs = times[name]
        print(f"bench {name} best={min(runs):.6f} median={statistics.median(runs):.6f} bytes={nbytes}", flush=True)


def heat(nbytes):
    """Touches `nbytes` of fresh memory (NumPy advises huge pages for it) and frees it, so
    the next run finds that much free memory the host has backed, as benches/common/mod.rs."""
    buf = np.empty(nbytes, np.uint8)
    buf[::4096] = 1
    del buf


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
