"""The input of bench.R made with NumPy: python inputs.py DIR [F8_BYTES]

- DIR/f8.npy: F8_BYTES data bytes (default 100,000,000: 12,500,000 doubles) of `<f8` (a
  seeded random walk), as np.save writes them (a 128-byte version 1.0 header).

The traces bench.R reads are the seismic example's file, which `cargo xtask bench` makes
(`cargo run --release --example seismic`); the CSV fread reads, bench.R writes itself with
data.table's fwrite (where data.table is installed).
"""

import os
import sys
from pathlib import Path

import numpy as np


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__.split("\n\n")[0])
    out = Path(sys.argv[1])
    f8_bytes = int(sys.argv[2]) if len(sys.argv) == 3 else 100_000_000
    if f8_bytes <= 0 or f8_bytes % 8:
        raise SystemExit(
            f"inputs.py: F8_BYTES must be a positive multiple of 8, not {f8_bytes}"
        )
    out.mkdir(parents=True, exist_ok=True)
    f8 = out / "f8.npy"
    np.save(f8, np.cumsum(np.random.default_rng(7).standard_normal(f8_bytes // 8)))
    print(f"# inputs: {f8} ({f8.stat().st_size} bytes)", flush=True)


if __name__ == "__main__":
    os.umask(0o022)
    main()
