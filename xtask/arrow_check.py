#!/usr/bin/env python3
"""pyarrow reads what `npy convert` writes: every .npy converted to an Arrow IPC file and
to Parquet holds, column by column, NumPy's values; converted back, it is the same file.

Usage: python3 arrow_check.py NPY WORK DIR [DIR...]

For every .npy under each DIR but object arrays (which have no Arrow form), runs
`NPY convert FILE WORK/x.arrow --residue` and `... WORK/x.parquet --residue` (again with
--days-as-int64 when the days do not fit Date32), opens each with pyarrow
(`pyarrow.ipc.open_file`, `pyarrow.parquet.read_table`) and compares every column with
np.load's values:

  1-D records        one column per field (in order), nested records as structs by field
  scalars            one column, `values`; a 0-d array is one row
  N-d arrays         one row per index of the first axis, a fixed-size list of the row's
                     items in C order (whatever the file's order), which pyarrow reads
                     as the arrow.fixed_shape_tensor extension of the row's shape
  subarrays          fixed-size lists (nested for several dims)
  bool, ints         equal; floats (f2 as float16) equal bit for bit, any NaN a NaN
  complex            [re, im]
  datetime64,        the int64 count of the unit (Date32 days for [D]), NaT as null
  timedelta64        (Parquet: pyarrow reads datetime64[s] as int64, see seconds())
  S                  bytes, trailing NULs stripped
  U                  str, trailing NULs stripped; code units that are not Unicode scalar
                     values (lone surrogates, past U+10FFFF: NumPy keeps them, tolist()
                     cannot give them) as U+FFFD each
  V                  the bytes as stored (V0 and empty records: empty binary values)
  long double        its bytes in little-endian order (each part's, for complex)

The `numpy.residue` column (padding and b1 bytes) is not compared. Then converts each back
(`NPY convert WORK/x.arrow WORK/back.npy`) and compares the bytes with the original; a
file whose header is not the one np.save writes (legacy spellings) must come back with
np.save's header and the same data. The same again for each file as pyarrow rewrites it
(read, then written with `pq.write_table` or an IPC file writer): a table a pyarrow user
saved converts back to the original (but for PYARROW_REWRITE_LOSES's three Parquet files,
which say why).

Every .npz without object members is converted whole (`NPY convert A.npz WORK/t.arrow
--residue`, and to Parquet): a table of one column per member, each holding NumPy's
values of that member as above (a record member a struct of its fields); converted back,
an archive of the same members byte for byte. An archive whose members differ in length
must be refused, and NumPy must agree that they do.

Prints each failure (file, format, column), then `N files checked (M with legacy headers),
A archives (R refused: ...)` (`, K failed` if any did); exits 1 on any failure, or when no
file was found.
"""

import io
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq
from numpy.lib import _format_impl as npformat

MAX_HEADER = 16 << 20
TIMEOUT = 120
RESIDUE = "numpy.residue"
NAT = -(1 << 63)


class Bad(Exception):
    pass


def run(npy, *args):
    cmd = [str(npy), "convert", *map(str, args), "--max-header-size", str(MAX_HEADER)]
    return subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)


def convert(npy, src, dst, *flags):
    out = run(npy, src, dst, *flags)
    if out.returncode != 0 and b"Date32" in out.stderr:
        out = run(npy, src, dst, *flags, "--days-as-int64")
    if out.returncode != 0:
        raise Bad("npy convert to %s: exit %d: %s" % (dst.suffix, out.returncode, out.stderr.decode(errors="replace").strip()))


# --- what pyarrow gives, as Python values --------------------------------------------


def arrow_values(arr):
    """A pyarrow Array as Python values: structs as dicts, lists as lists, times as ints."""
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = arr.storage
    t = arr.type
    valid = arr.is_valid().to_pylist()
    if pa.types.is_struct(t):
        children = [arrow_values(c) for c in arr.flatten()]
        names = [t.field(i).name for i in range(t.num_fields)]
        return [
            {n: c[k] for n, c in zip(names, children)} if valid[k] else None for k in range(len(arr))
        ]
    if pa.types.is_fixed_size_list(t):
        n = t.list_size
        items = arrow_values(arr.flatten()) if n else []
        # flatten() leaves out the items of null slots: walk the valid ones.
        out, at = [], 0
        for k in range(len(arr)):
            if valid[k]:
                out.append(items[at : at + n])
                at += n
            else:
                out.append(None)
        return out
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_date64(t):
        return arr.cast(pa.int64()).to_pylist()
    if pa.types.is_date32(t):
        return arr.cast(pa.int32()).to_pylist()
    return arr.to_pylist()


# --- what NumPy says ---------------------------------------------------------------


def ucs4_text(raw, dtype):
    """A U element's code units, decoded as NumPy holds them: invalid ones as U+FFFD."""
    order = ">" if dtype.byteorder == ">" else "<"
    units = np.frombuffer(raw, dtype=order + "u4")
    chars = [chr(u) if u < 0x110000 and not 0xD800 <= u < 0xE000 else "\ufffd" for u in units.tolist()]
    return "".join(chars).rstrip("\0")


class Leaf:
    """An expected leaf that is not compared by ==: a float or a time."""

    def __init__(self, value, dtype):
        self.value = value
        self.dtype = dtype

    def __repr__(self):
        return "%r(%s)" % (self.value, self.dtype)


def expect(a, dtype):
    """The expected Python value of one element: `a` is a view of it (a 0-d array, or an
    array of a subarray's dims) in the file's dtype and byte order."""
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return expect_dims(a.reshape(shape), base)
    if dtype.names is not None:
        if not dtype.names:
            return {}
        return {name: expect(a[name], dtype.fields[name][0]) for name in dtype.names}
    raw = a.tobytes()
    kind = dtype.kind
    order = ">" if dtype.byteorder == ">" else "<"
    if kind == "b":
        return raw[0] != 0
    if kind in "iu":
        return int(a.item())
    if kind == "f":
        if dtype.itemsize > 8:
            return little(raw, dtype.itemsize, order)
        return Leaf(a.astype(dtype.newbyteorder("=")), dtype)
    if kind == "c":
        if dtype.itemsize > 16:
            return little(raw, dtype.itemsize // 2, order)
        part = np.dtype(order + "f%d" % (dtype.itemsize // 2))
        native = part.newbyteorder("=")
        return [Leaf(v, part) for v in np.frombuffer(raw, dtype=part).astype(native)]
    if kind in "Mm":
        v = int(np.frombuffer(raw, dtype=order + "i8")[0])
        return None if v == NAT else v
    if kind == "S":
        return raw.rstrip(b"\0")
    if kind == "U":
        return ucs4_text(raw, dtype)
    if kind == "V":
        return raw
    raise Bad("no expectation for dtype %s" % dtype)


def little(raw, unit, order):
    """Long double bytes as npy-arrow gives them: each `unit` bytes in little-endian order
    (the byte order of the machines that have an 80-bit long double)."""
    if order == "<":
        return raw
    return b"".join(raw[i : i + unit][::-1] for i in range(0, len(raw), unit))


def expect_dims(a, base):
    """Nested lists over the dims of `a` (views, never scalars), elements of `base`."""
    if a.ndim == 0:
        return expect(a, base)
    return [expect_dims(a[i, ...], base) for i in range(a.shape[0])]


def same(got, want):
    if isinstance(want, Leaf):
        if got is None:
            return False
        native = want.dtype.newbyteorder("=")
        g = np.asarray(got).astype(native)
        if np.isnan(want.value):
            return bool(np.isnan(g))
        return g.tobytes() == np.asarray(want.value, dtype=native).tobytes()
    if isinstance(want, dict):
        if want == {} and got in (b"", {}):
            return True  # an empty record: Parquet stores it as empty binary values
        return isinstance(got, dict) and list(got) == list(want) and all(same(got[k], want[k]) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, bool):
        return got is want
    return type(got) is type(want) and got == want


def columns(arr):
    """The expected columns of an array: (name, dtype of its elements, the column as an
    array: one element per row for 1-D, the whole array for N-d), and the rows."""
    dt = arr.dtype
    if arr.ndim > 1:
        return [("values", dt, arr)], arr.shape[0]
    flat = arr.reshape(-1)
    if dt.names is not None:
        return [(name, dt.fields[name][0], flat[name]) for name in dt.names], len(flat)
    return [("values", dt, flat)], len(flat)


def fast_equal(col, dtype, values):
    """A quick check of a column of numbers without nulls: True, False, or None (not
    this kind)."""
    if dtype.kind not in "biuf" or dtype.itemsize > 8 or dtype.subdtype or col.null_count:
        return None
    t = col.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
        return None
    kind = {"b": "bool", "i": "int%d", "u": "uint%d", "f": "float%d"}[dtype.kind]
    want_type = pa.from_numpy_dtype(np.dtype(kind % (dtype.itemsize * 8) if "%" in kind else kind))
    if t != want_type:
        return False
    native = dtype.newbyteorder("=") if dtype.byteorder not in "|=" else dtype
    want = values.astype(native)
    got = col.to_numpy(zero_copy_only=False).astype(native)
    if dtype.kind == "f":
        nan = np.isnan(want)
        return bool(np.array_equal(nan, np.isnan(got)) and want[~nan].tobytes() == got[~nan].tobytes())
    return bool(np.array_equal(want, got))


def seconds(dtype):
    """Whether a dtype is datetime64[s]: Parquet has no timestamp in seconds, so arrow-rs
    stores its counts as plain INT64 (with timestamp[s] in the embedded Arrow schema,
    which arrow-rs reads back but pyarrow does not apply): pyarrow reads int64, and an
    N-d array of them as a plain fixed-size list (the tensor's storage type differs)."""
    return dtype.kind == "M" and np.datetime_data(dtype) == ("s", 1)


def check_table(table, arr, label):
    want_columns, rows = columns(arr)
    names = [n for n in table.column_names if n != RESIDUE]
    if names != [n for n, _, _ in want_columns]:
        raise Bad("%s: columns %s, NumPy's fields %s" % (label, names, [n for n, _, _ in want_columns]))
    if names and table.num_rows != rows:
        raise Bad("%s: %d rows, NumPy has %d" % (label, table.num_rows, rows))
    for name, dtype, values in want_columns:
        col = table.column(name).combine_chunks()
        if arr.ndim > 1 and not (label == "parquet" and seconds(dtype)):
            t = col.type
            if not isinstance(t, pa.FixedShapeTensorType) or list(t.shape) != list(arr.shape[1:]):
                raise Bad("%s: column %r is %s, not a fixed_shape_tensor of shape %s" % (label, name, t, arr.shape[1:]))
        if arr.ndim <= 1:
            quick = fast_equal(col, dtype, values)
            if quick is True:
                continue
            if quick is False:
                raise Bad("%s: column %r differs from NumPy's values" % (label, name))
            want = [expect(values[i, ...], dtype) for i in range(rows)]
        else:
            # One row per index of the first axis, its items in C order.
            want = []
            for i in range(rows):
                row = np.ravel(values[i, ...], order="C")
                want.append([expect(row[j, ...], dtype) for j in range(row.shape[0])])
        got = arrow_values(col)
        for k, (g, w) in enumerate(zip(got, want)):
            if not same(g, w):
                raise Bad("%s: column %r row %d: pyarrow reads %r, NumPy has %r" % (label, name, k, g, w))


def header_and_data(path):
    with open(path, "rb") as f:
        version = npformat.read_magic(f)
        header = npformat._read_array_header(f, version, max_header_size=MAX_HEADER)
        return version, header, f.tell(), f.read()


def canonical(path):
    """Whether the file's header is the one np.save writes for it."""
    version, (shape, fortran, dtype), offset, _ = header_and_data(path)
    buf = io.BytesIO()
    d = {"descr": npformat.dtype_to_descr(dtype), "fortran_order": fortran, "shape": shape}
    npformat._write_array_header(buf, d, version)
    return Path(path).read_bytes()[:offset] == buf.getvalue()


# Files whose Parquet form loses something when pyarrow rewrites it (see check_file):
# a table of no columns keeps its rows only in npy's `numpy.rows` key, which pyarrow does
# not copy; rows of zero-length fixed-size lists (shape (5, 0, 3)) pyarrow writes in a
# form arrow-rs 59's reader refuses ("misaligned row").
PYARROW_REWRITE_LOSES = {"zero_itemsize_struct.npy", "5x0x3_b1.npy", "5x0x3_f4.npy"}


def rewrite(ext, src, dst):
    """What a pyarrow user saving our table does: read it, write it again."""
    if ext == "parquet":
        pq.write_table(pq.read_table(str(src)), str(dst))
    else:
        table = pa.ipc.open_file(str(src)).read_all()
        with pa.ipc.new_file(str(dst), table.schema) as w:
            w.write_table(table)


def same_file(path, back, what):
    """True when `back` is `path` byte for byte, False when only its header is spelled as
    np.save spells it (a legacy header); else Bad."""
    if back.read_bytes() == Path(path).read_bytes():
        return True
    (_, h1, _, d1), (_, h2, _, d2) = header_and_data(path), header_and_data(back)
    if canonical(path) or h1 != h2 or d1 != d2:
        raise Bad("%s: converted back, not the same file" % what)
    return False


def check_file(npy, path, work):
    """Returns True when every round trip is byte for byte, False when the header came
    back as np.save writes it (a legacy header). Round trips: our file back to .npy, and
    our file as pyarrow rewrites it (read and written again) back to .npy."""
    arr = np.load(path, allow_pickle=False, max_header_size=MAX_HEADER)
    exact = True
    for ext, read in (("arrow", lambda p: pa.ipc.open_file(p).read_all()), ("parquet", pq.read_table)):
        mid, again, back = work / ("x." + ext), work / ("pa." + ext), work / "back.npy"
        for p in (mid, again, back):
            p.unlink(missing_ok=True)
        convert(npy, path, mid, "--residue")
        check_table(read(str(mid)), arr, ext)
        convert(npy, mid, back)
        exact &= same_file(path, back, ext)
        rewrite(ext, mid, again)
        back.unlink()
        if ext == "parquet" and Path(path).name in PYARROW_REWRITE_LOSES:
            try:
                convert(npy, again, back)
                same_file(path, back, ext + " rewritten by pyarrow")
            except Bad:
                continue
            raise Bad("rewritten by pyarrow, it now converts back: drop it from PYARROW_REWRITE_LOSES")
        convert(npy, again, back)
        exact &= same_file(path, back, ext + " rewritten by pyarrow")
    return exact


def member_table(col, arr):
    """A member's column as the table its array alone would make (see check_table): a
    record member's struct as one column per field, else one column, `values`."""
    if arr.dtype.names is not None and arr.ndim <= 1:
        return pa.Table.from_batches([pa.RecordBatch.from_struct_array(col)])
    return pa.table({"values": col})


def archive_members(path):
    """The raw bytes of each member of an archive, by name (without `.npy`)."""
    with zipfile.ZipFile(path) as zf:
        return {n[:-4] if n.endswith(".npy") else n: zf.read(n) for n in zf.namelist()}


def check_archive(npy, path, work):
    """An archive as one table (a column per member): pyarrow reads each member's values
    in its column, and the table converts back to an archive of the same members, byte
    for byte. Returns False when npy refuses it because its members differ in length,
    which NumPy confirms."""
    with np.load(path, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    for ext, read in (("arrow", lambda p: pa.ipc.open_file(p).read_all()), ("parquet", pq.read_table)):
        mid, back = work / ("t." + ext), work / "back.npz"
        for p in (mid, back):
            p.unlink(missing_ok=True)
        out = run(npy, path, mid, "--residue")
        if out.returncode != 0:
            lengths = {a.shape[0] if a.ndim else 1 for a in arrays.values()}
            if b"rows, where member" in out.stderr and len(lengths) > 1:
                return False
            raise Bad("npy convert to %s: exit %d: %s" % (ext, out.returncode, out.stderr.decode(errors="replace").strip()))
        table = read(str(mid))
        names = [n for n in table.column_names if not n.startswith(RESIDUE)]
        if names != list(arrays):
            raise Bad("%s: columns %s, NumPy's members %s" % (ext, names, list(arrays)))
        for name, arr in arrays.items():
            check_table(member_table(table.column(name).combine_chunks(), arr), arr, "%s member %r" % (ext, name))
        convert(npy, mid, back)
        if archive_members(back) != archive_members(path):
            raise Bad("%s: converted back, the members are not the same" % ext)
    return True


def npz_files(root):
    for p in sorted(Path(root).rglob("*.npz")):
        with np.load(p, allow_pickle=False) as npz:
            try:
                if any(npz[name].dtype.hasobject for name in npz.files):
                    continue
            except ValueError:  # object members: no Arrow form
                continue
        yield p


def npy_files(root):
    for p in sorted(Path(root).rglob("*.npy")):
        try:
            with open(p, "rb") as f:
                version = npformat.read_magic(f)
                _, _, dtype = npformat._read_array_header(f, version, max_header_size=MAX_HEADER)
        except Exception as e:  # not an .npy NumPy reads: not ours to check here
            print("skip %s: %s" % (p, e))
            continue
        if not dtype.hasobject:
            yield p


def main(argv):
    # Legacy (Python 2) headers are part of the corpus on purpose.
    warnings.simplefilter("ignore", UserWarning)
    if len(argv) < 4:
        print(__doc__)
        return 2
    npy, work, roots = Path(argv[1]), Path(argv[2]), argv[3:]
    work.mkdir(parents=True, exist_ok=True)
    failed = []

    def attempt(check, path):
        """check(npy, path, work), or None (the failure printed and counted)."""
        try:
            return check(npy, path, work)
        except Bad as e:
            print("FAIL %s: %s" % (path, e))
        except Exception as e:  # pyarrow or NumPy refusing: a failure of this file
            print("FAIL %s: %s: %s" % (path, type(e).__name__, e))
        failed.append(path)
        return None

    checked = legacy = archives = ragged = 0
    for root in roots:
        for path in npy_files(root):
            checked += 1
            legacy += attempt(check_file, path) is False
        for path in npz_files(root):
            archives += 1
            ragged += attempt(check_archive, path) is False
    summary = "%d files checked (%d with legacy headers), %d archives (%d refused: members of different lengths)" % (
        checked,
        legacy,
        archives,
        ragged,
    )
    if failed:
        summary += ", %d failed" % len(failed)
    print(summary)
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
