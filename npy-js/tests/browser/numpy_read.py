#!/usr/bin/env python3
"""NumPy's reading of a file the browser wrote, in numpy_values.py's canonical form.

Usage: python3 numpy_read.py FILE

Prints JSON: for a .npy, {"": ARRAY}; for a zip archive, {member: ARRAY} for every member,
each member's bytes taken from the archive by hand and decompressed by zlib (deflate) or
the `zstd` command (Zstandard, which this Python's zipfile cannot read: it needs 3.14),
their size and CRC-32 checked against the directory. ARRAY: {"descr", "shape",
"method", "columns": {path: values}}.
"""

import io
import json
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy_values as nv  # noqa: E402

METHODS = {0: "stored", 8: "deflate", 93: "zstd"}


def array(data, method):
    a = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
    return {
        "descr": repr(np.lib.format.dtype_to_descr(a.dtype)),
        "shape": list(a.shape),
        "method": method,
        "columns": {path: col.get("values", col) for path, col in nv.describe(a, False).items()},
    }


def member_bytes(raw, info):
    """A member's bytes: its data found through its local header, decompressed, checked."""
    sig, *_, name_len, extra_len = struct.unpack("<IHHHHHIIIHH", raw[info.header_offset : info.header_offset + 30])
    assert sig == 0x04034B50, f"{info.filename}: no local header"
    start = info.header_offset + 30 + name_len + extra_len
    stored = raw[start : start + info.compress_size]
    if info.compress_type == 0:
        data = stored
    elif info.compress_type == 8:
        data = zlib.decompress(stored, -15)
    elif info.compress_type == 93:
        data = subprocess.run(["zstd", "-d", "-c", "-q"], input=stored, capture_output=True, check=True).stdout
    else:
        raise ValueError(f"{info.filename}: compression method {info.compress_type}")
    assert len(data) == info.file_size, f"{info.filename}: {len(data)} bytes, the directory says {info.file_size}"
    assert zlib.crc32(data) == info.CRC, f"{info.filename}: CRC-32 {zlib.crc32(data):08x}, the directory says {info.CRC:08x}"
    return data


def main():
    path = Path(sys.argv[1])
    raw = path.read_bytes()
    if raw[:2] == b"PK":
        with zipfile.ZipFile(path) as z:
            out = {i.filename: array(member_bytes(raw, i), METHODS.get(i.compress_type)) for i in z.infolist()}
    else:
        out = {"": array(raw, None)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
