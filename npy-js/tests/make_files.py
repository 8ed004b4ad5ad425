#!/usr/bin/env python3
"""Files NumPy writes for the JavaScript package's tests.

Usage: python3 make_files.py open|large|big DIR

`open`: records.npy (100,000 records: an id, a nested position, 16 float32 samples),
fortran.npy (a 40 x 30 float64 matrix in Fortran order), archive.npz (the records as a
stored member `stored` and a deflated member `deflated`, as np.savez and
np.savez_compressed write them), wide.npy (200 records of 1,000 fields: a version 2.0
header of 82 KB, past the 4,096 bytes `open` and `load` read first and the 64 KiB a
URL's first request reads).

`large`: image.npy (a 4 GiB <f4 image of 32,768 x 32,768) and fortran.npy (a 2.4 GB <f4
matrix of 30,000 x 20,000 in Fortran order), sparse on disk; prints what NumPy reads of
them as JSON (see `large`).

`big`: arrays of several MiB each, so that the package converts them in several of its
1 MiB pieces: plain numbers (`<f8`, `<i4`, `|u1`, `<c16`, `|b1`), big-endian ones (`>f4`,
`>i8`), strings (`<U6`, `|S5`) and a record array with a nested record, a big-endian
field, a boolean and a subarray.

Beside each NAME.npy, NAME.expect.json holds NumPy's values (see `expect`).
"""

import json
import sys
import zipfile
from pathlib import Path

import numpy as np


def records(n):
    dtype = np.dtype([("id", "<i8"), ("pos", [("x", "<f8"), ("y", ">f4")]), ("samples", "<f4", (16,))])
    a = np.zeros(n, dtype=dtype)
    a["id"] = np.arange(n) * 3 - 7
    a["pos"]["x"] = np.arange(n) / 8
    a["pos"]["y"] = -np.arange(n, dtype=np.float32)
    a["samples"] = np.arange(n * 16, dtype=np.float32).reshape(n, 16) / 4
    return a


def key(index):
    """NumPy's index for NpyFile.select's."""
    return tuple(slice(None) if i is None else slice(*i) if isinstance(i, list) else i for i in index)


def large(out):
    """Sparse files of 2 GiB and more, as np.lib.format.open_memmap writes them: a 4 GiB
    image and a 2.4 GB Fortran-order matrix, a few rows and scattered values set. Returns
    what NumPy reads of each: its header's fields and the values of some rows."""
    rng = np.random.default_rng(80)
    found = {}
    for name, shape, fortran, rows, selects in [
        (
            "image.npy",
            (32768, 32768),
            False,
            [(0, 1), (12345, 12346), (32767, 32768), (20000, 20003)],
            [[12345], [[12340, 12350, 5], [0, 32768, 4096]]],
        ),
        (
            "fortran.npy",
            (30000, 20000),
            True,
            [(0, 1), (12345, 12348), (29999, 30000)],
            [[None, 97], [[12344, 12348, 2], [0, 20000, 3880]]],
        ),
    ]:
        path = out / name
        a = np.lib.format.open_memmap(path, mode="w+", dtype="<f4", shape=shape, fortran_order=fortran)
        cols = slice(None) if not fortran else slice(None, None, 97)  # a Fortran row spans every column's page
        for start, stop in rows:
            a[start:stop, cols] = rng.standard_normal((stop - start, len(range(shape[1])[cols])), dtype=np.float32)
        i, j = rng.integers(0, shape[0], 200), rng.integers(0, shape[1], 200)
        a[i, j] = rng.standard_normal(200, dtype=np.float32)
        a[rows[1][0], -1] = np.float32("nan")
        a.flush()
        del a
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            start = f.tell()
            read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}[version]
            header_shape, header_fortran, dtype = read_header(f)
            offset = f.tell()
            f.seek(start)
            text = f.read(offset - start)[2 if version == (1, 0) else 4 :]
        m = np.load(path, mmap_mode="r")
        found[name] = {
            "version": list(version),
            "header": text.decode("latin1"),
            "descr": repr(np.lib.format.dtype_to_descr(dtype)),
            "shape": list(header_shape),
            "fortranOrder": header_fortran,
            "dataOffset": offset,
            "dataLength": m.nbytes,
            "fileLength": path.stat().st_size,
            # NaN as None: JSON has no NaN.
            "rows": [[start, stop, [[None if x != x else x for x in r] for r in m[start:stop].tolist()]] for start, stop in rows],
            # NpyFile.select's index (null: the whole axis; [start, stop, step]) and
            # NumPy's a[...] of it, its shape and its values in C order.
            "selects": [[index, list(m[key(index)].shape), [None if x != x else x for x in m[key(index)].ravel().tolist()]] for index in selects],
        }
    return found


def leaves(dtype, path=()):
    """(path, dims) of each scalar leaf, in field order (as numpy_values.py walks them)."""
    if dtype.names is not None:
        for name in dtype.names:
            yield from leaves(dtype.fields[name][0], path + (name,))
    elif dtype.subdtype is not None:
        base, shape = dtype.subdtype
        for p, dims in leaves(base, path):
            yield p, tuple(shape) + dims
    else:
        yield path, ()


def expect(a, out, stem):
    """NumPy's values of `a` beside stem.npy: stem.expect.json names, per scalar leaf (by
    dotted path, "" for a plain array), its values raveled as the package gives a column
    (Fortran order for a Fortran-order array's leaf without dims, else C): strings as a
    list, other values little-endian in stem.N.bin (booleans as bytes, complex numbers as
    real and imaginary parts), with `type` (`f8`, `b1`...) and `width`, the bytes of one
    element's values."""
    fortran = bool(a.flags.f_contiguous and not a.flags.c_contiguous)
    columns = {}
    for i, (path, dims) in enumerate(leaves(a.dtype)):
        v = a
        for name in path:
            v = v[name]
        order = "F" if fortran and not dims else "C"
        flat = np.ravel(v, order=order)
        base = flat.dtype.subdtype[0] if flat.dtype.subdtype else flat.dtype
        flat = flat.astype(base, copy=False)
        key = ".".join(path)
        if base.kind in "SU":
            columns[key] = {"strings": [x.decode("latin-1") if base.kind == "S" else x for x in flat.tolist()]}
            continue
        le = base.newbyteorder("<") if base.byteorder == ">" else base
        name = f"{stem}.{i}.bin"
        (out / name).write_bytes(flat.astype(le).tobytes())
        columns[key] = {"bin": name, "type": le.str[1:], "width": le.itemsize * int(np.prod(dims, dtype=np.int64))}
    (out / f"{stem}.expect.json").write_text(
        json.dumps({"descr": repr(np.lib.format.dtype_to_descr(a.dtype)), "shape": list(a.shape), "columns": columns})
    )


def saved(out, stem, a):
    """np.save of `a` as stem.npy, and its values beside it (`expect`)."""
    np.save(out / f"{stem}.npy", a)
    expect(a, out, stem)


def wide(n):
    """Records of 1,000 float32 fields with long names: a header of 82 KB."""
    dtype = np.dtype([(f"channel_{k:04d}_amplitude_in_millivolts_after_gain_and_offset_correction", "<f4")
                      for k in range(1_000)])
    a = np.zeros(n, dtype=dtype)
    for k, name in enumerate(dtype.names):
        a[name] = np.arange(n, dtype=np.float32) * (k + 1) / 8
    return a


def big(out):
    """The `big` arrays (see the module): values that differ from element to element and
    piece to piece, each array a few MiB."""
    n = 600_000
    k = np.arange(n)
    saved(out, "f8", np.sin(k) * 1e3 + k)
    saved(out, "i4", (np.arange(2 * n) * 2_654_435_761 % 2**32 - 2**31).astype("<i4"))
    saved(out, "u1", (np.arange(5 * n) * 7 % 251).astype("|u1"))
    saved(out, "c16", (k / 3 + 1j * (n - k)).astype("<c16"))
    saved(out, "b1", (np.arange(4 * n) % 3 == 1))
    saved(out, "f4_be", (np.cos(np.arange(2 * n)) * k.repeat(2)).astype(">f4"))
    saved(out, "i8_be", (k * -1_000_003 + 2**40).astype(">i8"))
    saved(out, "U6", np.array([f"u{i % 99991}\u00e9"[:6] for i in range(n // 2)], dtype="<U6"))
    saved(out, "S5", np.array([b"s%d" % (i % 997) for i in range(n)], dtype="|S5"))
    dtype = np.dtype([("id", "<u4"), ("pos", [("x", ">f8"), ("y", "<f4")]), ("ok", "|b1"), ("gains", "<i2", (5,))])
    r = np.zeros(250_000, dtype=dtype)
    m = np.arange(len(r))
    r["id"] = m * 3 + 1
    r["pos"]["x"] = m / 7 - 100
    r["pos"]["y"] = -m.astype(np.float32) / 2
    r["ok"] = m % 5 == 0
    r["gains"] = (m[:, None] * 5 + np.arange(5)) % 30000 - 15000
    saved(out, "records", r)


def main():
    kind, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    if kind == "open":
        a = records(100_000)
        np.save(out / "records.npy", a)
        np.save(out / "fortran.npy", np.asfortranarray(np.arange(1200.0).reshape(40, 30)))
        with zipfile.ZipFile(out / "archive.npz", "w") as z:
            with z.open("stored.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, a)
        with zipfile.ZipFile(out / "archive.npz", "a", compression=zipfile.ZIP_DEFLATED) as z:
            with z.open("deflated.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, a)
        expect(a, out, "records")
        expect(np.load(out / "fortran.npy"), out, "fortran")
        w = wide(200)
        np.save(out / "wide.npy", w)
        assert len(repr(np.lib.format.header_data_from_array_1_0(w))) > 64 << 10
        expect(w, out, "wide")
    elif kind == "big":
        big(out)
    elif kind == "large":
        print(json.dumps(large(out)))
    else:
        raise SystemExit(f"unknown kind {kind}")


if __name__ == "__main__":
    main()
