#!/usr/bin/env python3
"""Corrupted Arrow IPC and Parquet files through `npy convert X Y.npy` (issue 32, item 3).

Makes valid small files (written by npy from .npy files, and by pyarrow), corrupts them
(bit flips, truncations, byte overwrites; a fixed seed, so runs are comparable), feeds each
to `npy convert` under /usr/bin/time -v, and counts exit codes, panics, aborts and the peak
RSS. Run with the venv's Python (numpy, pyarrow):

    /work/wt/venv/bin/python fuzz/corrupt_experiment.py --npy target/debug/npy --out target/corrupt
"""

import argparse
import collections
import os
import random
import re
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq


def valid_files(npy, out):
    """Valid .arrow and .parquet files, by npy (from .npy) and by pyarrow."""
    src = os.path.join(out, "src")
    os.makedirs(src, exist_ok=True)
    arrays = {
        "f8": np.linspace(0, 1, 200),
        "i4_2d": np.arange(300, dtype="<i4").reshape(100, 3),
        "rec": np.array([(i, i * 0.5, b"ab%d" % i) for i in range(120)],
                        dtype=[("a", "<i8"), ("b", "<f4"), ("c", "S5")]),
        "u": np.array(["x" * (i % 7) for i in range(150)], dtype="<U6"),
        "b1": np.arange(64) % 3 == 0,
    }
    made = []
    for name, arr in arrays.items():
        path = os.path.join(src, name + ".npy")
        np.save(path, arr)
        for ext in ("arrow", "parquet"):
            dst = os.path.join(src, f"npy-{name}.{ext}")
            subprocess.run([npy, "convert", path, dst], check=True, capture_output=True)
            made.append(dst)
    table = pa.table({
        "x": pa.array(np.arange(500, dtype="int64")),
        "y": pa.array(np.random.default_rng(1).random(500)),
        "s": pa.array(["v%d" % (i % 13) for i in range(500)]),
    })
    for name, kwargs in [("plain", {}), ("gzip", {"compression": "gzip"}),
                         ("groups", {"row_group_size": 100}),
                         ("nodict", {"use_dictionary": False, "compression": "none"})]:
        dst = os.path.join(src, f"pa-{name}.parquet")
        pq.write_table(table, dst, **kwargs)
        made.append(dst)
    for name, kwargs in [("plain", {"compression": "uncompressed"}),
                         ("chunks", {"compression": "uncompressed", "chunksize": 100})]:
        dst = os.path.join(src, f"pa-{name}.arrow")
        feather.write_feather(table.select(["x", "y"]), dst, **kwargs)
        made.append(dst)
    return made


def corrupt(data, rng):
    """One corruption of `data` and its label."""
    data = bytearray(data)
    kind = rng.choice(["flip", "truncate", "overwrite"])
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif kind == "truncate":
        data = data[: rng.randrange(len(data))]
    else:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            n = rng.randint(1, 8)
            fill = rng.choice([b"\xff", b"\x7f", b"\x00", None])
            chunk = fill * n if fill else bytes(rng.randrange(256) for _ in range(n))
            data[i:i + n] = chunk[: len(data) - i]
    return kind, bytes(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--npy", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=600)
    ap.add_argument("--seed", type=int, default=32)
    args = ap.parse_args()
    npy = os.path.abspath(args.npy)
    os.makedirs(args.out, exist_ok=True)
    sources = valid_files(npy, args.out)
    rng = random.Random(args.seed)
    cases = os.path.join(args.out, "cases")
    os.makedirs(cases, exist_ok=True)
    tally = collections.Counter()
    worst = []
    for n in range(args.count):
        src = sources[n % len(sources)]
        kind, data = corrupt(open(src, "rb").read(), rng)
        ext = src.rsplit(".", 1)[1]
        path = os.path.join(cases, f"{n:03d}-{kind}-{os.path.basename(src)}")
        with open(path, "wb") as f:
            f.write(data)
        out = os.path.join(args.out, "out.npy")
        try:
            p = subprocess.run(["/usr/bin/time", "-v", npy, "convert", path, out],
                               capture_output=True, text=True, timeout=120)
            err, code = p.stderr, p.returncode
        except subprocess.TimeoutExpired:
            tally["timeout"] += 1
            print("TIMEOUT", path)
            continue
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
        status = re.search(r"Command terminated by signal (\d+)", err)
        tally[ext] += 1
        uncaught = "panicked at" in err or code == 101
        if not uncaught:
            # A panic's backtrace, symbolized, takes a debug build to 300 MB.
            worst.append((rss, path))
        if status:
            tally["signal " + status.group(1)] += 1
            print("SIGNAL", status.group(1), path, err.splitlines()[:3])
        elif uncaught:
            tally["panic"] += 1
            line = next((l for l in err.splitlines() if "panicked" in l), "")
            print("PANIC", path, line[:200])
        elif code == 0:
            tally["ok"] += 1
        else:
            tally[f"exit {code}"] += 1
            first = err.splitlines()[0] if err else ""
            if "(it panicked:" in err:
                tally["panic caught (an error)"] += 1
                print("CAUGHT", path, first[:200])
            if not first.startswith("error: reading '"):
                tally["error not naming the input"] += 1
                print("UNNAMED", path, first[:200])
    worst.sort(reverse=True)
    print(dict(sorted(tally.items())))
    print("peak RSS (MB) but for uncaught panics, largest five:", [(r // 1024, os.path.basename(p)) for r, p in worst[:5]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
