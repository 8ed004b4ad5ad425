"""Object arrays holding what ordinary code saves beyond plain values (issue 54): ragged
arrays, dicts of arrays, NumPy scalars, the standard library's data types. npy.load must
give exactly np.load(allow_pickle=True)'s values (types, dtypes, shapes, shared
references), by default and with allow_pickle=True, from paths, file objects and archives;
npy.save must write them; and pickles that abuse exactly what is allowed run nothing."""

import collections
import datetime
import decimal
import fractions
import io
import pathlib
import pickle
import re
import subprocess
import sys
import uuid

import numpy as np
import pytest

import npy


def object_array(values, shape=None):
    a = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        a[i] = v
    return a if shape is None else a.reshape(shape)


def zero_d(value):
    a = np.empty((), dtype=object)
    a[()] = value
    return a


UTC = datetime.UTC
EST = datetime.timezone(datetime.timedelta(hours=-5), "EST")
SHARED = np.arange(4.0)

KINDS = {
    "ragged": lambda: np.array([np.arange(3), np.arange(5)], dtype=object),
    "ragged-floats": lambda: object_array([np.linspace(0, 1, n) for n in (1, 4, 0, 7)]),
    "ragged-strs": lambda: object_array([np.array(["a", "bc"]), np.array(["xyz"])]),
    "ragged-bytes": lambda: object_array([np.array([b"a", b"bc"]), np.array([b""])]),
    "ragged-records": lambda: object_array(
        [np.zeros(2, dtype=[("t", "<f8"), ("n", "<i4")]), np.ones(1, dtype=[("t", "<f8"), ("n", "<i4")])]
    ),
    "ragged-big-endian": lambda: object_array([np.arange(3, dtype=">i4"), np.arange(2, dtype=">f8")]),
    "ragged-fortran": lambda: object_array([np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.eye(2)]),
    "ragged-datetime64": lambda: object_array(
        [np.array(["2020-01-01", "NaT"], dtype="M8[D]"), np.array([1, 2], dtype="m8[s]")]
    ),
    "nested-object-arrays": lambda: object_array([object_array(["a", None]), object_array([object_array([1])])]),
    "dict-of-arrays": lambda: zero_d({"w": np.arange(12.0).reshape(3, 4), "b": np.zeros(4), "name": "layer1"}),
    "list-of-arrays": lambda: zero_d([np.ones(2), (np.arange(3), "x")]),
    "shared-arrays": lambda: object_array([SHARED, SHARED, [SHARED]]),
    "datetimes": lambda: object_array(
        [
            datetime.datetime(2020, 1, 2, 3, 4, 5, 6),
            datetime.datetime(2020, 1, 2, tzinfo=UTC),
            datetime.datetime(2020, 1, 2, 3, tzinfo=EST),
            datetime.date(2024, 2, 29),
            datetime.time(1, 2, 3, 4),
            datetime.time(5, tzinfo=UTC),
            datetime.timedelta(days=-3, seconds=7),
            EST,
        ]
    ),
    "decimal-fraction-uuid": lambda: object_array(
        [decimal.Decimal("1.50"), decimal.Decimal("-Infinity"), fractions.Fraction(1, 3), uuid.UUID(int=7)]
    ),
    "containers": lambda: object_array(
        [
            bytearray(b"ab"),
            {1, 2},
            frozenset([3]),
            collections.OrderedDict([("a", 1)]),
            collections.Counter("aab"),
            set(),
        ]
    ),
    "paths-ranges-slices": lambda: object_array(
        [pathlib.PurePosixPath("/a/b"), pathlib.Path("x/y"), range(1, 10, 2), slice(1, None, 2), range]
    ),
    "numpy-scalars": lambda: object_array(
        [
            np.datetime64("2020-01-02"),
            np.timedelta64(3, "s"),
            np.datetime64("NaT"),
            np.timedelta64("NaT"),
            np.zeros(1, dtype=[("a", "<i4"), ("b", "<f8")])[0],
            np.float32(0.5),
            np.int16(-3),
        ]
    ),
    # Payloads longer than npy keeps in memory to check (64 KiB): read from the file once
    # checked; those whose content the check needs (a bytearray's, a NumPy scalar's) make
    # it check the whole pickle instead.
    "dict-of-large-arrays": lambda: zero_d(
        {f"w{i}": np.arange(30_000.0 + i) * (i + 1) for i in range(4)} | {"b": np.ones(3), "name": "net"}
    ),
    # Payloads of 8 MiB or more: their pages are faulted in by a second thread as read.
    "dict-of-arrays-past-8-mib": lambda: zero_d(
        {"w": np.arange(1_100_001.0) * 3, "i": np.arange(2_500_003, dtype="<i4"), "name": "big"}
    ),
    "ragged-large": lambda: object_array(
        [np.arange(70_000, dtype="<i4"), np.arange(2.0), np.asfortranarray(np.ones((300, 100))), np.zeros(0)]
    ),
    "large-bytes": lambda: object_array([bytes(range(256)) * 1000, b"x" * 65_536, b"short", np.ones(9000)]),
    "large-bytearray": lambda: object_array([bytearray(b"y" * 300_000), np.arange(20_000.0)]),
    "large-void-scalar": lambda: object_array([np.zeros(1, dtype="V100000")[0], np.arange(10_000.0)]),
}


def deep(x, ids=None):
    """What can be observed of a value, recursively: types, dtypes, shapes, order, bytes
    and values, and which places hold the same object (by first place seen)."""
    ids = {} if ids is None else ids
    shared = ids.setdefault(id(x), len(ids)) if isinstance(x, (np.ndarray, list, dict, set, bytearray)) else None
    if isinstance(x, np.ndarray):
        flags = (x.flags.c_contiguous, x.flags.f_contiguous, x.flags.writeable)
        head = ("ndarray", type(x), x.dtype, x.dtype.descr, x.shape, flags, shared)
        if x.dtype.hasobject:
            return (*head, tuple(deep(v, ids) for v in x.ravel(order="A")))
        return (*head, x.tobytes(order="A"))
    if isinstance(x, np.generic):
        return (type(x), x.dtype, x.tobytes())
    if isinstance(x, (list, tuple, set, frozenset)):
        items = sorted(x, key=repr) if isinstance(x, (set, frozenset)) else x
        return (type(x), shared, tuple(deep(v, ids) for v in items))
    if isinstance(x, dict):
        return (type(x), shared, tuple((deep(k, ids), deep(v, ids)) for k, v in x.items()))
    if isinstance(x, decimal.Decimal):
        return (type(x), str(x))
    if isinstance(x, datetime.datetime | datetime.time):
        return (type(x), repr(x), x.fold)
    return (type(x), repr(x), shared)


@pytest.mark.parametrize("name", KINDS)
@pytest.mark.parametrize("allow_pickle", [None, True])
def test_load_gives_numpys_values(tmp_path, name, allow_pickle):
    path = tmp_path / "o.npy"
    np.save(path, KINDS[name]())
    theirs = deep(np.load(path, allow_pickle=True))
    assert deep(npy.load(path, allow_pickle=allow_pickle)) == theirs
    with open(path, "rb") as f:
        assert deep(npy.load(f, allow_pickle=allow_pickle)) == theirs
    assert deep(npy.load(io.BytesIO(path.read_bytes()), allow_pickle=allow_pickle)) == theirs


@pytest.mark.parametrize("name", KINDS)
def test_save_writes_what_numpy_loads(tmp_path, name):
    arr = KINDS[name]()
    np.save(tmp_path / "np.npy", arr)
    npy.save(tmp_path / "npy.npy", arr)
    assert (tmp_path / "npy.npy").read_bytes() == (tmp_path / "np.npy").read_bytes()
    assert deep(np.load(tmp_path / "npy.npy", allow_pickle=True)) == deep(
        np.load(tmp_path / "np.npy", allow_pickle=True)
    )


def test_archive_members_load_as_numpy_loads_them(tmp_path):
    arrays = {name: KINDS[name]() for name in ("ragged", "dict-of-arrays", "datetimes", "containers")}
    np.savez(tmp_path / "a.npz", **arrays)
    with np.load(tmp_path / "a.npz", allow_pickle=True) as theirs, npy.load(tmp_path / "a.npz") as ours:
        for name in arrays:
            assert deep(ours[name]) == deep(theirs[name]), name


def test_numpy_2_loads_the_python_2_object_array_of_numpy_1_0(tmp_path):
    # NumPy's own test file: numpy.core._internal._reconstruct, and the class range itself
    # (Python 2's xrange) as a value.
    data = pathlib.Path(np.__file__).parent / "lib" / "tests" / "data" / "py2-np0-objarr.npy"
    theirs = np.load(data, allow_pickle=True, encoding="latin1")
    ours = npy.load(data, allow_pickle=True, encoding="latin1")
    assert deep(ours) == deep(theirs)
    assert ours[1] is range


def test_dict_saved_whole_reads_back_with_item(tmp_path):
    weights = np.random.default_rng(0).standard_normal((3, 4))
    npy.save(tmp_path / "d.npy", {"w": weights, "b": np.zeros(4), "name": "layer1"})
    d = npy.load(tmp_path / "d.npy").item()
    assert d["name"] == "layer1" and (d["w"] == weights).all() and d["w"].flags.writeable


# ---------------------------------------------------------------------------------------
# Pickles that abuse exactly what is allowed.


class Run:
    """Loaded, calls `call(*args)`."""

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


def numpy_runs_it(path, marker):
    """Whether `np.load(path, allow_pickle=True)`, in a fresh interpreter that can import
    this file's classes, creates `marker` (whether or not the load then fails): the control
    that shows a hostile file's payload is live. The marker is removed again."""
    code = (
        f"import sys\nsys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})\nimport numpy as np\n"
        f"try:\n    np.load({str(path)!r}, allow_pickle=True)\nexcept Exception:\n    pass\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, capture_output=True)
    ran = marker.exists()
    marker.unlink(missing_ok=True)
    return ran


def getattr_chain(marker):
    """The opcodes of `getattr(getattr(getattr, '__self__'), 'eval')("open(marker, 'w')")`:
    the builtins module reached from getattr alone, then its eval called."""
    code = f"open({str(marker)!r}, 'w')".encode()
    return b"cbuiltins\ngetattr\n(cbuiltins\ngetattr\n(cbuiltins\ngetattr\nV__self__\ntRVeval\ntR(V" + code + b"\ntR"


def hostile(marker):
    """Each a value that, unpickled, creates `marker`, hidden where allowed values may be."""
    run = Run(open, str(marker), "w")
    return {
        "in-dict": zero_d({"w": np.ones(2), "payload": run}),
        "in-nested-array": object_array([np.ones(1), object_array(["x", run])]),
        "in-frozenset": object_array([frozenset([1, run])]),
        "in-slice": object_array([slice(1, run)]),
        "in-ordereddict": object_array([collections.OrderedDict([("a", run)])]),
        "as-tzinfo": object_array([datetime.datetime(2020, 1, 1, tzinfo=UTC), run]),
        "system": object_array([Run(__import__("os").system, f"touch {marker}")]),
    }


@pytest.mark.parametrize("name", [*hostile("marker"), "getattr-chain"])
@pytest.mark.parametrize("allow_pickle", [None, True])
def test_hostile_pickles_among_allowed_values_run_nothing(tmp_path, name, allow_pickle):
    marker = tmp_path / "ran"
    path = tmp_path / "hostile.npy"
    if name == "getattr-chain":
        path = pickled_file(tmp_path, wrap(getattr_chain(marker)))
        path = path.rename(tmp_path / "hostile.npy")
    else:
        np.save(path, hostile(marker)[name])
    assert numpy_runs_it(path, marker), "the payload is not live: np.load(allow_pickle=True) ran nothing"
    with pytest.raises(npy.UnsafePickleError, match=r"hostile\.npy"):
        npy.load(path, allow_pickle=allow_pickle)
    assert not marker.exists()


def pickled_file(tmp_path, pickle_bytes, shape=(1,)):
    """A .npy of an object array whose pickle is `pickle_bytes`."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "|O", "fortran_order": False, "shape": shape})
    path = tmp_path / "crafted.npy"
    path.write_bytes(buf.getvalue() + pickle_bytes)
    return path


def wrap(element):
    """The protocol 4 pickle of a 1-element object array whose element's opcodes are
    `element`: np.save's own bytes with the element spliced in."""
    buf = io.BytesIO()
    pickle.dump(object_array([None]), buf, protocol=4)
    p = buf.getvalue()
    # np.save's list of one None: EMPTY_LIST MEMOIZE NONE APPEND
    at = p.index(b"]\x94N")
    return p[: at + 2] + element + p[at + 3 :]


CRAFTED = {
    # bytearray(2**40): a size, which CPython would allocate.
    "bytearray-of-a-size": b"\x8c\x08builtins\x8c\tbytearray\x93\x8a\x06\x00\x00\x00\x00\x00\x01\x85R",
    # Counter(2**40): an int, which Counter would iterate.
    "counter-of-an-int": b"\x8c\x0bcollections\x8c\x07Counter\x93\x8a\x06\x00\x00\x00\x00\x00\x01\x85R",
    # An inner float array whose shape claims 2**30 elements over 8 bytes.
    "lying-shape": b"\x8c\x16numpy._core.multiarray\x8c\x0c_reconstruct\x93\x8c\x05numpy\x8c\x07ndarray\x93K\x00\x85C"
    b"\x01b\x87R(K\x01J\x00\x00\x00@\x85\x8c\x05numpy\x8c\x05dtype\x93\x8c\x02f8\x89\x88\x87R(K\x03\x8c\x01<NNNJ"
    b"\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89C\x08\x00\x00\x00\x00\x00\x00\xf0?tb",
    # An inner object-dtype array given raw bytes (pointers, to NumPy).
    "object-dtype-raw-bytes": b"\x8c\x16numpy._core.multiarray\x8c\x0c_reconstruct\x93\x8c\x05numpy\x8c\x07ndarray"
    b"\x93K\x00\x85C\x01b\x87R(K\x01K\x01\x85\x8c\x05numpy\x8c\x05dtype\x93\x8c\x02O8\x89\x88\x87R(K\x03\x8c\x01|"
    b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89C\x08AAAAAAAAtb",
    # A date with month 13, and a timedelta past Python's range.
    "bad-date": b"\x8c\x08datetime\x8c\x04date\x93C\x04\x07\xe4\r\x01\x85R",
    "huge-timedelta": b"\x8c\x08datetime\x8c\ttimedelta\x93\x8a\x06\x00\x00\x00\x00\x00\x01\x85R",
    # NEWOBJ of a class other than UUID.
    "newobj": b"\x8c\x08datetime\x8c\x04date\x93)\x81",
    # A UUID state smuggling another attribute.
    "uuid-state": b"\x8c\x04uuid\x8c\x04UUID\x93)\x81}(\x8c\x03intK\x05\x8c\x08__class__K\x01ub",
}


@pytest.mark.parametrize("name", CRAFTED)
def test_crafted_abuses_of_allowed_types_are_refused(tmp_path, name):
    path = pickled_file(tmp_path, wrap(CRAFTED[name]))
    with pytest.raises(npy.UnsafePickleError, match=r"crafted\.npy"):
        npy.load(path)
    with pytest.raises(npy.UnsafePickleError):
        npy.load(path, allow_pickle=True)


def test_crafted_pickles_are_well_formed(tmp_path):
    # The harness itself: the same splice with an allowed value loads in both.
    path = pickled_file(tmp_path, wrap(b"\x8c\x08datetime\x8c\x04date\x93C\x04\x07\xe4\x01\x02\x85R"))
    assert np.load(path, allow_pickle=True)[0] == datetime.date(2020, 1, 2)
    assert npy.load(path)[0] == datetime.date(2020, 1, 2)


# ---------------------------------------------------------------------------------------
# The user's own classes, let through by name.


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __reduce__(self):
        return Point, (self.x, self.y)

    def __eq__(self, other):
        return type(other) is Point and (self.x, self.y) == (other.x, other.y)


def test_safe_globals_let_a_trusted_class_through_and_nothing_else(tmp_path):
    path = tmp_path / "points.npy"
    np.save(path, object_array([Point(1, 2), Point(np.arange(2), "b")]))
    with pytest.raises(npy.UnsafePickleError, match=r"Point' is not allowed.*npy\.safe_globals"):
        npy.load(path)
    with npy.safe_globals([Point]):
        assert npy.get_safe_globals() == [Point]
        loaded = npy.load(path)
        assert loaded[0] == Point(1, 2) and (loaded[1].x == np.arange(2)).all()
        with open(path, "rb") as f:
            assert npy.load(f)[0] == Point(1, 2)
    assert npy.get_safe_globals() == []
    with pytest.raises(npy.UnsafePickleError):
        npy.load(path)
    # What a trusted class is given is still checked: a payload among its arguments.
    marker = tmp_path / "ran"
    np.save(path, object_array([Point(1, Run(open, str(marker), "w"))]))
    assert numpy_runs_it(path, marker)
    npy.add_safe_globals([(Point, f"{Point.__module__}.Point")])
    try:
        with pytest.raises(npy.UnsafePickleError, match=r"'io\.open' is not allowed"):
            npy.load(path)
    finally:
        npy.clear_safe_globals()
    assert not marker.exists()
    with pytest.raises(TypeError, match=r"module\.name"):
        npy.add_safe_globals([(Point, "Point")])


# ---------------------------------------------------------------------------------------
# A file that changes while npy loads it: the opcodes run are the bytes the check read.

MARKS: list[str] = []


class Marker:
    """Records that it was made: a safe global that only opcodes the check never read
    would make."""

    def __init__(self):
        MARKS.append("ran")


class Tamper:
    """Rewrites the file being loaded when it is made (a safe global, so mid-load): the
    bytes `old` become `new`, and the `n` float64s that start with `key` become `fill`;
    or the file is cut short at `cut` bytes. (Bytes to find are given reversed, so the
    pickle of these arguments does not hold them.)"""

    def __init__(self, path, old, new, key, n, fill, cut):
        self.args = (path, old, new, key, n, fill, cut)
        with open(path, "r+b") as f:
            content = f.read()
            if cut is not None:
                f.truncate(cut)
                return
            if old[::-1] not in content:
                return
            f.seek(content.index(old[::-1]))
            f.write(new)
            f.seek(content.index(key[::-1]))
            f.write(np.full(n, fill).tobytes())

    def __reduce__(self):
        return Tamper, self.args


def tampered_file(tmp_path, cut=None):
    """A dict of a Tamper, a 1 MB array and a str, saved; Tamper rewrites the str's opcode
    into opcodes that make a Marker, and the array's data into sevens."""
    path = tmp_path / "tampered.npy"
    # SHORT_BINUNICODE of a str as long as GLOBAL Marker, EMPTY_TUPLE, REDUCE.
    new = f"c{Marker.__module__}\nMarker\n".encode() + b")R"
    text = "t" * (len(new) - 2)
    old = b"\x8c" + bytes([len(text)]) + text.encode()
    data = np.arange(125_000.0)
    tamper = Tamper.__new__(Tamper)
    tamper.args = (str(path), old[::-1], new, data.tobytes()[:64][::-1], data.size, 7.0, cut)
    # The str right after Tamper: the check has read both (and the array's opcode after
    # them) before it approves any of them, so before Tamper runs.
    np.save(path, zero_d({"t": tamper, "s": text, "w": data}))
    content = path.read_bytes()
    assert content.count(old) == 1 and content.count(data.tobytes()) == 1
    return path, text


def test_opcodes_rewritten_while_loading_are_not_run(tmp_path):
    path, text = tampered_file(tmp_path)
    saved = path.read_bytes()
    for load in (npy.load, lambda p: npy.load(p, allow_pickle=True)):
        path.write_bytes(saved)
        MARKS.clear()
        with npy.safe_globals([Tamper, Marker]):
            loaded = load(path).item()
        # The str's opcode was read (and checked) before Tamper rewrote it: it is the
        # str, and no Marker was made. The array's data, a payload whose first KiB the
        # check may have read with the opcodes before it and whose rest is read from the
        # file once checked, is what the file held when each part was read: bytes of
        # the old values, then of sevens to its end.
        assert path.read_bytes() != saved
        assert loaded["s"] == text and MARKS == []
        assert isinstance(loaded["t"], Tamper)
        w = loaded["w"]
        assert w.dtype == np.float64 and w.shape == (125_000,)
        got, old, new = w.tobytes(), np.arange(125_000.0).tobytes(), np.full(125_000, 7.0).tobytes()
        first = next(i for i, (a, b) in enumerate(zip(got, old, strict=True)) if a != b)
        assert first <= 64 << 10 and got[first:] == new[first:]
    # The file as rewritten makes a Marker when unpickled whole.
    loaded = np.load(path, allow_pickle=True).item()
    assert isinstance(loaded["s"], Marker) and MARKS == ["ran"]


def test_a_file_cut_short_while_loading_fails_cleanly(tmp_path):
    # Cut inside the array's data while npy loads it: the unpickler's read of the data
    # finds the file short, or the check, still reading the opcodes after the data, finds
    # the pickle cut short (whichever reads there first): an error either way.
    path, _ = tampered_file(tmp_path, cut=200_000)
    saved = path.read_bytes()
    with npy.safe_globals([Tamper]), pytest.raises((EOFError, npy.UnsafePickleError)) as raised:
        npy.load(path)
    assert re.search("cut short while npy loaded it|ends before its STOP", str(raised.value)), raised.value
    assert path.stat().st_size == 200_000
    # Cut before npy reads it: the check finds the pickle cut short.
    path.write_bytes(saved[:200_000])
    with npy.safe_globals([Tamper]), pytest.raises(npy.UnsafePickleError, match="ends before its STOP"):
        npy.load(path)
