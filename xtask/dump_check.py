#!/usr/bin/env python3
"""`npy dump --format json` gives NumPy's values: every line parses with Python's json and
equals NumPy's tolist() under npy dump's documented mapping.

Usage: python3 dump_check.py NPY DIR [DIR...]

For every .npy file under each DIR, and every member of every .npz file there, runs
`NPY dump --format json FILE [--member NAME]` (its default header limit) and compares its
lines with NumPy's reading of the same array (np.load, allow_pickle=True for object
arrays): one line per row (a 1-D array's elements, an N-d array's items of the first
axis, a 0-d array's one value), each parsed with json.loads and compared leaf by leaf:

  records         dicts, fields in order          subarrays, rows   nested lists
  bool            True/False (exact type)         integers          equal ints
  f2, f4, f8      the number converted back to the dtype equals the value, bits
                  included (-0.0; any NaN matches a NaN); NaN, Infinity, -Infinity
                  as json reads them
  long double     the number's text read as np.longdouble equals the value
  complex         [re, im], each part as its float type
  S               repr() of the bytes           V    str() of the np.void
  U               the str                        datetime64  np.datetime_as_string, NaT null
  timedelta64     the int64 count of its units, NaT null
  objects         None, bools, ints and floats (as float64), complex [re, im], str,
                  bytes as repr(), lists, tuples, sets and frozensets as lists, dicts,
                  OrderedDicts and Counters as dicts when every key is a str (else lists
                  of [key, value]); ndarrays and NumPy scalars as the dtypes above;
                  dates and times as isoformat(); timedelta, timezone, Decimal, Fraction,
                  UUID and paths as str(); bytearray, range, slice and classes as repr();
                  deques as lists, defaultdicts as dicts, ZoneInfo zones as str(), masked
                  arrays as tolist() (None where masked, field by field); a time in a
                  zoneinfo zone npy dump must refuse (its offset needs the zone database)

Where NumPy itself fails to give a value (tolist(), str() or datetime_as_string raises:
code points beyond U+10FFFF, generic-unit datetimes), npy dump must fail too: exit 1 and
one `error:` line.

Prints each failure, then `N arrays checked` (`, M failed` if any did); exits 1 on any
failure, or when no array was found.
"""

import collections
import datetime
import decimal
import fractions
import json
import math
import pathlib
import subprocess
import sys
import uuid
import warnings
import zipfile
import zoneinfo
from pathlib import Path

import numpy as np

MAX_HEADER = 16 << 20  # for np.load: npy's default
TIMEOUT = 120


class Float:
    """An expected float leaf: a NumPy float of `dtype` (f2, f4, f8 or long double)."""

    def __init__(self, value, dtype):
        self.value = value
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return "Float(%r, %s)" % (self.value, self.dtype)

    def matches(self, got):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return False
        want = self.dtype.type(self.value)
        if self.dtype.kind == "f" and self.dtype.itemsize > 8:
            with warnings.catch_warnings():
                # NumPy's parser warns of "overflow" on subnormals (4e-4951), read right.
                warnings.simplefilter("ignore", RuntimeWarning)
                back = np.longdouble(got.text) if isinstance(got, FloatText) else np.longdouble(got)
        else:
            back = np.array(float(got)).astype(self.dtype)[()]
        if np.isnan(want):
            return bool(np.isnan(back))
        return bool(back == want) and bool(np.signbit(back) == np.signbit(want))


class FloatText(float):
    """A JSON number with its text kept (json.loads' parse_float)."""

    def __new__(cls, text):
        value = super().__new__(cls, text)
        value.text = text
        return value


def leaves(arr, f):
    """Nested lists of arr's shape with f applied to each element (a scalar)."""

    def at(index):
        if len(index) == arr.ndim:
            return f(arr[index])
        return [at(index + (i,)) for i in range(arr.shape[len(index)])]

    return at(())


def records(shape, cols):
    """Dicts of the fields' (name, nested values) at every position of `shape`."""
    if not shape:
        return {name: col for name, col in cols}
    return [records(shape[1:], [(name, col[i]) for name, col in cols]) for i in range(shape[0])]


def nat_or(f):
    return lambda x: None if np.isnat(x) else f(x)


def expect(arr):
    """arr's values under npy dump's JSON mapping, nested as arr's shape."""
    dt = arr.dtype
    if dt.names is not None:
        return records(arr.shape, [(name, expect(arr[name])) for name in dt.names])
    kind = dt.kind
    if kind in "biu":
        return leaves(arr, lambda x: x.item())
    if kind == "f":
        return leaves(arr, lambda x: Float(x, dt))
    if kind == "c":
        part = np.dtype("%sf%d" % (dt.byteorder if dt.byteorder != "|" else "=", dt.itemsize // 2))
        return leaves(arr, lambda x: [Float(x.real, part), Float(x.imag, part)])
    if kind == "M":
        return leaves(arr, nat_or(lambda x: str(np.datetime_as_string(x))))
    if kind == "m":
        return leaves(arr, nat_or(lambda x: int(x.view("i8"))))
    if kind == "S":
        return leaves(arr, lambda x: repr(bytes(x)))
    if kind == "V":
        return leaves(arr, str)
    if kind == "U":
        return leaves(arr, lambda x: str(x))
    if kind == "O":
        return leaves(arr, lambda x: python(x))
    if kind == "T":
        # NumPy 2's StringDType: npy reads it as the object array astype(object) gives
        # (each str, or the na_object where a value is missing).
        return expect(arr.astype(object))
    raise ValueError("unexpected dtype %s" % dt)


def unmasked(value, mask):
    """`value` (expect()'s form of a masked array's data) with None where `mask` (the
    array's mask: bools, records of them) is set, as MaskedArray.tolist() gives it."""
    if isinstance(mask, np.void):
        return {k: unmasked(value[k], mask[k]) for k in mask.dtype.names}
    if isinstance(mask, np.ndarray) and mask.ndim > 0:
        return [unmasked(v, m) for v, m in zip(value, mask, strict=True)]
    if isinstance(mask, np.ndarray):
        return unmasked(value, mask[()])
    return None if mask else value


def python(x):
    """An object array's element under the mapping."""
    if isinstance(x, np.ma.MaskedArray):
        return unmasked(expect(np.asarray(x.data)), np.ma.getmaskarray(x))
    if isinstance(x, (datetime.time, datetime.datetime)) and isinstance(x.tzinfo, zoneinfo.ZoneInfo):
        # Its isoformat() ends in an offset only the zone database gives: npy refuses it.
        raise ValueError("a time in a zoneinfo zone")
    if isinstance(x, zoneinfo.ZoneInfo):
        return str(x)
    if isinstance(x, collections.deque):
        return [python(v) for v in x]
    if isinstance(x, np.ndarray):
        # A ragged array's row, a saved dict's array: nested lists as tolist() gives them.
        return expect(x)
    if isinstance(x, (np.datetime64, np.timedelta64, np.void, np.longdouble, np.clongdouble)) and not isinstance(
        x, (np.float64, np.complex128)
    ):
        return expect(np.array(x))
    if isinstance(x, (datetime.date, datetime.time)):
        return x.isoformat()
    if isinstance(
        x, (datetime.timedelta, datetime.timezone, decimal.Decimal, fractions.Fraction, uuid.UUID, pathlib.PurePath)
    ):
        return str(x)
    if isinstance(x, (bytearray, range, slice, type)):
        return repr(x)
    if isinstance(x, (set, frozenset)):
        return [python(v) for v in x]
    if x is None or isinstance(x, (bool, np.bool_)):
        return None if x is None else bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return Float(float(x), "f8")
    if isinstance(x, (complex, np.complexfloating)):
        return [Float(complex(x).real, "f8"), Float(complex(x).imag, "f8")]
    if isinstance(x, (str, np.str_)):
        return str(x)
    if isinstance(x, (bytes, np.bytes_)):
        return repr(bytes(x))
    if isinstance(x, (list, tuple)):
        return [python(v) for v in x]
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            return {k: python(v) for k, v in x.items()}
        return [[python(k), python(v)] for k, v in x.items()]
    raise ValueError("unexpected object %r" % type(x))


def same(got, want):
    if isinstance(want, Float):
        return want.matches(got)
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and list(got) == list(want)
            and all(same(got[k], want[k]) for k in want)
        )
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same, got, want))
    if isinstance(want, bool) or want is None:
        return got is want
    if isinstance(want, int):
        return isinstance(got, int) and not isinstance(got, bool) and got == want
    return type(got) is type(want) and got == want


def constant(name):
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def check(npy, path, member, load):
    """Dumps one array and compares; returns a failure message or None."""
    label = "%s [%s]" % (path, member) if member is not None else str(path)
    try:
        arr = load()
        rows = [expect(arr)] if arr.ndim == 0 else expect(arr)
        numpy_error = None
    except Exception as e:  # NumPy cannot give the values: npy dump must fail
        rows, numpy_error = None, "%s: %s" % (type(e).__name__, e)
    cmd = [str(npy), "dump", "--format", "json", str(path)]
    if member is not None:
        cmd += ["--member", member]
    run = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)
    stderr = run.stderr.decode("utf-8", "replace").strip()
    if numpy_error is not None:
        if run.returncode == 1 and stderr.startswith("error:") and len(stderr.splitlines()) == 1:
            return None
        return "%s: NumPy fails (%s) but npy dump exits %d: %s" % (label, numpy_error, run.returncode, stderr)
    if run.returncode != 0:
        return "%s: npy dump exits %d: %s" % (label, run.returncode, stderr)
    lines = run.stdout.decode("utf-8").splitlines()
    if len(lines) != len(rows):
        return "%s: %d lines, NumPy has %d rows" % (label, len(lines), len(rows))
    for i, (line, want) in enumerate(zip(lines, rows)):
        try:
            got = json.loads(line, parse_float=FloatText, parse_constant=constant)
        except ValueError as e:
            return "%s: line %d is not JSON (%s): %.200s" % (label, i + 1, e, line)
        if not same(got, want):
            return "%s: row %d differs:\n  npy:   %.300s\n  numpy: %.300r" % (label, i, line, want)
    return None


def arrays(npy, root):
    """(failure or None) for every array under root."""
    for path in sorted(root.rglob("*")):
        if path.suffix == ".npy":
            load = lambda p=path: np.load(p, allow_pickle=True, max_header_size=MAX_HEADER)
            yield check(npy, path, None, load)
        elif path.suffix == ".npz":
            with zipfile.ZipFile(path) as z:
                if not z.namelist():
                    continue
            with np.load(path, allow_pickle=True, max_header_size=MAX_HEADER) as z:
                names = list(z.files)
            for name in names:
                def load(p=path, n=name):
                    with np.load(p, allow_pickle=True, max_header_size=MAX_HEADER) as z:
                        return z[n]
                yield check(npy, path, name, load)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    npy, roots = Path(argv[1]), [Path(a) for a in argv[2:]]
    # Legacy files of the corpus (Python 2 headers) are meant to be read.
    warnings.filterwarnings("ignore", message=".*created on Python 2", category=UserWarning)
    checked = failed = 0
    for root in roots:
        for failure in arrays(npy, root):
            checked += 1
            if failure is not None:
                failed += 1
                print("FAIL " + failure)
    if checked == 0:
        print("no arrays found under " + ", ".join(map(str, roots)))
        return 1
    print("%d arrays checked" % checked + (", %d failed" % failed if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
