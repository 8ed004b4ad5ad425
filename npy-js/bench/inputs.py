#!/usr/bin/env python3
"""The inputs of bench.mjs, made with NumPy: python inputs.py DIR TRACES [F8_BYTES]

- DIR/f8.npy: F8_BYTES data bytes (default 100,000,000) of `<f8` (a seeded random walk),
  as np.save writes them.
- DIR/traces_columns.npz: np.savez_compressed of the fields of TRACES (the seismic
  example's 1,000,000 `Trace` records, align=True) as plain arrays, one member each:
  trace_id, receiver_x, receiver_y, receiver_z, t0, dt, flags, and samples as (n, 64) <f4.
  Plain arrays, because npyjs parses nothing else: a NumPy user saving a table for it
  saves its columns.
- DIR/column_f8.npy: 1,000,000,000 data bytes of `<f8` (a seeded random walk, written in
  pieces through np.lib.format.open_memmap), the column viewer.mjs computes the
  statistics of; made when missing or of another size.

Each file is made only when missing or made from another input: DIR/inputs.json holds
what they were made from (TRACES' size and modification time, F8_BYTES), so a second run
over the same directory reuses them (`cargo xtask bench` empties target/bench first, so it
makes them every run).
"""

import json
import os
import sys
from pathlib import Path

import numpy as np

# The archive's members: name, and the field of the records it holds.
MEMBERS = [
    ("trace_id", ("trace_id",)),
    ("receiver_x", ("receiver", "x")),
    ("receiver_y", ("receiver", "y")),
    ("receiver_z", ("receiver", "z")),
    ("t0", ("t0",)),
    ("dt", ("dt",)),
    ("flags", ("flags",)),
    ("samples", ("samples",)),
]


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__.split("\n\n")[0])
    out, traces = Path(sys.argv[1]), Path(sys.argv[2])
    f8_bytes = int(sys.argv[3]) if len(sys.argv) == 4 else 100_000_000
    if f8_bytes <= 0 or f8_bytes % 8:
        raise SystemExit(f"inputs.py: F8_BYTES must be a positive multiple of 8, not {f8_bytes}")
    out.mkdir(parents=True, exist_ok=True)
    column_f8(out / "column_f8.npy")
    stat = traces.stat()
    made_from = {"traces": str(traces.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "f8_bytes": f8_bytes}
    stamp = out / "inputs.json"
    f8, npz = out / "f8.npy", out / "traces_columns.npz"
    if stamp.exists() and f8.exists() and npz.exists() and json.loads(stamp.read_text()) == made_from:
        print(f"# inputs: reusing {f8} and {npz}", flush=True)
        return
    stamp.unlink(missing_ok=True)

    walk = np.cumsum(np.random.default_rng(7).standard_normal(f8_bytes // 8))
    np.save(f8, walk)

    records = np.load(traces, mmap_mode="r")
    columns = {}
    for name, path in MEMBERS:
        column = records
        for part in path:
            column = column[part]
        columns[name] = np.ascontiguousarray(column)
    if columns["samples"].shape != (len(records), 64):
        raise SystemExit(f"inputs.py: {traces}'s samples are {columns['samples'].shape}, not (n, 64)")
    np.savez_compressed(npz, **columns)
    stamp.write_text(json.dumps(made_from))
    print(
        f"# inputs: {f8} ({f8.stat().st_size} bytes), {npz} ({npz.stat().st_size} bytes, "
        f"{sum(c.nbytes for c in columns.values())} bytes of columns)",
        flush=True,
    )


def column_f8(path, n=125_000_000, piece=10_000_000):
    """The viewer's 1 GB column: a random walk, written a piece at a time."""
    if path.exists() and path.stat().st_size == 128 + 8 * n:
        print(f"# inputs: reusing {path}", flush=True)
        return
    rng = np.random.default_rng(80)
    out = np.lib.format.open_memmap(path, mode="w+", dtype="<f8", shape=(n,))
    last = 0.0
    for a in range(0, n, piece):
        b = min(n, a + piece)
        out[a:b] = last + np.cumsum(rng.standard_normal(b - a))
        last = float(out[b - 1])
    out.flush()
    del out
    print(f"# inputs: {path} ({path.stat().st_size} bytes)", flush=True)


if __name__ == "__main__":
    os.umask(0o022)
    main()
