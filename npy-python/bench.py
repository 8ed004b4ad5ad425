"""The `python` part of `cargo xtask bench`: the npy package against NumPy, in the same
rounds (REPEAT rounded up to an even number, each side first in half of them). Prints
`bench <name> best=<s> median=<s> bytes=<n>` lines.

usage: bench.py DIR BYTES REPEAT
"""

import gc
import statistics
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
    best, median = min(seconds), statistics.median(seconds)
    print(f"bench {name} best={best:.6f} median={median:.6f} bytes={nbytes}", flush=True)


def object_arrays():
    """Object arrays of a million values each: short strs, small dicts, and mixed plain
    values (ints, floats, None, strs, tuples of bytes and bools)."""
    strs = np.array([f"station {i % 977} trace {i}" for i in range(RECORDS)], dtype=object)
    dicts = np.empty(RECORDS, dtype=object)
    dicts[:] = [{"id": i, "name": f"s{i % 100}", "ok": i % 3 == 0} for i in range(RECORDS)]
    mixed = np.empty(RECORDS, dtype=object)
    mixed[:] = [(i, 1.5 * i, None, f"x{i % 10}", (b"y", i % 2 == 0))[i % 5] for i in range(RECORDS)]
    return {"strs": strs, "dicts": dicts, "mixed": mixed}


def rounds(directory, nbytes, repeat):
    f8_array = np.arange(nbytes // 8, dtype="<f8")
    f8 = directory / "f8.npy"
    np.save(f8, f8_array)
    trace_array = traces.make_traces(RECORDS)
    trace = directory / "trace.npy"
    np.save(trace, trace_array)
    half = f8_array[: nbytes // 16]
    n = nbytes // 8 // 4 // MEMBERS
    members = {f"w{i}": np.round(np.sin(np.arange(n) * (i + 1) / 1000.0), 3) for i in range(MEMBERS)}
    archive = directory / "w5.npz"
    np.savez_compressed(archive, **members)
    objects = {}
    for kind, values in object_arrays().items():
        objects[kind] = directory / f"objects_{kind}.npy"
        np.save(objects[kind], values, allow_pickle=True)
    del values

    out = {name: directory / f"out_{name}" for name in ("f8", "trace", "durable", "npz")}
    # Pairs, npy's side first: each is timed against NumPy's in the same round.
    cases = {
        "f8_npy": (lambda: npy.load(f8), f8),
        "f8_np": (lambda: np.load(f8), f8),
        "trace_npy": (lambda: npy.load(trace), trace),
        "trace_np": (lambda: np.load(trace), trace),
        "npz_npy": (lambda: npy.load(archive).load_all(), archive),
        "npz_np": (lambda: dict(np.load(archive)), archive),
        "save_f8_npy": (lambda: npy.save(out["f8"].with_suffix(".a.npy"), half), half.nbytes),
        "save_f8_np": (lambda: np.save(out["f8"].with_suffix(".b.npy"), half), half.nbytes),
        "save_trace_npy": (lambda: npy.save(out["trace"].with_suffix(".a.npy"), trace_array), trace_array.nbytes),
        "save_trace_np": (lambda: np.save(out["trace"].with_suffix(".b.npy"), trace_array), trace_array.nbytes),
        "save_durable_npy": (lambda: npy.save(out["durable"].with_suffix(".a.npy"), half, durable=True), half.nbytes),
        "save_durable_np": (lambda: np.save(out["durable"].with_suffix(".b.npy"), half), half.nbytes),
        "savez_c_npy": (lambda: npy.savez_compressed(out["npz"].with_suffix(".a.npz"), **members), archive),
        "savez_c_np": (lambda: np.savez_compressed(out["npz"].with_suffix(".b.npz"), **members), archive),
    }
    for kind, path in objects.items():
        cases[f"objects_{kind}_npy"] = (lambda p=path: npy.load(p), path)
        cases[f"objects_{kind}_np"] = (lambda p=path: np.load(p, allow_pickle=True), path)
    times = {name: [] for name in cases}
    handover = {"vec_1m": [], "vec_10m": []}
    names = list(cases)
    pairs = list(zip(names[::2], names[1::2], strict=True))
    # Each pair in turn, npy first in even rounds and NumPy first in odd ones: the first
    # large allocation after a large free pays the kernel's page compaction (0.2-0.5 s of
    # system time for 256 MiB, seen here), whichever side makes it. An even number of
    # rounds, so each side goes first as often (with 3, npy went first twice, and its
    # median was always a run that paid).
    for round_ in range(repeat + repeat % 2):
        for pair in pairs:
            for name in pair if round_ % 2 == 0 else pair[::-1]:
                seconds, result = timed(cases[name][0])
                times[name].append(seconds)
                del result
        for name, count in (("vec_1m", RECORDS), ("vec_10m", 10 * RECORDS)):
            array, seconds = traces.handover_seconds(count)
            handover[name].append(seconds)
            del array
    check_results(directory, objects, members, half)
    for name, (_, size) in cases.items():
        report(name, times[name], size if isinstance(size, int) else size.stat().st_size)
    for name, count in (("vec_1m", RECORDS), ("vec_10m", 10 * RECORDS)):
        report(name, handover[name], count * traces.trace_dtype().itemsize)


def check_results(directory, objects, members, half):
    """What was timed gave NumPy's results."""
    for kind, path in objects.items():
        ours, theirs = npy.load(path), np.load(path, allow_pickle=True)
        assert ours.tolist()[:1000] == theirs.tolist()[:1000] and len(ours) == len(theirs), kind
    for side in ("a", "b"):
        with np.load(directory / f"out_npz.{side}.npz") as back:
            assert all(np.array_equal(back[k], v) for k, v in members.items()), side
    a, b = (directory / f"out_f8.{side}.npy" for side in ("a", "b"))
    assert a.read_bytes() == b.read_bytes()


if __name__ == "__main__":
    from pathlib import Path

    rounds(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
