"""Object arrays holding zoneinfo zones, deques, defaultdicts and masked arrays (issue 67):
npy.load gives exactly np.load(allow_pickle=True)'s values, through every door that loads
objects, and npy.save writes np.save's bytes. Each entry these kinds widen has a hostile
file that abuses it: np.load runs its payload (the control, in a subprocess), npy refuses
it naming the file, and nothing runs."""

import collections
import datetime
import functools
import io
import pathlib
import subprocess
import sys
import textwrap
import zoneinfo

import numpy as np
import pytest

import npy


def object_array(values):
    a = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        a[i] = v
    return a


PARIS = zoneinfo.ZoneInfo("Europe/Paris")

KINDS = {
    "zoned-datetimes": lambda: object_array(
        [
            datetime.datetime(2024, 3, 1, 12, 0, tzinfo=PARIS),
            datetime.datetime(2024, 7, 1, 12, 0, 5, 6, tzinfo=PARIS),
            datetime.time(23, 59, tzinfo=zoneinfo.ZoneInfo("UTC")),
            datetime.datetime(2021, 11, 7, 1, 30, fold=1, tzinfo=zoneinfo.ZoneInfo.no_cache("America/New_York")),
            zoneinfo.ZoneInfo("Etc/GMT+5"),
            PARIS,
        ]
    ),
    "deques": lambda: object_array(
        [
            collections.deque([1, "a", [2]]),
            collections.deque(),
            collections.deque(maxlen=0),
            collections.deque(range(3), maxlen=5),
            collections.deque([collections.deque([7])]),
        ]
    ),
    "defaultdicts": lambda: object_array(
        [
            collections.defaultdict(list, {1: [2]}),
            collections.defaultdict(None),
            collections.defaultdict(int, {"a": 1, "b": collections.defaultdict(set)}),
            collections.defaultdict(bytearray),
            collections.defaultdict(dict, {(1, 2): {"x": None}}),
        ]
    ),
    "masked-arrays": lambda: object_array(
        [
            np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]),
            np.ma.masked_array([1.5, 2.5]),
            np.ma.masked_array(np.arange(6, dtype="<i2").reshape(2, 3), mask=[[0, 1, 0], [1, 0, 0]], fill_value=7),
            np.ma.masked_array(np.array([1, "x"], dtype=object), mask=[0, 1]),
            np.ma.masked_array(np.asfortranarray(np.arange(4.0).reshape(2, 2)), mask=[[0, 1], [0, 0]]),
            np.ma.masked_array(np.array(["ab", "c"]), mask=[1, 0]),
            np.ma.masked_array(np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]), mask=[(0, 1)]),
            np.ma.masked_array(np.array([1, 2], dtype=">i4"), mask=[1, 0], fill_value=-1),
            np.ma.masked_array(np.array(["2020-01-02", "NaT"], dtype="M8[D]"), mask=[0, 1]),
        ]
    ),
}


def deep(x):
    """What can be observed of a value, recursively: types, and for each kind what makes
    it (a zone's key and whether it is the cached instance, a deque's maxlen, a
    defaultdict's factory, a masked array's data, mask and fill value)."""
    if isinstance(x, np.ma.MaskedArray):
        return (
            type(x),
            deep(x.data),
            deep(np.ma.getmaskarray(x)),
            deep(np.asarray(x.fill_value)),
            x.flags.f_contiguous,
        )
    if isinstance(x, np.ndarray):
        if x.dtype.hasobject:
            return ("ndarray", x.dtype, x.shape, tuple(deep(v) for v in x.ravel(order="A")))
        return ("ndarray", x.dtype, x.dtype.descr, x.shape, x.flags.f_contiguous, x.tobytes(order="A"))
    if isinstance(x, zoneinfo.ZoneInfo):
        return (type(x), x.key, x is zoneinfo.ZoneInfo(x.key))
    if isinstance(x, datetime.datetime | datetime.time):
        return (type(x), repr(x), x.fold, deep(x.tzinfo))
    if isinstance(x, collections.deque):
        return (type(x), x.maxlen, tuple(deep(v) for v in x))
    if isinstance(x, collections.defaultdict):
        return (type(x), x.default_factory, tuple((deep(k), deep(v)) for k, v in x.items()))
    if isinstance(x, dict):
        return (type(x), tuple((deep(k), deep(v)) for k, v in x.items()))
    if isinstance(x, list | tuple):
        return (type(x), tuple(deep(v) for v in x))
    if isinstance(x, np.generic):
        return (type(x), x.dtype, x.tobytes())
    return (type(x), repr(x))


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


def test_archive_members_load_as_numpy_loads_them(tmp_path):
    np.savez(tmp_path / "a.npz", **{name: make() for name, make in KINDS.items()})
    with np.load(tmp_path / "a.npz", allow_pickle=True) as theirs, npy.load(tmp_path / "a.npz") as ours:
        for name in KINDS:
            assert deep(ours[name]) == deep(theirs[name]), name


@pytest.mark.parametrize("name", KINDS)
def test_save_writes_what_numpy_writes(tmp_path, name):
    arr = KINDS[name]()
    np.save(tmp_path / "np.npy", arr)
    npy.save(tmp_path / "npy.npy", arr)
    assert (tmp_path / "npy.npy").read_bytes() == (tmp_path / "np.npy").read_bytes()


def test_a_cached_zone_is_the_one_instance_and_a_key_not_in_the_database_fails_as_in_numpy(tmp_path):
    path = tmp_path / "z.npy"
    np.save(path, KINDS["zoned-datetimes"]())
    loaded = npy.load(path)
    assert loaded[0].tzinfo is PARIS and loaded[5] is PARIS
    assert loaded[3].tzinfo is not zoneinfo.ZoneInfo("America/New_York")  # no_cache stays so
    # A well-formed key that names no zone: the same exception as NumPy's load.
    np.save(path, object_array([Key("Nowhere/Land")]))
    with pytest.raises(zoneinfo.ZoneInfoNotFoundError):
        np.load(path, allow_pickle=True)
    with pytest.raises(zoneinfo.ZoneInfoNotFoundError):
        npy.load(path)


# ---------------------------------------------------------------------------------------
# Hostile files, each abusing exactly one widened entry.


class Run:
    """Loaded, calls `call(*args)` (callable itself, so that it can be a factory or be
    called in turn)."""

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args

    def __call__(self, *args):
        raise AssertionError("never called while pickling")


class Key:
    """Pickles as a ZoneInfo of any key: `getattr(ZoneInfo, '_unpickle')(key, 1)`."""

    def __init__(self, key):
        self.key = key

    def __reduce__(self):
        return Run(getattr, zoneinfo.ZoneInfo, "_unpickle"), (self.key, 1)


class Lie:
    """Pickles as masked array `m` with item `i` of its state replaced by `value`, or
    with `_mareconstruct` given `args`."""

    def __init__(self, m, i=None, value=None, args=None):
        self.m, self.i, self.value, self.args = m, i, value, args

    def __reduce__(self):
        f, args, state = self.m.__reduce__()
        if self.i is not None:
            state = (*state[: self.i], self.value, *state[self.i + 1 :])
        return f, self.args or args, state


def payload(marker):
    """A value that, unpickled, creates `marker`."""
    return Run(open, str(marker), "w")


def getattr_chain(marker):
    """os.system('touch marker') reached from pathlib.PurePosixPath with builtins.getattr
    alone: both are globals npy allows (getattr for ZoneInfo's sake)."""
    new = Run(getattr, pathlib.PurePosixPath, "__new__")
    get = Run(getattr, Run(getattr, new, "__globals__"), "get")
    system = Run(getattr, Run(get, "os"), "system")
    return Run(system, f"touch {marker}")


MASK = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])

# name: (the value saved, whether NumPy runs the payload while loading, what npy says)
HOSTILE = {
    # A factory runs when a missing key is read: the control reads one.
    "defaultdict-factory-partial": (
        lambda m: object_array([collections.defaultdict(functools.partial(open, str(m), "w"))]),
        "read-missing",
        "'functools.partial' is not allowed",
    ),
    "defaultdict-factory-call": (
        lambda m: object_array([collections.defaultdict(payload(m))]),
        "load",
        "'io.open' is not allowed",
    ),
    "defaultdict-factory-class": (
        lambda m: object_array([collections.defaultdict(collections.OrderedDict)]),
        None,
        "default_factory is collections.OrderedDict: only None or a builtin class",
    ),
    "defaultdict-factory-getattr": (
        lambda m: object_array([collections.defaultdict(getattr)]),
        None,
        "default_factory is builtins.getattr: only None or a builtin class",
    ),
    # getattr, allowed for ZoneInfo's sake, walked to os.system.
    "zone-getattr-chain": (
        lambda m: object_array([datetime.datetime(2020, 1, 1, tzinfo=PARIS), getattr_chain(m)]),
        "load",
        "builtins.getattr is decoded only as getattr(zoneinfo.ZoneInfo, '_unpickle')",
    ),
    # Keys that would leave the zone database (CPython's own check raises ValueError).
    "zone-key-relative": (lambda m: object_array([Key("../../../etc/passwd")]), None, "not an IANA zone name"),
    "zone-key-absolute": (lambda m: object_array([Key(str(m))]), None, "not an IANA zone name"),
    "zone-key-dots": (lambda m: object_array([Key("Europe/../../etc/passwd")]), None, "not an IANA zone name"),
    "zone-key-nul": (lambda m: object_array([Key("Europe/Paris\0")]), None, "not an IANA zone name"),
    "zone-key-long": (lambda m: object_array([Key("A" * 300)]), None, "not an IANA zone name"),
    # A mask, a fill value or a class argument that runs code.
    "masked-mask-call": (lambda m: object_array([Lie(MASK, 5, payload(m))]), "load", "'io.open' is not allowed"),
    "masked-fill-call": (lambda m: object_array([Lie(MASK, 6, payload(m))]), "load", "'io.open' is not allowed"),
    "masked-subtype": (
        lambda m: object_array([Lie(MASK, args=(np.ndarray, np.ndarray, (0,), "b"))]),
        None,
        "decoded only as _mareconstruct(numpy.ma.MaskedArray, numpy.ndarray, (0,), 'b')",
    ),
    "masked-baseshape": (
        lambda m: object_array([Lie(MASK, args=(np.ma.MaskedArray, np.ndarray, (2**40,), "b"))]),
        None,
        "decoded only as _mareconstruct",
    ),
    # Masks that lie about the data (NumPy raises for a wrong length, and takes a byte
    # of 2 as a bool that is neither True nor False).
    "masked-mask-short": (lambda m: object_array([Lie(MASK, 5, b"\0\1")]), None, "needs a mask of 3 bytes, found 2"),
    "masked-mask-long": (lambda m: object_array([Lie(MASK, 5, b"\0\1\0\0")]), None, "needs a mask of 3 bytes, found 4"),
    "masked-mask-not-bool": (lambda m: object_array([Lie(MASK, 5, b"\0\2\0")]), None, "holding the byte 2"),
    "masked-mask-of-records": (
        lambda m: object_array([Lie(np.ma.masked_array(np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")])), 5, b"\0\1")]),
        None,
        "needs a mask of 4 bytes, found 2",
    ),
    "masked-mask-list": (lambda m: object_array([Lie(MASK, 5, [False, True, False])]), None, "not bytes"),
    "masked-data-short": (lambda m: object_array([Lie(MASK, 4, b"\1" * 23)]), None, "needs 24 bytes of data, found 23"),
    "masked-shape": (lambda m: object_array([Lie(MASK, 1, (2**31,))]), None, "needs 17179869184 bytes of data"),
}


def control(tmp_path, path, marker, how):
    """np.load(allow_pickle=True) of `path` in a fresh interpreter (and, for `read-missing`,
    the read of a missing key of its first element); whether `marker` appeared."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import numpy as np
        try:
            a = np.load({str(path)!r}, allow_pickle=True)
            if {how!r} == "read-missing":
                a[0]["missing"]
        except Exception:
            pass
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, timeout=60)
    return marker.exists()


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_files_run_under_numpy_and_are_refused_by_npy(tmp_path, name):
    make, runs, message = HOSTILE[name]
    marker = tmp_path / "ran"
    path = tmp_path / "hostile.npy"
    np.save(path, make(marker))
    if runs is not None:
        assert control(tmp_path, path, marker, runs), "the control: np.load runs the payload"
        marker.unlink()
    for allow_pickle in (None, True):
        with pytest.raises(npy.UnsafePickleError, match=r"hostile\.npy") as e:
            npy.load(path, allow_pickle=allow_pickle)
        assert message in str(e.value)
        with open(path, "rb") as f, pytest.raises(npy.UnsafePickleError):
            npy.load(f, allow_pickle=allow_pickle)
    np.savez(tmp_path / "hostile.npz", x=make(marker))
    with (
        npy.load(tmp_path / "hostile.npz") as z,
        pytest.raises(npy.UnsafePickleError, match=r"hostile\.npz', member 'x\.npy'"),
    ):
        z["x"]
    assert not marker.exists()
