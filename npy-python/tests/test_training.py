"""Training loops (issue 57): many small files by ``npy.load`` and ``npy.load_many``, each
result compared with NumPy's; ``npy.open`` failing cleanly."""

import gc
import os
import pathlib
import sys
import threading

import numpy as np
import pytest

import npy
from support import bounded

ARRAYS = {
    "f8": np.arange(240, dtype="<f8"),
    "f4_2d": np.arange(12, dtype="<f4").reshape(3, 4),
    "be_i4": np.arange(10, dtype=">i4"),
    "fortran": np.asfortranarray(np.arange(6, dtype="<i2").reshape(2, 3)),
    "scalar": np.array(3.5),
    "empty": np.zeros((0, 3), dtype="<u1"),
    "s0": np.zeros(2, dtype="S0"),
    "records": np.array([(1, 2.5, b"ab")], dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S2")]),
    "subarray_field": np.zeros(3, dtype=[("x", "<f4", (2,))]),
    "bools": np.array([True, False, True]),
    "unicode": np.array(["ab", "c"]),
    "datetimes": np.array(["2026-11-26", "NaT"], dtype="M8[D]"),
    "big": np.arange(300_000, dtype="<f8"),
}


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, array in ARRAYS.items():
        paths[name] = tmp_path / f"{name}.npy"
        np.save(paths[name], array)
    return paths


def same(ours, theirs):
    assert type(ours) is type(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert ours.flags.c_contiguous == theirs.flags.c_contiguous
    assert ours.flags.f_contiguous == theirs.flags.f_contiguous
    assert ours.flags.writeable
    assert ours.tobytes(order="A") == theirs.tobytes(order="A")


@pytest.mark.parametrize("name", list(ARRAYS))
def test_load_gives_numpys_array(files, name):
    same(npy.load(files[name]), np.load(files[name]))
    same(npy.load(str(files[name])), np.load(files[name]))


@pytest.mark.parametrize("threads", [None, 1, 2, 7])
def test_load_many_gives_numpys_arrays_in_order(files, threads):
    names = list(ARRAYS) * 3
    loaded = npy.load_many([files[n] for n in names], threads=threads)
    assert len(loaded) == len(names)
    for name, ours in zip(names, loaded, strict=True):
        same(ours, np.load(files[name]))


def test_a_call_that_hangs_fails_in_seconds():
    """`bounded`, which the failing `load_many` calls below go through: a hang is a
    failure within its bound, an exception is the call's own."""
    gate = threading.Event()
    with pytest.raises(AssertionError, match="did not return within 1 s"):
        bounded(gate.wait, seconds=1)
    gate.set()
    with pytest.raises(ZeroDivisionError):
        bounded(lambda: 1 / 0)
    assert bounded(lambda: 7) == 7


def test_load_many_of_many_files_made_while_others_are_read(tmp_path):
    # More files than one turn of reading between making arrays, with failures among them.
    paths, want = [], []
    for i in range(700):
        path = tmp_path / f"m{i:04d}.npy"
        array = np.arange(i % 17, dtype="<f8" if i % 2 else ">i2") * i
        np.save(path, array)
        paths.append(str(path))
        want.append(array)
    for threads in (1, 2, 3):
        for ours, theirs in zip(npy.load_many(paths, threads=threads), want, strict=True):
            same(ours, theirs)
    paths[333] = str(tmp_path / "gone.npy")
    with pytest.raises(FileNotFoundError) as raised:
        bounded(lambda: npy.load_many(paths))
    assert "files[333]" in raised.value.__notes__[0] and "1 of 700 files failed" in raised.value.__notes__[0]


def test_load_many_of_files_of_one_header_still_checks_each(tmp_path):
    # Files sharing one header (read once, then recognised), among them one cut short and
    # one with bytes after its data: each gives what np.load gives for it.
    paths = []
    for i in range(60):
        path = tmp_path / f"h{i:02d}.npy"
        np.save(path, np.full(50, i, dtype="<i8"))
        paths.append(path)
    paths[20].write_bytes(paths[20].read_bytes()[:-8])
    paths[40].write_bytes(paths[40].read_bytes() + b"after")
    loaded = npy.load_many([p for i, p in enumerate(paths) if i != 20], threads=2)
    for ours, path in zip(loaded, [p for i, p in enumerate(paths) if i != 20], strict=True):
        same(ours, np.load(path))
    with pytest.raises(ValueError, match="could only read 49 elements") as raised:
        bounded(lambda: npy.load_many(paths, threads=2))
    assert "files[20]" in raised.value.__notes__[0]


def test_load_of_files_of_one_header_checks_each_under_its_options(tmp_path):
    # npy.load recognises the header it read last, under the same options only.
    paths = []
    for i in range(4):
        path = tmp_path / f"o{i}.npy"
        np.save(path, np.zeros(3, dtype=[(f"field_{k:03d}", "<f4") for k in range(300)]))
        paths.append(path)
    paths[2].write_bytes(paths[2].read_bytes()[:-4])
    same(npy.load(paths[0]), np.load(paths[0]))
    same(npy.load(paths[1]), np.load(paths[1]))
    with pytest.raises(ValueError):
        npy.load(paths[2])
    with pytest.raises(ValueError, match="max_header_size"):
        np.load(paths[3], max_header_size=1000)
    with pytest.raises(ValueError, match="max_header_size"):
        npy.load(paths[3], max_header_size=1000)
    same(npy.load(paths[3]), np.load(paths[3]))


def test_load_and_load_many_take_names_of_any_characters(tmp_path):
    array = np.arange(5, dtype="<f4")
    names = ["café ü.npy", os.fsdecode(b"raw\xe9\xff.npy")]  # the second: lone surrogates
    for name in names:
        with open(os.path.join(os.fsencode(tmp_path), os.fsencode(name)), "wb") as f:
            np.save(f, array)
        path = os.path.join(str(tmp_path), name)
        same(npy.load(path), array)
        same(npy.load_many([path, pathlib.Path(path)])[1], array)


def test_load_many_of_nothing():
    assert npy.load_many([]) == []


def test_load_many_takes_every_kind_load_takes(tmp_path, files):
    archive = tmp_path / "a.npz"
    np.savez(archive, x=np.arange(3))
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([{"a": 1}, None], dtype=object))
    trailing = tmp_path / "trailing.npy"
    trailing.write_bytes(files["f8"].read_bytes() + b"more")
    loaded = npy.load_many([archive, objects, os.fsencode(files["f8"]), str(trailing)])
    assert isinstance(loaded[0], npy.NpzFile)
    assert np.array_equal(loaded[0]["x"], np.arange(3))
    loaded[0].close()
    assert loaded[1].tolist() == [{"a": 1}, None]
    same(loaded[2], np.load(files["f8"]))
    same(loaded[3], np.load(trailing))


def test_load_many_maps(files):
    maps = npy.load_many([files["f8"], files["fortran"]], mmap_mode="r")
    for ours, name in zip(maps, ["f8", "fortran"], strict=True):
        assert isinstance(ours, np.memmap) and ours.mode == "r"
        theirs = np.load(files[name], mmap_mode="r")
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape and np.array_equal(ours, theirs)


class Marker:
    """A class of the tests: npy runs no pickle that would make one."""


def test_load_many_runs_no_pickle(tmp_path):
    path = tmp_path / "marker.npy"
    np.save(path, np.array([Marker()], dtype=object))
    with pytest.raises(npy.UnsafePickleError):
        bounded(lambda: npy.load_many([path]))


def test_load_many_names_the_first_failure_and_lists_the_others(tmp_path, files):
    missing = tmp_path / "missing.npy"
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': 'x'}  \n")
    with pytest.raises(FileNotFoundError) as raised:
        bounded(lambda: npy.load_many([files["f8"], missing, files["f4_2d"], bad]))
    assert raised.value.filename == str(missing)
    notes = raised.value.__notes__
    assert "files[1]" in notes[0] and "missing.npy" in notes[0] and "2 of 4 files failed" in notes[0]
    assert "files[3]" in notes[1] and "bad.npy" in notes[1] and "ValueError" in notes[1]


def test_load_many_refuses_what_it_cannot_take(files):
    with pytest.raises(ValueError, match="threads"):
        npy.load_many([files["f8"]], threads=0)
    with open(files["f8"], "rb") as f, pytest.raises(TypeError, match="file objects"):
        npy.load_many([f])
    with pytest.raises(TypeError, match="not one"):
        npy.load_many(str(files["f8"]))
    with pytest.raises(ValueError, match="local files only"):
        npy.load_many(["s3://bucket/a.npy"], mmap_mode="r")


def test_load_of_a_file_that_is_not_plain_still_gives_numpys_errors(tmp_path, files):
    short = tmp_path / "short.npy"
    short.write_bytes(files["f8"].read_bytes()[:-8])
    with pytest.raises(ValueError, match="could only read 239 elements"):
        npy.load(short)
    with pytest.raises(FileNotFoundError):
        npy.load(tmp_path / "missing.npy")
    with pytest.raises(IsADirectoryError):
        npy.load(tmp_path)


def test_a_fifo_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "fifo.npy"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO"):
        npy.load(fifo)
    with pytest.raises(OSError, match="FIFO"):
        bounded(lambda: npy.load_many([fifo]))
    # npy.open waited in open(2) for a writer until the test's timeout.
    with pytest.raises(OSError, match="FIFO"):
        bounded(lambda: npy.open(fifo))


def unraised(action):
    """What ``sys.unraisablehook`` was given while ``action`` ran (and objects were freed)."""
    seen = []
    hook, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        action()
        gc.collect()
    finally:
        sys.unraisablehook = hook
    return seen


@pytest.mark.parametrize("file", [["a.npy", "b.npy"], "missing.npy", pathlib.Path("missing.npy")])
def test_open_that_fails_leaves_nothing_unraisable(tmp_path, file):
    def fails():
        with pytest.raises((TypeError, FileNotFoundError)):
            npy.open(file if isinstance(file, list) else tmp_path / file)
        from npy._source import open_source

        with pytest.raises((TypeError, FileNotFoundError)):
            open_source(file if isinstance(file, list) else tmp_path / file)

    assert unraised(fails) == []
