"""npy.load against np.load: the same calls on the same bytes, through every kind of path and
file object, with every argument; each test runs its code with both and compares (`same`)."""

import inspect
import io
import pickle
from pathlib import Path

import numpy as np
import pytest

import npy
from conftest import NPY_FILES, ids
from support import (
    ARRAYS,
    OBJECTS_BEYOND,
    PATH_KINDS,
    PY2_COMPLEX,
    READ_KINDS,
    SEQUENCE,
    PathLike,
    Raised,
    attempt,
    describe,
    hostile_objects,
    kind,
    npy_bytes,
    npy_file,
    object_npy,
    position,
    py2_pickle,
    py2_str,
    py2_unicode,
    raised,
    sample,
)

OBJECTS = ["object", "object-2d", "object-0d", "StringDType", "StringDType-na"]
MAPPABLE = [name for name in ARRAYS if name not in OBJECTS]
NO_PICKLE = (
    "This file contains pickled (object) data. If you trust the file you can load it unsafely using the "
    "`allow_pickle=` keyword argument or `pickle.load()`."
)
NO_OBJECTS = "Object arrays cannot be loaded when allow_pickle=False"
NO_HANDLES = "Filename must be a string or a path-like object.  Memmap cannot use existing file handles."
NO_MAPPED_OBJECTS = "Array can't be memory-mapped: Python objects in dtype."
# NumPy's message for np.zeros(2, WIDE)'s header.
HEADER_TOO_LARGE = (
    "Header info length (34998) is large and may not be safe to load securely.\n"
    "To allow loading, adjust `max_header_size` or fully trust the `.npy` file using `allow_pickle=True`.\n"
    "For safety against large resource use or crashes, sandboxing may be necessary."
)


def parameters(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize(
    "name, reference, extras",
    [
        ("load", np.load, {"allow_pickle": None}),
        ("save", np.save, {}),
        ("savez", np.savez, {}),
        ("savez_compressed", np.savez_compressed, {}),
        ("open_memmap", np.lib.format.open_memmap, {}),
    ],
)
def test_signatures_are_numpys(name, reference, extras):
    # NumPy's names, order and defaults; npy's extras come after them, keyword-only. npy's one
    # different default: load's allow_pickle=None (plain object arrays load, nothing else does).
    ours = parameters(getattr(npy, name))
    theirs = [(n, k, extras.get(n, d)) for n, k, d in parameters(reference)]
    assert ours[: len(theirs)] == theirs
    assert all(k is inspect.Parameter.KEYWORD_ONLY for _, k, _ in ours[len(theirs) :])


@pytest.mark.parametrize("name", ARRAYS)
@pytest.mark.parametrize("how", PATH_KINDS)
def test_load_path(same, how, name):
    def run(api, folder):
        path = folder / "a.npy"
        path.write_bytes(npy_bytes(sample(name)))
        return describe(api.load(PATH_KINDS[how](path), allow_pickle=True))

    same(run)


@pytest.mark.parametrize("name", ARRAYS)
@pytest.mark.parametrize("kind_name", READ_KINDS)
def test_load_file_object_stops_after_the_array(same, kind_name, name):
    def run(api, folder):
        with kind(kind_name, folder) as k:
            f = k.reader(npy_bytes(sample(name)) + b"what follows")
            arr = api.load(f, allow_pickle=True)
            return describe(arr, padding=False), position(f), f.closed

    same(run)


@pytest.mark.parametrize("name", ARRAYS)
def test_load_path_ignores_bytes_after_the_array(same, name):
    # np.load reads what the header says (or the pickle up to its STOP) and no further.
    def run(api, folder):
        path = folder / "a.npy"
        path.write_bytes(npy_bytes(sample(name)) + b"what follows")
        return describe(attempt(api.load, path, allow_pickle=True), padding=False)

    same(run)


@pytest.mark.parametrize("path", NPY_FILES, ids=ids(NPY_FILES))
def test_load_corpus_file_objects(same, path):
    # Every file NumPy wrote, through a stream, warnings included.
    def run(api, folder):
        f = io.BytesIO(path.read_bytes())
        return describe(attempt(api.load, f, allow_pickle=True, max_header_size=2**20), padding=False), f.tell()

    same(run)


PADDED = ["record-aligned", "record-nested", "0-d-record"]


@pytest.mark.parametrize("name", PADDED)
@pytest.mark.parametrize("kind_name", READ_KINDS)
def test_load_gives_the_padding_bytes_of_the_file(tmp_path, kind_name, name):
    # np.load copies records field by field from anything but an OS file (open(.., 'rb') or a
    # path), leaving their padding uninitialized; npy gives the file's bytes from any file.
    data = npy_bytes(sample(name))
    with kind(kind_name, tmp_path) as k:
        arr = npy.load(k.reader(data))
    assert arr.tobytes() == data[len(data) - arr.nbytes :]


@pytest.mark.parametrize("kind_name", READ_KINDS)
def test_load_starts_at_the_file_position(same, kind_name):
    prefix = b"data before the arrays\n" * 3

    def run(api, folder):
        with kind(kind_name, folder) as k:
            f = k.reader(prefix + npy_bytes(sample("record-aligned")) + npy_bytes(sample("object")))
            f.seek(len(prefix))
            return [(describe(api.load(f, allow_pickle=True), padding=False), position(f)) for _ in range(2)]

    same(run)


@pytest.mark.parametrize("kind_name", READ_KINDS)
def test_arrays_saved_one_after_another_load_in_order(same, kind_name):
    def run(api, folder):
        with kind(kind_name, folder) as k:
            f = k.writer()
            saved = []
            for name in SEQUENCE:
                api.save(f, sample(name))
                saved.append(position(f))
            data = k.written()
        with kind(kind_name, folder) as k:
            f = k.reader(data)
            loaded = [(describe(api.load(f, allow_pickle=True), padding=False), position(f)) for _ in SEQUENCE]
            return saved, data, loaded, attempt(api.load, f, exact=True)

    *_, end = same(run)
    assert end == Raised(EOFError, "No data left in file")


class ShortReads(io.BytesIO):
    """A stream whose reads give at most 64 bytes, as a pipe's or a socket's may."""

    def read(self, size=-1):
        return super().read(64 if size is None or size < 0 else min(size, 64))


def test_load_from_a_stream_of_short_reads(same):
    # NumPy reads the data until it has all (pickles excepted: it needs whole reads there).
    def run(api, folder):
        f = ShortReads(b"".join(npy_bytes(sample(name)) for name in MAPPABLE))
        return [(describe(api.load(f), padding=False), f.tell()) for _ in MAPPABLE]

    same(run)


class Trickle:
    """A seekable stream whose reads give at most `most` bytes, as a pipe or a socket may."""

    def __init__(self, data, most):
        self.data, self.most = io.BytesIO(data), most

    def read(self, size=-1):
        return self.data.read(self.most if size is None or size < 0 else min(size, self.most))

    def readinto(self, b):
        return self.data.readinto(memoryview(b)[: self.most])

    def seek(self, offset, whence=0):
        return self.data.seek(offset, whence)

    def tell(self):
        return self.data.tell()

    def seekable(self):
        return True


@pytest.mark.parametrize("most", [1, 5, 7])
@pytest.mark.parametrize("name", ["<f8", "record-aligned", "empty-0x3"])
def test_load_short_reads(name, most):
    # Reads shorter than the magic too: np.load takes its one read of the magic for all there
    # is (and then calls the file a pickle); npy reads on, as NumPy does past the magic.
    arr = sample(name)
    f = Trickle(npy_bytes(arr) + b"after", most)
    assert describe(npy.load(f, allow_pickle=True), padding=False) == describe(arr, padding=False)
    assert f.read(5) == b"after"[:most]


def test_load_takes_numpys_positional_arguments(same):
    def run(api, folder):
        np.save(folder / "o.npy", sample("object"))
        return describe(api.load(folder / "o.npy", None, True, True, "latin1"))

    same(run)


@pytest.mark.parametrize("name", OBJECTS_BEYOND)
def test_load_objects_numpy_pickles(tmp_path, name):
    # By design npy refuses these (its README says so): npy-core does not model arrays of
    # records with object fields. NumPy loads them under allow_pickle=True.
    path = tmp_path / "o.npy"
    np.save(path, OBJECTS_BEYOND[name]())
    assert np.load(path, allow_pickle=True).shape == (2,)
    with pytest.raises(ValueError, match=r"o\.npy") as refused:
        npy.load(path, allow_pickle=True)
    assert "::" not in str(refused.value)  # Python's names, not npy-core's


@pytest.mark.parametrize("name", OBJECTS_BEYOND)
def test_allow_pickle_false_refuses_objects_numpy_pickles(same, name):
    # Records with object fields too get NumPy's refusal, from a path, a file and an archive.
    def run(api, folder):
        np.save(folder / "o.npy", OBJECTS_BEYOND[name]())
        np.savez(folder / "o.npz", o=OBJECTS_BEYOND[name]())
        with open(folder / "o.npy", "rb") as f:
            from_file = attempt(api.load, f, allow_pickle=False, exact=True)
        with api.load(folder / "o.npz", allow_pickle=False) as z:
            member = attempt(lambda: z["o"], exact=True)
        return attempt(api.load, folder / "o.npy", allow_pickle=False, exact=True), from_file, member

    assert same(run) == (Raised(ValueError, NO_OBJECTS),) * 3


@pytest.mark.filterwarnings("ignore:Custom dtypes are saved")
@pytest.mark.parametrize("name", OBJECTS)
def test_default_allow_pickle_loads_plain_objects(tmp_path, name):
    # npy's default (None) loads object arrays of plain values as np.load(allow_pickle=True) does.
    path = tmp_path / "o.npy"
    np.save(path, sample(name))
    theirs = describe(np.load(path, allow_pickle=True))
    assert describe(npy.load(path)) == theirs
    with open(path, "rb") as f:
        assert describe(npy.load(f)) == theirs


@pytest.mark.parametrize("name", OBJECTS)
def test_allow_pickle_false_refuses_object_arrays(same, name):
    def run(api, folder):
        path = folder / "o.npy"
        np.save(path, sample(name))
        with open(path, "rb") as f:
            from_file = attempt(api.load, f, allow_pickle=False, exact=True)
        return attempt(api.load, path, allow_pickle=False, exact=True), from_file

    assert same(run) == (Raised(ValueError, NO_OBJECTS),) * 2


@pytest.mark.parametrize("allow_pickle", [None, True])
def test_unsafe_pickle_raises_and_runs_nothing(tmp_path, allow_pickle):
    # np.load(allow_pickle=True) would call open(marker, 'w'); npy never runs a pickle.
    marker = tmp_path / "ran"
    path = tmp_path / "hostile.npy"
    np.save(path, hostile_objects(marker))
    with pytest.raises(npy.UnsafePickleError, match=r"hostile\.npy") as e:
        npy.load(path, allow_pickle=allow_pickle)
    assert isinstance(e.value, ValueError) and isinstance(e.value, pickle.UnpicklingError)
    with open(path, "rb") as f, pytest.raises(npy.UnsafePickleError, match=r"hostile\.npy"):
        npy.load(f, allow_pickle=allow_pickle)
    assert not marker.exists()
    np.load(path, allow_pickle=True)  # the payload is live
    assert marker.exists()


@pytest.mark.parametrize("allow_pickle", [None, True])
def test_pickle_files_are_never_unpickled(tmp_path, allow_pickle):
    # np.load(allow_pickle=True) unpickles a file that is not .npy/.npz; npy refuses every one.
    marker = tmp_path / "ran"
    for name, payload in [
        ("plain.pkl", pickle.dumps({"a": [1, 2]})),
        ("hostile.pkl", pickle.dumps(hostile_objects(marker))),
    ]:
        (tmp_path / name).write_bytes(payload)
        with pytest.raises(npy.UnsafePickleError, match=name) as e:
            npy.load(tmp_path / name, allow_pickle=allow_pickle)
        assert "pickle" in str(e.value).lower()
    assert not marker.exists()
    np.load(tmp_path / "hostile.pkl", allow_pickle=True)  # the payload is live
    assert marker.exists()


def test_pickle_file_without_allow_pickle(same):
    def run(api, folder):
        (folder / "p.pkl").write_bytes(pickle.dumps({"a": 1}))
        return attempt(api.load, folder / "p.pkl", allow_pickle=False, exact=True)

    assert same(run) == Raised(ValueError, NO_PICKLE)


@pytest.mark.parametrize("allow_pickle", [False, True])
def test_text_file(same, allow_pickle):
    def run(api, folder):
        (folder / "t.npy").write_text("not an array\n")
        return attempt(api.load, folder / "t.npy", allow_pickle=allow_pickle, exact=not allow_pickle)

    assert same(run) == (Raised(pickle.UnpicklingError) if allow_pickle else Raised(ValueError, NO_PICKLE))


def test_invalid_encoding_is_refused_before_the_file_is_opened(same):
    def run(api, folder):
        np.save(folder / "a.npy", np.arange(3))
        return [attempt(api.load, folder / name, encoding="utf8", exact=True) for name in ("a.npy", "missing.npy")]

    assert same(run) == [Raised(ValueError, "encoding must be 'ASCII', 'latin1', or 'bytes'")] * 2


# A Python 2 object array: None, a unicode, a non-ASCII str, an ASCII str.
PY2_STRINGS = py2_pickle(b"N", py2_unicode("優良"), py2_str("ä".encode()), py2_str(b"abc"))


@pytest.mark.parametrize("encoding", ["ASCII", "latin1", "bytes"])
@pytest.mark.parametrize("fix_imports", [True, False])
def test_python2_strings_follow_encoding(same, encoding, fix_imports):
    def run(api, folder):
        (folder / "py2.npy").write_bytes(object_npy(PY2_STRINGS, 4))
        return describe(
            attempt(api.load, folder / "py2.npy", allow_pickle=True, fix_imports=fix_imports, encoding=encoding)
        )

    result = same(run)
    if encoding == "ASCII":
        assert result == Raised(UnicodeError)
    else:
        assert result["values"] == repr(
            [None, "優良", "Ã¤", "abc"] if encoding == "latin1" else [None, "優良", b"\xc3\xa4", b"abc"]
        )


@pytest.mark.parametrize("mmap_mode", [None, "r"])
def test_a_python2_header_warns_as_numpy_mapped_or_not(same, mmap_mode):
    # A header with Python 2's `3L`: NumPy warns whether it maps the file or reads it.
    def run(api, folder):
        path = folder / "py2.npy"
        np.save(path, np.arange(3, dtype="<i8"))
        raw = path.read_bytes()
        assert b"(3,), }" in raw[:128]
        path.write_bytes(raw[:128].replace(b"(3,), }", b"(3L,),}") + raw[128:])
        return api.load(path, mmap_mode=mmap_mode).tolist()

    assert same(run) == [0, 1, 2]


@pytest.mark.parametrize("fix_imports", [True, False])
def test_python2_module_names_follow_fix_imports(same, fix_imports):
    # Python 2 pickled complex numbers as __builtin__.complex: fix_imports maps it to builtins.
    def run(api, folder):
        (folder / "py2.npy").write_bytes(object_npy(py2_pickle(b"N", PY2_COMPLEX), 2))
        return describe(
            attempt(api.load, folder / "py2.npy", allow_pickle=True, fix_imports=fix_imports, encoding="latin1")
        )

    result = same(run)
    if fix_imports:
        assert result["values"] == repr([None, 1 + 2j])
    else:
        assert isinstance(result, Raised) and issubclass(result.type, ImportError)


WIDE = np.dtype([(f"f{i}", "<f8") for i in range(2000)])


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"max_header_size": 100_000},
        {"allow_pickle": True},
        {"allow_pickle": False, "max_header_size": 100_000},
        {"mmap_mode": "r"},
        {"mmap_mode": "r", "max_header_size": 100_000},
        {"mmap_mode": "r", "allow_pickle": True},
    ],
    ids=repr,
)
def test_max_header_size(same, kwargs):
    # NumPy's message, word for word; allow_pickle=True lifts the limit, as NumPy's read_array
    # and load (for maps) lift it.
    def run(api, folder):
        np.save(folder / "wide.npy", np.zeros(2, WIDE))
        loaded = describe(attempt(api.load, str(folder / "wide.npy"), exact=True, **kwargs))
        if kwargs.get("mmap_mode"):
            return loaded
        with open(folder / "wide.npy", "rb") as f:
            return loaded, describe(attempt(api.load, f, exact=True, **kwargs))

    result = same(run)
    limited = kwargs.get("max_header_size") is None and not kwargs.get("allow_pickle")
    refused = Raised(ValueError, HEADER_TOO_LARGE)
    assert (result == refused if kwargs.get("mmap_mode") else result == (refused, refused)) == limited


def test_large_header_error_names_the_file(tmp_path):
    np.save(tmp_path / "wide.npy", np.zeros(2, WIDE))
    with pytest.raises(ValueError, match=r"wide\.npy"):
        npy.load(tmp_path / "wide.npy")


@pytest.mark.parametrize("name", MAPPABLE)
@pytest.mark.parametrize("mode", ["r", "c", "r+", "readonly"])
def test_mmap_mode(same, mode, name):
    def run(api, folder):
        path = folder / "m.npy"
        np.save(path, sample(name))
        m = api.load(str(path), mmap_mode=mode)  # a str: a Path is test_mmap_filename_follows_the_path_given
        seen = describe(m)
        if m.flags.writeable:
            m.ravel(order="K").view(np.uint8)[:] = 0x5A
            m.flush()
        del m
        return seen, path.read_bytes()

    same(run)


@pytest.mark.parametrize("mode", ["r", "r+", "c"])
def test_mmap_filename_follows_the_path_given(same, monkeypatch, mode):
    # np.memmap keeps a pathlib.Path as a resolved Path and a str as an absolute str.
    def run(api, folder):
        np.save(folder / "m.npy", np.arange(3.0))
        monkeypatch.chdir(folder)
        return [repr(api.load(p, mmap_mode=mode).filename) for p in ("m.npy", Path("m.npy"), str(folder / "m.npy"))]

    same(run)


@pytest.mark.parametrize("mode", ["r", "r+", "c"])
def test_mmap_mode_takes_any_path_like(tmp_path, mode):
    # np.load fails on an os.PathLike that is not a pathlib.Path (np.memmap: AttributeError, no
    # 'resolve'); the spec takes any os.PathLike, mapped as its os.fspath() would be.
    np.save(tmp_path / "m.npy", np.arange(3.0))
    assert describe(npy.load(PathLike(tmp_path / "m.npy"), mmap_mode=mode)) == describe(
        np.load(str(tmp_path / "m.npy"), mmap_mode=mode)
    )


@pytest.mark.parametrize("alias, mode", [("readwrite", "r+"), ("copyonwrite", "c")])
def test_mmap_mode_long_names(tmp_path, alias, mode):
    # The spec accepts np.memmap's long mode names; np.load refuses these two by accident (its
    # open_memmap takes any mode containing 'w' for a write mode: ValueError "invalid mode").
    path = str(tmp_path / "m.npy")
    np.save(path, np.arange(6.0).reshape(2, 3))
    assert describe(npy.load(path, mmap_mode=alias)) == describe(np.load(path, mmap_mode=mode))


@pytest.mark.parametrize("mode", ["", "x"])
def test_mmap_mode_odd_values(same, mode):
    # '' (false) means no map, as None does; 'x' is not a mode.
    def run(api, folder):
        np.save(folder / "m.npy", np.arange(3))
        return describe(attempt(api.load, folder / "m.npy", mmap_mode=mode))

    result = same(run)
    assert result == {"": describe(np.arange(3)), "x": Raised(ValueError)}[mode]


def test_mmap_mode_w_plus_leaves_the_file(tmp_path):
    # np.load(mmap_mode='w+') empties the file, then fails (TypeError: no shape). npy refuses
    # first (ValueError) and leaves the file as it was: the spec's "as NumPy" cannot mean the loss.
    np.save(tmp_path / "m.npy", np.arange(3))
    before = (tmp_path / "m.npy").read_bytes()
    with pytest.raises((ValueError, TypeError)):
        npy.load(tmp_path / "m.npy", mmap_mode="w+")
    assert (tmp_path / "m.npy").read_bytes() == before


def test_mmap_mode_refuses_an_open_file(same):
    def run(api, folder):
        np.save(folder / "m.npy", np.arange(3))
        with open(folder / "m.npy", "rb") as f:
            return attempt(api.load, f, mmap_mode="r", exact=True), position(f)

    assert same(run) == (Raised(ValueError, NO_HANDLES), 0)


@pytest.mark.parametrize("kind_name", [k for k in READ_KINDS if k != "open-rb"])
def test_mmap_mode_refuses_every_file_object(tmp_path, kind_name):
    # The spec: NumPy's ValueError for every file object. np.load gives it for open(.., 'rb') only;
    # others fail by accident (BytesIO, BufferedRandom: TypeError from os.fspath).
    with kind(kind_name, tmp_path) as k:
        f = k.reader(npy_bytes(np.arange(3)))
        with pytest.raises(ValueError, match="Memmap cannot use existing file handles"):
            npy.load(f, mmap_mode="r")


@pytest.mark.parametrize("name", OBJECTS)
def test_mmap_mode_refuses_object_arrays(same, name):
    def run(api, folder):
        np.save(folder / "o.npy", sample(name))
        return attempt(api.load, folder / "o.npy", mmap_mode="r", allow_pickle=True, exact=True)

    assert same(run) == Raised(ValueError, NO_MAPPED_OBJECTS)


@pytest.mark.parametrize("how", PATH_KINDS)
@pytest.mark.parametrize("missing", ["missing.npy", "no-folder/x.npy"])
def test_missing_file(same, how, missing):
    def run(api, folder):
        try:
            api.load(PATH_KINDS[how](folder / missing))
        except OSError as e:
            return type(e), e.errno, e.filename

    assert same(run)[0] is FileNotFoundError


def test_directory(same):
    def run(api, folder):
        try:
            api.load(folder)
        except OSError as e:
            return type(e), e.errno, e.filename

    assert same(run)[0] is IsADirectoryError


@pytest.mark.parametrize("kind_name", READ_KINDS)
def test_empty_file(same, kind_name):
    def run(api, folder):
        (folder / "empty.npy").write_bytes(b"")
        with kind(kind_name, folder) as k:
            return attempt(api.load, folder / "empty.npy", exact=True), attempt(api.load, k.reader(b""), exact=True)

    assert same(run) == (Raised(EOFError, "No data left in file"),) * 2


GOOD = npy_bytes(np.arange(10.0))
# Cut after: part of the magic, the magic, the version, the header length, inside the header,
# the whole header, inside the data.
CUTS = [3, 6, 7, 8, 9, 10, 70, 128, len(GOOD) - 1]


@pytest.mark.parametrize("cut", CUTS)
def test_truncated_file(same, cut):
    # NumPy's messages: an OS file's short data in elements, another file's in bytes.
    def run(api, folder):
        (folder / "cut.npy").write_bytes(GOOD[:cut])
        with open(folder / "cut.npy", "rb") as f:
            from_file = attempt(api.load, f, allow_pickle=False, exact=True)
        from_bytes = attempt(api.load, io.BytesIO(GOOD[:cut]), allow_pickle=False, exact=True)
        return attempt(api.load, folder / "cut.npy", allow_pickle=False, exact=True), from_file, from_bytes

    assert all(raised(r, ValueError) for r in same(run))


@pytest.mark.parametrize("mmap_mode", [None, "r"])
@pytest.mark.parametrize("cut", [c for c in CUTS if c >= 6])
def test_truncated_file_error_names_the_file(tmp_path, cut, mmap_mode):
    (tmp_path / "cut.npy").write_bytes(GOOD[:cut])
    with pytest.raises(ValueError, match=r"cut\.npy"):
        npy.load(tmp_path / "cut.npy", mmap_mode=mmap_mode)
    if mmap_mode is None:  # a file object: its name
        with open(tmp_path / "cut.npy", "rb") as f, pytest.raises(ValueError, match=r"cut\.npy"):
            npy.load(f)


BAD_HEADERS = {
    "not-a-dict": "[1, 2]",
    "missing-key": "{'descr': '<f8', 'shape': (1,)}",
    "extra-key": "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}",
    "bad-descr": "{'descr': 'not a dtype', 'fortran_order': False, 'shape': (1,)}",
    "bad-shape": "{'descr': '<f8', 'fortran_order': False, 'shape': (1.5,)}",
    "negative-shape": "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}",
    "bad-fortran-order": "{'descr': '<f8', 'fortran_order': 'no', 'shape': (1,)}",
    "code": "__import__('os').getcwd()",
}
# np.load raises tokenize.TokenError for this one (by accident: its Python 2 fallback parser);
# the spec's ValueError is asserted by test_bad_header_error_names_the_file.
UNCLOSED = {"unclosed": "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)"}


@pytest.mark.parametrize("header", BAD_HEADERS.values(), ids=BAD_HEADERS.keys())
def test_bad_header(same, header):
    def run(api, folder):
        (folder / "bad.npy").write_bytes(npy_file(header, b"\x00" * 8))
        with open(folder / "bad.npy", "rb") as f:
            from_file = attempt(api.load, f)
        return attempt(api.load, folder / "bad.npy"), from_file, attempt(api.load, folder / "bad.npy", mmap_mode="r")

    assert same(run) == (Raised(ValueError),) * 3


@pytest.mark.parametrize("version", [(0, 9), (4, 0), (1, 1)])
def test_unknown_version(same, version):
    def run(api, folder):
        data = bytearray(GOOD)
        data[6:8] = bytes(version)
        (folder / "v.npy").write_bytes(bytes(data))
        return attempt(api.load, folder / "v.npy")

    # NumPy says "we only support format version (1,0), (2,0), and (3,0), not (4, 0)"; an
    # invalid file's message is npy's own (it names the file).
    assert same(run) == Raised(ValueError)


@pytest.mark.parametrize("header", {**BAD_HEADERS, **UNCLOSED}.values(), ids={**BAD_HEADERS, **UNCLOSED}.keys())
def test_bad_header_error_names_the_file(tmp_path, header):
    (tmp_path / "bad.npy").write_bytes(npy_file(header, b"\x00" * 8))
    with pytest.raises(ValueError, match=r"bad\.npy"):
        npy.load(tmp_path / "bad.npy")
