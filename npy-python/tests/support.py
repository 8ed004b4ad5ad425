"""Running the same code with NumPy's save/load functions and with npy's: the two sides,
what a run observably did, the kinds of file both are given, and the arrays they save."""

import contextlib
import gzip
import io
import struct
import tempfile
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import npy

FLAGS = ("c_contiguous", "f_contiguous", "writeable", "aligned")


@dataclass(frozen=True)
class Api:
    """One side of a comparison. Functions are looked up when called, so a function npy
    lacks fails the tests that use it, not the collection of every test."""

    name: str
    module: object

    def __getattr__(self, attr):
        return getattr(self.module, attr)


NUMPY = Api(
    "numpy",
    SimpleNamespace(
        load=np.load,
        save=np.save,
        savez=np.savez,
        savez_compressed=np.savez_compressed,
        open_memmap=np.lib.format.open_memmap,
    ),
)
NPY = Api("npy", npy)


@dataclass(frozen=True)
class Raised:
    """An exception a run raised: its type, and its message where that is compared (`exact`);
    `detail` is shown on failure but never compared."""

    type: type
    message: str | None = None
    detail: str = field(default="", compare=False)


def attempt(call, *args, exact=False, **kwargs):
    """`call(*args, **kwargs)`'s result, or the `Raised` it raised."""
    try:
        return call(*args, **kwargs)
    except Exception as e:
        return Raised(type(e), str(e) if exact else None, f"{type(e).__name__}: {e}")


def raised(result, cls):
    """Whether `result` is a `Raised` of `cls` or a subclass."""
    return isinstance(result, Raised) and issubclass(result.type, cls)


def matching(actual, expected):
    """`actual` with each `Raised` that matches the one at the same place in `expected` replaced
    by that one: npy may raise a more specific exception than NumPy, never another, and its
    message may add to NumPy's (the file's name), never change it."""
    if isinstance(actual, Raised) and isinstance(expected, Raised):
        if issubclass(actual.type, expected.type) and (expected.message or "") in (actual.message or ""):
            return expected
        return actual
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)) and len(actual) == len(expected):
        return type(actual)(matching(a, e) for a, e in zip(actual, expected, strict=True))
    if isinstance(actual, dict) and isinstance(expected, dict):
        return {k: matching(v, expected[k]) if k in expected else v for k, v in actual.items()}
    return actual


def describe(x, padding=True):
    """What can be observed of a loaded value: for arrays their class, dtype, layout, flags and
    bytes (values, types and sharing for Python objects); memmaps add their file and mode.
    `padding=False` leaves out the bytes between a record's fields (see `field_bytes`)."""
    if not isinstance(x, np.ndarray):
        return x
    seen = {
        "class": type(x).__name__,
        "dtype": x.dtype,
        "descr": x.dtype.descr,
        "shape": x.shape,
        "strides": x.strides if x.size else None,  # an empty array's strides are arbitrary
        "flags": {flag: getattr(x.flags, flag) for flag in FLAGS},
    }
    if x.dtype.hasobject or x.dtype.kind == "T":
        seen["values"] = repr(x.tolist())
        seen["types"] = [type(v) for v in x.flat]
        seen["distinct"] = len({id(v) for v in x.flat})
    else:
        seen["bytes"] = x.tobytes(order="A") if padding else field_bytes(x)
    if isinstance(x, np.memmap):
        seen.update(filename=x.filename, offset=x.offset, mode=x.mode)
    return seen


def field_bytes(arr):
    """The bytes of every field, not of the padding between them (which np.load leaves
    uninitialized in npz members)."""
    if arr.dtype.names is None:
        return arr.tobytes(order="A")
    return b"".join(field_bytes(arr[name]) for name in arr.dtype.names)


def position(f):
    try:
        return f.tell()
    except (AttributeError, OSError):
        return None


def npy_bytes(arr):
    """The bytes np.save writes for `arr`."""
    out = io.BytesIO()
    np.save(out, arr)
    return out.getvalue()


def npy_file(header, data=b"", version=(1, 0)):
    """A .npy file with the given header text, padded as np.save pads it."""
    text = header.encode("latin1" if version < (3, 0) else "utf8")
    size = "<H" if version == (1, 0) else "<I"
    prefix = 8 + struct.calcsize(size)
    text += b" " * (-(prefix + len(text) + 1) % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack(size, len(text)) + text + data


class PathLike:
    """An os.PathLike that is neither str nor pathlib.Path."""

    def __init__(self, path):
        self.path = str(path)

    def __fspath__(self):
        return self.path

    def __repr__(self):
        return f"PathLike({self.path!r})"


class WriteOnly:
    """A sink with `write` alone: no `read`, `seek`, `tell` or `flush`."""

    def __init__(self):
        self.data = bytearray()

    def write(self, b):
        self.data += b
        return len(b)


class Unseekable(WriteOnly):
    """A stream like a pipe's writing end: it writes and flushes; reading and seeking raise."""

    def read(self, size=-1):
        raise io.UnsupportedOperation("read")

    def seekable(self):
        return False

    def flush(self):
        pass


class Kind:
    """A kind of file object. `writer()` opens one to save into (empty, at position 0) and
    `written()` closes it and gives what was written; `reader(data)` opens one holding `data`.
    Everything opened is closed by `close()`."""

    name = "?"
    readable = True

    def __init__(self, folder):
        self.folder = folder
        self.stack = contextlib.ExitStack()
        self.file = None

    def close(self):
        self.stack.close()

    def opened(self, f):
        self.file = self.stack.enter_context(f)
        return self.file

    def written(self):
        f = self.file
        f.seek(0)
        data = f.read()
        f.close()
        return data

    def __repr__(self):
        return self.name


class BinaryFile(Kind):
    def __init__(self, folder, mode):
        super().__init__(folder)
        self.mode = mode
        self.name = f"open-{mode}"
        self.path = folder / f"file-{mode}"

    def writer(self):
        self.path.write_bytes(b"")
        return self.opened(open(self.path, "wb" if self.mode == "rb" else self.mode))

    def reader(self, data):
        self.path.write_bytes(data)
        return self.opened(open(self.path, self.mode))

    def written(self):
        self.file.close()
        return self.path.read_bytes()


class InMemory(Kind):
    name = "BytesIO"

    def writer(self):
        return self.opened(io.BytesIO())

    def reader(self, data):
        return self.opened(io.BytesIO(data))


class Temporary(Kind):
    def __init__(self, folder, make, name):
        super().__init__(folder)
        self.make, self.name = make, name

    def writer(self):
        return self.opened(self.make(dir=self.folder))

    def reader(self, data):
        f = self.opened(self.make(dir=self.folder))
        f.write(data)
        f.seek(0)
        return f


class Gzip(Kind):
    name = "GzipFile"

    def writer(self):
        self.path = self.folder / "file.gz"
        return self.opened(gzip.GzipFile(self.path, "wb"))

    def written(self):
        self.file.close()
        return gzip.decompress(self.path.read_bytes())

    def reader(self, data):
        path = self.folder / "read.gz"
        path.write_bytes(gzip.compress(data))
        return self.opened(gzip.GzipFile(path, "rb"))


class ZipMember(Kind):
    """A member of a zip archive: written through `ZipFile.open(name, 'w')` (unseekable),
    read through `ZipFile.open(name)` (seekable)."""

    name = "ZipFile-member"

    def writer(self):
        self.path = self.folder / "outer.zip"
        self.archive = self.stack.enter_context(zipfile.ZipFile(self.path, "w"))
        return self.opened(self.archive.open("member", "w"))

    def written(self):
        self.file.close()
        self.archive.close()
        with zipfile.ZipFile(self.path) as z:
            return z.read("member")

    def reader(self, data):
        path = self.folder / "inner.zip"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("member", data)
        archive = self.stack.enter_context(zipfile.ZipFile(path))
        return self.opened(archive.open("member"))


class Sink(Kind):
    readable = False

    def __init__(self, folder, cls):
        super().__init__(folder)
        self.cls, self.name = cls, cls.__name__

    def writer(self):
        self.file = self.cls()
        return self.file

    def written(self):
        return bytes(self.file.data)


# Each kind of file object, made for a folder.
KINDS = {
    "open-rb": lambda d: BinaryFile(d, "rb"),
    "open-r+b": lambda d: BinaryFile(d, "r+b"),
    "BytesIO": InMemory,
    "TemporaryFile": lambda d: Temporary(d, tempfile.TemporaryFile, "TemporaryFile"),
    "SpooledTemporaryFile": lambda d: Temporary(d, tempfile.SpooledTemporaryFile, "SpooledTemporaryFile"),
    "SpooledTemporaryFile-rolled": lambda d: Temporary(
        d, lambda dir: tempfile.SpooledTemporaryFile(max_size=100, dir=dir), "SpooledTemporaryFile-rolled"
    ),
    "NamedTemporaryFile": lambda d: Temporary(d, tempfile.NamedTemporaryFile, "NamedTemporaryFile"),
    "GzipFile": Gzip,
    "ZipFile-member": ZipMember,
    "WriteOnly": lambda d: Sink(d, WriteOnly),
    "Unseekable": lambda d: Sink(d, Unseekable),
}
READ_KINDS = [k for k in KINDS if k not in ("WriteOnly", "Unseekable")]
WRITE_KINDS = list(KINDS)
# How a path is given.
PATH_KINDS = {"str": str, "Path": lambda p: p, "PathLike": PathLike}


def _filled(dtype, shape, seed=0):
    """An array whose every byte (padding included) is set, from a fixed seed. (Not by
    `.copy()`, which leaves a record's padding uninitialized.)"""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    raw = np.random.default_rng(seed).integers(0, 256, count * dtype.itemsize, dtype=np.uint8)
    return np.frombuffer(bytearray(raw.tobytes()), dtype=dtype).reshape(shape)


def _objects():
    shared = [1, "shared"]
    values = [
        None,
        True,
        -(2**70),
        2**80,
        1.5,
        float("inf"),
        1 + 2j,
        "text",
        "温度",
        b"\x00\xff",
        [1, [2.5, "x"]],
        (1, "t", None),
        {"k": [1, 2], 3: (None, b"b")},
        np.float64(1.5),
        np.int16(-3),
        np.bool_(True),
        np.complex64(1 - 2j),
        np.str_("ns"),
        np.bytes_(b"nb"),
        shared,
        shared,
    ]
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


RECORD = np.dtype([("a", "u1"), ("b", "<f8"), ("c", ">i2")])
ALIGNED = np.dtype([("a", "u1"), ("b", "<f8"), ("c", "<i2")], align=True)
NESTED = np.dtype([("id", "<i4"), ("pos", [("x", "<f4"), ("y", "<f4", (2,))]), ("tag", "S3")])
TITLED = np.dtype({"names": ["a", "b"], "formats": ["<i4", "<f2"], "titles": ["Title of a", "b title"]})
SUBARRAY = np.dtype([("m", "<f4", (2, 3)), ("n", "u1")])
# A subarray of subarrays: another dtype than ("<f8", (2, 5)), which NumPy keeps apart.
NESTED_SUBARRAY = np.dtype([("c", ("<f8", (5,)), (2,)), ("d", ("u1", (2,)), (1, 2))])
STRINGS = np.dtypes.StringDType()

# name -> a function making a fresh array; every dtype and layout the round trips cover.
ARRAYS = {
    "<f8": lambda: np.array([0.0, -1.5, np.inf, np.nan, 1e300, -0.0]),
    ">i2": lambda: np.arange(-6, 6, dtype=">i2").reshape(3, 4),
    "?": lambda: np.array([True, False, True]),
    "<c16": lambda: np.array([1 + 2j, -0.5j, complex(np.nan, 1)]),
    "<U7": lambda: np.array(["ab", "温度", "", "seven!!"], dtype="<U7"),
    "|S3": lambda: np.array([b"a", b"abc", b"\x00b", b""], dtype="S3"),
    "<M8[ns]": lambda: np.array(["2020-01-01T00:00:00.123456789", "NaT"], dtype="<M8[ns]"),
    "<m8[s]": lambda: np.array([1, -2, 3], dtype="<m8[s]"),
    "|V5": lambda: _filled("V5", (3,)),
    "|S0": lambda: np.zeros(3, dtype=[("s", "S0"), ("u", "u1")])["s"],  # elements of no bytes
    "record": lambda: _filled(RECORD, (4,)),
    "record-aligned": lambda: _filled(ALIGNED, (3,), seed=1),
    "record-nested": lambda: _filled(NESTED, (2, 2), seed=2),
    "record-titles": lambda: _filled(TITLED, (3,), seed=3),
    "record-subarray": lambda: _filled(SUBARRAY, (2,), seed=4),
    "record-subarray-nested": lambda: _filled(NESTED_SUBARRAY, (2,), seed=6),
    "0-d": lambda: np.array(3.25, dtype="<f4"),
    "0-d-record": lambda: _filled(ALIGNED, (), seed=5),
    "empty-0x3": lambda: np.zeros((0, 3), dtype="<i8"),
    "fortran-2d": lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "strided-view": lambda: np.arange(20, dtype="<i4")[::3],
    "transposed": lambda: np.arange(12, dtype="<u2").reshape(3, 4).T,
    "transposed-3d": lambda: np.arange(24, dtype=">f4").reshape(2, 3, 4).transpose(1, 0, 2),
    "object": _objects,
    "object-2d": lambda: _objects()[:20].reshape(4, 5),
    "object-0d": lambda: np.array({"only": [1, 2]}, dtype=object),
    "StringDType": lambda: np.array(["a", "bé", "", "long " * 10], dtype=STRINGS),
    "StringDType-na": lambda: np.array(["a", None], dtype=np.dtypes.StringDType(na_object=None)),
}
# Object arrays beyond the plain values above: NumPy pickles them all.
OBJECTS_BEYOND = {
    "object-field": lambda: np.array([(1, "x"), (2, None)], dtype=[("n", "<i4"), ("o", "O")]),
}
# Several kinds in one file, one after another.
SEQUENCE = ["<f8", "record-aligned", "object", "empty-0x3", "0-d", "StringDType", "fortran-2d", "object-0d", ">i2"]


def sample(name):
    return ARRAYS[name]()


class Run:
    """A pickle that, loaded, calls `call(*args)`."""

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


def hostile_objects(marker):
    """An object array one of whose elements, unpickled, creates `marker`."""
    arr = np.empty(2, dtype=object)
    arr[0] = "fine"
    arr[1] = Run(open, str(marker), "w")
    return arr


def py2_pickle(*elements):
    """The pickle NumPy on Python 2 wrote for a 1-d object array of `elements` (each a pickle
    opcode sequence for one value): `_reconstruct` by its Python 2 module path, `str`s as
    SHORT_BINSTRING."""
    out = b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R"
    out += b"(K\x01" + b"K" + bytes([len(elements)]) + b"\x85"
    out += b"cnumpy\ndtype\nU\x02O8K\x00K\x01\x87R(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb"
    out += b"\x89](" + b"".join(elements) + b"etb."
    return out


def py2_str(data):
    return b"U" + bytes([len(data)]) + data


def py2_unicode(text):
    data = text.encode("utf8")
    return b"X" + struct.pack("<I", len(data)) + data


PY2_COMPLEX = b"c__builtin__\ncomplex\nG?\xf0\x00\x00\x00\x00\x00\x00G@\x00\x00\x00\x00\x00\x00\x00\x86R"


def object_npy(payload, count):
    """A .npy file of `count` objects whose data is `payload`."""
    return npy_file(f"{{'descr': '|O', 'fortran_order': False, 'shape': ({count},), }}", payload)


@contextlib.contextmanager
def kind(name, folder):
    """A `Kind` of file object by name, closed on leaving."""
    made = KINDS[name](folder)
    try:
        yield made
    finally:
        made.close()


class RangeHandler(BaseHTTPRequestHandler):
    """Serves a folder's files with HEAD and single-range GET, counting the bytes served."""

    root: Path
    served: list[tuple[str, int, int]]

    def log_message(self, *args):
        pass

    def _file(self):
        path = self.root / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return None
        return path

    def do_HEAD(self):
        if path := self._file():
            self.send_response(200)
            self.send_header("Content-Length", str(path.stat().st_size))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()

    def do_GET(self):
        if not (path := self._file()):
            return
        size = path.stat().st_size
        start, end = 0, size - 1
        ranged = self.headers.get("Range")
        if ranged:
            first, _, last = ranged.removeprefix("bytes=").partition("-")
            if first:
                start, end = int(first), min(int(last), size - 1) if last else size - 1
            else:
                start = max(size - int(last), 0)
        with open(path, "rb") as f:
            f.seek(start)
            body = f.read(end - start + 1)
        self.send_response(206 if ranged else 200)
        if ranged:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.served.append((self.path, start, len(body)))
        self.wfile.write(body)


# Shot records for the scan and remote tests: a float, a float32, a subarray, ids, flags.
TRACE = np.dtype([("t0", "<f8"), ("dt", "<f4"), ("samples", "<f4", (4,)), ("id", "<i4"), ("ok", "?")])


def traces(n, seed=0):
    """`n` records of TRACE, their ids `seed * n` on, the rest random by `seed`."""
    rng = np.random.default_rng(seed)
    a = np.zeros(n, TRACE)
    a["t0"] = rng.normal(size=n)
    a["dt"] = rng.integers(0, 10, size=n)
    a["samples"] = rng.normal(size=(n, 4))
    a["id"] = np.arange(n) + seed * n
    a["ok"] = rng.integers(0, 2, size=n).astype(bool)
    return a


# Simon's Trace record as the main job writes it (npy-seismic's `Trace`, 304 bytes): padding,
# a nested record, a 64-sample subarray.
SEISMIC_RECEIVER = np.dtype(
    {"names": ["x", "y", "z"], "formats": ["<f8", "<f8", "<f4"], "offsets": [0, 8, 16], "itemsize": 24}
)
SEISMIC_TRACE = np.dtype(
    {
        "names": ["trace_id", "receiver", "t0", "dt", "flags", "samples"],
        "formats": ["<i4", SEISMIC_RECEIVER, "<f8", "<f4", "u1", ("<f4", (64,))],
        "offsets": [0, 8, 32, 40, 44, 48],
        "itemsize": 304,
    }
)


def seismic_traces(n, start=0):
    """`n` Trace records whose values follow from their ids, `start` on."""
    a = np.zeros(n, SEISMIC_TRACE)
    fill_traces(a, start)
    return a


def fill_traces(a, start):
    """Sets the records of `a` (an array or a map's rows) to those of ids `start` on."""
    ids = np.arange(start, start + len(a))
    a["trace_id"] = ids
    a["receiver"]["x"] = ids * 0.5
    a["receiver"]["y"] = -ids
    a["receiver"]["z"] = ids % 7
    a["t0"] = ids / 3
    a["dt"] = 0.004
    a["flags"] = ids % 256
    a["samples"] = (ids[:, None] + np.arange(64)) / 10


def bounded(call, seconds=60):
    """`call()`, run on a thread this waits for at most `seconds`: a call that hangs (a
    helper thread waiting forever on a peer that failed) fails the test in seconds instead
    of hanging the suite. Its result, or the exception it raised."""
    out = {}

    def run():
        try:
            out["value"] = call()
        except BaseException as e:  # handed to the caller, as the call would raise it
            out["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"{call!r} did not return within {seconds} s (a thread waits forever?)")
    if "error" in out:
        raise out["error"]
    return out["value"]
