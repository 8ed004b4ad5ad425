#!/usr/bin/env python3
"""Write the npy project's own NumPy-made fixtures.

Usage: python3 golden.py OUT_DIR

Writes small .npy files (grouped in scalar/, shape/, datetime/, string/,
record/, header/, object/), one .npz (object/archive.npz) and
OUT_DIR/manifest.json.  Everything is deterministic:
values are fixed or come from a fixed seed, floats are built from bit patterns
and long doubles from raw bytes, so the same NumPy writes the same bytes on
every run.  `cargo xtask golden` runs this into tests/data; `cargo xtask
golden --check` runs it into a scratch directory and compares.

manifest.json is a JSON list (one object per line, sorted by file) with, for
each file, what was read back from the written file:

  file            relative path with '/'
  descr           repr() of the header's 'descr' value
  shape           list of ints
  fortran_order   bool, as in the header
  version         [major, minor]
  header          header text after the length field (latin1 for 1.0/2.0,
                  utf-8 for 3.0), padding and final '\\n' included
  header_len      value of the length field
  data_offset     byte offset of the data section
  data_len        bytes of data
  itemsize        dtype itemsize
  sha256_data     hex sha256 of the data section
  sha256_file     hex sha256 of the whole file
  elements        (non-record dtypes only) the values in storage order, i.e.
                  the order of the bytes in the file (column-major for
                  fortran_order files):
                    b1, i, u      integers (the raw byte for b1)
                    f2, f4, f8    IEEE bit pattern as an unsigned integer
                    c8, c16       [re_bits, im_bits]
                    M8, m8        int64 (NaT = -9223372036854775808)
                    U<n>          list of all n code points (trailing zeros kept)
                    S, V, f16,
                    c32           lowercase hex of each item's raw bytes
  fields          (record dtypes only) for each leaf field, by dotted path
                  ('receiver.x'), its values for every record in storage
                  order, encoded as for `elements`; a subarray field lists
                  each record's values in C order, one record after another

Object arrays (object/*.npy, dtype '|O': a header, then a pickle) have the same
keys (data_len and sha256_data are the pickle's), and instead of `elements`:

  objects         the values in storage order as npy_core's Array<T> holds them
                  (column-major for fortran_order files, although the pickle
                  lists them in C order), as tagged JSON:
                    null, true, false      None, True, False
                    "text"                 str
                    {"int": "-12"}         int, exact decimal text of any size
                    {"float": "1.5"}       float as Python's repr ("nan", "inf",
                                           "-inf", "-0.0", "1e-05")
                    {"complex": [re, im]}  complex, parts as float reprs
                    {"bytes": "00ff"}      bytes, hex
                    {"list": [...]}        list
                    {"tuple": [...]}       tuple
                    {"dict": [[k, v], ...]}  dict, in insertion order
                  NumPy scalars inside (np.float32(0.5), np.str_('x')) are given
                  as the plain value they equal (.item()).
  protocol        the pickle protocol (np.save uses 4; the protoN files are
                  written by hand: the 1.0 header, then pickle.dumps(a, N))
  rewrite         true when npy_core must rewrite the file byte for byte (np.save
                  output of distinct plain values: no memo sharing, no NumPy
                  scalars)

dtype_spellings.json lists how NumPy reads each spelling of a scalar descr (every
one-letter type code and kind, with and without a byte order, a size and a datetime
unit) as np.lib.format.descr_to_dtype does when it loads a header: one line
[spelling, descr] per spelling, descr being repr(dtype_to_descr(dtype)) or null
where np.dtype refuses the spelling.  It is made on the platform golden.py needs
(64-bit Linux: 'l' and 'p' are 8 bytes, 'g' 16).

scalar_text.json maps each scalar descr ('<f2', '>f8', '<M8[10s]', '|S4', ...) to a
list of [hex, text] pairs: the raw bytes of one scalar and str() of the NumPy scalar
those bytes make (what npy_core's `Display` for `scalar::Value` must write).  It holds
every f2 bit pattern; thousands of f4/f8 (random bit patterns, subnormals, powers of ten
and the positional/scientific thresholds with their neighbours, short decimals); long
doubles (random 80-bit patterns of every encoding, values from doubles and decimal
text); complex numbers; datetimes and timedeltas in every unit and some multiples, up to
the counts where NumPy's arithmetic wraps; bytes with every byte value, str and void.
Long double padding bytes are zeroed (NumPy leaves them as they were in memory).

object/archive.npz (written with zipfile, fixed timestamps, stored members) has
`file`, `kind` "npz" and `members`: per member `name`, `descr`, `shape`,
`fortran_order`, and `objects` (object members, as above) or `elements`.

stack/<case>/ are Dask npy stacks (issue 18): `dask.array.to_npy_stack(dir, x, axis)`
of `da.from_array(original, chunks)` on Dask's default (threaded) scheduler, that is
blocks 0.npy, 1.npy, ... along `axis` and `info`, `pickle.dump({'chunks', 'dtype',
'axis'})` (see stack_cases).  stack/<case>.npy is the original (np.save), and
stack/<case>.json its sidecar, one line: {"axis": k, "chunks": [[...], ...] (what
`info` holds), "dtype": repr() of the descr (as manifest.json's `descr`), "info": false
for the `_noinfo` copies whose `info` was removed, "shape": [...]}.  The stacks are not
in manifest.json; their blocks are ordinary .npy files that NumPy wrote.
"""

import ast
import collections
import datetime
import decimal
import fractions
import hashlib
import io
import json
import os
import pathlib
import pickle
import shutil
import struct
import sys
import uuid
import warnings
import zipfile
import zoneinfo

import dask
import dask.array as da
import numpy as np
from numpy.lib import format as npformat

SEED = 20240611
BIG = 1 << 30  # max_header_size when reading back

FIXTURES = []  # (relative path, array, forced version or None)


def add(rel, arr, version=None):
    FIXTURES.append((rel, arr, version))


# ----------------------------------------------------------------------------
# value builders (bit-exact, platform independent)
# ----------------------------------------------------------------------------

def from_bits(bits, dt):
    """Float array of dtype `dt` (e.g. '>f4') from IEEE bit patterns."""
    dt = np.dtype(dt)
    u = np.array(bits, dtype=dt.str[0] + "u%d" % dt.itemsize)
    return u.view(dt)


def complex_from_bits(pairs, dt):
    """Complex array of dtype `dt` from [re_bits, im_bits] pairs."""
    dt = np.dtype(dt)
    u = np.array(pairs, dtype=dt.str[0] + "u%d" % (dt.itemsize // 2)).reshape(-1, 2)
    return u.view(dt).reshape(-1)


def from_raw(items, dt):
    """Array of dtype `dt` whose items are the given raw byte strings."""
    return np.frombuffer(b"".join(items), dtype=dt).copy()


def junk_filled(shape, dt, byte=0xA5):
    """Array whose bytes (padding included) all start as `byte`."""
    dt = np.dtype(dt)
    n = int(np.prod(shape, dtype=np.int64))
    buf = bytearray([byte]) * (n * dt.itemsize)
    return np.frombuffer(buf, dtype=dt).reshape(shape)


F2 = [0x0000, 0x8000, 0x3C00, 0xC100, 0x7BFF, 0x0400, 0x0001, 0x03FF,
      0x7C00, 0xFC00, 0x7E00, 0x7E2A, 0x7C01, 0xFE00, 0x4248]
F4 = [0x00000000, 0x80000000, 0x3F800000, 0xC0200000, 0x7F7FFFFF, 0x00800000,
      0x00000001, 0x007FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC12345,
      0x7F800001, 0xFFC00000, 0x40490FDB]
F8 = [0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000,
      0xC004000000000000, 0x7FEFFFFFFFFFFFFF, 0x0010000000000000,
      0x0000000000000001, 0x000FFFFFFFFFFFFF, 0x7FF0000000000000,
      0xFFF0000000000000, 0x7FF8000000000000, 0x7FF800000012ABCD,
      0x7FF0000000000001, 0xFFF8000000000000, 0x400921FB54442D18]
FLOAT_BITS = {2: F2, 4: F4, 8: F8}


def long_double_le(sign, exp, mant):
    """16 raw bytes of an x86 80-bit extended value, little-endian, zero padded."""
    return mant.to_bytes(8, "little") + ((sign << 15) | exp).to_bytes(2, "little") + bytes(6)


LD = [long_double_le(0, 0x3FFF, 1 << 63),                # 1.0
      long_double_le(1, 0, 0),                           # -0.0
      long_double_le(0, 0x7FFF, 1 << 63),                # inf
      long_double_le(1, 0x7FFF, 1 << 63),                # -inf
      long_double_le(0, 0x7FFF, 0xC000000000000000),     # NaN
      long_double_le(0, 0x7FFF, 0xC000000000012345),     # NaN with payload
      long_double_le(0, 0, 1),                           # smallest subnormal
      long_double_le(0, 0x7FFE, 0xFFFFFFFFFFFFFFFF),     # max
      long_double_le(0, 0x4000, 0xC90FDAA22168C235),     # pi
      long_double_le(1, 0x4000, 0xA000000000000000)]     # -2.5

INTS = {
    "i1": [-128, -1, 0, 1, 127, 42],
    "i2": [-32768, -1, 0, 1, 32767, 0x0102],
    "i4": [-2**31, -1, 0, 1, 2**31 - 1, 0x01020304],
    "i8": [-2**63, -1, 0, 1, 2**63 - 1, 0x0102030405060708],
    "u1": [0, 1, 127, 128, 255],
    "u2": [0, 1, 0x0102, 2**16 - 2, 2**16 - 1],
    "u4": [0, 1, 0x01020304, 2**32 - 2, 2**32 - 1],
    "u8": [0, 1, 0x0102030405060708, 2**64 - 2, 2**64 - 1],
}

NAT = -2**63
DATETIMES = [0, 1, -1, NAT, 2**63 - 1, -2**63 + 1, 19_000, -719_162]


def bo_name(bo):
    return {"<": "le", ">": "be"}[bo]


# ----------------------------------------------------------------------------
# fixtures
# ----------------------------------------------------------------------------

def scalars():
    add("scalar/b1.npy", np.array([True, False, True, True, False], dtype="|b1"))
    for t in ("i1", "u1"):
        add("scalar/%s.npy" % t, np.array(INTS[t], dtype="|" + t))
    for bo in "<>":
        for t in ("i2", "i4", "i8", "u2", "u4", "u8"):
            add("scalar/%s_%s.npy" % (bo_name(bo), t), np.array(INTS[t], dtype=bo + t))
        for n in (2, 4, 8):
            add("scalar/%s_f%d.npy" % (bo_name(bo), n), from_bits(FLOAT_BITS[n], "%sf%d" % (bo, n)))
        for n in (4, 8):
            bits = FLOAT_BITS[n]
            pairs = [[bits[2], bits[1]], [bits[8], bits[11]], [bits[6], bits[9]],
                     [bits[0], bits[0]], [bits[3], bits[14]], [bits[12], bits[10]]]
            add("scalar/%s_c%d.npy" % (bo_name(bo), 2 * n), complex_from_bits(pairs, "%sc%d" % (bo, 2 * n)))
        ld = LD if bo == "<" else [x[::-1] for x in LD]  # big-endian: all 16 bytes reversed
        add("scalar/%s_f16.npy" % bo_name(bo), from_raw(ld, bo + "f16"))
        pairs = [(ld[0], ld[1]), (ld[2], ld[5]), (ld[6], ld[8]), (ld[9], ld[3])]
        add("scalar/%s_c32.npy" % bo_name(bo), from_raw([a + b for a, b in pairs], bo + "c32"))


def datetimes():
    for kind in ("M8", "m8"):
        for unit in ("", "D", "s", "ms", "us", "ns", "25s"):
            for bo in "<>":
                dt = bo + kind + ("[%s]" % unit if unit else "")
                name = "%s_%s_%s" % (bo_name(bo), kind, unit or "generic")
                add("datetime/%s.npy" % name, np.array(DATETIMES, dtype=bo + "i8").view(dt))


def strings():
    s5 = [b"hello", b"", b"a\x00b", b"\x00\x00\xff", b"abc", b"\xe9t\xe9"]
    add("string/S5.npy", from_raw([x.ljust(5, b"\x00") for x in s5], "|S5"))
    add("string/S1.npy", from_raw([b"x", b"\x00", b"\xff"], "|S1"))
    u4 = ["ab", "", "\xe9\u20ac\U0001F600x", "abcd", "a\x00b", "\U0010FFFF"]
    cps = [[ord(c) for c in s] + [0] * (4 - len(s)) for s in u4]
    for bo in "<>":
        add("string/%s_U4.npy" % bo_name(bo), np.array(cps, dtype=bo + "u4").view(bo + "U4").reshape(-1))
    add("string/V3.npy", from_raw([b"\x00\x01\x02", b"\xff\xfe\xfd", b"\x00\x00\x00", b"abc"], "|V3"))


def shapes():
    add("shape/0d_f8.npy", np.array(1.5, dtype="<f8"))
    add("shape/0d_be_i2.npy", np.array(-2, dtype=">i2"))
    add("shape/0_i4.npy", np.zeros((0,), dtype="<i4"))
    add("shape/5x0x3_f4.npy", np.zeros((5, 0, 3), dtype="<f4"))
    add("shape/1d_i2.npy", np.arange(7, dtype="<i2") - 3)
    c2 = np.arange(12, dtype="<i4").reshape(3, 4)
    add("shape/3x4_C_i4.npy", c2)
    add("shape/3x4_F_i4.npy", np.asfortranarray(c2))
    c3 = (np.arange(24, dtype="<f8") * 0.5).reshape(2, 3, 4)
    add("shape/2x3x4_C_f8.npy", c3)
    add("shape/2x3x4_F_f8.npy", np.asfortranarray(c3))
    add("shape/2x3x4_F_be_u2.npy", np.asfortranarray((np.arange(24) * 257).astype(">u2").reshape(2, 3, 4)))
    c8 = (np.arange(6, dtype="<f4") + 1j * np.arange(6, 12, dtype="<f4")).astype("<c8").reshape(2, 3)
    add("shape/2x3_F_c8.npy", np.asfortranarray(c8))
    add("shape/2x2_F_U3.npy", np.asfortranarray(np.array([["a", "bc"], ["def", ""]], dtype="<U3")))


TRACE = [("trace_id", "<i4"),
         ("receiver", [("x", "<f8"), ("y", "<f8"), ("z", "<f4")]),
         ("t0", "<f8"), ("dt", "<f4"), ("flags", "u1"), ("samples", "<f4", (8,))]


def fill_trace(a, rng):
    n = a.size
    a["trace_id"] = np.arange(1, n + 1) * 101
    a["receiver"]["x"] = rng.integers(-2**20, 2**20, n) / 16.0
    a["receiver"]["y"] = rng.integers(-2**20, 2**20, n) / 16.0
    a["receiver"]["z"] = rng.integers(-2**10, 2**10, n) / 4.0
    a["t0"] = np.arange(n) * 0.25
    a["dt"] = 0.004
    a["flags"] = rng.integers(0, 256, n)
    a["samples"] = rng.integers(-2**15, 2**15, (n, 8)) / 1024.0


def records():
    rng = np.random.default_rng(SEED)
    flat = [("id", "<i4"), ("x", "<f8"), ("flag", "|b1"), ("code", "<u2"), ("c", "<c8")]

    def fill_flat(a):
        n = a.size
        a["id"] = np.arange(n) - 1
        a["x"] = np.arange(n) * -1.25
        a["flag"] = np.arange(n) % 2 == 0
        a["code"] = np.arange(n) * 4097
        a["c"] = np.arange(n) + 0.5j

    packed = np.zeros(4, dtype=flat)
    fill_flat(packed)
    add("record/packed.npy", packed)
    aligned = np.zeros(4, dtype=np.dtype(flat, align=True))
    fill_flat(aligned)
    add("record/aligned.npy", aligned)

    be = np.zeros(3, dtype=[("a", ">i4"), ("b", ">f8"), ("c", ">u2"), ("d", ">M8[s]")])
    be["a"], be["b"], be["c"], be["d"] = [1, -2, 3], [0.5, -0.0, np.inf], [1, 256, 65535], [0, NAT, 86400]
    add("record/big_endian.npy", be)

    mixed = np.zeros(3, dtype=[("le_i4", "<i4"), ("be_i4", ">i4"), ("le_f8", "<f8"),
                               ("be_f4", ">f4"), ("be_U2", ">U2"), ("le_m8", "<m8[ms]")])
    mixed["le_i4"] = mixed["be_i4"] = [0x01020304, -1, 7]
    mixed["le_f8"] = mixed["be_f4"] = [1.5, -2.0, 0.0]
    mixed["be_U2"] = ["ab", "\xe9", ""]
    mixed["le_m8"] = [1, -1, NAT]
    add("record/mixed_endian.npy", mixed)

    nested = np.zeros(2, dtype=[("top", "<i2"),
                                ("l1", [("a", "<f4"),
                                        ("l2", [("b", ">i8"),
                                                ("l3", [("c", "u1"), ("d", "<f2")])])]),
                                ("tail", "|b1")])
    nested["top"] = [1, 2]
    nested["l1"]["a"] = [0.25, -0.5]
    nested["l1"]["l2"]["b"] = [2**40, -3]
    nested["l1"]["l2"]["l3"]["c"] = [7, 255]
    nested["l1"]["l2"]["l3"]["d"] = [1.0, -65504.0]
    nested["tail"] = [True, False]
    add("record/nested_3_levels.npy", nested)

    sub = np.zeros(2, dtype=[("v", "<f4", (3,)), ("m", ">i2", (2, 3)), ("t", "<f8")])
    sub["v"] = np.arange(6).reshape(2, 3) / 2.0
    sub["m"] = np.arange(12).reshape(2, 2, 3) - 6
    sub["t"] = [1.0, 2.0]
    add("record/subarray.npy", sub)

    subrec = np.zeros(2, dtype=[("id", "<u2"), ("pts", [("x", "<f4"), ("y", "<f4")], (3,)),
                                ("grid", "|i1", (2, 2))])
    subrec["id"] = [10, 20]
    subrec["pts"]["x"] = np.arange(6).reshape(2, 3)
    subrec["pts"]["y"] = -np.arange(6).reshape(2, 3)
    subrec["grid"] = np.arange(8).reshape(2, 2, 2) - 4
    add("record/subarray_of_record.npy", subrec)

    titled = np.zeros(2, dtype=np.dtype({"names": ["tid", "amp", "plain"],
                                         "formats": ["<i4", ">f4", "u1"],
                                         "titles": ["Trace identifier", "Amplitude (counts)", None]}))
    titled["tid"], titled["amp"], titled["plain"] = [1, 2], [0.5, -1.5], [3, 4]
    add("record/titles.npy", titled)
    nonstr = np.zeros(2, dtype=[((1, "a"), "<i4"), (("str", "b"), "<f4")])
    nonstr["a"], nonstr["b"] = [5, -5], [2.0, 4.0]
    add("record/titles_non_str.npy", nonstr)

    gaps = junk_filled((3,), np.dtype({"names": ["a", "b", "c"], "formats": ["<i4", "<f8", "u1"],
                                       "offsets": [4, 16, 25], "itemsize": 32}))
    gaps["a"], gaps["b"], gaps["c"] = [1, -1, 2**31 - 1], [0.5, -0.0, np.inf], [0, 128, 255]
    add("record/offsets_gaps.npy", gaps)

    strs = np.zeros(3, dtype=[("name", "<U5"), ("code", "S3"), ("n", "<i4")])
    strs["name"] = ["alpha", "\xe9", ""]
    strs["code"] = [b"abc", b"x", b""]
    strs["n"] = [1, 2, 3]
    add("record/strings.npy", strs)

    zd = np.zeros((), dtype=[("x", "<f8"), ("y", "<i4", (2,)), ("s", "S2")])
    zd["x"], zd["y"], zd["s"] = 3.25, [7, -7], b"ok"
    add("record/zero_d.npy", zd)

    f2 = np.zeros((3, 2), dtype=[("a", "<i4"), ("b", ">f8")], order="F")
    f2["a"] = np.arange(6).reshape(3, 2)
    f2["b"] = np.arange(6).reshape(3, 2) * 0.5
    add("record/3x2_F.npy", f2)

    tp = np.zeros(4, dtype=TRACE)
    fill_trace(tp, rng)
    add("record/trace_packed.npy", tp)
    ta = np.zeros(4, dtype=np.dtype(TRACE, align=True))
    fill_trace(ta, rng)
    add("record/trace_aligned.npy", ta)


# ----------------------------------------------------------------------------
# object arrays
# ----------------------------------------------------------------------------

OBJECT_FIXTURES = []  # (relative path, array, protocol or None for np.save, rewrite)


def add_objects(rel, arr, protocol=None, rewrite=False):
    OBJECT_FIXTURES.append((rel, arr, protocol, rewrite))


def object_array(values, shape=None, order="C"):
    """An object array holding exactly these Python objects (lists stay elements)."""
    a = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        a[i] = v
    if shape is not None:
        a = a.reshape(shape)
    return np.asfortranarray(a) if order == "F" else a


def array_tag(a):
    """The tagged JSON of an ndarray inside an object array: its dtype's descr, shape, order
    (as NumPy's pickle says it: Fortran when only Fortran-contiguous) and, for an object
    array, its values, else its bytes, both in that order."""
    fortran = bool(a.flags.f_contiguous and not a.flags.c_contiguous)
    order = "F" if fortran else "C"
    out = {"descr": repr(npformat.dtype_to_descr(a.dtype)), "shape": list(a.shape), "fortran": fortran}
    if a.dtype.hasobject:
        out["items"] = [tag(x) for x in a.ravel(order=order)]
    else:
        out["hex"] = a.tobytes(order=order).hex()
    return {"ndarray": out}


def timezone_tag(tz):
    if tz is None:
        return None
    if isinstance(tz, zoneinfo.ZoneInfo):
        return {"zoneinfo": list(tz.__reduce__()[1])}
    d = tz.utcoffset(None)
    name = tz.tzname(None)
    default = datetime.timezone(d).tzname(None)
    return [[d.days, d.seconds, d.microseconds], None if tz is datetime.timezone.utc or name == default else name]


def tag(v):
    """The tagged JSON of a value (see the module docstring)."""
    if isinstance(v, np.ma.MaskedArray):
        # The mask in the data's order, the fill value as pickled (`_fill_value`: None
        # until one is set or read; loading sets NumPy's default, so fixtures holding
        # masked arrays are tagged from the arrays saved).
        data = v.data
        mask = np.ma.getmaskarray(v)
        fortran = bool(data.flags.f_contiguous and not data.flags.c_contiguous)
        mask = np.asfortranarray(mask) if fortran else np.ascontiguousarray(mask)
        fill = v._fill_value
        return {"masked": [array_tag(data), array_tag(mask), None if fill is None else array_tag(fill)]}
    if isinstance(v, np.ndarray):
        return array_tag(v)
    if isinstance(v, (np.datetime64, np.timedelta64, np.void, np.longdouble, np.clongdouble)) and not isinstance(
        v, (np.float64, np.complex128)
    ):
        return {"scalar": {"descr": repr(npformat.dtype_to_descr(v.dtype)), "hex": v.tobytes().hex()}}
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, type):
        return {"type": [v.__module__, v.__qualname__]}
    if isinstance(v, datetime.datetime):
        return {"datetime": [v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond, v.fold,
                             timezone_tag(v.tzinfo)]}
    if isinstance(v, datetime.date):
        return {"date": [v.year, v.month, v.day]}
    if isinstance(v, datetime.time):
        return {"time": [v.hour, v.minute, v.second, v.microsecond, v.fold, timezone_tag(v.tzinfo)]}
    if isinstance(v, datetime.timedelta):
        return {"timedelta": [v.days, v.seconds, v.microseconds]}
    if isinstance(v, datetime.timezone):
        return {"timezone": timezone_tag(v)}
    if isinstance(v, zoneinfo.ZoneInfo):
        return timezone_tag(v)
    if isinstance(v, collections.deque):
        return {"deque": [[tag(x) for x in v], v.maxlen]}
    if isinstance(v, collections.defaultdict):
        factory = None if v.default_factory is None else tag(v.default_factory)
        return {"defaultdict": [factory, [[tag(k), tag(x)] for k, x in v.items()]]}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, fractions.Fraction):
        return {"fraction": [tag(v.numerator), tag(v.denominator)]}
    if isinstance(v, uuid.UUID):
        return {"uuid": v.hex}
    if isinstance(v, bytearray):
        return {"bytearray": bytes(v).hex()}
    if isinstance(v, frozenset):
        return {"frozenset": [tag(x) for x in v]}
    if isinstance(v, set):
        return {"set": [tag(x) for x in v]}
    if isinstance(v, collections.Counter):
        return {"counter": [[tag(k), tag(x)] for k, x in v.items()]}
    if isinstance(v, collections.OrderedDict):
        return {"ordereddict": [[tag(k), tag(x)] for k, x in v.items()]}
    if isinstance(v, pathlib.PurePath):
        return {"path": [type(v).__name__, list(v.parts)]}
    if isinstance(v, range):
        return {"range": [tag(v.start), tag(v.stop), tag(v.step)]}
    if isinstance(v, slice):
        return {"slice": [tag(v.start), tag(v.stop), tag(v.step)]}
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, complex):
        return {"complex": [repr(v.real), repr(v.imag)]}
    if isinstance(v, str):
        return v
    if isinstance(v, bytes):
        return {"bytes": v.hex()}
    if isinstance(v, list):
        return {"list": [tag(x) for x in v]}
    if isinstance(v, tuple):
        return {"tuple": [tag(x) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[tag(k), tag(x)] for k, x in v.items()]}
    raise TypeError("no tag for %r" % (v,))


def object_values(a, fortran, saved=None):
    """Tagged values of an object array in npy_core's storage order; for masked arrays,
    with the fill values of the arrays `saved` (loading sets NumPy's default where the
    pickle holds None)."""
    order = "F" if fortran else "C"
    tags = [tag(v) for v in a.ravel(order=order)]
    if saved is not None:
        for t, v in zip(tags, saved.ravel(order=order)):
            fill = v._fill_value
            if fill is not None and fill.dtype.fields is None and fill.dtype.byteorder == ">":
                fill = fill.astype(fill.dtype.newbyteorder("="))  # as unpickling makes it
            t["masked"][2] = None if fill is None else array_tag(fill)
    return tags


MIXED = ["s", None, 2**70, 1.5, b"\x00b", b"", (1, "x"), {"k": [1 + 2j]}, True, -7, np.float32(0.25)]


def objects():
    add_objects("object/str.npy", object_array(["a", "bc", "", "h\xe9llo", "\u6e29\u5ea6", "\U0001F600",
                                                "it's \"q\"\n"]), rewrite=True)
    add_objects("object/str_none.npy", object_array(["x1", None, "yz", None, ""]), rewrite=True)
    add_objects("object/int.npy", object_array(
        [0, 1, -1, 255, 256, 65535, 65536, -2**31, 2**31 - 1, 2**31, -2**31 - 1, 2**63 - 1, -2**63, 2**63,
         -2**63 - 1, 2**64, 10**30, -123456789012345678901234567890, 2**2100]), rewrite=True)
    add_objects("object/float.npy", object_array(
        [0.0, -0.0, 1.5, float("nan"), float("inf"), float("-inf"), 1e-300, 5e-324, 1.7976931348623157e308,
         0.1, 1e16]), rewrite=True)
    add_objects("object/complex.npy", object_array(
        [1 + 2j, complex(0, -0.0), complex(float("nan"), float("inf")), -1.5j, complex(-0.0, 0.0)]), rewrite=True)
    add_objects("object/bytes.npy", object_array([b"", b"abc", b"\x00\xff", b"x" * 300, b"it's"]), rewrite=True)
    add_objects("object/bool_none.npy", object_array([True, False, None, True]), rewrite=True)
    add_objects("object/nested.npy", object_array(
        [[1, [2, (3, "xs")]], (), ("one",), {"ka": 1, "kb": [None, {"kc": b"dd"}]}, {}, [], {(1, "kt"): 2.5},
         ((),), (1, 2, 3, 4, 5)]), rewrite=True)
    add_objects("object/numpy_scalars.npy", object_array(
        [np.float64(1.5), np.float32(0.5), np.float16(-2.0), np.int8(-3), np.int16(300), np.int32(-70000),
         np.int64(2**62), np.uint8(255), np.uint16(65535), np.uint32(2**32 - 1), np.uint64(2**64 - 1),
         np.bool_(True), np.bool_(False), np.str_("h\xe9"), np.str_(""), np.bytes_(b"q\x00r"), np.bytes_(b""),
         np.complex64(1 + 2j), np.complex128(-1j), np.float64(-0.0)]))
    beyond()
    zero_d = np.empty((), dtype=object)
    zero_d[()] = "solo"
    add_objects("object/0d.npy", zero_d, rewrite=True)
    add_objects("object/empty.npy", np.empty((0,), dtype=object), rewrite=True)
    add_objects("object/2x0.npy", np.empty((2, 0), dtype=object), rewrite=True)
    grid = ["r0c0", 1, None, 2.5, ["r1"], ("t",)]
    add_objects("object/2x3_C.npy", object_array(grid, (2, 3)), rewrite=True)
    add_objects("object/2x3_F.npy", object_array(grid, (2, 3), "F"), rewrite=True)
    add_objects("object/2x3x4_F.npy", object_array(["v%02d" % i for i in range(24)], (2, 3, 4), "F"),
                rewrite=True)
    shared, pair = "shared", [1, 2]
    add_objects("object/repeated.npy", object_array([shared, shared, pair, pair, (shared,), 1 + 1j, 2 + 2j]))
    # a str past the 64 KiB frame target (written outside frames) and enough small values
    # for a few frames
    add_objects("object/big.npy", object_array(["L" * 65536, b"B" * 300] + ["s%05d" % i for i in range(15000)]),
                rewrite=True)
    add_objects("object/batches.npy", object_array([{i: -i for i in range(1000)}, list(range(1001)),
                                                    {"a1": 1, "b2": 2}, list(range(2000))]), rewrite=True)
    add_objects("object/batch_1001.npy", object_array(list(range(1001))), rewrite=True)
    for p in (0, 1, 2, 3, 5):
        add_objects("object/proto%d.npy" % p, object_array(MIXED), protocol=p)
    add_objects("object/proto2_2x2_F.npy", object_array(["a0", b"b1", 2**64, 3j], (2, 2), "F"), protocol=2)
    # NumPy 2's StringDType: np.save writes an object header ('|O') and pickles the array
    # with its dtype (_convert_to_stringdtype_kwargs); npy reads the values astype(object)
    # gives: the strs, and the na_object itself where one is missing (issue 32)
    sdt = np.dtypes.StringDType
    add_objects("object/stringdtype.npy", np.array(["a", "bc", "", "h\xe9llo", "\U0001F600", "x" * 300], dtype=sdt()))
    add_objects("object/stringdtype_2x3_F.npy", np.asfortranarray(
        np.array([["r0c0", "r0c1", "r0c2"], ["r1c0", "", "r1c2"]], dtype=sdt())))
    add_objects("object/stringdtype_2x2_C.npy", np.array([["a", "b"], ["c", "d"]], dtype=sdt()))
    add_objects("object/stringdtype_0d.npy", np.array("solo", dtype=sdt()))
    add_objects("object/stringdtype_empty.npy", np.array([], dtype=sdt()))
    add_objects("object/stringdtype_no_coerce.npy", np.array(["p", "q"], dtype=sdt(coerce=False)))
    add_objects("object/stringdtype_na_none.npy", np.array(["x1", None, "", None], dtype=sdt(na_object=None)))
    add_objects("object/stringdtype_na_nan.npy", np.array(["x1", np.nan, "z"], dtype=sdt(na_object=np.nan)))
    add_objects("object/stringdtype_na_str.npy", np.array(["x1", "NA", "z"], dtype=sdt(na_object="NA")))


def beyond():
    """Object arrays holding more than plain values (issue 54): arrays inside (ragged arrays,
    dicts of arrays), NumPy scalars without a plain value, the standard library's data types."""
    # rewrite=True where npy writes np.save's bytes back; the others hold one object twice by
    # identity (NumPy's memo), a big-endian array (read native, as NumPy reads it) or
    # another protocol.
    add_objects("object/ragged.npy", object_array([np.arange(3), np.arange(5), np.arange(0)]), rewrite=True)
    add_objects("object/ragged_kinds.npy", object_array([
        np.array([1.5, -2.0], dtype=">f4"), np.array(["ab", "c"]), np.array([b"x", b"yz"]),
        np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8")]), np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        np.array(["2020-01-02", "NaT"], dtype="M8[D]"), np.array([3, 4], dtype="m8[ms]"), np.array(7, dtype="<u2"),
        np.array([True, False]), np.array([1 + 2j], dtype="<c8"), np.zeros((2, 0)),
        np.array([np.float16(1.0)]), np.arange(4, dtype="<i2").reshape(2, 2)[:, :1].copy()]))
    inner = object_array(["in", None, object_array([1, "deep"])])
    add_objects("object/nested_objects.npy", object_array([inner, object_array(["f0", "f1", 2, 3], (2, 2), "F")]),
                rewrite=True)
    weights = np.arange(12.0).reshape(3, 4)
    saved_dict = np.empty((), dtype=object)
    saved_dict[()] = {"w": weights, "b": np.zeros(4, dtype="<f4"), "name": "layer1", "layers": [np.ones(2), (np.arange(2),)]}
    add_objects("object/dict_of_arrays.npy", saved_dict, rewrite=True)
    shared = np.arange(4)
    add_objects("object/shared_arrays.npy", object_array([shared, shared, [shared]]))
    utc, est = datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=-5), "EST")
    add_objects("object/datetimes.npy", object_array([
        datetime.datetime(2020, 1, 2, 3, 4, 5, 6), datetime.datetime(2020, 1, 2, tzinfo=utc),
        datetime.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=est), datetime.datetime(2021, 11, 7, 1, 30, fold=1),
        datetime.date(2020, 2, 29), datetime.time(1, 2, 3, 4), datetime.time(23, 59, tzinfo=utc),
        datetime.timedelta(days=-1, seconds=5, microseconds=7), datetime.timedelta(0),
        datetime.timezone(datetime.timedelta(hours=5, minutes=30)), utc, est]))
    add_objects("object/stdlib.npy", object_array([
        decimal.Decimal("1.50"), decimal.Decimal("-Infinity"), decimal.Decimal("NaN"), decimal.Decimal("1E+999999"),
        fractions.Fraction(1, 3), fractions.Fraction(-2**70, 3), uuid.UUID(int=5), uuid.UUID(int=2**128 - 1),
        bytearray(b"ab\x00"), bytearray(), {1, 2, 3}, set(), frozenset([4]), frozenset(),
        collections.OrderedDict([("a", 1), ("b", [2])]), collections.OrderedDict(),
        collections.Counter({"x": 2, "y": 1}), collections.Counter(), pathlib.PurePosixPath("/a/b"),
        pathlib.PosixPath("rel/p"), pathlib.PureWindowsPath("c:/x/y"), range(1, 10, 2), range(5), range(-2**70, 0),
        slice(1, None, 2), slice(None), slice("a", [1], 2.5), range, {frozenset([1]): (2,)}]))
    add_objects("object/numpy_scalars_beyond.npy", object_array([
        np.datetime64("2020-01-02"), np.datetime64("NaT"), np.datetime64(1, "ns"), np.timedelta64(3, "s"),
        np.timedelta64("NaT"), np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8")])[0]]), rewrite=True)
    # (long doubles are left out: 6 of their 16 bytes are whatever memory held)
    # Issue 67: zoneinfo zones, deques, defaultdicts and masked arrays.
    paris = zoneinfo.ZoneInfo("Europe/Paris")
    add_objects("object/zones_collections.npy", object_array([
        datetime.datetime(2024, 3, 1, 12, 0, tzinfo=paris), datetime.datetime(2024, 7, 1, 12, 0, 5, 6, tzinfo=paris),
        datetime.time(23, 59, tzinfo=zoneinfo.ZoneInfo("UTC")),
        datetime.datetime(2021, 11, 7, 1, 30, fold=1, tzinfo=zoneinfo.ZoneInfo.no_cache("America/New_York")),
        zoneinfo.ZoneInfo("Etc/GMT+5"), paris,
        collections.deque([1, "a", [2]]), collections.deque(), collections.deque([], maxlen=0),
        collections.deque(range(3), maxlen=5), collections.deque([7]),
        collections.defaultdict(list, {1: [2]}), collections.defaultdict(None), collections.defaultdict(None, {"k": 1}),
        collections.defaultdict(int, {"a": 1, "b": collections.defaultdict(set)}), collections.defaultdict(bytearray),
    ]), rewrite=True)
    add_objects("object/masked.npy", object_array([
        np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]), np.ma.masked_array([1.5, 2.5]),
        np.ma.masked_array(np.arange(6, dtype="<i2").reshape(2, 3), mask=[[0, 1, 0], [1, 0, 0]], fill_value=7),
        np.ma.masked_array(np.array([1, "x"], dtype=object), mask=[0, 1]),
        np.ma.masked_array(np.asfortranarray(np.arange(4.0).reshape(2, 2)), mask=[[0, 1], [0, 0]]),
        np.ma.masked_array(np.array([], dtype="<f4")), np.ma.masked_array(np.array(["ab", "c"]), mask=[1, 0]),
    ]), rewrite=True)
    # A record dtype's fill value is pickled with the data's own dtype object (NumPy's memo).
    add_objects("object/masked_records.npy", object_array([
        np.ma.masked_array(np.array([(1, 2.0), (3, 4.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
                           mask=[(0, 1), (0, 0)]),
        np.ma.masked_array(np.array([1, 2], dtype=">i4"), mask=[1, 0], fill_value=-1),
    ]))
    add_objects("object/ragged_proto2.npy", object_array([np.arange(3.0), np.array(["py2"])]), protocol=2)
    add_objects("object/ragged_proto5.npy", object_array([np.arange(3.0), {7, 8}, bytearray(b"z")]), protocol=5)


def write_objects(path, arr, protocol):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if protocol is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # StringDType: "Custom dtypes are saved as python objects"
            np.save(path, arr, allow_pickle=True)
        return
    with open(path, "wb") as f:
        npformat.write_array_header_1_0(f, npformat.header_data_from_array_1_0(arr))
        f.write(pickle.dumps(arr, protocol=protocol))


def masked_fill(m):
    """A masked array's fill value as its `fill_value` gives it, without setting it (reading
    the property stores NumPy's default, which would change what the array pickles)."""
    fill = m._fill_value
    return np.asarray(np.ma.core._check_fill_value(None, m.dtype) if fill is None else fill)


def same_objects(a, b):
    """Exact equality of two values: types, float bits (any NaN equal), recursively."""
    if isinstance(a, np.ma.MaskedArray) or isinstance(b, np.ma.MaskedArray):
        return (type(a) is type(b) and same_objects(a.data, b.data)
                and same_objects(np.ma.getmaskarray(a), np.ma.getmaskarray(b))
                and same_objects(masked_fill(a), masked_fill(b)))

    if isinstance(a, (collections.deque, collections.defaultdict, zoneinfo.ZoneInfo, datetime.datetime, datetime.time)):
        return type(a) is type(b) and tag(a) == tag(b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        # Values, not byte order: NumPy's unpickling makes a scalar dtype native.
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if a.dtype.newbyteorder("=") != b.dtype.newbyteorder("="):
            return False
        if a.dtype.hasobject:
            return all(same_objects(x, y) for x, y in zip(a.ravel(), b.ravel()))
        native = a.dtype.newbyteorder("=")
        return a.astype(native).tobytes() == b.astype(native).tobytes()
    if isinstance(a, (decimal.Decimal, np.datetime64, np.timedelta64, np.void)):
        return type(a) is type(b) and tag(a) == tag(b)
    if isinstance(a, np.generic):
        a = a.item()
    if isinstance(b, np.generic):
        b = b.item()
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (a != a and b != b) or struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, complex):
        return same_objects(a.real, b.real) and same_objects(a.imag, b.imag)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_objects(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(same_objects(k, l) and same_objects(a[k], b[l]) for k, l in zip(a, b))
    return a == b


def describe_objects(out_dir, rel, arr, protocol, rewrite):
    """Manifest entry for one object array file, read back from the file itself."""
    path = os.path.join(out_dir, *rel.split("/"))
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[6:8] == b"\x01\x00", rel
    (header_len,) = struct.unpack_from("<H", raw, 8)
    header = raw[10:10 + header_len].decode("latin1")
    d = ast.literal_eval(header)
    shape, fortran = tuple(d["shape"]), d["fortran_order"]
    assert d["descr"] == "|O" and shape == arr.shape, rel
    loaded = np.load(path, allow_pickle=True)
    stringdtype = isinstance(arr.dtype, np.dtypes.StringDType)
    assert (loaded.dtype == arr.dtype if stringdtype else loaded.dtype == object) and loaded.shape == shape, rel
    assert (fortran and loaded.ndim > 1) == (loaded.flags.f_contiguous and not loaded.flags.c_contiguous), rel
    assert all(same_objects(x, y) for x, y in zip(loaded.ravel(), arr.ravel())), rel
    data = raw[10 + header_len:]
    entry = {
        "file": rel,
        "descr": repr(d["descr"]),
        "shape": list(shape),
        "fortran_order": fortran,
        "version": [1, 0],
        "header": header,
        "header_len": header_len,
        "data_offset": 10 + header_len,
        "data_len": len(data),
        "itemsize": 8,
        "sha256_data": hashlib.sha256(data).hexdigest(),
        "sha256_file": hashlib.sha256(raw).hexdigest(),
        "objects": object_values(loaded, fortran, arr if rel.startswith("object/masked") else None),
        "protocol": 4 if protocol is None else protocol,
        "rewrite": rewrite,
    }
    return entry, len(raw)


def write_archive(out_dir):
    """object/archive.npz: np.save'd members in a zip with fixed timestamps (np.savez stamps
    the current time), and its manifest entry."""
    rel = "object/archive.npz"
    members = [
        ("labels", object_array(["a1", None, "b2"])),
        ("values", np.arange(3, dtype="<f8")),
        ("grid", object_array(["g0", "g1", ("g2",), 3], (2, 2), "F")),
    ]
    path = os.path.join(out_dir, *rel.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name, a in members:
            buf = io.BytesIO()
            np.save(buf, a, allow_pickle=True)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())
    entry = {"file": rel, "kind": "npz", "members": []}
    with np.load(path, allow_pickle=True) as npz:
        assert npz.files == [name for name, _ in members], npz.files
        for name, a in members:
            got = npz[name]
            assert got.dtype == a.dtype and got.shape == a.shape, name
            fortran = bool(got.flags.f_contiguous and not got.flags.c_contiguous)
            m = {"name": name, "descr": repr(npformat.dtype_to_descr(got.dtype)), "shape": list(got.shape),
                 "fortran_order": fortran}
            if got.dtype == object:
                assert all(same_objects(x, y) for x, y in zip(got.ravel(), a.ravel())), name
                m["objects"] = object_values(got, fortran)
            else:
                m["elements"] = elements(got.tobytes(), got.dtype)
            entry["members"].append(m)
    with open(path, "rb") as f:
        size = len(f.read())
    return entry, size


def dict_text(descr, fortran_order, shape):
    """The header dict text numpy writes, growth-axis spaces included."""
    d = {"descr": descr, "fortran_order": fortran_order, "shape": shape}
    h = "{" + "".join("'%s': %r, " % (k, v) for k, v in sorted(d.items())) + "}"
    if shape:
        h += " " * (21 - len(repr(shape[-1 if fortran_order else 0])))
    return h


def headers():
    quoted = np.zeros(2, dtype=[("it's", "<i2"), ('say "hi"', "<i2"), ("both'\"\\", "<i2")])
    quoted["it's"] = [1, 2]
    add("header/quote_name.npy", quoted)
    latin = np.zeros(2, dtype=[("caf\xe9", "<f4"), ("\xb5s", "<i2")])
    latin["caf\xe9"], latin["\xb5s"] = [1.0, 2.0], [3, 4]
    add("header/latin1_name_v1.npy", latin)
    utf8 = np.zeros(2, dtype=[("\u6e29\u5ea6", "<f4"), ("\u0394t", "<f8")])
    utf8["\u6e29\u5ea6"], utf8["\u0394t"] = [20.5, -3.0], [0.001, 0.002]
    add("header/utf8_name_v3.npy", utf8)
    many = np.zeros(1, dtype=[("field_%04d" % i, "u1") for i in range(3000)])
    many[0] = tuple(i % 256 for i in range(3000))
    add("header/fields_3000_v2.npy", many)
    add("header/forced_v2_le_f8.npy", np.arange(3, dtype="<f8"), (2, 0))
    add("header/forced_v3_be_i4.npy", np.array([1, -1, 0x01020304], dtype=">i4"), (3, 0))
    # a name length for which dict + '\n' ends exactly on a 64-byte boundary:
    # numpy then pads with 64 spaces, not 0
    for k in range(1, 65):
        dt = [("p" * k, "<f4")]
        text = dict_text(npformat.dtype_to_descr(np.dtype(dt)), False, (2,))
        if (10 + len(text) + 1) % 64 == 0:
            break
    add("header/pad_exact_64.npy", np.array([(1.0,), (2.0,)], dtype=dt))


# ----------------------------------------------------------------------------
# writing and reading back
# ----------------------------------------------------------------------------

def write(path, arr, version):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Stored array in format 2.0/3.0"
        if version is None:
            np.save(path, arr, allow_pickle=False)
        else:
            with open(path, "wb") as f:
                npformat.write_array(f, arr, version=version, allow_pickle=False)


def elements(data, dtype):
    """Values of a non-record dtype in storage order, as described above."""
    kind, n, bo = dtype.kind, dtype.itemsize, dtype.str[0]
    if kind == "b":
        return list(data)
    if kind in "iu":
        return np.frombuffer(data, dtype=dtype).tolist()
    if kind == "f" and n in (2, 4, 8):
        return np.frombuffer(data, dtype=bo + "u%d" % n).tolist()
    if kind == "c" and n in (8, 16):
        return np.frombuffer(data, dtype=bo + "u%d" % (n // 2)).reshape(-1, 2).tolist()
    if kind in "Mm":
        return np.frombuffer(data, dtype=bo + "i8").tolist()
    if kind == "U":
        return np.frombuffer(data, dtype=bo + "u4").reshape(-1, n // 4).tolist()
    return [data[i:i + n].hex() for i in range(0, len(data), n)]  # S, V, f16, c32


def field_values(arr, prefix=""):
    """Per leaf field (dotted path, e.g. 'receiver.x'), its values for all records in the
    given order as `elements` gives them; subarray fields give each record's values in C
    order, one after another."""
    out = {}
    for name in arr.dtype.names:
        sub = arr[name]
        if sub.dtype.names is not None:
            out.update(field_values(sub, prefix + name + "."))
        else:
            out[prefix + name] = elements(np.ascontiguousarray(sub).tobytes(), sub.dtype)
    return out


def describe(out_dir, rel, arr):
    """Manifest entry for one written file, read back from the file itself."""
    path = os.path.join(out_dir, *rel.split("/"))
    with open(path, "rb") as f:
        raw = f.read()
    with open(path, "rb") as f:
        version = npformat.read_magic(f)
        if version == (1, 0):
            np_header = npformat.read_array_header_1_0(f, max_header_size=BIG)
        elif version == (2, 0):
            np_header = npformat.read_array_header_2_0(f, max_header_size=BIG)
        else:  # numpy has no public reader for 3.0; np.load checks it below
            np_header = None
    fmt = "<H" if version == (1, 0) else "<I"
    prefix = 8 + struct.calcsize(fmt)
    (header_len,) = struct.unpack_from(fmt, raw, 8)
    header = raw[prefix:prefix + header_len].decode("utf-8" if version == (3, 0) else "latin1")
    d = ast.literal_eval(header)
    dtype = npformat.descr_to_dtype(d["descr"])
    shape, fortran = tuple(d["shape"]), d["fortran_order"]
    if np_header is not None:
        assert np_header == (shape, fortran, dtype), (rel, np_header)
    loaded = np.load(path, allow_pickle=False, max_header_size=BIG)
    assert loaded.dtype == arr.dtype == dtype and loaded.shape == arr.shape == shape, rel
    assert repr(d["descr"]) == repr(npformat.dtype_to_descr(arr.dtype)), rel
    data = raw[prefix + header_len:]
    assert len(data) == int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, rel
    entry = {
        "file": rel,
        "descr": repr(d["descr"]),
        "shape": list(shape),
        "fortran_order": fortran,
        "version": list(version),
        "header": header,
        "header_len": header_len,
        "data_offset": prefix + header_len,
        "data_len": len(data),
        "itemsize": dtype.itemsize,
        "sha256_data": hashlib.sha256(data).hexdigest(),
        "sha256_file": hashlib.sha256(raw).hexdigest(),
    }
    if dtype.names is None:
        entry["elements"] = elements(data, dtype)
    else:
        entry["fields"] = field_values(loaded.reshape(-1, order="F" if fortran else "C"))
    return entry, len(raw)


def check_expectations(entries):
    """Fail loudly if numpy did not produce the edge cases the files are for."""
    by = {e["file"]: e for e in entries}
    assert by["header/latin1_name_v1.npy"]["version"] == [1, 0]
    assert by["header/utf8_name_v3.npy"]["version"] == [3, 0]
    assert by["header/fields_3000_v2.npy"]["version"] == [2, 0]
    assert by["header/fields_3000_v2.npy"]["header_len"] > 65535
    assert by["header/forced_v2_le_f8.npy"]["version"] == [2, 0]
    assert by["header/forced_v3_be_i4.npy"]["version"] == [3, 0]
    assert '"it\'s"' in by["header/quote_name.npy"]["header"]
    assert by["header/pad_exact_64.npy"]["header"].endswith("}" + " " * 20 + " " * 64 + "\n")
    for e in entries:
        assert e.get("data_offset", 0) % 64 == 0, e["file"]
    for rel in ("shape/3x4_F_i4.npy", "shape/2x3x4_F_f8.npy", "record/3x2_F.npy"):
        assert by[rel]["fortran_order"] is True, rel
    for rel, e in by.items():  # the byte order in the name is the one in the file
        if "elements" in e:
            assert ("be_" in rel) == e["descr"].startswith("'>"), rel
    for rel in ("object/2x3_F.npy", "object/2x3x4_F.npy", "object/proto2_2x2_F.npy"):
        assert by[rel]["fortran_order"] is True, rel
    assert by["object/2x0.npy"]["fortran_order"] is False
    assert by["object/big.npy"]["data_len"] > 3 * 65536 - 9000  # frames, a payload outside them
    assert by["object/stringdtype_2x3_F.npy"]["fortran_order"] is True
    assert by["object/stringdtype_na_nan.npy"]["objects"][1] == {"float": "nan"}
    assert by["object/stringdtype_na_none.npy"]["objects"][1] is None


SPELLING_CODES = "?bBhHiIlLqQpPnNeEfdgFDGcaSUVMmOTuxz"
SPELLING_ORDERS = ["", "<", ">", "|", "="]
SPELLING_TAILS = ["", "0", "1", "2", "3", "4", "8", "12", "16", "32", "[us]", "8[us]", "[D]",
                  "8[25s]", "4[us]", "8[generic]"]


def spellings(out_dir):
    """dtype_spellings.json: how NumPy reads each scalar descr spelling (see the top)."""
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 'a' is deprecated; 'T' saves as objects
        for order in SPELLING_ORDERS:
            for code in SPELLING_CODES:
                for tail in SPELLING_TAILS:
                    text = order + code + tail
                    try:
                        descr = repr(npformat.dtype_to_descr(npformat.descr_to_dtype(text)))
                    except (TypeError, ValueError):
                        descr = None
                    lines.append(json.dumps([text, descr]))
    text = "[\n" + ",\n".join(lines) + "\n]\n"
    with open(os.path.join(out_dir, "dtype_spellings.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return len(lines), len(text)


# ----------------------------------------------------------------------------
# scalar_text.json: NumPy's str() of single scalars
# ----------------------------------------------------------------------------

TEXT_UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]
TEXT_MULTIPLES = ["3Y", "2M", "2W", "7D", "25h", "10s", "1000ms", "10us", "10ns", "2as"]


def raw_items(arr):
    """The raw bytes of each item of a 1-d array."""
    b = arr.tobytes()
    n = arr.dtype.itemsize
    return [b[i:i + n] for i in range(0, len(b), n)]


def text_cases(descr, items):
    """[hex, str()] for each raw item read as a scalar of `descr`."""
    a = np.frombuffer(b"".join(items), dtype=descr)
    return [[raw.hex(), str(v)] for raw, v in zip(items, a)]


def decimal_digits(rng, n):
    """n random decimal digits, the first not 0."""
    return str(int(rng.integers(1, 10))) + "".join(str(int(d)) for d in rng.integers(0, 10, size=n - 1))


def float_text_bits(rng, n, count):
    """Bit patterns for an IEEE float of n bytes: random ones, the edges (zeros,
    subnormals, normal limits, infinities, NaNs), powers of ten with both neighbours,
    NumPy's thresholds between positional and scientific with their neighbours, and
    values of few decimal digits at every decimal exponent."""
    ftype = {2: np.float16, 4: np.float32, 8: np.float64}[n]
    utype = {2: np.uint16, 4: np.uint32, 8: np.uint64}[n]
    info = np.finfo(ftype)
    vals = []
    def near(x):
        x = ftype(x)
        return [x, np.nextafter(x, ftype(np.inf)), np.nextafter(x, ftype(-np.inf))]
    with np.errstate(over="ignore", under="ignore"):
        for x in [0.0, info.tiny, info.max, info.smallest_subnormal, 1.0, 0.1, 1e-4, 1e3, 1e6, 1e16,
                  0.5, 2.0 ** -14, 65504.0, 123456789.0, 0.004, 9.999e-5, 999.5]:
            vals += near(x)
        lo, hi = int(np.floor(np.log10(float(info.smallest_subnormal)))), int(np.ceil(np.log10(float(info.max))))
        for e in range(lo, hi + 1):
            vals += near(ftype("1e%d" % e))
            for digits in (1, 2, 3, 5, 7, 9, 12, 15, 17):
                if digits > {2: 5, 4: 9, 8: 17}[n] + 1:
                    continue
                vals.append(ftype("%se%d" % (decimal_digits(rng, digits), e - digits + 1)))
    bits = [int(v.view(utype)) for v in vals]
    bits += [int(b) for b in (rng.integers(0, 2 ** (8 * n), size=count, dtype=np.uint64) if n == 8
                               else rng.integers(0, 2 ** (8 * n), size=count))]
    sub = 2 ** (8 * n - 1 - {2: 5, 4: 8, 8: 11}[n])  # subnormals: below 2^fraction_bits
    bits += [int(b) for b in rng.integers(1, sub, size=count // 20, dtype=np.uint64)]
    bits += [0x7C01 if n == 2 else 0x7F800001 if n == 4 else 0x7FF0000000000001]
    out = []
    for b in bits + [b | (1 << (8 * n - 1)) for b in bits[:50]]:
        if b not in out:
            out.append(b)
    return out


def long_double_text_items(rng):
    """Raw little-endian long doubles: random 80-bit patterns (normal, subnormal,
    unnormal and pseudo-denormal encodings, every exponent range), values converted
    from doubles and parsed from decimal text, powers of ten and thresholds with their
    neighbours, infinities and NaNs."""
    items = []
    def ld(x):
        # the 6 padding bytes NumPy leaves are whatever was in memory: zero them
        return np.array([x], dtype="<f16").tobytes()[:10] + bytes(6)
    for _ in range(1800):
        sign = int(rng.integers(0, 2))
        r = rng.random()
        if r < 0.5:
            exp = int(rng.integers(1, 0x7FFF))
        elif r < 0.7:
            exp = int(rng.integers(0x3FFF - 80, 0x3FFF + 80))
        elif r < 0.8:
            exp = int(rng.choice([0, 1, 2, 0x7FFD, 0x7FFE]))
        else:
            exp = 0
        mant = int(rng.integers(0, 2 ** 63, dtype=np.uint64))
        if exp != 0 or rng.random() < 0.1:
            mant |= 1 << 63  # the integer bit of a normal (or of a pseudo-denormal)
        if exp == 0 and rng.random() < 0.3:
            mant >>= int(rng.integers(0, 63))
        items.append(long_double_le(sign, exp, mant))
    for bits in rng.integers(0, 2 ** 64, size=300, dtype=np.uint64):
        items.append(ld(np.float64(np.uint64(bits).view(np.float64))))
    for e in range(-4950, 4930, 7):
        digits = int(rng.integers(1, 22))
        m = decimal_digits(rng, digits)
        items.append(ld(np.longdouble("%se%d" % (m, e - digits + 1))))
    for x in [np.finfo(np.longdouble).max, "1e-4", "1e16", "0.1", "5e-324", "1e-4951", "3.6e-4951", "1e-5",
              "9999999999999999", "1e15", "0.0001", "1", "-1", "2.5", "123456789012345678901234"]:
        v = np.longdouble(x)
        for w in (v, np.nextafter(v, np.longdouble(np.inf)), np.nextafter(v, np.longdouble(-np.inf))):
            items.append(ld(w))
    for e in range(-30, 30):
        items.append(ld(np.longdouble("1e%d" % e)))
    # unnormals (integer bit clear) print positionally at any magnitude
    items += [long_double_le(0, 0x3FFF, 0), long_double_le(1, 0x3FFF, 5), long_double_le(0, 0x3FF0, 1 << 62),
              long_double_le(0, 0x7FFE, 0), long_double_le(0, 1, 0), long_double_le(1, 0x4100, 12345)]
    # pseudo-denormals, pseudo-infinities and pseudo-NaNs
    items += [long_double_le(0, 0, 1 << 63), long_double_le(1, 0, (1 << 63) | 1), long_double_le(0, 0x7FFF, 0),
              long_double_le(1, 0x7FFF, 1), long_double_le(0, 0x7FFF, (1 << 63) | (1 << 62))]
    items += LD
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def datetime_text_counts(rng):
    """Counts for datetime64/timedelta64: small, random at every magnitude, and the
    extremes where NumPy's arithmetic wraps."""
    counts = [0, 1, -1, 2, -2, 7, -7, 59, 60, 61, 365, -365, 10957, -719162, 2932896, -2932897,
              2 ** 31, -2 ** 31, 2 ** 62, -2 ** 62, 2 ** 63 - 1, -2 ** 63 + 1, 2 ** 63 - 2, -2 ** 63 + 2, NAT]
    # days of -0001-03-04 and 10000-01-01: years outside 0..9999
    counts += [int(np.datetime64(d, "D").astype(np.int64)) for d in ("-0001-03-04", "10000-01-01", "-10000-12-31")]
    for digits in range(1, 19):
        for _ in range(3):
            c = int(rng.integers(10 ** (digits - 1), 10 ** digits))
            counts += [c, -c]
    return counts


def scalar_texts(out_dir):
    """scalar_text.json: NumPy's str() of single scalars (see the top)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflowing decimal text becomes inf, as meant
        return write_scalar_texts(out_dir)


def write_scalar_texts(out_dir):
    rng = np.random.default_rng(SEED)
    cases = {}
    def put(descr, items):
        cases.setdefault(descr, []).extend(text_cases(descr, items))
    put("|b1", [b"\x00", b"\x01"])
    for t, vals in INTS.items():
        for bo in ("<>" if t[1] != "1" else "|"):
            put(bo + t, raw_items(np.array(vals, dtype=bo + t)))
    put("<f2", [struct.pack("<H", b) for b in range(65536)])
    put(">f2", [struct.pack(">H", b) for b in (0x0000, 0x3C00, 0x0001, 0x7BFF, 0xFC00, 0x7E00)])
    for n, count in ((4, 4000), (8, 3000)):
        bits = float_text_bits(rng, n, count)
        fmt = {4: "I", 8: "Q"}[n]
        put("<f%d" % n, [struct.pack("<" + fmt, b) for b in bits])
        put(">f%d" % n, [struct.pack(">" + fmt, b) for b in bits[:40]])
    ld = long_double_text_items(rng)
    put("<f16", ld)
    put(">f16", [x[::-1] for x in ld[:30]])
    specials = {
        4: [0.0, -0.0, 1.0, -1.0, 2.5, 0.1, 1e-5, 1e6, 1e20, 123456789.0, np.nan, -np.nan, np.inf, -np.inf],
        8: [0.0, -0.0, 1.0, -1.0, 2.5, 0.1, 1e-5, 1e16, 1e20, 123456789.0, np.nan, -np.nan, np.inf, -np.inf],
    }
    for n in (4, 8):
        ftype = {4: np.float32, 8: np.float64}[n]
        utype = {4: np.uint32, 8: np.uint64}[n]
        pairs = [(a, b) for a in specials[n] for b in specials[n]]
        rand = rng.integers(0, 2 ** (8 * n), size=(400, 2), dtype=np.uint64).astype(utype).view(ftype)
        pairs += [tuple(p) for p in rand]
        arr = np.array([complex(ftype(a), 0) for a, _ in pairs], dtype="<c%d" % (2 * n))
        arr.real = np.array([ftype(a) for a, _ in pairs], dtype=ftype)
        arr.imag = np.array([ftype(b) for _, b in pairs], dtype=ftype)
        put("<c%d" % (2 * n), raw_items(arr))
        put(">c%d" % (2 * n), raw_items(arr[:20].astype(">c%d" % (2 * n))))
    ldsp = [long_double_le(0, 0, 0), long_double_le(1, 0, 0)] + LD + ld[:40]
    c32 = [a + b for a in ldsp for b in ldsp[:14]]
    c32 += [ld[i] + ld[-i - 1] for i in range(200)]
    odd = [long_double_le(0, 0x3FFF, 0), long_double_le(1, 0x4100, 12345), long_double_le(0, 0x7FFF, 0),
           long_double_le(1, 0x7FFF, 1), long_double_le(0, 0, 1 << 63), long_double_le(1, 0, (1 << 63) | 5)]
    plain = [long_double_le(0, 0, 0), long_double_le(1, 0, 0), LD[0], LD[2], LD[4]]
    c32 += [a + b for a in odd + plain for b in odd + plain]
    put("<c32", c32)
    put(">c32", [x[:16][::-1] + x[16:][::-1] for x in c32[:20]])
    counts = datetime_text_counts(rng)
    for kind in ("M8", "m8"):
        for unit in TEXT_UNITS + TEXT_MULTIPLES:
            put("<%s[%s]" % (kind, unit), raw_items(np.array(counts, dtype="<i8")))
        put(">%s[s]" % kind, raw_items(np.array(counts[:20], dtype=">i8")))
    put("<m8", raw_items(np.array(counts, dtype="<i8")))
    put("<M8", raw_items(np.array([NAT], dtype="<i8")))
    put("<M8[0s]", raw_items(np.array([0, 5, NAT], dtype="<i8")))
    put("<m8[0s]", raw_items(np.array([0, 5, NAT], dtype="<i8")))
    put("|S1", [bytes([b]) for b in range(256)])
    s4 = [b"abcd", b"ab\x00\x00", b"\x00\x00\x00\x00", b"a\x00b\x00", b"'\"\\x", b"'abc", b'"abc', b"\t\n\r\x7f",
          b"\x80\xff\x00\x01", b"\x00abc"]
    s4 += [bytes(rng.integers(0, 256, size=4, dtype=np.uint8)) for _ in range(60)]
    put("|S4", s4)
    put("|V1", [bytes([b]) for b in range(256)])
    put("|V3", [b"\x00\x01\x02", b"\xab\xcd\xef", b"abc", b"\x00\x00\x00"])
    u = ["", "a", "hello", "\xe9t\xe9", "\u20ac\U0001F600", "a\x00b", "\x00\x00x", "'\"\\", "\t\n", "\U0010FFFF",
         "\x7f\x80\xa0", "\u2028\ufeff"]
    put("<U3", [(s + "\x00" * 3)[:3].encode("utf-32-le") for s in u if len(s) <= 3])
    put(">U3", [(s + "\x00" * 3)[:3].encode("utf-32-be") for s in u if len(s) <= 3])
    put("<U5", [(s + "\x00" * 5).encode("utf-32-le")[:20] for s in u if len(s) <= 5])
    lines = []
    for descr, entries in cases.items():
        body = ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries)
        lines.append("%s: [\n%s\n]" % (json.dumps(descr), body))
    text = "{\n" + ",\n".join(lines) + "\n}\n"
    with open(os.path.join(out_dir, "scalar_text.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return sum(len(v) for v in cases.values()), len(text.encode("utf-8"))


# ----------------------------------------------------------------------------
# Dask npy stacks
# ----------------------------------------------------------------------------

NESTED = np.dtype([("id", "<i4"), ("amp", ">f8"), ("pos", [("x", "<f4"), ("z", ">i2")]),
                   ("samples", "<i2", (3,)), ("ok", "|b1")], align=True)
PACKED = [("id", "<i8"), ("name", "<U3"), ("code", "|S2"), ("v", ">f4"), ("flag", "|b1")]


def stack_cases():
    """(case, original, chunks given to da.from_array, axis, how: None, NoCopy (the
    source) or np.asfortranarray (applied to each block)), in the order written."""
    rng = np.random.default_rng(SEED + 18)
    nested = np.zeros(7, dtype=NESTED)
    nested["id"] = np.arange(7) * 11 - 30
    nested["amp"] = rng.integers(-2**20, 2**20, 7) / 64.0
    nested["pos"]["x"] = rng.integers(-2**10, 2**10, 7) / 8.0
    nested["pos"]["z"] = rng.integers(-2**15, 2**15, 7)
    nested["samples"] = rng.integers(-2**15, 2**15, (7, 3))
    nested["ok"] = np.arange(7) % 3 == 0
    packed = np.zeros((5, 2), dtype=PACKED)
    packed["id"] = rng.integers(-2**62, 2**62, (5, 2))
    packed["name"] = [["ab", ""], ["\xe9t\xe9", "x"], ["\U0001F600", "end"], ["a\x00b", "q"], ["z", "zz"]]
    packed["code"] = [[b"ok", b""], [b"\x00\xff", b"x"], [b"ab", b"c"], [b"\x01", b"d\x00"], [b"e", b"ff"]]
    packed["v"] = rng.integers(-2**10, 2**10, (5, 2)) / 4.0
    packed["flag"] = rng.integers(0, 2, (5, 2)).astype(bool)
    words = ["alpha", "", "\xe9t\xe9", "\u20ac\U0001F600", "a\x00b", "omega", "x", "yz", "\U0010FFFF",
             "tail", "12345", "-"]
    f8 = from_bits(F8[2:12], "<f8")  # 1, -2.5, max, tiny, subnormals, +-inf, NaNs
    c16 = complex_from_bits([[F8[i], F8[(i * 5 + 3) % len(F8)]] for i in range(12)], "<c16").reshape(4, 3)
    i4 = rng.integers(-2**31, 2**31, (5, 11), dtype=np.int64).astype("<i4")
    f4 = np.asfortranarray((rng.integers(-2**12, 2**12, (6, 5)) / 16.0).astype("<f4"))
    return [
        ("f8_1d_uneven", f8, ((4, 4, 2),), 0, None),
        ("i4_2d_axis1", i4, ((2, 3), (4, 4, 3)), 1, None),
        # several chunks on axes 0 and 1: to_npy_stack rechunks them to one each
        ("u2_3d_axis2", rng.integers(0, 2**16, (3, 4, 10)).astype("<u2"), ((1, 2), (3, 1), (3, 3, 4)), 2, None),
        # Read through a source without .copy(), as Dask reads h5py's and zarr's datasets:
        # from_array starts with x.copy() of a NumPy array, and NumPy copies records field
        # by field, leaving whatever np.empty gave in the padding: bytes golden.py could
        # not make again.
        ("record_aligned", nested, ((3, 3, 1),), 0, NoCopy),
        ("record_packed", packed, ((2, 2, 1), (1, 1)), 0, None),
        ("M8_ms", np.array(DATETIMES, dtype="<i8").view("<M8[ms]"), ((5, 3),), 0, None),
        ("U5", np.array(words, dtype="<U5").reshape(2, 6), ((2,), (2, 2, 2)), 1, None),
        ("b1", rng.integers(0, 2, 13).astype("|b1"), ((5, 5, 3),), 0, None),
        ("c16", c16, ((1, 3), (3,)), 0, None),
        ("be_f8", from_bits(F8[:9], ">f8"), ((4, 4, 1),), 0, None),
        # A Fortran-order original: Dask's blocks are C order all the same, fortran_order
        # False in every header (checked in write_stack), whichever axis and chunks:
        # from_array starts with x.copy(), which is C order (dask 2026.8.0).
        ("fortran_axis0", f4, ((2, 2, 2), (5,)), 0, None),
        ("fortran_axis1", f4, ((6,), (2, 3)), 1, None),
        # Fortran-order blocks (np.save writes fortran_order True), as a stack whose blocks
        # come from elsewhere has them: no rechunk, each block saved as it is.
        ("fortran_blocks", np.arange(24, dtype="<i8").reshape(6, 4) * 7 - 50, ((3, 3), (4,)), 0,
         np.asfortranarray),
        # Dask allows a chunk of length 0: 1.npy holds shape (0,).
        ("zero_chunk", np.arange(6, dtype="<i8") - 2, ((3, 0, 3),), 0, None),
    ]


class NoCopy:
    """An array source without .copy() (see stack_cases), giving NumPy's slices."""

    def __init__(self, arr):
        self.arr, self.shape, self.dtype, self.ndim = arr, arr.shape, arr.dtype, arr.ndim

    def __getitem__(self, key):
        return self.arr[key]


# Copies of stacks with `info` removed (dask#11241: stacks no Dask wrote have none).
NOINFO = ["f8_1d_uneven", "i4_2d_axis1"]


def leaf_fields(dtype, prefix=()):
    """Index paths of the leaf fields of a record dtype (the dtype itself if plain)."""
    if dtype.names is None:
        return [prefix] if prefix else [()]
    return [p for name in dtype.names for p in leaf_fields(dtype.fields[name][0], prefix + (name,))]


def field_bytes(arr, path):
    """The bytes of one leaf field (a path from leaf_fields) of every element, in C order."""
    for name in path:
        arr = arr[name]
    return np.ascontiguousarray(arr).tobytes()


def npy_header(path):
    """(shape, fortran_order, dtype) from a version 1.0 .npy header."""
    with open(path, "rb") as f:
        assert npformat.read_magic(f) == (1, 0), path
        return npformat.read_array_header_1_0(f)


def write_stack(stack_dir, case, arr, chunks, axis, how):
    """Has Dask write one stack, checks what it wrote, and returns its sidecar."""
    directory = os.path.join(stack_dir, case)
    x = da.from_array(NoCopy(arr) if how is NoCopy else arr, chunks=chunks)
    if how is np.asfortranarray:
        x = x.map_blocks(how)
    da.to_npy_stack(directory, x, axis=axis)
    np.save(os.path.join(stack_dir, case + ".npy"), arr, allow_pickle=False)
    with open(os.path.join(directory, "info"), "rb") as f:
        raw = f.read()
    meta = pickle.loads(raw)  # Dask's own file, just written
    want = tuple(c if i == axis else (n,) for i, (c, n) in enumerate(zip(chunks, arr.shape)))
    assert meta == {"chunks": want, "dtype": arr.dtype, "axis": axis}, (case, meta)
    assert raw == pickle.dumps({"chunks": meta["chunks"], "dtype": meta["dtype"], "axis": axis}), case
    names = sorted(os.listdir(directory))
    assert names == sorted(["info"] + ["%d.npy" % i for i in range(len(want[axis]))]), (case, names)
    start = 0
    for i, n in enumerate(want[axis]):
        path = os.path.join(directory, "%d.npy" % i)
        shape, fortran, dtype = npy_header(path)
        assert shape == tuple(n if j == axis else m for j, m in enumerate(arr.shape)), (case, i, shape)
        assert dtype == arr.dtype and fortran == (how is np.asfortranarray and min(shape) > 1), (case, i)
        # padding bytes included: a block Dask assembled (rechunked) would have whatever
        # np.empty gave in a record's gaps, and golden.py's bytes must not vary
        part = arr[(slice(None),) * axis + (slice(start, start + n),)]
        order = "F" if fortran else "C"
        assert np.load(path).tobytes(order=order) == part.tobytes(order=order), (case, i)
        start += n
    back = da.from_npy_stack(directory).compute()
    assert back.dtype == arr.dtype and back.shape == arr.shape, case
    assert all(field_bytes(back, path) == field_bytes(arr, path) for path in leaf_fields(arr.dtype)), case
    return {"axis": axis, "chunks": [list(c) for c in want], "dtype": repr(npformat.dtype_to_descr(arr.dtype)),
            "info": True, "shape": list(arr.shape)}


def stacks(out_dir):
    """stack/: Dask's npy stacks of stack_cases(), the originals and sidecars (see the top)."""
    stack_dir = os.path.join(out_dir, "stack")
    os.makedirs(stack_dir, exist_ok=True)
    sidecars = {}
    with dask.config.set(scheduler="threads"):
        for case, arr, chunks, axis, how in stack_cases():
            sidecars[case] = write_stack(stack_dir, case, arr, chunks, axis, how)
    for case in NOINFO:
        copy = case + "_noinfo"
        shutil.copytree(os.path.join(stack_dir, case), os.path.join(stack_dir, copy))
        os.remove(os.path.join(stack_dir, copy, "info"))
        shutil.copyfile(os.path.join(stack_dir, case + ".npy"), os.path.join(stack_dir, copy + ".npy"))
        sidecars[copy] = dict(sidecars[case], info=False)
    for case, sidecar in sidecars.items():
        with open(os.path.join(stack_dir, case + ".json"), "w", encoding="utf-8", newline="\n") as f:
            f.write(json.dumps(sidecar, sort_keys=True) + "\n")
    total = 0
    for root, _, files in os.walk(stack_dir):
        total += sum(os.path.getsize(os.path.join(root, name)) for name in files)
    return len(sidecars), total


def main(argv):
    if len(argv) != 2:
        print("usage: golden.py OUT_DIR", file=sys.stderr)
        return 2
    out_dir = argv[1]
    if np.dtype(np.longdouble).itemsize != 16:
        print("golden.py: needs a platform where long double is 16 bytes (f16/c32)", file=sys.stderr)
        return 1
    scalars()
    datetimes()
    strings()
    shapes()
    records()
    headers()
    objects()
    entries, total = [], 0
    for rel, arr, version in sorted(FIXTURES, key=lambda x: x[0]):
        write(os.path.join(out_dir, *rel.split("/")), arr, version)
        entry, size = describe(out_dir, rel, arr)
        entries.append(entry)
        total += size
    for rel, arr, protocol, rewrite in OBJECT_FIXTURES:
        write_objects(os.path.join(out_dir, *rel.split("/")), arr, protocol)
        entry, size = describe_objects(out_dir, rel, arr, protocol, rewrite)
        entries.append(entry)
        total += size
    entry, size = write_archive(out_dir)
    entries.append(entry)
    total += size
    entries.sort(key=lambda e: e["file"])
    check_expectations(entries)
    text = "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n]\n"
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    total += len(text.encode("utf-8"))
    count, size = spellings(out_dir)
    total += size
    texts, size = scalar_texts(out_dir)
    total += size
    stack_count, size = stacks(out_dir)
    total += size
    print("golden.py: numpy %s wrote %d .npy and .npz files, manifest.json, %d dtype "
          "spellings, %d scalar texts and %d npy stacks with dask %s (%d bytes in all)"
          % (np.__version__, len(entries), count, texts, stack_count, dask.__version__, total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
