#!/usr/bin/env python3
"""The browser test's files and NumPy's values of them.

Usage: python3 make_files.py OUT_DIR SPEC.json

SPEC.json: {"corpus": CORPUS_DIR, "corpus_files": [...], "big_rows": N, "big_ranges":
[[a, b], ...], "npz_rows": N, "npz_ranges": [[a, b], ...]}. Writes into OUT_DIR:

- big.npy: N records of a nested dtype with a subarray field (tens of MB), to be read by
  ranges;
- big.npz: a stored member `traces` (records, read by ranges) and a deflated member
  `meta` (floats, read whole), written as np.savez writes members (zip64 local headers);
- truncated.npy: big.npy's first 100,000 bytes;
- changing.npy: 2,000 records (342 kB), which the test changes while the page has it open;
- expected.json: NumPy's values, in numpy_values.py's canonical form, of the corpus files
  named, of big.npy's rows in each range, and of big.npz's members.
"""

import json
import sys
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy_values as nv  # noqa: E402

BIG_DTYPE = np.dtype(
    [
        ("trace_id", "<i8"),
        ("receiver", [("x", ">f8"), ("y", "<f8"), ("z", "<f4")]),
        ("t0", "<M8[us]"),
        ("flags", "u1"),
        ("samples", "<f4", (32,)),
        ("station", "S6"),
    ]
)


def records(n, seed):
    """n records of BIG_DTYPE, the same for the same seed; a few NaNs and infinities."""
    rng = np.random.default_rng(seed)
    a = np.zeros(n, BIG_DTYPE)
    a["trace_id"] = np.arange(n, dtype=np.int64) * 3 + 1_000_000_007
    a["receiver"]["x"] = rng.normal(5e5, 1e3, n)
    a["receiver"]["y"] = rng.normal(4e6, 1e3, n)
    a["receiver"]["z"] = rng.normal(100, 5, n).astype(np.float32)
    a["t0"] = np.datetime64("2024-01-01T00:00:00", "us") + np.arange(n) * np.timedelta64(1_500_000, "us")
    a["flags"] = rng.integers(0, 256, n, dtype=np.uint8)
    samples = rng.standard_normal((n, 32)).astype(np.float32)
    samples[::9973, 0] = np.nan
    samples[::7919, 31] = np.inf
    a["samples"] = samples
    a["station"] = np.char.add(b"ST", np.char.zfill(np.char.mod("%d", np.arange(n) % 10000), 4).astype("S4"))
    return a


def columns(a):
    """NumPy's values of every leaf of `a` (C order), as numpy_values.py writes them."""
    return {path: col["values"] for path, col in nv.describe(a, False).items()}


def write_npz(path, stored, deflated):
    """An archive as np.savez writes its members (zip64 local headers), one stored, one deflated."""
    with zipfile.ZipFile(path, "w") as z:
        for name, array, method in (("traces", stored, zipfile.ZIP_STORED), ("meta", deflated, zipfile.ZIP_DEFLATED)):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            with z.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, array, allow_pickle=False)


def corpus_entries(corpus, files):
    """numpy_values.py's entries of the corpus files named: by file, a list (one per member)."""
    out = {}
    for rel in files:
        path = corpus / rel
        if path.suffix == ".npy":
            out[rel] = [nv.entry(lambda: open(path, "rb"), rel, None)]
        else:
            with zipfile.ZipFile(path) as z:
                out[rel] = [nv.entry(lambda: z.open(name), rel, name) for name in z.namelist()]
    return out


def main():
    out = Path(sys.argv[1])
    spec = json.loads(Path(sys.argv[2]).read_text())
    out.mkdir(parents=True, exist_ok=True)

    big = records(spec["big_rows"], 7)
    np.save(out / "big.npy", big)
    (out / "truncated.npy").write_bytes((out / "big.npy").read_bytes()[:100_000])
    np.save(out / "changing.npy", records(2000, 3))

    traces = records(spec["npz_rows"], 11)
    meta = np.round(np.linspace(0, 1000, 60_000), 2).reshape(20_000, 3)
    write_npz(out / "big.npz", traces, meta)

    expected = {
        "corpus": corpus_entries(Path(spec["corpus"]), spec["corpus_files"]),
        "big": {
            "descr": repr(np.lib.format.dtype_to_descr(BIG_DTYPE)),
            "itemsize": BIG_DTYPE.itemsize,
            "rows": [columns(big[a:b]) for a, b in spec["big_ranges"]],
        },
        "npz": {
            "traces": [columns(traces[a:b]) for a, b in spec["npz_ranges"]],
            "meta": columns(meta),
            "meta_shape": list(meta.shape),
        },
    }
    (out / "expected.json").write_text(json.dumps(expected))
    print(f"wrote {out}: big.npy {(out / 'big.npy').stat().st_size} bytes, big.npz {(out / 'big.npz').stat().st_size} bytes")


if __name__ == "__main__":
    main()
