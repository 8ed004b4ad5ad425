"""The `python` part of `cargo xtask bench`: the npy package against NumPy, in the same
rounds. Prints `bench <name> best=<s> median=<s> bytes=<n>` lines.

usage: bench.py DIR BYTES REPEAT
"""
import gc
import sys
import time

import numpy as np

import npy
import traces

RECORDS = 1_000_000
MEMBERS = 5


def timed(f):
    gc.collect()
    start = time.perf_counter()
    result = f()
    return time.perf_counter() - start, result


def report(name, seconds, nbytes):
    seconds = sorted(seconds)
    print(f"bench {name} best={seconds[0]:.6f} median={seconds[len(seconds) // 2]:.6f} bytes={nbytes}", flush=True)


def rounds(directory, nbytes, repeat):
    f8 = directory / "f8.npy"
    np.save(f8, np.arange(nbytes // 8, dtype="<f8"))
    trace = directory / "trace.npy"
    np.save(trace, traces.make_traces(RECORDS))
    archive = directory / "w5.npz"
    n = nbytes // 8 // 4 // MEMBERS
    np.savez_compressed(archive, **{f"w{i}": np.round(np.sin(np.arange(n) * (i + 1) / 1000.0), 3) for i in range(MEMBERS)})
    objects = directory / "objects.npy"
    values = np.empty(RECORDS, dtype=object)
    values[:] = [{"id": i, "name": f"s{i % 100}", "ok": i % 3 == 0} for i in range(RECORDS)]
    np.save(objects, values, allow_pickle=True)
    del values

    cases = {
        "f8_npy": (lambda: npy.load(f8), f8),
        "f8_np": (lambda: np.load(f8), f8),
        "trace_npy": (lambda: npy.load(trace), trace),
        "trace_np": (lambda: np.load(trace), trace),
        "npz_npy": (lambda: npy.load_npz(archive).load_all(), archive),
        "npz_np": (lambda: dict(np.load(archive)), archive),
        "objects_npy": (lambda: npy.load(objects), objects),
        "objects_np": (lambda: np.load(objects, allow_pickle=True), objects),
    }
    times = {name: [] for name in cases}
    handover = {"vec_1m": [], "vec_10m": []}
    names = list(cases)
    pairs = list(zip(names[::2], names[1::2]))
    for round_ in range(repeat):
        # Each pair in turn, npy first in even rounds and NumPy first in odd ones: the
        # first large allocation after a large free pays the kernel's page compaction
        # (0.2-0.5 s of system time for 256 MiB, seen here), whichever side makes it.
        for pair in pairs:
            for name in pair if round_ % 2 == 0 else pair[::-1]:
                seconds, result = timed(cases[name][0])
                times[name].append(seconds)
                del result
        for name, count in (("vec_1m", RECORDS), ("vec_10m", 10 * RECORDS)):
            array, seconds = traces.handover_seconds(count)
            handover[name].append(seconds)
            del array
    check = npy.load(objects)
    assert check[7] == {"id": 7, "name": "s7", "ok": False}, check[7]
    for name, (_, path) in cases.items():
        report(name, times[name], path.stat().st_size)
    for name, count in (("vec_1m", RECORDS), ("vec_10m", 10 * RECORDS)):
        report(name, handover[name], count * traces.trace_dtype().itemsize)


if __name__ == "__main__":
    from pathlib import Path

    rounds(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
