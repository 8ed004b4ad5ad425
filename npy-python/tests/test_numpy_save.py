"""npy.save against np.save: the same arrays into every kind of path and file object give the
same bytes, positions, file names, warnings and errors."""

import fractions
import io
import os
import tempfile

import numpy as np
import pytest

import npy
from support import (
    ARRAYS,
    OBJECTS_BEYOND,
    PATH_KINDS,
    SEQUENCE,
    WRITE_KINDS,
    Raised,
    attempt,
    kind,
    npy_bytes,
    position,
    sample,
)

OBJECTS = ["object", "object-2d", "object-0d", "StringDType", "StringDType-na"]
NO_OBJECTS = "Object arrays cannot be saved when allow_pickle=False"
METADATA = "metadata on a dtype is not saved to an npy/npz. Use another format (such as pickle) to store it."


def listing(folder):
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("name", ARRAYS)
@pytest.mark.parametrize("how", PATH_KINDS)
def test_save_path(same, how, name):
    def run(api, folder):
        api.save(PATH_KINDS[how](folder / "a.npy"), sample(name))
        return listing(folder), (folder / "a.npy").read_bytes()

    same(run)


@pytest.mark.parametrize("name", ARRAYS)
@pytest.mark.parametrize("kind_name", WRITE_KINDS)
def test_save_file_object(same, kind_name, name):
    def run(api, folder):
        with kind(kind_name, folder) as k:
            f = k.writer()
            api.save(f, sample(name))
            return position(f), getattr(f, "closed", None), k.written()

    same(run)


@pytest.mark.parametrize("kind_name", WRITE_KINDS)
def test_save_after_data_and_one_after_another(same, kind_name):
    def run(api, folder):
        with kind(kind_name, folder) as k:
            f = k.writer()
            f.write(b"data before the arrays\n")
            positions = []
            for name in SEQUENCE:
                api.save(f, sample(name))
                positions.append(position(f))
            return positions, k.written()

    same(run)


@pytest.mark.parametrize("name", OBJECTS_BEYOND)
def test_save_objects_numpy_pickles(name):
    # By design (see test_numpy_load.test_load_objects_numpy_pickles): npy saves only what
    # it loads back, and writes nothing else.
    out = io.BytesIO()
    with pytest.raises(TypeError, match="that npy.load reads back"):
        npy.save(out, OBJECTS_BEYOND[name]())
    assert out.getvalue() == b""


CONVERTIBLE = {
    "list": [1, 2, 3],
    "nested-list": [[1.5, 2], [3, 4]],
    "tuple-of-str": ("a", "bcd"),
    "int": 7,
    "big-int": 2**70,
    "float": 2.5,
    "bool": True,
    "numpy-scalar": np.float32(1.25),
    "bytes": b"xyz",
    "ragged": np.array([[1], [2, 3]], dtype=object),
}


@pytest.mark.parametrize("value", CONVERTIBLE.values(), ids=CONVERTIBLE.keys())
def test_save_converts_as_asanyarray(same, value):
    def run(api, folder):
        out = io.BytesIO()
        api.save(out, value)
        return out.getvalue()

    same(run)


def test_save_large_strided_array_to_a_stream(same):
    # Beyond np.save's 16 MiB write chunk, neither C- nor Fortran-contiguous.
    arr = np.arange(6_000_000, dtype="<f8").reshape(2000, 3000)[:, ::2].T

    def run(api, folder):
        out = io.BytesIO()
        api.save(out, arr)
        return len(out.getvalue()), hash(out.getvalue())

    same(run)


NAMES = ["x", "x.npy", "x.NPY", "x.npz", "x.npy.bak", "dotted.name", "x.npy.npy"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("how", PATH_KINDS)
def test_save_appends_npy_unless_present(same, how, name):
    def run(api, folder):
        api.save(PATH_KINDS[how](folder / name), np.arange(3))
        return listing(folder)

    same(run)


def test_save_never_renames_a_file_object(same):
    def run(api, folder):
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".bin") as f:
            api.save(f, np.arange(3))
            return [name.endswith(".bin") for name in listing(folder)]

    assert same(run) == [True]


@pytest.mark.parametrize("name", ["<f8", "record-aligned", "fortran-2d", "|V5"])
def test_save_allow_pickle_false_saves_plain_arrays(same, name):
    def run(api, folder):
        api.save(folder / "a.npy", sample(name), allow_pickle=False)
        return (folder / "a.npy").read_bytes()

    same(run)


@pytest.mark.filterwarnings("ignore:Custom dtypes are saved")
@pytest.mark.parametrize("name", OBJECTS)
def test_save_allow_pickle_false_refuses_objects(same, name):
    def run(api, folder):
        return attempt(api.save, folder / "o.npy", sample(name), allow_pickle=False, exact=True), attempt(
            api.save, io.BytesIO(), sample(name), allow_pickle=False, exact=True
        )

    assert same(run) == (Raised(ValueError, NO_OBJECTS),) * 2


@pytest.mark.filterwarnings("ignore:Custom dtypes are saved")
@pytest.mark.parametrize("name", OBJECTS)
def test_save_allow_pickle_false_writes_nothing(tmp_path, name):
    # np.save leaves a file (or stream) holding the header alone; npy writes nothing at all.
    with pytest.raises(ValueError, match="allow_pickle=False"):
        npy.save(tmp_path / "o.npy", sample(name), allow_pickle=False)
    assert listing(tmp_path) == []
    npy.save(tmp_path / "keep.npy", np.arange(3))
    before = (tmp_path / "keep.npy").read_bytes()
    with pytest.raises(ValueError, match="allow_pickle=False"):
        npy.save(tmp_path / "keep.npy", sample(name), allow_pickle=False)
    assert (tmp_path / "keep.npy").read_bytes() == before and listing(tmp_path) == ["keep.npy"]
    out = io.BytesIO(b"before")
    out.seek(6)
    with pytest.raises(ValueError, match="allow_pickle=False"):
        npy.save(out, sample(name), allow_pickle=False)
    assert out.getvalue() == b"before" and out.tell() == 6


class Point:
    def __init__(self, x):
        self.x = x


@pytest.mark.parametrize("value", [Point(1), fractions.Fraction(1, 3)], ids=["class", "Fraction"])
def test_save_refuses_objects_it_could_not_load_and_writes_nothing(tmp_path, value):
    # np.save pickles anything; npy saves plain values only, so every file it writes loads.
    arr = np.array([1, None, value], dtype=object)
    npy.save(tmp_path / "keep.npy", np.arange(3))
    before = (tmp_path / "keep.npy").read_bytes()
    for target in ("keep.npy", "new.npy"):
        with pytest.raises(TypeError, match=target):
            npy.save(tmp_path / target, arr)
    assert (tmp_path / "keep.npy").read_bytes() == before and listing(tmp_path) == ["keep.npy"]
    out = io.BytesIO()
    with pytest.raises(TypeError):
        npy.save(out, arr)
    assert out.getvalue() == b""


@pytest.mark.parametrize("name", ["<f8", "object", "record-aligned"])
@pytest.mark.parametrize("how", PATH_KINDS)
def test_durable_save_writes_the_same_bytes(tmp_path, how, name):
    # durable=True is npy's: np.save has no such argument.
    arr = sample(name)
    npy.save(PATH_KINDS[how](tmp_path / "d"), arr, durable=True)
    assert (tmp_path / "d.npy").read_bytes() == npy_bytes(arr)
    assert listing(tmp_path) == ["d.npy"]


def test_save_failing_to_open_raises_oserror(same):
    def run(api, folder):
        try:
            api.save(folder / "absent" / "x.npy", np.arange(3))
        except OSError as e:
            return type(e), e.errno, listing(folder)

    assert same(run)[0] is FileNotFoundError


WARNINGS = {
    "metadata": (np.dtype("<f8", metadata={"unit": "m"}), METADATA),
    "metadata-in-field": (np.dtype([("a", np.dtype("<i4", metadata={"k": 1})), ("b", "<f4")]), METADATA),
    "format-2.0": (
        np.dtype([(f"field_{i}", "<f4") for i in range(5000)]),
        "Stored array in format 2.0. It can only beread by NumPy >= 1.9",  # sic
    ),
    "format-3.0": (
        np.dtype([("温度", "<f8"), ("t", "<i2")]),
        "Stored array in format 3.0. It can only be read by NumPy >= 1.17",
    ),
}


@pytest.mark.parametrize("dtype, text", WARNINGS.values(), ids=WARNINGS.keys())
def test_save_warns_as_numpy(same, dtype, text):
    def run(api, folder):
        api.save(folder / "w.npy", np.zeros(2, dtype))
        out = io.BytesIO()
        api.save(out, np.zeros(2, dtype))
        return (folder / "w.npy").read_bytes(), out.getvalue()

    same(run)  # compares the warnings too; these are they:
    with pytest.warns(UserWarning) as caught:
        np.save(io.BytesIO(), np.zeros(1, dtype))
    assert [str(w.message) for w in caught] == [text]


SUBCLASSES = {
    "matrix": lambda: np.matrix([[1.5, 2.0], [3.0, 4.0]]),
    "matrix-fortran": lambda: np.asfortranarray(np.matrix([[1, 2, 3], [4, 5, 6]], dtype=">i2")),
    "recarray": lambda: np.rec.array([(1, 2.5), (3, 4.5)], dtype=[("a", "<i4"), ("b", "<f8")]),
    "masked": lambda: np.ma.masked_array([1, 2, 3], mask=[False, True, False]),
}


@pytest.mark.parametrize("name", SUBCLASSES)
@pytest.mark.parametrize("kind_name", WRITE_KINDS)
def test_save_subclasses(same, kind_name, name):
    # np.save writes a subclass's memory (its own ravel and view aside); a masked array
    # into a path or an OS file fails in its tofile, and elsewhere loses its mask.
    def run(api, folder):
        with kind(kind_name, folder) as k:
            saved = attempt(api.save, k.writer(), SUBCLASSES[name](), exact=True)
            written = k.written()
            # NumPy writes the header before the masked array's tofile fails; npy nothing
            # (test_failed_masked_save_writes_nothing).
            return saved if isinstance(saved, Raised) else (saved, written)

    same(run)


@pytest.mark.parametrize("name", SUBCLASSES)
@pytest.mark.parametrize("saver", ["save", "savez"])
def test_save_subclasses_to_paths(same, saver, name):
    def run(api, folder):
        path = folder / ("a.npy" if saver == "save" else "a.npz")
        saved = attempt(getattr(api, saver), path, SUBCLASSES[name](), exact=True)
        if isinstance(saved, Raised):
            # NumPy leaves the header it wrote before the masked array's tofile failed; npy
            # no file (test_failed_masked_save_writes_nothing).
            return saved
        if saver == "savez":
            with np.load(path) as z:
                return saved, z["arr_0"].tobytes()
        return saved, listing(folder), path.read_bytes()

    same(run)


def test_failed_masked_save_writes_nothing(tmp_path):
    with pytest.raises(NotImplementedError):
        npy.save(tmp_path / "m.npy", SUBCLASSES["masked"]())
    with open(tmp_path / "f.npy", "wb") as f, pytest.raises(NotImplementedError):
        npy.save(f, SUBCLASSES["masked"]())
    assert listing(tmp_path) == ["f.npy"]
    assert (tmp_path / "f.npy").read_bytes() == b""
