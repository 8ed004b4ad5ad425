"""Training loops (issue 57): many small files by ``npy.load`` and ``npy.load_many``, each
result compared with NumPy's; ``npy.open`` failing cleanly."""

import gc
import pathlib
import sys

import pytest

import npy


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
        from npy._source import FileSource

        with pytest.raises((TypeError, FileNotFoundError)):
            FileSource(file if isinstance(file, list) else tmp_path / file)

    assert unraised(fails) == []
