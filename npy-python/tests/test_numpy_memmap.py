"""npy.open_memmap against numpy.lib.format.open_memmap: the same maps (dtype, shape, order,
offset, mode, file) and the same file bytes after writing through them."""

import os
from pathlib import Path

import numpy as np
import pytest

import npy
from support import ALIGNED, PathLike, Raised, attempt, describe, kind, raised, sample

MAPPABLE = [
    "<f8",
    ">i2",
    "<U7",
    "|V5",
    "record-aligned",
    "record-nested",
    "0-d",
    "0-d-record",
    "empty-0x3",
    "fortran-2d",
]
NO_HANDLES = "Filename must be a string or a path-like object.  Memmap cannot use existing file handles."
NO_OBJECTS = "Array can't be memory-mapped: Python objects in dtype."


def fill(m):
    """Writes a byte pattern through a writeable map and flushes it."""
    flat = m.ravel(order="K").view(np.uint8)
    flat[:] = np.arange(flat.size) % 251
    m.flush()


CREATE = {
    "f8": dict(dtype="<f8", shape=(3, 4)),
    "default-dtype": dict(shape=(4,)),
    "fortran-v2": dict(dtype=">i2", shape=(2, 3), fortran_order=True, version=(2, 0)),
    "record-v1": dict(dtype=ALIGNED, shape=(5,), version=(1, 0)),
    "v3": dict(dtype="<c8", shape=(2,), version=(3, 0)),
    "0-d": dict(dtype="<u4", shape=()),
    "empty": dict(dtype="<U3", shape=(0, 2)),
    "non-latin-1-name": dict(dtype=[("温度", "<f8")], shape=(2,)),
    "metadata": dict(dtype=np.dtype("<f4", metadata={"k": 1}), shape=(3,)),
    "wide-record": dict(dtype=[(f"f{i}", "u1") for i in range(5000)], shape=(1,)),
}


@pytest.mark.parametrize("params", CREATE.values(), ids=CREATE.keys())
def test_open_memmap_creates(same, params):
    def run(api, folder):
        m = api.open_memmap(str(folder / "m.npy"), mode="w+", **params)
        seen = describe(m)
        fill(m)
        del m
        return seen, (folder / "m.npy").read_bytes(), sorted(os.listdir(folder))

    same(run)


def test_open_memmap_w_plus_replaces_a_file(same):
    def run(api, folder):
        np.save(folder / "m.npy", np.arange(1000.0))
        m = api.open_memmap(str(folder / "m.npy"), mode="w+", dtype="<i2", shape=(3,))
        seen = describe(m)
        del m
        return seen, (folder / "m.npy").read_bytes()

    same(run)


@pytest.mark.parametrize("name", MAPPABLE)
@pytest.mark.parametrize("mode", [None, "r", "r+", "c"])
def test_open_memmap_maps_a_file(same, mode, name):
    def run(api, folder):
        np.save(folder / "m.npy", sample(name))
        path = str(folder / "m.npy")  # a str: a Path is test_open_memmap_filename_follows_the_path_given
        m = api.open_memmap(path) if mode is None else api.open_memmap(path, mode=mode)
        seen = describe(m)
        if m.flags.writeable:
            fill(m)
        del m
        return seen, (folder / "m.npy").read_bytes()

    same(run)


def test_open_memmap_ignores_dtype_and_shape_when_reading(same):
    def run(api, folder):
        np.save(folder / "m.npy", np.arange(6.0).reshape(2, 3))
        return describe(api.open_memmap(str(folder / "m.npy"), mode="r", dtype="<i2", shape=(1,), fortran_order=True))

    same(run)


@pytest.mark.parametrize("dtype", [object, [("a", "<i4"), ("b", "O")]], ids=["object", "record-with-object"])
def test_open_memmap_refuses_object_dtypes(same, dtype):
    def run(api, folder):
        created = attempt(api.open_memmap, folder / "new.npy", mode="w+", dtype=dtype, shape=(2,), exact=True)
        np.save(folder / "o.npy", np.zeros(2, dtype))
        read = attempt(api.open_memmap, folder / "o.npy", mode="r", exact=True)
        return created, read, sorted(os.listdir(folder))

    assert same(run) == (Raised(ValueError, NO_OBJECTS), Raised(ValueError, NO_OBJECTS), ["o.npy"])


@pytest.mark.parametrize("mode", ["r", "w+"])
def test_open_memmap_refuses_an_open_file(same, mode):
    def run(api, folder):
        np.save(folder / "m.npy", np.arange(3))
        with open(folder / "m.npy", "rb") as f:
            return attempt(api.open_memmap, f, mode=mode, dtype="<f8", shape=(2,), exact=True)

    assert same(run) == Raised(ValueError, NO_HANDLES)


@pytest.mark.parametrize("kind_name", ["BytesIO", "open-r+b", "TemporaryFile", "NamedTemporaryFile"])
def test_open_memmap_refuses_every_file_object(tmp_path, kind_name):
    # The spec: NumPy's ValueError for every file object; NumPy gives it for open(.., 'rb') and
    # open(.., 'wb') only, others fail by accident (TypeError from os.fspath).
    with kind(kind_name, tmp_path) as k:
        f = k.reader(b"")
        with pytest.raises(ValueError, match="Memmap cannot use existing file handles"):
            npy.open_memmap(f, mode="r")


@pytest.mark.parametrize("mode", ["q", "w", "rb"])
def test_open_memmap_bad_mode(same, mode):
    def run(api, folder):
        np.save(folder / "m.npy", np.arange(3))
        return describe(attempt(api.open_memmap, folder / "m.npy", mode=mode, dtype="<f8", shape=(2,)))

    assert raised(same(run), ValueError)


@pytest.mark.parametrize(
    "dtype, version",
    [("<f8", (4, 0)), ("<f8", (0, 1)), (CREATE["wide-record"]["dtype"], (1, 0)), ([("温度", "<f8")], (2, 0))],
    ids=["4.0", "0.1", "header-too-long-for-1.0", "name-not-latin-1-for-2.0"],
)
def test_open_memmap_bad_version(same, dtype, version):
    # NumPy raises UnicodeEncodeError (a ValueError) for the last by accident.
    def run(api, folder):
        return raised(
            attempt(api.open_memmap, folder / "m.npy", mode="w+", dtype=dtype, shape=(1,), version=version), ValueError
        )

    assert same(run)


def test_open_memmap_failing_creation_leaves_no_file(tmp_path):
    # NumPy leaves an empty file when the header cannot be written; npy creates atomically.
    dtype = CREATE["wide-record"]["dtype"]
    with pytest.raises(ValueError):
        npy.open_memmap(tmp_path / "m.npy", mode="w+", dtype=dtype, shape=(1,), version=(1, 0))
    with pytest.raises(ValueError):
        npy.open_memmap(tmp_path / "o.npy", mode="w+", dtype=object, shape=(1,))
    assert os.listdir(tmp_path) == []


def test_open_memmap_bad_version_message(same):
    def run(api, folder):
        return attempt(
            api.open_memmap, folder / "m.npy", mode="w+", dtype="<f8", shape=(1,), version=(4, 0), exact=True
        )

    assert same(run) == Raised(ValueError, "we only support format version (1,0), (2,0), and (3,0), not (4, 0)")


@pytest.mark.parametrize("mode", ["r", "r+", "c"])
def test_open_memmap_missing_file(same, mode):
    def run(api, folder):
        try:
            api.open_memmap(folder / "missing.npy", mode=mode)
        except OSError as e:
            return type(e), e.errno, e.filename

    assert same(run)[0] is FileNotFoundError


@pytest.mark.parametrize("kwargs", [{}, {"max_header_size": 100_000}], ids=repr)
def test_open_memmap_max_header_size(same, kwargs):
    def run(api, folder):
        np.save(folder / "wide.npy", np.zeros(2, [(f"f{i}", "<f8") for i in range(2000)]))
        return describe(attempt(api.open_memmap, str(folder / "wide.npy"), mode="r", exact=True, **kwargs))

    assert raised(same(run), ValueError) == (not kwargs)


@pytest.mark.parametrize("name", MAPPABLE)
def test_open_memmap_filled_from_an_array(same, name):
    def run(api, folder):
        arr = sample(name)
        path = str(folder / "m.npy")
        m = api.open_memmap(path, mode="w+", dtype=arr.dtype, shape=arr.shape, fortran_order=np.isfortran(arr))
        m[...] = arr
        m.flush()
        del m
        return (folder / "m.npy").read_bytes()

    same(run)


@pytest.mark.parametrize("mode", ["w+", "r", "r+", "c"])
def test_open_memmap_filename_follows_the_path_given(same, monkeypatch, mode):
    # np.memmap keeps a pathlib.Path as a resolved Path and a str as an absolute str.
    def run(api, folder):
        np.save(folder / "m.npy", np.arange(3.0))
        monkeypatch.chdir(folder)
        return [repr(api.open_memmap(p, mode=mode, dtype="<f8", shape=(3,)).filename) for p in ("m.npy", Path("m.npy"))]

    same(run)


@pytest.mark.parametrize("mode", ["w+", "r", "r+", "c"])
def test_open_memmap_takes_any_path_like(tmp_path, mode):
    # np.memmap fails on an os.PathLike that is not a pathlib.Path (AttributeError: no
    # 'resolve'); the spec takes any os.PathLike, mapped as its os.fspath() would be.
    np.save(tmp_path / "m.npy", np.arange(3.0))
    ours = describe(npy.open_memmap(PathLike(tmp_path / "m.npy"), mode=mode, dtype="<f8", shape=(3,)))
    np.save(tmp_path / "m.npy", np.arange(3.0))
    theirs = describe(np.lib.format.open_memmap(str(tmp_path / "m.npy"), mode=mode, dtype="<f8", shape=(3,)))
    assert ours == theirs
