"""npy in place of NumPy's save/load family, as typed code uses it: CI runs this file and
checks it with `mypy --strict` against npy's stubs (and NumPy's).

usage: python typed.py DIR
"""

import io
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

import npy


def speeds(directory: Path) -> NDArray[np.float64]:
    """Neville's array: saved in one line, loaded in one line."""
    path = directory / "speeds.npy"
    npy.save(path, np.arange(5.0))
    loaded: NDArray[np.float64] = npy.load(path)
    assert loaded.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    return loaded


def several_into_one_file(a: NDArray[np.float64]) -> None:
    """Arrays written one after another into one open file load one after another."""
    buffer = io.BytesIO()
    npy.save(buffer, a)
    npy.save(buffer, np.array(["x", None], dtype=object))
    buffer.seek(0)
    first = npy.load(buffer)
    second = npy.load(buffer)
    assert np.array_equal(first, a) and second.tolist() == ["x", None]
    assert buffer.tell() == len(buffer.getvalue())


def archive(directory: Path, a: NDArray[np.float64]) -> None:
    """An archive, read lazily, with NumPy's NpzFile attributes."""
    path = directory / "runs.npz"
    npy.savez_compressed(path, a, labels=np.array(["s", "t"]))
    with npy.load(path) as runs:
        assert isinstance(runs, npy.NpzFile) and isinstance(runs, np.lib.npyio.NpzFile)
        assert runs.files == ["labels", "arr_0"]
        assert np.array_equal(runs["arr_0"], a) and np.array_equal(runs.f.arr_0, a)
        assert repr(runs) == f"NpzFile {str(path)!r} with keys: labels, arr_0"
        every = runs.load_all()
        assert set(every) == {"labels", "arr_0"}


def mapped(directory: Path) -> None:
    """A map made by one writer and filled in place."""
    path = directory / "grid.npy"
    grid = npy.open_memmap(path, mode="w+", dtype="<f4", shape=(4, 3))
    grid[1] = 7.0
    grid.flush()
    del grid
    again = npy.load(path, mmap_mode="r")
    assert again[1].tolist() == [7.0, 7.0, 7.0] and again.sum() == 21.0


def refusals(directory: Path) -> None:
    """What npy refuses, with NumPy's exception types."""
    path = directory / "labels.npy"
    npy.save(path, np.array([{"k": 1}], dtype=object))
    try:
        npy.load(path, allow_pickle=False)
    except ValueError as e:
        assert "allow_pickle=False" in str(e)
    else:
        raise AssertionError("object arrays load under allow_pickle=False")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        npy.save(directory / "meta.npy", np.zeros(2, dtype=np.dtype("<f8", metadata={"unit": "m"})))
    assert [str(w.message)[:24] for w in caught] == ["metadata on a dtype is n"]


def main(directory: Path) -> None:
    a = speeds(directory)
    several_into_one_file(a)
    archive(directory, a)
    mapped(directory)
    refusals(directory)
    npy.append(directory / "speeds.npy", np.array([5.0]))
    assert npy.load(directory / "speeds.npy").shape == (6,)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp))
    print("typed example: ok")
